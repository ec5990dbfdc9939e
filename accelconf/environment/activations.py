"""Activation memory of one training step, from the model's real structure.

This module owns :class:`Structure` (what a decoder keeps for backward: widths, the attention kernel,
the norms, the MLP, dropout, MoE routing, read from ``config.json``) and :func:`estimate` (the bytes
saved for backward per layer and outside the layers, with gradient checkpointing as it runs, and the
largest transient of the step). It imports nothing heavy; :mod:`accelconf.environment.memory`
puts the figure next to the model states.

What is counted is what autograd keeps, tensor by tensor, as transformers 5.x builds each family
(``models/<family>/modeling_<family>.py``) and as PyTorch's kernels save their inputs:

* a linear layer keeps its input (shared by q, k and v, by gate and up); a parameter is not counted;
* an RMSNorm upcasts to fp32: it keeps the fp32 input, the normalised tensor (llama: cast back to the
  compute dtype; gemma: fp32, multiplied by ``1 + weight``) and the fp32 reciprocal root per row;
  a LayerNorm keeps its input and the fp32 mean and reciprocal deviation per row;
* rotary embeddings keep the rotated q and k (and ``cos``/``sin`` once per step); SDPA and
  FlashAttention keep q, k, v, the output and the fp32 log-sum-exp per head and row; eager attention
  keeps the fp32 softmax, its cast to the compute dtype, the repeated k and v (GQA) and a contiguous
  copy of the output;
* a gated MLP keeps gate, act(gate), up and the product; GELU variants as their code computes them;
* dropout keeps a one-byte mask (CUDA's fused kernel) where the config's probability is above 0;
* MoE experts see ``top_k`` tokens per token on average (the routing is data-dependent);
* the loss: ``ForCausalLMLoss`` upcasts the logits to fp32 and ``cross_entropy``'s log-softmax keeps
  its fp32 output (4 bytes per token and vocabulary entry).

Gradient checkpointing (HF ``gradient_checkpointing``, FSDP ``activation_checkpointing``) keeps each
decoder layer's input and recomputes one layer at a time in backward: the peak is every input plus
one layer's activations; ``fsdp_activation_cpu_offload`` moves what is kept to host RAM.

The cache: a training forward with the config's ``use_cache`` fills a DynamicCache, whose first
update concatenates onto an empty tensor, so attention keeps copies of k and v; checkpointing turns
the cache off, and then a fused projection's v (gpt-neox, phi3; gpt2's q, k and v) is a view that
keeps the whole fused output alive.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Literal

Attn = Literal["eager", "sdpa", "flash"]
ATTN_CHOICES: tuple[str, ...] = ("eager", "sdpa", "flash")
# transformers' spellings of ``attn_implementation`` -> the kernel's memory behaviour
_ATTN_ALIASES = {
    "eager": "eager",
    "sdpa": "sdpa",
    "flash_attention_2": "flash",
    "flash_attention_3": "flash",
    "flash": "flash",
    "flex_attention": "sdpa",
    "paged_attention": "sdpa",
}
# families whose transformers model refuses SDPA (``_supports_sdpa = False``): eager runs instead
_NO_SDPA = frozenset({"gemma2"})

# The fp32 tensors an activation function keeps (its input included), in units of its input's size;
# ``gelu_new`` is Python arithmetic: pow keeps x, tanh its output, the last product both factors.
_ACT_SAVED = {
    "silu": 1,
    "swish": 1,
    "gelu": 1,
    "gelu_pytorch_tanh": 1,
    "relu": 1,
    "gelu_new": 4,
    "gelu_fast": 4,
    "gelu_python_tanh": 4,
    "quick_gelu": 2,
}


@dataclass(frozen=True)
class Structure:
    """What a decoder layer keeps for backward, read from ``config.json`` by :func:`structure_of`."""

    family: str
    hidden: int
    layers: int
    heads: int
    kv_heads: int
    head_dim: int
    intermediate: int
    vocab: int
    gated: bool = True
    act: str = "silu"
    norm: Literal["rms", "gemma", "layer"] = "rms"
    norms_per_layer: int = 2
    qk_norm: bool = False
    parallel: bool = False  # attention and MLP read one normed input (phi, falcon, neox parallel)
    fused_qkv: bool = False  # one projection: v is a view that keeps the whole output alive
    rope: bool = True
    rope_fraction: float = 1.0  # phi's partial rotary: the rotated q and k are concatenated copies
    attn: str = "sdpa"
    attn_dropout: float = 0.0
    resid_dropout: float = 0.0
    embd_dropout: float = 0.0
    experts: int = 0
    top_k: int = 0
    shared_expert: int = 0  # qwen2-moe's shared expert width (its sigmoid gate is per token)
    logit_softcap: bool = False  # gemma2's final tanh cap: tanh keeps its output
    attn_softcap: bool = False  # gemma2's attention-score cap (eager only)
    use_cache: bool = True  # config.json's ``use_cache``: a training forward fills a DynamicCache
    shared_gate: bool = True  # qwen2-moe's shared expert has a sigmoid gate; DeepSeek's has none
    # DeepSeek's multi-head latent attention: (q_lora_rank or 0, kv_lora_rank, qk_nope_head_dim,
    # qk_rope_head_dim, v_head_dim); empty for the other families
    mla: tuple[int, ...] = ()
    dense_layers: int = 0  # DeepSeek's first_k_dense_replace: layers with a dense MLP before the MoE ones
    dense_intermediate: int = 0  # their MLP width (``intermediate_size``)

    def with_attn(self, attn: str | None) -> Structure:
        """The same model under another attention kernel (``eager``, ``sdpa``, ``flash`` or a
        transformers spelling); ``None`` keeps the config's."""
        if attn is None:
            return self
        return replace(self, attn=kernel_of(attn, self.family, self.heads, self.kv_heads))


def kernel_of(attn: str | None, family: str, heads: int = 0, kv_heads: int = 0) -> str:
    """The memory behaviour of an ``attn_implementation``: transformers 5.x picks SDPA when the
    config says nothing, and eager for families that refuse SDPA. Falcon hands SDPA k and v with
    fewer heads than q and no ``enable_gqa``: neither the flash nor the memory-efficient kernel (CPU's
    or CUDA's) takes that, so SDPA's math kernel runs, which keeps what eager keeps."""
    kernel = _ATTN_ALIASES.get(str(attn or "sdpa").lower(), "sdpa")
    if kernel == "sdpa" and family == "falcon" and kv_heads != heads:
        return "eager"
    return "eager" if kernel == "sdpa" and family in _NO_SDPA else kernel


def _num(data: dict[str, Any], *keys: str, default: Any = None) -> Any:
    for k in keys:
        if data.get(k) is not None:
            return data[k]
    return default


def structure_of(data: dict[str, Any], family: str) -> Structure:
    """The :class:`Structure` of a ``config.json`` of a family :mod:`modelsize` reads (its keys
    and defaults as transformers' ``configuration_<family>.py``). Raises ``KeyError``/``TypeError``
    on a config without the widths."""
    fam = family
    if fam == "gpt2":
        h = _num(data, "n_embd", "hidden_size")
        heads = _num(data, "n_head", "num_attention_heads")
        return Structure(
            fam,
            h,
            _num(data, "n_layer", "num_hidden_layers"),
            heads,
            heads,
            h // heads,
            _num(data, "n_inner") or 4 * h,
            data["vocab_size"],
            gated=False,
            act=str(_num(data, "activation_function", default="gelu_new")),
            norm="layer",
            rope=False,
            fused_qkv=True,
            attn=kernel_of(_num(data, "attn_implementation", "_attn_implementation"), fam),
            attn_dropout=float(_num(data, "attn_pdrop", default=0.1)),
            resid_dropout=float(_num(data, "resid_pdrop", default=0.1)),
            embd_dropout=float(_num(data, "embd_pdrop", default=0.1)),
            use_cache=bool(data.get("use_cache", True)),
        )
    h = data["hidden_size"]
    heads = _num(data, "num_attention_heads", "n_head")
    kv = _num(data, "num_key_value_heads", "num_kv_heads", default=heads)
    hd = _num(data, "head_dim", default=h // heads)
    layers = _num(data, "num_hidden_layers", "n_layer")
    attn = kernel_of(_num(data, "attn_implementation", "_attn_implementation"), fam)
    common: dict[str, Any] = dict(
        attn=attn,
        attn_dropout=float(_num(data, "attention_dropout", default=0.0)),
        use_cache=bool(data.get("use_cache", True)),
    )
    if fam in ("gpt_neox", "falcon", "phi"):
        return _layernorm_family(data, fam, h, heads, kv, hd, layers, common)
    if fam in ("deepseek_v2", "deepseek_v3"):
        return _deepseek(data, fam, h, heads, layers, common)
    act = str(_num(data, "hidden_act", "hidden_activation", default="silu"))
    inter = data["intermediate_size"]
    norm: Literal["rms", "gemma"] = "gemma" if fam.startswith("gemma") else "rms"
    per_layer = 4 if fam in ("gemma2", "gemma3", "gemma3_text") else 2
    experts = top_k = shared = 0
    if fam == "mixtral":
        experts, top_k = data.get("num_local_experts") or 8, data.get("num_experts_per_tok") or 2
    elif fam in ("qwen2_moe", "qwen3_moe"):
        experts = data.get("num_experts") or (60 if fam == "qwen2_moe" else 128)  # configuration_<family>.py
        top_k = data.get("num_experts_per_tok") or (4 if fam == "qwen2_moe" else 8)
        inter = data.get("moe_intermediate_size") or inter
        shared = (data.get("shared_expert_intermediate_size") or 5632) if fam == "qwen2_moe" else 0
    return Structure(
        fam,
        h,
        layers,
        heads,
        kv,
        hd,
        inter,
        data["vocab_size"],
        act=act,
        norm=norm,
        norms_per_layer=per_layer,
        qk_norm=fam in ("qwen3", "qwen3_moe", "gemma3", "gemma3_text"),
        fused_qkv=fam == "phi3",
        experts=experts,
        top_k=top_k,
        shared_expert=shared,
        logit_softcap=bool(data.get("final_logit_softcapping")),
        attn_softcap=bool(data.get("attn_logit_softcapping")),
        **common,
    )


# Defaults of DeepSeek's shape keys (configuration_deepseek_v2.py, configuration_deepseek_v3.py)
_DEEPSEEK_DEFAULTS: dict[str, dict[str, Any]] = {
    "deepseek_v2": dict(
        first_k_dense_replace=0,
        kv_lora_rank=512,
        q_lora_rank=1536,
        n_routed_experts=64,
        n_shared_experts=2,
        qk_nope_head_dim=128,
        qk_rope_head_dim=64,
        v_head_dim=128,
        moe_intermediate_size=1407,
    ),
    "deepseek_v3": dict(
        first_k_dense_replace=3,
        kv_lora_rank=512,
        q_lora_rank=1536,
        n_routed_experts=256,
        n_shared_experts=1,
        qk_nope_head_dim=128,
        qk_rope_head_dim=64,
        v_head_dim=128,
        moe_intermediate_size=2048,
    ),
}


def deepseek_key(data: dict[str, Any], family: str, key: str) -> Any:
    """A DeepSeek shape key of a config.json or its configuration default. ``q_lora_rank: null`` is
    meaningful (a plain q projection, as DeepSeek-V2-Lite has), so an explicit null is kept."""
    if key == "q_lora_rank" and key in data:
        return data[key]
    value = data.get(key)
    return _DEEPSEEK_DEFAULTS[family][key] if value is None else value


def _deepseek(data: dict[str, Any], fam: str, h: int, heads: int, layers: int, common: dict[str, Any]) -> Structure:
    """DeepSeek-V2/V3: MLA attention, dense MLPs for the first ``first_k_dense_replace`` layers, then
    routed experts beside ungated shared experts (the shape keys' defaults are :mod:`modelsize`'s)."""

    def key(name: str) -> int:
        return int(deepseek_key(data, fam, name) or 0)

    moe = key("moe_intermediate_size")
    mla = tuple(key(k) for k in ("q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"))
    return Structure(
        fam,
        h,
        layers,
        heads,
        _num(data, "num_key_value_heads", default=heads),
        mla[3],
        moe,
        data["vocab_size"],
        act=str(_num(data, "hidden_act", default="silu")),
        experts=key("n_routed_experts"),
        top_k=int(_num(data, "num_experts_per_tok", default=8 if fam == "deepseek_v3" else 1)),
        shared_expert=moe * key("n_shared_experts"),
        shared_gate=False,
        mla=mla,
        dense_layers=min(layers, key("first_k_dense_replace")),
        dense_intermediate=data["intermediate_size"],
        **common,
    )


def _layernorm_family(
    data: dict[str, Any], fam: str, h: int, heads: int, kv: int, hd: int, layers: int, common: dict[str, Any]
) -> Structure:
    """phi, gpt-neox and falcon: LayerNorm, a non-gated GELU MLP, partial or no rotary."""
    if fam == "phi":
        return Structure(
            fam,
            h,
            layers,
            heads,
            kv,
            hd,
            data["intermediate_size"],
            data["vocab_size"],
            gated=False,
            act=str(data.get("hidden_act") or "gelu_new"),
            norm="layer",
            norms_per_layer=1,
            parallel=True,
            rope_fraction=float(data.get("partial_rotary_factor") or 0.5),
            qk_norm=bool(data.get("qk_layernorm")),
            resid_dropout=float(data.get("resid_pdrop") or 0.0),
            embd_dropout=float(data.get("embd_pdrop") or 0.0),
            **common,
        )
    if fam == "gpt_neox":
        return Structure(
            fam,
            h,
            layers,
            heads,
            heads,
            hd,
            data["intermediate_size"],
            data["vocab_size"],
            gated=False,
            act=str(data.get("hidden_act") or "gelu"),
            norm="layer",
            parallel=bool(data.get("use_parallel_residual", True)),
            fused_qkv=True,
            rope_fraction=float(data.get("rotary_pct", data.get("partial_rotary_factor")) or 0.25),
            resid_dropout=float(data.get("hidden_dropout") or 0.0),
            **common,
        )
    new_arch = bool(data.get("new_decoder_architecture"))
    if new_arch:
        kv = data.get("num_kv_heads") or heads
    elif data.get("multi_query", True):
        kv = 1
    else:
        kv = heads
    common = dict(common, attn=kernel_of(_num(data, "attn_implementation", "_attn_implementation"), fam, heads, kv))
    two_norms = new_arch and (data.get("num_ln_in_parallel_attn") or 2) == 2
    parallel = bool(data.get("parallel_attn", True)) or new_arch
    return Structure(
        fam,
        h,
        layers,
        heads,
        kv,
        hd,
        data.get("ffn_hidden_size") or 4 * h,
        data["vocab_size"],
        gated=False,
        act=str(data.get("activation") or "gelu"),
        norm="layer",
        norms_per_layer=2 if two_norms or not parallel else 1,
        parallel=parallel,
        fused_qkv=True,
        rope=not data.get("alibi", False),
        resid_dropout=float(data.get("hidden_dropout") or 0.0),
        **common,
    )


# -- the count ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Activations:
    """Bytes per GPU for one micro batch. ``layer`` is one decoder layer's saved bytes (by part),
    ``outside`` what the embedding, the final norm and the loss keep; with checkpointing ``kept``
    is the layer inputs (on the host when ``offloaded``) and one layer is alive while it is recomputed."""

    structure: Structure
    seq_len: int
    micro_batch: int
    dtype_bytes: int
    layer: tuple[tuple[str, float], ...]
    outside: tuple[tuple[str, float], ...]
    checkpointing: bool = False
    offloaded: bool = False
    transient: tuple[str, float] = ("", 0.0)
    dense: tuple[tuple[str, float], ...] = ()  # DeepSeek's first dense layers' parts (``layer``: the MoE ones)

    @property
    def per_layer(self) -> float:
        return sum(v for _, v in self.layer)

    @property
    def dense_layers(self) -> int:
        return self.structure.dense_layers if self.dense else 0

    @property
    def largest_layer(self) -> float:
        """The most any one decoder layer keeps (the one recomputed at the peak of checkpointing)."""
        dense = sum(v for _, v in self.dense)
        return dense if self.dense_layers >= self.structure.layers else max(self.per_layer, dense)

    @property
    def outside_total(self) -> float:
        return sum(v for _, v in self.outside)

    @property
    def kept(self) -> float:
        """What stays from forward to backward for the decoder layers: all of it, or their inputs."""
        L = self.structure.layers
        if self.checkpointing:
            return float(L * self.dtype_bytes * self.seq_len * self.micro_batch * self.structure.hidden)
        k = self.dense_layers
        return (L - k) * self.per_layer + k * sum(v for _, v in self.dense)

    @property
    def saved(self) -> float:
        """The peak of what autograd keeps on the GPU at once: everything at the end of forward; with
        checkpointing, the inputs (unless offloaded) plus the larger of what the loss keeps and one
        recomputed layer (the loss's tensors are released before the layers' backward starts)."""
        if not self.checkpointing:
            return self.kept + self.outside_total
        recompute = self.largest_layer - self._input_shared() + self.outside[0][1]
        return (0.0 if self.offloaded else self.kept) + max(self.outside_total, recompute)

    def _input_shared(self) -> float:
        """Bytes of the recomputed layer's first norm that are the kept input itself: a LayerNorm
        saves its input, an RMSNorm saves it when it is already fp32."""
        st = self.structure
        same = st.norm == "layer" or self.dtype_bytes == 4
        return float(self.dtype_bytes * self.seq_len * self.micro_batch * st.hidden) if same else 0.0

    @property
    def host(self) -> float:
        return self.kept if self.checkpointing and self.offloaded else 0.0

    @property
    def peak(self) -> float:
        return self.saved + self.transient[1]

    def lines(self) -> list[tuple[str, float]]:
        """Labelled lines for a table (bytes)."""
        st = self.structure
        if self.checkpointing:
            where = " (host RAM)" if self.offloaded else ""
            out = [
                (f"layer inputs kept ({st.layers} layers, checkpointed){where}", self.kept),
                ("one layer recomputed in backward", self.largest_layer),
            ]
        elif self.dense:
            out = self._layer_lines()
        else:
            out = [
                (
                    f"decoder layers ({st.layers} x "
                    f"{self.per_layer / max(1, self.seq_len * self.micro_batch * st.hidden):.1f}"
                    f" bytes x seq x batch x hidden)",
                    self.kept,
                )
            ]
        out += list(self.outside)
        if self.transient[1]:
            out.append((f"largest transient: {self.transient[0]}", self.transient[1]))
        return out

    def _layer_lines(self) -> list[tuple[str, float]]:
        """Dense layers, then MoE layers (DeepSeek's ``first_k_dense_replace``)."""
        st, k = self.structure, self.dense_layers
        unit = max(1, self.seq_len * self.micro_batch * st.hidden)
        dense = sum(v for _, v in self.dense)
        return [
            (f"dense decoder layers ({k} x {dense / unit:.1f} bytes x seq x batch x hidden)", k * dense),
            (
                f"MoE decoder layers ({st.layers - k} x {self.per_layer / unit:.1f} bytes x seq x batch x hidden)",
                (st.layers - k) * self.per_layer,
            ),
        ]

    def formula(self) -> str:
        st = self.structure
        ck = ", checkpointed" + (" with CPU offload" if self.offloaded else "") if self.checkpointing else ""
        return (
            f"{st.family} structure ({st.attn} attention{ck}): what autograd saves for backward, "
            f"tensor by tensor, plus the logits in fp32 for the loss"
        )


def _norm(st: Structure, rows: float, width: int, e: int, out_saved: bool = True) -> float:
    """One norm over ``rows`` x ``width``: see the module doc."""
    out = e * rows * width if out_saved else 0.0
    if st.norm == "layer":
        return e * rows * width + 8 * rows + out
    if st.norm == "gemma":
        return 8 * rows * width + 4 * rows + 4 * width + out
    return (4 + e) * rows * width + 4 * rows + out


def _attention(st: Structure, s: int, b: int, e: int, cache: bool) -> list[tuple[str, float]]:
    t = s * b
    if st.mla:
        return _mla(st, s, b, e)
    q = st.heads * st.head_dim
    eager = st.attn == "eager"
    parts = [("q, k, v", _qkv(st, t, e, eager, b, cache))]
    if st.qk_norm:
        parts.append(
            (
                "q and k norms",
                _norm(st, t * st.heads, st.head_dim, e, False) + _norm(st, t * st.kv_heads, st.head_dim, e, False),
            )
        )
    if eager:
        scores = b * st.heads * s * s
        probs = 4 * scores + (e * scores if e != 4 else 0.0) + (e * scores if st.attn_softcap else 0.0)
        if st.attn_dropout > 0:
            probs += scores + (0.0 if e != 4 else e * scores)  # the mask; the dropped copy replaces the cast
        parts.append(("attention scores and probabilities (eager)", float(probs)))
        parts.append(("attention output", float(e * t * q)))
    else:
        parts.append(("attention output and log-sum-exp", float(e * t * q + 4 * t * st.heads)))
        if _rope_cat(st):  # the kernel's output follows q's (b, heads, s, d) layout: o_proj needs a copy
            parts.append(("attention output, contiguous copy", float(e * t * q)))
    return parts


def _mla(st: Structure, s: int, b: int, e: int) -> list[tuple[str, float]]:
    """DeepSeek's multi-head latent attention (``DeepseekV2Attention``): q's low-rank bottleneck and
    its norm; kv's compressed projection, whose norm (in fp32 compute) keeps the whole output of
    which kv is a view, and kv_b's input (the norm's output, or the cache's copy: the same size);
    q concatenated from its parts and k assembled in a new tensor, both kept by the kernel. v is a
    view of kv_b's output: SDPA keeps that whole output, eager's batched matmul a copy of v (of the
    whole output when the batch is 1 and the fold is a view). FlashAttention gets v padded to q's
    head dim (transformers' flash integration) and keeps its padded output. The cache holds the
    compressed latents, which autograd does not keep."""
    t, hh = s * b, st.heads
    q_rank, kv_rank, nope, rope, vd = st.mla
    parts: list[tuple[str, float]] = []
    if q_rank:
        parts.append(("q low-rank projection and its norm", _norm(st, t, q_rank, e)))
    kv = _norm(st, t, kv_rank, e) + (4 * t * rope if e == 4 else 0)
    parts.append(("compressed kv and its norm", float(kv)))
    qk = 2 * e * t * hh * (nope + rope)
    if st.attn == "eager":
        scores = b * hh * s * s
        probs = 4 * scores + (e * scores if e != 4 else 0)
        v = e * t * hh * (vd if b > 1 else nope + vd)
        parts.append(("q, k, v", float(qk + v)))
        parts.append(("attention scores and probabilities (eager)", float(probs)))
        parts.append(("attention output", float(e * t * hh * vd)))
        return parts
    if st.attn == "flash":  # transformers pads v to q's head dim for FlashAttention and crops the output
        parts.append(("q, k, padded v", float(qk + e * t * hh * (nope + rope))))
        out = e * t * hh * (nope + rope + vd) + 4 * t * hh
    else:
        parts.append(("q, k, v", float(qk + e * t * hh * (nope + vd))))
        out = 2 * e * t * hh * vd + 4 * t * hh
    parts.append(("attention output and log-sum-exp, contiguous copy", float(out)))
    return parts


def _rope_cat(st: Structure) -> bool:
    """Rotary applied to part of each head and concatenated back (phi, gpt-neox; phi3 always)."""
    return st.rope and (st.rope_fraction < 1 or st.family == "phi3")


def _qkv(st: Structure, t: int, e: int, eager: bool, b: int = 1, cache: bool = True) -> float:
    """q, k and v as the attention kernel keeps them: rotated copies of q and k, v of its own (SDPA
    takes a contiguous one; eager's batched matmul folds it into a copy), eager's repeated k and v
    for GQA. Falcon broadcasts one k/v head with ``expand``: a copy only when the batch is folded.

    With a cache (a training forward with ``use_cache`` fills a DynamicCache, whose first update
    concatenates onto an empty tensor) k and v are fresh copies. Without one (gradient checkpointing
    turns the cache off) a fused projection's v is a view: it keeps the whole fused output alive
    beside the rotated q and k, unless eager's matmul copies it (GQA repeat, or a batch above 1)."""
    q, kv = st.heads * st.head_dim, st.kv_heads * st.head_dim
    repeated = eager and st.kv_heads != st.heads and (st.family != "falcon" or b > 1)
    if not st.rope and st.fused_qkv:  # gpt2: q, k and v are views of one output, k and v copied by the cache
        if eager and cache and b > 1:  # eager's matmul folds q into a copy: nothing keeps the fused output
            return float(e * t * (q + 2 * kv))
        return float(e * t * (q + 2 * kv) + (2 * e * t * q if repeated else 0) + (2 * e * t * kv if cache else 0))
    width = q if repeated else kv
    if st.fused_qkv and st.family != "falcon" and not cache and not (eager and (repeated or b > 1)):
        return float(e * t * (q + 2 * kv) + e * t * (q + kv))  # the fused output, the rotated q and k
    return float(e * t * (q + 2 * width))


def _mlp(st: Structure, t: float, e: int) -> float:
    act = _ACT_SAVED.get(st.act, 1)
    return e * t * st.intermediate * (act + 3 if st.gated else act + 1)


def _layer(st: Structure, s: int, b: int, e: int, cache: bool) -> list[tuple[str, float]]:
    t = s * b
    h = st.hidden
    parts: list[tuple[str, float]] = [("norms", _norms(st, t, e))]
    parts += _attention(st, s, b, e, cache)
    if st.experts:
        parts.append(("MoE router and experts (top-k routed)", _moe(st, t, e)))
    else:
        parts.append(("MLP", _mlp(st, t, e)))
    if st.resid_dropout > 0:
        parts.append(("dropout masks", float(2 * t * h)))
    return parts


def _norms(st: Structure, t: int, e: int) -> float:
    h = st.hidden
    if st.norms_per_layer == 4:  # gemma2/3: the post-norms' outputs go to the residual add only
        return 2 * _norm(st, t, h, e) + 2 * _norm(st, t, h, e, False)
    shared = e * t * h if st.parallel and st.norms_per_layer == 2 and st.norm == "layer" else 0
    return st.norms_per_layer * _norm(st, t, h, e) - shared  # parallel: both LayerNorms keep one input


def _moe(st: Structure, t: int, e: int) -> float:
    """The router's fp32 softmax and its int64 routing indices, then per routed token (``top_k`` per
    token, balanced on average) the gathered input, the expert MLP and the output before weighting."""
    routed = t * st.top_k
    router = 4 * t * st.experts + 4 * 8 * routed
    experts = 2 * e * routed * st.hidden + _mlp(st, routed, e)
    if st.shared_expert:
        experts += _mlp(replace(st, intermediate=st.shared_expert), t, e) + (e * t if st.shared_gate else 0)
    if st.mla and e != 4:  # DeepSeek's router runs in fp32: an fp32 copy of its input and of its weight
        router += 4 * t * st.hidden + 4 * st.experts * st.hidden
    return float(router + experts)


def _outside(st: Structure, s: int, b: int, e: int) -> list[tuple[str, float]]:
    t = s * b
    head: float = 8 * t  # the token ids the embedding's backward needs
    if st.family == "deepseek_v2":
        head += 4 * s * st.head_dim  # the complex64 rotary factors, shared by the batch
    elif st.rope:
        head += 2 * e * s * int(st.head_dim * st.rope_fraction)  # cos and sin, shared by the batch
    if st.embd_dropout > 0:
        head += t * st.hidden
    final_norm = _norm(st, t, st.hidden, e)
    logits = 4.0 * t * st.vocab + 8 * t  # log-softmax's fp32 output; the shifted labels
    if st.logit_softcap:
        logits += e * t * st.vocab  # tanh keeps its output
    return [
        ("embedding and positions", float(head)),
        ("final norm", float(final_norm)),
        (f"logits and loss (fp32, vocabulary {st.vocab:,})", logits),
    ]


def _transient(st: Structure, s: int, b: int, e: int) -> tuple[str, float]:
    """The largest tensor pair alive beyond what is saved: the loss's fp32 gradient (nll's and
    log-softmax's), the MLP intermediate's gradients, or eager attention's softmax gradient."""
    t = s * b
    width = max(st.intermediate * max(1, st.top_k), st.dense_intermediate if st.dense_layers else 0)
    cands = [
        ("fp32 logits gradient (loss backward)", 8.0 * t * st.vocab),
        ("MLP intermediate gradients (backward)", float(e * t * width * (3 if st.gated else 2))),
    ]
    if st.attn == "eager":
        cands.append(("attention probabilities gradient (eager)", float((4 + e) * b * st.heads * s * s)))
    return max(cands, key=lambda c: c[1])


def estimate(
    st: Structure,
    seq_len: int,
    micro_batch: int,
    dtype_bytes: int,
    *,
    checkpointing: bool = False,
    cpu_offload: bool = False,
) -> Activations:
    """Activation bytes of one micro batch of ``seq_len`` tokens in a ``dtype_bytes`` compute dtype.
    Checkpointing runs without the cache (transformers turns ``use_cache`` off for it)."""
    s, b, e = seq_len, micro_batch, dtype_bytes
    cache = st.use_cache and not checkpointing
    dense = replace(st, experts=0, top_k=0, intermediate=st.dense_intermediate) if st.dense_layers else None
    return Activations(
        st,
        s,
        b,
        e,
        tuple(_layer(st, s, b, e, cache)),
        tuple(_outside(st, s, b, e)),
        checkpointing,
        checkpointing and cpu_offload,
        _transient(st, s, b, e),
        () if dense is None else tuple(_layer(dense, s, b, e, cache)),
    )
