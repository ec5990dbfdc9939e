"""``accelconf fit``: the strategy table, the verdict's margins, ``--write-config``, JSON, exit codes,
and the same table under ``check`` and the API."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

import accelconf
from accelconf import api
from accelconf.environment import fit, memory
from accelconf.environment.memory import GiB, Layout, Strategy
from accelconf.environment.modelsize import from_count, from_model_dir
from accelconf.text.document import load_text

ROOT = Path(__file__).resolve().parents[3]
QWEN = ROOT / "examples" / "memory" / "qwen2-7b"
LLAMA70 = ROOT / "examples" / "memory" / "llama-3.1-70b"
MACHINE = ("--gpus", "8", "--gpu", "H100-80GB")
LAYOUTS = [Layout(8, 1), Layout(8, 2), Layout(1, 1), Layout(4, 4)]


def _as_read_back(s: Strategy) -> Strategy:
    """What a written config says: checkpointing under DDP/DeepSpeed is in the training script."""
    return s if s.kind in ("fsdp1", "fsdp2") else replace(s, activation_checkpointing=False)


def test_table_lists_every_modelled_strategy_with_and_without_checkpointing():
    t = fit.table(from_count("8B"), Layout(8), gpu_name="H100-80GB", gpu_bytes=80 * GiB)
    labels = [r.short() for r in t.rows]
    assert len(labels) == len(set(labels)) == 34
    for name in (
        "DDP",
        "ZeRO-1",
        "ZeRO-2 offload opt",
        "ZeRO-3 offload opt+param",
        "FSDP1 HYBRID_SHARD_ZERO2",
        "FSDP1 NO_SHARD",
        "FSDP2 reshard",
        "FSDP2 no reshard",
        "FSDP2 reshard offload",
    ):
        assert name in labels and f"{name} +ckpt" in labels


def test_rows_are_the_estimator_of_check_for_the_config_they_write(cli, tmp_path):
    # the row's figure is the one check prints for the config --write-config would write for that row
    t = fit.table(
        from_model_dir(str(QWEN)), Layout(8), gpu_name="H100-80GB", gpu_bytes=80 * GiB, seq_len=2048, micro_batch=1
    )
    for r in t.rows:
        assert r.estimate == memory.estimate(r.strategy, Layout(8), t.model, seq_len=2048, micro_batch=1)
    for r in [t.rows[i] for i in (0, 3, 5, 8, 14, 15)]:
        cfg = tmp_path / f"{r.short().replace(' ', '_').replace('+', '')}.yaml"
        cfg.write_text(fit.config_text(r.strategy, Layout(8)))
        out = cli(
            "check",
            str(cfg),
            "--model",
            str(QWEN),
            *MACHINE,
            "--seq-len",
            "2048",
            "--micro-batch",
            "1",
            "--format",
            "json",
        )
        (mem,) = json.loads(out.out)["memory"]
        assert mem["per_gpu_bytes"]["total"] == int(r.estimate.per_gpu), r.label()
        assert mem["per_gpu_bytes"]["model_states"] == int(r.estimate.model_states)


def test_zero_rows_keep_deepspeeds_model_states():
    # the states of the ZeRO-2/3 rows are DeepSpeed's estimator terms (oracle-tested in test_memory_oracle)
    P = 8_000_000_000
    t = fit.table(from_count(P), Layout(8), gpu_name="H100-80GB", gpu_bytes=80 * GiB)
    zero2 = next(r for r in t.rows if r.short() == "ZeRO-2")
    assert zero2.estimate.model_states == 2 * P + 18 * P // 8
    assert (
        zero2.estimate.per_gpu
        == zero2.estimate.model_states + 2 * 500_000_000 + memory.CUDA_CONTEXT + memory.NCCL_PER_COMMUNICATOR
    )


@pytest.mark.parametrize(
    "fraction,expected",
    [
        (0.0, "fits"),
        (0.7999, "fits"),
        (0.80, "tight"),
        (0.95, "tight"),
        (1.0, "tight"),
        (1.0001, "does not fit"),
        (None, "unknown"),
    ],
)
def test_verdict_margins(fraction, expected):
    assert memory.verdict(fraction) == expected


def test_margins_at_the_boundaries_in_the_table_check_and_hover():
    m = from_count("8B")
    zero3 = Strategy("deepspeed", "bf16", 3, zero3_init=True)
    peak = memory.estimate(zero3, Layout(8), m).per_gpu
    data = load_text(fit.config_text(zero3, Layout(8))).data
    for gpu_bytes, expected in (
        (peak / 0.8, "tight"),
        (peak / 0.8 + 2 * GiB, "fits"),
        (peak, "tight"),
        (peak - 1, "does not fit"),
    ):
        row = fit.row(zero3, Layout(8), m, gpu_bytes, None)
        report = memory.assess(data, m, gpu_name="X", gpu_memory_gib=gpu_bytes / GiB, gpus_per_node=8, nodes=1)
        assert row.verdict == report.verdict == expected, gpu_bytes / peak
        found = memory.findings_for(report, lambda *a: a[:2])
        assert found == ([] if expected == "fits" else [("mem-gpu", "warning" if expected == "tight" else "error")])


@pytest.mark.parametrize("layout", LAYOUTS, ids=lambda lay: f"{lay.nodes}x{lay.gpus_per_node}")
@pytest.mark.parametrize("precision", ["bf16", "fp16", "no"])
def test_every_strategys_config_validates_clean_and_reads_back(layout, precision):
    for s in fit.strategies(precision, layout.world):
        text = fit.config_text(s, layout)
        assert api.validate_source(text, "fit.yaml") == [], (s.label(), text)
        back, notes = memory.strategy_of(load_text(text).data)
        assert (back, notes) == (_as_read_back(s), []), s.label()
        assert memory.layout_of(load_text(text).data, None, None) == layout


def test_write_config_writes_the_cheapest_that_fits(cli, tmp_path):
    out = tmp_path / "fit.yaml"
    out.write_text("old\n")
    r = cli(
        "fit", "--model", str(QWEN), *MACHINE, "--seq-len", "4096", "--micro-batch", "2", "--write-config", str(out)
    )
    assert r.code == 0
    best = next(line for line in r.out.splitlines() if "cheapest that fits:" in line).split(": ", 1)[1]
    assert f"wrote {out}: {best}" in r.err
    assert cli("validate", str(out)).code == 0
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".accelconf-")]  # no temporary left
    t = accelconf.fit(str(QWEN), gpu="H100-80GB", gpus=8, seq_len=4096, micro_batch=2)
    back, _ = memory.strategy_of(load_text(out.read_text()).data)
    assert back == _as_read_back(t.cheapest.strategy) and t.cheapest.label() == best


def test_checkpointing_lives_in_the_config_for_fsdp_and_in_the_script_otherwise(cli, tmp_path):
    assert "gradient_checkpointing_enable()" in fit.checkpointing_note(
        Strategy("deepspeed", "bf16", 2, activation_checkpointing=True)
    )
    assert fit.checkpointing_note(Strategy("fsdp2", "bf16", activation_checkpointing=True)) is None
    text = fit.config_text(
        Strategy("fsdp2", "bf16", activation_checkpointing=True, cpu_ram_efficient_loading=True), Layout(8)
    )
    assert "fsdp_activation_checkpointing: true" in text
    # a model whose cheapest fitting row is ZeRO/DDP with checkpointing: the command says where it goes
    out = tmp_path / "ckpt.yaml"
    t = accelconf.fit(str(QWEN), gpu="A100-80GB", gpus=8, seq_len=4096, micro_batch=2)
    r = cli(
        "fit",
        "--model",
        str(QWEN),
        "--gpus",
        "8",
        "--gpu",
        "A100-80GB",
        "--seq-len",
        "4096",
        "--micro-batch",
        "2",
        "--write-config",
        str(out),
    )
    note = fit.checkpointing_note(t.cheapest.strategy)
    assert (note in r.err) if note else ("gradient_checkpointing_enable" not in r.err)


def test_json_output(cli):
    r = cli("fit", "--model", str(QWEN), *MACHINE, "--seq-len", "4096", "--micro-batch", "2", "--format", "json")
    assert r.code == 0
    data = json.loads(r.out)
    assert len(data["rows"]) == 34 and data["gpu"] == "H100-80GB" and data["gpus_per_node"] == 8
    ddp = data["rows"][0]
    assert ddp["strategy"] == "DDP, bf16" and ddp["verdict"] == "does not fit" and ddp["comm_cost"] == 1.0
    assert ddp["estimate"]["cuda_context_estimated"] == int(memory.CUDA_CONTEXT)
    fitting = [row for row in data["rows"] if row["verdict"] == "fits"]
    assert fitting and all(row["gpu_fraction"] < 0.8 for row in fitting)
    assert data["cheapest_that_fits"] == "FSDP1 SHARD_GRAD_OP, bf16, checkpointing"
    assert "relative to DDP's all-reduce" in data["comm_cost_model"]


def test_comm_cost_follows_the_papers():
    assert [
        fit.comm_cost(s)
        for s in (
            Strategy("ddp"),
            Strategy("deepspeed", zero_stage=2),
            Strategy("deepspeed", zero_stage=3),
            Strategy("fsdp1", sharding="FULL_SHARD"),
            Strategy("fsdp1", sharding="SHARD_GRAD_OP"),
            Strategy("fsdp2", reshard_after_forward=False),
        )
    ] == [1.0, 1.0, 1.5, 1.5, 1.0, 1.0]


def test_exit_1_when_nothing_fits_and_nothing_is_written(cli, tmp_path):
    out = tmp_path / "none.yaml"
    r = cli("fit", "--params", "2T", "--gpus", "1", "--gpu", "T4", "--write-config", str(out))
    assert r.code == 1
    assert "nothing fits" in r.out and "nothing fits: no config written" in r.err
    assert not out.exists()


@pytest.mark.parametrize(
    "argv,message",
    [
        (["--params", "8B", "--gpus", "8", "--gpu", "NoSuchGPU"], "NoSuchGPU"),
        (["--params", "8B", "--gpus", "8"], "needs the GPU model"),
        (["--gpus", "8", "--gpu", "H100"], "needs the model"),
        (["--params", "8B", "--gpus", "0", "--gpu", "H100"], "--gpus must be 1 or more"),
        (["--params", "8B", "--gpu", "H100", "--seq-len", "4096"], "both --seq-len and --micro-batch"),
        (["--model", "/nonexistent/model", "--gpu", "H100"], "not a folder"),
        (["--params", "8B", "--gpu", "H100", "--write-config", "/nonexistent/dir/x.yaml"], "cannot write"),
        (["--params", "8B", "--gpu", "H100", "--mixed-precision", "fp64"], "invalid choice"),
    ],
)
def test_bad_input_exits_2(cli, argv, message):
    r = cli("fit", *argv)
    assert r.code == 2
    assert message in r.err and "Traceback" not in r.err


def test_bars_only_on_a_tty(cli):
    plain = cli("fit", "--params", "8B", *MACHINE)
    assert "####" not in plain.out and plain.code == 0
    bars = cli("fit", "--params", "8B", *MACHINE, "--color", "always")
    ddp = next(line for line in bars.out.splitlines() if line.strip().startswith("DDP "))
    assert fit.bar(1.5) in ddp and fit.bar(1.5).endswith(">")
    assert fit.bar(0.5) == "#" * 10 + "......|..." and len(fit.bar(0.5)) == fit.BAR_WIDTH


def test_fit_does_not_import_heavy_modules():
    code = (
        "import sys, io, contextlib; from accelconf.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    main(['fit', '--model', {str(QWEN)!r}, '--gpus', '8', '--gpu', 'H100-80GB', "
        "'--seq-len', '4096', '--micro-batch', '2'])\n"
        "print([m for m in ('torch', 'transformers', 'accelerate', 'deepspeed', 'pygls') if m in sys.modules])"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env={**os.environ, "NO_COLOR": "1"}
    ).stdout
    assert out.strip().splitlines()[-1] == "[]"


def test_check_shows_the_rows_that_fit_when_a_config_does_not(cli):
    r = cli(
        "check",
        str(ROOT / "examples" / "memory" / "zero2-8gpu.yaml"),
        "--model",
        str(QWEN),
        *MACHINE,
        "--seq-len",
        "4096",
        "--micro-batch",
        "2",
    )
    assert "strategies that fit here, cheapest first (accelconf fit lists all):" in r.out
    block = r.out.split("strategies that fit here", 1)[1]
    assert "FSDP1 SHARD_GRAD_OP +ckpt" in block and "does not fit" not in block.split("cheapest that fits")[0]
    fits = cli("check", str(ROOT / "examples" / "memory" / "zero2-8gpu.yaml"), "--params", "8B", *MACHINE)
    assert "strategies that fit here" not in fits.out


def test_api_fit_takes_a_count_a_folder_or_a_size():
    by_count = accelconf.fit("70B", gpu="H100-80GB", gpus=8, nodes=2, host_ram_gib=2048)
    assert isinstance(by_count, fit.FitTable) and by_count.layout == Layout(8, 2)
    assert by_count.cheapest is not None and by_count.cheapest.verdict == "fits"
    assert by_count.to_json()["cheapest_that_fits"] == by_count.cheapest.label()
    by_dir = accelconf.fit(str(LLAMA70), gpu="H100-80GB", gpus=8)
    assert by_dir.model.params == 70_553_706_496
    on_v100 = accelconf.fit(from_count("1B"), gpu="V100-16GB", gpus=8)
    assert {r.strategy.precision for r in on_v100.rows} == {"fp16"}  # no bf16 on Volta
    with pytest.raises(accelconf.UsageError):
        accelconf.fit("8B")


def test_lora_rows_train_adapters_and_price_the_weight_gathers(cli):
    from accelconf.environment.lora import adapter_of

    m = from_model_dir(str(QWEN))
    adapter = adapter_of(16, None, "4bit")
    t = fit.table(m, Layout(8), gpu_name="H100-80GB", gpu_bytes=80 * GiB, seq_len=2048, micro_batch=1, lora=adapter)
    full = fit.table(m, Layout(8), gpu_name="H100-80GB", gpu_bytes=80 * GiB, seq_len=2048, micro_batch=1)
    for r, f in zip(t.rows, full.rows):
        assert r.estimate == memory.estimate(r.strategy, Layout(8), m, seq_len=2048, micro_batch=1, lora=adapter)
        assert r.estimate.model_states < f.estimate.model_states  # a frozen NF4 base, no base gradients or moments
    share = t.rows[0].estimate.lora.trainable / m.params
    zero3 = next(r for r in t.rows if r.short() == "ZeRO-3")
    assert zero3.comm == pytest.approx((2 + share) / (2 * share)) and zero3.comm > 50  # gathers the whole base twice
    assert next(r for r in t.rows if r.short() == "ZeRO-2").comm == 1.0
    r = cli("fit", "--model", str(QWEN), *MACHINE, "--lora-rank", "16", "--quant", "4bit", "--format", "json")
    assert r.code == 0 and json.loads(r.out)["rows"][0]["per_gpu_bytes"] == int(
        memory.estimate(t.rows[0].strategy, Layout(8), m, lora=adapter).per_gpu
    )
    assert cli("fit", "--params", "8B", *MACHINE, "--quant", "4bit").code == 2  # --quant needs --lora-rank


def test_model_by_name_is_the_bundled_table(cli):
    r = cli("fit", "--model", "meta-llama/Llama-3.1-8B", *MACHINE, "--format", "json")
    assert r.code == 0 and json.loads(r.out)["model"]["params"] == 8_030_261_248


def test_check_json_carries_the_rows_that_fit(cli):
    r = cli(
        "check",
        str(ROOT / "examples" / "memory" / "zero2-8gpu.yaml"),
        "--model",
        str(QWEN),
        *MACHINE,
        "--seq-len",
        "4096",
        "--micro-batch",
        "2",
        "--format",
        "json",
    )
    (mem,) = json.loads(r.out)["memory"]
    t = accelconf.fit(str(QWEN), gpu="H100-80GB", gpus=8, seq_len=4096, micro_batch=2)
    assert [row["strategy"] for row in mem["strategies_that_fit"]] == [row.strategy.label() for row in t.fitting[:5]]


def test_a_profile_gives_the_machine(cli):
    r = cli("fit", "--params", "70B", "--target", "h100-node", "--format", "json")
    data = json.loads(r.out)
    assert (data["gpu"], data["gpus_per_node"], data["nodes"]) == ("H100-80GB", 8, 2)
    assert (
        json.loads(cli("fit", "--params", "70B", "--target", "h100-node", "--nodes", "4", "--format", "json").out)[
            "nodes"
        ]
        == 4
    )


def test_one_gpu_communicates_nothing():
    t = fit.table(from_count("1B"), Layout(1), gpu_name="A10G", gpu_bytes=24 * GiB)
    assert {r.comm for r in t.rows} == {0.0} and {r.estimate.nccl for r in t.rows} == {0.0}
    assert t.rows[0].short() == "one process"
