"""LoRA and QLoRA: which parameters train, and what the frozen base weighs.

This module owns :class:`Adapter` (``--lora-rank``, ``--lora-targets``, ``--quant``) and
:func:`split` (the trainable adapter parameters and the frozen base's bytes for a
:class:`~accelconf.environment.modelsize.ModelSize` with known tensors). The estimate itself
(:func:`accelconf.environment.memory.estimate`) applies the split with :func:`apply`.

* LoRA adds ``A`` (rank x in) and ``B`` (out x rank) beside each targeted linear layer (peft's
  ``LoraLayer.update_layer``): ``rank * (in + out)`` trainable parameters, no bias. A target name
  matches a module whose name ends with it (peft's ``check_target_module_exists``). The default
  targets are every attention and MLP projection of the family, what peft's ``"all-linear"``
  selects in a decoder (peft's own per-family default is narrower: ``q_proj`` and ``v_proj``).
  MoE experts held as fused 3-D parameters (transformers 5) are not ``nn.Linear`` layers: they
  are targeted only where peft adapts them (:data:`_FUSED_EXPERTS`), and never quantised.
* The base is frozen: no gradients, no optimizer state. Unquantised it is held in the compute
  dtype (models are loaded with ``torch_dtype=bfloat16`` for LoRA); the adapters are fp32 (peft's
  ``autocast_adapter_dtype``), with fp32 gradients and AdamW's two fp32 moments.
* QLoRA ``4bit``: bitsandbytes' NF4 (``Params4bit``, ``bnb_4bit_quant_type="nf4"``): two weights per
  byte, one absmax per block of 64; with double quantisation (``bnb_4bit_use_double_quant``, the
  QLoRA default) the absmax values are themselves 8-bit (one byte per block) with one fp32 absmax
  per 256 of them, a 256-entry fp32 code and an fp32 offset per tensor (``bitsandbytes/functional.py``:
  ``quantize_4bit`` with ``compress_statistics``); without it, an fp32 absmax per block. Each
  tensor's state also holds its own 16 fp32 NF4 levels (bitsandbytes 0.50 on CPU, measured). ``8bit``:
  LLM.int8 (``Int8Params``): one byte per weight and an fp32 scale per output row. Only the linear
  layers inside the decoder layers are quantised (transformers keeps the LM head and the
  embeddings in the compute dtype); routers stay unquantised.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from accelconf.accelerate.registry import SHARDING
from accelconf.environment.activations import _rope_cat
from accelconf.errors import UsageError

QUANT_CHOICES: tuple[str, ...] = ("4bit", "8bit")
NF4_BLOCK = 64  # bitsandbytes' default blocksize for 4-bit weights
NESTED_BLOCK = 256  # double quantisation: absmax values per fp32 absmax
NESTED_CODE = 256 * 4  # the nested 8-bit code (256 fp32 values) per tensor, plus a 4-byte offset
NF4_CODE = 16 * 4  # each tensor's quantisation state holds its own copy of the 16 NF4 levels (fp32)

# the attention and MLP projections of each family (the module names transformers 5 gives them)
_TARGETS = {
    "phi3": ("qkv_proj", "o_proj", "gate_up_proj", "down_proj"),
    "phi": ("q_proj", "k_proj", "v_proj", "dense", "fc1", "fc2"),
    "gpt2": ("c_attn", "c_proj", "c_fc"),
    "gpt_neox": ("query_key_value", "dense", "dense_h_to_4h", "dense_4h_to_h"),
    "falcon": ("query_key_value", "dense", "dense_h_to_4h", "dense_4h_to_h"),
}
_LLAMA_TARGETS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")
_LAYER_RE = re.compile(r"\.(?:layers|h|blocks|layer)\.\d+\.")
_ROUTERS = ("gate", "shared_expert_gate", "router")
# Fused expert tensors peft 0.21 adapts when the per-expert names are targeted (its transformers-5
# conversion, ``peft/utils/transformers_weight_conversion.py``: a LoRA per expert, ``gate_up_proj`` at
# twice the rank), measured per family against ``get_nb_trainable_parameters``: qwen3-moe's are; for
# qwen2-moe peft targets only the shared expert's linear layers.
_FUSED_EXPERTS = {"qwen3_moe": {"gate_up_proj": ("gate_proj", "up_proj"), "down_proj": ("down_proj",)}}


def default_targets(family: str | None) -> tuple[str, ...]:
    """The attention and MLP projections of ``family`` (see the module doc)."""
    return _TARGETS.get(str(family or ""), _LLAMA_TARGETS)


@dataclass(frozen=True)
class Adapter:
    """A LoRA setup: ``rank``, the target module names (``None``: :func:`default_targets`), the base's
    quantisation (``None``, ``4bit``, ``8bit``) and, for 4-bit, double quantisation."""

    rank: int
    targets: tuple[str, ...] | None = None
    quant: str | None = None
    double_quant: bool = True

    def label(self) -> str:
        q = {"4bit": "QLoRA NF4" + (" double-quant" if self.double_quant else ""), "8bit": "LoRA on an 8-bit base"}
        return f"{q.get(self.quant or '', 'LoRA')} rank {self.rank}"


def adapter_of(rank: Any, targets: Any = None, quant: Any = None) -> Adapter | None:
    """An :class:`Adapter` from CLI/API values (``targets``: a list or a comma-separated string).
    ``None`` without a rank. Raises :class:`UsageError` on a bad value."""
    if rank is None:
        if targets is not None or quant is not None:
            raise UsageError("--lora-targets and --quant need --lora-rank")
        return None
    if isinstance(rank, bool) or not isinstance(rank, int) or rank < 1:
        raise UsageError(f"--lora-rank: {rank!r} is not a positive whole number")
    if quant is not None and quant not in QUANT_CHOICES:
        raise UsageError(f"--quant: {quant!r} is not one of {', '.join(QUANT_CHOICES)}")
    names: tuple[str, ...] | None = None
    if targets is not None:
        items = targets.split(",") if isinstance(targets, str) else list(targets)
        names = tuple(str(t).strip() for t in items if str(t).strip())
        if not names:
            raise UsageError("--lora-targets: give module names, comma-separated (q_proj,v_proj)")
    return Adapter(rank, names, quant)


@dataclass(frozen=True)
class Split:
    """The trainable adapter parameters and the frozen base: its parameters and their bytes."""

    adapter: Adapter
    trainable: int
    frozen: int
    base_bytes: float
    quantized: int = 0
    targets: tuple[str, ...] = ()
    matched: int = 0
    constants: float = 0.0  # the quantisation state (absmax, codes): buffers FSDP does not shard

    def to_json(self) -> dict[str, Any]:
        return {
            "rank": self.adapter.rank,
            "targets": list(self.targets),
            "quant": self.adapter.quant,
            "trainable_params": self.trainable,
            "frozen_params": self.frozen,
            "quantized_params": self.quantized,
            "frozen_base_bytes": int(self.base_bytes),
            "quant_constants_bytes": int(self.constants),
            "lora_layers": self.matched,
        }


def nf4_bytes(n: int, double_quant: bool = True) -> int:
    """Bytes bitsandbytes stores for an ``n``-element weight in NF4 (module doc)."""
    blocks = math.ceil(n / NF4_BLOCK)
    if not double_quant:
        return math.ceil(n / 2) + 4 * blocks + NF4_CODE
    return math.ceil(n / 2) + blocks + 4 * math.ceil(blocks / NESTED_BLOCK) + NESTED_CODE + 4 + NF4_CODE


def int8_bytes(shape: tuple[int, ...]) -> int:
    """Bytes of an LLM.int8 weight: one per element and an fp32 scale per output row."""
    return math.prod(shape) + 4 * shape[0]


def _is_target(module: str, targets: tuple[str, ...]) -> bool:
    return any(module == t or module.endswith("." + t) for t in targets)


def split(size: Any, adapter: Adapter, compute_bytes: int) -> Split:
    """The :class:`Split` of a model with known tensors. Raises :class:`UsageError` without them."""
    if not size.tensors:
        raise UsageError("--lora-rank needs the model's tensors: give --model DIR or NAME (not --params)")
    targets = adapter.targets or default_targets(size.family)
    trainable = matched = quantized = 0
    base = consts = 0.0
    for name, shape in size.tensors:
        n = math.prod(shape) if shape else 1
        module, _, leaf = name.rpartition(".")
        linear = leaf == "weight" and len(shape) == 2 and _LAYER_RE.search("." + name) is not None
        if linear and _is_target(module, targets):
            # mixtral's w1 and w3 are one fused gate_up_proj in transformers 5: peft adapts it at twice
            # the rank, so each expert's B is as wide as both outputs
            fused_out = 2 if size.family == "mixtral" and module.rpartition(".")[2] in ("w1", "w3") else 1
            trainable += adapter.rank * (fused_out * shape[0] + shape[1])
            matched += 1
        elif len(shape) == 3 and size.family in _FUSED_EXPERTS and leaf in _FUSED_EXPERTS[size.family]:
            parts = _FUSED_EXPERTS[size.family][leaf]
            if all(p in targets for p in parts):  # (experts, out, in), the rank times the fused parts
                trainable += adapter.rank * len(parts) * shape[0] * (shape[1] + shape[2])
                matched += 1
        if linear and adapter.quant and module.rpartition(".")[2] not in _ROUTERS:
            quantized += n
            stored = nf4_bytes(n, adapter.double_quant) if adapter.quant == "4bit" else int8_bytes(shape)
            packed = math.ceil(n / 2) if adapter.quant == "4bit" else n
            base += stored
            consts += stored - packed
        else:
            base += compute_bytes * n
    if size.family == "mixtral" and ("w1" in targets) != ("w3" in targets):
        raise UsageError(
            "--lora-targets: mixtral's w1 and w3 are one fused gate_up_proj in transformers 5: "
            "target both or neither (as peft requires)"
        )
    if not matched:
        raise UsageError(
            f"--lora-targets: {', '.join(targets)} match no linear layer of this "
            f"{size.family or 'model'}; its projections: {', '.join(default_targets(size.family))}"
        )
    return Split(adapter, trainable, size.params, base, quantized, tuple(targets), matched, consts)


def _groups(s: Any, lay: Any) -> tuple[int, int, int]:
    """How many ranks share (the weights, the gradients, the optimizer state) under strategy ``s``."""
    if s.kind == "deepspeed":
        n = lay.world
        return (n if s.zero_stage == 3 else 1, n if s.zero_stage >= 2 else 1, n if s.zero_stage >= 1 else 1)
    if s.kind == "fsdp1":
        g = {"world": lay.world, "node": lay.gpus_per_node, "one": 1}[SHARDING[s.sharding][1]]
        return g, g, g
    if s.kind == "fsdp2":
        return lay.world, lay.world, lay.world
    return 1, 1, 1


def apply(est: Any, sp: Split) -> Any:
    """``est`` (model states of full training) as LoRA runs: the frozen base in its stored bytes,
    sharded where the strategy shards weights (the quantisation constants are buffers, kept whole);
    fp32 adapters with fp32 gradients and AdamW moments, sharded as the strategy shards them; one
    FSDP/ZeRO-3 unit gathered at a time in the base's bytes. Offloaded optimizer state and weights
    go to host RAM."""
    from dataclasses import replace

    s, lay, m = est.strategy, est.layout, est.model
    gp, gg, go = _groups(s, lay)
    T = float(sp.trainable)
    sharded_base = (sp.base_bytes - sp.constants) / gp + sp.constants
    whole_gather = (s.kind == "fsdp1" and s.sharding in ("SHARD_GRAD_OP", "HYBRID_SHARD_ZERO2")) or (
        s.kind == "fsdp2" and not s.reshard_after_forward
    )
    unit = (sp.base_bytes - sp.constants) * m.largest_unit / max(1, m.params)
    gathered = 0.0 if gp == 1 else (sp.base_bytes - sp.constants) * (1 - 1 / gp) if whole_gather else unit
    off_params = s.offload_params or s.offload_param != "none"
    off_optim = s.offload_optimizer != "none" or s.offload_params
    params = 0.0 if off_params else sharded_base + 4 * T / gp
    grads = 0.0 if s.offload_params else 4 * T / gg
    optim = 0.0 if off_optim else 8 * T / go
    per_proc_load = sp.base_bytes + 4 * T
    host = per_proc_load * (1 if s.cpu_ram_efficient_loading or gp > 1 and s.kind == "deepspeed" else lay.gpus_per_node)
    if off_params:
        host = max(host, (sharded_base + 4 * T / gp) * lay.gpus_per_node)
    if off_optim:
        host += 12 * T / go * lay.gpus_per_node
    share = T / max(1, T + sp.frozen)
    note = (
        f"{sp.adapter.label()} on {', '.join(sp.targets)} ({sp.matched} layers): {sp.trainable:,} trainable "
        f"parameters ({share:.2%}); the {sp.frozen:,} base parameters are frozen (no gradients, no optimizer "
        f"state), stored in {_gib(sp.base_bytes)}"
    )
    kept = tuple(n for n in est.notes if "autocasts: weights, gradients and optimizer state stay fp32" not in n)
    return replace(
        est,
        params=params,
        grads=grads,
        optimizer=optim,
        gathered=gathered,
        host=float(host),
        nvme=0.0,
        elements=None,
        lora=sp,
        notes=kept + (note,),
    )


def _targeted(name: str, sp: Split) -> bool:
    return any(t == name or t.rpartition(".")[2] == name for t in sp.targets)


Group = tuple[int, bool, tuple[tuple[str, int], ...]]


def _layer_groups(st: Any) -> list[Group]:
    """One decoder layer's inputs of linear layers: (width, whether something else saves that tensor
    anyway, the linear layers reading it with their input width)."""
    h, q = st.hidden, st.heads * st.head_dim
    fused = st.family == "phi3"
    groups: list[Group] = [
        (h, False, (("qkv_proj", h),) if fused else (("q_proj", h), ("k_proj", h), ("v_proj", h))),
        (q, st.attn != "eager" and not _rope_cat(st), (("o_proj", q),)),
    ]  # SDPA keeps its own output
    if st.experts:  # the router is frozen; only a shared expert has linear layers peft targets
        # frozen experts keep no input for their weights' gradients: the routed products are not kept
        groups.append((st.intermediate * st.top_k, False, ()))
        if st.shared_expert:
            groups += [
                (h, False, (("gate_proj", h), ("up_proj", h))),
                (st.shared_expert, False, (("down_proj", st.shared_expert),)),
            ]
        else:
            groups.append((h, False, ()))
        return groups
    return groups + [
        (h, False, (("gate_up_proj", h),) if fused else (("gate_proj", h), ("up_proj", h))),
        (st.intermediate, False, (("down_proj", st.intermediate),)),
    ]


def _frozen_norms(st: Any, t: int, e: int) -> float:
    """What the norms no longer keep with frozen weights: the normalised tensor the weight's gradient
    needs (llama-style: in the compute dtype; gemma's ``1 + weight`` form: fp32)."""
    per = 4 if st.norm == "gemma" else e
    norms = st.norms_per_layer * t * st.hidden
    qk = t * (st.heads + st.kv_heads) * st.head_dim if st.qk_norm else 0
    return float(per * (norms + qk))


def activation_lines(sp: Split, act: Any) -> Any:
    """``act`` (an :class:`~accelconf.environment.activations.Activations` of full training) as LoRA
    runs it, one line added to the layer's parts and one outside. A frozen linear layer keeps no
    input and a frozen norm no normalised tensor; each targeted layer's ``A`` keeps its input: the
    same tensor in fp32 compute, a copy per layer under 16-bit autocast (peft casts the input to the
    fp32 adapter's dtype, autocast casts it back, and keeps each adapter weight's 16-bit cast);
    ``B`` keeps the rank-``r`` intermediate. Outside the
    layers the frozen LM head keeps no input and the frozen embedding no token ids. Modelled for the
    RMSNorm decoders; for the others (and DeepSeek's MLA) only the intermediates are added."""
    from dataclasses import replace

    st, e = act.structure, act.dtype_bytes
    t = act.seq_len * act.micro_batch
    r = sp.adapter.rank
    if st.norm == "layer" or st.mla:  # DeepSeek's MLA projections: only the intermediates
        per_layer = e * t * r * sp.matched / max(1, st.layers)
        return replace(act, layer=act.layer + (("LoRA adapters' rank-r intermediates", per_layer),))
    # under 16-bit autocast each fp32 adapter weight is cast once per forward, and the cast is kept
    delta = -_frozen_norms(st, t, e) + (2.0 * sp.trainable / max(1, st.layers) if e == 2 else 0.0)
    for width, kept, readers in _layer_groups(st):
        hit = [w for name, w in readers if _targeted(name, sp)]
        delta += e * t * r * len(hit)
        if e == 2:
            delta += e * t * sum(hit) - (0 if kept else e * t * width)
        elif not hit and not kept:
            delta -= e * t * width
    outside = -(e + (4 if st.norm == "gemma" else e)) * t * st.hidden - 8.0 * t
    if not act.checkpointing:  # the frozen embedding's output needs no gradient: the first norm keeps nothing
        outside -= 4.0 * t * st.hidden + 4.0 * t
    label = "LoRA: frozen base, adapters' inputs and intermediates"
    if st.experts and st.family in _FUSED_EXPERTS:
        label += " (adapters on fused experts: not measured)"
    return replace(
        act, layer=act.layer + ((label, delta),), outside=act.outside + (("LoRA: frozen head and embedding", outside),)
    )


def _gib(x: float) -> str:
    return f"{x / 2**30:.1f} GiB"
