"""The library type-checks (mypy, configured in pyproject.toml)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_mypy_is_clean():
    pytest.importorskip("mypy", reason="mypy is in the test extras")
    proc = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-error-summary", "accelconf"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-1000:]
