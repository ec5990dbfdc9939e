"""``check``'s cheapest change and ``fit``'s cheapest row that fits come from one order.

For configs of every kind, models and machines that do not fit, the strategy ``check`` suggests is
the first row of the table ``check`` prints (``fit.table_for``, the table ``accelconf fit`` and the
language server's hover show) among the rows the config can reach: every row from DDP or one process,
the DeepSpeed rows from DeepSpeed, the FSDP rows of its version from FSDP.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from accelconf.environment import fit, memory, modelsize
from accelconf.environment.targets import target_from_args
from accelconf.text.document import load_file

BASE = {"mixed_precision": "bf16", "num_machines": 1, "num_processes": 8}
CONFIGS: dict[str, dict[str, Any]] = {
    "ddp": dict(BASE, distributed_type="MULTI_GPU"),
    "ddp-fp32": dict(BASE, distributed_type="MULTI_GPU", mixed_precision="no"),
    "zero2": dict(BASE, distributed_type="DEEPSPEED", deepspeed_config={"zero_stage": 2}),
    "fsdp1": dict(
        BASE,
        distributed_type="FSDP",
        fsdp_config={"fsdp_sharding_strategy": "NO_SHARD", "fsdp_auto_wrap_policy": "TRANSFORMER_BASED_WRAP"},
    ),
    "fsdp2": dict(
        BASE,
        distributed_type="FSDP",
        fsdp_config={"fsdp_version": 2, "fsdp_reshard_after_forward": False},
    ),
}
MACHINES = [("A100-80GB", None), ("A100-40GB", 2000.0), ("H100-80GB", None)]
MODELS = ["3B", "8B", "30B", "70B"]


def _reachable(config_kind: str, row_kind: str) -> bool:
    if config_kind in ("ddp", "single"):
        return True
    return row_kind == config_kind


def _cases(tmp: Path) -> list[tuple[str, memory.Report]]:
    out = []
    for name, data in CONFIGS.items():
        path = tmp / f"{name}.yaml"
        path.write_text("".join(f"{k}: {json.dumps(v)}\n" for k, v in data.items()))
        for gpu, host in MACHINES:
            env = target_from_args(8, gpu, torch_version="2.7.1+cu126", accelerate_version="1.15.0")
            for params in MODELS:
                report, _ = memory.check_memory(load_file(path), env, modelsize.from_count(params), host_ram_gib=host)
                out.append((f"{name} {params} {gpu}", report))
    return out


def test_check_suggests_the_first_row_of_fit_that_the_config_reaches(tmp_path: Path) -> None:
    compared = switched = 0
    for title, report in _cases(tmp_path):
        table = fit.table_for(report)
        if table is None or report.suggestion is None:
            continue
        change, est = report.suggestion
        if change.layout != report.estimate.layout:
            assert not any(_reachable(report.estimate.strategy.kind, r.strategy.kind) for r in table.fitting), title
            continue
        kind = report.estimate.strategy.kind
        first = next(r for r in table.fitting if _reachable(kind, r.strategy.kind))
        got = (est.strategy.label(), est.strategy.activation_checkpointing)
        assert got == (first.strategy.label(), first.strategy.activation_checkpointing), title
        assert est.per_gpu == pytest.approx(first.estimate.per_gpu), title
        if kind in ("ddp", "single"):
            assert table.cheapest is first, title  # the very row fit names
            switched += est.strategy.kind != kind
        compared += 1
    assert compared >= 20 and switched >= 5


def test_ddp_8b_on_a100_names_fsdp1_shard_grad_op_in_check_and_fit(tmp_path: Path) -> None:
    path = tmp_path / "ddp.yaml"
    path.write_text("".join(f"{k}: {json.dumps(v)}\n" for k, v in CONFIGS["ddp"].items()))
    env = target_from_args(8, "A100-80GB", torch_version="2.7.1+cu126", accelerate_version="1.15.0")
    size = modelsize.from_count("8B")
    report, _ = memory.check_memory(load_file(path), env, size)
    assert report.suggestion is not None
    table = fit.for_model(size, gpu="A100-80GB", gpus=8)
    assert table.cheapest is not None
    assert report.suggestion[1].strategy.label() == table.cheapest.strategy.label() == "FSDP1 SHARD_GRAD_OP, bf16"


def test_rank_orders_offload_then_recompute_then_communication_then_memory() -> None:
    plain = memory.Strategy("deepspeed", "bf16", 2)
    assert memory.rank(plain, 50.0, 1.0) < memory.rank(memory.Strategy("deepspeed", "bf16", 2, "cpu"), 10.0, 1.0)
    ckpt = memory.Strategy("deepspeed", "bf16", 2, activation_checkpointing=True)
    assert memory.rank(plain, 70.0, 1.5) < memory.rank(ckpt, 10.0, 1.0)
    assert memory.rank(plain, 70.0, 1.0) < memory.rank(plain, 10.0, 1.5)
    assert memory.rank(plain, 10.0, 1.0) < memory.rank(plain, 70.0, 1.0)
