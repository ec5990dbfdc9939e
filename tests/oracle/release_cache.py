"""Releases of a package installed side by side under the venv that runs the tests.

``<venv>/accelconf-cache/<package>/<version>`` holds one ``pip install --no-deps --target`` each
(the cache lives and dies with the venv); a release already there is not installed again, and an
interrupted install leaves only a ``.partial`` folder that the next run replaces.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class ReleaseCache:
    package: str  # the import name and the PyPI name
    releases: dict[str, str]  # minor -> the pinned patch release
    pip_args: tuple[str, ...] = ()  # extra `pip install` options
    env: dict[str, str] = field(default_factory=dict)  # extra environment for pip
    after: Callable[[str, Path], None] | None = None  # run after ensure(minor), installed or not

    def cache_root(self) -> Path:
        return Path(sys.prefix) / "accelconf-cache" / self.package

    def path_of(self, minor: str) -> Path:
        return self.cache_root() / self.releases[minor]

    def installed(self, minor: str) -> bool:
        return (self.path_of(minor) / self.package / "__init__.py").is_file()

    def ensure(self, minor: str) -> Path:
        """Install that release into the cache unless it is there; returns its directory."""
        target = self.path_of(minor)
        if not self.installed(minor):
            tmp = target.with_name(target.name + ".partial")
            shutil.rmtree(tmp, ignore_errors=True)
            subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "pip",
                    "install",
                    "-q",
                    "--no-deps",
                    "--no-compile",
                    "--disable-pip-version-check",
                    *self.pip_args,
                    "--target",
                    str(tmp),
                    f"{self.package}=={self.releases[minor]}",
                ],
                check=True,
                env={**os.environ, **self.env},
            )
            if target.exists():  # a half-written directory from an interrupted run
                shutil.rmtree(target)
            os.replace(tmp, target)
        if self.after is not None:
            self.after(minor, target)
        return target

    def main(self, argv: list[str]) -> None:
        for minor in argv or list(self.releases):
            print(minor, self.ensure(minor), flush=True)
