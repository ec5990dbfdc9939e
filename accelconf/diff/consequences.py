"""Consequences of a diff: notes on what the differences do to memory, speed, numerics and the
effective global batch size.

This module owns turning :class:`~accelconf.diff.result.Change` values into sentences; it never
decides what differs (:mod:`accelconf.diff.accelerate`, :mod:`accelconf.diff.deepspeed`).
"""

from __future__ import annotations

import math
from typing import Any

from accelconf.accelerate import registry
from accelconf.accelerate.model import Config
from accelconf.deepspeed.keys import Paths
from accelconf.diff.result import DiffResult, same

# FSDP1 strategies by the ZeRO stage they equal; FSDP2's fsdp_reshard_after_forward true is
# FULL_SHARD's, false SHARD_GRAD_OP's (registry.FSDP2_RESHARD_OF_STRATEGY)
_SHARD_LEVEL: dict[Any, int] = {
    **{name: level for name, (level, _) in registry.SHARDING.items()},
    True: registry.SHARDING["FULL_SHARD"][0],
    False: registry.SHARDING["SHARD_GRAD_OP"][0],
}
_PRECISION_NOTE = {
    "no": "full fp32: about twice the activation memory of 16-bit, slower matmuls",
    "fp16": "fp16 autocast with a dynamic loss scaler (overflowing steps are skipped)",
    "bf16": "bf16 autocast, fp32's range without a loss scaler (needs compute capability 8.0+ on NVIDIA)",
    "fp8": "fp8 through TransformerEngine, MS-AMP or torchao (needs compute capability 8.9+ and fp8_config)",
}


def _num(v: Any) -> float | None:
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, str):
        try:
            return float(v)
        except ValueError:
            return None
    return None


def _fmt_num(v: float | None) -> str:
    if v is None:
        return "?"
    return str(int(v)) if v == int(v) else f"{v:g}"


Factors = tuple[float | None, float | None, float | None]
NO_FACTORS: Factors = (None, None, None)


def batch_factors(cfg: Config | None, ds: dict[str, Any] | None = None) -> Factors:
    """(data-parallel processes, gradient accumulation, micro batch) where a config says them.

    ``ds`` is a flattened DeepSpeed JSON config (it has the accumulation and the micro batch)."""
    cfg = cfg or Config()
    procs = _num(cfg.get("num_processes"))
    if procs is None and cfg.get("distributed_type") == "NO":
        procs = 1.0
    model_parallel = 1.0
    for path in (
        "parallelism_config.parallelism_config_tp_size",
        "parallelism_config.parallelism_config_cp_size",
        "parallelism_config.parallelism_config_sp_size",
        "megatron_lm_config.megatron_lm_tp_degree",
        "megatron_lm_config.megatron_lm_pp_degree",
    ):
        n = _num(cfg.get(path))
        if n and n > 1:
            model_parallel *= n
    if procs is not None and model_parallel > 1 and procs % model_parallel == 0:
        procs /= model_parallel
    gas = _num(cfg.get("deepspeed_config.gradient_accumulation_steps"))
    mbs = None
    if ds:
        gas = _num(ds.get(Paths.GRADIENT_ACCUMULATION)) or gas
        mbs = _num(ds.get(Paths.MICRO_BATCH))
    return procs, gas, mbs


def batch_note(fa: Factors, fb: Factors) -> str:
    """The effective global batch size on each side, when a factor of it changed.

    Factors that only one side knows are shown as ``?`` and left out of the ratio."""
    if all(same(x, y) for x, y in zip(fa, fb)):
        return ""
    names = ("processes", "accumulation", "micro batch")
    known = [i for i in range(3) if fa[i] is not None and fb[i] is not None]
    if not any(not same(fa[i], fb[i]) for i in known):
        return ""

    def product(f: Factors) -> str:
        text = " x ".join(_fmt_num(x) for x in f)
        if all(x is not None for x in f):
            text += f" = {_fmt_num(math.prod(x for x in f if x is not None))}"
        return text

    ratio = 1.0
    for i in known:
        ratio *= (fb[i] or 0.0) / (fa[i] or 1.0)
    unknown = [names[i] for i in range(3) if i not in known]
    tail = f" for the same {' and '.join(unknown)}" if unknown else ""
    return (
        f"effective global batch size (processes x gradient accumulation x micro batch): "
        f"{product(fa)} -> {product(fb)}, x{_fmt_num(round(ratio, 4))}{tail}"
    )


def _sharding_note(key: str, a: Any, b: Any) -> str:
    la: float | None = _SHARD_LEVEL.get(a)
    lb: float | None = _SHARD_LEVEL.get(b)
    if key.endswith("zero_stage") or key.endswith(Paths.STAGE):
        la, lb = _num(a), _num(b)
    if la is None or lb is None or la == lb:
        extra = ""
        if la == lb and {a, b} & {"HYBRID_SHARD", "HYBRID_SHARD_ZERO2"}:
            extra = (
                "hybrid sharding shards within a node and replicates across nodes: less inter-node traffic, more "
                "memory per GPU on several nodes"
            )
        return extra
    what = f"{_short(key)} {_show(a)} -> {_show(b)}"
    if lb > la:
        return f"{what}: more sharding, less memory per GPU and more communication"
    return f"{what}: less sharding, more memory per GPU and less communication"


def _short(key: str) -> str:
    """A key without its accelerate section (DeepSpeed paths stay whole)."""
    section, _, rest = key.partition(".")
    return rest if rest and section in registry.SECTIONS else key


def _offload_note(key: str, a: Any, b: Any) -> str:
    off_a = a not in (None, "none", False)
    off_b = b not in (None, "none", False)
    if off_a == off_b:
        return ""
    name = _short(key)
    if off_b:
        return f"{name} {_show(a)} -> {_show(b)}: less GPU memory, slower steps (host transfers)"
    return f"{name} {_show(a)} -> {_show(b)}: more GPU memory, faster steps"


def precision_note(a: Any, b: Any) -> str:
    if a == b:
        return ""
    tail = _PRECISION_NOTE.get(b, "")
    return f"precision {_show(a)} -> {_show(b)}: numerics change, losses are not directly comparable" + (
        f"; {tail}" if tail else ""
    )


def _show(v: Any) -> str:
    if isinstance(v, bool):
        return str(v).lower()
    if v is None:
        return "(unset)"
    return str(v)


_SHARD_KEYS = (
    "fsdp_config.fsdp_sharding_strategy",
    "fsdp_config.fsdp_reshard_after_forward",
    "deepspeed_config.zero_stage",
    Paths.STAGE,
)
_OFFLOAD_KEYS = (
    "fsdp_config.fsdp_offload_params",
    "deepspeed_config.offload_optimizer_device",
    "deepspeed_config.offload_param_device",
    Paths.OFFLOAD_OPTIMIZER_DEVICE,
    Paths.OFFLOAD_PARAM_DEVICE,
)


def consequences(result: DiffResult, fa: Factors = NO_FACTORS, fb: Factors = NO_FACTORS) -> list[str]:
    """Notes on what the differences do: sharding, offload, precision, global batch size."""
    notes: list[str] = []
    for c in result.differences:
        n = ""
        if c.key in _SHARD_KEYS and c.a_key and c.b_key:  # FSDP1 strategy vs FSDP2 reshard_after_forward
            n = (
                _sharding_note(c.key, c.a, c.b)
                .replace(f"{_short(c.key)} ", f"{_short(c.a_key)} ", 1)
                .replace(f"-> {_show(c.b)}", f"-> {_short(c.b_key)} {_show(c.b)}", 1)
            )
        elif c.key in _SHARD_KEYS:
            n = _sharding_note(c.key, c.a, c.b)
        elif c.key in _OFFLOAD_KEYS:
            n = _offload_note(c.key, c.a, c.b)
        elif c.key == "mixed_precision":
            n = precision_note(c.a, c.b)
        if n:
            notes.append(n)
    n = batch_note(fa, fb)
    if n:
        notes.append(n)
    return notes
