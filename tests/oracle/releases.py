"""Every accelerate minor release accelconf answers for, installed side by side (the release matrix).

``RELEASES`` pins the latest patch of each minor release 0.20 to 1.15 (PyPI, checked with
``pip index versions accelerate``). :func:`ensure` installs one with
``pip install --no-deps --target DIR accelerate==V`` into ``<venv>/accelconf-cache/accelerate/V``
(the venv running the tests, so the cache lives and dies with it) and returns DIR; a release
already there is not installed again. 0.20 imports ``pkg_resources`` (only ``install_xla`` uses
it); setuptools 80+ no longer ships it, so an empty stub module is written beside that release.

    python tests/oracle/releases.py            # install every release (what CI does once)
    python tests/oracle/releases.py 1.4 0.20   # only these
"""

from __future__ import annotations

import sys
from pathlib import Path

try:
    from tests.oracle.release_cache import ReleaseCache
except ImportError:  # run as a script: python tests/oracle/releases.py
    from release_cache import ReleaseCache  # type: ignore[no-redef]

RELEASES: dict[str, str] = {
    "0.20": "0.20.3",
    "0.21": "0.21.0",
    "0.22": "0.22.0",
    "0.23": "0.23.0",
    "0.24": "0.24.1",
    "0.25": "0.25.0",
    "0.26": "0.26.1",
    "0.27": "0.27.2",
    "0.28": "0.28.0",
    "0.29": "0.29.3",
    "0.30": "0.30.1",
    "0.31": "0.31.0",
    "0.32": "0.32.1",
    "0.33": "0.33.0",
    "0.34": "0.34.2",
    "1.0": "1.0.1",
    "1.1": "1.1.1",
    "1.2": "1.2.1",
    "1.3": "1.3.0",
    "1.4": "1.4.0",
    "1.5": "1.5.2",
    "1.6": "1.6.0",
    "1.7": "1.7.0",
    "1.8": "1.8.1",
    "1.9": "1.9.0",
    "1.10": "1.10.1",
    "1.11": "1.11.0",
    "1.12": "1.12.0",
    "1.13": "1.13.0",
    "1.14": "1.14.0",
    "1.15": "1.15.0",
}
STUB = "pkg_resources.py"


def _stub(minor: str, target: Path) -> None:
    if minor == "0.20" and not (target / STUB).exists():
        (target / STUB).write_text(
            '"""Empty stand-in: accelerate 0.20 imports pkg_resources only for install_xla."""\n'
        )


CACHE = ReleaseCache("accelerate", RELEASES, after=_stub)
cache_root, path_of, installed, ensure, main = (
    CACHE.cache_root,
    CACHE.path_of,
    CACHE.installed,
    CACHE.ensure,
    CACHE.main,
)


if __name__ == "__main__":
    main(sys.argv[1:])
