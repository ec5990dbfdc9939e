"""DeepSpeed JSON wired into the commands: validate opens the referenced file, convert maps a
DeepSpeed JSON to the accelerate deepspeed_config section."""

from __future__ import annotations

import json


def test_validate_opens_the_referenced_deepspeed_json(cli, tmp_path):
    (tmp_path / "ds.json").write_text(
        json.dumps(
            {
                "train_batch_size": 30,
                "train_micro_batch_size_per_gpu": 4,
                "fp16": {"enabled": True},
                "zero_optimization": {"stage": 3, "overlap_comms": True},
            },
            indent=2,
        )
    )
    cfg = tmp_path / "acc.yaml"
    cfg.write_text(
        "distributed_type: DEEPSPEED\nnum_processes: 4\nmixed_precision: bf16\n"
        "deepspeed_config:\n  deepspeed_config_file: ds.json\n  zero_stage: 2\n"
    )
    r = cli("validate", "--format", "json", str(cfg))
    assert r.code == 1
    findings = json.loads(r.out)["files"][0]["findings"]
    rules = {(f["rule"], f.get("file", "").endswith("ds.json")) for f in findings}
    assert ("deepspeed-config-file-conflict", False) in rules  # zero_stage and mixed_precision in the YAML
    assert ("ds-accelerate-conflict", False) in rules  # bf16 in the YAML vs fp16 in the JSON
    assert ("ds-batch", True) in rules and ("ds-unknown-key", True) in rules  # the JSON itself, world size 4
    # each conflict is reported once
    keys = [(f["line"], f["column"]) for f in findings if "deepspeed_config_file" in f["message"]]
    assert len(keys) == len(set(keys))


def test_validate_recognizes_deepspeed_json_by_content(cli, tmp_path):
    f = tmp_path / "anything.json"
    f.write_text('{"train_micro_batch_size_per_gpu": 2, "zero_optimization": {"stage": 4}}')
    r = cli("validate", str(f))
    assert r.code == 1 and "[ds-zero-stage]" in r.out


def test_deepspeed_template_is_a_clean_parse_error(cli, tmp_path):
    f = tmp_path / "ds_config_TEMPLATE.json"
    f.write_text('{\n  "train_batch_size": BATCH_SIZE\n}\n')
    r = cli("validate", str(f))
    assert r.code == 2 and f"{f}:2:23: error: invalid JSON" in r.out


def test_convert_deepspeed_json_to_accelerate_yaml(cli, tmp_path):
    f = tmp_path / "ds_config.json"
    f.write_text(
        json.dumps(
            {
                "gradient_accumulation_steps": 4,
                "gradient_clipping": 1.0,
                "bf16": {"enabled": True},
                "zero_optimization": {
                    "stage": 3,
                    "offload_param": {"device": "cpu", "pin_memory": True},
                    "overlap_comm": True,
                },
            }
        )
    )
    r = cli("convert", str(f), "--to", "yaml")
    assert r.code == 0
    assert "distributed_type: DEEPSPEED" in r.out and "mixed_precision: bf16" in r.out
    assert (
        "zero_stage: 3" in r.out and "offload_param_device: cpu" in r.out and "gradient_accumulation_steps: 4" in r.out
    )
    assert "overlap_comm" in r.err and "pin_memory" in r.err  # what does not map is reported
