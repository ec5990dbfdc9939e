"""Every transformers minor release (and the TRL releases) accelconf answers for, installed side by side.

``RELEASES`` pins the latest patch of each minor release 4.46 to the newest (PyPI, checked with
``pip index versions transformers``), ``TRL_RELEASES`` the latest patch of the recent TRL minors.
:func:`ensure` installs one with ``pip install --no-deps --target DIR transformers==V`` into
``<venv>/accelconf-cache/transformers/V`` (``.../trl/V`` for TRL) and returns DIR; a release already
there is not installed again. Their dependencies come from the venv where its versions meet the
release's own requirements (``Requires-Dist``); the ones that do not (an older release pins
``tokenizers`` and ``huggingface-hub`` below the venv's, and needs ``requests`` or ``httpx``) are
installed with pip into ``DIR/_deps``, which :func:`sys_path` puts after DIR.

    python tests/oracle/transformers_releases.py              # install every release (what CI does once)
    python tests/oracle/transformers_releases.py 4.57 5.24    # only these
    python tests/oracle/transformers_releases.py --trl        # every TRL release
"""

from __future__ import annotations

import importlib.metadata as md
import subprocess
import sys
from pathlib import Path

try:
    from tests.oracle.release_cache import ReleaseCache
except ImportError:  # run as a script: python tests/oracle/transformers_releases.py
    from release_cache import ReleaseCache  # type: ignore[no-redef]

RELEASES: dict[str, str] = {
    "4.46": "4.46.3",
    "4.47": "4.47.1",
    "4.48": "4.48.3",
    "4.49": "4.49.0",
    "4.50": "4.50.3",
    "4.51": "4.51.3",
    "4.52": "4.52.4",
    "4.53": "4.53.3",
    "4.54": "4.54.1",
    "4.55": "4.55.4",
    "4.56": "4.56.2",
    "4.57": "4.57.6",
    "5.0": "5.0.0",
    "5.1": "5.1.0",
    "5.2": "5.2.0",
    "5.3": "5.3.0",
    "5.4": "5.4.0",
    "5.5": "5.5.4",
    "5.6": "5.6.2",
    "5.7": "5.7.0",
    "5.8": "5.8.1",
    "5.9": "5.9.0",
    "5.10": "5.10.4",
    "5.11": "5.11.0",
    "5.12": "5.12.1",
    "5.13": "5.13.1",
    "5.14": "5.14.1",
    "5.15": "5.15.1",
    "5.16": "5.16.1",
    "5.17": "5.17.0",
    "5.18": "5.18.0",
    "5.19": "5.19.0",
    "5.20": "5.20.2",
    "5.21": "5.21.1",
    "5.22": "5.22.2",
    "5.23": "5.23.0",
    "5.24": "5.24.0",
}
TRL_RELEASES: dict[str, str] = {
    "1.10": "1.10.0",
    "1.11": "1.11.0",
    "1.12": "1.12.0",
    "1.13": "1.13.0",
    "1.14": "1.14.2",
    "1.15": "1.15.0",
    "1.16": "1.16.0",
}

DEPS = "_deps"
DONE = ".done"


def unmet(target: Path) -> list[str]:
    """The release's requirements (no extras) that the venv's installed versions do not meet."""
    from packaging.requirements import Requirement

    meta = next(target.glob("*.dist-info/METADATA"))
    out = []
    for line in meta.read_text(encoding="utf-8").splitlines():
        if not line.startswith("Requires-Dist:"):
            continue
        req = Requirement(line.split(":", 1)[1].strip())
        if req.marker is not None and not req.marker.evaluate({"extra": ""}):
            continue
        try:
            have = md.version(req.name)
        except md.PackageNotFoundError:
            have = None
        if have is None or not req.specifier.contains(have, prereleases=True):
            out.append(str(req).split(";")[0].strip())
    return out


def _deps(minor: str, target: Path) -> None:
    deps = target / DEPS
    if (deps / DONE).exists():
        return
    need = unmet(target)
    if need:
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "install",
                "-q",
                "--no-compile",
                "--disable-pip-version-check",
                "--target",
                str(deps),
                *need,
            ],
            check=True,
        )
    deps.mkdir(exist_ok=True)
    (deps / DONE).write_text("\n".join(need) + "\n", encoding="utf-8")


def sys_path(target: Path) -> list[str]:
    """What goes first on sys.path for that release: its directory, then its own dependencies."""
    return [str(target), str(target / DEPS)]


CACHE = ReleaseCache("transformers", RELEASES, after=_deps)
TRL_CACHE = ReleaseCache("trl", TRL_RELEASES)
cache_root, path_of, installed, ensure = CACHE.cache_root, CACHE.path_of, CACHE.installed, CACHE.ensure


if __name__ == "__main__":
    if sys.argv[1:2] == ["--trl"]:
        TRL_CACHE.main(sys.argv[2:])
    else:
        CACHE.main(sys.argv[1:])
