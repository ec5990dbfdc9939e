"""Every DeepSpeed minor release accelconf answers for, installed side by side.

``RELEASES`` pins the latest patch of each minor release 0.15 to 0.19 (PyPI, checked with
``pip index versions deepspeed``). :func:`ensure` installs one with ``DS_BUILD_OPS=0 pip install
--no-deps --no-build-isolation --target DIR deepspeed==V`` into ``<venv>/accelconf-cache/deepspeed/V``
(the venv running the tests, so the cache lives and dies with it; no kernels are built, the venv's
torch is used) and returns DIR; a release already there is not installed again.

    python tests/oracle/deepspeed_releases.py             # install every release (what CI does once)
    python tests/oracle/deepspeed_releases.py 0.15 0.18   # only these
"""

from __future__ import annotations

import sys

try:
    from tests.oracle.release_cache import ReleaseCache
except ImportError:  # run as a script: python tests/oracle/deepspeed_releases.py
    from release_cache import ReleaseCache  # type: ignore[no-redef]

RELEASES: dict[str, str] = {"0.15": "0.15.4", "0.16": "0.16.9", "0.17": "0.17.6", "0.18": "0.18.9", "0.19": "0.19.8"}


CACHE = ReleaseCache("deepspeed", RELEASES, pip_args=("--no-build-isolation",), env={"DS_BUILD_OPS": "0"})
cache_root, path_of, installed, ensure, main = (
    CACHE.cache_root,
    CACHE.path_of,
    CACHE.installed,
    CACHE.ensure,
    CACHE.main,
)


if __name__ == "__main__":
    main(sys.argv[1:])
