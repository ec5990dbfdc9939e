"""The activation model's wiring: config.json -> structure, --attn, checkpoint offload, the table."""

from __future__ import annotations

import json
from pathlib import Path

from accelconf.environment import activations
from accelconf.environment.memory import Layout, Strategy, estimate, strategy_of
from accelconf.environment.modelsize import from_model_dir, with_attention
from accelconf.text.document import load_text

QWEN2_7B = Path(__file__).resolve().parents[3] / "examples" / "memory" / "qwen2-7b"


def test_eager_attention_keeps_the_score_matrices_and_sdpa_does_not():
    size = from_model_dir(str(QWEN2_7B))
    sdpa = activations.estimate(size.structure, 4096, 2, 2)
    eager = activations.estimate(with_attention(size, "eager").structure, 4096, 2, 2)
    scores = 2 * 28 * 4096 * 4096  # batch x heads x seq^2
    # fp32 softmax and its bf16 cast per score, against SDPA's fp32 log-sum-exp per head and row
    assert eager.per_layer - sdpa.per_layer > 6 * scores
    assert with_attention(size, "flash").structure.attn == "flash"
    assert with_attention(size, None) is size


def test_attn_implementation_from_the_config_is_used(tmp_path):
    data = json.loads((QWEN2_7B / "config.json").read_text())
    (tmp_path / "config.json").write_text(json.dumps(dict(data, attn_implementation="eager")))
    assert from_model_dir(str(tmp_path)).structure.attn == "eager"
    (tmp_path / "config.json").write_text(json.dumps(dict(data, attn_implementation="flash_attention_2")))
    assert from_model_dir(str(tmp_path)).structure.attn == "flash"


def test_checkpointing_offload_moves_the_kept_inputs_to_host_ram():
    size = from_model_dir(str(QWEN2_7B))
    data = load_text(
        "distributed_type: FSDP\nmixed_precision: bf16\nfsdp_config:\n  fsdp_version: 2\n"
        "  fsdp_activation_checkpointing: true\n  fsdp_activation_checkpointing_offload: true\n"
    ).data
    s, _ = strategy_of(data)
    assert s.activation_checkpointing and s.activation_checkpointing_offload
    off = estimate(s, Layout(8), size, seq_len=4096, micro_batch=2)
    on_gpu = estimate(
        Strategy("fsdp2", "bf16", activation_checkpointing=True), Layout(8), size, seq_len=4096, micro_batch=2
    )
    kept = 28 * 2 * 4096 * 2 * 3584
    assert on_gpu.activations - off.activations == kept
    assert off.host - on_gpu.host == 8 * kept  # one copy per process on the node


def test_check_prints_the_activation_lines_and_refuses_attn_without_a_model(cli, tmp_path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("distributed_type: FSDP\nmixed_precision: bf16\nnum_processes: 8\nfsdp_config:\n  fsdp_version: 2\n")
    r = cli(
        "check",
        "--model",
        str(QWEN2_7B),
        "--seq-len",
        "4096",
        "--micro-batch",
        "2",
        "--attn",
        "eager",
        "--gpu",
        "H100-80GB",
        "--gpus",
        "8",
        str(cfg),
    )
    assert "logits and loss (fp32, vocabulary 152,064)" in r.out
    assert "largest transient:" in r.out and "qwen2 structure (eager attention)" in r.out
    bad = cli("check", "--attn", "eager", str(cfg))
    assert bad.code == 2 and "--attn needs --params or --model" in bad.err
    unknown = cli("check", "--model", str(QWEN2_7B), "--attn", "fast", str(cfg))
    assert unknown.code == 2 and "fast" in unknown.err
