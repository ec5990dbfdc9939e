"""DeepSeek-V2/V3 activations against the bytes PyTorch really saves for backward (the measurement of
``test_activations_oracle``): MLA attention, one dense layer before the MoE ones
(``first_k_dense_replace=1``), eager and SDPA, with and without checkpointing, within 5%.

SDPA runs with v's head dim equal to q's: CPU's flash kernel takes no other, and on CUDA the
memory-efficient kernel, which takes DeepSeek's 128-wide v beside 192-wide q and k, keeps the same
tensors (q, k, v, the output and the log-sum-exp)."""

from __future__ import annotations

import pytest

from accelconf.environment import activations, modelsize

# the activation oracle's own structure reader and its autouse fixture (fused dropout, quiet logs, seed)
from tests.oracle.test_activations_oracle import (  # noqa: F401
    CASES,
    _kernel,
    _quiet,
    _structure,
    measure,
    torch,
    transformers,
)

pytestmark = pytest.mark.oracle

SMALL = dict(
    hidden_size=256,
    intermediate_size=688,
    num_attention_heads=4,
    num_key_value_heads=4,
    vocab_size=1024,
    pad_token_id=0,
    bos_token_id=1,
    eos_token_id=2,
    kv_lora_rank=64,
    qk_nope_head_dim=32,
    qk_rope_head_dim=16,
    v_head_dim=32,
    moe_intermediate_size=128,
    n_routed_experts=4,
    num_experts_per_tok=2,
    n_shared_experts=2,
    n_group=1,
    topk_group=1,
    first_k_dense_replace=1,
)
# (layers, q_lora_rank): V3's low-rank q with one MoE layer, V2-Lite's plain q with two
SHAPES = [(2, 96), (3, None)]


def _config(family: str, layers: int, q_rank: int | None, attn: str):
    over = dict(SMALL, num_hidden_layers=layers, q_lora_rank=q_rank)
    if attn == "sdpa":
        over["v_head_dim"] = over["qk_nope_head_dim"] + over["qk_rope_head_dim"]
    cfg = transformers.AutoConfig.for_model(family, **over)
    cfg._attn_implementation = attn
    return cfg


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: f"{s[0]}-layers-q-rank-{s[1]}")
@pytest.mark.parametrize("attn", ["eager", "sdpa"])
@pytest.mark.parametrize("family", ["deepseek_v2", "deepseek_v3"])
def test_deepseek_saved_activations_match_pytorch_within_5_percent(family, attn, shape):
    cfg = _config(family, *shape, attn)
    model = transformers.AutoModelForCausalLM.from_config(cfg, dtype=torch.float32)
    model.train()
    st = _structure(cfg, family)
    assert (st.dense_layers, bool(st.mla)) == (1, True)
    for ckpt in (False, True):
        if ckpt:
            model.activation_checkpointing_enable(activation_checkpointing_kwargs={"use_reentrant": True})
        for seq, batch in CASES:
            with _kernel(attn):
                peak, head = measure(model, seq, batch)
            est = activations.estimate(st, seq, batch, 4, checkpointing=ckpt)
            logits = next(v for k, v in est.outside if k.startswith("logits"))
            assert abs(est.saved - peak) <= 0.05 * peak, (family, attn, shape, ckpt, seq, batch, est.saved, peak)
            assert abs(logits - head) <= 0.05 * head, (family, attn, shape, ckpt, seq, batch, logits, head)


def test_deepseek_dense_and_moe_layers_are_counted_apart():
    st = modelsize.from_name("DeepSeek-V3").structure
    assert st is not None and st.dense_layers == 3 and st.layers == 61
    est = activations.estimate(st, 4096, 1, 2)
    dense = sum(v for _, v in est.dense)
    assert dense != est.per_layer
    assert est.kept == 3 * dense + 58 * est.per_layer
    labels = [label for label, _ in est.lines()]
    assert labels[0].startswith("dense decoder layers (3 x") and labels[1].startswith("MoE decoder layers (58 x")
    # checkpointing recomputes the larger of the two kinds of layer
    ckpt = activations.estimate(st, 4096, 1, 2, checkpointing=True)
    assert ckpt.largest_layer == max(dense, est.per_layer)
