"""Helpers to call the launcher oracle (tests/oracle/launcher.py) in a clean subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


def have_accelerate() -> bool:
    from importlib.util import find_spec

    return find_spec("accelerate") is not None and find_spec("torch") is not None


def oracle(paths: list[str | Path]) -> dict[str, dict]:
    """accelerate's own launcher verdict for each config file: {path: {ok, error | mode, env}}."""
    if not have_accelerate():
        pytest.skip("accelerate and torch are not installed (pip install -e '.[test]')")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ACCELERATE_", "FSDP_", "PARALLELISM_CONFIG_", "MEGATRON_LM_"))}
    proc = subprocess.run([sys.executable, str(HERE / "launcher.py"), *map(str, paths)], capture_output=True, text=True,
                          env=env, timeout=300)
    if proc.returncode != 0:
        raise AssertionError(f"oracle failed: {proc.stderr[-2000:]}")
    return json.loads(proc.stdout)
