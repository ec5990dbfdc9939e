"""The strategy table: every strategy accelconf models, estimated for one model on one machine.

This module owns the list of strategies ``accelconf fit`` compares (:func:`strategies`), their
relative communication cost (:func:`comm_cost`, kept in :mod:`memory` beside the order both use),
the table itself (:func:`table`: the peak per GPU and host RAM per node of
:func:`accelconf.environment.memory.estimate`, judged by :func:`accelconf.environment.memory.verdict`),
the cheapest row that fits (:attr:`FitTable.cheapest`, in :func:`memory.rank`'s order, which
``check``'s suggestion follows too)
and the accelerate config that runs a row (:func:`config_for`). ``accelconf fit``, ``check`` (when a
config does not fit), the language server's memory hover and :func:`accelconf.api.fit` all call
:func:`table`; nothing here imports torch.

The communication cost is the volume each rank sends per step, in parameters, relative to DDP's
all-reduce of the gradients (2 x parameters, a reduce-scatter and an all-gather), as the ZeRO paper
counts it (Rajbhandari et al. 2020, section 7: ZeRO-1 and ZeRO-2 move 2 x, ZeRO-3 3 x, i.e. 1.5) and
the FSDP paper (Zhao et al. 2023: FULL_SHARD gathers the weights again in backward, 1.5; SHARD_GRAD_OP
and NO_SHARD do not, 1.0). HYBRID strategies move the same volume, most of it inside the node. Under LoRA
only the adapters' gradients are reduced while sharded strategies still gather every weight (:func:`comm_cost`).
Offload adds host-device copies over PCIe, checkpointing one more forward of compute; both are
flagged, not priced. The cheapest row that fits is the first by (what it offloads, checkpointing,
communication cost, peak per GPU): offload is the slowest lever, recomputation next.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from accelconf import formats
from accelconf.accelerate import registry
from accelconf.environment import memory, modelsize
from accelconf.environment.gpus import lookup
from accelconf.environment.lora import adapter_of
from accelconf.environment.memory import (
    Estimate,
    Layout,
    Strategy,
    comm_cost,
    strategies,
    table_order,
)
from accelconf.environment.modelsize import ModelSize, parse_count
from accelconf.errors import UsageError


@dataclass(frozen=True)
class Row:
    """One strategy on the machine: its estimate, the shares of GPU and host memory, the verdict."""

    strategy: Strategy
    estimate: Estimate
    gpu_fraction: float | None
    host_fraction: float | None
    verdict: str
    comm: float

    @property
    def offloads(self) -> bool:
        return memory.offloads(self.strategy)

    def label(self) -> str:
        return self.strategy.label() + (", checkpointing" if self.strategy.activation_checkpointing else "")

    def short(self) -> str:
        """The table's name of the row: the precision is the table's, ``+ckpt`` is checkpointing."""
        s = self.strategy
        if s.kind == "deepspeed":
            off = [w for w, d in (("opt", s.offload_optimizer), ("param", s.offload_param)) if d != "none"]
            name = f"ZeRO-{s.zero_stage}" + (f" offload {'+'.join(off)}" if off else "")
        elif s.kind == "fsdp1":
            name = f"FSDP1 {s.sharding}" + (" offload" if s.offload_params else "")
        elif s.kind == "fsdp2":
            name = f"FSDP2 {'reshard' if s.reshard_after_forward else 'no reshard'}" + (
                " offload" if s.offload_params else ""
            )
        else:
            name = "DDP" if s.kind == "ddp" else "one process"
        return name + (" +ckpt" if s.activation_checkpointing else "")

    @property
    def offloaded(self) -> int:
        """What goes to the host: the optimizer step (1), and the weights too (2; FSDP offloads both)."""
        return memory.offloaded(self.strategy)

    def rank(self) -> tuple[int, bool, float, float]:
        """Cheapest first, in the order ``check``'s suggestion uses too (:func:`memory.rank`)."""
        return memory.rank(self.strategy, self.estimate.per_gpu, self.comm)

    def to_json(self) -> dict[str, Any]:
        e = self.estimate
        return {
            "strategy": self.strategy.label(),
            "kind": self.strategy.kind,
            "activation_checkpointing": self.strategy.activation_checkpointing,
            "offload": self.offloads,
            "per_gpu_bytes": int(e.per_gpu),
            "host_ram_per_node_bytes": int(e.host),
            "gpu_fraction": self.gpu_fraction,
            "host_fraction": self.host_fraction,
            "verdict": self.verdict,
            "comm_cost": self.comm,
            "estimate": e.to_json()["per_gpu_bytes"],
        }


@dataclass(frozen=True)
class FitTable:
    """The rows of :func:`table` in the order of :func:`strategies`, and the machine they were judged on."""

    model: ModelSize
    layout: Layout
    gpu_name: str | None
    gpu_bytes: float | None
    host_bytes: float | None
    rows: tuple[Row, ...]
    seq_len: int | None = None
    micro_batch: int | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def fitting(self) -> list[Row]:
        """The rows that fit, cheapest first."""
        world = self.layout.world
        return sorted(
            (r for r in self.rows if r.verdict == "fits"),
            key=lambda r: (r.rank(), table_order(r.strategy, world)),
        )

    @property
    def cheapest(self) -> Row | None:
        fitting = self.fitting
        return fitting[0] if fitting else None

    def to_json(self) -> dict[str, Any]:
        best = self.cheapest
        return {
            "model": self.model.to_json(),
            "gpu": self.gpu_name,
            "gpu_memory_bytes": None if self.gpu_bytes is None else int(self.gpu_bytes),
            "host_ram_bytes": None if self.host_bytes is None else int(self.host_bytes),
            "gpus_per_node": self.layout.gpus_per_node,
            "nodes": self.layout.nodes,
            "seq_len": self.seq_len,
            "micro_batch": self.micro_batch,
            "comm_cost_model": "parameters sent per rank per step, relative to DDP's all-reduce (ZeRO/FSDP papers)",
            "rows": [r.to_json() for r in self.rows],
            "cheapest_that_fits": None if best is None else best.label(),
            "notes": list(self.notes),
        }


def row(
    s: Strategy,
    layout: Layout,
    model: ModelSize,
    gpu_bytes: float | None,
    host_bytes: float | None,
    *,
    seq_len: int | None = None,
    micro_batch: int | None = None,
    lora: Any = None,
) -> Row:
    """One strategy estimated and judged: the worse of the GPU's share and, with offload, the host's."""
    e = memory.estimate(s, layout, model, seq_len=seq_len, micro_batch=micro_batch, lora=lora)
    gpu = e.per_gpu / gpu_bytes if gpu_bytes else None
    host = e.host / host_bytes if host_bytes and memory.offloads(s) else None
    shares = [f for f in (gpu, host) if f is not None]
    trained = e.lora.trainable / max(1, model.params) if e.lora is not None else 1.0
    comm = comm_cost(s, trained) if layout.world > 1 else 0.0  # one GPU: nothing to send
    return Row(s, e, gpu, host, memory.verdict(max(shares)) if gpu is not None else "unknown", comm)


def table(
    model: ModelSize,
    layout: Layout,
    *,
    gpu_name: str | None,
    gpu_bytes: float | None,
    host_bytes: float | None = None,
    precision: str = "bf16",
    seq_len: int | None = None,
    micro_batch: int | None = None,
    lora: Any = None,
) -> FitTable:
    """Every strategy of :func:`strategies` for ``model`` on ``layout`` GPUs of ``gpu_bytes`` (training
    ``lora``'s adapters on a frozen base when given, a :class:`~accelconf.environment.lora.Adapter`)."""
    rows = tuple(
        row(s, layout, model, gpu_bytes, host_bytes, seq_len=seq_len, micro_batch=micro_batch, lora=lora)
        for s in strategies(precision, layout.world)
    )
    notes: list[str] = []
    if not (seq_len and micro_batch):
        notes.append("activations not included (give --seq-len and --micro-batch, with --model)")
    elif model.structure is None:
        notes.append("activations need the model's structure (config.json of a known family): give --model DIR")
    if host_bytes is None:
        notes.append("node RAM unknown (--host-ram GIB): offload rows are judged on the GPU only")
    return FitTable(
        model, layout, gpu_name, gpu_bytes, host_bytes, rows, seq_len, micro_batch, tuple(notes) + model.notes
    )


def table_for(report: memory.Report, lora: Any = None) -> FitTable | None:
    """Under a config that does not fit (or is tight): the table for the same model, machine and
    shapes (``check`` and the language server's hover show its rows that fit); ``None`` when the
    config fits or the GPU is unknown. A config in fp32 gets the bf16 rows, the precision to switch to."""
    if report.gpu_bytes is None or report.verdict == "fits":
        return None
    e = report.estimate
    act = e.activation_detail
    return table(
        e.model,
        e.layout,
        gpu_name=report.gpu_name,
        gpu_bytes=report.gpu_bytes,
        host_bytes=report.host_bytes,
        precision="bf16" if e.strategy.precision == "no" else e.strategy.precision,
        seq_len=act.seq_len if act is not None else None,
        micro_batch=act.micro_batch if act is not None else None,
        lora=lora,
    )


def for_model(
    model: Any,
    *,
    gpu: str | None = None,
    gpus: int = 1,
    nodes: int = 1,
    gpu_memory_gib: float | None = None,
    seq_len: int | None = None,
    micro_batch: int | None = None,
    attn: str | None = None,
    host_ram_gib: float | None = None,
    mixed_precision: str | None = None,
    lora_rank: int | None = None,
    lora_targets: Any = None,
    quant: str | None = None,
) -> FitTable:
    """:func:`table` for ``model`` (a :class:`~accelconf.environment.modelsize.ModelSize`, a model
    folder or a well-known model's name, or a parameter count such as ``"8B"``) on ``nodes`` x ``gpus``
    GPUs of model ``gpu`` (or of ``gpu_memory_gib``); what ``accelconf fit`` and
    :func:`accelconf.api.fit` run. ``mixed_precision`` defaults to bf16 where the GPU has it, else
    fp16; ``lora_rank`` (with ``lora_targets`` and ``quant``) trains LoRA/QLoRA adapters. Raises
    :class:`~accelconf.errors.UsageError` on a bad value."""
    adapter = adapter_of(lora_rank, lora_targets, quant)
    if isinstance(model, modelsize.ModelSize):
        size = model
    elif isinstance(model, int) or (isinstance(model, str) and _is_count(model)):
        size = modelsize.from_count(model)
    else:
        size = modelsize.resolve(model)
    size = modelsize.with_attention(size, attn)
    known = lookup(gpu) if gpu else None
    if gpu and known is None:
        raise UsageError(f"unknown GPU model {gpu!r}")
    memory_gib = gpu_memory_gib or (known.memory_gib if known else None)
    if not memory_gib:
        raise UsageError("fit needs a GPU model (gpu=...) or gpu_memory_gib=...")
    if gpus < 1 or nodes < 1:
        raise UsageError("gpus and nodes must be 1 or more")
    precision = mixed_precision or ("fp16" if known is not None and not known.bf16 else "bf16")
    return table(
        size,
        Layout(gpus, nodes),
        gpu_name=known.key if known else gpu,
        gpu_bytes=memory_gib * memory.GiB,
        host_bytes=host_ram_gib * memory.GiB if host_ram_gib else None,
        precision=precision,
        seq_len=seq_len,
        micro_batch=micro_batch,
        lora=adapter,
    )


def _is_count(text: str) -> bool:
    """``"8B"``, ``"70e9"``: a parameter count rather than a model's folder or name."""
    import os

    try:
        parse_count(text)
    except UsageError:
        return False
    return not os.path.isdir(text)


def config_for(s: Strategy, layout: Layout) -> dict[str, Any]:
    """The accelerate config (1.15's keys) that runs ``s`` on ``layout``: :func:`memory.strategy_of`
    reads it back as ``s``, and it validates clean. Checkpointing under DDP or DeepSpeed is in the
    model's code (``gradient_checkpointing_enable()``), not in the config."""
    data: dict[str, Any] = {
        "compute_environment": "LOCAL_MACHINE",
        "debug": False,
        "distributed_type": {
            "single": "NO",
            "ddp": "MULTI_GPU",
            "deepspeed": "DEEPSPEED",
            "fsdp1": "FSDP",
            "fsdp2": "FSDP",
        }[s.kind],
        "mixed_precision": s.precision,
        "num_machines": layout.nodes,
        "num_processes": layout.world,
        "machine_rank": 0,
        "main_training_function": "main",
        "use_cpu": False,
    }
    if layout.nodes > 1:
        data.update(main_process_ip="127.0.0.1", main_process_port=29500)
    if s.kind == "deepspeed":
        ds: dict[str, Any] = {
            "zero_stage": s.zero_stage,
            "offload_optimizer_device": s.offload_optimizer,
            "offload_param_device": s.offload_param,
            "zero3_init_flag": s.zero3_init,
            "gradient_accumulation_steps": 1,
        }
        if s.zero_stage == 3:
            ds["zero3_save_16bit_model"] = True
        if layout.nodes > 1:
            ds["deepspeed_multinode_launcher"] = registry.STANDARD_LAUNCHER
        data["deepspeed_config"] = ds
    elif s.kind in ("fsdp1", "fsdp2"):
        data["fsdp_config"] = _fsdp_section(s)
    return data


def _fsdp_section(s: Strategy) -> dict[str, Any]:
    f: dict[str, Any] = {
        "fsdp_version": 2 if s.kind == "fsdp2" else 1,
        "fsdp_auto_wrap_policy": "TRANSFORMER_BASED_WRAP",
        "fsdp_offload_params": s.offload_params,
        "fsdp_cpu_ram_efficient_loading": s.cpu_ram_efficient_loading,
        "fsdp_state_dict_type": "SHARDED_STATE_DICT",
        "fsdp_activation_checkpointing": s.activation_checkpointing,
    }
    if s.kind == "fsdp2":
        f["fsdp_reshard_after_forward"] = s.reshard_after_forward
    else:
        f.update(
            fsdp_sharding_strategy=s.sharding,
            fsdp_backward_prefetch="BACKWARD_PRE",
            fsdp_sync_module_states=True,
            fsdp_use_orig_params=True,
        )
    return f


def config_text(s: Strategy, layout: Layout) -> str:
    """:func:`config_for` as YAML, through the one YAML writer."""
    import json

    text, _ = formats.write(formats.read(json.dumps(config_for(s, layout)), "json"), "yaml")
    return text


def checkpointing_note(s: Strategy) -> str | None:
    """What the written config cannot say: checkpointing under DDP/DeepSpeed lives in the model's code."""
    if s.activation_checkpointing and s.kind not in ("fsdp1", "fsdp2"):
        return "enable activation checkpointing in the training script: model.gradient_checkpointing_enable()"
    return None


BAR_WIDTH = 20


def bar(fraction: float | None) -> str:
    """A bar of the GPU share, 20 cells to 100%, with a ``|`` at 80% (the margin); over 100% ends in ``>``."""
    if fraction is None:
        return ""
    cells = min(BAR_WIDTH, round(fraction * BAR_WIDTH))
    mark = round(memory.WARN_FRACTION * BAR_WIDTH)
    text = "".join("#" if i < cells else ("|" if i == mark else ".") for i in range(BAR_WIDTH))
    return text + (">" if fraction > 1 else "")


def render(
    t: FitTable, *, bars: bool = False, limit: int | None = None, only_fitting: bool = False, legend: bool = True
) -> str:
    """The text table: a head line, one line per strategy (``only_fitting``: the rows that fit,
    cheapest first, at most ``limit``), the cheapest row that fits, then (``legend``) the notes and
    what the columns mean."""
    rows = t.fitting if only_fitting else list(t.rows)
    rows = rows[:limit] if limit else rows
    gpu = f"{t.gpu_name} {memory.gib(t.gpu_bytes)}" if t.gpu_bytes else "GPU memory unknown"
    shape = f", seq {t.seq_len} x micro batch {t.micro_batch}" if t.seq_len and t.micro_batch else ""
    precision = rows[0].strategy.precision if rows else (t.rows[0].strategy.precision if t.rows else "")
    head = (
        f"fit: {t.model.params:,} parameters ({t.model.source}){shape}, "
        f"{'fp32' if precision == 'no' else precision}, on {t.layout.nodes} node"
        f"{'s' if t.layout.nodes != 1 else ''} x {t.layout.gpus_per_node} {gpu}"
    )
    out = [head]
    width = max([len(r.short()) for r in rows] + [8])
    chart = f"  {'':<{BAR_WIDTH + 1}}" if bars else ""
    out.append(
        f"  {'strategy':<{width}}  {'per GPU':>10}  {'share':>5}{chart}  {'host/node':>11}  {'comm':>6}  verdict"
    )
    for r in rows:
        share = f"{r.gpu_fraction:.0%}" if r.gpu_fraction is not None else "-"
        flags = "".join(
            f" +{w}" for w, on in (("PCIe", r.offloads), ("recompute", r.strategy.activation_checkpointing)) if on
        )
        chart = f"  {bar(r.gpu_fraction):<{BAR_WIDTH + 1}}" if bars else ""
        out.append(
            f"  {r.short():<{width}}  {memory.gib(r.estimate.per_gpu):>10}  {share:>5}{chart}  "
            f"{memory.gib(r.estimate.host):>11}  {r.comm:>5.1f}x  {r.verdict}{flags}"
        )
    best = t.cheapest
    out.append(
        f"  cheapest that fits: {best.label()}" if best else "  nothing fits: a smaller model, more or bigger GPUs"
    )
    if legend:
        out += [f"  note: {n}" for n in t.notes]
        out.append(
            "  per GPU: the step's peak (states by phase, activations, CUDA context and NCCL buffers, "
            "estimated); fits under 80%, tight 80-100%"
        )
        out.append(
            "  comm: parameters sent per rank per step relative to DDP's all-reduce (ZeRO/FSDP papers); "
            "+PCIe: offload copies, +recompute: one more forward"
        )
    return "\n".join(out) + "\n"
