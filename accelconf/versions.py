"""Installed package versions, read from ``*.dist-info`` folder names without importing anything.

``importlib.metadata`` costs 30-50 ms of start-up (it imports ``email`` and friends) on every
command that checks against the installed accelerate; scanning ``sys.path`` for
``NAME-VERSION.dist-info`` takes about a millisecond. Anything unusual (an egg, a name the scan
cannot see) falls back to ``importlib.metadata``.
"""

from __future__ import annotations

import os
import re
import sys
from functools import lru_cache


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


@lru_cache(maxsize=1)
def _scan() -> tuple[dict[str, str], frozenset[str]]:
    """This interpreter's :func:`scan_dist_infos`, and the names that scan cannot read a version
    for: ``*.egg-info`` folders (a version in the metadata, not always in the name) and, as ``"*"``,
    a ``sys.path`` entry that is a zip or an egg. One listing of each folder serves both."""
    found: dict[str, str] = {}
    elsewhere: set[str] = set()
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except NotADirectoryError:
            elsewhere.add("*")
            continue
        except OSError:
            continue
        _add_dist_infos(found, names)
        elsewhere.update(_norm(n[: -len(".egg-info")].split("-")[0]) for n in names if n.endswith(".egg-info"))
    return found, frozenset(elsewhere)


def _add_dist_infos(found: dict[str, str], names: list[str]) -> None:
    for n in names:
        if n.endswith(".dist-info") and "-" in n:
            dist, _, version = n[: -len(".dist-info")].rpartition("-")
            found.setdefault(_norm(dist), version)


def scan_dist_infos(paths: list[str] | tuple[str, ...]) -> dict[str, str]:
    """Normalized distribution name -> version, from the ``*.dist-info`` folders in ``paths`` (the
    first one wins, as for imports). Also serves ``check --python``: another interpreter's sys.path."""
    found: dict[str, str] = {}
    for entry in paths:
        try:
            _add_dist_infos(found, os.listdir(entry or "."))
        except OSError:
            continue
    return found


def installed_version(name: str) -> str | None:
    """The version of an installed distribution, or ``None`` when it is not installed. A name that
    no folder of ``sys.path`` holds is not installed: ``importlib.metadata`` (30-50 ms to import) is
    asked only where the scan cannot see (an egg-info folder, a zip on the path)."""
    found, elsewhere = _scan()
    got = found.get(_norm(name))
    if got is not None:
        return got
    if not ({_norm(name), "*"} & elsewhere):
        return None
    import importlib.metadata as md

    try:
        return md.version(name)
    except md.PackageNotFoundError:
        return None
    except Exception:  # a broken dist-info directory must not break a command
        return None


# A plain release (``1.15.0``): what installed packages and accelconf's own tables spell. Compared
# here as packaging's Version compares it; anything else (a pre-release, a local version, a typo)
# goes to packaging, which costs a few milliseconds of start-up to import.
_RELEASE = re.compile(r"[0-9]+(?:\.[0-9]+)*")


def _release(version: str) -> tuple[int, ...] | None:
    """``"1.15.0"`` -> ``(1, 15)``: trailing zeros stripped, as Version compares releases; ``None``
    when ``version`` is not a plain release."""
    if not isinstance(version, str) or not _RELEASE.fullmatch(version):
        return None
    parts = [int(p) for p in version.split(".")]
    while len(parts) > 1 and parts[-1] == 0:
        parts.pop()
    return tuple(parts)


def compare(a: str, b: str) -> int:
    """-1, 0 or 1 as ``Version(a)`` is lower than, equal to or higher than ``Version(b)``; raises
    packaging's ``InvalidVersion`` for a string that is no PEP 440 version."""
    ra, rb = _release(a), _release(b)
    if ra is None or rb is None:
        from packaging.version import Version

        va, vb = Version(a), Version(b)
        return (va > vb) - (va < vb)
    return (ra > rb) - (ra < rb)


def minor(version: str) -> str | None:
    """``"1.15.0"`` or ``"1.15.0.dev0"`` -> ``"1.15"`` (packaging's major and minor), ``None`` for
    what is no PEP 440 version."""
    if isinstance(version, str) and _RELEASE.fullmatch(version):
        parts = version.split(".")
        return f"{int(parts[0])}.{int(parts[1]) if len(parts) > 1 else 0}"
    from packaging.version import Version

    try:
        parsed = Version(version)
    except Exception:  # InvalidVersion, or not a string
        return None
    return f"{parsed.major}.{parsed.minor}"
