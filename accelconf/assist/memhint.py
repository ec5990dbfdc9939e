"""The memory estimate in an editor: hover figures and the ``mem-*`` diagnostics, without LSP types.

This module owns the editor settings for "will it fit?" (``accelconf.params`` or ``accelconf.model``,
optional ``accelconf.seqLen``, ``accelconf.microBatch``, ``accelconf.hostRamGib``, and for LoRA/QLoRA
``accelconf.loraRank``, ``accelconf.loraTargets``, ``accelconf.quant``) and what the language
server shows with them: hovering ``zero_stage``, ``fsdp_sharding_strategy``, ``fsdp_offload_params``
or ``num_processes`` gives the per-GPU figure of the config as written and of each value that key
could take; the fit findings of :mod:`accelconf.environment.memory` join the diagnostics. The GPU
model and count come from the server's target (``accelconf.target``); without one the figures are
shown without a verdict. The server calls :func:`from_settings` (the question it gives
:func:`accelconf.api.check_document`, which adds the findings) and
:func:`add_to_hover`, one line each.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from accelconf.assist import context_at
from accelconf.environment import fit, lora, memory, modelsize
from accelconf.environment.memory import Layout, Strategy, gib
from accelconf.environment.modelsize import ModelSize, human_count
from accelconf.environment.targets import unknown_environment
from accelconf.environment.wrapclass import model_classes
from accelconf.errors import UsageError

SETTINGS: tuple[str, ...] = (
    "params",
    "model",
    "seqLen",
    "microBatch",
    "hostRamGib",
    "loraRank",
    "loraTargets",
    "quant",
)
HOVER_KEYS = {
    ("deepspeed_config", "zero_stage"),
    ("fsdp_config", "fsdp_sharding_strategy"),
    ("fsdp_config", "fsdp_offload_params"),
    ((), "num_processes"),
}


Memory = memory.Question  # the model and shapes the editor settings give


def from_settings(raw: Any) -> tuple[Memory | None, list[str]]:
    """The memory settings from the client's ``accelconf`` settings object, and a message for each
    value refused. ``None`` when neither ``params`` nor ``model`` is set."""
    if isinstance(raw, dict) and isinstance(raw.get("accelconf"), dict):
        raw = raw["accelconf"]
    if not isinstance(raw, dict) or (raw.get("params") in (None, "") and raw.get("model") in (None, "")):
        return None, []
    problems: list[str] = []

    def positive(key: str, kind: type) -> Any:
        v = raw.get(key)
        if v is None:
            return None
        if isinstance(v, bool) or not isinstance(v, (int, float)) or v <= 0 or (kind is int and int(v) != v):
            problems.append(f"accelconf.{key} {v!r} is not a positive {'whole ' if kind is int else ''}number; ignored")
            return None
        return kind(v)

    classes = None
    try:
        if raw.get("model") not in (None, ""):
            import os

            folder = os.path.expanduser(str(raw["model"]))
            size = modelsize.resolve(folder)
            classes = model_classes(folder)
        else:
            size = modelsize.from_count(raw["params"])
    except UsageError as exc:
        return None, [f"accelconf.{'model' if raw.get('model') else 'params'}: {exc}; no memory estimate"]
    seq, mb = positive("seqLen", int), positive("microBatch", int)
    if (seq is None) != (mb is None):
        problems.append("accelconf.seqLen and accelconf.microBatch go together; activations left out")
        seq = mb = None
    return Memory(size, seq, mb, positive("hostRamGib", float), classes, _lora(raw, size, problems)), problems


def _lora(raw: Any, size: ModelSize, problems: list[str]) -> Any:
    """The LoRA adapter of ``accelconf.loraRank`` (with ``loraTargets``, ``quant``), or ``None`` with a
    message when a value is refused."""
    try:
        adapter = lora.adapter_of(raw.get("loraRank"), raw.get("loraTargets"), raw.get("quant"))
        if adapter is not None:
            lora.split(size, adapter, 2)  # refuses targets that match nothing, a count without tensors
        return adapter
    except UsageError as exc:
        problems.append(f"accelconf.loraRank: {exc}; estimated without LoRA")
        return None


def _env(env: Any) -> Any:
    if env is None:
        return unknown_environment()
    return env


def _variants(key: str, s: Strategy, lay: Layout) -> list[tuple[str, Strategy, Layout]]:
    if key == "zero_stage" and s.kind == "deepspeed":
        return [
            (
                f"zero_stage: {n}",
                replace(s, zero_stage=n, zero3_init=n == 3, offload_param=s.offload_param if n == 3 else "none"),
                lay,
            )
            for n in range(4)
        ]
    if key == "fsdp_sharding_strategy" and s.kind == "fsdp1":
        return [(name, replace(s, sharding=name), lay) for name in memory.SHARDED_GROUP]
    if key == "fsdp_offload_params" and s.kind in ("fsdp1", "fsdp2"):
        return [(f"fsdp_offload_params: {str(v).lower()}", replace(s, offload_params=v), lay) for v in (False, True)]
    if key == "num_processes":
        return [
            (f"{n} GPUs", s, Layout(max(1, n // lay.nodes), lay.nodes))
            for n in sorted({lay.world, 2 * lay.world})
            if n >= lay.nodes
        ]
    return []


def hover_markdown(doc: Any, key: str, mem: Memory, env: Any) -> str | None:
    """Markdown with the per-GPU figure of the config and of the values ``key`` could take."""
    if not isinstance(getattr(doc, "data", None), dict):
        return None
    report = memory.assess(
        doc.data,
        mem.model,
        seq_len=mem.seq_len,
        micro_batch=mem.micro_batch,
        path=doc.path,
        lora=mem.lora,
        **memory.machine_of(_env(env), mem.host_ram_gib),
    )
    e = report.estimate
    head = (
        f"**Memory per GPU** ({human_count(mem.model.params)} parameters, {e.strategy.label()}, "
        f"{e.layout.world} GPUs): **{gib(e.per_gpu)}**"
    )
    if report.gpu_bytes:
        head += f" of {report.gpu_name} {gib(report.gpu_bytes)} ({report.gpu_fraction:.0%}, {report.verdict})"
    lines = [
        head,
        "",
        f"parameters {gib(e.params)}, gradients {gib(e.grads)}, optimizer {gib(e.optimizer)}, "
        f"gathered {gib(e.gathered)}, activations "
        + ("not included" if e.activations is None else gib(e.activations))
        + f", buckets {gib(e.buckets)}, optimizer step temporaries {gib(e.step_temporaries)}, CUDA context "
        f"{gib(e.cuda_context)} and NCCL {gib(e.nccl)} (both estimated); host RAM per node {gib(e.host)}",
    ]
    rows = []
    for label, s, lay in _variants(key, e.strategy, e.layout):
        v = memory.estimate(s, lay, mem.model, seq_len=mem.seq_len, micro_batch=mem.micro_batch, lora=mem.lora)
        share = f" ({v.per_gpu / report.gpu_bytes:.0%})" if report.gpu_bytes else ""
        rows.append(f"- `{label}`: {gib(v.per_gpu)}{share}")
    if rows:
        lines += ["", *rows]
    return "\n".join(lines + _fitting(report, mem.lora))


def _fitting(report: memory.Report, lora: Any = None) -> list[str]:
    """Under a config that does not fit (or is tight): the strategies of ``accelconf fit`` that fit, cheapest first."""
    t = fit.table_for(report, lora)
    if t is None:
        return []
    if t.cheapest is None:
        return ["", "No strategy of `accelconf fit` fits on this machine."]
    return ["", "Strategies that fit here, cheapest first (`accelconf fit`):"] + [
        f"- {r.short()}: {gib(r.estimate.per_gpu)} ({r.gpu_fraction:.0%}), comm {r.comm:.1f}x" for r in t.fitting[:3]
    ]


def add_to_hover(
    md: str | None, text: str, line: int, col: int, doc: Any, mem: Memory | None, env: Any, path: str = ""
) -> str | None:
    """``md`` with the memory figure appended when the cursor (0-based) is on one of
    :data:`HOVER_KEYS` and the settings name a model. Never raises."""
    if mem is None or doc is None:
        return md
    try:
        where = context_at(text, line, col, path=path)
        key = where.key or ""
        parent = where.path[-1] if where.path else ()
        if (parent, key) not in HOVER_KEYS:
            return md
        extra = hover_markdown(doc, key, mem, env)
    except Exception:  # noqa: BLE001 - a hover must never fail because of the estimate
        return md
    if not extra:
        return md
    return extra if md is None else f"{md}\n\n---\n\n{extra}"
