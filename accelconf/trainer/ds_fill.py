"""The DeepSpeed config a ``Trainer`` runs with: each ``"auto"`` filled as transformers and accelerate
fill it, and the values that contradict the arguments.

Three stages, each in the code that runs it:

* ``TrainingArguments`` construction: ``HfTrainerDeepSpeedConfig.trainer_config_process`` fills batch
  sizes, accumulation, clipping, optimizer and warm-up lr from the arguments and *records* every
  non-"auto" value that differs (Python ``!=``: ``"8"`` is not ``8``); then accelerate's
  ``DeepSpeedPlugin.__post_init__`` adds ``gradient_accumulation_steps: 1`` when absent, refuses a
  config without ``zero_optimization`` and fills the autos left from ``ACCELERATE_*`` variables;
* Trainer init (``Accelerator``): ``DeepSpeedPlugin.set_mixed_precision`` fills ``fp16``/``bf16``
  and refuses a precision the JSON contradicts;
* ``train()`` (``deepspeed_init``): ``trainer_config_finalize`` fills the model-size keys and the
  scheduler steps, and raises with every mismatch recorded so far.

Facts from transformers 5.24.0 ``integrations/deepspeed.py`` and accelerate 1.15.0
``utils/dataclasses.py``/``utils/deepspeed.py``; ``tests/oracle/test_trainer_runs_oracle.py`` compares with them.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping
from typing import Any

from accelconf.records import Record
from accelconf.trainer import releases
from accelconf.trainer.argvalues import ArgValues
from accelconf.trainer.fsdp_plugin import Provenance, TrainerRaises, env_var

MODEL_LATER = "filled from the model at train()"
STEPS_LATER = "filled at train() from the number of training steps"
MODEL_KEYS = (
    "zero_optimization.reduce_bucket_size",
    "zero_optimization.stage3_prefetch_bucket_size",
    "zero_optimization.stage3_param_persistence_threshold",
)


class Mismatch(Record):
    """A DeepSpeed value that differs from the arguments' (``trainer_config_finalize`` raises with it in
    train()). ``hf_key``: transformers' own name (per_device_train_batch_size, adam_beta1+adam_beta2,
    ...); ``fields``: the argument fields behind it; ``recorded``: the stage that records it."""

    _fields = ("ds_key", "ds_value", "hf_key", "hf_value", "fields", "recorded")

    def __init__(
        self, ds_key: str, ds_value: Any, hf_key: str, hf_value: Any, fields: tuple[str, ...], recorded: str
    ) -> None:
        self.ds_key, self.ds_value, self.hf_key, self.hf_value = ds_key, ds_value, hf_key, hf_value
        self.fields, self.recorded = fields, recorded


class Filled(Record):
    _fields = ("config", "provenance", "mismatches")

    def __init__(
        self,
        config: dict[str, Any],
        provenance: dict[str, Provenance] | None = None,
        mismatches: list[Mismatch] | None = None,
    ) -> None:
        self.config = config
        # dotted DeepSpeed key -> where its value came from
        self.provenance: dict[str, Provenance] = {} if provenance is None else provenance
        self.mismatches: list[Mismatch] = [] if mismatches is None else mismatches


def _node(config: dict[str, Any], key: str) -> tuple[dict[str, Any] | None, str]:
    """``HfDeepSpeedConfig.find_config_node``: the dict holding the last part of a dotted key, or None."""
    *parents, last = key.split(".")
    cur: Any = config
    for p in parents:
        cur = cur.get(p) if isinstance(cur, dict) else None
        if cur is None:
            return None, last
    return (cur if isinstance(cur, dict) else None), last


class _Filler:
    def __init__(self, config: dict[str, Any], args: ArgValues) -> None:
        self.out = Filled(config)
        self.args = args

    def match(
        self,
        key: str,
        hf_val: Any,
        hf_key: str,
        fields: tuple[str, ...],
        must_match: bool = True,
        stage: str = "construction",
    ) -> None:
        """``HfTrainerDeepSpeedConfig.fill_match``."""
        node, last = _node(self.out.config, key)
        if node is None:
            return
        if node.get(last) == "auto":
            node[last] = hf_val
            given = [f for f in fields if self.args.given(f)] or list(fields)
            src = (
                [self.args.origin(f) for f in given] if given else [("transformers default", "trainer_config_process")]
            )
            source = "argument" if any(s == "argument" for s, _ in src) else src[0][0]
            self.out.provenance[key] = Provenance(key, hf_val, source, ", ".join(w for _, w in src), overrode='"auto"')
            return
        ds_val = node.get(last)
        if must_match and ds_val is not None and ds_val != hf_val:
            self.out.mismatches.append(Mismatch(key, ds_val, hf_key, hf_val, fields, stage))

    def only(self, key: str, value: Any, source: str, where: str) -> None:
        """A fill without comparison (``fill_only`` and accelerate's ``fill_match(must_match=False)``)."""
        node, last = _node(self.out.config, key)
        if node is not None and node.get(last) == "auto":
            node[last] = value
            self.out.provenance[key] = Provenance(key, value, source, where, overrode='"auto"')


def process(config: Mapping[str, Any], args: ArgValues, world_size: int = 1) -> _Filler:
    """``trainer_config_process`` (at ``TrainingArguments`` construction)."""
    f = _Filler(copy.deepcopy(dict(config)), args)
    a = args.get
    # TrainingArguments calls it without auto_find_batch_size: the batch sizes are always compared
    f.match(
        "train_micro_batch_size_per_gpu",
        a("per_device_train_batch_size"),
        "per_device_train_batch_size",
        ("per_device_train_batch_size",),
    )
    f.match(
        "gradient_accumulation_steps",
        a("gradient_accumulation_steps"),
        "gradient_accumulation_steps",
        ("gradient_accumulation_steps",),
    )
    f.match(
        "train_batch_size",
        world_size * a("per_device_train_batch_size") * a("gradient_accumulation_steps"),
        "train_batch_size (calculated)",
        ("per_device_train_batch_size", "gradient_accumulation_steps"),
    )
    f.match("gradient_clipping", a("max_grad_norm"), "max_grad_norm", ("max_grad_norm",))
    f.match("optimizer.params.lr", a("learning_rate"), "learning_rate", ("learning_rate",))
    f.match(
        "optimizer.params.betas",
        [a("adam_beta1"), a("adam_beta2")],
        "adam_beta1+adam_beta2",
        ("adam_beta1", "adam_beta2"),
    )
    f.match("optimizer.params.eps", a("adam_epsilon"), "adam_epsilon", ("adam_epsilon",))
    f.match("optimizer.params.weight_decay", a("weight_decay"), "weight_decay", ("weight_decay",))
    f.only("scheduler.params.warmup_min_lr", 0, "transformers default", "trainer_config_process")
    f.match("scheduler.params.warmup_max_lr", a("learning_rate"), "learning_rate", ("learning_rate",))
    if a("save_on_each_node"):
        f.out.config.setdefault("checkpoint", {})
        f.out.config["checkpoint"]["use_node_local_storage"] = a("save_on_each_node")
    half = bool(a("fp16") or a("fp16_full_eval"))
    if releases.runs_fact("deepspeed_fp16_backend", args.version):
        # transformers 4: fp16 through amp unless fp16_backend is apex, which has its own section
        apex = half and a("fp16_backend") == "apex"
        fields = ("fp16", "fp16_full_eval", "fp16_backend")
        f.match("fp16.enabled", half and not apex, "fp16|fp16_full_eval+fp16_backend(amp)", fields)
        f.match("amp.enabled", apex, "fp16+fp16_backend(apex)", ("fp16", "fp16_backend"))
        f.match("amp.opt_level", a("fp16_opt_level"), "fp16_opt_level", ("fp16_opt_level",))
    else:
        f.match("fp16.enabled", half, "fp16|fp16_full_eval", ("fp16", "fp16_full_eval"))
    f.match("bf16.enabled", bool(a("bf16") or a("bf16_full_eval")), "bf16|bf16_full_eval", ("bf16", "bf16_full_eval"))
    return f


def _env_value(env: Mapping[str, tuple[str, str, str]], var: str, default: Any) -> tuple[Any, str, str]:
    if var in env:
        value, how, where = env[var]
        return value, "accelerate config" if how == "launch" else "env", where or var
    return default, "plugin default", "DeepSpeedPlugin"


def plugin_post_init(f: _Filler, env: Mapping[str, tuple[str, str, str]]) -> None:
    """``DeepSpeedPlugin(hf_ds_config=...).__post_init__`` (still at ``TrainingArguments`` construction)."""
    cfg = f.out.config
    if "gradient_accumulation_steps" not in cfg:
        cfg["gradient_accumulation_steps"] = 1
        f.out.provenance["gradient_accumulation_steps"] = Provenance(
            "gradient_accumulation_steps", 1, "plugin default", "DeepSpeedPlugin", note="absent from the JSON"
        )
    if "zero_optimization" not in cfg:
        raise TrainerRaises(
            "Please specify the ZeRO optimization config in the DeepSpeed config.", "construction", "zero_optimization"
        )
    gas, s1, w1 = _env_value(env, env_var("deepspeed_config", "gradient_accumulation_steps"), "auto")
    clip, s2, w2 = _env_value(env, "ACCELERATE_GRADIENT_CLIPPING", "auto")
    stage, s3, w3 = _env_value(env, "ACCELERATE_DEEPSPEED_ZERO_STAGE", "2")
    fills = [
        ("gradient_accumulation_steps", int(gas) if str(gas).isdigit() else gas, s1, w1),
        ("gradient_clipping", clip if clip == "auto" else float(clip), s2, w2),
        ("zero_optimization.stage", int(stage), s3, w3),
    ]
    for dev in ("offload_optimizer", "offload_param"):
        var = f"ACCELERATE_DEEPSPEED_{dev.upper()}_DEVICE"
        fills.append((f"zero_optimization.{dev}.device", *_env_value(env, var, "none")))
        var = f"ACCELERATE_DEEPSPEED_{dev.upper()}_NVME_PATH"
        fills.append((f"zero_optimization.{dev}.nvme_path", *_env_value(env, var, "none")))
    save16, s4, w4 = _env_value(env, "ACCELERATE_DEEPSPEED_ZERO3_SAVE_16BIT_MODEL", "false")
    fills.append(("zero_optimization.stage3_gather_16bit_weights_on_model_save", str(save16).lower() == "true", s4, w4))
    for key, value, source, where in fills:
        f.only(key, value, source, where)
    cfg["steps_per_print"] = float("inf")


def set_mixed_precision(f: _Filler, mixed_precision: str) -> None:
    """``DeepSpeedPlugin.set_mixed_precision`` (at Trainer init, when the ``Accelerator`` is built)."""
    cfg = f.out.config
    where = "Accelerator(mixed_precision=...)"
    if mixed_precision == "fp16" and "fp16" not in cfg:
        cfg["fp16"] = {"enabled": True, "auto_cast": True}
        f.out.provenance["fp16.enabled"] = Provenance("fp16.enabled", True, "argument", where, note="section added")
    elif mixed_precision in ("bf16", "fp8") and "bf16" not in cfg:
        cfg["bf16"] = {"enabled": True}
        f.out.provenance["bf16.enabled"] = Provenance("bf16.enabled", True, "argument", where, note="section added")
    if mixed_precision != "no":
        other = "bf16" if mixed_precision == "fp16" else "fp16"
        node = cfg.get(other, {})
        if isinstance(node, dict) and str(node.get("enabled", "False")).lower() == "true":
            raise TrainerRaises(
                f"`--mixed_precision` arg cannot be set to `{mixed_precision}` when `{other}` is set in the "
                "DeepSpeed config file.",
                "Trainer init",
                f"{other}.enabled",
            )
    for dtype in ("fp16", "bf16"):
        cfg.setdefault(dtype, {"enabled": False})
    f.only("fp16.enabled", mixed_precision == "fp16", "argument", where)
    f.only("bf16.enabled", mixed_precision in ("bf16", "fp8"), "argument", where)


def training_steps(args: ArgValues) -> int | None:
    """The number of training steps when the arguments alone tell it (``max_steps > 0``)."""
    steps = args.get("max_steps")
    return int(steps) if isinstance(steps, (int, float)) and not isinstance(steps, bool) and steps > 0 else None


def _number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def warmup_steps(args: ArgValues, n: int | None) -> Any:
    """``args.get_warmup_steps(num_training_steps)`` as that release's ``trainer_config_finalize``
    uses it (``runs_fact("warmup_steps")``); :data:`STEPS_LATER` when it needs the number of steps
    and the arguments do not give it."""
    form = releases.runs_fact("warmup_steps", args.version)
    warm, ratio = args.get("warmup_steps"), args.get("warmup_ratio")
    if form == "int":  # 4.x: warmup_steps when above 0, else a ratio of the steps
        if _number(warm) and warm > 0:
            return warm
        if _number(ratio) and ratio == 0:
            return 0
        return math.ceil(n * ratio) if n is not None and _number(ratio) else STEPS_LATER
    if ratio is not None:  # 5.0-5.14: a given warmup_ratio replaces warmup_steps in __post_init__
        warm = ratio
    least = 1 if form == "fraction_at_least_one" else 0
    if not _number(warm):
        return STEPS_LATER
    if warm >= 1:
        return max(least, int(warm))
    if warm == 0:
        return least  # ceil(n * 0) whatever n is
    return max(least, math.ceil(n * warm)) if n is not None else STEPS_LATER


def finalize(f: _Filler, hidden_size: int | None, num_training_steps: int | None, hidden_where: str = "") -> None:
    """``trainer_config_finalize`` (in ``train()``); unknown inputs leave the text saying when they are filled."""
    cfg = f.out.config
    autos = [k for k in MODEL_KEYS if _node(cfg, k)[0] is not None and _node(cfg, k)[0].get(_node(cfg, k)[1]) == "auto"]  # type: ignore[union-attr]
    zero3 = (cfg.get("zero_optimization") or {}).get("stage") == 3
    if autos:
        src, where = ("model", hidden_where) if hidden_size is not None else ("model", "")
        h = hidden_size
        f.only(MODEL_KEYS[0], h * h if h is not None else MODEL_LATER, src, where)
        if zero3:
            f.only(MODEL_KEYS[1], int(0.9 * h * h) if h is not None else MODEL_LATER, src, where)
            f.only(MODEL_KEYS[2], 10 * h if h is not None else MODEL_LATER, src, where)
    n = num_training_steps
    f.match(
        "scheduler.params.total_num_steps",
        n if n is not None else STEPS_LATER,
        "num_training_steps (calculated)",
        ("max_steps",),
        must_match=n is not None,
        stage="train()",
    )
    steps = warmup_steps(f.args, n)
    f.match(
        "scheduler.params.warmup_num_steps",
        steps,
        "warmup_steps",
        ("warmup_steps",),
        must_match=steps != STEPS_LATER,
        stage="train()",
    )


def fill(
    config: Mapping[str, Any],
    args: ArgValues,
    *,
    env: Mapping[str, tuple[str, str, str]] | None = None,
    mixed_precision: str = "no",
    world_size: int = 1,
    hidden_size: int | None = None,
    hidden_where: str = "",
    num_training_steps: int | None = None,
    through: str = "train()",
) -> Filled:
    """The DeepSpeed config after each stage up to ``through`` ("construction", "Trainer init" or "train()")."""
    f = process(config, args, world_size)
    plugin_post_init(f, env or {})
    if through == "construction":
        return f.out
    set_mixed_precision(f, mixed_precision)
    if through == "Trainer init":
        return f.out
    finalize(
        f, hidden_size, num_training_steps if num_training_steps is not None else training_steps(args), hidden_where
    )
    return f.out
