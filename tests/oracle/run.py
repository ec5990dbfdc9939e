"""Call the launcher oracle (tests/oracle/harness.py, accelerate's own launcher as a pure function)
in a clean subprocess, for whole lists of config files."""

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
    requests = "".join(json.dumps({"argv": ["--config_file", str(p), "train.py"]}) + "\n" for p in paths)
    proc = subprocess.run(
        [sys.executable, str(HERE / "harness.py")],
        input=requests,
        capture_output=True,
        text=True,
        env=dict(os.environ),
        timeout=600,
    )
    if proc.returncode != 0:
        raise AssertionError(f"oracle failed: {proc.stderr[-2000:]}")
    lines = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    answers = [a for a in lines if "ready" not in a]
    assert len(answers) == len(paths), proc.stderr[-2000:]
    out = {}
    for p, a in zip(paths, answers):
        out[str(p)] = {"ok": "error" not in a, **a}
    return out
