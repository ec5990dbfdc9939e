"""`make test-fast`: the unit core, without torch, accelerate, DeepSpeed or the editors.

The selection is the one mutation testing runs (``[tool.mutmut] pytest_add_cli_args_test_selection``
in pyproject.toml: one list, not two), less the tests marked ``slow`` or ``oracle`` (those need the
real releases). ACCELCONF_TEST_FAST makes importing torch, accelerate, DeepSpeed or transformers fail
in that run (tests/conftest.py), so the tier stays light. Extra arguments go to pytest.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

ROOT = Path(__file__).resolve().parents[1]


def selection() -> list[str]:
    with (ROOT / "pyproject.toml").open("rb") as fh:
        return list(tomllib.load(fh)["tool"]["mutmut"]["pytest_add_cli_args_test_selection"])


def main(argv: list[str]) -> int:
    cmd = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "-m",
        "not slow and not oracle",
        *selection(),
        *argv,
    ]
    import os

    return subprocess.call(cmd, cwd=ROOT, env={**os.environ, "ACCELCONF_TEST_FAST": "1"})


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
