"""The constructor parameters of every optimizer and scheduler class a DeepSpeed config can name,
generated from the installed DeepSpeed's and torch's own signatures into committed data.

``deepspeed.initialize`` builds ``optimizer.type`` and ``scheduler.type`` by calling a class with
``params`` as keyword arguments (``_configure_basic_optimizer`` and ``_scheduler_from_config`` in
``deepspeed/runtime/engine.py``), so a parameter the class does not take raises TypeError there.
Which class a name selects is DeepSpeed's wiring and lives in :mod:`.rules`; the parameters of each
class live in ``accelconf/data/deepspeed_classes.json``, written by ``python -m
accelconf.deepspeed.signatures`` (the only code here that imports deepspeed and torch, and only when
run). ``tests/oracle/test_deepspeed_signatures_oracle.py`` fails when the committed file differs from what the
installed DeepSpeed and torch give.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Callable
from typing import Any

DATA = os.path.join(os.path.dirname(os.path.dirname(__file__)), "data", "deepspeed_classes.json")

# The classes ``_configure_basic_optimizer`` instantiates for DeepSpeed's own optimizer names
# (deepspeed/runtime/engine.py, 0.19.8). mup's MuAdam/MuAdamW/MuSGD and Muon's param groups are not
# listed: their parameters are not a plain signature.
DEEPSPEED_OPTIMIZER_CLASSES = (
    "deepspeed.ops.adam.FusedAdam",
    "deepspeed.ops.adam.DeepSpeedCPUAdam",
    "deepspeed.ops.adam.ZenFlowCPUAdam",
    "deepspeed.ops.lamb.FusedLamb",
    "deepspeed.ops.lion.FusedLion",
    "deepspeed.ops.lion.DeepSpeedCPULion",
    "deepspeed.ops.adagrad.DeepSpeedCPUAdagrad",
)


def _params(cls: Any) -> dict[str, Any]:
    """Keyword parameters of ``cls(first_positional, ...)``; a ``**kwargs`` is followed into the base
    classes (ZenFlowCPUAdam forwards to DeepSpeedCPUAdam)."""
    import inspect

    names: list[str] = []
    required: list[str] = []
    var_kwargs = False
    for klass in cls.__mro__:
        if "__init__" not in vars(klass):
            continue
        sig = inspect.signature(klass.__init__)
        ps = list(sig.parameters.values())[2:]  # self, then params / optimizer
        more = False
        for p in ps:
            if p.kind is p.VAR_KEYWORD:
                more = True
            elif p.kind is not p.VAR_POSITIONAL and p.name not in names:
                names.append(p.name)
                if p.default is p.empty and klass is cls:
                    required.append(p.name)
        if not more:
            break
    else:
        var_kwargs = True
    return {"params": sorted(names), "required": sorted(required), "var_kwargs": var_kwargs}


def generate(
    torch: Any = None,
    lr_schedules: Any = None,
    import_module: Callable[[str], Any] | None = None,
    version: Callable[[str], str] | None = None,
) -> dict[str, Any]:
    """The data, from the installed DeepSpeed and torch (imports both). The arguments stand in for
    ``torch``, ``deepspeed.runtime.lr_schedules``, ``importlib.import_module`` and the package
    metadata's ``version``: the installed ones when not given."""
    import importlib
    import importlib.metadata as md

    if torch is None:
        import torch
    if lr_schedules is None:
        lr_schedules = importlib.import_module("deepspeed.runtime.lr_schedules")
    import_module = import_module or importlib.import_module
    version = version or md.version

    classes: dict[str, Any] = {}
    for path in DEEPSPEED_OPTIMIZER_CLASSES:
        mod, _, name = path.rpartition(".")
        classes[path] = _params(getattr(import_module(mod), name))
    torch_optimizers = sorted(
        n
        for n, c in vars(torch.optim).items()
        if isinstance(c, type) and issubclass(c, torch.optim.Optimizer) and c is not torch.optim.Optimizer
    )
    for n in torch_optimizers:
        classes[f"torch.optim.{n}"] = _params(getattr(torch.optim, n))
    sched = torch.optim.lr_scheduler
    bases = (sched.LRScheduler, sched.ReduceLROnPlateau)
    torch_schedulers = sorted(
        n
        for n, c in vars(sched).items()
        if isinstance(c, type) and not n.startswith("_") and issubclass(c, bases) and c is not sched.LRScheduler
    )
    for n in torch_schedulers:
        classes[f"torch.optim.lr_scheduler.{n}"] = _params(getattr(sched, n))
    ds_schedulers = sorted(
        n for n, c in vars(lr_schedules).items() if isinstance(c, type) and c.__module__ == lr_schedules.__name__
    )
    for n in ds_schedulers:
        classes[f"deepspeed.runtime.lr_schedules.{n}"] = _params(getattr(lr_schedules, n))
    return {
        "generated_by": "python -m accelconf.deepspeed.signatures",
        "deepspeed": version("deepspeed"),
        "torch": version("torch").split("+")[0],
        "torch_optimizers": torch_optimizers,
        "torch_schedulers": torch_schedulers,
        "deepspeed_schedulers": ds_schedulers,
        "classes": classes,
    }


def dumps(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=1, sort_keys=True) + "\n"


@functools.lru_cache(maxsize=1)
def load() -> dict[str, Any]:
    """The committed data (no import of deepspeed or torch)."""
    with open(DATA, encoding="utf-8") as fh:
        data: dict[str, Any] = json.load(fh)
    return data


if __name__ == "__main__":  # pragma: no cover - a maintainer's tool
    import logging

    logging.disable(logging.WARNING)
    os.makedirs(os.path.dirname(DATA), exist_ok=True)
    with open(DATA, "w", encoding="utf-8") as out:
        out.write(dumps(generate()))
    print(f"wrote {DATA}")
