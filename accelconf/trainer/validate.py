"""validate for the files that hold Trainer / TRL arguments: the findings of each group of
arguments a file gives, with what its referenced files (a DeepSpeed JSON, an ``fsdp_config``
JSON, the accelerate config a launch names) contribute to the rules. Called by
:func:`accelconf.api.validate_source`, the one dispatch of the CLI, the API and the server.
"""

from __future__ import annotations

import os
from typing import Any

from accelconf.errors import InputError
from accelconf.findings import Finding
from accelconf.kinds import TRAINER_KINDS, recognise
from accelconf.kinds.references import locate
from accelconf.text.document import load_file
from accelconf.trainer import fsdp, rules
from accelconf.trainer.args import Arg, TrainerArgs
from accelconf.trainer.read import from_document, read_all

# The kinds whose Trainer arguments validate checks (a launch or Python script's are checked too).
KINDS = frozenset(TRAINER_KINDS)
_FRAMEWORK = {"llama-factory": "LLaMA-Factory", "axolotl": "axolotl"}


def findings(text: str, path: str, kind: str, opts: dict[str, Any]) -> list[Finding]:
    """Every Trainer-arguments finding of a file of ``kind`` (findings in referenced files carry
    their path). Raises :class:`InputError` for text its reader refuses."""
    version = opts.get("transformers_version")
    if kind == "fsdp-config":
        group = from_document(text, path, kind)
        return rules.check_fsdp_file(group.args)
    out: list[Finding] = []
    groups = read_all(text, path, kind)
    for group in groups:
        ctx, extra = _context(group, path)
        ctx["trl_version"] = opts.get("trl_version")
        out += extra
        out += rules.check(group, version, ctx)
        out += _framework_note(group)
        out += _arguments_file(group, path, ctx)
    return out


def _arguments_file(group: TrainerArgs, path: str, ctx: dict[str, Any]) -> list[Finding]:
    """The arguments file a launch hands its training script (``train.py sft.yaml``): what this
    launch's accelerate config and environment do to those arguments, reported in that file (its
    own findings are its own validate's)."""
    out: list[Finding] = []
    for ref in group.references:
        where = locate(ref.value, path) if ref.role == "arguments" else None
        if where is None:
            continue
        try:
            doc = load_file(where)
            kind = recognise(doc.text, where, doc).kind
            sub = from_document(doc.text, where, kind, doc)
        except InputError:
            continue
        sub.env, sub.launcher = group.env, group.launcher
        sub_ctx, _ = _context(sub, where)
        merged = {**sub_ctx, **{k: v for k, v in ctx.items() if k.startswith("accelerate")}}
        out += [f.with_path(where) for f in rules.launch_findings(sub, merged)]
    return out


def _framework_note(group: TrainerArgs) -> list[Finding]:
    name = _FRAMEWORK.get(group.kind)
    if name is None:
        return []
    n = len(group.ignored)
    keys = ", ".join(f"`{a.name}`" for a in group.ignored[:5]) + (" ..." if n > 5 else "")
    what = " and its own accelerate-style `fsdp_config`, which it translates itself" if group.kind == "axolotl" else ""
    return [
        Finding(
            "trainer-framework-keys",
            "info",
            f"{name}'s own keys ({n}: {keys}){what} are not modelled by accelconf; its TrainingArguments fields "
            "and referenced files are checked",
            "",
            1,
            1,
        )
    ]


def _context(group: TrainerArgs, path: str) -> tuple[dict[str, Any], list[Finding]]:
    """What the referenced files tell the rules, and the findings of a referenced ``fsdp_config``
    file (reported against that file)."""
    ctx: dict[str, Any] = {}
    extra: list[Finding] = []
    for ref in group.references:
        where = locate(ref.value, path)
        if where is None:
            continue
        try:
            doc = load_file(where)
        except InputError:
            continue
        if ref.role == "deepspeed" and isinstance(doc.data, dict):
            zo = doc.data.get("zero_optimization")
            if isinstance(zo, dict):
                ctx["zero_stage"] = _int(zo.get("stage"))
            # the JSON's values against the arguments, as transformers' DeepSpeed integration compares
            # them: only for the `deepspeed` argument itself (a file a script's own nested config names
            # is passed with arguments accelconf cannot see)
            given = group.get("deepspeed")
            if given is not None and given.line == ref.line:
                # the Trainer's run model (DeepSpeed fill, model sizes) loads only for a named DeepSpeed JSON
                from accelconf.trainer.runs import deepspeed_mismatches

                extra += [f.with_path(where) for f in deepspeed_mismatches(group, doc)]
        elif ref.role == "fsdp" and doc.format == "yaml" and rules.fsdp_on(group):
            # _process_fsdp_args opens the file with json.load
            extra.append(
                Finding(
                    "trainer-fsdp-config-file",
                    "error",
                    f"`fsdp_config` names the YAML file {ref.value!r}: TrainingArguments reads it with json.load "
                    "and raises JSONDecodeError at construction (an accelerate config goes to `accelerate "
                    "launch --config_file`)",
                    ref.key,
                    ref.line,
                    ref.column,
                )
            )
        elif ref.role == "fsdp" and isinstance(doc.data, dict):
            sub = from_document(doc.text, where, "fsdp-config", doc)
            ctx["fsdp_entries"] = sub.args

            extra += [f.with_path(where) for f in fsdp.check_config(sub.args, "fsdp_config", rules.fsdp_on(group))]
    cfg = group.launcher.get("config_file") or group.get("accelerate_config")
    if cfg is not None and isinstance(cfg.value, str):
        extra += _accelerate_context(cfg, path, ctx)
    return ctx, extra


def trl_preset(name: str) -> str | None:
    """The accelerate config TRL ships under a preset name (``zero3``: trl/accelerate_configs/zero3.yaml,
    as trl/cli/accelerate_config.py resolves ``--accelerate_config``), in the installed TRL; found
    without importing it. None when TRL is not installed or has no such preset."""
    import importlib.util

    try:
        spec = importlib.util.find_spec("trl")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for base in spec.submodule_search_locations:
        candidate = os.path.join(base, "accelerate_configs", f"{name}.yaml")
        if os.path.isfile(candidate):
            return candidate
    return None


def _accelerate_context(cfg: Arg, path: str, ctx: dict[str, Any]) -> list[Finding]:
    """What the launch's accelerate config says (``accelerate launch --config_file``, TRL's
    ``accelerate_config`` file or preset name), for the rules."""
    where = locate(cfg.value, path)
    if where is None and cfg.name == "accelerate_config" and not cfg.value.endswith((".yaml", ".yml", ".json")):
        where = trl_preset(cfg.value)
        if where is None:
            line, col = cfg.value_position
            return [
                Finding(
                    "file-reference",
                    "info",
                    f"`accelerate_config: {cfg.value}` is a preset of the TRL release "
                    "that launches it; TRL is not installed here, so it is not checked",
                    cfg.name,
                    line,
                    col,
                )
            ]
    if where is None:
        return []
    try:
        data = load_file(where).data
    except InputError:
        return []
    if not isinstance(data, dict):
        return []
    ds = data.get("deepspeed_config")
    if (
        isinstance(ds, dict)
        and "gradient_accumulation_steps" in ds
        and str(data.get("distributed_type", "")).upper() == "DEEPSPEED"
    ):
        ctx["accelerate_gas"] = (ds["gradient_accumulation_steps"], where)
    if data.get("mixed_precision") not in (None, "no"):
        ctx["accelerate_precision"] = (data["mixed_precision"], f"the accelerate config {where}")
    if (
        "zero_stage" not in ctx
        and isinstance(data.get("deepspeed_config"), dict)
        and "zero_stage" in data["deepspeed_config"]
    ):
        ctx["zero_stage"] = _int(data["deepspeed_config"]["zero_stage"])
    return []


def _int(v: Any) -> int | None:
    try:
        return int(v)
    except (TypeError, ValueError):
        return None


def has_arguments(text: str, path: str, kind: str) -> bool:
    """Whether a script holds any Trainer arguments (a launch of a training script with
    arguments, a ``TrainingArguments(...)``-like call)."""
    try:
        return any(g.args for g in read_all(text, path, kind))
    except InputError:
        return False


__all__ = ["KINDS", "findings", "has_arguments"]
