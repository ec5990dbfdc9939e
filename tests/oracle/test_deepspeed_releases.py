"""Every DeepSpeed minor release 0.15 to 0.19 (latest patch) against the key table.

Each release is installed side by side in ``<venv>/accelconf-cache/deepspeed/V``
(tests/oracle/deepspeed_releases.py) and runs tests/oracle/deepspeed_release_worker.py in its own
process: the table's keys, ``since``/``removed`` and defaults against that release's pydantic
models, and for every dated key a one-key config whose verdict from that release's
``DeepSpeedConfig`` must equal accelconf's with ``--deepspeed-version V``. The processes run in
parallel. Without the cache the test is skipped unless ``CI`` is set, in which case it installs
the releases first.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.oracle import deepspeed_releases as releases

ROOT = Path(__file__).resolve().parents[2]
WORKER = ROOT / "tests" / "oracle" / "deepspeed_release_worker.py"

pytestmark = pytest.mark.oracle


def test_every_deepspeed_release_agrees_with_the_key_table() -> None:
    missing = [m for m in releases.RELEASES if not releases.installed(m)]
    if missing and os.environ.get("CI", "").lower() not in ("1", "true", "yes"):
        pytest.skip(
            f"DeepSpeed releases {', '.join(missing)} are not in {releases.cache_root()}: "
            "run python tests/oracle/deepspeed_releases.py (CI=true installs them)"
        )
    for minor in missing:
        releases.ensure(minor)
    procs = {}
    for minor in releases.RELEASES:
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(releases.path_of(minor)), str(ROOT)]),
            "DS_ACCELERATOR": "cpu",
        }
        procs[minor] = subprocess.Popen(
            [sys.executable, str(WORKER)],
            cwd=str(ROOT),
            env=env,
            text=True,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
    problems = []
    for minor, proc in procs.items():
        out, err = proc.communicate(timeout=300)
        lines = out.strip().splitlines()
        if proc.returncode != 0 or not lines:
            problems.append(f"{minor}: the worker failed (exit {proc.returncode}): {err[-1500:]}")
            continue
        result = json.loads(lines[-1])
        assert result["release"] == releases.RELEASES[minor], result["release"]
        assert result["probes"] > 50, result
        problems += [f"{result['release']}: {m}" for m in result["mismatches"]]
    assert not problems, "\n".join(problems)
