"""``diff`` on the Trainer path: two sides compared by what the Accelerator is built with.

A side is an arguments file (what a Trainer builds from it, :func:`accelconf.trainer.runs.what_runs`)
or an accelerate config (what ``Accelerator()`` builds under ``accelerate launch`` with it: every
plugin field from the variables the launcher writes). The settings compared are the FSDP plugin
fields, the DeepSpeed config entries, mixed precision and the gradient accumulation that runs, so
``fsdp_config: {offload_params: true}`` in arguments and ``fsdp_offload_params: false`` in an
accelerate config are no difference: neither offloads.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from accelconf import formats, kinds
from accelconf.accelerate.launch import launch_env, resolve
from accelconf.deepspeed.path import config_file_path
from accelconf.diff.result import Change, DiffResult, matches, same
from accelconf.kinds import TRAINER_KINDS
from accelconf.trainer import ds_fill, releases
from accelconf.trainer.argvalues import ArgValues
from accelconf.trainer.fsdp_plugin import Provenance, TrainerRaises, env_var, plugin_fields
from accelconf.trainer.read import read_args
from accelconf.trainer.runs_inputs import inputs, runs_of

Flat = dict[str, tuple[Any, str]]  # setting -> (value, where)


def _flatten(prefix: str, data: Any, where: str, out: Flat) -> None:
    for k, v in data.items():
        if isinstance(v, dict) and v:
            _flatten(f"{prefix}{k}.", v, where, out)
        elif k != "steps_per_print":
            out[f"{prefix}{k}"] = (v, where)


def _from_provenance(out: Flat, prefix: str, rows: Any) -> None:
    for p in rows:
        out[f"{prefix}{p.name}"] = (p.value, p.where)


def trainer_side(text: str, source: str, kind: str, version: str | None = None) -> Flat:
    """What a Trainer's Accelerator is built with from an arguments file (no accelerate config), and
    where that release refuses it (``raises.<stage>``)."""
    inp = inputs(read_args(text, source, kind), version)
    runs = runs_of(inp, {})
    out: Flat = {"distributed": ("DEEPSPEED" if runs.deepspeed else "FSDP" if runs.fsdp else "none", source)}
    for r in runs.raises[:1]:  # the first refusal stops the run: later stages never happen
        out[f"raises.{r.stage}"] = (r.message, r.key or source)
    _from_provenance(out, "Accelerator.", [runs.mixed_precision])
    if runs.gradient_accumulation:  # none when construction refuses the arguments: no Trainer is built
        out["gradient_accumulation_steps"] = (runs.gradient_accumulation[0].value, runs.gradient_accumulation[0].where)
    if runs.fsdp is not None:
        _from_provenance(out, "fsdp_plugin.", runs.fsdp.values())
    if runs.deepspeed is not None:
        _flatten("deepspeed.", runs.deepspeed.config, inp.ds_doc.path if inp.ds_doc else source, out)
    return out


def accelerate_side(text: str, source: str, version: str | None = None) -> Flat:
    """What ``Accelerator()`` is built with under ``accelerate launch`` with this config."""
    ver = resolve(version)
    cfg = formats.read(text, None, source, ver)
    result = launch_env(cfg, version=ver)
    env = {k: (v, "launch", source) for k, v in result.env.items()}
    mp = result.env.get(env_var("", "mixed_precision"), "no")
    out: Flat = {
        "Accelerator.mixed_precision": (mp, source),
        "gradient_accumulation_steps": (
            int(result.env.get(env_var("deepspeed_config", "gradient_accumulation_steps"), 1)),
            source,
        ),
    }
    if result.env.get("ACCELERATE_USE_DEEPSPEED") == "true":
        out["distributed"] = ("DEEPSPEED", source)
        _flatten("deepspeed.", _accelerate_deepspeed(result.env, env, mp, source), source, out)
    elif result.env.get("ACCELERATE_USE_FSDP") == "true":
        out["distributed"] = ("FSDP", source)
        _from_provenance(out, "fsdp_plugin.", plugin_fields({}, {}, env).values())
    else:
        out["distributed"] = ("none", source)
    return out


def _accelerate_deepspeed(variables: dict[str, str], env: Any, mp: str, source: str) -> dict[str, Any]:
    """The DeepSpeed config ``DeepSpeedPlugin()`` builds from the launcher's variables (a named JSON, else its own)."""
    name = variables.get("ACCELERATE_DEEPSPEED_CONFIG_FILE")
    if name:
        path = config_file_path(name, source)
        config: dict[str, Any] = {"zero_optimization": {}}
        if path:
            with open(path, encoding="utf-8") as fh:
                config = json.load(fh)
    else:
        stage = int(variables.get("ACCELERATE_DEEPSPEED_ZERO_STAGE", 2))
        config = {
            "train_batch_size": "auto",
            "train_micro_batch_size_per_gpu": "auto",
            "gradient_accumulation_steps": int(
                variables.get(env_var("deepspeed_config", "gradient_accumulation_steps"), 1)
            ),
            "zero_optimization": {
                "stage": stage,
                "offload_optimizer": {"device": variables.get("ACCELERATE_DEEPSPEED_OFFLOAD_OPTIMIZER_DEVICE", "none")},
                "offload_param": {"device": variables.get("ACCELERATE_DEEPSPEED_OFFLOAD_PARAM_DEVICE", "none")},
                "stage3_gather_16bit_weights_on_model_save": variables.get(
                    "ACCELERATE_DEEPSPEED_ZERO3_SAVE_16BIT_MODEL", "false"
                )
                == "true",
            },
        }
    f = ds_fill._Filler(config, ArgValues({}))
    try:
        ds_fill.plugin_post_init(f, env)
        ds_fill.set_mixed_precision(f, mp)
    except TrainerRaises:
        pass  # a refusal is validate's and explain's to report; the diff compares what is written
    return f.out.config


def compare(a: Flat, b: Flat, a_source: str, b_source: str, ignore: list[str] | None = None) -> DiffResult:
    result = DiffResult(a_source=a_source, b_source=b_source, mode="trainer")
    for key in sorted(set(a) | set(b)):
        if matches(key, ignore or []):
            continue
        if key in a and key in b:
            (va, wa), (vb, wb) = a[key], b[key]
            if not same(va, vb):
                result.changes.append(Change(key, va, vb, "changed", a_where=wa, b_where=wb))
        elif key in a:
            result.changes.append(Change(key, a[key][0], None, "removed", a_where=a[key][1]))
        else:
            result.changes.append(Change(key, None, b[key][0], "added", b_where=b[key][1]))
    return result


def side(text: str, source: str, version: str | None = None, accelerate_version: str | None = None) -> Flat | None:
    """The settings of one side, or ``None`` when it is neither Trainer arguments nor an accelerate config."""
    kind = kinds.recognise(text, source).kind
    if kind in TRAINER_KINDS:
        return trainer_side(text, source, kind, version)
    if kind in ("accelerate", "unknown"):
        return accelerate_side(text, source, accelerate_version)
    return None


def _arguments(text: str, source: str, kind: str, version: str) -> Flat:
    """The fields the file sets that this release has (``arguments.<name>``), the defaults of the
    ones it does not set (``defaults.<name>``), and the Accelerator's own accumulation steps."""
    group = read_args(text, source, kind)
    runs = runs_of(inputs(group, version), {})
    known = releases.fields(version)
    written = {a.name: a for a in group.args}
    out: Flat = {}
    if len(runs.gradient_accumulation) > 1:  # the Accelerator's own steps: how the Trainer builds its plugin
        own = runs.gradient_accumulation[1]
        out["Accelerator.gradient_accumulation_steps"] = (own.value, own.where)
    for name, arg in written.items():
        if name in known:
            out[f"arguments.{name}"] = (arg.value, f"{source}:{arg.line}")
    for name, f in known.items():
        if name not in written and not f.required:
            out[f"defaults.{name}"] = (f.default, f"TrainingArguments default in transformers {version}")
    return out


def _release_note(c: Change, a: str, b: str, one_file: bool = True) -> Change:
    """Why a field, default or plugin field differs between the two releases. ``one_file``: both
    sides are the same file, so a field the file sets that one side lacks is one its release lacks;
    between two files it may be only the other file that lacks it."""
    section, _, name = c.key.partition(".")
    if section == "arguments":
        gone, having = (b, a) if c.kind == "removed" else (a, b)
        if c.kind == "changed" or name in releases.fields(gone):
            return c  # both releases take the field: the files differ, not the releases
        rename = releases.renamed(name)
        if one_file and rename is not None and rename.new in releases.fields(gone):
            return _renamed(c, rename, gone, having)
        when = releases.removed(name)
        hint = f" (removed in {when[1]})" if when else ""
        return c.noted(
            f"transformers {gone} has no field {name}{hint}: HfArgumentParser refuses the file at construction; "
            f"{having} takes it"
        )
    if section == "defaults":
        return c.noted(f"the default changed between transformers {a} and {b}; the file does not set it")
    if c.key == "fsdp_plugin.fsdp_version":
        da, db = (releases.runs_fact("fsdp_version_default", v) for v in (a, b))
        if da != db:
            return c.noted(f"fsdp_config's version defaults to {da} in transformers {a}, to {db} in {b}")
    if section == "raises":
        return c.noted("where that release refuses the arguments")
    return c


def _renamed(c: Change, rename: releases.Rename, gone: str, having: str) -> Change:
    """A field the file sets that one release renamed: the old key on the side that takes it, the
    new one (with the value, where it carries over) on the side that only takes the new."""
    old_key, new_key = f"arguments.{rename.old}", f"arguments.{rename.new}"
    value = (c.a if c.kind == "removed" else c.b) if rename.value_carries else None
    moved = "the value as written" if rename.value_carries else f'as its message says: "{rename.message}"'
    note = (
        f"{'renamed' if rename.value_carries else 'replaced'}: "
        f"transformers {rename.removed_in} removed {rename.old} and its deprecation message "
        f"(transformers {rename.last}) names {rename.new}; {gone} refuses the file at construction until it "
        f"writes {rename.new} ({moved}); {having} takes {rename.old}"
    )
    where = "its replacement: not in the file"
    if c.kind == "removed":
        return replace(c, b=value, b_where=where, a_key=old_key, b_key=new_key).noted(note)
    return replace(c, a=value, a_where=where, a_key=new_key, b_key=old_key).noted(note)


def release_diff(
    a: tuple[str, str], b: tuple[str, str], versions: tuple[str, str], ignore: list[str] | None = None
) -> DiffResult:
    """What runs under transformers ``versions[0]`` from ``a`` (text, source) against what runs
    under ``versions[1]`` from ``b`` (the same file twice for one file across two releases): fields
    one release lacks, defaults that changed, and what the Accelerator is built with in each."""
    flats = []
    for (text, source), version in zip((a, b), versions):
        kind = kinds.recognise(text, source).kind
        flat = side(text, source, version)
        if flat is None:
            raise ValueError(f"{source}: neither Trainer arguments nor an accelerate config")
        if kind in TRAINER_KINDS:
            flat.update(_arguments(text, source, kind, version))
        flats.append(flat)
    for key in [k for k in set(flats[0]) ^ set(flats[1]) if k.startswith("defaults.")]:
        for flat in flats:  # a field one release lacks and the file does not set changes nothing that runs
            flat.pop(key, None)
    result = compare(flats[0], flats[1], a[1], b[1], ignore)
    result.changes = [_release_note(c, *versions, one_file=a == b) for c in result.changes]
    result.mode, result.version = "trainer-releases", "..".join(versions)
    return result


__all__ = ["Provenance", "accelerate_side", "compare", "release_diff", "side", "trainer_side"]
