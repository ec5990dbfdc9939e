"""validate's rules for Trainer / TRL arguments, each saying when transformers raises (at
``TrainingArguments`` construction, at Trainer init, in ``train()``) or what silently wins.

Verified against transformers 5.x's own code: ``HfArgumentParser.parse_dict`` (a file's unknown key
is a ``ValueError``, a value is passed unconverted), ``TrainingArguments.__post_init__`` and
``_process_fsdp_args``, ``Trainer.create_accelerator_and_postprocess`` (FSDP activation
checkpointing, ``save_only_model``, ZeRO-3 with ``auto_find_batch_size``, the accumulation plugin
it builds with ``num_steps=1``). The tests compare each finding with the real classes.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from accelconf.findings import Finding
from accelconf.text.suggest import ranked
from accelconf.trainer import fields, fsdp, releases
from accelconf.trainer.args import Arg, TrainerArgs
from accelconf.trainer.fsdp_plugin import env_var

# Kinds whose every key HfArgumentParser receives (an unknown one is its error).
ARGS_FILE_KINDS = ("trainer-args",)
# How alike a key and a field must be for the key to be that field misspelt (difflib's ratio).
CLOSE = 0.85
_BOOL_WORDS = ("yes", "true", "t", "y", "1", "no", "false", "f", "n", "0")


def _f(rule: str, severity: str, message: str, a: Arg, value: bool = False, key: str | None = None) -> Finding:
    line, col = a.value_position if value else (a.line, a.column)
    return Finding(rule, severity, message, key or a.name, line, col, end_line=a.end_line, end_column=a.end_column)  # type: ignore[arg-type]


def check(group: TrainerArgs, version: str | None = None, context: dict[str, Any] | None = None) -> list[Finding]:
    """Every finding of one group of arguments. ``context`` carries what the group's referenced
    files say (``zero_stage``, ``accelerate_gas``: (value, path), ``accelerate_precision``)."""
    ctx = context or {}
    out: list[Finding] = []
    out += unknown_fields(group, version, ctx.get("trl_version"))
    out += wrong_types(group, version)
    out += fsdp_findings(group)
    out += combinations(group, ctx)
    return out


# -- unknown fields ----------------------------------------------------------------------------


def unknown_fields(group: TrainerArgs, version: str | None, trl_version: str | None = None) -> list[Finding]:
    own = fields.class_fields(group.cls, version, trl_version) if group.cls else None
    exact = own is not None  # a call of a class the data holds takes no other keyword
    known = frozenset(own) if own is not None else fields.names(version) | fields.trl_names(trl_version)
    strict = group.kind in ARGS_FILE_KINDS or exact
    out: list[Finding] = []
    other: list[Arg] = []
    for a in group.args:
        if a.name in known:
            continue
        gone = fields.removed(a.name, version)
        if gone:
            out.append(_removed_field(a, gone, known, group))
            continue

        # ranked at the misspelling cutoff: a candidate under it could not pass _close, and its quick
        # bounds skip most of the few hundred fields without scoring them
        near = ranked(a.name, known, 1, CLOSE, fold_case=True, abbreviations=True)
        guess = [g for g in near if _close(a.name, g)]
        if (guess and strict) or exact:
            # a call of transformers' own class takes no other keyword; a file's key only a misspelling is sure
            hint = f"; did you mean `{guess[0]}`?" if guess else ""
            cls = group.cls or "TrainingArguments"
            out.append(
                Finding(
                    "trainer-unknown-field",
                    "error",
                    f"`{a.name}` is not a {cls} field (transformers {fields.version(version)}): "
                    f"{_refusal(group)}{hint}",
                    a.name,
                    a.line,
                    a.column,
                    suggestion=guess[0] if guess else None,
                    end_line=a.end_line,
                    end_column=a.end_column,
                )
            )
        else:
            other.append(a)
    if other:
        shown = ", ".join(f"`{a.name}`" for a in other[:6]) + (f" and {len(other) - 6} more" if len(other) > 6 else "")
        who = {"llama-factory": "LLaMA-Factory's", "axolotl": "axolotl's"}.get(
            group.kind, "the script's own dataclasses' or TRL's"
        )
        out.append(
            Finding(
                "trainer-other-fields",
                "info",
                f"{shown}: not TrainingArguments fields; taken to be {who} (accelconf does not model them)",
                other[0].name,
                other[0].line,
                other[0].column,
            )
        )
    return out


def _removed_field(a: Arg, gone: str, known: frozenset[str], group: TrainerArgs) -> Finding:
    """A field the release no longer has; where transformers' deprecation message named the field
    to use instead (the releases data's renames) and this release has it, did you mean that one."""
    rename = releases.renamed(a.name)
    new = rename.new if rename is not None and rename.new in known else None
    hint = ""
    if rename is not None and new is not None:
        how = "" if rename.value_carries else f' (transformers {rename.last}: "{rename.message}")'
        hint = f"; did you mean `{new}`?{how}"
    message = f"`{a.name}` was removed in transformers {gone}: {_refusal(group)}{hint}"
    return Finding(
        "trainer-removed-field",
        "error",
        message,
        a.name,
        a.line,
        a.column,
        suggestion=new,
        end_line=a.end_line,
        end_column=a.end_column,
    )


def _close(name: str, guess: str) -> bool:
    """A misspelling, not another dataclass's field: nearly the same letters."""
    import difflib

    return difflib.SequenceMatcher(None, name.lower(), guess.lower()).ratio() >= CLOSE


def _refusal(group: TrainerArgs) -> str:
    if group.kind in ARGS_FILE_KINDS:
        return "HfArgumentParser refuses it (ValueError: Some keys are not used) before training starts"
    if group.cls:
        return f"{group.cls}(...) raises TypeError (unexpected keyword argument) at construction"
    return (
        "HfArgumentParser refuses it (ValueError: Some specified arguments are not used) unless the script declares it"
    )


# -- types ---------------------------------------------------------------------------------------


def wrong_types(group: TrainerArgs, version: str | None) -> list[Finding]:
    if group.kind == "axolotl":
        return []  # axolotl validates its YAML with its own pydantic models (coercing, with its own "auto")
    types = fields.types(version)
    out: list[Finding] = []
    for a in group.args:
        t = types.get(a.name)
        if t is None or a.value is None:
            continue
        base = t.removeprefix("optional-")
        if base == "dict" and isinstance(a.value, str) and a.value.startswith("{"):
            got = _json_string(a)
        elif base == "enum":
            got = _choice(a, fields.choices(a.name, version))
        else:
            got = _cli_type(a, base) if not a.typed else _file_type(a, base)
        if got:
            out.append(_f("trainer-wrong-type", got[0], got[1], a, value=True))
    return out


# The enum fields TrainingArguments.__post_init__ converts to their Enum (another value raises
# ValueError at construction); the others keep any string (the oracle test checks each enum field).
CONVERTED_ENUMS = frozenset(
    {"eval_strategy", "logging_strategy", "save_strategy", "hub_strategy", "lr_scheduler_type", "optim", "ddp_backend"}
)


def _json_string(a: Arg) -> tuple[str, str] | None:
    """A dict field given as a string starting with ``{``: ``__post_init__`` parses it with json.loads."""
    import json

    try:
        json.loads(a.value)
    except json.JSONDecodeError as exc:
        return "error", (
            f"`{a.name}` is a string starting with '{{' that is not JSON ({exc.msg}): TrainingArguments "
            "raises JSONDecodeError at construction"
        )
    return None


def _choice(a: Arg, choices: tuple[Any, ...] | None) -> tuple[str, str] | None:
    """An enum field: argparse refuses another word (exit 2); in a file, the dataclass's conversion raises."""
    if not choices or a.value in choices or str(a.value) in {str(c) for c in choices}:
        return None
    shown = ", ".join(str(c) for c in choices)
    if not a.typed:
        when = "HfArgumentParser's argparse refuses it (exit 2) before training starts"
    elif a.name in CONVERTED_ENUMS:
        when = "TrainingArguments raises ValueError at construction"
    else:
        when = "TrainingArguments keeps it unchecked and it fails (or is ignored) where it is used"
    return "error", f"`{a.name}: {a.value}` is not one of {shown}: {when}"


def _dotted(v: str) -> str:
    """``5e-5`` as YAML 1.1 reads a float: ``5.0e-5``."""
    mantissa, _, exp = v.lower().partition("e")
    return f"{mantissa}.0e{exp}" if "." not in mantissa else v


def _cli_type(a: Arg, t: str) -> tuple[str, str] | None:
    """A command-line word HfArgumentParser's argparse converts with the field's type."""
    v = str(a.value)
    try:
        if t == "bool" and v.lower() not in _BOOL_WORDS:
            raise ValueError
        if t == "int":
            int(v)
        if t == "float":
            float(v)
    except ValueError:
        return (
            "error",
            f"`--{a.name} {v}` is not a {t}: HfArgumentParser's argparse refuses it (exit 2) before training starts",
        )
    return None


def _file_type(a: Arg, t: str) -> tuple[str, str] | None:
    """A file's or a call's value: HfArgumentParser and TrainingArguments pass it on unconverted."""
    v = a.value
    if t == "float" and isinstance(v, str):
        try:
            float(v)
        except ValueError:
            return (
                "error",
                f"`{a.name}: {v!r}` is a string, not a float: TrainingArguments keeps it and it fails where it is used",
            )
        fix = (
            f" (YAML 1.1 reads a float only with a dot: write {_dotted(v)})"
            if "e" in v.lower() and "." not in v
            else ""
        )
        # only HfArgumentParser.parse_yaml_file's path refuses it; TRL's --config sets it as an
        # argparse default, which argparse converts: a warning
        return "error" if a.source == "python" else "warning", (
            f"`{a.name}: {v}` is a string{fix}: HfArgumentParser.parse_yaml_file passes it unconverted "
            "and TrainingArguments keeps it; the optimizer refuses it in train() (TypeError). TRL's --config "
            "converts it (argparse types a string default)"
        )
    if t == "int" and isinstance(v, (str, float, bool)):
        return (
            "error",
            f"`{a.name}: {v!r}` is a {type(v).__name__}, not an int: TrainingArguments keeps it unconverted and "
            "train() fails where it computes with it",
        )
    if t == "bool" and not isinstance(v, bool):
        on = "on" if v else "off"
        meant_on = isinstance(v, str) and v.lower() in ("yes", "true", "t", "y", "1")
        return "warning" if meant_on else "error", (
            f"`{a.name}: {v!r}` is not a boolean: TrainingArguments takes its truth value, so it is silently {on} "
            "(a string such as 'auto' or 'false' is true)"
            + (
                ""
                if meant_on or not isinstance(v, str) or a.source == "python"
                else "; TRL's --config refuses it (argparse: Truthy value expected)"
            )
        )
    return None


# -- FSDP ----------------------------------------------------------------------------------------


def fsdp_entries(group: TrainerArgs) -> list[Arg] | None:
    cfg = group.get("fsdp_config")
    return None if cfg is None else fsdp.config_entries(cfg.value, cfg)


def fsdp_on(group: TrainerArgs) -> bool:
    v = group.value("fsdp")
    return bool(v) and v not in ("", [])


def fsdp_findings(group: TrainerArgs) -> list[Finding]:
    if group.kind == "axolotl":
        return []  # axolotl translates its own accelerate-style fsdp_config; not TrainingArguments'
    entries = fsdp_entries(group) or []
    out: list[Finding] = []
    opt = group.get("fsdp")
    if opt is not None:
        out += fsdp.check_option_string(opt, entries)
    if entries:
        out += fsdp.check_config(entries, "fsdp_config", fsdp_on(group))
    return out


# -- combinations ----------------------------------------------------------------------------


def _truthy(group: TrainerArgs, name: str) -> bool:
    v = group.value(name)
    if isinstance(v, str):
        return v.lower() in ("yes", "true", "t", "y", "1")
    return bool(v)


def combinations(group: TrainerArgs, ctx: dict[str, Any]) -> list[Finding]:
    out: list[Finding] = []
    out += _checkpointing(group, ctx)
    out += _save_only_model(group, ctx)
    zero = ctx.get("zero_stage")
    afb = group.get("auto_find_batch_size")
    if zero == 3 and afb is not None and _truthy(group, "auto_find_batch_size"):
        out.append(
            _f(
                "trainer-zero3-auto-batch",
                "error",
                "`auto_find_batch_size` with DeepSpeed ZeRO-3: the Trainer raises ValueError at Trainer init "
                '("isn\'t supported yet with DeepSpeed Zero-3")',
                afb,
            )
        )
    out += _accumulation(group, ctx)
    out += _precision(group, ctx)
    return out


def launch_findings(group: TrainerArgs, ctx: dict[str, Any]) -> list[Finding]:
    """The findings that depend on what the launch gives (its accelerate config, its environment)."""
    return _accumulation(group, ctx, launch_only=True) + _precision(group, ctx)


def _checkpointing(group: TrainerArgs, ctx: dict[str, Any]) -> list[Finding]:
    entries = fsdp_entries(group) or ctx.get("fsdp_entries") or []
    fsdp_ac = next((e for e in entries if e.name.removeprefix("fsdp_") == "activation_checkpointing"), None)
    arg = group.get("activation_checkpointing") or group.get("gradient_checkpointing")
    out: list[Finding] = []
    ga, aa = group.get("gradient_checkpointing"), group.get("activation_checkpointing")
    if ga is not None and aa is not None and bool(ga.value) != bool(aa.value):
        out.append(
            _f(
                "trainer-checkpointing-alias",
                "warning",
                "`gradient_checkpointing` is the deprecated alias of `activation_checkpointing`: the new name wins "
                "and this value is silently ignored",
                ga,
            )
        )
    if fsdp_on(group) and fsdp_ac is not None and fsdp._truth(fsdp_ac) and arg is not None and _truthy(group, arg.name):
        out.append(
            _f(
                "trainer-fsdp-checkpointing",
                "error",
                f"`fsdp_config.activation_checkpointing` and `{arg.name}` are both true: the Trainer raises ValueError "
                "at Trainer init; use FSDP's activation checkpointing alone",
                arg,
            )
        )
    return out


def _save_only_model(group: TrainerArgs, ctx: dict[str, Any]) -> list[Finding]:
    som = group.get("save_only_model")
    if som is None or not _truthy(group, "save_only_model"):
        return []
    out: list[Finding] = []
    wrapper = (
        "FSDP"
        if fsdp_on(group)
        else "DeepSpeed"
        if group.get("deepspeed") is not None and group.value("deepspeed")
        else None
    )
    if wrapper and _truthy(group, "load_best_model_at_end"):
        out.append(
            _f(
                "trainer-save-only-model",
                "error",
                f"`save_only_model` with `load_best_model_at_end` under {wrapper}: the Trainer raises ValueError at "
                "Trainer init",
                som,
            )
        )
    entries = fsdp_entries(group) or ctx.get("fsdp_entries") or []
    sdt = next((e for e in entries if e.name.removeprefix("fsdp_") == "state_dict_type"), None)
    if fsdp_on(group) and sdt is not None and "SHARDED_STATE_DICT" in str(sdt.value).upper():
        out.append(
            _f(
                "trainer-save-only-model",
                "error",
                "`save_only_model` with FSDP state_dict_type SHARDED_STATE_DICT: the Trainer raises ValueError at "
                "Trainer init",
                som,
            )
        )
    return out


def _accumulation(group: TrainerArgs, ctx: dict[str, Any], launch_only: bool = False) -> list[Finding]:
    gas = group.get("gradient_accumulation_steps")
    out: list[Finding] = []
    acc = None if launch_only else group.value("accelerator_config")
    if (
        isinstance(acc, dict)
        and isinstance(acc.get("gradient_accumulation_kwargs"), dict)
        and "num_steps" in acc["gradient_accumulation_kwargs"]
        and gas is not None
        and _int(gas.value) > 1
    ):
        out.append(
            _f(
                "trainer-accumulation-twice",
                "error",
                "`accelerator_config.gradient_accumulation_kwargs.num_steps` and `gradient_accumulation_steps` > 1: "
                "the Trainer raises ValueError at Trainer init",
                gas,
            )
        )
    other = ctx.get("accelerate_gas")
    if gas is not None and other is not None and str(other[0]) != str(gas.value) and str(other[0]) != "auto":
        value, where = other
        # accelerate's DeepSpeedPlugin writes the config's value into the DeepSpeed config it builds;
        # the Trainer's fill_match records the mismatch and deepspeed_init raises it
        out.append(
            _f(
                "trainer-accumulation-twice",
                "error",
                f"gradient accumulation is {gas.value} here and {value} in the accelerate config {where} "
                "(deepspeed_config.gradient_accumulation_steps): accelerate puts its value in the DeepSpeed config and "
                "transformers raises ValueError (DeepSpeed config mismatch) in train(), after the model loads",
                gas,
            )
        )
    env = group.env.get(env_var("deepspeed_config", "gradient_accumulation_steps"))
    if gas is not None and env is not None and other is None and ctx.get("zero_stage") is None:
        out.append(
            _f(
                "trainer-accumulation-twice",
                "warning",
                f"gradient accumulation is {gas.value} here and ACCELERATE_GRADIENT_ACCUMULATION_STEPS={env.value} "
                f"(line {env.line}): the Trainer's wins; it accumulates itself and builds the Accelerator with "
                "GradientAccumulationPlugin(num_steps=1), so the variable is ignored",
                gas,
            )
        )
    return out


def _int(v: Any) -> int:
    try:
        return int(v)
    except (TypeError, ValueError):
        return 0


def _precision(group: TrainerArgs, ctx: dict[str, Any]) -> list[Finding]:
    """``mixed_precision`` is ``ACCELERATE_MIXED_PRECISION`` (default "no"), then ``fp16``/``bf16`` when true."""
    env = group.env.get(env_var("", "mixed_precision"))
    launch_flag = group.launcher.get("mixed_precision")
    given: tuple[Any, str] | None
    if launch_flag is not None and launch_flag.value:  # accelerate launch exports it as ACCELERATE_MIXED_PRECISION
        given = (launch_flag.value, f"`accelerate launch --mixed_precision` at line {launch_flag.line}")
    elif env is not None and env.value:
        given = (env.value, f"ACCELERATE_MIXED_PRECISION at line {env.line}")
    else:
        given = ctx.get("accelerate_precision")
    if not given:
        return []
    value, where = given
    out: list[Finding] = []
    for flag in ("bf16", "fp16"):
        a = group.get(flag)
        if a is not None and _truthy(group, flag) and str(value) != flag:
            out.append(
                _f(
                    "trainer-mixed-precision",
                    "warning",
                    f"`{flag}` is true and {where} says {value!r}: TrainingArguments sets mixed_precision to {flag!r} "
                    "over it (silently)",
                    a,
                )
            )
    if not any(group.get(f) is not None and _truthy(group, f) for f in ("bf16", "fp16")) and str(value) in (
        "bf16",
        "fp16",
    ):
        out.append(
            Finding(
                "trainer-mixed-precision",
                "info",
                f"neither `bf16` nor `fp16` is set: mixed precision {value!r} comes from {where}",
                "mixed_precision",
                group.line,
                group.column,
            )
        )
    return out


def check_fsdp_file(entries: Iterable[Arg]) -> list[Finding]:
    """A ``fsdp_config`` JSON on its own: its keys as TrainingArguments reads them (``fsdp`` is
    assumed set: a file of these keys is meant for it)."""
    return fsdp.check_config(list(entries), "fsdp_config", True)


__all__ = [
    "CONVERTED_ENUMS",
    "check",
    "check_fsdp_file",
    "combinations",
    "fsdp_findings",
    "launch_findings",
    "unknown_fields",
    "wrong_types",
]
