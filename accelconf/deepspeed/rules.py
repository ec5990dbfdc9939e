"""Cross-field rules of a DeepSpeed config: what DeepSpeed checks between keys (fp16 with bf16,
offload against the ZeRO stage, the batch equation, optimizer and scheduler types), in
``DeepSpeedConfig._do_sanity_check`` (``deepspeed/runtime/config.py``) and ``deepspeed.initialize``
(``deepspeed/runtime/engine.py``).
"""

from __future__ import annotations

from typing import Any

from packaging.version import Version

from accelconf import releases
from accelconf.deepspeed import signatures
from accelconf.deepspeed.context import Context as _Ctx
from accelconf.deepspeed.keys import _OPTIMIZERS, _OPTIMIZERS_REMOVED, _OPTIMIZERS_SINCE, _REMOVED_TOP, DTYPE_SPELLINGS
from accelconf.deepspeed.values import _enabled, _fmt, _int_or_none, _lax_num, _stage, lax_bool
from accelconf.findings import Severity
from accelconf.text import suggest
from accelconf.text.document import Node


def rules(ctx: _Ctx, data: dict[str, Any], world_size: int | None) -> None:
    doc = ctx.doc
    bf_name = "bf16" if "bf16" in data else "bfloat16"
    _half_precision_blocks(ctx, data, bf_name)
    stage = _stage(data)
    zero = data.get("zero_optimization")
    z: dict[str, Any] = zero if isinstance(zero, dict) else {}
    for which in ("offload_param", "offload_optimizer"):
        off = z.get(which)
        if isinstance(off, dict):
            _offload(ctx, which, off, stage)
    if stage is not None:
        _stage_requirements(ctx, data, z, bf_name, stage)
    b = data.get(bf_name)
    if (
        isinstance(b, dict)
        and lax_bool(b.get("bf16_optimizer_states"))
        and not lax_bool(b.get("bf16_master_weights_and_grads"))
    ):
        ctx.add(
            "ds-stage-requirement",
            "error",
            "`bf16_optimizer_states` requires `bf16_master_weights_and_grads: true`",
            f"{bf_name}.bf16_optimizer_states",
            doc.node(f"{bf_name}.bf16_optimizer_states"),
        )
    _fp16_scaling(ctx, data)
    _optimizer_scheduler(ctx, data)
    _precision_dtypes(ctx, data, bf_name, stage)
    _expert_parallel(ctx, data)
    _zero3_save(ctx, z, stage)
    _popped_enabled(ctx, data)
    _batch(ctx, data, world_size)
    if ctx.runtime in ("accelerate", "transformers") and "zero_optimization" not in data:
        ctx.add(
            "ds-zero-missing",
            "error",
            f'no `zero_optimization` section: {ctx.runtime} raises "Please specify the ZeRO '
            'optimization config in the DeepSpeed config"',
            "",
            doc.root,
            "zero_optimization",
        )


def _half_precision_blocks(ctx: _Ctx, data: dict[str, Any], bf_name: str) -> None:
    """fp16 and bf16 both enabled; bf16 beside its old name bfloat16."""
    doc = ctx.doc
    if _enabled(data.get("fp16")) and _enabled(data.get(bf_name)):
        ctx.add(
            "ds-fp16-bf16",
            "error",
            "fp16 and bf16 are both enabled; DeepSpeed raises "
            '"bfloat16 and fp16 modes cannot be simultaneously enabled"',
            f"{bf_name}.enabled",
            doc.node(f"{bf_name}.enabled"),
        )
    if "bf16" in data and "bfloat16" in data:
        ctx.add(
            "ds-alias-conflict",
            "warning",
            "both `bf16` and its old name `bfloat16` are present; DeepSpeed reads `bf16` and ignores `bfloat16`",
            "bfloat16",
            doc.key("bfloat16"),
        )


def _offload(ctx: _Ctx, which: str, off: dict[str, Any], stage: int | None) -> None:
    """One offload block (offload_param or offload_optimizer) against the ZeRO stage, and its NVMe path."""
    doc = ctx.doc
    device = off.get("device", "none")
    key = f"zero_optimization.{which}"
    if which == "offload_param" and stage is not None and stage < 3 and device not in ("none", None):
        ctx.add(
            "ds-offload-stage",
            "warning",
            f"`offload_param` only works with ZeRO stage 3; with stage {stage} DeepSpeed silently ignores it",
            key,
            doc.key(key),
        )
    if which == "offload_optimizer" and stage is not None and stage < 3 and device == "nvme":
        ctx.add(
            "ds-offload-stage",
            "warning",
            f"NVMe optimizer offload needs ZeRO stage 3; stage {stage} treats it as CPU offload",
            f"{key}.device",
            doc.node(f"{key}.device"),
        )
    if which == "offload_optimizer" and stage is not None and stage != 3:
        ratio = _lax_num(off.get("ratio"))
        if ratio is not None and ratio < 1:
            ctx.add(
                "ds-offload-stage",
                "error",
                f"partial optimizer offload (`ratio` {_fmt(ratio)} < 1) is only supported "
                "with ZeRO stage 3; DeepSpeed rejects it",
                f"{key}.ratio",
                doc.node(f"{key}.ratio"),
            )
    used = stage is None or (stage == 3 if which == "offload_param" else stage >= 1)
    if used and device == "nvme" and off.get("nvme_path") in (None, "", "none"):
        node = doc.node(f"{key}.nvme_path") or doc.node(f"{key}.device")
        ctx.add(
            "ds-nvme-path",
            "error",
            f"`{which}` uses device nvme but has no `nvme_path`"
            + ("" if off.get("nvme_path") != "none" else ' ("none" is a relative directory named none)')
            + "; DeepSpeed fails when it starts swapping",
            f"{key}.device",
            node,
        )


def _stage_requirements(ctx: _Ctx, data: dict[str, Any], z: dict[str, Any], bf_name: str, stage: int) -> None:
    """Settings DeepSpeed allows only with some ZeRO stages."""
    doc = ctx.doc
    if lax_bool(z.get("compute_grad_norm")) is False and stage not in (1, 2):
        ctx.add(
            "ds-stage-requirement",
            "error",
            f"`compute_grad_norm: false` is only allowed with ZeRO stage 1 or 2, not {stage}",
            "zero_optimization.compute_grad_norm",
            doc.node("zero_optimization.compute_grad_norm"),
        )
    for block, flag in (
        ("fp16", "fp16_master_weights_and_grads"),
        (bf_name, "bf16_master_weights_and_grads"),
        (bf_name, "bf16_optimizer_states"),
    ):
        b = data.get(block)
        if isinstance(b, dict) and lax_bool(b.get(flag)) is True and stage == 0:
            ctx.add(
                "ds-stage-requirement",
                "error",
                f"`{block}.{flag}` needs ZeRO stage 1, 2 or 3",
                f"{block}.{flag}",
                doc.node(f"{block}.{flag}"),
            )
    op = data.get("gradient_allreduce_op")
    if isinstance(op, str) and op.lower() == "sum":
        reason = (
            "ZeRO stage 3"
            if stage == 3
            else "ZenFlow"
            if isinstance(z.get("zenflow"), dict)
            else "DeepCompile"
            if isinstance(data.get("compile"), dict) and lax_bool(data["compile"].get("deepcompile"))
            else None
        )
        if reason:
            ctx.add(
                "ds-stage-requirement",
                "error",
                f'`gradient_allreduce_op: "sum"` is not supported with {reason}',
                "gradient_allreduce_op",
                doc.node("gradient_allreduce_op"),
            )


def _fp16_scaling(ctx: _Ctx, data: dict[str, Any]) -> None:
    fp = data.get("fp16")
    if not isinstance(fp, dict) or not _enabled(fp):
        return
    if ctx.version is not None and ctx.version < Version(releases.DEEPSPEED_SINCE["ds-dynamic-scaling-checked"]):
        return
    if _lax_num(fp.get("loss_scale", 0)) != 0:
        return
    for key, label in (("loss_scale_window", "loss_scale_window"), ("min_loss_scale", "min_loss_scale")):
        v = _lax_num(fp.get(key))
        if v is not None and v <= 0:
            sev: Severity = "error"
            if (
                key == "loss_scale_window"
                and ctx.version is not None
                and ctx.version < Version(releases.DEEPSPEED_SINCE["ds-loss-scale-window-refused"])
            ):
                sev = "warning"
            ctx.add(
                "ds-fp16-scaling",
                sev,
                f"`fp16.{label}` must be > 0 with dynamic loss scaling (loss_scale 0)",
                f"fp16.{key}",
                ctx.doc.node(f"fp16.{key}"),
            )


def _optimizer_scheduler(ctx: _Ctx, data: dict[str, Any]) -> None:
    classes = signatures.load()
    torch_optimizers = classes["torch_optimizers"]
    opt = data.get("optimizer")
    if isinstance(opt, dict) and isinstance(opt.get("type"), str):
        t = opt["type"]
        node = ctx.doc.node("optimizer.type")
        low = t.lower()
        known = True
        if low in _OPTIMIZERS:
            removed = _OPTIMIZERS_REMOVED.get(low)
            if removed:
                active = ctx.active(None, removed)
                sev: Severity = "error" if active is False else "warning"
                ctx.add(
                    "ds-removed", sev, f"optimizer `{t}` was removed in DeepSpeed {removed}", "optimizer.type", node
                )
                known = False
            since = _OPTIMIZERS_SINCE.get(low)
            if since and ctx.active(since, None) is False:
                ctx.add(
                    "ds-version", "error", f"optimizer `{t}` needs DeepSpeed {since} or newer", "optimizer.type", node
                )
        elif t not in torch_optimizers:
            names = [o for o in _OPTIMIZERS if o not in _OPTIMIZERS_REMOVED] + list(torch_optimizers)
            close = suggest.ranked(t, names, 2) or suggest.ranked(low, [n.lower() for n in names], 2)
            ctx.add(
                "ds-optimizer",
                "error",
                f"unknown optimizer type `{t}`: neither a DeepSpeed optimizer "
                "(case-insensitive) nor a torch.optim class (case-sensitive); deepspeed.initialize fails"
                + suggest.hint(close),
                "optimizer.type",
                node,
                close[0] if close else None,
            )
            known = False
        params = opt.get("params")
        if known and isinstance(params, dict):
            candidates, popped, injected = _optimizer_classes(t, params, data)
            _kwargs(ctx, "optimizer", t, candidates, params, popped, injected)
        if known:
            _zero_untested(ctx, data, t, _optimizer_classes(t, params if isinstance(params, dict) else {}, data)[0])
    sched = data.get("scheduler")
    if isinstance(sched, dict) and isinstance(sched.get("type"), str):
        t = sched["type"]
        node = ctx.doc.node("scheduler.type")
        if t in classes["deepspeed_schedulers"]:
            cls = f"deepspeed.runtime.lr_schedules.{t}"
        elif t in classes["torch_schedulers"]:
            cls = f"torch.optim.lr_scheduler.{t}"
        else:
            names = list(classes["deepspeed_schedulers"]) + list(classes["torch_schedulers"])
            close = suggest.ranked(t, names, 2) or [n for n in names if n.lower() == t.lower()]
            ctx.add(
                "ds-enum",
                "error",
                f"unknown scheduler type `{t}`: neither a DeepSpeed scheduler ("
                + ", ".join(classes["deepspeed_schedulers"])
                + ") nor a torch.optim.lr_scheduler class (case-sensitive); "
                'deepspeed.initialize raises AssertionError "DeepSpeed does not recognize LR scheduler"'
                + suggest.hint(close),
                "scheduler.type",
                node,
                close[0] if close else None,
            )
            return
        params = sched.get("params")
        if params is None:
            where = ctx.doc.key("scheduler.params") or ctx.doc.key("scheduler")
            ctx.add(
                "ds-optimizer",
                "error",
                f"scheduler `{t}` has no `params`: deepspeed.initialize calls "
                '`scheduler(optimizer, **params)` with None and raises TypeError; write `"params": {}`',
                "scheduler.params",
                where,
            )
        elif isinstance(params, dict):
            _kwargs(ctx, "scheduler", t, [cls], params, set(), set())


_DTYPE = DTYPE_SPELLINGS
# optimizer classes ZeRO accepts without zero_allow_untested_optimizer (deepspeed/runtime/zero/utils.py)
_ZERO_SUPPORTED = {
    "torch.optim.Adam",
    "torch.optim.AdamW",
    "torch.optim.Adagrad",
    "deepspeed.ops.adam.FusedAdam",
    "deepspeed.ops.adam.DeepSpeedCPUAdam",
    "deepspeed.ops.adam.ZenFlowCPUAdam",
    "deepspeed.ops.adagrad.DeepSpeedCPUAdagrad",
    "deepspeed.ops.lion.DeepSpeedCPULion",
    "deepspeed.ops.lion.FusedLion",
}


def _precision_dtypes(ctx: _Ctx, data: dict[str, Any], bf_name: str, stage: int | None) -> None:
    """What deepspeed.initialize checks of ``data_types`` against the fp16/bf16 mode
    (deepspeed/runtime/engine.py: ``_assert_valid_mixed_precision_config``, ``get_data_types``,
    ``_do_optimizer_sanity_check``)."""
    dt = data.get("data_types")
    if not isinstance(dt, dict):
        return
    blocks = [data.get("fp16"), data.get(bf_name)]
    if any(isinstance(b, dict) and b.get("enabled") == "auto" for b in blocks):
        return  # the mode is filled later
    fp16, bf16 = _enabled(blocks[0]), _enabled(blocks[1])
    if fp16 and bf16:
        return  # reported as ds-fp16-bf16
    model = "fp16" if fp16 else "bf16" if bf16 else "fp32"
    doc = ctx.doc
    raw_param, raw_grad = dt.get("param_dtype"), dt.get("grad_accum_dtype")
    param = _DTYPE.get(raw_param) if isinstance(raw_param, str) else None
    if (
        param is not None
        and param != model
        and ctx.active(releases.DEEPSPEED_SINCE["ds-param-dtype-matches-precision"], None) is not False
    ):
        ctx.add(
            "ds-data-types",
            "error",
            f"`data_types.param_dtype` {_fmt(dt['param_dtype'])} conflicts with the "
            "precision mode "
            f"({'fp16 enabled' if fp16 else 'bf16 enabled' if bf16 else 'neither fp16 nor bf16 enabled: fp32'}); "
            "deepspeed.initialize raises AssertionError; enable the matching fp16/bf16 block or remove param_dtype",
            "data_types.param_dtype",
            doc.node("data_types.param_dtype"),
            model,
        )
    grad = _DTYPE.get(raw_grad) if isinstance(raw_grad, str) else None
    if grad is not None and grad != model and stage == 0:
        certain = isinstance(data.get("optimizer"), dict) or ctx.runtime in ("accelerate", "transformers")
        ctx.add(
            "ds-data-types",
            "error" if certain else "warning",
            f"`data_types.grad_accum_dtype` {_fmt(dt['grad_accum_dtype'])} differs from the model dtype {model} "
            "without ZeRO "
            "(stage 0): deepspeed.initialize raises NotImplementedError (unsupported mix of model_dtype and "
            "grad_accum_dtype) "
            + ("" if certain else "when an optimizer is passed to it ")
            + "; use a ZeRO stage or make them equal",
            "data_types.grad_accum_dtype",
            doc.node("data_types.grad_accum_dtype"),
            model,
        )


# blocks whose params DeepSpeed reads by popping "enabled" (deepspeed/runtime/config.py get_amp_params,
# get_pld_params; data_pipeline/config.py get_curriculum_params_legacy): without it, KeyError
_POPS_ENABLED = ("amp", "progressive_layer_drop", "curriculum_learning")


def _popped_enabled(ctx: _Ctx, data: dict[str, Any]) -> None:
    for name in _POPS_ENABLED:
        block = data.get(name)
        removed = _REMOVED_TOP[name][0]
        if not isinstance(block, dict) or "enabled" in block or ctx.active(None, removed) is False:
            continue  # from its removal on, ds-removed says DeepSpeed rejects the block
        ctx.add(
            "ds-type",
            "error",
            f"`{name}` has no `enabled`: DeepSpeed before {removed} pops it from the block and "
            'raises KeyError; write `"enabled": false`'
            + (f" (and {removed} removed the block)" if ctx.version is None else ""),
            name,
            ctx.doc.key(name),
            "enabled",
        )


# the spellings of ZeRO-3's 16-bit gathering on save (deepspeed/runtime/zero/config.py: the field
# gather_16bit_weights_on_model_save, its alias and the deprecated fp16 name); default false
_GATHER_16BIT = (
    "stage3_gather_16bit_weights_on_model_save",
    "gather_16bit_weights_on_model_save",
    "stage3_gather_fp16_weights_on_model_save",
)
# what saving the model does without it, per runtime (transformers Trainer.save_model, accelerate
# Accelerator.get_state_dict, DeepSpeedEngine.save_16bit_model)
_NO_16BIT_SAVE = {
    "transformers": "Trainer.save_model() writes no model weights "
    '(it logs "stage3_gather_16bit_weights_on_model_save=false. '
    'Saving the full checkpoint instead, use zero_to_fp32.py to recover weights" and saves a DeepSpeed checkpoint)',
    "accelerate": "accelerator.get_state_dict() and save_model() raise ValueError "
    '("Cannot get 16bit model weights because '
    '`stage3_gather_16bit_weights_on_model_save` in DeepSpeed config is False"); only save_state() writes '
    "the sharded DeepSpeed checkpoint, to convert with zero_to_fp32.py",
    "deepspeed": 'engine.save_16bit_model() saves nothing ("Did not save the model ... because '
    'stage3_gather_16bit_weights_on_model_save is False"); only save_checkpoint() writes the sharded '
    "checkpoint, to convert with zero_to_fp32.py",
}


def _zero3_save(ctx: _Ctx, z: dict[str, Any], stage: int | None) -> None:
    """ZeRO-3 shards the weights; without 16-bit gathering, saving the model writes no consolidated
    weights. A warning: training runs, the weights can be recovered from the checkpoint."""
    if stage != 3:
        return
    given = [(name, z[name]) for name in _GATHER_16BIT if name in z]
    if any(lax_bool(v) is True for _, v in given):
        return
    dotted = f"zero_optimization.{given[0][0]}" if given else "zero_optimization.stage"
    auto = any(v == "auto" for _, v in given)
    if auto:
        how = (
            'is "auto", which DeepSpeed drops (default false)'
            if ctx.runtime == "deepspeed"
            else 'is "auto", which accelerate fills from its zero3_save_16bit_model (false unless set)'
        )
    else:
        how = "is false" if given else "is not set (default false)"
    ctx.add(
        "ds-zero3-save",
        "warning",
        f"ZeRO stage 3 with `stage3_gather_16bit_weights_on_model_save` {how}: "
        f"{_NO_16BIT_SAVE[ctx.runtime]}; set `zero_optimization.stage3_gather_16bit_weights_on_model_save: true`",
        dotted,
        ctx.doc.node(dotted),
        "true" if given else "stage3_gather_16bit_weights_on_model_save",
    )


def _expert_parallel(ctx: _Ctx, data: dict[str, Any]) -> None:
    """``parse_autoep_config`` (deepspeed/module_inject/auto_ep_config.py) runs in DeepSpeedConfig,
    AutoEP enabled or not: a ``load_balance_coeff`` other than null raises ValueError."""
    ep = data.get("expert_parallel")
    if (
        not isinstance(ep, dict)
        or ep.get("load_balance_coeff") is None
        or ctx.active(releases.DEEPSPEED_SINCE["ds-autoep-config"], None) is False
    ):
        return
    ctx.add(
        "ds-expert-parallel",
        "error",
        f"`expert_parallel.load_balance_coeff` {_fmt(ep['load_balance_coeff'])}: DeepSpeed "
        "does not support auxiliary-loss-free load balancing and raises ValueError when it reads the config "
        "(even with AutoEP disabled); set it to null or remove it",
        "expert_parallel.load_balance_coeff",
        ctx.doc.node("expert_parallel.load_balance_coeff"),
        "null",
    )


def _zero_untested(ctx: _Ctx, data: dict[str, Any], t: str, candidates: list[str]) -> None:
    """``_do_optimizer_sanity_check``: with ZeRO (stage >= 1) an optimizer outside ZERO_SUPPORTED_OPTIMIZERS
    needs ``zero_allow_untested_optimizer`` (accelerate and the HF Trainer set it themselves)."""
    stage = _stage(data)
    if ctx.runtime != "deepspeed" or not stage or not candidates or t.lower() == "muon":
        return
    if lax_bool(data.get("zero_allow_untested_optimizer")) or any(c in _ZERO_SUPPORTED for c in candidates):
        return
    ctx.add(
        "ds-optimizer",
        "error",
        f"optimizer `{t}` ({candidates[0].rsplit('.', 1)[-1]}) is not one ZeRO supports: "
        "deepspeed.initialize raises AssertionError unless `zero_allow_untested_optimizer` is true",
        "optimizer.type",
        ctx.doc.node("optimizer.type"),
        "zero_allow_untested_optimizer",
    )


def _optimizer_classes(t: str, params: dict[str, Any], data: dict[str, Any]) -> tuple[list[str], set[str], set[str]]:
    """The classes ``_configure_basic_optimizer`` may instantiate for ``optimizer.type`` (more than one
    when the config leaves it open), the params it pops before the call and the keyword arguments it
    passes itself (deepspeed/runtime/engine.py, ``get_optimizer_configuration``)."""
    low = t.lower()
    zero = data.get("zero_optimization")
    off = zero.get("offload_optimizer") if isinstance(zero, dict) else None
    device = off.get("device") if isinstance(off, dict) else "none"
    # zero_use_cpu_optimizer(): offload_optimizer.device is cpu or nvme; "auto" is filled later
    cpu_options = [True, False] if device == "auto" else [isinstance(device, str) and device.lower() in ("cpu", "nvme")]
    zenflow = isinstance(zero, dict) and isinstance(zero.get("zenflow"), dict)
    if low in ("adam", "adamw"):
        popped = {"adam_w_mode", "torch_adam", "fp32_optimizer_states"}
        if lax_bool(params.get("torch_adam")):
            w = low == "adamw" or params.get("adam_w_mode", True) is not False
            return [f"torch.optim.{'AdamW' if w else 'Adam'}"], popped | {"foreach"}, {"foreach"}
        out: list[str] = []
        injected: set[str] = set()
        for cpu in cpu_options:
            if cpu:
                out.append("deepspeed.ops.adam.ZenFlowCPUAdam" if zenflow else "deepspeed.ops.adam.DeepSpeedCPUAdam")
                injected |= {"adamw_mode", "fp32_optimizer_states"} | ({"overlap_step"} if zenflow else set())
            else:
                out.append("deepspeed.ops.adam.FusedAdam")
                injected |= {"adam_w_mode"}
        return out, popped, injected
    by_device = {
        "adagrad": ("deepspeed.ops.adagrad.DeepSpeedCPUAdagrad", "torch.optim.Adagrad"),
        "lion": ("deepspeed.ops.lion.DeepSpeedCPULion", "deepspeed.ops.lion.FusedLion"),
        "lamb": ("deepspeed.ops.lamb.FusedLamb", "deepspeed.ops.lamb.FusedLamb"),
    }
    if low in by_device:
        return sorted({by_device[low][0 if cpu else 1] for cpu in cpu_options}), set(), set()
    if low in _OPTIMIZERS:
        return [], set(), set()  # mup's MuAdam/MuAdamW/MuSGD, Muon's param groups: not checked
    return [f"torch.optim.{t}"], set(), set()


def _kwargs(
    ctx: _Ctx, block: str, t: str, candidates: list[str], params: dict[str, Any], popped: set[str], injected: set[str]
) -> None:
    """``params`` passed as keyword arguments to one of ``candidates``: an unknown, a doubled or a
    missing required argument raises TypeError in deepspeed.initialize."""
    data = signatures.load()["classes"]
    specs = [data[c] for c in candidates if c in data]
    if not specs or len(specs) != len(candidates) or any(s["var_kwargs"] for s in specs):
        return
    short = " or ".join(c.rsplit(".", 1)[-1] for c in candidates)
    for name in params:
        if name == "max_grad_norm" and block == "optimizer":
            continue  # its own finding: DeepSpeed raises ValueError before the call
        dotted = f"{block}.params.{name}"
        if name in injected and name not in popped:
            ctx.add(
                "ds-optimizer",
                "error",
                f"`{dotted}`: DeepSpeed passes `{name}` to {short} itself; giving it too "
                "raises TypeError (got multiple values) at deepspeed.initialize",
                dotted,
                ctx.doc.key(dotted),
            )
        elif name not in popped and all(name not in s["params"] for s in specs):
            known = sorted({p for s in specs for p in s["params"]} - injected | popped)
            close = suggest.ranked(name, known, 2)
            ctx.add(
                "ds-optimizer",
                "error",
                f"`{dotted}`: {short} ({block} `{t}`) takes no parameter `{name}`; DeepSpeed "
                f"passes params as keyword arguments, so deepspeed.initialize raises TypeError"
                + (
                    f"; did you mean {' or '.join(f'`{c}`' for c in close)}?"
                    if close
                    else f"; it takes {', '.join(known)}"
                    if known
                    else ""
                ),
                dotted,
                ctx.doc.key(dotted),
                close[0] if close else None,
            )
    missing = sorted({r for s in specs for r in s["required"]} - set(params))
    if missing and all(set(s["required"]) - set(params) for s in specs):
        ctx.add(
            "ds-optimizer",
            "error",
            f"{block} `{t}` needs " + ", ".join(f"`{m}`" for m in missing) + f" in `{block}.params`: "
            f"{short} has no default for it, so deepspeed.initialize raises TypeError",
            f"{block}.params",
            ctx.doc.key(f"{block}.params"),
        )


_BATCH_KEYS = ("train_batch_size", "train_micro_batch_size_per_gpu", "gradient_accumulation_steps")


def _batch(ctx: _Ctx, data: dict[str, Any], world_size: int | None) -> None:
    doc = ctx.doc
    raw = {n: data.get(n) for n in _BATCH_KEYS}
    autotuning = isinstance(data.get("autotuning"), dict) and data["autotuning"].get("enabled") is True
    read = _batch_values(raw)
    if read is None:
        return
    vals, auto = read
    tbs, mbs, gas = (
        vals["train_batch_size"],
        vals["train_micro_batch_size_per_gpu"],
        vals["gradient_accumulation_steps"],
    )
    if raw["train_batch_size"] is None and raw["train_micro_batch_size_per_gpu"] is None and not autotuning:
        ctx.add(
            "ds-batch",
            "error",
            "neither `train_batch_size` nor `train_micro_batch_size_per_gpu` is set; DeepSpeed "
            'raises "Either train_batch_size or train_micro_batch_size_per_gpu needs to be provided"',
            "",
            doc.root,
            "train_micro_batch_size_per_gpu",
        )
        return
    if tbs is None:
        return
    node = doc.node("train_batch_size")
    sp = data.get("sequence_parallel_size", 1)
    if world_size is not None and sp != 1:
        # DeepSpeed divides the world size by the sequence-parallel degree (a float division)
        if _int_or_none(sp) is None or sp <= 0 or mbs is None or gas is None:
            return
        if tbs * sp != mbs * gas * world_size:
            ctx.add(
                "ds-batch",
                "error",
                f"train_batch_size {tbs} != train_micro_batch_size_per_gpu {mbs} x gradient_accumulation_steps "
                f"{gas} x data-parallel size {world_size}/{sp} (world size / sequence_parallel_size)",
                "train_batch_size",
                node,
            )
    elif world_size is not None:
        if world_size > 0:
            _batch_for_world_size(ctx, vals, auto, world_size, node)
    else:
        _batch_without_world_size(ctx, vals, node)


def _batch_values(raw: dict[str, Any]) -> tuple[dict[str, int | None], set[str]] | None:
    """The positive batch numbers (None where unset or "auto") and the "auto" keys; None when one has
    a type or range problem (reported by the value checks)."""
    vals: dict[str, int | None] = {}
    auto = set()
    for n in _BATCH_KEYS:
        v = raw[n]
        if v == "auto":
            auto.add(n)
            vals[n] = None
        else:
            iv = _int_or_none(v)
            vals[n] = iv if iv is not None and iv > 0 else None
            if v is not None and iv is None:
                return None  # a type problem, already reported
            if iv is not None and iv <= 0:
                return None  # a range problem, already reported
    return vals, auto


def _batch_for_world_size(
    ctx: _Ctx, vals: dict[str, int | None], auto: set[str], world_size: int, node: Node | None
) -> None:
    """train_batch_size = micro x accumulation x world size, or what DeepSpeed derives of a missing one."""
    tbs, mbs, gas = (vals[n] for n in _BATCH_KEYS)
    assert tbs is not None
    if mbs is not None and gas is not None:
        if tbs != mbs * gas * world_size:
            ctx.add(
                "ds-batch",
                "error",
                f"train_batch_size {tbs} != train_micro_batch_size_per_gpu {mbs} x "
                f"gradient_accumulation_steps {gas} x world size {world_size} ({mbs * gas * world_size})",
                "train_batch_size",
                node,
                str(mbs * gas * world_size),
            )
        return
    known = [x for x in (mbs, gas) if x is not None]
    missing = [
        n for n, x in (("train_micro_batch_size_per_gpu", mbs), ("gradient_accumulation_steps", gas)) if x is None
    ]
    product = world_size
    for x in known:
        product *= x
    if tbs % product:
        what = " x ".join(
            [f"{n} {vals[n]}" for n in _BATCH_KEYS[1:] if vals[n] is not None] + [f"world size {world_size}"]
        )
        filled = [n for n in missing if n in auto]
        derived = [n for n in missing if n not in auto]
        how = (
            ("; DeepSpeed derives " + " and ".join(derived) + " by floor division and then fails the batch assertion")
            if derived
            else ""
        )
        ctx.add(
            "ds-batch",
            "error",
            f"train_batch_size {tbs} is not divisible by {what} ({product})"
            + how
            + ("; " + " and ".join(filled) + ' filled from "auto" cannot make it match' if filled else ""),
            "train_batch_size",
            node,
        )
        return
    if len(missing) == 2 and not auto and tbs // world_size < 1:
        return
    if (
        gas is not None
        and mbs is None
        and "train_micro_batch_size_per_gpu" not in auto
        and tbs // world_size // gas < 1
    ):
        ctx.add("ds-batch", "error", "the derived train_micro_batch_size_per_gpu is 0", "train_batch_size", node)


def _batch_without_world_size(ctx: _Ctx, vals: dict[str, int | None], node: Node | None) -> None:
    """No world size: the batch keys must at least divide."""
    tbs, mbs, gas = (vals[n] for n in _BATCH_KEYS)
    assert tbs is not None
    known = [x for x in (mbs, gas) if x is not None]
    product = 1
    for x in known:
        product *= x
    if known and tbs % product:
        what = " x ".join(f"{n} {vals[n]}" for n in _BATCH_KEYS[1:] if vals[n] is not None)
        ctx.add(
            "ds-batch",
            "error",
            f"train_batch_size {tbs} is not a multiple of {what} ({product}), "
            "so no world size satisfies train_batch_size = micro x accumulation x world size",
            "train_batch_size",
            node,
        )
