"""LoRA and QLoRA against the libraries that run them.

Trainable parameters: peft wraps a model transformers builds on the meta device (real layer
structure, small widths) and counts its trainable parameters (``get_nb_trainable_parameters``);
accelconf's count for the same targets must be equal, with the default targets (every attention
and MLP projection) and with peft's narrower ``q_proj, v_proj``. Quantised bytes: bitsandbytes
quantises tensors on CPU (NF4 with and without double quantisation, LLM.int8) and the bytes of
every storage it keeps per tensor must equal accelconf's formula."""

from __future__ import annotations

import os
import sys

import pytest

from accelconf.environment import lora, modelsize
from accelconf.errors import UsageError

# peft warns that the rank and alpha it sets for fused gate_up_proj tensors matched no module where the
# model has none to fuse (phi3's gate_up_proj is a plain linear layer): its count is unaffected
pytestmark = [
    pytest.mark.oracle,
    pytest.mark.filterwarnings("ignore:The following (rank|alpha)_pattern keys:RuntimeWarning"),
]
torch = pytest.importorskip("torch", reason="torch is in the test extras")
transformers = pytest.importorskip("transformers", reason="transformers builds the models")
peft = pytest.importorskip("peft", reason="peft is in the test extras: it is the trainable-parameter oracle")

SMALL = dict(
    hidden_size=256,
    intermediate_size=688,
    num_attention_heads=4,
    num_key_value_heads=2,
    vocab_size=1024,
    num_hidden_layers=2,
    pad_token_id=0,
    bos_token_id=1,
    eos_token_id=2,
)
FAMILIES = {
    "llama": {},
    "mistral": {},
    "qwen2": {},
    "qwen3": {"head_dim": 64},
    "gemma": {"head_dim": 64},
    "gemma2": {"head_dim": 64},
    "gemma3_text": {"head_dim": 64},
    "phi3": {},
    "phi": {"num_key_value_heads": 4},
    "gpt_neox": {"num_key_value_heads": 4},
    "falcon": {"num_key_value_heads": 4},
    "gpt2": {"n_embd": 256, "n_head": 4, "n_layer": 2, "n_positions": 128},
    "qwen2_moe": {
        "num_experts": 4,
        "num_experts_per_tok": 2,
        "moe_intermediate_size": 128,
        "shared_expert_intermediate_size": 256,
    },
    "qwen3_moe": {"num_experts": 4, "num_experts_per_tok": 2, "moe_intermediate_size": 128, "head_dim": 64},
    "mixtral": {"num_local_experts": 4, "num_experts_per_tok": 2},
}


def _config(family: str) -> dict:
    data = dict(SMALL, **FAMILIES[family])
    if family == "gpt2":
        data = {k: v for k, v in data.items() if k in ("vocab_size", "n_embd", "n_head", "n_layer", "n_positions")}
    return data


def _peft_count(family: str, targets: tuple[str, ...], rank: int) -> int:
    transformers.logging.set_verbosity_error()
    cfg = transformers.AutoConfig.for_model(family, **_config(family))
    with torch.device("meta"):
        model = transformers.AutoModelForCausalLM.from_config(cfg)
    wrapped = peft.get_peft_model(model, peft.LoraConfig(r=rank, target_modules=list(targets)))
    return wrapped.get_nb_trainable_parameters()[0]


def _ours(family: str, targets: tuple[str, ...] | None, rank: int) -> int:
    data = dict(_config(family), model_type=family)
    tensors, arch, fam = modelsize.tensors_from_config(data)
    size = modelsize.ModelSize(sum(modelsize._numel(s) for _, s in tensors), 1, 1, "test", tuple(tensors), arch, fam)
    return lora.split(size, lora.Adapter(rank, targets), 2).trainable


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_trainable_parameters_equal_peft_for_the_default_targets(family):
    assert _ours(family, None, 8) == _peft_count(family, lora.default_targets(family), 8)


@pytest.mark.parametrize("family", ["llama", "qwen2", "gemma2", "mixtral", "qwen3_moe"])
def test_trainable_parameters_equal_peft_for_q_and_v(family):
    assert _ours(family, ("q_proj", "v_proj"), 16) == _peft_count(family, ("q_proj", "v_proj"), 16)


@pytest.mark.parametrize("targets", [("w1", "w2", "w3"), ("q_proj", "w1", "w3"), ("w2",)])
def test_mixtral_expert_targets_count_as_peft_fuses_them(targets):
    assert _ours("mixtral", targets, 8) == _peft_count("mixtral", targets, 8)


def test_mixtral_w1_without_w3_is_refused_as_peft_refuses_it():
    with pytest.raises(ValueError, match="without also targeting"):
        _peft_count("mixtral", ("w1",), 8)
    with pytest.raises(UsageError, match="w1 and w3"):
        _ours("mixtral", ("w1",), 8)


def _bnb():
    from tests.oracle.bitsandbytes_release import CACHE

    if not CACHE.installed("0.50") and os.environ.get("CI", "").lower() not in ("1", "true", "yes"):
        pytest.skip(
            f"bitsandbytes is not in {CACHE.cache_root()}: run python tests/oracle/bitsandbytes_release.py "
            "(CI=true installs it); the formula's source is cited in accelconf/environment/lora.py"
        )
    path = str(CACHE.ensure("0.50"))
    if path not in sys.path:
        sys.path.insert(0, path)
    import bitsandbytes

    return bitsandbytes


def _storage_bytes(*tensors) -> int:
    seen: dict[int, int] = {}
    for t in tensors:
        seen.setdefault(t.untyped_storage().data_ptr(), t.untyped_storage().nbytes())
    return sum(seen.values())


@pytest.mark.parametrize("shape", [(256, 640), (300, 1000), (4096, 14336 // 16)])
@pytest.mark.parametrize("double_quant", [True, False])
def test_nf4_bytes_equal_what_bitsandbytes_keeps(shape, double_quant):
    bnb = _bnb()
    w = torch.randn(shape, dtype=torch.bfloat16)
    p = bnb.nn.Params4bit(
        w, requires_grad=False, quant_type="nf4", compress_statistics=double_quant, blocksize=lora.NF4_BLOCK
    )._quantize("cpu")
    qs = p.quant_state
    kept = [p.data, qs.absmax, qs.code]
    if double_quant:
        kept += [qs.offset, qs.state2.absmax, qs.state2.code]
    assert _storage_bytes(*kept) == lora.nf4_bytes(w.numel(), double_quant)


def test_int8_bytes_equal_what_bitsandbytes_keeps():
    bnb = _bnb()
    w = torch.randn(300, 640, dtype=torch.float16)
    p = bnb.nn.Int8Params(w, requires_grad=False, has_fp16_weights=False)._quantize("cpu")
    assert _storage_bytes(p.data, p.SCB) == lora.int8_bytes(tuple(w.shape))


# -- activations under LoRA: what autograd keeps with a frozen base and peft's adapters -------------


def _lora_cases():
    both = (None, ("q_proj", "v_proj"))
    for family in ("llama", "qwen3", "gemma2", "gemma3_text"):
        for e in (4, 2):
            for targets in both:
                for ckpt in (False, True):
                    yield family, e, targets, ckpt
    # phi3's checkpointed peak is under the estimate already in full training (the activation oracle's
    # CKPT_UNDER); qwen2-moe is held to the uncheckpointed runs for the same reason
    for family in ("phi3", "qwen2_moe"):
        for e in (4, 2):
            yield family, e, None, False


@pytest.mark.parametrize(("family", "e", "targets", "ckpt"), list(_lora_cases()))
def test_saved_activations_under_lora_match_pytorch_within_5_percent(family, e, targets, ckpt):
    """A frozen model with peft's adapters, in fp32 or in bf16 under CPU autocast (as accelerate's
    ``mixed_precision: bf16`` runs it, the adapters fp32): the peak of what autograd keeps."""
    from accelconf.environment import activations
    from tests.oracle.test_activations_oracle import _config as small_config
    from tests.oracle.test_activations_oracle import _kernel, measure

    attn = "eager" if family == "gemma2" else "sdpa"
    torch.manual_seed(0)
    transformers.logging.set_verbosity_error()
    cfg = small_config(family, 2, attn)
    if family == "qwen2_moe":
        cfg.moe_intermediate_size = 128  # unlike the hidden size, so that the two are told apart
    model = transformers.AutoModelForCausalLM.from_config(cfg, dtype=torch.bfloat16 if e == 2 else torch.float32)
    names = list(targets or lora.default_targets(family))
    wrapped = peft.get_peft_model(model, peft.LoraConfig(r=8, target_modules=names))
    wrapped.train()
    if ckpt:
        wrapped.base_model.model.activation_checkpointing_enable(
            activation_checkpointing_kwargs={"use_reentrant": True}
        )
        wrapped.enable_input_require_grads()  # what peft's prepare step does for a frozen embedding
    cast = torch.autocast("cpu", dtype=torch.bfloat16, enabled=e == 2)
    with cast, _kernel(attn):
        peak, _ = measure(wrapped, 64, 2)
    data = dict(cfg.to_dict(), attn_implementation=attn, model_type=family)
    tensors, arch, fam = modelsize.tensors_from_config(data)
    size = modelsize.ModelSize(1, 1, 1, "test", tuple(tensors), arch, fam)
    est = activations.estimate(activations.structure_of(data, family), 64, 2, e, checkpointing=ckpt)
    saved = lora.activation_lines(lora.split(size, lora.Adapter(8, tuple(names)), e), est).saved
    assert abs(saved - peak) <= 0.05 * peak, (family, e, targets, ckpt, saved, peak)
