"""Where accelerate opens a config's deepspeed_config_file: relative to the directory it runs in."""

from __future__ import annotations

import pytest

from tests.unit.diff.test_diff_deepspeed_file import ZERO2_FP16, ZERO3_BF16, _write


@pytest.mark.oracle
def test_accelerate_opens_the_deepspeed_file_relative_to_the_directory_it_runs_in(tmp_path) -> None:
    # the base config_file_path falls back to: accelerate keeps the name as written (launch exports it
    # unchanged as ACCELERATE_DEEPSPEED_CONFIG_FILE) and HfDeepSpeedConfig opens it from the cwd
    pytest.importorskip("accelerate")
    import os
    import subprocess
    import sys

    _write(tmp_path, {"run/ds/zero.json": ZERO3_BF16, "configs/ds/zero.json": ZERO2_FP16})
    code = (
        "from accelerate.utils.deepspeed import HfDeepSpeedConfig\n"
        "print(HfDeepSpeedConfig('ds/zero.json').config['zero_optimization']['stage'])\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("ACCELERATE_")}
    run = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path / "run", env=env, capture_output=True, text=True, timeout=300
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.split()[-1] == "3"  # the launch directory's file, not the one beside configs/
