"""`diff` of Trainer arguments against an accelerate config whose DeepSpeed section names a JSON file:
the Accelerator's side reads that file, as DeepSpeedPlugin does."""

from __future__ import annotations

from pathlib import Path


def test_diff_of_arguments_against_a_config_naming_a_deepspeed_file_reads_the_file(cli, tmp_path: Path) -> None:
    (tmp_path / "args.yaml").write_text("per_device_train_batch_size: 4\nbf16: true\noutput_dir: out\n")
    (tmp_path / "ds.json").write_text('{"zero_optimization": {"stage": 2}, "train_micro_batch_size_per_gpu": 4}\n')
    (tmp_path / "acc.yaml").write_text(
        "distributed_type: DEEPSPEED\nnum_processes: 2\ndeepspeed_config:\n  deepspeed_config_file: ds.json\n"
    )
    r = cli("diff", str(tmp_path / "args.yaml"), str(tmp_path / "acc.yaml"))
    assert r.code == 1 and "Traceback" not in r.err, r.err
    stage = [line for line in r.out.splitlines() if "zero_optimization.stage" in line]
    assert stage and stage[0].rstrip().endswith(f"2 ({tmp_path / 'acc.yaml'})"), r.out
