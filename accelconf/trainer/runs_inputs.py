"""The inputs of what runs for one group of Trainer arguments: the files they name (``fsdp_config``,
``deepspeed``), read as transformers opens them, and the launcher's config; and the findings of
what runs (a refusal at its stage, each DeepSpeed value the arguments contradict).

Shared by ``explain``, ``diff`` and the conversions; nothing here imports transformers.
"""

from __future__ import annotations

import json
import os
from typing import Any

from accelconf.errors import InputError
from accelconf.findings import Finding
from accelconf.formats import shell
from accelconf.kinds.references import locate
from accelconf.records import Record
from accelconf.text.document import Document, load_source, read_text
from accelconf.trainer.args import TrainerArgs
from accelconf.trainer.argvalues import ArgValues, from_trainer_args
from accelconf.trainer.fsdp_plugin import TrainerRaises
from accelconf.trainer.runs import Env, Runs, deepspeed_mismatches, what_runs


class Inputs(Record):
    _fields = ("group", "args", "fsdp_config", "fsdp_config_path", "ds_doc", "missing", "raises")

    def __init__(
        self,
        group: TrainerArgs,
        args: ArgValues,
        fsdp_config: dict[str, Any] | None = None,
        fsdp_config_path: str = "",
        ds_doc: Document | None = None,
        missing: list[tuple[str, str]] | None = None,
        raises: list[TrainerRaises] | None = None,
    ) -> None:
        self.group, self.args, self.fsdp_config, self.fsdp_config_path = group, args, fsdp_config, fsdp_config_path
        self.ds_doc = ds_doc
        self.missing: list[tuple[str, str]] = [] if missing is None else missing  # (argument, file) not found from here
        self.raises: list[TrainerRaises] = [] if raises is None else raises  # refusals of reading the named files


def _locate(value: str, referrer: str) -> str | None:
    return locate(value, referrer)


def inputs(group: TrainerArgs, version: str | None = None) -> Inputs:
    """The arguments of a group and the files they name; raises :class:`InputError` for a named file
    that is missing or not a JSON/YAML mapping."""
    if group.kind == "fsdp-config":  # a fsdp_config file alone: what `fsdp=True, fsdp_config=FILE` builds
        args = ArgValues(
            {"fsdp": True, "fsdp_config": {a.name: a.value for a in group.args}},
            {a.name: f"{group.path}:{a.line}:{a.column}" for a in group.args},
            group.path,
            version,
        )
    else:
        args = from_trainer_args(group, version)
    out = Inputs(group, args)
    cfg = args.get("fsdp_config")
    if isinstance(cfg, str) and cfg.strip():
        if cfg.lstrip().startswith("{"):
            out.fsdp_config = json.loads(cfg)
        elif (path := _locate(cfg, group.path)) is None:
            out.missing.append(("fsdp_config", cfg))
        else:
            out.fsdp_config_path = path
            doc = load_source(path)
            out.fsdp_config = doc.data if isinstance(doc.data, dict) else {}
            try:  # transformers opens it with json.load, whatever its name
                json.loads(doc.text)
            except ValueError as exc:
                out.raises.append(
                    TrainerRaises(
                        f"{cfg} is not JSON ({exc.__class__.__name__}): TrainingArguments reads "
                        "fsdp_config with json.load",
                        "construction",
                        "fsdp_config",
                    )
                )
    elif isinstance(cfg, dict):
        out.fsdp_config = cfg
    ds = args.get("deepspeed")
    if isinstance(ds, str) and ds.strip():
        if (path := _locate(ds, group.path)) is None:
            out.missing.append(("deepspeed", ds))
        else:
            out.ds_doc = load_source(path)
            if not isinstance(out.ds_doc.data, dict):
                raise InputError("a DeepSpeed config must be a JSON object", path)
    return out


# launcher flags that give the processes per node and the nodes: torchrun (both spellings) and deepspeed
_PER_NODE = ("--nproc_per_node", "--nproc-per-node", "--num_gpus", "--num-gpus")
_NODES = ("--nnodes", "--num_nodes", "--num-nodes")


def launcher_world_size(group: TrainerArgs) -> int | None:
    """The processes a torchrun/deepspeed line starts (per node x nodes) when its words say so literally."""
    if group.kind not in ("launch", "other-launch"):
        return None
    text, _ = read_text(group.path)
    words = next((w for w in shell.commands(text, group.path) if w and w[0].line == group.line), None)
    if words is None:
        return None
    texts = [shell.resolve(w, {}) for w in words]

    def flag(names: tuple[str, ...]) -> int | None:
        for i, t in enumerate(texts):
            if t is None:
                continue
            name, eq, value = t.partition("=")
            if name in names:
                raw = value if eq else (texts[i + 1] if i + 1 < len(texts) else None)
                return int(raw) if raw is not None and raw.isdigit() else None
        return None

    per_node = flag(_PER_NODE)
    nodes = flag(_NODES) or 1
    return per_node * nodes if per_node else None


def world_size(result: Any, group: TrainerArgs | None = None) -> int:
    """The processes of a launch (``num_processes``: accelerate launch counts all machines' processes;
    else a torchrun/deepspeed line's own flags; else 1)."""
    if result is None:
        return (launcher_world_size(group) if group is not None else None) or 1
    n = result.namespace.get("num_processes")
    try:
        return max(1, int(n)) if n is not None else 1
    except (TypeError, ValueError):
        return 1


def runs_of(inp: Inputs, env: Env, *, world: int = 1, hidden_size: int | None = None, hidden_where: str = "") -> Runs:
    ds = inp.ds_doc.data if inp.ds_doc is not None else None
    runs = what_runs(
        inp.args,
        env=env,
        fsdp_config=inp.fsdp_config,
        ds_config=ds,
        world_size=world,
        hidden_size=hidden_size,
        hidden_where=hidden_where,
    )
    for p in (runs.fsdp or {}).values():
        p.where = _fsdp_where(inp, p.where)
    runs.raises = inp.raises + runs.raises
    return runs


def _fsdp_where(inp: Inputs, where: str) -> str:
    """``file:line:col`` of the ``fsdp_config`` key or the ``fsdp`` option a plugin field came from."""
    g = inp.group
    if where.startswith("fsdp_config."):
        key = where.split(".", 1)[1]
        if inp.fsdp_config_path:
            line, col = load_source(inp.fsdp_config_path).position((key,))
            return f"{relative(inp.fsdp_config_path)}:{line}:{col}"
        if g.kind == "fsdp-config" and g.get(key) is not None:
            return f"{g.path}:{g.get(key).line}:{g.get(key).column}"  # type: ignore[union-attr]
        arg = g.get("fsdp_config")
        child = arg.child(key) if arg is not None else None
        if child is not None:
            return f"{g.path}:{child.line}:{child.column}"
        return f"{g.path}:{arg.line}:{arg.column} ({where})" if arg is not None else where
    if where.startswith("fsdp "):
        arg = g.get("fsdp")
        return f"{g.path}:{arg.line}:{arg.column} ({where})" if arg is not None else where
    return where


def findings(inp: Inputs, runs: Runs, world: int = 1) -> list[Finding]:
    """What transformers or accelerate refuse (at its stage) and the DeepSpeed values the arguments contradict."""
    out: list[Finding] = []
    for name, value in inp.missing:
        a = inp.group.get(name)
        out.append(
            Finding(
                "trainer-reference",
                "warning",
                f"{value!r} is not found beside {inp.group.path} or in the working "
                f"directory: what it sets is not shown (transformers opens it from the launch directory, and "
                "raises at construction when it is not there either)",
                name,
                a.value_position[0] if a else 0,
                a.value_position[1] if a else 0,
                path=inp.group.path,
            )
        )
    for r in runs.raises:
        out.append(_raise_finding(inp, r))
    if inp.ds_doc is not None:
        out += deepspeed_mismatches(inp.args, inp.ds_doc, world)
    return out


def _raise_finding(inp: Inputs, r: TrainerRaises) -> Finding:
    """A refusal, at the DeepSpeed key, the fsdp_config key or the argument it is about."""
    key = r.key
    if inp.ds_doc is not None and ("." in key or key == "zero_optimization"):
        doc = inp.ds_doc
        line, col, el, ec = doc.span(tuple(key.split(".")))
        return Finding(
            "trainer-raises",
            "error",
            f"{r.message} (transformers/accelerate raise at {r.stage})",
            key,
            line,
            col,
            end_line=el,
            end_column=ec,
            path=doc.path,
        )
    a = (
        inp.group.get(key)
        or inp.group.get("fsdp_config" if key not in ("fsdp", "bf16") else key)
        or inp.group.get("fsdp")
    )
    line, col = (a.line, a.column) if a is not None else (inp.group.line, inp.group.column)
    return Finding("trainer-raises", "error", f"{r.message} (raised at {r.stage})", key, line, col, path=inp.group.path)


def relative(path: str) -> str:
    return os.path.relpath(path) if os.path.isabs(path) else path


def what_runs_group(
    group: TrainerArgs,
    env: Env,
    *,
    version: str | None = None,
    world: int = 1,
    hidden_size: int | None = None,
    hidden_where: str = "",
) -> tuple[Inputs, Runs, list[Finding]]:
    """One group of read arguments: its inputs, what runs from them, and the findings of what runs:
    the one job behind ``explain``, the API's :func:`accelconf.api.trainer_runs` and the conversions."""
    inp = inputs(group, version)
    runs = runs_of(inp, env, world=world, hidden_size=hidden_size, hidden_where=hidden_where)
    return inp, runs, findings(inp, runs, world)
