"""optimizer / scheduler ``type`` and ``params``.

DeepSpeed builds both by calling a class with ``params`` as keyword arguments
(``_configure_basic_optimizer`` and ``_scheduler_from_config`` in deepspeed/runtime/engine.py). The
oracle here runs those two methods of the installed DeepSpeed on a fake engine, with DeepSpeed's
fused/CPU optimizer classes replaced by stubs that bind the arguments to the real class's signature
(their kernels cannot be built on a CPU machine); torch's classes and DeepSpeed's schedulers are
built for real.
"""

from __future__ import annotations

import json
from typing import Any

from accelconf.deepspeed.validate import validate_deepspeed
from accelconf.text.document import load_text


def _findings(cfg: dict[str, Any]) -> list[Any]:
    doc = load_text(json.dumps(cfg), "ds.json", "json")
    return [
        f
        for f in validate_deepspeed(doc, runtime="deepspeed", deepspeed_version="0.19.8")
        if f.key.startswith(("optimizer", "scheduler"))
    ]


def _errors(cfg: dict[str, Any]) -> list[str]:
    return [f"{f.key}: {f.message}" for f in _findings(cfg) if f.severity == "error"]


BASE: dict[str, Any] = {"train_micro_batch_size_per_gpu": 1}

# (optimizer or scheduler block(s), zero_optimization or None)


def test_torch_names_accepted_and_unknown_params_are_errors() -> None:
    assert _errors({**BASE, "scheduler": {"type": "StepLR", "params": {"step_size": 5}}}) == []
    (err,) = _errors({**BASE, "optimizer": {"type": "SGD", "params": {"lr": 0.1, "beta": 0.9}}})
    assert "SGD" in err and "TypeError" in err and "`beta`" in err
    (f,) = [
        f
        for f in _findings({**BASE, "scheduler": {"type": "StepLR", "params": {"step_sze": 5}}})
        if "step_sze" in f.key
    ]
    assert f.severity == "error" and f.suggestion == "step_size"
    # the old "silently ignores it" warning is gone for scheduler params
    assert not any(
        "ignores" in f.message for f in _findings({**BASE, "scheduler": {"type": "WarmupLR", "params": {"foo": 1}}})
    )
