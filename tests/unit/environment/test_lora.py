"""LoRA/QLoRA in the memory estimate: the frozen base has no gradients or optimizer state, the fp32
adapters have both; 4-bit and 8-bit bases take bitsandbytes' bytes; the flags and the API refuse
what does not go together; the FSDP+QLoRA configs of the corpus estimate as they run (weights
offloaded to host RAM)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from accelconf import api
from accelconf.cli import main
from accelconf.environment import lora, memory, modelsize
from accelconf.environment.memory import Layout, Strategy
from accelconf.errors import UsageError

CORPUS = Path(__file__).resolve().parents[4] / "shared" / "corpus" / "accelerate"
QLORA = sorted(CORPUS.glob("*fsdp_qlora*")) if CORPUS.is_dir() else []
EXAMPLE = str(Path(__file__).resolve().parents[3] / "examples" / "memory" / "fsdp-2x8.yaml")
L8B = modelsize.from_name("Llama-3.1-8B")


def test_rank_16_on_every_projection_of_llama_3_1_8b_trains_its_known_42m():
    sp = lora.split(L8B, lora.Adapter(16), 2)
    assert sp.trainable == 41_943_040 and sp.matched == 7 * 32
    assert sp.base_bytes == 2 * L8B.params  # unquantised: the base in bf16


def test_ddp_keeps_gradients_and_moments_for_the_adapters_only():
    full = memory.estimate(Strategy("ddp", "bf16"), Layout(8), L8B)
    e = memory.estimate(Strategy("ddp", "bf16"), Layout(8), L8B, lora=lora.Adapter(16))
    T = 41_943_040
    assert (e.grads, e.optimizer) == (4 * T, 8 * T)
    assert e.params == 2 * L8B.params + 4 * T
    assert e.per_gpu < full.per_gpu / 4
    assert e.to_json()["lora"]["trainable_params"] == T


def test_fsdp_shards_the_base_and_the_adapters_but_not_the_quantisation_constants():
    a = lora.Adapter(16, quant="4bit")
    sp = lora.split(L8B, a, 2)
    e = memory.estimate(Strategy("fsdp2", "bf16"), Layout(8), L8B, lora=a)
    assert e.params == pytest.approx((sp.base_bytes - sp.constants) / 8 + sp.constants + 4 * sp.trainable / 8)
    assert 0 < sp.constants < 0.05 * sp.base_bytes


def test_a_4bit_base_is_about_a_quarter_of_bf16_and_8bit_about_half():
    bf16 = lora.split(L8B, lora.Adapter(8), 2)
    q4, q8 = (lora.split(L8B, lora.Adapter(8, quant=q), 2) for q in ("4bit", "8bit"))
    linear = q4.quantized
    assert (
        linear == q8.quantized and linear == L8B.params - 2 * 128256 * 4096 - 65 * 4096
    )  # not embeddings, head, norms
    assert q4.base_bytes - 2 * (L8B.params - linear) == pytest.approx(linear * (0.5 + 1 / 64), rel=0.01)
    assert q8.base_bytes < 0.6 * bf16.base_bytes


def test_targets_that_match_nothing_are_a_usage_error_naming_the_projections():
    with pytest.raises(UsageError, match="q_proj"):
        lora.split(L8B, lora.Adapter(8, ("query",)), 2)


@pytest.mark.parametrize(
    "argv",
    [["--quant", "4bit"], ["--lora-targets", "q_proj"], ["--lora-rank", "0"], ["--lora-rank", "8", "--params", "8B"]],
)
def test_flags_that_do_not_go_together_exit_2(argv, capsys):
    model = [] if "--params" in argv else ["--model", "Llama-3.1-8B"]
    assert main(["check", *model, *argv, EXAMPLE]) == 2
    assert "Traceback" not in capsys.readouterr().err


def test_check_reports_the_split_in_json(capsys):
    main(
        [
            "check",
            "--model",
            "Qwen2.5-7B",
            "--lora-rank",
            "8",
            "--lora-targets",
            "q_proj,v_proj",
            "--quant",
            "8bit",
            "--format",
            "json",
            EXAMPLE,
        ]
    )
    out = json.dumps(json.loads(capsys.readouterr().out))
    assert '"trainable_params": 2523136' in out and '"quant": "8bit"' in out


def test_the_api_takes_lora_and_quant():
    r = api.estimate_memory(EXAMPLE, model="Qwen3-8B", lora_rank=32, quant="4bit", seq_len=1024, micro_batch=1)
    assert r.estimate.lora.trainable == lora.split(modelsize.from_name("Qwen3-8B"), lora.Adapter(32), 2).trainable
    assert r.estimate.optimizer == pytest.approx(8 * r.estimate.lora.trainable / 8)  # HYBRID_SHARD over 8 per node


@pytest.mark.skipif(not QLORA, reason="the corpus (../shared/corpus) is not next to this checkout")
@pytest.mark.parametrize("path", QLORA, ids=lambda p: p.name)
def test_the_fsdp_qlora_configs_of_the_corpus_offload_the_frozen_base(path):
    from accelconf.text.document import load_file

    doc = load_file(str(path), "json" if path.suffix == ".json" else "yaml")
    s, _ = memory.strategy_of(doc.data, str(path))
    assert s.offload_params
    e = memory.estimate(
        s,
        memory.layout_of(doc.data, None, None),
        modelsize.from_name("Llama-3.1-70B"),
        lora=lora.Adapter(16, quant="4bit"),
    )
    assert (e.params, e.grads, e.optimizer) == (0.0, 0.0, 0.0)
    assert e.host > e.lora.base_bytes  # the shards of every rank of the node, and the adapters' AdamW state
