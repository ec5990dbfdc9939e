"""ACCELERATE_GRADIENT_ACCUMULATION_STEPS as accelerate's Accelerator reads it, outside DeepSpeed."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest


@pytest.mark.oracle
def test_accelerator_reads_gradient_accumulation_from_the_environment_outside_deepspeed() -> None:
    pytest.importorskip("accelerate")
    code = (
        "from accelerate import Accelerator\nfrom accelerate.state import AcceleratorState\n"
        "a = Accelerator(cpu=True)\nprint(AcceleratorState().distributed_type, a.gradient_accumulation_steps)\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ACCELERATE_", "FSDP_"))}
    env["ACCELERATE_GRADIENT_ACCUMULATION_STEPS"] = "4"
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.split()[-2:] == ["DistributedType.NO", "4"]
