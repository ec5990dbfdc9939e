"""The installed DeepSpeed as an oracle for a config: what ``deepspeed.initialize`` says about it.

``DeepSpeedConfig(dict or path)`` runs on a CPU machine with the module-level ``dist`` of
``deepspeed.runtime.config`` swapped for a fake that reports the wanted world size. Then the
config-only steps of ``deepspeed.initialize`` (deepspeed/runtime/engine.py) run on an engine that
holds nothing but the config: ``_assert_valid_mixed_precision_config``, ``_configure_basic_optimizer``
(DeepSpeed's fused and CPU optimizer classes replaced by stubs that bind the arguments to the real
class's signature; their kernels cannot be built here), ``_do_optimizer_sanity_check`` and
``_scheduler_from_config``. The answer is ``None`` (accepted) or ``"ExceptionType: message"``.
"""

from __future__ import annotations

import contextlib
import copy
import inspect
import logging
import os
import tempfile
import types
from collections.abc import Callable, Iterator
from typing import Any

_OPS = (
    "FusedAdam",
    "DeepSpeedCPUAdam",
    "ZenFlowCPUAdam",
    "FusedLamb",
    "FusedLion",
    "DeepSpeedCPULion",
    "DeepSpeedCPUAdagrad",
)


def make_oracle() -> Callable[..., str | None]:
    """The oracle function; raises ImportError (or whatever the import raises) without DeepSpeed."""
    os.environ.setdefault("DS_ACCELERATOR", "cpu")
    import deepspeed
    import deepspeed.ops.adagrad
    import deepspeed.ops.adam
    import deepspeed.ops.lamb
    import deepspeed.ops.lion
    import deepspeed.runtime.config as ds_cfg
    import deepspeed.runtime.zero.utils as zero_utils
    import torch
    from deepspeed.runtime.engine import DeepSpeedEngine
    from deepspeed.utils import logger as ds_logger

    ds_logger.setLevel(logging.CRITICAL)
    modules = (deepspeed.ops.adam, deepspeed.ops.lamb, deepspeed.ops.lion, deepspeed.ops.adagrad)

    def binder(real: type) -> type:
        class Stub(torch.optim.Optimizer):
            def __init__(self, *args: Any, **kwargs: Any) -> None:
                inspect.signature(real).bind(*args, **kwargs)
                super().__init__(args[0], {"lr": 1e-3})

        Stub.__name__ = real.__name__
        return Stub

    stubs = {name: binder(getattr(mod, name)) for mod in modules for name in _OPS if hasattr(mod, name)}

    @contextlib.contextmanager
    def patched(world_size: int) -> Iterator[None]:
        fake = types.SimpleNamespace(get_rank=lambda *a, **k: 0, get_world_size=lambda *a, **k: world_size)
        saved: list[tuple[Any, str, Any]] = [
            (ds_cfg, "dist", ds_cfg.dist),
            (zero_utils, "dist", zero_utils.dist),
            (zero_utils, "ZERO_SUPPORTED_OPTIMIZERS", zero_utils.ZERO_SUPPORTED_OPTIMIZERS),
        ]
        for mod in modules:
            for name in _OPS:
                if hasattr(mod, name):
                    saved.append((mod, name, getattr(mod, name)))
        try:
            ds_cfg.dist = zero_utils.dist = fake
            # ZeRO's supported list holds the real classes: the stubs stand for them (FusedLamb is not on it)
            zero_utils.ZERO_SUPPORTED_OPTIMIZERS = list(zero_utils.ZERO_SUPPORTED_OPTIMIZERS) + [
                s for n, s in stubs.items() if n != "FusedLamb"
            ]
            for mod in modules:
                for name in _OPS:
                    if hasattr(mod, name):
                        setattr(mod, name, stubs[name])
            yield
        finally:
            for obj, name, value in saved:
                setattr(obj, name, value)

    def run(cfg: dict[str, Any] | None = None, world_size: int = 1, *, text: str | None = None) -> str | None:
        with patched(world_size):
            try:
                if text is not None:
                    with tempfile.TemporaryDirectory() as tmp:
                        path = os.path.join(tmp, "ds_config.json")
                        with open(path, "w", encoding="utf-8") as fh:
                            fh.write(text)
                        config = ds_cfg.DeepSpeedConfig(path)
                else:
                    config = ds_cfg.DeepSpeedConfig(copy.deepcopy(cfg))
                engine = DeepSpeedEngine.__new__(DeepSpeedEngine)
                torch.nn.Module.__init__(engine)
                engine._config = config
                engine.global_rank, engine.pipeline_parallelism, engine.has_moe_layers = 0, False, False
                engine.client_optimizer = None
                engine.zenflow = config.zero_config.zenflow is not None
                if engine.zenflow:  # deepspeed/runtime/zenflow/engine.py configure_zenflow
                    engine.overlap_step = config.zero_config.zenflow.overlap_step
                engine._assert_valid_mixed_precision_config()
                params = [torch.nn.Parameter(torch.zeros(2))]
                optimizer = None
                if config.optimizer_name is not None:
                    optimizer = engine._configure_basic_optimizer(params)
                    engine._do_optimizer_sanity_check(optimizer)
                if config.scheduler_name is not None:
                    engine._scheduler_from_config(optimizer or torch.optim.SGD(params, lr=0.1))
            except Exception as exc:  # noqa: BLE001 - DeepSpeed raises many kinds
                return f"{type(exc).__name__}: {str(exc)[:400]}"
        return None

    run.version = deepspeed.__version__.split("+")[0]  # type: ignore[attr-defined]
    return run
