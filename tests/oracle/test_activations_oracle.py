"""The activation estimate against the bytes PyTorch really saves for backward.

For each family, transformers builds a small model (real layer structure, widths reduced to
hidden 256 / 4 heads so that CPU runs it in seconds), runs one forward and backward, and every
tensor autograd saves is counted once per storage (``saved_tensors_hooks``; parameters excluded).
The peak of what is saved at once (weakref finalizers on the storages tell when autograd lets one
go) must be within 5% of :attr:`Activations.saved`, and what is saved from the LM head onwards
within 5% of the logits-and-loss line. SDPA runs with the flash backend, the one GPUs run (the math
backend for falcon's multi-query attention, which no fused kernel takes on CUDA either); dropout
runs PyTorch's fused kernel (one-byte masks), which CUDA picks and CPU does not by default.
Checkpointing runs the reentrant form so that the kept inputs pass through the hooks: it keeps
the same inputs as transformers' default non-reentrant form. Checkpointing turns the cache off, and
without a cache a fused projection's v is a view that keeps the whole fused output: the families
with one are measured without the cache and without checkpointing too.
"""

from __future__ import annotations

import weakref
from dataclasses import replace
from pathlib import Path

import pytest

from accelconf.environment import activations

pytestmark = pytest.mark.oracle
torch = pytest.importorskip("torch", reason="torch is in the test extras: it is the activation oracle")
transformers = pytest.importorskip("transformers", reason="transformers builds the models")

SMALL = dict(
    hidden_size=256,
    intermediate_size=688,
    num_attention_heads=4,
    num_key_value_heads=2,
    vocab_size=1024,
    pad_token_id=0,
    bos_token_id=1,
    eos_token_id=2,
)
# family -> config overrides; the structure each one exercises is named in the comment
FAMILIES = {
    "llama": {},  # GQA, SwiGLU, RMSNorm
    "mistral": {},
    "qwen2": {},  # q/k/v biases
    "qwen3": {"head_dim": 64},  # q and k norms
    "gemma": {"head_dim": 64},  # (1 + w) RMSNorm, GeGLU
    "gemma2": {"head_dim": 64},  # four norms, eager only, soft-capped logits
    "phi": {"num_key_value_heads": 4, "resid_pdrop": 0.1},  # LayerNorm, parallel, partial rotary, gelu_new
    "phi3": {},  # fused qkv and gate_up
    "gpt2": {"n_embd": 256, "n_head": 4},  # learned positions, Conv1D, dropout 0.1
    "gpt_neox": {"num_key_value_heads": 4},  # parallel residual, fused qkv, rotary 25%
    "falcon": {"num_key_value_heads": 4},  # multi-query, one LayerNorm, parallel
    "mixtral": {"num_local_experts": 4, "num_experts_per_tok": 2},  # MoE, top-2
    "gemma3_text": {"head_dim": 64},  # four norms, q and k norms
    "qwen3_moe": {"head_dim": 64, "num_experts": 4, "num_experts_per_tok": 2, "moe_intermediate_size": 256},
    "qwen2_moe": {
        "num_experts": 4,
        "num_experts_per_tok": 2,
        "moe_intermediate_size": 256,  # shared expert
        "shared_expert_intermediate_size": 512,
    },
}
CASES = [(64, 2), (128, 1)]


def _config(family: str, layers: int, attn: str):
    over = dict(SMALL, **FAMILIES[family])
    if family == "gpt2":
        over = {
            k: v
            for k, v in over.items()
            if k not in ("hidden_size", "intermediate_size", "num_attention_heads", "num_key_value_heads")
        }
        over.update(n_layer=layers, n_positions=256)
        if attn != "eager":
            over["attn_pdrop"] = 0.0  # CPU's flash kernel has no dropout; CUDA's keeps only an RNG seed
    else:
        over["num_hidden_layers"] = layers
    cfg = transformers.AutoConfig.for_model(family, **over)
    cfg._attn_implementation = attn
    return cfg


def _fused_dropout(input, p=0.5, training=True, inplace=False):  # noqa: A002 - F.dropout's signature
    return torch.native_dropout(input, p, training)[0] if training and p > 0 else input


class SavedTracker:
    """Unique storages autograd saves (parameters excluded), their live total and its peak."""

    def __init__(self, model):
        self.params = {p.untyped_storage().data_ptr() for p in model.parameters()}
        self.live: dict[int, int] = {}
        self.cur = self.peak = 0
        self.head = 0  # bytes saved from the LM head's output onwards (the logits and the loss)
        self.in_head = False

    def pack(self, t):
        st = t.untyped_storage()
        key = st.data_ptr()
        if key in self.params or key in self.live or st.nbytes() == 0:
            return t
        n = st.nbytes()
        self.live[key] = n
        self.cur += n
        self.peak = max(self.peak, self.cur)
        self.head += n if self.in_head else 0
        weakref.finalize(st, self._free, key)
        return t

    def _free(self, key: int) -> None:
        self.cur -= self.live.pop(key, 0)


def measure(model, seq: int, batch: int) -> tuple[int, int]:
    """(peak bytes saved at once over forward and backward, bytes saved for the logits and loss)."""
    tracker = SavedTracker(model)
    head = model.get_output_embeddings()
    hook = head.register_forward_hook(lambda *_: setattr(tracker, "in_head", True))
    ids = torch.randint(3, model.config.vocab_size, (batch, seq))
    try:
        with torch.autograd.graph.saved_tensors_hooks(tracker.pack, lambda t: t):
            loss = model(input_ids=ids, labels=ids).loss
            tracker.in_head = False
            loss.backward()
    finally:
        hook.remove()
    return tracker.peak, tracker.head


def _kernel(attn: str, st: activations.Structure | None = None):
    """SDPA's flash backend, the one GPUs run; the math backend where no fused kernel takes the
    inputs on CUDA either (falcon's k and v with fewer heads than q), as the estimate says."""
    from torch.nn.attention import SDPBackend, sdpa_kernel

    if attn != "sdpa":
        return _Null()
    math = st is not None and st.attn == "eager"
    return sdpa_kernel([SDPBackend.MATH if math else SDPBackend.FLASH_ATTENTION])


class _Null:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def _structure(cfg, family: str) -> activations.Structure:
    data = cfg.to_dict()
    data["attn_implementation"] = cfg._attn_implementation
    return activations.structure_of(data, family)


@pytest.fixture(autouse=True)
def _quiet(monkeypatch):
    monkeypatch.setattr(torch.nn.functional, "dropout", _fused_dropout)
    transformers.logging.set_verbosity_error()
    torch.manual_seed(0)


# transformers refuses SDPA for gemma2 (the estimate runs eager for it, as transformers does).
KERNELS = [(f, a) for f in sorted(FAMILIES) for a in ("eager", "sdpa") if (f, a) != ("gemma2", "sdpa")]


def test_falcon_multi_query_sdpa_runs_the_math_kernel_and_gpt2_the_flash_one():
    falcon = _structure(_config("falcon", 1, "sdpa"), "falcon")
    assert falcon.kv_heads == 1 and falcon.attn == "eager" and falcon.with_attn("sdpa").attn == "eager"
    model = transformers.AutoModelForCausalLM.from_config(_config("falcon", 1, "sdpa"))
    ids = torch.randint(3, 1000, (2, 16))
    with pytest.raises(RuntimeError, match="No available kernel"), _kernel("sdpa"):
        model(input_ids=ids)
    assert _structure(_config("gpt2", 1, "sdpa"), "gpt2").attn == "sdpa"


def test_gemma2_runs_eager_as_transformers_does():
    assert activations.kernel_of("sdpa", "gemma2") == "eager"
    with pytest.raises(ValueError, match="does not support"):
        transformers.AutoModelForCausalLM.from_config(_config("gemma2", 1, "sdpa"))


@pytest.mark.parametrize(("family", "attn"), KERNELS)
def test_saved_activations_match_pytorch_within_5_percent(family, attn):
    cfg = _config(family, 2, attn)
    model = transformers.AutoModelForCausalLM.from_config(cfg, dtype=torch.float32)
    model.train()
    st = _structure(cfg, family)
    checked = []
    for ckpt in (False, True):
        if ckpt:
            model.activation_checkpointing_enable(activation_checkpointing_kwargs={"use_reentrant": True})
        for seq, batch in CASES:
            with _kernel(attn, st):
                peak, head = measure(model, seq, batch)
            est = activations.estimate(st, seq, batch, 4, checkpointing=ckpt)
            logits = dict(est.outside)[next(k for k, _ in est.outside if k.startswith("logits"))]
            assert abs(est.saved - peak) <= 0.05 * peak, (family, attn, ckpt, seq, batch, est.saved, peak)
            assert abs(logits - head) <= 0.05 * head, (family, attn, ckpt, seq, batch, logits, head)
            checked.append((ckpt, seq, batch))
    assert len(checked) == 2 * len(CASES)


@pytest.mark.parametrize(("family", "attn"), [(f, a) for f in ("gpt_neox", "phi3") for a in ("eager", "sdpa")])
def test_fused_qkv_without_the_cache_keeps_the_fused_output(family, attn):
    cfg = _config(family, 2, attn)
    cfg.use_cache = False
    model = transformers.AutoModelForCausalLM.from_config(cfg, dtype=torch.float32)
    model.train()
    st = _structure(cfg, family)
    assert not st.use_cache
    for seq, batch in CASES:
        with _kernel(attn):
            peak, _ = measure(model, seq, batch)
        est = activations.estimate(st, seq, batch, 4)
        assert abs(est.saved - peak) <= 0.05 * peak, (family, attn, seq, batch, est.saved, peak)
        cached = activations.estimate(replace(st, use_cache=True), seq, batch, 4)
        if attn == "sdpa":  # the cache's copy of v lets the fused output go
            assert cached.saved < est.saved


# -- the worked example: Qwen2-7B at its real widths ------------------------------------------------

QWEN2_7B = Path(__file__).resolve().parents[2] / "examples" / "memory" / "qwen2-7b"


def _on_cpu(module, dtype):
    """``module`` built on the meta device, then given uninitialised CPU storage and random values
    (initialising 233M parameters the ordinary way takes longer than the forward)."""
    module = module.to_empty(device="cpu").to(dtype)
    with torch.no_grad():
        for p in module.parameters():
            p.normal_(0, 0.02)
    return module


def _count_forward(fn, exclude=()) -> int:
    """Bytes of the unique storages autograd saves while ``fn`` runs (parameters excluded)."""
    skip = {t.untyped_storage().data_ptr() for t in exclude}
    seen: dict[int, int] = {}

    def pack(t):
        st = t.untyped_storage()
        if st.data_ptr() not in skip:
            seen.setdefault(st.data_ptr(), st.nbytes())
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        fn()
    return sum(seen.values())


def test_qwen2_7b_worked_example_within_5_percent_of_the_measured_bytes():
    """One Qwen2-7B decoder layer (hidden 3584, 28 heads, 4 kv heads, intermediate 18944) in bf16 with
    SDPA, the final norm and the loss over the real 152,064-entry vocabulary, measured at 128 tokens
    and scaled to seq 4096 x micro batch 2 (everything SDPA keeps is linear in the tokens)."""
    import json

    from transformers.loss.loss_utils import ForCausalLMLoss
    from transformers.models.qwen2 import modeling_qwen2 as q2

    data = json.loads((QWEN2_7B / "config.json").read_text())
    cfg = transformers.AutoConfig.for_model("qwen2", **{k: v for k, v in data.items() if k != "model_type"})
    cfg._attn_implementation = "sdpa"
    bf16 = torch.bfloat16
    with torch.device("meta"):
        layer = q2.Qwen2DecoderLayer(cfg, 0)
        norm = q2.Qwen2RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
    layer, norm = _on_cpu(layer, bf16), _on_cpu(norm, bf16)
    rope = q2.Qwen2RotaryEmbedding(cfg)
    params = list(layer.parameters()) + list(norm.parameters())
    measured = []
    for seq, batch in ((64, 2), (128, 1)):
        x = torch.randn(batch, seq, cfg.hidden_size, dtype=bf16, requires_grad=True)
        cos, sin = rope(x, torch.arange(seq)[None])
        cos, sin = cos.to(bf16), sin.to(bf16)
        with _kernel("sdpa"):
            per_layer = _count_forward(
                lambda x=x, cos=cos, sin=sin: layer(x, attention_mask=None, position_embeddings=(cos, sin)),
                params + [cos, sin],
            )
        final = _count_forward(lambda x=x: norm(x), params)
        logits = torch.randn(batch, seq, cfg.vocab_size, dtype=bf16, requires_grad=True)
        ids = torch.randint(0, cfg.vocab_size, (batch, seq))
        loss = _count_forward(lambda logits=logits, ids=ids: ForCausalLMLoss(logits, ids, cfg.vocab_size))
        measured.append((seq * batch, per_layer, final, loss))
    (t1, *a), (t2, *b) = measured
    assert t1 == t2 and all(abs(x - y) <= 0.01 * y for x, y in zip(a, b))  # the layout, not the shape, is what counts
    from accelconf.environment.modelsize import from_model_dir

    size = from_model_dir(str(QWEN2_7B))
    est = activations.estimate(size.structure, 4096, 2, 2)
    scale = 4096 * 2 / t2
    per_layer, final, loss = (v * scale for v in b)
    assert abs(est.per_layer - per_layer) <= 0.05 * per_layer, (est.per_layer, per_layer)
    lines = dict(est.outside)
    logits_line = next(v for k, v in lines.items() if k.startswith("logits"))
    assert abs(logits_line - loss) <= 0.05 * loss, (logits_line, loss)
    total = 28 * per_layer + final + loss
    assert abs(est.saved - total) <= 0.05 * total, (est.saved, total)
