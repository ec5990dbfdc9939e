"""How big a model is, from what the user has locally: a count (``8B``, ``70e9``) or a model folder.

This module owns :class:`ModelSize` (parameter count, largest layer, tensor shapes when known, the
shape numbers the activation formula needs) and the three ways to get one from a Hugging Face model
folder, in order: the ``total_size`` (or ``total_parameters``) of ``model.safetensors.index.json``
with the checkpoint dtype; the tensor shapes in the safetensors files' headers (only the header is
read, never the weights); the parameter tensors computed from ``config.json`` for the common
decoder families (:data:`FAMILIES`, shapes as transformers' modeling files build them). Nothing is
downloaded and nothing imports torch or transformers. Turning a size into memory is
:mod:`accelconf.environment.memory`'s job.

The *largest layer* is DeepSpeed's ``largest_layer_params``: the most parameters any one module
holds itself (``deepspeed/runtime/zero/stage3.py``: ``model_to_params`` sums
``m.parameters(recurse=False)``), found here by grouping tensor names by their module prefix.
"""

from __future__ import annotations

import json
import math
import os
import re
import struct
from dataclasses import dataclass, field, replace
from typing import Any

from accelconf.environment import activations
from accelconf.environment.activations import Structure, structure_of
from accelconf.errors import UsageError

# Bytes per element for safetensors dtype codes (safetensors' Dtype enum).
SAFETENSORS_BYTES = {
    "F64": 8,
    "I64": 8,
    "U64": 8,
    "F32": 4,
    "I32": 4,
    "U32": 4,
    "F16": 2,
    "BF16": 2,
    "I16": 2,
    "U16": 2,
    "I8": 1,
    "U8": 1,
    "BOOL": 1,
    "F8_E4M3": 1,
    "F8_E5M2": 1,
    "F8_E8M0": 1,
    "F4": 0.5,
}
TORCH_DTYPE_BYTES = {
    "float32": 4,
    "float": 4,
    "float16": 2,
    "half": 2,
    "bfloat16": 2,
    "float64": 8,
    "float8_e4m3fn": 1,
    "float8_e5m2": 1,
}

# Without a model's structure, the largest layer is taken as 1/32 of the parameters (one decoder
# layer of a 32-layer model; 70B models have 80 layers, so this errs on the large side).
LARGEST_LAYER_GUESS = 32

Shape = tuple[int, ...]


@dataclass(frozen=True)
class Arch:
    """The shape numbers of a transformer: hidden size, layers, attention heads."""

    hidden: int
    layers: int
    heads: int


@dataclass(frozen=True)
class ModelSize:
    """A model's size. ``tensors`` (name, shape) are known from safetensors headers or config.json;
    ``largest_layer`` is DeepSpeed's ``largest_layer_params``; ``largest_unit`` the largest FSDP unit
    under transformer-based wrapping (a decoder layer, or what stays in the root: embeddings, head).
    ``source`` says where the count came from; ``notes`` what was assumed."""

    params: int
    largest_layer: int
    largest_unit: int
    source: str
    tensors: tuple[tuple[str, Shape], ...] = ()
    arch: Arch | None = None
    family: str | None = None
    checkpoint_dtype: str | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)
    largest_layer_known: bool = True
    structure: Structure | None = None  # what the layers keep for backward (config.json of a known family)

    def to_json(self) -> dict[str, Any]:
        return {
            "params": self.params,
            "largest_layer_params": self.largest_layer,
            "largest_layer_known": self.largest_layer_known,
            "largest_fsdp_unit_params": self.largest_unit,
            "source": self.source,
            "family": self.family,
            "checkpoint_dtype": self.checkpoint_dtype,
            "arch": None
            if self.arch is None
            else {"hidden": self.arch.hidden, "layers": self.arch.layers, "heads": self.arch.heads},
            "notes": list(self.notes),
        }


_SUFFIX = {"": 1, "k": 10**3, "m": 10**6, "b": 10**9, "g": 10**9, "t": 10**12}


def parse_count(text: str | int | float, what: str = "--params") -> int:
    """``8B``, ``1.5b``, ``70e9``, ``350M``, ``7000000000`` -> an int. Raises :class:`UsageError`."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        value = float(text)
    else:
        m = re.fullmatch(r"\s*([0-9][0-9_,]*(?:\.[0-9]+)?(?:e[+-]?[0-9]+)?)\s*([kmbgt]?)\s*\Z", str(text), re.I)
        if not m:
            raise UsageError(f"{what}: {text!r} is not a parameter count (examples: 8B, 70e9, 350M, 124439808)")
        value = float(m.group(1).replace("_", "").replace(",", "")) * _SUFFIX[m.group(2).lower()]
    if not math.isfinite(value) or value < 1:
        raise UsageError(f"{what}: {text!r} is not a positive parameter count")
    return int(round(value))


def from_count(params: int | str, largest_layer: int | str | None = None) -> ModelSize:
    """A size from a count alone. Without ``largest_layer``, 1/32 of the count is assumed."""
    n = parse_count(params)
    if largest_layer is not None:
        big = parse_count(largest_layer, "--largest-layer")
        return ModelSize(n, big, big, f"--params {params}")
    big = max(1, n // LARGEST_LAYER_GUESS)
    return ModelSize(
        n,
        big,
        big,
        f"--params {params}",
        largest_layer_known=False,
        notes=(
            f"largest layer not known from a count alone: assumed 1/{LARGEST_LAYER_GUESS} of the parameters "
            f"({human_count(big)}); --model DIR gives the real one",
        ),
    )


def human_count(n: float) -> str:
    for unit, div in (("T", 1e12), ("B", 1e9), ("M", 1e6), ("K", 1e3)):
        if n >= div:
            return f"{n / div:.3g}{unit}"
    return str(int(n))


# -- tensors -> layers --------------------------------------------------------------------------


def _numel(shape: Shape) -> int:
    return math.prod(shape) if shape else 1


_LAYER_RE = re.compile(r"^(.*?\.(?:layers|h|blocks|layer)\.\d+)\.")


def largest_layers(tensors: list[tuple[str, Shape]] | tuple[tuple[str, Shape], ...]) -> tuple[int, int]:
    """(largest module's own parameters, largest FSDP unit) from tensor names.

    A module is the name without its last component (``...q_proj.weight`` -> ``...q_proj``). An FSDP
    unit is one numbered block (``model.layers.7``); every tensor outside the blocks stays in the root.
    """
    modules: dict[str, int] = {}
    units: dict[str, int] = {}
    for name, shape in tensors:
        n = _numel(shape)
        modules[name.rpartition(".")[0]] = modules.get(name.rpartition(".")[0], 0) + n
        m = _LAYER_RE.match(name)
        unit = m.group(1) if m else "<root>"
        units[unit] = units.get(unit, 0) + n
    return max(modules.values(), default=0), max(units.values(), default=0)


# -- safetensors ------------------------------------------------------------------------------


def read_safetensors_header(path: str) -> dict[str, Any]:
    """The JSON header of a ``.safetensors`` file (8-byte little-endian length, then JSON)."""
    with open(path, "rb") as fh:
        head = fh.read(8)
        if len(head) != 8:
            raise ValueError("file too short for a safetensors header")
        (length,) = struct.unpack("<Q", head)
        if length > 100_000_000:
            raise ValueError("safetensors header length is implausible")
        data = json.loads(fh.read(length))
    if not isinstance(data, dict):
        raise ValueError("safetensors header is not a JSON object")
    return data


# Buffers some checkpoints store next to the parameters (GPT-2's causal masks, old rotary caches).
_BUFFER_SUFFIXES = (".attn.bias", ".attn.masked_bias", ".rotary_emb.inv_freq")


def _header_tensors(paths: list[str]) -> tuple[list[tuple[str, Shape]], set[str]]:
    tensors: list[tuple[str, Shape]] = []
    dtypes: set[str] = set()
    for p in paths:
        for name, info in read_safetensors_header(p).items():
            if name == "__metadata__" or not isinstance(info, dict) or name.endswith(_BUFFER_SUFFIXES):
                continue
            tensors.append((name, tuple(int(d) for d in info.get("shape", ()))))
            dtypes.add(str(info.get("dtype")))
    return tensors, dtypes


# -- config.json ------------------------------------------------------------------------------

# Defaults of the optional keys, from transformers' configuration_<family>.py (transformers 5.x).
_TIE = {
    "llama": False,
    "mistral": False,
    "mixtral": False,
    "qwen2": False,
    "qwen3": False,
    "gemma": True,
    "gemma2": True,
    "gemma3_text": True,
    "phi": False,
    "phi3": False,
    "gpt2": True,
    "gpt_neox": False,
    "falcon": True,
    "qwen2_moe": False,
    "qwen3_moe": False,
    "deepseek_v2": False,
    "deepseek_v3": False,
}
FAMILIES: tuple[str, ...] = tuple(sorted(_TIE))


class _Cfg:
    def __init__(self, data: dict[str, Any], family: str, path: str) -> None:
        self.data, self.family, self.path = data, family, path

    def __call__(self, *keys: str, default: Any = ...) -> Any:
        for k in keys:
            if self.data.get(k) is not None:
                return self.data[k]
        if default is ...:
            raise UsageError(f"{self.path}: a {self.family} config.json needs {keys[0]!r} to count parameters")
        return default


def _linear(name: str, out: int, inp: int, bias: bool) -> list[tuple[str, Shape]]:
    tensors: list[tuple[str, Shape]] = [(f"{name}.weight", (out, inp))]
    return tensors + ([(f"{name}.bias", (out,))] if bias else [])


def _norm(name: str, size: int, bias: bool = False) -> list[tuple[str, Shape]]:
    tensors: list[tuple[str, Shape]] = [(f"{name}.weight", (size,))]
    return tensors + ([(f"{name}.bias", (size,))] if bias else [])


def _llama_like(c: _Cfg) -> tuple[list[tuple[str, Shape]], Arch]:
    """llama, mistral, mixtral, qwen2, qwen3, qwen2-moe, qwen3-moe, gemma, gemma2, gemma3 (text), phi3
    (modeling_<family>.py)."""
    fam = c.family
    h, v, layers = c("hidden_size"), c("vocab_size"), c("num_hidden_layers")
    heads = c("num_attention_heads")
    kv = c("num_key_value_heads", default=heads)
    hd = c("head_dim", default=h // heads)
    qkv_bias = fam == "qwen2" or c("qkv_bias" if fam == "qwen2_moe" else "attention_bias", default=fam == "qwen2_moe")
    o_bias = fam not in ("qwen2", "qwen2_moe") and c("attention_bias", default=False)
    out: list[tuple[str, Shape]] = [("model.embed_tokens.weight", (v, h))]
    for i in range(layers):
        p = f"model.layers.{i}"
        if fam == "phi3":
            out += _linear(f"{p}.self_attn.qkv_proj", (heads + 2 * kv) * hd, h, False)
            out += _linear(f"{p}.self_attn.o_proj", h, heads * hd, False)
        else:
            out += _linear(f"{p}.self_attn.q_proj", heads * hd, h, qkv_bias)
            out += _linear(f"{p}.self_attn.k_proj", kv * hd, h, qkv_bias)
            out += _linear(f"{p}.self_attn.v_proj", kv * hd, h, qkv_bias)
            out += _linear(f"{p}.self_attn.o_proj", h, heads * hd, o_bias)
        if fam in ("qwen3", "qwen3_moe", "gemma3_text"):
            out += _norm(f"{p}.self_attn.q_norm", hd) + _norm(f"{p}.self_attn.k_norm", hd)
        out += _mlp_tensors(c, p, i, h)
        out += _norm(f"{p}.input_layernorm", h) + _norm(f"{p}.post_attention_layernorm", h)
        if fam in ("gemma2", "gemma3_text"):
            out += _norm(f"{p}.pre_feedforward_layernorm", h) + _norm(f"{p}.post_feedforward_layernorm", h)
    out += _norm("model.norm", h)
    return out, Arch(h, layers, heads)


# (num_experts, moe_intermediate_size) when config.json leaves them out: configuration_<family>.py
_MOE_DEFAULTS = {"qwen2_moe": (60, 1408), "qwen3_moe": (128, 768)}


def moe_layer(c: Any, index: int) -> bool:
    """Whether decoder layer ``index`` of a qwen2-moe/qwen3-moe config is sparse (the rule of their
    ``DecoderLayer.__init__``: not in ``mlp_only_layers`` and on the ``decoder_sparse_step``)."""
    step = c("decoder_sparse_step", default=1) or 1
    return index not in (c("mlp_only_layers", default=None) or []) and (index + 1) % step == 0


def _mlp_tensors(c: _Cfg, p: str, i: int, h: int) -> list[tuple[str, Shape]]:
    """One layer's feed-forward tensors: dense, fused (phi3), mixtral's experts as its checkpoints
    store them, or the qwen-moe experts as transformers 5 builds them (one fused tensor per kind)."""
    fam, inter = c.family, c("intermediate_size")
    if fam == "phi3":
        return _linear(f"{p}.mlp.gate_up_proj", 2 * inter, h, False) + _linear(f"{p}.mlp.down_proj", h, inter, False)
    if fam == "mixtral":
        experts = c("num_local_experts")
        out = _linear(f"{p}.block_sparse_moe.gate", experts, h, False)
        for e in range(experts):  # as the checkpoints store them (w1, w2, w3 per expert)
            q = f"{p}.block_sparse_moe.experts.{e}"
            out += _linear(f"{q}.w1", inter, h, False) + _linear(f"{q}.w2", h, inter, False)
            out += _linear(f"{q}.w3", inter, h, False)
        return out
    if fam in ("qwen2_moe", "qwen3_moe") and c("num_experts", default=_MOE_DEFAULTS[fam][0]) and moe_layer(c, i):
        experts = c("num_experts", default=_MOE_DEFAULTS[fam][0])
        moe = c("moe_intermediate_size", default=_MOE_DEFAULTS[fam][1])
        out = [
            (f"{p}.mlp.gate.weight", (experts, h)),
            (f"{p}.mlp.experts.gate_up_proj", (experts, 2 * moe, h)),
            (f"{p}.mlp.experts.down_proj", (experts, h, moe)),
        ]
        if fam == "qwen2_moe":
            shared = c("shared_expert_intermediate_size", default=5632)
            out += _linear(f"{p}.mlp.shared_expert.gate_proj", shared, h, False)
            out += _linear(f"{p}.mlp.shared_expert.up_proj", shared, h, False)
            out += _linear(f"{p}.mlp.shared_expert.down_proj", h, shared, False)
            out += _linear(f"{p}.mlp.shared_expert_gate", 1, h, False)
        return out
    bias = c("mlp_bias", default=False)
    return (
        _linear(f"{p}.mlp.gate_proj", inter, h, bias)
        + _linear(f"{p}.mlp.up_proj", inter, h, bias)
        + _linear(f"{p}.mlp.down_proj", h, inter, bias)
    )


def deepseek_key(c: _Cfg, key: str) -> Any:
    """A DeepSeek shape key of ``c`` or its configuration default (:func:`activations.deepseek_key`)."""
    return activations.deepseek_key(c.data, c.family, key)


def deepseek_moe_layer(c: _Cfg, index: int) -> bool:
    """Whether DeepSeek decoder layer ``index`` is MoE: transformers 5.x builds ``DeepseekV2Moe`` /
    ``DeepseekV3MoE`` from ``first_k_dense_replace`` on, every layer (``moe_layer_freq``, which the
    original remote code also read, is not read by transformers)."""
    return index >= int(deepseek_key(c, "first_k_dense_replace"))


def _mla_tensors(c: _Cfg, p: str, h: int) -> list[tuple[str, Shape]]:
    """Multi-head latent attention (``DeepseekV2Attention``): q straight or through a low-rank
    bottleneck with its norm, the compressed kv with the shared rotary key, kv's up-projection."""
    heads, bias = c("num_attention_heads"), c("attention_bias", default=False)
    nope, rope, vd = (deepseek_key(c, k) for k in ("qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"))
    q_rank, kv_rank = deepseek_key(c, "q_lora_rank"), deepseek_key(c, "kv_lora_rank")
    a = f"{p}.self_attn"
    if q_rank is None:
        out = _linear(f"{a}.q_proj", heads * (nope + rope), h, False)
    else:
        out = _linear(f"{a}.q_a_proj", q_rank, h, bias) + _norm(f"{a}.q_a_layernorm", q_rank)
        out += _linear(f"{a}.q_b_proj", heads * (nope + rope), q_rank, False)
    out += _linear(f"{a}.kv_a_proj_with_mqa", kv_rank + rope, h, bias) + _norm(f"{a}.kv_a_layernorm", kv_rank)
    out += _linear(f"{a}.kv_b_proj", heads * (nope + vd), kv_rank, False)
    return out + _linear(f"{a}.o_proj", h, heads * vd, bias)


def _gated(name: str, inter: int, h: int, bias: bool) -> list[tuple[str, Shape]]:
    return (
        _linear(f"{name}.gate_proj", inter, h, bias)
        + _linear(f"{name}.up_proj", inter, h, bias)
        + _linear(f"{name}.down_proj", h, inter, bias)
    )


def _deepseek(c: _Cfg) -> tuple[list[tuple[str, Shape]], Arch]:
    """modeling_deepseek_v2.py / modeling_deepseek_v3.py: MLA attention; dense MLPs for the first
    ``first_k_dense_replace`` layers, then routed experts (one fused tensor per kind, as transformers
    5 builds them) beside shared experts of ``n_shared_experts * moe_intermediate_size``. V3's
    ``e_score_correction_bias`` is a buffer, not a parameter."""
    h, v, layers = c("hidden_size"), c("vocab_size"), c("num_hidden_layers")
    bias = c.family == "deepseek_v2" and c("mlp_bias", default=False)
    experts, moe = deepseek_key(c, "n_routed_experts"), deepseek_key(c, "moe_intermediate_size")
    shared = moe * (deepseek_key(c, "n_shared_experts") or 0)
    out: list[tuple[str, Shape]] = [("model.embed_tokens.weight", (v, h))]
    for i in range(layers):
        p = f"model.layers.{i}"
        out += _mla_tensors(c, p, h)
        if deepseek_moe_layer(c, i):
            out += [
                (f"{p}.mlp.experts.gate_up_proj", (experts, 2 * moe, h)),
                (f"{p}.mlp.experts.down_proj", (experts, h, moe)),
                (f"{p}.mlp.gate.weight", (experts, h)),
            ]
            out += _gated(f"{p}.mlp.shared_experts", shared, h, bias)
        else:
            out += _gated(f"{p}.mlp", c("intermediate_size"), h, bias)
        out += _norm(f"{p}.input_layernorm", h) + _norm(f"{p}.post_attention_layernorm", h)
    out += _norm("model.norm", h)
    return out, Arch(h, layers, c("num_attention_heads"))


def _phi(c: _Cfg) -> tuple[list[tuple[str, Shape]], Arch]:
    """modeling_phi.py: biased projections, LayerNorms with bias, an lm_head with bias."""
    h, v, layers, heads = c("hidden_size"), c("vocab_size"), c("num_hidden_layers"), c("num_attention_heads")
    kv = c("num_key_value_heads", default=heads)
    hd = h // heads
    inter = c("intermediate_size")
    out: list[tuple[str, Shape]] = [("model.embed_tokens.weight", (v, h))]
    for i in range(layers):
        p = f"model.layers.{i}"
        out += _linear(f"{p}.self_attn.q_proj", heads * hd, h, True) + _linear(
            f"{p}.self_attn.k_proj", kv * hd, h, True
        )
        out += _linear(f"{p}.self_attn.v_proj", kv * hd, h, True) + _linear(f"{p}.self_attn.dense", h, heads * hd, True)
        if c("qk_layernorm", default=False):
            out += _norm(f"{p}.self_attn.q_layernorm", hd, True) + _norm(f"{p}.self_attn.k_layernorm", hd, True)
        out += _linear(f"{p}.mlp.fc1", inter, h, True) + _linear(f"{p}.mlp.fc2", h, inter, True)
        out += _norm(f"{p}.input_layernorm", h, True)
    out += _norm("model.final_layernorm", h, True)
    return out, Arch(h, layers, heads)


def _gpt2(c: _Cfg) -> tuple[list[tuple[str, Shape]], Arch]:
    """modeling_gpt2.py: Conv1D weights are (in, out); learned positions; LayerNorms with bias."""
    h, v, layers = c("n_embd", "hidden_size"), c("vocab_size"), c("n_layer", "num_hidden_layers")
    heads = c("n_head", "num_attention_heads")
    inner = c("n_inner", default=None) or 4 * h
    out: list[tuple[str, Shape]] = [
        ("transformer.wte.weight", (v, h)),
        ("transformer.wpe.weight", (c("n_positions"), h)),
    ]
    for i in range(layers):
        p = f"transformer.h.{i}"
        out += _norm(f"{p}.ln_1", h, True) + [
            (f"{p}.attn.c_attn.weight", (h, 3 * h)),
            (f"{p}.attn.c_attn.bias", (3 * h,)),
        ]
        out += [(f"{p}.attn.c_proj.weight", (h, h)), (f"{p}.attn.c_proj.bias", (h,))] + _norm(f"{p}.ln_2", h, True)
        out += [(f"{p}.mlp.c_fc.weight", (h, inner)), (f"{p}.mlp.c_fc.bias", (inner,))]
        out += [(f"{p}.mlp.c_proj.weight", (inner, h)), (f"{p}.mlp.c_proj.bias", (h,))]
    out += _norm("transformer.ln_f", h, True)
    return out, Arch(h, layers, heads)


def _gpt_neox(c: _Cfg) -> tuple[list[tuple[str, Shape]], Arch]:
    """modeling_gpt_neox.py: fused query_key_value, LayerNorms with bias, untied embed_out."""
    h, v, layers, heads = c("hidden_size"), c("vocab_size"), c("num_hidden_layers"), c("num_attention_heads")
    inter = c("intermediate_size")
    bias = c("attention_bias", default=True)
    out: list[tuple[str, Shape]] = [("gpt_neox.embed_in.weight", (v, h))]
    for i in range(layers):
        p = f"gpt_neox.layers.{i}"
        out += _norm(f"{p}.input_layernorm", h, True) + _norm(f"{p}.post_attention_layernorm", h, True)
        out += _linear(f"{p}.attention.query_key_value", 3 * h, h, bias) + _linear(f"{p}.attention.dense", h, h, bias)
        out += _linear(f"{p}.mlp.dense_h_to_4h", inter, h, True) + _linear(f"{p}.mlp.dense_4h_to_h", h, inter, True)
    out += _norm("gpt_neox.final_layer_norm", h, True)
    return out, Arch(h, layers, heads)


def _falcon(c: _Cfg) -> tuple[list[tuple[str, Shape]], Arch]:
    """modeling_falcon.py: the fused query_key_value's width depends on the attention variant."""
    h, v, layers = c("hidden_size"), c("vocab_size"), c("num_hidden_layers", "n_layer")
    heads = c("num_attention_heads", "n_head")
    hd = h // heads
    new_arch = c("new_decoder_architecture", default=False)
    bias = c("bias", default=False)
    if new_arch:
        qkv = (c("num_kv_heads", default=heads) * 2 + heads) * hd
    elif c("multi_query", default=True):
        qkv = h + 2 * hd
    else:
        qkv = 3 * h
    ffn = c("ffn_hidden_size", default=None) or 4 * h
    out: list[tuple[str, Shape]] = [("transformer.word_embeddings.weight", (v, h))]
    for i in range(layers):
        p = f"transformer.h.{i}"
        out += _linear(f"{p}.self_attention.query_key_value", qkv, h, bias)
        out += _linear(f"{p}.self_attention.dense", h, h, bias)
        out += _linear(f"{p}.mlp.dense_h_to_4h", ffn, h, bias) + _linear(f"{p}.mlp.dense_4h_to_h", h, ffn, bias)
        if new_arch and c("num_ln_in_parallel_attn", default=2) == 2:
            out += _norm(f"{p}.ln_attn", h, True) + _norm(f"{p}.ln_mlp", h, True)
        else:
            out += _norm(f"{p}.input_layernorm", h, True)
            if not c("parallel_attn", default=True):
                out += _norm(f"{p}.post_attention_layernorm", h, True)
    out += _norm("transformer.ln_f", h, True)
    return out, Arch(h, layers, heads)


_BUILDERS = {
    "phi": _phi,
    "gpt2": _gpt2,
    "gpt_neox": _gpt_neox,
    "falcon": _falcon,
    "deepseek_v2": _deepseek,
    "deepseek_v3": _deepseek,
}
_ALIASES = {"gpt-neox": "gpt_neox", "refinedweb": "falcon", "refinedwebmodel": "falcon", "rw": "falcon"}


def tensors_from_config(data: dict[str, Any], path: str = "config.json") -> tuple[list[tuple[str, Shape]], Arch, str]:
    """The parameter tensors a transformers ``*ForCausalLM`` of this config holds (tied weights once).

    Raises :class:`UsageError` for a family this module does not know.
    """
    raw = str(data.get("model_type") or "").lower()
    family = _ALIASES.get(raw, raw)
    if family not in _TIE:
        raise UsageError(
            f"{path}: cannot count parameters for model_type {raw or '(none)'!r}; known: {', '.join(FAMILIES)}. "
            "Give --params N, or a folder with safetensors files"
        )
    c = _Cfg(data, family, path)
    tensors, arch = _BUILDERS.get(family, _llama_like)(c)
    if not c("tie_word_embeddings", default=_TIE[family]):
        v, h = tensors[0][1]
        tensors.append(("lm_head.weight", (v, h)))
        if family == "phi":
            tensors.append(("lm_head.bias", (v,)))
    return tensors, arch, family


def _arch_of(data: dict[str, Any] | None) -> Arch | None:
    if not data:
        return None
    try:
        return tensors_from_config(data)[1]
    except UsageError:
        return None


def _structure(data: dict[str, Any] | None) -> Structure | None:
    """The activation structure of a config.json of a known family, else ``None``."""
    if not data:
        return None
    raw = str(data.get("model_type") or "").lower()
    family = _ALIASES.get(raw, raw)
    if family not in _TIE:
        return None
    try:
        return structure_of(data, family)
    except (KeyError, TypeError, ValueError, ZeroDivisionError):
        return None


def _dtype_bytes(name: str | None) -> float | None:
    if not name:
        return None
    name = str(name).replace("torch.", "")
    return TORCH_DTYPE_BYTES.get(name) or SAFETENSORS_BYTES.get(name.upper())


def from_model_dir(path: str) -> ModelSize:
    """The size of a local Hugging Face model folder. Raises :class:`UsageError` when it cannot tell."""
    if not os.path.isdir(path):
        raise UsageError(f"--model {path}: not a folder (give a local Hugging Face model folder, or --params N)")
    config: dict[str, Any] | None = None
    cfg_path = os.path.join(path, "config.json")
    if os.path.isfile(cfg_path):
        try:
            with open(cfg_path, encoding="utf-8") as fh:
                loaded = json.load(fh)
        except (OSError, ValueError) as exc:
            raise UsageError(f"{cfg_path}: not readable JSON ({exc})") from exc
        config = loaded if isinstance(loaded, dict) else None
    cfg_dtype = (config or {}).get("torch_dtype") or (config or {}).get("dtype")
    files = sorted(f for f in os.listdir(path) if f.endswith(".safetensors"))
    tensors: list[tuple[str, Shape]] = []
    dtypes: set[str] = set()
    if files:
        try:
            tensors, dtypes = _header_tensors([os.path.join(path, f) for f in files])
        except (OSError, ValueError, struct.error) as exc:
            raise UsageError(f"--model {path}: a safetensors header is unreadable ({exc})") from exc
    arch, family = _arch_of(config), (config or {}).get("model_type")
    return replace(
        _from_parts(path, config, cfg_path, cfg_dtype, files, tensors, dtypes, arch, family),
        structure=_structure(config),
    )


def _from_parts(
    path: str,
    config: dict[str, Any] | None,
    cfg_path: str,
    cfg_dtype: Any,
    files: list[str],
    tensors: list[tuple[str, Shape]],
    dtypes: set[str],
    arch: Arch | None,
    family: Any,
) -> ModelSize:
    notes: list[str] = []
    if tensors and config and config.get("tie_word_embeddings") and any(n == "lm_head.weight" for n, _ in tensors):
        # a tied head saved anyway is one parameter to transformers' count (and to the optimizer)
        tensors = [(n, sh) for n, sh in tensors if n != "lm_head.weight"]
        notes.append("lm_head.weight is tied to the embeddings (tie_word_embeddings): counted once")

    index_path = os.path.join(path, "model.safetensors.index.json")
    if os.path.isfile(index_path):
        try:
            with open(index_path, encoding="utf-8") as fh:
                meta = (json.load(fh) or {}).get("metadata") or {}
        except (OSError, ValueError, AttributeError) as exc:
            raise UsageError(f"{index_path}: not readable JSON ({exc})") from exc
        dtype = next(iter(dtypes)) if len(dtypes) == 1 else cfg_dtype
        if meta.get("total_parameters"):
            params, source = int(meta["total_parameters"]), "model.safetensors.index.json total_parameters"
        elif meta.get("total_size") and _dtype_bytes(dtype):
            params = int(int(meta["total_size"]) / _dtype_bytes(dtype))  # type: ignore[operator]
            source = f"model.safetensors.index.json total_size / {_dtype_bytes(dtype):g} bytes ({dtype})"
        else:
            params, source = 0, ""
        if params:
            if not tensors and config:
                try:
                    tensors = tensors_from_config(config, cfg_path)[0]
                except UsageError:
                    pass
            if tensors:
                big, unit = largest_layers(tensors)
                return ModelSize(params, big, unit, source, tuple(tensors), arch, family, dtype, tuple(notes))
            big = max(1, params // LARGEST_LAYER_GUESS)
            return ModelSize(
                params,
                big,
                big,
                source,
                (),
                arch,
                family,
                dtype,
                largest_layer_known=False,
                notes=(
                    "largest layer unknown (no safetensors shards, no known config.json): assumed "
                    f"1/{LARGEST_LAYER_GUESS}",
                ),
            )
    if tensors:
        big, unit = largest_layers(tensors)
        dtype = next(iter(dtypes)) if len(dtypes) == 1 else "mixed"
        return ModelSize(
            sum(_numel(s) for _, s in tensors),
            big,
            unit,
            f"safetensors headers ({len(files)} file{'s' if len(files) != 1 else ''})",
            tuple(tensors),
            arch,
            family,
            dtype,
            tuple(notes),
        )
    if config is None:
        raise UsageError(f"--model {path}: no model.safetensors.index.json, *.safetensors or config.json there")
    tensors, arch2, fam = tensors_from_config(config, cfg_path)
    big, unit = largest_layers(tensors)
    return ModelSize(
        sum(_numel(s) for _, s in tensors), big, unit, f"config.json ({fam})", tuple(tensors), arch2, fam, cfg_dtype
    )


# -- well-known models by name ---------------------------------------------------------------

_TABLE: dict[str, Any] | None = None


def known_models() -> dict[str, Any]:
    """The bundled table (``accelconf/data/models.json``): Hugging Face repository id -> its ``source``
    (the config.json the values come from), ``config`` (the shape fields) and an optional ``note``."""
    global _TABLE
    if _TABLE is None:
        with open(
            os.path.join(os.path.dirname(os.path.dirname(__file__)), "data", "models.json"), encoding="utf-8"
        ) as fh:
            _TABLE = json.load(fh)["models"]
    return _TABLE


def _key(name: str) -> str:
    return name.strip().lower()


def lookup_name(name: str) -> str | None:
    """The table's repository id for ``name``: the id itself or its part after the ``/``, any case."""
    want = _key(name)
    for repo in known_models():
        if want in (_key(repo), _key(repo.rpartition("/")[2])):
            return repo
    return None


def nearest_names(name: str, n: int = 3) -> list[str]:
    import difflib

    short = {_key(r.rpartition("/")[2]): r for r in known_models()}
    want = _key(name).rpartition("/")[2]
    return [short[k] for k in difflib.get_close_matches(want, list(short), n=n, cutoff=0.3)]


def model_config(spec: str) -> dict[str, Any] | None:
    """The config.json of ``--model SPEC``: a local folder's (it wins over a name), else the table's."""
    if os.path.isdir(spec):
        try:
            with open(os.path.join(spec, "config.json"), encoding="utf-8") as fh:
                data = json.load(fh)
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) else None
    repo = lookup_name(spec)
    return None if repo is None else dict(known_models()[repo]["config"])


def from_name(name: str) -> ModelSize:
    """The size of a model of the bundled table, from its config.json shape fields."""
    repo = lookup_name(name)
    if repo is None:
        # a path that is not there gets no name suggestions (an id has one "/", a path starts with one)
        near = [] if name.startswith(("/", ".", "~")) or name.count("/") > 1 else nearest_names(name)
        hint = f"; nearest known: {', '.join(near)}" if near else ""
        raise UsageError(
            f"--model {name}: not a folder and not a model accelconf knows by name{hint} "
            f"({len(known_models())} known, accelconf/data/models.json)"
        )
    entry = known_models()[repo]
    config = dict(entry["config"])
    tensors, arch, fam = tensors_from_config(config, f"{repo} (bundled config.json)")
    big, unit = largest_layers(tensors)
    notes = (f"shape fields of {repo} from accelconf's table ({entry['source']})",) + (
        (entry["note"],) if entry.get("note") else ()
    )
    return ModelSize(
        sum(_numel(sh) for _, sh in tensors),
        big,
        unit,
        f"bundled config.json of {repo}, {fam}",
        tuple(tensors),
        arch,
        fam,
        config.get("torch_dtype"),
        notes,
        structure=_structure(config),
    )


def resolve(spec: str | os.PathLike[str]) -> ModelSize:
    """``--model SPEC``: a local Hugging Face model folder, else a well-known model's name
    (:func:`known_models`). Raises :class:`UsageError` naming the nearest names for an unknown one."""
    path = os.fspath(spec)
    if os.path.isdir(path):
        return from_model_dir(path)
    return from_name(path)


def with_attention(size: ModelSize, attn: str | None) -> ModelSize:
    """``size`` with its activation structure under another attention kernel (``--attn``)."""
    if attn is None or size.structure is None:
        return size
    return replace(size, structure=size.structure.with_attn(attn))
