"""What runs when ``TrainingArguments`` meet an accelerate config, env and launch flags: the
``Accelerator`` a ``Trainer`` builds (``Trainer.create_accelerator_and_postprocess``), its FSDP plugin
fields, its filled DeepSpeed config, mixed precision and gradient accumulation, each with where it
came from and what it overrode.

The environment is the training process's: variable -> (value, "launch" | "shell", where), as
``accelconf explain`` computes it from the accelerate config and the launch (``launch`` marks a
variable ``accelerate launch`` writes from the config or its flags).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

from accelconf.findings import Finding
from accelconf.records import Record
from accelconf.trainer import ds_fill, fsdp_plugin, fsdp_releases, releases
from accelconf.trainer.args import TrainerArgs
from accelconf.trainer.argvalues import ArgValues, from_trainer_args
from accelconf.trainer.fsdp_plugin import Provenance, TrainerRaises, env_var

Env = Mapping[str, tuple[str, str, str]]


class Runs(Record):
    """What the ``Accelerator`` of a ``Trainer`` is built with. ``fsdp``: plugin field -> value
    (``None``: no FSDP)."""

    _fields = ("mixed_precision", "gradient_accumulation", "fsdp", "deepspeed", "raises", "notes")

    def __init__(
        self,
        mixed_precision: Provenance,
        gradient_accumulation: list[Provenance],
        fsdp: dict[str, Provenance] | None = None,
        deepspeed: ds_fill.Filled | None = None,
        raises: list[TrainerRaises] | None = None,
        notes: list[str] | None = None,
    ) -> None:
        self.mixed_precision, self.gradient_accumulation, self.fsdp = mixed_precision, gradient_accumulation, fsdp
        self.deepspeed = deepspeed
        self.raises: list[TrainerRaises] = [] if raises is None else raises
        self.notes: list[str] = [] if notes is None else notes

    def to_json(self) -> dict[str, Any]:
        return {
            "mixed_precision": self.mixed_precision.as_dict(),
            "gradient_accumulation": [p.as_dict() for p in self.gradient_accumulation],
            "fsdp_plugin": None if self.fsdp is None else {k: v.as_dict() for k, v in self.fsdp.items()},
            "deepspeed_config": None if self.deepspeed is None else _jsonable(self.deepspeed.config),
            "deepspeed_filled": None
            if self.deepspeed is None
            else {k: v.as_dict() for k, v in self.deepspeed.provenance.items()},
            "raises": [{"stage": r.stage, "key": r.key, "message": r.message} for r in self.raises],
            "notes": self.notes,
        }


def _jsonable(data: Any) -> Any:
    return json.loads(json.dumps(data, default=str).replace("Infinity", '"Infinity"'))


def mixed_precision(args: ArgValues, env: Env) -> Provenance:
    """``TrainingArguments.mixed_precision``: ``ACCELERATE_MIXED_PRECISION`` (else "no"),
    replaced by fp16, then bf16."""
    var = env_var("", "mixed_precision")  # ACCELERATE_MIXED_PRECISION
    from_env = env.get(var)
    base = Provenance(
        "mixed_precision",
        from_env[0] if from_env else "no",
        ("accelerate config" if from_env[1] == "launch" else "env") if from_env else "argument default",
        (from_env[2] or var) if from_env else "TrainingArguments.mixed_precision",
    )
    for name in ("fp16", "bf16"):
        if args.get(name):
            source, where = args.origin(name)
            overrode = (
                f"{var}={from_env[0]}" + (f" ({from_env[2]})" if from_env[2] else "")
                if from_env and from_env[0] != name
                else ""
            )
            return Provenance("mixed_precision", name, source, where, overrode=overrode)
    return base


def gradient_accumulation(args: ArgValues, env: Env, ds: ds_fill.Filled | None) -> list[Provenance]:
    """The Trainer accumulates itself; its Accelerator gets ``GradientAccumulationPlugin(num_steps=1)``."""
    steps, (source, where) = args.get("gradient_accumulation_steps"), args.origin("gradient_accumulation_steps")
    kwargs = (args.get("accelerator_config") or {}) if isinstance(args.get("accelerator_config"), dict) else {}
    gak = kwargs.get("gradient_accumulation_kwargs") or {}
    rows = []
    if "num_steps" in gak and steps == 1:
        rows.append(
            Provenance(
                "Trainer.gradient_accumulation_steps",
                gak["num_steps"],
                "argument",
                "accelerator_config.gradient_accumulation_kwargs.num_steps",
            )
        )
    else:
        rows.append(Provenance("Trainer.gradient_accumulation_steps", steps, source, where))
    rows.append(_accelerator_accumulation(args, env, rows[0]))
    if ds is not None:
        p = ds.provenance.get("gradient_accumulation_steps")
        value = ds.config.get("gradient_accumulation_steps")
        rows.append(
            p
            if p is not None
            else Provenance("gradient_accumulation_steps", value, "deepspeed json", "gradient_accumulation_steps")
        )
        rows[-1] = Provenance(
            "deepspeed.gradient_accumulation_steps",
            value,
            rows[-1].source,
            rows[-1].where,
            rows[-1].overrode,
            rows[-1].note,
        )
    return rows


def _accelerator_accumulation(args: ArgValues, env: Env, trainer: Provenance) -> Provenance:
    """The Accelerator's own accumulation steps, as that transformers release builds its plugin."""
    name = env_var("deepspeed_config", "gradient_accumulation_steps")
    var = env.get(name)
    form = releases.runs_fact("accelerator_accumulation", args.version)
    if form == "env":
        if var is not None:
            source = "accelerate config" if var[1] == "launch" else "env"
            return Provenance("Accelerator.gradient_accumulation_steps", int(var[0]), source, var[2] or name)
        return Provenance(
            "Accelerator.gradient_accumulation_steps", 1, "plugin default", "Accelerator(gradient_accumulation_steps=1)"
        )
    overrode = f"{name}={var[0]}" + (f" ({var[2]})" if var[2] else "") if var else ""
    if form == "arguments":
        return Provenance(
            "Accelerator.gradient_accumulation_steps",
            trainer.value,
            trainer.source,
            f"Trainer: GradientAccumulationPlugin(num_steps={trainer.value})",
            overrode=overrode,
        )
    return Provenance(
        "Accelerator.gradient_accumulation_steps",
        1,
        "transformers default",
        "Trainer: GradientAccumulationPlugin(num_steps=1)",
        overrode=overrode,
        note="the Trainer accumulates itself",
    )


def hidden_size_of(config: Mapping[str, Any]) -> int | None:
    """The model's hidden size as ``trainer_config_finalize`` reads it from ``model.config``."""
    aliases = {"n_embd": "hidden_size", "d_model": "hidden_size"}  # attribute_map of gpt2-like and t5-like configs
    if "hidden_size" in config:
        return int(config["hidden_size"])
    for alias in aliases:
        if alias in config:
            return int(config[alias])
    if config.get("hidden_sizes"):
        return int(max(config["hidden_sizes"]))
    text = config.get("text_config")
    return hidden_size_of(text) if isinstance(text, Mapping) else None


def model_hidden_size(model_dir: str) -> tuple[int | None, str]:
    """(hidden size, where) of a model folder's config.json (read as modelsize reads it)."""
    # the model-size reader (and its activation tables) loads only with --model DIR
    from accelconf.environment.modelsize import from_model_dir

    size = from_model_dir(model_dir)
    path = os.path.join(model_dir, "config.json")
    if os.path.isfile(path):
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
        if isinstance(data, dict) and hidden_size_of(data) is not None:
            return hidden_size_of(data), f"{path}: hidden_size"
    return (size.arch.hidden, f"{path}: hidden_size") if size.arch is not None else (None, "")


def _warmup_refused(args: ArgValues) -> TrainerRaises | None:
    """``TrainingArguments.__post_init__``'s check of ``warmup_steps``: an int of at least 0 in
    transformers 4 (``0.1`` raises), a number of at least 0 from 5.0."""
    warm = args.get("warmup_steps")
    if releases.runs_fact("warmup_steps", args.version) == "int":
        if not isinstance(warm, int) or warm < 0:
            return TrainerRaises(
                "warmup_steps must be of type int and must be 0 or a positive integer.", "construction", "warmup_steps"
            )
        return None
    if isinstance(warm, (int, float)) and warm < 0:
        return TrainerRaises("warmup_steps must be an integer or a float", "construction", "warmup_steps")
    return None


def what_runs(
    args: ArgValues,
    *,
    env: Env | None = None,
    fsdp_config: Mapping[str, Any] | None = None,
    ds_config: Mapping[str, Any] | None = None,
    world_size: int = 1,
    hidden_size: int | None = None,
    hidden_where: str = "",
    num_training_steps: int | None = None,
) -> Runs:
    """The Accelerator a Trainer builds from these arguments (``fsdp_config``/``ds_config``: the
    loaded files the arguments name, or the inline dicts)."""
    env = env or {}
    mp = mixed_precision(args, env)
    runs = Runs(mp, [])
    if args.get("fp16") and args.get("bf16"):
        runs.raises.append(
            TrainerRaises("At most one of fp16 and bf16 can be True, but not both", "construction", "bf16")
        )
        return runs
    refused = _warmup_refused(args)
    if refused is not None:
        runs.raises.append(refused)
        return runs
    fsdp_cfg = (
        fsdp_config
        if fsdp_config is not None
        else (args.get("fsdp_config") if isinstance(args.get("fsdp_config"), dict) else None)
    )
    try:
        made = _plugin(args, fsdp_cfg, env)
        if made is not None:
            runs.fsdp = made
        elif args.get("fsdp"):
            runs.notes.append(
                "fsdp_config turns on xla: torch_xla's FSDP wraps the model, accelerate builds no FSDP plugin"
            )
    except TrainerRaises as exc:
        runs.raises.append(exc)
    ds = (
        ds_config
        if ds_config is not None
        else (args.get("deepspeed") if isinstance(args.get("deepspeed"), dict) else None)
    )
    if ds is not None and args.get("deepspeed"):
        try:
            runs.deepspeed = ds_fill.fill(
                ds,
                args,
                env=env,
                mixed_precision=mp.value,
                world_size=world_size,
                hidden_size=hidden_size,
                hidden_where=hidden_where,
                num_training_steps=num_training_steps,
            )
        except TrainerRaises as exc:
            runs.raises.append(exc)
        if runs.deepspeed is not None:
            runs.mixed_precision = _ds_precision(runs.deepspeed.config, mp)
    elif args.get("deepspeed"):
        runs.notes.append("the DeepSpeed config was not read: the Trainer runs DeepSpeed, with what that file says")
    runs.gradient_accumulation = gradient_accumulation(args, env, runs.deepspeed)
    acc = args.get("accelerator_config")
    gak = (acc.get("gradient_accumulation_kwargs") or {}) if isinstance(acc, dict) else {}
    if (
        "num_steps" in gak
        and isinstance(args.get("gradient_accumulation_steps"), int)
        and args.get("gradient_accumulation_steps") > 1
    ):
        runs.raises.append(
            TrainerRaises(
                "The `AcceleratorConfig`'s `num_steps` is set but `gradient_accumulation_steps` is "
                "greater than 1 in the passed `TrainingArguments`",
                "Trainer init",
                "accelerator_config",
            )
        )
    return runs


def _plugin(args: ArgValues, fsdp_cfg: Mapping[str, Any] | None, env: Env) -> dict[str, Provenance] | None:
    """The FSDP plugin fields, in the form the arguments' transformers release builds them."""
    if releases.runs_fact("fsdp_plugin_from", args.version) == "fsdp_config":
        made = fsdp_plugin.plugin_args(args.get("fsdp"), fsdp_cfg)
        return None if made is None else fsdp_plugin.plugin_fields(made[0], made[1], env)
    inline = isinstance(args.get("fsdp_config"), dict)
    inp = fsdp_releases.plugin_inputs(args.get("fsdp"), fsdp_cfg, args.version, inline)
    if inp is None:
        return None
    fields = fsdp_plugin.plugin_fields(inp.kwargs, inp.src, {**env, **inp.env})
    for name, (value, where) in inp.after.items():
        fields[name] = Provenance(name, value, "argument", where, note="set by the Trainer after the plugin is built")
    return fields


def _ds_precision(config: Mapping[str, Any], given: Provenance) -> Provenance:
    """Under DeepSpeed ``AcceleratorState.mixed_precision`` is what the DeepSpeed config enables."""
    for name in ("fp16", "bf16"):
        node = config.get(name)
        if isinstance(node, dict) and node.get("enabled") is True:
            return Provenance(
                "mixed_precision",
                name,
                given.source if given.value == name else "deepspeed json",
                given.where if given.value == name else f"{name}.enabled",
                note="DeepSpeed applies it",
            )
    return Provenance(
        "mixed_precision", "no", given.source, given.where, note="DeepSpeed config enables neither fp16 nor bf16"
    )


def deepspeed_mismatches(
    args: Any, ds_doc: Any, world_size: int = 1, num_training_steps: int | None = None
) -> list[Finding]:
    """The DeepSpeed values transformers' ``trainer_config_process``/``trainer_config_finalize`` find
    different from the arguments, each at its key in the JSON (``ds_doc``: its Document); transformers
    raises with all of them in ``train()``, after the model has loaded. ``args``: an :class:`ArgValues`
    or a read :class:`~accelconf.trainer.args.TrainerArgs` (validate's rules have the latter)."""
    if isinstance(args, TrainerArgs):
        args = from_trainer_args(args)
    data = ds_doc.data if isinstance(ds_doc.data, dict) else {}
    f = ds_fill.process(data, args, world_size)
    ds_fill.finalize(f, None, num_training_steps if num_training_steps is not None else ds_fill.training_steps(args))
    out = []
    for m in f.out.mismatches:
        line, col, end_line, end_col = ds_doc.span(tuple(m.ds_key.split(".")), value=True)
        names = " and ".join(f"`{n}`" for n in m.fields) or f"`{m.hf_key}`"
        written = ", ".join(args.origin(n)[1] for n in m.fields if args.given(n))
        origin = f" ({written})" if written else " (the TrainingArguments default)"
        out.append(
            Finding(
                "trainer-deepspeed-mismatch",
                "error",
                f"DeepSpeed {m.ds_key}={json.dumps(m.ds_value)} but the arguments give "
                f"{m.hf_key}={json.dumps(m.hf_value, default=str)}"
                f" from {names}{origin}: transformers raises in train() (trainer_config_finalize), after the model "
                "has loaded",
                m.ds_key,
                line,
                col,
                suggestion=f'set "{m.ds_key.rsplit(".", 1)[-1]}": "auto" to take the arguments\' value',
                end_line=end_line,
                end_column=end_col,
                path=ds_doc.path,
            )
        )
    return out
