"""DeepSeek-V2/V3 parameter counts against transformers: each variant of the shape keys (q through a
low-rank bottleneck or straight, dense layers before the MoE ones, biases, tied head) is built by
transformers on the meta device and must hold the same tensors, by name and shape, as accelconf
computes from the same config.json fields."""

from __future__ import annotations

import pytest

from accelconf.environment import memory, modelsize

SMALL = dict(
    hidden_size=256,
    intermediate_size=512,
    num_hidden_layers=3,
    num_attention_heads=4,
    vocab_size=1000,
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
)
VARIANTS = {
    "defaults": {},
    "plain q projection": {"q_lora_rank": None},
    "low-rank q, one dense layer": {"q_lora_rank": 96, "first_k_dense_replace": 1},
    "attention biases, two dense layers": {"attention_bias": True, "first_k_dense_replace": 2},
    "mlp biases": {"mlp_bias": True},
    "tied head": {"tie_word_embeddings": True},
    "no shared experts": {"n_shared_experts": 0},
}


def _meta_model(config: dict):
    transformers = pytest.importorskip("transformers", reason="transformers is in the test extras: it is the oracle")
    torch = pytest.importorskip("torch", reason="transformers builds the model with torch")
    cfg = transformers.AutoConfig.for_model(
        config["model_type"], **{k: v for k, v in config.items() if k != "model_type"}
    )
    transformers.logging.set_verbosity_error()
    with torch.device("meta"):
        return transformers.AutoModelForCausalLM.from_config(cfg)


@pytest.mark.oracle
@pytest.mark.parametrize("family", ["deepseek_v2", "deepseek_v3"])
@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_deepseek_tensors_are_the_ones_transformers_builds(family: str, variant: str) -> None:
    config = dict(SMALL, model_type=family, **VARIANTS[variant])
    model = _meta_model(config)
    built = {name: tuple(p.shape) for name, p in model.named_parameters()}
    ours, arch, fam = modelsize.tensors_from_config(config)
    assert fam == family
    assert dict(ours) == built
    assert sum(modelsize._numel(shape) for _, shape in ours) == model.num_parameters()


def test_dense_layers_come_before_the_moe_ones() -> None:
    config = dict(SMALL, model_type="deepseek_v3", first_k_dense_replace=2, num_hidden_layers=4)
    names = [name for name, _ in modelsize.tensors_from_config(config)[0]]
    dense = {int(n.split(".")[2]) for n in names if n.endswith("mlp.gate_proj.weight")}
    moe = {int(n.split(".")[2]) for n in names if n.endswith("mlp.experts.gate_up_proj")}
    assert (dense, moe) == ({0, 1}, {2, 3})


def test_an_explicit_null_q_lora_rank_is_a_plain_q_projection_and_a_missing_one_the_default() -> None:
    plain = dict(SMALL, model_type="deepseek_v2", q_lora_rank=None)
    names = {name for name, _ in modelsize.tensors_from_config(plain)[0]}
    assert "model.layers.0.self_attn.q_proj.weight" in names
    assert "model.layers.0.self_attn.q_a_proj.weight" not in names
    default = {k: v for k, v in plain.items() if k != "q_lora_rank"}
    shapes = dict(modelsize.tensors_from_config(default)[0])
    assert shapes["model.layers.0.self_attn.q_a_proj.weight"] == (1536, 256)  # configuration_deepseek_v2.py


@pytest.mark.parametrize(("name", "params"), [("DeepSeek-V2-Lite", 15_706_484_224), ("DeepSeek-V3", 671_026_404_352)])
def test_bundled_deepseek_models_have_their_published_sizes(name: str, params: int) -> None:
    # the model cards say 15.7B and 671B (V3's card adds the 14B multi-token-prediction layer: 685B)
    size = modelsize.from_name(name)
    assert size.params == params


def test_deepseek_memory_estimate_includes_its_activations() -> None:
    size = modelsize.from_name("DeepSeek-V2-Lite")
    assert size.structure is not None and size.structure.mla == (0, 512, 128, 64, 128)
    strategy = memory.Strategy("fsdp2", "bf16")
    est = memory.estimate(strategy, memory.Layout(8, 1), size, seq_len=4096, micro_batch=1)
    assert est.activations is not None and est.activations > 0
    detail = est.activation_detail
    assert detail.dense_layers == 1 and detail.structure.top_k == 6
