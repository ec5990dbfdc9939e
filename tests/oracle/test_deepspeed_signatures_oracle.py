"""optimizer / scheduler type and params against deepspeed.initialize's own construction (the classes stubbed to
bind their signatures)."""

from __future__ import annotations

import inspect
import json
import os
import types
from typing import Any

import pytest

from accelconf.deepspeed import signatures
from tests.unit.deepspeed.test_deepspeed_signatures import BASE, _errors

CASES: list[tuple[dict[str, Any], dict[str, Any] | None]] = [
    (
        {
            "optimizer": {
                "type": "AdamW",
                "params": {"lr": 1e-3, "betas": [0.9, 0.99], "eps": 1e-8, "weight_decay": 0.1},
            }
        },
        None,
    ),
    (
        {
            "optimizer": {
                "type": "Adam",
                "params": {"lr": 1e-3, "adam_w_mode": False, "torch_adam": True, "foreach": True},
            }
        },
        None,
    ),
    ({"optimizer": {"type": "adam", "params": {"lr": 1e-3, "momentum": 0.9}}}, None),
    ({"optimizer": {"type": "Adam", "params": {"lr": 1e-3, "set_grad_none": True}}}, None),
    (
        {"optimizer": {"type": "Adam", "params": {"lr": 1e-3, "set_grad_none": True}}},
        {"stage": 2, "offload_optimizer": {"device": "cpu"}},
    ),
    (
        {"optimizer": {"type": "Adam", "params": {"lr": 1e-3, "adamw_mode": True}}},
        {"stage": 2, "offload_optimizer": {"device": "cpu"}},
    ),
    (
        {"optimizer": {"type": "Adam", "params": {"lr": 1e-3, "fp32_optimizer_states": False}}},
        {"stage": 2, "offload_optimizer": {"device": "cpu"}},
    ),
    ({"optimizer": {"type": "Lamb", "params": {"lr": 1e-3, "max_coeff": 0.3}}}, None),
    ({"optimizer": {"type": "Lion", "params": {"lr": 1e-4, "eps": 1e-8}}}, None),
    ({"optimizer": {"type": "Adagrad", "params": {"lr": 1e-2, "lr_decay": 0.1}}}, None),
    (
        {"optimizer": {"type": "Adagrad", "params": {"lr": 1e-2, "lr_decay": 0.1}}},
        {"stage": 1, "offload_optimizer": {"device": "cpu"}},
    ),
    ({"optimizer": {"type": "SGD", "params": {"lr": 0.1, "momentum": 0.9, "nesterov": True}}}, None),
    ({"optimizer": {"type": "SGD", "params": {"lr": 0.1, "betas": [0.9, 0.99]}}}, None),
    ({"optimizer": {"type": "RMSprop", "params": {"lr": 0.01, "alpha": 0.9}}}, None),
    ({"optimizer": {"type": "Adafactor", "params": {"lr": 0.01}}}, None),
    ({"scheduler": {"type": "WarmupLR", "params": {"warmup_num_steps": 10}}}, None),
    ({"scheduler": {"type": "WarmupLR", "params": {"warmup_num_steps": 10, "total_num_steps": 100}}}, None),
    ({"scheduler": {"type": "WarmupDecayLR", "params": {"warmup_num_steps": 10}}}, None),
    ({"scheduler": {"type": "WarmupDecayLR", "params": {"total_num_steps": 100}}}, None),
    ({"scheduler": {"type": "WarmupCosineLR", "params": {"total_num_steps": 100, "warmup_max_lr": 0.1}}}, None),
    ({"scheduler": {"type": "OneCycle", "params": {"cycle_min_lr": 0.001, "cycle_max_lr": 0.01}}}, None),
    ({"scheduler": {"type": "OneCycle", "params": {"cycle_max_lr": 0.01}}}, None),
    ({"scheduler": {"type": "StepLR", "params": {"step_size": 10, "gamma": 0.5}}}, None),
    ({"scheduler": {"type": "StepLR", "params": {"gamma": 0.5}}}, None),
    ({"scheduler": {"type": "CosineAnnealingLR", "params": {"T_max": 100, "eta_min": 0.0}}}, None),
    ({"scheduler": {"type": "ExponentialLR", "params": {"gamma": 0.9, "warmup_num_steps": 3}}}, None),
    ({"scheduler": {"type": "LinearLR", "params": {}}}, None),
    ({"scheduler": {"type": "LinearLR"}}, None),
    ({"scheduler": {"type": "steplr", "params": {"step_size": 1}}}, None),
]


@pytest.fixture(scope="module")
def engine():
    os.environ.setdefault("DS_ACCELERATOR", "cpu")
    try:
        import deepspeed.ops.adagrad
        import deepspeed.ops.adam
        import deepspeed.ops.lamb
        import deepspeed.ops.lion
        import torch
        from deepspeed.runtime.config import DEEPSPEED_OPTIMIZERS
        from deepspeed.runtime.engine import DeepSpeedEngine
    except Exception as exc:  # noqa: BLE001 - any import failure means no oracle
        pytest.skip(
            f"DeepSpeed and torch cannot be imported here ({type(exc).__name__}: {exc}); install the test extras"
        )
    return types.SimpleNamespace(
        torch=torch,
        Engine=DeepSpeedEngine,
        names=DEEPSPEED_OPTIMIZERS,
        modules=(deepspeed.ops.adam, deepspeed.ops.lamb, deepspeed.ops.lion, deepspeed.ops.adagrad),
    )


def _binder(real: type) -> Any:
    def stub(*args: Any, **kwargs: Any) -> Any:
        inspect.signature(real).bind(*args, **kwargs)  # TypeError exactly when calling the class would
        return None

    stub.__name__ = real.__name__
    return stub


def _initialize(engine: Any, monkeypatch: pytest.MonkeyPatch, cfg: dict[str, Any]) -> str | None:
    """What deepspeed.initialize's optimizer and scheduler construction says about cfg: None or the error."""
    for mod in engine.modules:
        for name in (
            "FusedAdam",
            "DeepSpeedCPUAdam",
            "ZenFlowCPUAdam",
            "FusedLamb",
            "FusedLion",
            "DeepSpeedCPULion",
            "DeepSpeedCPUAdagrad",
        ):
            if hasattr(mod, name) and not getattr(getattr(mod, name), "__wrapped_stub__", False):
                stub = _binder(getattr(mod, name))
                stub.__wrapped_stub__ = True  # type: ignore[attr-defined]
                monkeypatch.setattr(mod, name, stub)
    zero = cfg.get("zero_optimization") or {}
    device = (zero.get("offload_optimizer") or {}).get("device", "none")
    params = [engine.torch.nn.Parameter(engine.torch.zeros(2))]
    opt = cfg.get("optimizer")
    sched = cfg.get("scheduler")
    fake = types.SimpleNamespace(zenflow=False, has_moe_layers=False)
    fake.zero_use_cpu_optimizer = lambda: device in ("cpu", "nvme")
    fake.bf16_optimizer_states = lambda: False
    fake.get_optimizer_configuration = lambda *a, **k: engine.Engine.get_optimizer_configuration(fake, *a, **k)
    try:
        optimizer = engine.torch.optim.SGD(params, lr=0.1)
        if opt is not None:
            name = opt["type"].lower() if opt["type"].lower() in engine.names else opt["type"]
            fake.optimizer_name = lambda: name
            fake.optimizer_params = lambda: opt.get("params")
            got = engine.Engine._configure_basic_optimizer(fake, params)
            optimizer = got if got is not None else optimizer
        if sched is not None:
            fake.scheduler_name = lambda: sched["type"]
            fake.scheduler_params = lambda: sched.get("params")
            engine.Engine._scheduler_from_config(fake, optimizer)
    except (TypeError, ValueError, AssertionError, AttributeError) as exc:
        return f"{type(exc).__name__}: {exc}"
    return None


@pytest.mark.oracle
@pytest.mark.parametrize("blocks, zero", CASES, ids=lambda c: json.dumps(c)[:90] if c else "-")
def test_optimizer_scheduler_kwargs_agree_with_initialize(
    engine, monkeypatch: pytest.MonkeyPatch, blocks, zero
) -> None:
    cfg = {**BASE, **blocks, **({"zero_optimization": zero} if zero else {})}
    raised = _initialize(engine, monkeypatch, cfg)
    errors = _errors(cfg)
    if raised:
        assert errors, f"deepspeed.initialize raises {raised} for {cfg} but accelconf reports no error"
    else:
        assert not errors, f"deepspeed.initialize builds {cfg} but accelconf reports {errors}"


def test_committed_signatures_match_installed_deepspeed_and_torch() -> None:
    """Drift test: regenerate from the installed DeepSpeed and torch and compare with the committed file."""
    try:
        fresh = signatures.generate()
    except Exception as exc:  # noqa: BLE001
        pytest.skip(
            f"DeepSpeed and torch cannot be imported here ({type(exc).__name__}: {exc}); install the test extras"
        )
    committed = signatures.load()
    if (fresh["deepspeed"], fresh["torch"]) != (committed["deepspeed"], committed["torch"]):
        pytest.skip(
            f"installed DeepSpeed {fresh['deepspeed']} / torch {fresh['torch']} differ from the ones the data "
            f"was generated with ({committed['deepspeed']} / {committed['torch']})"
        )
    assert signatures.dumps(fresh) == signatures.dumps(committed), (
        "accelconf/data/deepspeed_classes.json is stale: run python -m accelconf.deepspeed.signatures"
    )
