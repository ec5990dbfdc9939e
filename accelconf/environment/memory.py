"""Will it fit? Training memory per GPU and host RAM per node for a config, a model and a machine.

This module owns :class:`Strategy` (what a config does with memory: DDP, ZeRO 0-3 with offload,
FSDP1's sharding strategies, FSDP2's resharding and offload, the precision), :func:`estimate` (the
bytes per GPU, split into parameters, gradients, optimizer state, the gathered layer and, when the
sequence length and micro batch are given, activations), the ``mem-*`` findings with the cheapest
change that fits, found by trying the alternatives, and the table ``accelconf check`` prints.
Model sizes come from :mod:`accelconf.environment.modelsize`; GPU models from
:mod:`accelconf.environment.gpus`.

The arithmetic, and where it comes from:

* ZeRO-2 and ZeRO-3 with 16-bit mixed precision are DeepSpeed's own estimators, term for term
  (``estimate_zero2_model_states_mem_needs`` in ``deepspeed/runtime/zero/stage_1_and_2.py``,
  ``estimate_zero3_model_states_mem_needs`` in ``deepspeed/runtime/zero/stage3.py``): 2 bytes of
  16-bit weights plus 18 bytes per parameter of gradients (16-bit and fp32), fp32 master weights
  and AdamW's two fp32 moments, divided by the GPUs that share them; host RAM per node with
  DeepSpeed's 1.5 buffer factor. ZeRO-1 and stage 0 follow the same accounting with the gradients
  (stage 1) or everything (stage 0) left whole. NVMe offload moves the same bytes to disk.
* DDP and FSDP under accelerate keep fp32 weights (``mixed_precision`` autocasts, and FSDP's
  ``MixedPrecision`` gathers 16-bit copies): 4 bytes of weights, 4 of gradients, 8 of AdamW moments
  per parameter, sharded over the FSDP group (the world; a node for the HYBRID strategies). The
  gathered unit costs 16-bit weights plus gradients of the largest FSDP unit, as DeepSpeed counts
  ``4 * largest_layer_params``; SHARD_GRAD_OP, HYBRID_SHARD_ZERO2 and FSDP2 with
  ``reshard_after_forward: false`` keep the whole 16-bit model gathered between forward and backward.
  FSDP2 shards every tensor on dim 0 (``torch.chunk``), so with the tensors known the first rank's
  exact element count is used.
* Activations (only with a sequence length and micro batch, and a model whose structure is known
  from its ``config.json``): :mod:`accelconf.environment.activations`, what autograd saves for
  backward tensor by tensor, the fp32 logits of the loss and the largest transient; checkpointing
  keeps the layer inputs and recomputes one layer at a time.

The peak of the step (:attr:`Estimate.per_gpu`) is the larger of two phases plus two per-GPU
constants: forward/backward (the states above, the gathered unit, the communication buckets, the
activations) and the optimizer step (the sharded states and AdamW's temporaries), plus the CUDA
context and NCCL's buffers per communicator, both estimated (see their definitions for the sources).
The verdict (:func:`verdict`) judges that peak: under 80% fits, 80-100% tight. Outside the estimate:
allocator fragmentation.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from accelconf import catalogue, releases
from accelconf.accelerate import registry
from accelconf.accelerate.deepspeed_file import legacy_offload_key, to_accelerate_section
from accelconf.accelerate.fmt import apply_edits
from accelconf.accelerate.model import Config, config_of, from_document, value_reader
from accelconf.deepspeed import config_file_path
from accelconf.deepspeed.keys import Paths
from accelconf.environment import activations as act
from accelconf.environment import lora as lora_mod
from accelconf.environment.checks import finding_at, target_release
from accelconf.environment.modelsize import ModelSize
from accelconf.environment.wrapclass import wrap_findings
from accelconf.findings import Finding
from accelconf.kinds import is_deepspeed_data
from accelconf.text.document import Document, load_file, load_text
from accelconf.text.edit import set_value

GiB = float(1 << 30)
MiB = float(1 << 20)
RULE_IDS: dict[str, str] = catalogue.describe("memory")
# Under 80% of the GPU's memory "fits": the share under which Fujii et al. (2024, "Accelerating Large
# Language Model Training with 4D Parallelism and Memory Consumption Estimator") saw no out-of-memory
# in 454 runs; 80-100% is "tight" (allocator fragmentation decides), over 100% "does not fit".
WARN_FRACTION = 0.80
VERDICTS = ("fits", "tight", "does not fit")

# Outside the model states, each labelled "estimated" where it is shown:
# * the CUDA context and the libraries' handles and workspaces of one process on one GPU (the driver's
#   context with lazy module loading, which torch turns on by setting CUDA_MODULE_LOADING=LAZY in
#   torch/cuda/__init__.py, plus cuBLAS's workspace, 32 MiB per handle on Hopper by PyTorch's default
#   CUBLAS_WORKSPACE_CONFIG, and cuDNN's): about 0.5-0.8 GiB on current GPUs, outside the caching allocator;
CUDA_CONTEXT = 640 * MiB
# * NCCL's buffers per communicator: NCCL_BUFFSIZE (4 MiB by default, NCCL's environment-variable
#   docs) for the SIMPLE protocol plus LL128's and LL's smaller buffers (about 9 MiB per channel), over
#   the channels NCCL opens on an NVLink node (16 assumed; NCCL_MAX_NCHANNELS caps them).
NCCL_PER_COMMUNICATOR = 16 * 9 * MiB
# DeepSpeed's ZeroConfig defaults (deepspeed/runtime/zero/config.py): reduce_bucket_size 5e8 elements,
# stage3_prefetch_bucket_size 5e7; overlap_comm defaults to true for stage 3 only (its validator).
DS_REDUCE_BUCKET = 500_000_000
DS_PREFETCH_BUCKET = 50_000_000


def verdict(fraction: float | None) -> str:
    """The one verdict of a share of memory (per GPU, or of the node's RAM): under 80% "fits",
    80-100% "tight", over 100% "does not fit"; ``None`` when the memory is not known."""
    if fraction is None:
        return "unknown"
    return "does not fit" if fraction > 1 else ("tight" if fraction >= WARN_FRACTION else "fits")


Kind = Literal["single", "ddp", "deepspeed", "fsdp1", "fsdp2"]
SHARDED_GROUP = {name: group for name, (_, group) in registry.SHARDING.items()}


@dataclass(frozen=True)
class Strategy:
    """What a config does with memory. ``precision`` is accelerate's ``mixed_precision`` (no = fp32)."""

    kind: Kind
    precision: str = "no"
    zero_stage: int = 0
    offload_optimizer: str = "none"
    offload_param: str = "none"
    zero3_init: bool = False
    sharding: str = "FULL_SHARD"  # FSDP1
    reshard_after_forward: bool = True  # FSDP2
    offload_params: bool = False  # FSDP
    activation_checkpointing: bool = False
    cpu_ram_efficient_loading: bool = False
    activation_checkpointing_offload: bool = False  # FSDP2: the checkpointed layer inputs go to host RAM
    reduce_bucket: int | str | None = None  # DeepSpeed's reduce_bucket_size (elements, "auto"; None: default)
    overlap_comm: bool | None = None  # DeepSpeed's overlap_comm (None: its default)
    prefetch_bucket: int | str | None = None  # DeepSpeed's stage3_prefetch_bucket_size (as reduce_bucket)

    def label(self) -> str:
        p = "fp32" if self.precision == "no" else self.precision
        if self.kind == "deepspeed":
            off = [
                f"offload_{w} {d}"
                for w, d in (("optimizer", self.offload_optimizer), ("param", self.offload_param))
                if d != "none"
            ]
            return f"DeepSpeed ZeRO-{self.zero_stage}" + "".join(f", {o}" for o in off) + f", {p}"
        if self.kind == "fsdp1":
            return f"FSDP1 {self.sharding}" + (", offload_params" if self.offload_params else "") + f", {p}"
        if self.kind == "fsdp2":
            return (
                f"FSDP2 reshard_after_forward={str(self.reshard_after_forward).lower()}"
                + (", offload_params" if self.offload_params else "")
                + f", {p}"
            )
        return ("DDP" if self.kind == "ddp" else "one process") + f", {p}"


@dataclass(frozen=True)
class Layout:
    """Processes per node and nodes."""

    gpus_per_node: int
    nodes: int = 1

    @property
    def world(self) -> int:
        return self.gpus_per_node * self.nodes


@dataclass(frozen=True)
class Estimate:
    """Bytes per GPU (the busiest rank) and host RAM / NVMe per node for one strategy and layout.

    ``elements`` are the busiest rank's local parameter, gradient and optimizer-state elements
    (FSDP2 with known tensors only; AdamW's ``step`` counts one element per tensor).
    """

    strategy: Strategy
    layout: Layout
    model: ModelSize
    params: float
    grads: float
    optimizer: float
    gathered: float
    activations: float | None
    host: float
    nvme: float = 0.0
    activation_formula: str | None = None
    notes: tuple[str, ...] = ()
    elements: dict[str, int] | None = None
    activation_detail: Any = None  # an activations.Activations, for its labelled lines
    lora: Any = None  # a lora.Split: trainable adapters and the frozen base, when LoRA/QLoRA runs
    buckets: float = 0.0  # communication buckets alive in backward (DDP's, ZeRO's, a prefetched unit)
    step_buckets: float = 0.0  # of those, what stays through the optimizer step (DDP's bucket copy)
    step_temporaries: float = 0.0
    cuda_context: float = 0.0
    nccl: float = 0.0
    communicators: int = 0

    @property
    def model_states(self) -> float:
        """Parameters, gradients, optimizer state and the gathered unit: DeepSpeed's estimators' figure."""
        return self.params + self.grads + self.optimizer + self.gathered

    @property
    def forward_backward(self) -> float:
        """The peak of forward and backward: the states, the gathered unit, the buckets, the activations."""
        return self.model_states + self.buckets + (self.activations or 0.0)

    @property
    def optimizer_step(self) -> float:
        """The peak of the optimizer step: the sharded states and the step's temporaries (activations
        and gathered units are freed by then)."""
        return self.params + self.grads + self.optimizer + self.step_buckets + self.step_temporaries

    @property
    def per_gpu(self) -> float:
        """The peak of the step on the busiest GPU: the larger phase, the CUDA context and NCCL's buffers."""
        return max(self.forward_backward, self.optimizer_step) + self.cuda_context + self.nccl

    def to_json(self) -> dict[str, Any]:
        return {
            "strategy": self.strategy.label(),
            "gpus_per_node": self.layout.gpus_per_node,
            "nodes": self.layout.nodes,
            "per_gpu_bytes": {
                "params": int(self.params),
                "grads": int(self.grads),
                "optimizer": int(self.optimizer),
                "gathered": int(self.gathered),
                "model_states": int(self.model_states),
                "activations": None if self.activations is None else int(self.activations),
                "buckets": int(self.buckets),
                "step_temporaries": int(self.step_temporaries),
                "forward_backward": int(self.forward_backward),
                "optimizer_step": int(self.optimizer_step),
                "cuda_context_estimated": int(self.cuda_context),
                "nccl_estimated": int(self.nccl),
                "total": int(self.per_gpu),
            },
            "nccl_communicators": self.communicators,
            "host_ram_per_node_bytes": int(self.host),
            "nvme_per_node_bytes": int(self.nvme),
            "activation_formula": self.activation_formula,
            "notes": list(self.notes),
            **({"elements_per_rank": self.elements} if self.elements else {}),
            **({"lora": self.lora.to_json()} if self.lora is not None else {}),
        }


# -- reading a config ---------------------------------------------------------------------------


def _bool(v: Any, default: bool) -> bool:
    """A written boolean as accelerate's str_to_bool reads it (the registry's words), else ``default``."""
    if isinstance(v, bool):
        return v
    if isinstance(v, str):
        low = v.strip().lower()
        if low in registry.TRUE_WORDS:
            return True
        if low in registry.FALSE_WORDS:
            return False
    return default


_FSDP_PREFIX = registry.SECTIONS["fsdp_config"].prefix or ""


def _standalone_ds_json(data: dict[str, Any]) -> bool:
    """A DeepSpeed JSON itself rather than an accelerate config (the recogniser decides)."""
    return not data.get("distributed_type") and is_deepspeed_data(data)


def _ds_json_ref(cfg: Config) -> str | None:
    """The ``deepspeed_config_file`` the config names, as written (validate reports one that is not a string)."""
    ref = cfg.get("deepspeed_config.deepspeed_config_file")
    return ref if isinstance(ref, str) and ref else None


def _ds_json_data(cfg: Config, path: str | None) -> dict[str, Any] | None:
    ref = _ds_json_ref(cfg)
    if ref is None:
        return None

    full = config_file_path(ref, path)
    if full is None:
        return None
    try:
        loaded = load_file(full, "json").data
    except Exception:  # noqa: BLE001 - validate reports an unreadable deepspeed_config_file
        return None
    return loaded if isinstance(loaded, dict) else None


def strategy_of(
    data: dict[str, Any] | Config, path: str | None = None, accelerate_version: str | None = None
) -> tuple[Strategy, list[str]]:
    """The memory strategy of a loaded accelerate config (its data or its Config), or of a DeepSpeed
    JSON, under that accelerate release (``None``: the newest), and notes on what was assumed.
    Values are read as accelerate reads them (:func:`accelconf.accelerate.registry.read_value`): a
    value it refuses (``distributed_type: fsdp``) is not taken for a valid one. Defaults are
    accelerate 1.15's (``utils/dataclasses.py``: ZeRO stage 2, ``zero3_init_flag`` on for stage 3,
    FSDP1 FULL_SHARD, FSDP2 ``reshard_after_forward`` true); a release before FSDP2 runs FSDP1
    whatever ``fsdp_version`` says."""
    if isinstance(data, dict) and _standalone_ds_json(data):
        return _zero_strategy("no", {}, data, False)
    cfg = config_of(data, accelerate_version)
    read = value_reader(cfg, accelerate_version)
    dt = read("distributed_type", "")
    precision = read("mixed_precision", "no")
    if dt == "DEEPSPEED":
        ds_json = _ds_json_data(cfg, path)
        # a precision the file does not write as a string is the JSON's (bf16.enabled, fp16.enabled)
        written = isinstance(cfg.get("mixed_precision"), str)
        return _zero_strategy(precision, cfg.section("deepspeed_config"), ds_json, written)
    if dt == "FSDP":
        return _fsdp_strategy(cfg, read, precision, accelerate_version)
    if dt in ("MULTI_GPU", "MEGATRON_LM"):
        notes = ["Megatron-LM tensor/pipeline parallelism is not modelled: estimated as data parallel"]
        return Strategy("ddp", precision), notes if dt == "MEGATRON_LM" else []
    return Strategy("single", precision), []


def _zero_strategy(
    precision: str, section: dict[str, Any], ds: dict[str, Any] | None, precision_written: bool
) -> tuple[Strategy, list[str]]:
    """ZeRO from the ``deepspeed_config`` section and the DeepSpeed JSON (which wins where both say)."""
    notes: list[str] = []
    sec = dict(section)
    if ds is not None:
        mapped, _ = to_accelerate_section(ds)
        json_precision = mapped.pop("mixed_precision", None)
        if json_precision is not None and not precision_written:
            precision = str(json_precision)
        sec.update(mapped)
    stage_setting = registry.get("deepspeed_config", "zero_stage")
    stage = stage_setting.canonical_value(sec.get("zero_stage")) if stage_setting else sec.get("zero_stage")
    if not isinstance(stage, int) or isinstance(stage, bool) or stage not in (0, 1, 2, 3):
        if stage is not None:
            notes.append(f"zero_stage {stage!r} is not 0-3: the plugin default (2) was assumed")
        stage = 2
    off_o = str(sec.get("offload_optimizer_device") or "none").lower()
    off_p = str(sec.get("offload_param_device") or "none").lower()
    init = _bool(sec.get("zero3_init_flag"), stage == 3) and stage == 3
    bucket, overlap, prefetch = _buckets_of(ds)
    return Strategy(
        "deepspeed",
        precision,
        stage,
        off_o if off_o in ("cpu", "nvme") else "none",
        off_p if off_p in ("cpu", "nvme") and stage == 3 else "none",
        init,
        reduce_bucket=bucket,
        overlap_comm=overlap,
        prefetch_bucket=prefetch,
    ), notes


def _fsdp_strategy(
    cfg: Config, read: Callable[..., Any], precision: str, accelerate_version: str | None
) -> tuple[Strategy, list[str]]:
    """FSDP1 or FSDP2 from ``fsdp_config`` (its unprefixed spellings are the Config's canonical keys)."""
    f = "fsdp_config."
    version = releases.fsdp_version_runs(read(f + "fsdp_version"), accelerate_version)
    common: dict[str, Any] = dict(
        offload_params=read(f + "fsdp_offload_params", False),
        activation_checkpointing=read(f + "fsdp_activation_checkpointing", False),
        activation_checkpointing_offload=read(f + "fsdp_activation_checkpointing_offload", False),
        cpu_ram_efficient_loading=read(f + "fsdp_cpu_ram_efficient_loading", False),
    )
    if version == 2:
        reshard = read(f + "fsdp_reshard_after_forward", True)
        return Strategy("fsdp2", precision, reshard_after_forward=reshard, **common), []
    raw = cfg.get(f + "fsdp_sharding_strategy")
    if raw is None and isinstance(cfg.get(f + "fsdp_reshard_after_forward"), str):
        raw = cfg.get(f + "fsdp_reshard_after_forward")  # accelerate's FSDP1 fallback
    setting = registry.get("fsdp_config", "fsdp_sharding_strategy")
    sharding = setting.canonical_value(raw) if setting and raw is not None else "FULL_SHARD"
    notes = []
    if sharding not in SHARDED_GROUP:
        notes.append(f"fsdp_sharding_strategy {raw!r} is not known: FULL_SHARD assumed")
        sharding = "FULL_SHARD"
    return Strategy("fsdp1", precision, sharding=sharding, **common), notes


def _buckets_of(ds: dict[str, Any] | None) -> tuple[int | str | None, bool | None, int | str | None]:
    """``reduce_bucket_size``, ``overlap_comm`` and ``stage3_prefetch_bucket_size`` of a DeepSpeed
    JSON's ``zero_optimization`` (only there: accelerate's plugin writes none of them, so DeepSpeed's
    defaults apply without a JSON)."""
    z = ds.get("zero_optimization") if isinstance(ds, dict) else None
    if not isinstance(z, dict):
        return None, None, None

    def size(raw: Any) -> int | str | None:
        if raw == "auto":
            return "auto"
        return int(raw) if isinstance(raw, (int, float)) and not isinstance(raw, bool) and raw > 0 else None

    overlap = z.get("overlap_comm")
    return (
        size(z.get("reduce_bucket_size")),
        overlap if isinstance(overlap, bool) else None,
        size(z.get("stage3_prefetch_bucket_size", z.get("prefetch_bucket_size"))),
    )


def layout_of(data: dict[str, Any] | Config, gpus_per_node: int | None, nodes: int | None) -> Layout:
    """The process layout: the config's ``num_processes`` (a total) over ``num_machines``, else the target's."""
    cfg = config_of(data)
    read = value_reader(cfg, None)

    def pos(path: str) -> int | None:
        v = read(path)
        return v if v is not None and v > 0 else None

    machines = pos("num_machines") or nodes or 1
    total = pos("num_processes")
    if read("distributed_type") == "NO":
        return Layout(1, 1)
    if total is not None:
        return Layout(max(1, total // machines), machines)
    return Layout(gpus_per_node or 1, machines)


# -- the arithmetic -----------------------------------------------------------------------------


def _compute_bytes(precision: str) -> int:
    return 4 if precision == "no" else 2


def fsdp2_local_elements(tensors: Iterable[tuple[str, tuple[int, ...]]], world: int, rank: int) -> int:
    """Elements ``fully_shard`` leaves on ``rank``: each tensor split on dim 0 like ``torch.chunk``
    (``torch/distributed/fsdp/_fully_shard/_fsdp_param.py``: chunk size ceil(dim0 / world))."""
    total = 0
    for _, shape in tensors:
        if not shape:
            total += 1 if rank == 0 else 0
            continue
        rows = shape[0]
        chunk = -(-rows // world)
        mine = max(0, min(chunk, rows - rank * chunk))
        rest = 1
        for d in shape[1:]:
            rest *= d
        total += mine * rest
    return total


def _zero(s: Strategy, lay: Layout, m: ModelSize) -> Estimate:
    """DeepSpeed ZeRO, with DeepSpeed's estimator arithmetic for stages 2 and 3 (see module doc).

    Per parameter under 16-bit mixed precision DeepSpeed counts 2 bytes of 16-bit weights and 18
    more: 2 of 16-bit gradients, 4 of fp32 gradients, 4 of fp32 master weights, 8 of AdamW moments
    (``stage_1_and_2.py``); ZeRO-3 counts 18 for everything it shards. Under fp32 the weights take
    4 bytes and there is no 16-bit gradient; DeepSpeed still keeps an fp32 master copy.
    """
    P, n, g = m.params, lay.world, lay.gpus_per_node
    buf = 1.5  # DeepSpeed's additional_buffer_factor
    fp32 = s.precision == "no"
    notes: list[str] = ["fp32: 4-byte weights and gradients, fp32 master copy and AdamW moments"] if fp32 else []
    w, extra = (4, 2) if fp32 else (2, 0)  # fp32 adds 2 bytes of weights to DeepSpeed's 16-bit figures
    opt_off = s.offload_optimizer != "none"
    nvme = 0.0
    if s.zero_stage == 3:
        largest = float(2 * w * m.largest_layer)  # 4 * largest_layer_params in 16-bit
        gf = 1 / lay.nodes
        if opt_off and s.offload_param != "none":
            params = grads = optim = 0.0
            k = 18 + extra
            host = P * (k * gf if s.zero3_init else max(4 * g, k * gf)) * buf
        elif opt_off:
            params, grads, optim = float(int(w * P / n)), 0.0, 0.0
            k = 16 + extra
            host = P * (k * gf if s.zero3_init else max(4 * g, k * gf)) * buf
        else:
            total = int((18 + extra) * P / n)
            params, optim = w * P / n, 12 * P / n
            grads = total - params - optim
            host = (m.largest_layer if s.zero3_init else P) * 4 * g * buf
            if s.offload_param == "cpu":  # weights on the host, optimizer on the GPU (no DeepSpeed estimator)
                host += w * P * gf * buf
                params = 0.0
        if s.offload_optimizer == "nvme":
            nvme += 16 * P / lay.nodes  # fp32 gradients, master weights and moments
            host = (m.largest_layer if s.zero3_init else P) * 4 * g * buf
        if s.offload_param == "nvme":
            nvme += w * P / lay.nodes
        return Estimate(s, lay, m, params, grads, optim, largest, None, float(int(host)), nvme, notes=tuple(notes))
    # stages 0-2: the 16-bit weights stay whole on every GPU
    if s.zero_stage == 0 and opt_off:
        notes.append("offload_optimizer needs ZeRO 1-3: ignored at stage 0")
        opt_off = False
    shard = n if s.zero_stage >= 1 else 1
    params = float(w * P)
    if opt_off:
        grads = optim = 0.0
        host = P * max(4 * n, 16) * buf
        if s.offload_optimizer == "nvme":
            nvme = 16 * P / lay.nodes
            host = P * 4 * g * buf
    else:
        low = 0 if fp32 else 2
        whole = low * P if s.zero_stage < 2 else 0.0  # ZeRO-1 keeps the 16-bit gradients whole
        sharded = int((16 + (low if s.zero_stage >= 2 else 0)) * P / shard)
        optim = 12 * P / shard
        grads = whole + sharded - optim
        host = P * 4 * g * buf
    return Estimate(s, lay, m, params, grads, optim, 0.0, None, float(int(host)), nvme, notes=tuple(notes))


def _fsdp(s: Strategy, lay: Layout, m: ModelSize) -> Estimate:
    """DDP, FSDP1 and FSDP2 under accelerate: fp32 weights, fp32 gradients, AdamW's two moments."""
    P, c = m.params, _compute_bytes(s.precision)
    notes: list[str] = []
    if s.kind in ("ddp", "single"):
        group, gathered_whole, live = 1, False, 0.0
    elif s.kind == "fsdp1":
        kind = SHARDED_GROUP[s.sharding]
        group = {"world": lay.world, "node": lay.gpus_per_node, "one": 1}[kind]
        # NO_SHARD's weights are the fp32 ones, unless they are offloaded: then a whole copy comes over
        gathered_whole = s.sharding in ("SHARD_GRAD_OP", "HYBRID_SHARD_ZERO2") or (
            s.sharding == "NO_SHARD" and s.offload_params
        )
        live = 0.0 if s.sharding == "NO_SHARD" and not s.offload_params else 2.0 * c * m.largest_unit
    else:
        group, gathered_whole = lay.world, not s.reshard_after_forward
        live = 2.0 * c * m.largest_unit
    elements = None
    if s.kind == "fsdp2" and m.tensors:
        local = fsdp2_local_elements(m.tensors, group, 0)
        elements = {"params": local, "grads": local, "optimizer": 2 * local + len(m.tensors)}
        shard_params = float(local)
    else:
        shard_params = P / group
    if gathered_whole:
        live = c * m.largest_unit  # the weights are already gathered: only the unit's gradient
    on_gpu = not s.offload_params
    params = 4 * shard_params if on_gpu else 0.0
    grads = 4 * shard_params if on_gpu else 0.0
    optim = 8 * shard_params + (4 * len(m.tensors) if elements else 0) if on_gpu else 0.0
    gathered = live + (c * P if gathered_whole else 0.0)
    if s.kind in ("ddp", "single"):
        gathered = 0.0
    if s.precision != "no" and s.kind in ("ddp", "single"):
        notes.append(f"{s.precision} autocasts: weights, gradients and optimizer state stay fp32")
    offloaded = 16 * P / group * lay.gpus_per_node if s.offload_params else 0.0
    load = 4 * P * (1 if s.cpu_ram_efficient_loading else lay.gpus_per_node)
    host = max(offloaded, load)
    return Estimate(s, lay, m, params, grads, optim, gathered, None, host, notes=tuple(notes), elements=elements)


def _bucket_elements(value: int | str | None, auto: float, default: int, m: ModelSize) -> int:
    """A DeepSpeed bucket in elements: as configured, ``"auto"`` as accelerate fills it from the
    model's ``hidden_size`` (``accelerator.py``: reduce_bucket_size ``h * h``, stage3_prefetch_bucket_size
    ``0.9 * h * h``), else DeepSpeed's default; never more than the model."""
    if value == "auto":
        hidden = m.structure.hidden if m.structure is not None else (m.arch.hidden if m.arch is not None else None)
        value = int(auto * hidden * hidden) if hidden else default
    return min(value if isinstance(value, int) else default, m.params)


def _buckets(est: Estimate) -> tuple[float, float]:
    """Communication buffers alive in backward, and those still alive at the optimizer step (for
    LoRA, of the trainable adapters' gradients; a prefetched unit in the frozen base's bytes)."""
    s, m = est.strategy, est.model
    c = _compute_bytes(s.precision)
    trained = est.lora.trainable if est.lora is not None else m.params
    if s.kind == "ddp":
        # accelerate's DistributedDataParallelKwargs keeps gradient_as_bucket_view=False: the reducer's
        # buckets are a second copy of the (fp32) gradients for the whole run (torch/nn/parallel/distributed.py:
        # "the saved memory size will be equal to the total gradients size" with it on)
        return est.grads, est.grads
    if s.kind == "deepspeed":
        bucket = min(_bucket_elements(s.reduce_bucket, 1.0, DS_REDUCE_BUCKET, m), trained)
        overlap = s.overlap_comm if s.overlap_comm is not None else s.zero_stage == 3
        if s.zero_stage == 3:
            # stage3.py: one contiguous reduce bucket, plus the parameters prefetched ahead of use
            prefetch = _bucket_elements(s.prefetch_bucket, 0.9, DS_PREFETCH_BUCKET, m)
            return float(c * bucket + c * prefetch), 0.0
        # stage_1_and_2.py setup_buckets: buf_0, and buf_1 under overlap_comm; stage 0: the engine's
        # buffered all-reduce flattens buckets of the same size
        return float(c * bucket * (2 if overlap and s.zero_stage else 1)), 0.0
    resharded = (s.kind == "fsdp1" and s.sharding in ("FULL_SHARD", "HYBRID_SHARD")) or (
        s.kind == "fsdp2" and s.reshard_after_forward
    )
    # the next unit all-gathered while this one computes its gradients: FSDP1's default
    # BackwardPrefetch.BACKWARD_PRE, FSDP2's implicit backward prefetch of one unit
    unit_bytes = (
        c * m.largest_unit
        if est.lora is None
        else (est.lora.base_bytes - est.lora.constants) * m.largest_unit / max(1, m.params)
    )
    return (float(unit_bytes) if resharded else 0.0), 0.0


def _step_terms(est: Estimate) -> Estimate:
    """The estimate with the phases' extra terms: buckets, the optimizer step's temporaries, the CUDA
    context and NCCL's buffers (estimated constants, see their definitions)."""
    s, lay = est.strategy, est.layout
    buckets, step_buckets = _buckets(est)
    # PyTorch's AdamW (foreach, the default on CUDA) takes the square root of exp_avg_sq into a new
    # tensor per parameter (torch/optim/adam.py, _multi_tensor_adam): one fp32 copy of what the rank
    # optimizes, half its two moments. DeepSpeed's FusedAdam updates in place (multi_tensor_apply);
    # offloaded steps run on the CPU (their optimizer state is then 0 here).
    temps = est.optimizer / 2 if s.kind != "deepspeed" else 0.0
    comms = (
        0
        if s.kind == "single" or lay.world == 1
        else (2 if s.kind == "fsdp1" and s.sharding.startswith("HYBRID") and lay.nodes > 1 else 1)
    )
    return replace(
        est,
        buckets=buckets,
        step_buckets=step_buckets,
        step_temporaries=float(temps),
        cuda_context=CUDA_CONTEXT,
        nccl=comms * NCCL_PER_COMMUNICATOR,
        communicators=comms,
    )


def activations(m: ModelSize, s: Strategy, seq_len: int, micro_batch: int) -> Any:
    """What one micro batch's activations take per GPU (an :class:`~accelconf.environment.activations.Activations`),
    from the model's structure, the compute dtype and the checkpointing of ``s``."""
    assert m.structure is not None
    return act.estimate(
        m.structure,
        seq_len,
        micro_batch,
        _compute_bytes(s.precision),
        checkpointing=s.activation_checkpointing,
        cpu_offload=s.activation_checkpointing_offload and s.kind == "fsdp2",
    )


def estimate(
    strategy: Strategy,
    layout: Layout,
    model: ModelSize,
    *,
    seq_len: int | None = None,
    micro_batch: int | None = None,
    lora: Any = None,
) -> Estimate:
    """The estimate for one strategy on one layout. Activations need ``seq_len``, ``micro_batch``
    and a model whose shape is known (``--model``); otherwise they are left out (``None``).
    ``lora`` (a :class:`~accelconf.environment.lora.Adapter`) trains adapters on a frozen base."""
    est = _zero(strategy, layout, model) if strategy.kind == "deepspeed" else _fsdp(strategy, layout, model)
    split = lora_mod.split(model, lora, _compute_bytes(strategy.precision)) if lora is not None else None
    if split is not None:
        est = lora_mod.apply(est, split)
    est = _step_terms(est)
    if strategy.precision == "fp8":
        est = replace(
            est,
            notes=est.notes
            + ("fp8 is used inside the matmuls; weights, gradients and optimizer state are counted as under bf16",),
        )
    if seq_len and micro_batch:
        if model.structure is None:
            return replace(
                est,
                notes=est.notes
                + ("activations need the model's structure (config.json of a known family): give --model DIR",),
            )
        act = activations(model, strategy, seq_len, micro_batch)
        act = lora_mod.activation_lines(split, act) if split is not None else act
        notes = est.notes + (
            f"activations counted for {'fp32' if act.dtype_bytes == 4 else '16-bit'} compute "
            "(weights in the compute dtype, as FSDP/DeepSpeed mixed precision runs them)",
        )
        return replace(
            est,
            activations=act.peak,
            activation_formula=act.formula(),
            notes=notes,
            host=est.host + act.host * layout.gpus_per_node,
            activation_detail=act,
        )
    return est


# -- alternatives -------------------------------------------------------------------------------

Edit = tuple[str, Any]  # (accelerate config key path, value); the path "" is a change outside the config
Step = tuple[str, tuple[Edit, ...]]  # what to write, and the config edits it stands for


@dataclass(frozen=True)
class Change:
    """A candidate: the strategy and layout after the change, what to write, and a relative cost.
    ``edits`` holds, for each of ``words``, the config edits it stands for (:func:`place` puts them
    where the setting lives, :func:`apply_change` makes them)."""

    strategy: Strategy
    layout: Layout
    words: tuple[str, ...]
    cost: float
    edits: tuple[tuple[Edit, ...], ...] = ()
    tier: float = 0.0  # the precision and layout part of ``cost``: more GPUs only when nothing else fits


def _step(*edits: Edit, words: str | None = None) -> Step:
    """One step of a change, written as the YAML key it sets (``zero_stage: 3``) unless ``words``."""

    def text(v: Any) -> str:
        return str(v).lower() if isinstance(v, bool) else str(v)

    return words or ", ".join(f"{k.rsplit('.', 1)[-1]}: {text(v)}" for k, v in edits), edits


def _alternatives(s: Strategy, lay: Layout, bf16_ok: bool) -> list[Change]:
    """Every strategy worth trying, with a rough cost: more sharding costs communication, offload
    costs step time, more GPUs cost GPUs (the most)."""
    out: list[Change] = []
    precisions: list[tuple[str, tuple[Step, ...], float]] = [(s.precision, (), 0.0)]
    if s.precision == "no" and bf16_ok:  # fp32 first gets bf16, as fit's table for it (fit.table_for)
        precisions = [("bf16", (_step(("mixed_precision", "bf16")),), 0.0), (s.precision, (), 1.0)]
    layouts: list[tuple[Layout, tuple[Step, ...], float]] = [(lay, (), 0.0)]
    for k in (2, 4, 8):
        bigger = Layout(lay.gpus_per_node, lay.nodes * k)
        layouts.append(
            (
                bigger,
                (
                    _step(
                        ("num_machines", bigger.nodes),
                        ("num_processes", bigger.world),
                        words=f"num_machines: {bigger.nodes}, num_processes: {bigger.world} ({bigger.world} GPUs)",
                    ),
                ),
                10.0 * k,
            )
        )
    for prec, pw, pc in precisions:
        for L, lw, lc in layouts:
            for strat, sw, sc in _strategies(replace(s, precision=prec)):
                steps = pw + sw + lw
                words, edits = tuple(w for w, _ in steps), tuple(e for _, e in steps)
                out.append(Change(strat, L, words, pc + sc + lc, edits, pc + lc))
    return out


def _deepspeed_steps(s: Strategy) -> list[tuple[Strategy, tuple[Step, ...], float]]:
    out: list[tuple[Strategy, tuple[Step, ...], float]] = []
    switch = 0.5 if s.kind != "deepspeed" else 0.0
    lead = (_step(("distributed_type", "DEEPSPEED")),) if s.kind != "deepspeed" else ()
    for stage in (1, 2, 3):
        for off_o in ("none", "cpu"):
            for off_p in ("none", "cpu") if stage == 3 and off_o == "cpu" else ("none",):
                t = Strategy("deepspeed", s.precision, stage, off_o, off_p, stage == 3)
                if t == s:
                    continue
                steps = (
                    [_step(("deepspeed_config.zero_stage", stage))]
                    if stage != s.zero_stage or s.kind != "deepspeed"
                    else []
                )
                if off_o != s.offload_optimizer:
                    steps.append(_step(("deepspeed_config.offload_optimizer_device", off_o)))
                if off_p != s.offload_param:
                    steps.append(_step(("deepspeed_config.offload_param_device", off_p)))
                cost = switch + stage + (4 if off_o == "cpu" else 0) + (3 if off_p == "cpu" else 0)
                out.append((t, lead + tuple(steps), cost))
    return out


def _fsdp_steps(s: Strategy) -> list[tuple[Strategy, tuple[Step, ...], float]]:
    out: list[tuple[Strategy, tuple[Step, ...], float]] = []
    if s.kind in ("fsdp1", "ddp", "single"):
        # a switch to FSDP loads the checkpoint on rank 0 only, as fit's table rows do
        lead = (
            (_step(("distributed_type", "FSDP")), _step(("fsdp_config.fsdp_cpu_ram_efficient_loading", True)))
            if s.kind != "fsdp1"
            else ()
        )
        base = s if s.kind == "fsdp1" else Strategy("fsdp1", s.precision, cpu_ram_efficient_loading=True)
        rank = {"NO_SHARD": 0, "HYBRID_SHARD_ZERO2": 1.5, "SHARD_GRAD_OP": 2, "HYBRID_SHARD": 2.5, "FULL_SHARD": 3}
        for name, cost in rank.items():
            for off in (False, True):
                t = replace(base, kind="fsdp1", sharding=name, offload_params=off)
                if t == s:
                    continue
                steps = (
                    [_step(("fsdp_config.fsdp_sharding_strategy", name))]
                    if name != base.sharding or s.kind != "fsdp1"
                    else []
                )
                if off != base.offload_params:
                    steps.append(_step(("fsdp_config.fsdp_offload_params", off)))
                out.append((t, lead + tuple(steps), (0.5 if lead else 0) + cost + (6 if off else 0)))
    if s.kind in ("ddp", "single"):  # FSDP2 as fit's table has it: no section to replace
        two = Strategy("fsdp2", s.precision, cpu_ram_efficient_loading=True)
        for reshard in (False, True):
            for off in (False, True):
                steps = [
                    _step(("distributed_type", "FSDP")),
                    _step(("fsdp_config.fsdp_version", 2)),
                    _step(("fsdp_config.fsdp_reshard_after_forward", reshard)),
                    _step(("fsdp_config.fsdp_cpu_ram_efficient_loading", True)),
                ] + ([_step(("fsdp_config.fsdp_offload_params", True))] if off else [])
                t = replace(two, reshard_after_forward=reshard, offload_params=off)
                out.append((t, tuple(steps), 1.5 + (3 if reshard else 2) + (6 if off else 0)))
    if s.kind == "fsdp2":
        for reshard in (False, True):
            for off in (False, True):
                t = replace(s, reshard_after_forward=reshard, offload_params=off)
                if t == s:
                    continue
                steps = (
                    [_step(("fsdp_config.fsdp_reshard_after_forward", reshard))]
                    if reshard != s.reshard_after_forward
                    else []
                )
                if off != s.offload_params:
                    steps.append(_step(("fsdp_config.fsdp_offload_params", off)))
                out.append((t, tuple(steps), (3 if reshard else 2) + (6 if off else 0)))
    return out


CODE_CHECKPOINTING = "activation (gradient) checkpointing in the model: model.gradient_checkpointing_enable()"


def _strategies(s: Strategy) -> list[tuple[Strategy, tuple[Step, ...], float]]:
    out: list[tuple[Strategy, tuple[Step, ...], float]] = [(s, (), 0.0)]
    if s.kind in ("deepspeed", "ddp", "single"):
        out += _deepspeed_steps(s)
    out += _fsdp_steps(s)
    if s.kind in ("fsdp1", "fsdp2") and not s.cpu_ram_efficient_loading:
        # loading the checkpoint on rank 0 only: the host copy per node drops from one per process to one
        out += [
            (
                replace(t, cpu_ram_efficient_loading=True),
                w + (_step(("fsdp_config.fsdp_cpu_ram_efficient_loading", True)),),
                c + 0.5,
            )
            for t, w, c in list(out)
            if t.kind in ("fsdp1", "fsdp2")
        ]
    if not s.activation_checkpointing:

        def ckpt(t: Strategy) -> Step:
            return (
                _step(("fsdp_config.fsdp_activation_checkpointing", True))
                if t.kind in ("fsdp1", "fsdp2")
                else _step(("", CODE_CHECKPOINTING), words=CODE_CHECKPOINTING)
            )

        out += [(replace(t, activation_checkpointing=True), w + (ckpt(t),), c + 3) for t, w, c in list(out)]
    return out


def _json_edits(key: str, value: Any) -> tuple[Edit, ...] | None:
    """Where an accelerate config edit lives in a DeepSpeed JSON (the registry's ``ds_json``), or
    ``None`` for a setting that stays in the accelerate config."""
    section, _, leaf = key.rpartition(".")
    if section == "deepspeed_config" and leaf in registry.deepspeed_json_keys():
        return ((registry.deepspeed_json_keys()[leaf], value),)
    if key == "mixed_precision" and value in ("bf16", "fp16"):
        return ((f"{value}.enabled", True),)
    return None


def _json_file(cfg: Config, path: str | None, standalone: bool) -> str | None:
    """The DeepSpeed JSON where this config's DeepSpeed settings live: the one ``deepspeed_config_file``
    names (found as validate finds it; one not found is named beside the config), the document
    itself ("") for a DeepSpeed JSON (``standalone``), else ``None``."""
    deepspeed = value_reader(cfg, None)("distributed_type") == "DEEPSPEED"
    ref = _ds_json_ref(cfg) if deepspeed else None
    if ref is not None:
        found = config_file_path(ref, path)
        if found is not None:
            return found
        real = path and not path.startswith("<")
        return (
            ref if os.path.isabs(ref) or not real else os.path.normpath(os.path.join(os.path.dirname(path or ""), ref))
        )
    return "" if standalone else None


def place(change: Change, data: dict[str, Any], path: str | None = None, cfg: Config | None = None) -> Change:
    """``change`` as written for this config (read from its model, ``cfg``, when the caller has it):
    each step where its setting lives (with ``deepspeed_config_file``, and in a DeepSpeed JSON
    itself, the ZeRO, offload and precision settings are keys of that JSON, which accelerate forbids
    beside it in the YAML: ``deepspeed-config-file-conflict``), and what a multi-node DeepSpeed job
    needs to start."""
    import json

    cfg = config_of(cfg if cfg is not None else data)
    standalone = _standalone_ds_json(data)
    change = _completed(change, cfg, standalone, _written_zero(cfg, data, path, standalone))
    where = _json_file(cfg, path, standalone)
    if where is None:
        return change
    words: list[str] = []
    edits: list[tuple[Edit, ...]] = []
    keys: list[str] = []
    at = 0
    for word, group in zip(change.words, change.edits):
        placed = [_json_edits(k, v) for k, v in group]
        if not group or any(p is None for p in placed):
            launch = where == "" and any(k == "num_machines" for k, _ in group)
            # a DeepSpeed JSON has no machines or processes: the launch command says them
            words.append(
                f"at launch: {change.layout.nodes} machines, {change.layout.world} processes" if launch else word
            )
            edits.append(group)
            continue
        if not keys:
            words.append("")  # the JSON's keys, together, where the first of them was
            edits.append(())
            at = len(words) - 1
        keys += [f"{k}: {json.dumps(v)}" for each in placed for k, v in each or ()]
        edits[at] += group
    if keys:
        words[at] = (f"in {where}: " if where else "") + ", ".join(keys)
    return replace(change, words=tuple(words), edits=tuple(edits))


def _written_zero(cfg: Config, data: dict[str, Any], path: str | None, standalone: bool) -> dict[str, Any]:
    """The ZeRO settings the config writes, as ``deepspeed_config`` keys: its section, with its
    DeepSpeed JSON's (the JSON itself for a DeepSpeed JSON) laid over it, as :func:`strategy_of` reads them."""
    sec = {} if standalone else cfg.section("deepspeed_config")
    ds = data if standalone else _ds_json_data(cfg, path)
    if ds is not None:
        sec.update(to_accelerate_section(ds)[0])
    return sec


def _completed(change: Change, cfg: Config, standalone: bool, zero: dict[str, Any]) -> Change:
    """``change`` with what the config then needs to launch: ``num_processes`` when it switches a
    one-process config to a distributed type (``missing-key``), ``zero3_init_flag: true`` where the
    config writes it false and the change estimates ZeRO-3 with ``zero.Init`` (without it every
    process loads the whole model in host RAM), and, where the change makes a DeepSpeed job of more
    than one machine (more machines, or DeepSpeed on a config that has several), the
    standard (torchrun) launcher, since the default pdsh one reads a hostfile the config does not
    name (``env-rendezvous``). A parameter offload the config writes for a stage below 3 (where
    DeepSpeed ignores it) is turned off when the change moves to ZeRO-3 without one."""
    keys = {k for group in change.edits for k, _ in group}
    more: list[Step] = []
    if "distributed_type" in keys and "num_processes" not in cfg and "num_processes" not in keys:
        more.append(_step(("num_processes", change.layout.world)))
    init = "deepspeed_config.zero3_init_flag"
    if change.strategy.zero3_init and not standalone and value_reader(cfg, None)(init) is False and init not in keys:
        more.append(_step((init, True)))
    off_p = "deepspeed_config.offload_param_device"
    t = change.strategy
    if t.kind == "deepspeed" and t.zero_stage == 3 and t.offload_param == "none" and off_p not in keys:
        if str(zero.get("offload_param_device") or "none").lower() != "none":
            more.append(_step((off_p, "none")))
    if (
        change.strategy.kind == "deepspeed"
        and ("num_machines" in keys or ("distributed_type" in keys and change.layout.nodes > 1))
        and not standalone
        and not cfg.get("deepspeed_config.deepspeed_hostfile")
        and cfg.get("deepspeed_config.deepspeed_multinode_launcher") in (None, registry.DEFAULT_MULTINODE_LAUNCHER)
    ):
        more.append(_step(("deepspeed_config.deepspeed_multinode_launcher", registry.STANDARD_LAUNCHER)))
    if not more:
        return change
    return replace(
        change, words=change.words + tuple(w for w, _ in more), edits=change.edits + tuple(e for _, e in more)
    )


def apply_change(change: Change, doc: Document, ds_doc: Document | None = None) -> tuple[str, str | None]:
    """The texts of the config (and of its DeepSpeed JSON, for a config that names one: ``None``
    when no edit goes there) with ``change`` made, each edit where :func:`place` says it lives; a
    change outside the config (in the training script, or on the launch command of a DeepSpeed
    JSON) is left out. Written as every edit of a user's file is, by text edits on the original
    text (:func:`accelconf.text.edit.set_value`): comments and every line the change does not set
    stay byte for byte. A setting the config writes in another accepted spelling (an unprefixed
    ``fsdp_config`` key, DeepSpeed's deprecated ``cpu_offload``) is set where it is written, as
    the config model and the DeepSpeed key mapping read it. Raises
    ``ValueError`` for a change to a DeepSpeed JSON that is not given."""
    data = doc.data if isinstance(doc.data, dict) else {}
    where = _json_file(config_of(data), doc.path, _standalone_ds_json(data))
    texts: dict[str, Document] = {"config": doc} if ds_doc is None else {"config": doc, "json": ds_doc}
    touched: set[str] = set()
    for group in change.edits:
        for key, value in group:
            json_edits = _json_edits(key, value) if where is not None else None
            if not key or (where == "" and json_edits is None):
                continue  # in the training script, or (for a DeepSpeed JSON) on the launch command
            which = "config" if json_edits is None or where == "" else "json"
            if which not in texts:
                raise ValueError("a change to the DeepSpeed JSON needs its document")
            for dotted, v in json_edits or ((key, value),):
                texts[which] = _set(texts[which], dotted, v, json_edits is None)
            touched.add(which)
    return texts["config"].text, texts["json"].text if "json" in touched else None


def _set(doc: Document, dotted: str, value: Any, accelerate: bool) -> Document:
    """``doc`` with one value set where the file writes it (:func:`_written_setting`,
    :func:`_written_ds_key`), else at its canonical key; loaded again for the next edit."""
    keypath = tuple(dotted.split("."))
    if accelerate:
        keypath = _written_setting(doc, dotted, keypath)
    else:
        keypath, value = _written_ds_key(doc, keypath, value)
    text = apply_edits(doc.text, [set_value(doc, keypath, value)])
    return load_text(text, doc.path, doc.format)


def _written_setting(doc: Document, dotted: str, keypath: tuple[str, ...]) -> tuple[str, ...]:
    """Where an accelerate config writes a setting in an accepted other spelling (an unprefixed
    ``fsdp_config`` key), as its Config reads it; never a legacy top-level key (``fp16``), which
    accelerate drops once the setting is written."""
    entry = from_document(doc).entries.get(dotted)
    section = keypath[:-1]
    if entry is None or entry.setting is None or not entry.written_key:
        return keypath
    written = (*section, entry.written_key)
    same = registry.lookup(".".join(section), entry.written_key)[0] is entry.setting
    return written if same and doc.key(written) is not None else keypath


def _written_ds_key(doc: Document, keypath: tuple[str, ...], value: Any) -> tuple[tuple[str, ...], Any]:
    """An offload device set in a DeepSpeed JSON that writes the deprecated boolean for it
    (``cpu_offload``: :func:`~accelconf.accelerate.deepspeed_file.legacy_offload_key`) is set as
    that boolean, since DeepSpeed refuses it beside its replacement (``ds-alias-conflict``)."""
    zero = doc.data.get("zero_optimization") if isinstance(doc.data, dict) else None
    if len(keypath) != 3 or not keypath[1].startswith("offload_") or not isinstance(zero, dict):
        return keypath, value
    legacy = legacy_offload_key(zero, keypath[1][len("offload_") :])
    if legacy is None or keypath[1] in zero or value not in ("cpu", "none"):
        return keypath, value
    return ("zero_optimization", legacy), value == "cpu"


def _fits(e: Estimate, gpu_bytes: float, host_bytes: float | None) -> bool:
    """ "fits" (under 80%) on the GPU, and on the node's RAM when the strategy offloads to it (without
    offload the host figure is DeepSpeed's load-time copy, shown but not judged)."""
    host_ok = host_bytes is None or not offloads(e.strategy) or verdict(e.host / host_bytes) == "fits"
    return verdict(e.per_gpu / gpu_bytes) == "fits" and host_ok


def offloads(s: Strategy) -> bool:
    return s.offload_optimizer != "none" or s.offload_param != "none" or s.offload_params


def offloaded(s: Strategy) -> int:
    """What a strategy puts on the host: the optimizer step (1), and the weights too (2; FSDP offloads both)."""
    return 2 if s.offload_params else (s.offload_optimizer != "none") + (s.offload_param != "none")


def comm_cost(s: Strategy, trained: float = 1.0) -> float:
    """Parameters each rank sends per step, relative to DDP's all-reduce (see
    :mod:`accelconf.environment.fit`'s doc). ``trained`` is the share of the parameters that train
    (LoRA: the adapters): gradients are reduced for those only, while a sharded strategy still
    gathers every weight, so with P parameters and T = trained x P, DDP, ZeRO-1/2 and NO_SHARD move
    2T, a strategy that gathers the weights once per step P + T, and one that gathers them in forward
    and again in backward 2P + T."""
    if s.kind == "single":
        return 0.0
    gathers = 0
    if s.kind == "deepspeed" and s.zero_stage == 3:
        gathers = 2
    elif s.kind == "fsdp1" and s.sharding != "NO_SHARD":
        gathers = 2 if s.sharding in ("FULL_SHARD", "HYBRID_SHARD") else 1
    elif s.kind == "fsdp2":
        gathers = 2 if s.reshard_after_forward else 1
    if not gathers:
        return 1.0
    return (gathers + trained) / (2 * trained)


def rank(s: Strategy, per_gpu: float, comm: float) -> tuple[int, bool, float, float]:
    """The one order of the strategies that fit, cheapest first, for ``fit``'s table and ``check``'s
    suggestion alike: less offloaded, then no recomputation, then less communication, then more
    headroom (less per GPU). Ties go by :func:`table_order` in both."""
    return (offloaded(s), s.activation_checkpointing, comm, per_gpu)


FSDP1_STRATEGIES = ("FULL_SHARD", "SHARD_GRAD_OP", "HYBRID_SHARD", "HYBRID_SHARD_ZERO2", "NO_SHARD")


def strategies(precision: str, world: int) -> list[Strategy]:
    """Every strategy accelconf models, without and then with activation checkpointing: DDP (one
    process on one GPU), ZeRO 1-3 with and without CPU offload, the FSDP1 sharding strategies (and
    FULL_SHARD with offload), FSDP2 with and without resharding (and with offload). FSDP rows load
    the checkpoint on rank 0 only (``fsdp_cpu_ram_efficient_loading``), as the written configs do."""
    base: list[Strategy] = [Strategy("single" if world == 1 else "ddp", precision)]
    for stage in (1, 2, 3):
        base.append(Strategy("deepspeed", precision, stage, zero3_init=stage == 3))
        base.append(Strategy("deepspeed", precision, stage, "cpu", zero3_init=stage == 3))
    base.append(Strategy("deepspeed", precision, 3, "cpu", "cpu", zero3_init=True))
    fsdp1 = Strategy("fsdp1", precision, cpu_ram_efficient_loading=True)
    fsdp2 = replace(fsdp1, kind="fsdp2")
    base += [replace(fsdp1, sharding=name) for name in FSDP1_STRATEGIES]
    base.append(replace(fsdp1, offload_params=True))
    base += [replace(fsdp2, reshard_after_forward=r) for r in (True, False)]
    base.append(replace(fsdp2, offload_params=True))
    return base + [replace(s, activation_checkpointing=True) for s in base]


def table_order(s: Strategy, world: int) -> int:
    """Where ``s`` stands in :func:`strategies` (the tie-break of :func:`memory.rank`'s order for
    the table and ``check``'s suggestion); a strategy the table lacks comes after every row."""
    order = _orders(s.precision, world)
    return order.get((s.label(), s.activation_checkpointing), len(order))


def table_size(s: Strategy, layout: Layout) -> int:
    """How many distinct rows :func:`strategies` has for ``s``'s precision on ``layout``."""
    return len(_orders(s.precision, layout.world))


@functools.lru_cache(maxsize=16)
def _orders(precision: str, world: int) -> dict[tuple[str, bool], int]:
    out: dict[tuple[str, bool], int] = {}
    for i, t in enumerate(strategies(precision, world)):
        out.setdefault((t.label(), t.activation_checkpointing), i)
    return out


def cheapest_fit(
    est: Estimate,
    gpu_bytes: float,
    host_bytes: float | None,
    *,
    bf16_ok: bool = True,
    seq_len: int | None = None,
    micro_batch: int | None = None,
    offload: bool = True,
) -> tuple[Change, Estimate] | None:
    """Among the strategies of fit's table, the alternative whose estimate is under 80% of the GPU
    memory and of the host RAM that :func:`rank` puts first (on the config's machines and, for
    fp32, in bf16; more machines only when nothing there fits; ties in the order of fit's table,
    then to the smaller edit), or ``None`` when nothing tried fits. ``offload=False`` leaves out
    the alternatives that offload to the host."""
    best: tuple[Change, Estimate] | None = None
    best_key: tuple[Any, ...] = ()
    adapter = est.lora.adapter if est.lora is not None else None
    trained = est.lora.trainable / max(1, est.model.params) if est.lora is not None else 1.0
    for ch in _alternatives(est.strategy, est.layout, bf16_ok):
        order = table_order(ch.strategy, ch.layout.world)
        if not ch.words or (not offload and offloads(ch.strategy)) or order == table_size(ch.strategy, ch.layout):
            continue  # only the strategies of fit's table: check names one of its rows
        e = estimate(ch.strategy, ch.layout, est.model, seq_len=seq_len, micro_batch=micro_batch, lora=adapter)
        if not _fits(e, gpu_bytes, host_bytes):
            continue
        comm = comm_cost(ch.strategy, trained) if ch.layout.world > 1 else 0.0
        key = (ch.tier, rank(ch.strategy, e.per_gpu, comm), order, ch.cost)
        if best is None or key < best_key:
            best, best_key = (ch, e), key
    return best


# -- findings and output ------------------------------------------------------------------------


@dataclass(frozen=True)
class Report:
    """An estimate against a machine: the verdict, the suggestion, the findings."""

    estimate: Estimate
    gpu_name: str | None
    gpu_bytes: float | None
    host_bytes: float | None
    suggestion: tuple[Change, Estimate] | None = None
    notes: tuple[str, ...] = ()
    without_offload: tuple[Change, Estimate] | None = None  # when the suggestion offloads and host RAM is unknown
    findings: tuple[Finding, ...] = field(default_factory=tuple)

    @property
    def gpu_fraction(self) -> float | None:
        return None if not self.gpu_bytes else self.estimate.per_gpu / self.gpu_bytes

    @property
    def host_fraction(self) -> float | None:
        """The share of the node's RAM the offloaded states take (``None`` without offload or RAM)."""
        if not self.host_bytes or not offloads(self.estimate.strategy):
            return None
        return self.estimate.host / self.host_bytes

    @property
    def verdict(self) -> str:
        fr = [f for f in (self.gpu_fraction, self.host_fraction) if f is not None]
        if not fr:
            return "unknown (no GPU memory known: give --gpu MODEL)"
        return verdict(max(fr))

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "model": self.estimate.model.to_json(),
            **self.estimate.to_json(),
            "gpu": self.gpu_name,
            "gpu_memory_bytes": None if self.gpu_bytes is None else int(self.gpu_bytes),
            "host_ram_bytes": None if self.host_bytes is None else int(self.host_bytes),
            "gpu_fraction": self.gpu_fraction,
            "host_fraction": self.host_fraction,
            "verdict": self.verdict,
            "notes": list(self.estimate.notes + self.estimate.model.notes + self.notes),
        }
        if self.suggestion:
            ch, e = self.suggestion
            out["suggestion"] = {
                "change": list(ch.words),
                "strategy": e.strategy.label(),
                "per_gpu_bytes": int(e.per_gpu),
                "host_ram_per_node_bytes": int(e.host),
            }
        if self.without_offload:
            ch, e = self.without_offload
            out["suggestion_without_offload"] = {
                "change": list(ch.words),
                "strategy": e.strategy.label(),
                "per_gpu_bytes": int(e.per_gpu),
                "host_ram_per_node_bytes": int(e.host),
            }
        return out


def gib(x: float) -> str:
    return f"{x / GiB:,.1f} GiB"


def _suggestion_text(
    sug: tuple[Change, Estimate] | None, gpu_bytes: float, alt: tuple[Change, Estimate] | None = None
) -> str | None:
    if sug is None:
        return None

    def one(pair: tuple[Change, Estimate]) -> str:
        ch, e = pair
        return (
            f"{'; '.join(ch.words)} -> {e.strategy.label()}: {gib(e.per_gpu)} per GPU "
            f"({e.per_gpu / gpu_bytes:.0%}), host RAM {gib(e.host)} per node"
        )

    text = f"cheapest change that fits: {one(sug)}"
    if alt is not None:
        text += f"; without offload (node RAM unknown): {one(alt)}"
    return text


def findings_for(report: Report, finding_at: Any) -> list[Finding]:
    """``mem-gpu`` / ``mem-host`` findings. ``finding_at(rule, severity, message, suggestion)`` places one."""
    out: list[Finding] = []
    e = report.estimate
    fr = report.gpu_fraction
    sug = _suggestion_text(report.suggestion, report.gpu_bytes or 1.0, report.without_offload)
    fallback = "nothing tried fits (ZeRO/FSDP stages, offload, bf16, up to 8x the GPUs): a smaller model or bigger GPUs"
    if fr is not None and verdict(fr) != "fits":
        states = e.model_states / (report.gpu_bytes or 1)
        what = "model states" if states > 1 or e.activations is None else "model states + activations"
        sev = "error" if verdict(fr) == "does not fit" else "warning"
        msg = (
            f"the step's peak ({what}, buffers, CUDA context) needs {gib(e.per_gpu)} per GPU with "
            f"{e.strategy.label()} on {e.layout.world} GPUs; {report.gpu_name} has {gib(report.gpu_bytes or 0)} "
            f"({fr:.0%})"
        )
        if sev == "warning":
            msg += "; 80-100% is tight: allocator fragmentation decides"
        out.append(finding_at("mem-gpu", sev, msg, sug or fallback))
    hf = report.host_fraction
    if hf is not None and verdict(hf) != "fits":
        sev = "error" if verdict(hf) == "does not fit" else "warning"
        msg = (
            f"host RAM per node: {gib(e.host)} needed with {e.strategy.label()}, the node has "
            f"{gib(report.host_bytes or 0)} ({hf:.0%})"
        )
        out.append(finding_at("mem-host", sev, msg, sug or fallback))
    return out


def host_ram_here() -> float | None:
    """This machine's physical memory in bytes, or ``None`` where the OS does not say."""
    try:
        return float(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):
        return None


def assess(
    data: dict[str, Any],
    model: ModelSize,
    *,
    gpu_name: str | None,
    gpu_memory_gib: float | None,
    gpus_per_node: int | None,
    nodes: int | None,
    host_ram_gib: float | None = None,
    bf16_ok: bool = True,
    seq_len: int | None = None,
    micro_batch: int | None = None,
    path: str | None = None,
    accelerate_version: str | None = None,
    lora: Any = None,
    cfg: Config | None = None,
) -> Report:
    """Estimate a loaded config on a machine and pick the cheapest change when it does not fit.
    ``cfg``: the config's model at ``accelerate_version``, when the caller has read it."""
    cfg = cfg if cfg is not None else config_of(data, accelerate_version)
    strategy, notes = strategy_of(data if _standalone_ds_json(data) else cfg, path, accelerate_version)
    layout = layout_of(cfg, gpus_per_node, nodes)
    est = estimate(strategy, layout, model, seq_len=seq_len, micro_batch=micro_batch, lora=lora)
    if not (seq_len and micro_batch):
        notes.append("activations not included (give --seq-len and --micro-batch, with --model)")
    gpu_bytes = gpu_memory_gib * GiB if gpu_memory_gib else None
    host_bytes = host_ram_gib * GiB if host_ram_gib else None
    sug = alt = None
    sagemaker = value_reader(cfg, accelerate_version)("compute_environment", "LOCAL_MACHINE") != "LOCAL_MACHINE"
    if sagemaker and gpu_bytes is not None and not _fits(est, gpu_bytes, host_bytes):
        # a SageMaker config holds none of the keys a change writes (registry.SAGEMAKER_KEYS): its
        # job runs SageMaker's own DATA_PARALLEL or MODEL_PARALLEL
        notes.append("no change is suggested for a SageMaker config: its keys set no DeepSpeed or FSDP")
    elif gpu_bytes is not None and not _fits(est, gpu_bytes, host_bytes):
        kw: dict[str, Any] = dict(bf16_ok=bf16_ok, seq_len=seq_len, micro_batch=micro_batch)
        sug = cheapest_fit(est, gpu_bytes, host_bytes, **kw)
        if sug is not None and host_bytes is None and offloads(sug[0].strategy):
            alt = cheapest_fit(est, gpu_bytes, host_bytes, offload=False, **kw)
        sug, alt = ((place(p[0], data, path, cfg), p[1]) if p else None for p in (sug, alt))
    return Report(est, gpu_name, gpu_bytes, host_bytes, sug, tuple(notes), alt)


def render_table(report: Report) -> str:
    """The text table ``accelconf check`` prints."""
    e = report.estimate
    m = e.model
    lines = [
        f"memory: {m.params:,} parameters ({m.source}); {e.strategy.label()} on "
        f"{e.layout.nodes} node{'s' if e.layout.nodes != 1 else ''} x {e.layout.gpus_per_node} GPUs"
    ]
    lines.append("  per GPU")
    for name, v in phase_rows(e):
        lines.append(f"  {name:<34}{'not included' if v is None else gib(v):>14}")
    lines.append(
        f"  {'peak of the step':<34}{gib(e.per_gpu):>14}"
        + (
            f"   of {report.gpu_name} {gib(report.gpu_bytes)}: {report.gpu_fraction:.0%}, "
            f"headroom {gib(report.gpu_bytes - e.per_gpu)}"
            if report.gpu_bytes
            else ""
        )
    )
    host = f"  {'host RAM per node':<34}{gib(e.host):>14}"
    if report.host_fraction is not None and report.host_bytes:
        host += (
            f"   of {gib(report.host_bytes)}: {report.host_fraction:.0%}, headroom {gib(report.host_bytes - e.host)}"
        )
    elif not offloads(e.strategy):
        host += (
            "   (no offload: the frozen base and the adapters loaded per process, not judged)"
            if e.lora
            else "   (no offload: DeepSpeed's load-time figure, not judged)"
            if e.strategy.kind == "deepspeed"
            else "   (no offload: the fp32 model loaded per process, not judged)"
        )
    else:
        host += "   (node RAM unknown: --host-ram GIB)"
    lines.append(host)
    if e.nvme:
        lines.append(f"  {'NVMe per node':<34}{gib(e.nvme):>14}")
    if e.activation_detail is not None:
        lines += [f"    {name:<56}{gib(v):>12}" for name, v in e.activation_detail.lines()]
    if e.activation_formula:
        lines.append(f"  activations: {e.activation_formula}")
    lines.append(f"  verdict: {report.verdict}")
    sug = _suggestion_text(report.suggestion, report.gpu_bytes or 1.0, report.without_offload)
    if sug:
        lines.append(f"  {sug}")
    for n in e.notes + m.notes + report.notes:
        lines.append(f"  note: {n}")
    lines.append("  not in the estimate: allocator fragmentation (the reason for the 80% margin)")
    return "\n".join(lines) + "\n"


def phase_rows(e: Estimate) -> list[tuple[str, float | None]]:
    """The labelled lines of the peak: the states, each phase's extra terms, the two phases, and the
    per-GPU constants (labelled estimated)."""
    rows: list[tuple[str, float | None]] = [
        ("parameters" if e.lora is None else "weights: base + adapters", e.params),
        ("gradients", e.grads),
        ("optimizer state (AdamW)", e.optimizer),
        ("gathered layer/model", e.gathered),
        ("communication buckets", e.buckets),
        ("activations", e.activations),
        ("= forward/backward", e.forward_backward),
        ("optimizer step temporaries", e.step_temporaries),
        ("= optimizer step", e.optimizer_step),
        ("CUDA context (estimated)", e.cuda_context),
    ]
    if e.communicators:
        rows.append((f"NCCL, {e.communicators} communicator{'s' if e.communicators > 1 else ''} (estimated)", e.nccl))
    return rows


# -- against a document and an environment --------------------------------------------------------


def _anchor(s: Strategy, rule: str) -> tuple[str, ...]:
    """Config keys a finding points at, most specific first (the first present wins)."""
    if s.kind == "deepspeed":
        keys: tuple[str, ...] = (
            ("deepspeed_config.offload_optimizer_device", "deepspeed_config.offload_param_device")
            if rule == "mem-host"
            else ()
        )
        return keys + (
            "deepspeed_config.zero_stage",
            "deepspeed_config.deepspeed_config_file",
            Paths.STAGE,
            Paths.ZERO,
            "distributed_type",
        )
    if s.kind in ("fsdp1", "fsdp2"):
        keys = ("fsdp_config.fsdp_offload_params",) if rule == "mem-host" or s.offload_params else ()
        main = "fsdp_config.fsdp_sharding_strategy" if s.kind == "fsdp1" else "fsdp_config.fsdp_reshard_after_forward"
        return keys + (main, "fsdp_config", "distributed_type")
    return ("distributed_type", "num_processes")


def machine_of(env: Any, host_ram_gib: float | None = None) -> dict[str, Any]:
    """GPU name and memory, GPUs per node, nodes, host RAM and bf16 support from an
    :class:`~accelconf.environment.probe.Environment` (unknown facts are ``None``)."""
    gpus = env.gpus if env.knows("gpus") else ()
    first = gpus[0] if gpus else None
    here = env.source.startswith("detected") and "arguments" not in env.source
    return {
        "gpu_name": (first.model or first.name) if first else None,
        "gpu_memory_gib": first.memory_gib if first else None,
        "gpus_per_node": env.gpu_count if gpus and env.knows("gpu_count") else None,
        "nodes": env.num_machines,
        "host_ram_gib": host_ram_gib if host_ram_gib else ((host_ram_here() or 0) / GiB or None) if here else None,
        "bf16_ok": first is None or first.bf16 is not False,
        "accelerate_version": target_release(env),
    }


def check_memory(
    doc: Any,
    env: Any,
    model: ModelSize,
    *,
    seq_len: int | None = None,
    micro_batch: int | None = None,
    host_ram_gib: float | None = None,
    lora: Any = None,
    cfg: Config | None = None,
) -> tuple[Report, list[Finding]]:
    """The memory report and the ``mem-*`` findings (1-based positions) for one loaded document
    (``cfg``: its model at the target's release, :func:`~accelconf.environment.checks.target_release`,
    when the caller has read it)."""
    data = doc.data if isinstance(doc.data, dict) else {}
    report = assess(
        data,
        model,
        seq_len=seq_len,
        micro_batch=micro_batch,
        path=doc.path,
        lora=lora,
        cfg=cfg,
        **machine_of(env, host_ram_gib),
    )

    def at(rule: str, severity: str, message: str, suggestion: str | None) -> Finding:
        keys = _anchor(report.estimate.strategy, rule)
        key = next((k for k in keys if doc.node(k) is not None or doc.key(k) is not None), "")
        if not key:
            return Finding(rule, severity, message, "", 1, 1, suggestion)  # type: ignore[arg-type]
        return finding_at(doc, rule, severity, message, key, suggestion=suggestion)  # type: ignore[arg-type]

    return report, findings_for(report, at)


@dataclass(frozen=True)
class Question:
    """ "Will it fit?": the model and shapes (``check --params/--model``, the editor's ``accelconf.params``
    or ``accelconf.model``); ``classes``: the model folder's classes, for ``model-wrap-class``."""

    model: ModelSize
    seq_len: int | None = None
    micro_batch: int | None = None
    host_ram_gib: float | None = None
    classes: Any = None
    lora: Any = None  # an accelconf.environment.lora.Adapter (--lora-rank, the editor's accelconf.loraRank)


def document_findings(doc: Any, env: Any, question: Question, cfg: Config | None = None) -> list[Finding]:
    """The ``mem-*`` and ``model-wrap-class`` findings of one loaded document (none for a document
    that is not a mapping): what :func:`accelconf.api.check_document` adds for a question. ``cfg``:
    the document's model at the target's release (:func:`~accelconf.environment.checks.target_release`),
    when the caller has read it."""
    if not isinstance(getattr(doc, "data", None), dict):
        return []
    _, found = check_memory(
        doc,
        env,
        question.model,
        seq_len=question.seq_len,
        micro_batch=question.micro_batch,
        host_ram_gib=question.host_ram_gib,
        lora=question.lora,
        cfg=cfg,
    )
    return found + wrap_findings(doc, question.classes, cfg)
