"""Every DeepSpeed minor release accelconf answers for, installed side by side (issue 13 item 3).

``RELEASES`` pins the latest patch of each minor release 0.15 to 0.19 (PyPI, checked with
``pip index versions deepspeed``). :func:`ensure` installs one with ``DS_BUILD_OPS=0 pip install
--no-deps --no-build-isolation --target DIR deepspeed==V`` into ``<venv>/accelconf-cache/deepspeed/V``
(the venv running the tests, so the cache lives and dies with it; no kernels are built, the venv's
torch is used) and returns DIR; a release already there is not installed again.

    python tests/oracle/deepspeed_releases.py             # install every release (what CI does once)
    python tests/oracle/deepspeed_releases.py 0.15 0.18   # only these
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

RELEASES: dict[str, str] = {"0.15": "0.15.4", "0.16": "0.16.9", "0.17": "0.17.6", "0.18": "0.18.9", "0.19": "0.19.8"}


def cache_root() -> Path:
    return Path(sys.prefix) / "accelconf-cache" / "deepspeed"


def path_of(minor: str) -> Path:
    return cache_root() / RELEASES[minor]


def installed(minor: str) -> bool:
    return (path_of(minor) / "deepspeed" / "__init__.py").is_file()


def ensure(minor: str) -> Path:
    """Install that release into the cache unless it is there; returns its directory."""
    target = path_of(minor)
    if not installed(minor):
        tmp = target.with_name(target.name + ".partial")
        shutil.rmtree(tmp, ignore_errors=True)
        env = {**os.environ, "DS_BUILD_OPS": "0"}
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "--no-compile",
                        "--disable-pip-version-check", "--target", str(tmp), f"deepspeed=={RELEASES[minor]}"], check=True, env=env)
        if target.exists():  # a half-written directory from an interrupted run
            shutil.rmtree(target)
        os.replace(tmp, target)
    return target


def main(argv: list[str]) -> None:
    for minor in argv or list(RELEASES):
        print(minor, ensure(minor), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
