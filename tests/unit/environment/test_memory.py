"""``accelconf check --params/--model``: model sizes, the estimate, the findings and the output."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

from accelconf.environment import memory
from accelconf.environment.memory import GiB, Layout, Strategy, estimate, strategy_of
from accelconf.environment.modelsize import from_count, from_model_dir, parse_count
from accelconf.errors import UsageError
from accelconf.text.document import load_text

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "examples" / "memory"


@pytest.mark.parametrize(
    "text,value",
    [
        ("8B", 8_000_000_000),
        ("70e9", 70_000_000_000),
        ("1.5b", 1_500_000_000),
        ("350M", 350_000_000),
        ("124439808", 124439808),
        ("7_000k", 7_000_000),
    ],
)
def test_parse_count(text, value):
    assert parse_count(text) == value


@pytest.mark.parametrize("text", ["", "eight", "8X", "-3B", "0", "1e999"])
def test_parse_count_rejects(text):
    with pytest.raises(UsageError, match="--params"):
        parse_count(text)


def _safetensors(path: Path, tensors: dict[str, tuple[str, list[int]]]) -> None:
    header, offset = {}, 0
    sizes = {"BF16": 2, "F32": 4}
    for name, (dtype, shape) in tensors.items():
        n = sizes[dtype]
        for d in shape:
            n *= d
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + n]}
        offset += n
    raw = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(raw)) + raw + b"\0" * offset)


def test_model_dir_headers_give_count_and_largest_layer(tmp_path):
    _safetensors(
        tmp_path / "model.safetensors",
        {
            "model.embed_tokens.weight": ("BF16", [100, 8]),
            "model.layers.0.mlp.up_proj.weight": ("BF16", [32, 8]),
            "model.layers.0.mlp.down_proj.weight": ("BF16", [8, 32]),
            "model.layers.1.mlp.up_proj.weight": ("BF16", [32, 8]),
            "model.norm.weight": ("BF16", [8]),
        },
    )
    size = from_model_dir(str(tmp_path))
    assert size.params == 800 + 256 * 3 + 8
    assert size.largest_layer == 800  # the embedding module
    assert size.largest_unit == 808  # the root unit: embedding + final norm
    assert size.checkpoint_dtype == "BF16"


def test_model_dir_index_total_size_with_dtype(tmp_path):
    (tmp_path / "model.safetensors.index.json").write_text(
        json.dumps({"metadata": {"total_size": 16_060_522_496}, "weight_map": {}})
    )
    (tmp_path / "config.json").write_text(
        json.dumps(
            {
                "model_type": "llama",
                "hidden_size": 4096,
                "intermediate_size": 14336,
                "num_hidden_layers": 32,
                "num_attention_heads": 32,
                "num_key_value_heads": 8,
                "vocab_size": 128256,
                "torch_dtype": "bfloat16",
            }
        )
    )
    size = from_model_dir(str(tmp_path))
    assert size.params == 8_030_261_248  # Llama-3.1-8B
    assert "total_size / 2 bytes (bfloat16)" in size.source
    assert size.largest_layer == 128256 * 4096  # from config.json's shapes: the embedding
    assert size.arch is not None and (size.arch.hidden, size.arch.layers, size.arch.heads) == (4096, 32, 32)


def test_model_dir_unknown_family_is_a_clear_message(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "t5", "d_model": 512}))
    with pytest.raises(UsageError, match=r"cannot count parameters for model_type 't5'; known: .*llama"):
        from_model_dir(str(tmp_path))


def test_model_dir_missing_key_and_missing_dir(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "llama", "hidden_size": 64}))
    with pytest.raises(UsageError, match="needs 'vocab_size'"):
        from_model_dir(str(tmp_path))
    with pytest.raises(UsageError, match="not a folder"):
        from_model_dir(str(tmp_path / "nope"))


@pytest.mark.parametrize(
    "text,expected",
    [
        ("distributed_type: MULTI_GPU\nmixed_precision: bf16\n", Strategy("ddp", "bf16")),
        (
            "distributed_type: DEEPSPEED\ndeepspeed_config:\n  zero_stage: 3\n  offload_optimizer_device: cpu\n",
            Strategy("deepspeed", "no", 3, "cpu", "none", True),
        ),
        (
            "distributed_type: DEEPSPEED\ndeepspeed_config:\n  zero_stage: 3\n  zero3_init_flag: false\n",
            Strategy("deepspeed", "no", 3, zero3_init=False),
        ),
        ("distributed_type: DEEPSPEED\ndeepspeed_config: {}\n", Strategy("deepspeed", "no", 2)),  # the plugin default
        (
            "distributed_type: FSDP\nfsdp_config:\n  fsdp_sharding_strategy: 2\n",
            Strategy("fsdp1", sharding="SHARD_GRAD_OP"),
        ),
        (
            "distributed_type: FSDP\nfsdp_config:\n  fsdp_version: 2\n  fsdp_reshard_after_forward: false\n"
            "  fsdp_offload_params: true\n",
            Strategy("fsdp2", reshard_after_forward=False, offload_params=True),
        ),
        ('{"zero_optimization": {"stage": 1}, "bf16": {"enabled": true}}', Strategy("deepspeed", "bf16", 1)),
    ],
)
def test_strategy_of(text, expected):
    assert strategy_of(load_text(text).data)[0] == expected


def test_deepspeed_config_file_is_read(tmp_path):
    (tmp_path / "ds.json").write_text(
        '{"zero_optimization": {"stage": 3, "offload_param": {"device": "cpu"}, '
        '"offload_optimizer": {"device": "cpu"}}, "fp16": {"enabled": true}}'
    )
    cfg = tmp_path / "a.yaml"
    cfg.write_text("distributed_type: DEEPSPEED\ndeepspeed_config:\n  deepspeed_config_file: ds.json\n")
    s, _ = strategy_of(load_text(cfg.read_text()).data, str(cfg))
    assert (s.zero_stage, s.offload_optimizer, s.offload_param, s.precision) == (3, "cpu", "cpu", "fp16")


def test_sharding_orders_memory():
    m = from_count("8B")
    lay = Layout(8, 2)
    full = estimate(Strategy("fsdp1", "bf16", sharding="FULL_SHARD"), lay, m).per_gpu
    hybrid = estimate(Strategy("fsdp1", "bf16", sharding="HYBRID_SHARD"), lay, m).per_gpu
    grad_op = estimate(Strategy("fsdp1", "bf16", sharding="SHARD_GRAD_OP"), lay, m).per_gpu
    no = estimate(Strategy("fsdp1", "bf16", sharding="NO_SHARD"), lay, m).per_gpu
    assert full < hybrid < no and full < grad_op < no
    no_est = estimate(Strategy("fsdp1", "bf16", sharding="NO_SHARD"), lay, m)
    assert no_est.model_states == 16 * m.params  # fp32 weights + grads + two AdamW moments
    # the peak is the optimizer step: AdamW's foreach sqrt is one more fp32 copy of the local weights
    assert (
        no_est.optimizer_step == 20 * m.params
        and no == 20 * m.params + memory.CUDA_CONTEXT + memory.NCCL_PER_COMMUNICATOR
    )
    off = estimate(Strategy("fsdp1", "bf16", offload_params=True), lay, m)
    assert off.params == off.grads == off.optimizer == 0 and off.gathered > 0


def test_activations_come_from_the_structure_and_checkpointing_keeps_layer_inputs(tmp_path):
    (tmp_path / "config.json").write_text(
        json.dumps(
            {
                "model_type": "llama",
                "hidden_size": 4096,
                "intermediate_size": 14336,
                "num_hidden_layers": 32,
                "num_attention_heads": 32,
                "num_key_value_heads": 8,
                "vocab_size": 128256,
            }
        )
    )
    m = from_model_dir(str(tmp_path))
    s, b, h, L = 4096, 2, 4096, 32
    full = estimate(Strategy("fsdp1", "bf16"), Layout(8), m, seq_len=s, micro_batch=b)
    act = full.activation_detail
    assert full.activations == act.peak == act.saved + act.transient[1]
    assert act.saved == L * act.per_layer + act.outside_total
    assert "llama structure (sdpa attention)" in full.activation_formula
    ckpt = estimate(Strategy("fsdp1", "bf16", activation_checkpointing=True), Layout(8), m, seq_len=s, micro_batch=b)
    kept = ckpt.activation_detail
    assert kept.kept == L * 2 * s * b * h  # one bf16 hidden state per layer
    assert ckpt.activations < full.activations
    no_shape = estimate(Strategy("fsdp1", "bf16"), Layout(8), from_count("8B"), seq_len=s, micro_batch=b)
    assert no_shape.activations is None and any("--model" in n for n in no_shape.notes)


def test_suggestion_is_computed_and_fits():
    data = load_text("distributed_type: MULTI_GPU\nmixed_precision: bf16\nnum_processes: 8\n").data
    report = memory.assess(data, from_count("8B"), gpu_name="A100-80GB", gpu_memory_gib=80, gpus_per_node=8, nodes=1)
    assert report.verdict == "does not fit"
    change, est = report.suggestion
    assert est.per_gpu < 0.8 * 80 * GiB
    # it really is the estimate of the strategy it names, and no cheaper alternative fits
    assert est.per_gpu == estimate(change.strategy, change.layout, from_count("8B")).per_gpu
    assert change.strategy.kind in ("deepspeed", "fsdp1")


def test_warning_between_80_and_100_percent():
    # ZeRO-2 bf16, 8B on 8 GPUs: 2*8e9 + 18*8e9/8 = 34e9 bytes of states, DeepSpeed's 5e8-element 16-bit
    # reduce bucket, the CUDA context and one NCCL communicator; on a GPU of peak / 0.85 -> 85%
    data = load_text(
        "distributed_type: DEEPSPEED\nmixed_precision: bf16\nnum_processes: 8\ndeepspeed_config:\n  zero_stage: 2\n"
    ).data
    peak = 34e9 + 2 * 5e8 + memory.CUDA_CONTEXT + memory.NCCL_PER_COMMUNICATOR
    gpu_gib = peak / GiB / 0.85
    report = memory.assess(data, from_count("8B"), gpu_name="X", gpu_memory_gib=gpu_gib, gpus_per_node=8, nodes=1)
    assert report.estimate.per_gpu == peak
    assert report.verdict == "tight"
    found = memory.findings_for(report, lambda *a: a)
    assert [f[:2] for f in found] == [("mem-gpu", "warning")]
    assert report.suggestion is not None and report.suggestion[1].per_gpu < report.estimate.per_gpu


def test_host_ram_error_for_offload():
    data = load_text(
        "distributed_type: DEEPSPEED\nmixed_precision: bf16\nnum_processes: 8\n"
        "deepspeed_config:\n  zero_stage: 3\n  offload_optimizer_device: cpu\n  offload_param_device: cpu\n"
    ).data
    report = memory.assess(
        data, from_count("70B"), gpu_name="H100-80GB", gpu_memory_gib=80, gpus_per_node=8, nodes=1, host_ram_gib=512
    )
    found = memory.findings_for(report, lambda *a: a)
    assert ("mem-host", "error") in [f[:2] for f in found]
    assert report.suggestion is not None
    assert report.suggestion[1].host < 0.8 * 512 * GiB or not memory.offloads(report.suggestion[0].strategy)


def test_cli_done_when(cli, tmp_path):
    cfg = tmp_path / "train.yaml"
    cfg.write_text(
        "distributed_type: DEEPSPEED\nmixed_precision: bf16\nnum_machines: 1\nnum_processes: 8\n"
        "deepspeed_config:\n  zero_stage: 2\n"
    )
    r = cli("check", str(cfg), "--params", "70B", "--gpus", "8", "--gpu", "H100-80GB")
    assert r.code == 1
    assert "DeepSpeed ZeRO-2, bf16 on 1 node x 8 GPUs" in r.out
    assert "peak of the step                       278.8 GiB   of H100-80GB 80.0 GiB: 348%" in r.out
    assert "CUDA context (estimated)" in r.out and "NCCL, 1 communicator (estimated)" in r.out
    assert "verdict: does not fit" in r.out
    assert "cheapest change that fits: zero_stage: 3" in r.out
    assert f"{cfg}:6:15: error: the step's peak (model states, buffers, CUDA context) needs 278.8 GiB per GPU" in r.out
    assert "activations not included" in r.out


def test_cli_json(cli):
    r = cli(
        "check",
        str(EXAMPLES / "zero2-8gpu.yaml"),
        "--params",
        "8B",
        "--gpus",
        "8",
        "--gpu",
        "A100-80GB",
        "--format",
        "json",
    )
    assert r.code == 0
    data = json.loads(r.out)
    (mem,) = data["memory"]
    assert mem["verdict"] == "fits"
    assert mem["per_gpu_bytes"]["model_states"] == 2 * 8_000_000_000 + 18 * 8_000_000_000 // 8
    assert mem["per_gpu_bytes"]["buckets"] == 2 * 500_000_000  # DeepSpeed's default reduce bucket, 16-bit
    assert mem["per_gpu_bytes"]["total"] == int(34e9 + 1e9 + memory.CUDA_CONTEXT + memory.NCCL_PER_COMMUNICATOR)
    assert mem["per_gpu_bytes"]["activations"] is None
    assert mem["model"]["params"] == 8_000_000_000


@pytest.mark.parametrize(
    "argv,message",
    [
        (["--seq-len", "4096"], "needs --params or --model"),
        (["--params", "8B", "--model", "."], "not both"),
        (["--params", "8B", "--seq-len", "4096"], "both --seq-len and --micro-batch"),
        (["--params", "lots"], "not a parameter count"),
    ],
)
def test_cli_bad_options_exit_2(cli, argv, message):
    r = cli("check", str(EXAMPLES / "zero2-8gpu.yaml"), "--gpus", "8", "--gpu", "A100-80GB", *argv)
    assert r.code == 2
    assert message in r.err
    assert "Traceback" not in r.err


def test_public_api_estimate_memory():
    import accelconf

    env = accelconf.target_from_args(8, "A100-80GB")
    report = accelconf.estimate_memory(str(EXAMPLES / "ddp-8gpu.yaml"), params="8B", target=env)
    assert isinstance(report, memory.Report)
    assert report.verdict == "does not fit"
    assert report.estimate.model_states == 16 * 8_000_000_000
    bare = accelconf.estimate_memory("distributed_type: MULTI_GPU\nnum_processes: 2\n", params=1_000_000)
    assert bare.verdict.startswith("unknown") and bare.estimate.layout.world == 2
    with pytest.raises(UsageError):
        accelconf.estimate_memory(str(EXAMPLES / "ddp-8gpu.yaml"))


def test_every_memory_rule_is_documented_and_reached(cli, tmp_path):
    cfg = tmp_path / "off.yaml"
    cfg.write_text(
        "distributed_type: DEEPSPEED\nmixed_precision: bf16\nnum_processes: 8\ndeepspeed_config:\n"
        "  zero_stage: 3\n  offload_optimizer_device: cpu\n  offload_param_device: cpu\n"
    )
    r = cli(
        "check",
        str(cfg),
        str(EXAMPLES / "ddp-8gpu.yaml"),
        "--params",
        "70B",
        "--gpus",
        "8",
        "--gpu",
        "A100-80GB",
        "--host-ram",
        "256",
        "--format",
        "json",
    )
    rules = {
        f["rule"] for entry in json.loads(r.out)["files"] for f in entry["findings"] if f["rule"].startswith("mem-")
    }
    assert rules == set(memory.RULE_IDS)
    r = cli(
        "check",
        str(cfg),
        "--params",
        "70B",
        "--gpus",
        "8",
        "--gpu",
        "A100-80GB",
        "--host-ram",
        "256",
        "--disable",
        "mem-host",
        "--format",
        "json",
    )
    assert not [f for f in json.loads(r.out)["files"][0]["findings"] if f["rule"] == "mem-host"]


def _readme_examples() -> list[tuple[list[str], str]]:
    import shlex

    text = (ROOT / "docs" / "check.md").read_text(encoding="utf-8")
    section = text[text.index("## Will it fit?") :]
    section = section[: section.index("\n## ")] if "\n## " in section[3:] else section
    out = []
    for block in section.split("```console\n")[1:]:
        block = block[: block.index("```")]
        if "\n...\n" in block:
            continue  # an excerpt
        for chunk in block.split("$ accelconf ")[1:]:
            cmd, _, output = chunk.partition("\n")
            expected = "".join(line + "\n" for line in output.splitlines() if not line.startswith("checking against"))
            out.append((shlex.split(cmd), expected))
    return out


@pytest.mark.parametrize("argv,expected", _readme_examples())
def test_check_page_memory_examples_are_real_output(cli, monkeypatch, argv, expected):
    monkeypatch.chdir(ROOT)
    r = cli(*argv)
    assert r.out == expected


def test_headers_skip_buffers_and_a_saved_tied_head(tmp_path):
    _safetensors(
        tmp_path / "model.safetensors",
        {
            "transformer.wte.weight": ("F32", [50, 4]),
            "transformer.h.0.attn.bias": ("F32", [1, 1, 8, 8]),  # GPT-2's causal mask: a buffer
            "transformer.h.0.mlp.c_fc.weight": ("F32", [4, 16]),
            "lm_head.weight": ("F32", [50, 4]),  # tied, saved anyway
        },
    )
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "gpt2", "tie_word_embeddings": True}))
    size = from_model_dir(str(tmp_path))
    assert size.params == 200 + 64
    assert any("tied" in n for n in size.notes)
