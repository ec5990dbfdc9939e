"""Every field of the environment findings whose wording and place the other check tests leave open:
a package missing from this interpreter while the flags describe the target, bf16 enabled in a
DeepSpeed JSON (given or referenced, under either section name), "here" against "on the target", and
the FSDP torch minimums of a release."""

from __future__ import annotations

import sys
from pathlib import Path

from accelconf import releases
from accelconf.environment.checks import check_environment, fsdp1_torch_min, fsdp2_torch_min
from accelconf.environment.probe import Environment
from accelconf.environment.targets import target_from_args
from accelconf.findings import Finding
from accelconf.text.document import load_file, load_text

HERE = Environment(
    accelerate_version="1.15.0", source="detected (GPU probe off)", unknown=frozenset({"gpus", "gpu_count"})
)
DS = "distributed_type: DEEPSPEED\nnum_processes: 8\ndeepspeed_config:\n  zero_stage: 2\nmixed_precision: bf16\n"


def _by_rule(text: str, env: Environment, name: str = "c.yaml") -> dict[str, Finding]:
    return {f.rule: f for f in check_environment(load_text(text, name), env)}


def test_a_package_missing_here_is_info_at_the_distributed_type_key_naming_python_and_the_flag() -> None:
    got = _by_rule(DS, target_from_args(8, "H100", base=HERE))["env-torch-missing"]
    assert got == Finding(
        "env-torch-missing",
        "info",
        f"torch is not installed among the packages of {sys.executable} (this machine's, not those of the target"
        " the flags describe); accelerate needs it: check the interpreter that will train with --python PATH,"
        " or state --torch-version V",
        "distributed_type",
        1,
        1,
        "--python /path/to/the/training/venv/bin/python or --torch-version V",
        1,
        17,  # the key, not its value
    )
    # no flag states the fp8 backends: the message and the suggestion name --python alone
    fp8 = _by_rule(
        "distributed_type: MULTI_GPU\nnum_processes: 8\nmixed_precision: fp8\n", target_from_args(8, "H100", base=HERE)
    )
    backend = fp8["env-fp8-backend"]
    assert backend.severity == "info" and backend.message.endswith(
        "check the interpreter that will train with --python PATH"
    )
    assert backend.suggestion == "--python /path/to/the/training/venv/bin/python"


def test_a_version_read_here_says_here_and_one_stated_on_the_command_line_says_on_the_target() -> None:
    fsdp2 = "distributed_type: FSDP\nnum_processes: 8\nfsdp_config:\n  fsdp_version: 2\n"
    old = Environment(accelerate_version="1.15.0", torch_version="2.0.1", source="detected (GPU probe off)")
    read_here = _by_rule(fsdp2, target_from_args(8, "H100", base=old))["env-fsdp2-torch"].message
    stated = _by_rule(fsdp2, target_from_args(8, "H100", torch_version="2.0.1", base=old))["env-fsdp2-torch"].message
    assert "torch is 2.0.1 here:" in read_here and "torch is 2.0.1 on the target:" in stated


def test_bf16_enabled_in_a_deepspeed_json_is_found_under_either_name_at_its_enabled_key() -> None:
    v100 = target_from_args(8, "V100")
    new = _by_rule('{"train_batch_size": 8, "bf16": {"enabled": true}}', v100, "ds.json")["env-bf16"]
    assert (new.key, new.line, new.column, new.path) == ("bf16.enabled", 1, 45, "")  # at `true`
    assert new.suggestion == '"bf16": {"enabled": false}, "fp16": {"enabled": true}'
    assert new.message.startswith("bf16 is enabled in the DeepSpeed config, but it needs compute capability 8.0")
    old = _by_rule('{"train_batch_size": 8,\n "bfloat16": {"enabled": true}}', v100, "ds.json")["env-bf16"]
    assert (old.key, old.line, old.column) == ("bfloat16.enabled", 2, 26)


def test_bf16_in_the_referenced_deepspeed_file_names_that_file(tmp_path: Path) -> None:
    ds = tmp_path / "ds.conf"  # not named .json: it is read as JSON all the same (comments included)
    ds.write_text('{\n  // DeepSpeed allows comments\n  "bf16": {"enabled": true}\n}\n', encoding="utf-8")
    cfg = tmp_path / "c.yaml"
    cfg.write_text(
        "distributed_type: DEEPSPEED\nnum_processes: 8\ndeepspeed_config:\n  deepspeed_config_file: ds.conf\n"
    )
    (got,) = [f for f in check_environment(load_file(str(cfg)), target_from_args(8, "V100")) if f.rule == "env-bf16"]
    assert (got.path, got.key, got.line, got.column) == (str(ds), "bf16.enabled", 3, 23)  # at its value


def test_fsdp_torch_minimums_fall_back_to_the_newest_release() -> None:
    newest = releases.minimum("fsdp2-torch", None)
    assert newest and fsdp2_torch_min(None) == newest
    assert releases.minimum("fsdp2-torch", "0.20") is None and fsdp2_torch_min("0.20") == newest
    assert fsdp1_torch_min("0.20") == releases.minimum("fsdp1-torch", "0.20") != ""


def test_a_reading_reads_values_at_its_release_and_is_not_validated_by_default() -> None:
    from accelconf.environment.checks import reading, rule_num_processes

    doc = load_text("distributed_type: MULTI_NPU\n", "c.yaml")
    assert reading(doc).read("distributed_type") == "MULTI_NPU"
    assert reading(doc, "0.20").read("distributed_type") is None  # 0.20 has no MULTI_NPU: refused, reads unset
    uneven = load_text("distributed_type: MULTI_GPU\nnum_processes: 3\nnum_machines: 2\n", "c.yaml")
    assert reading(uneven).validated is False
    assert [f.rule for f in rule_num_processes(reading(uneven), Environment())] == ["env-num-processes"]
    assert list(rule_num_processes(reading(uneven, validated=True), Environment())) == []  # validate says it


def test_a_failed_probe_and_no_gpu_name_where_they_were_looked_for() -> None:
    fsdp = "distributed_type: FSDP\nnum_processes: 2\n"
    probe = _by_rule(fsdp, Environment(problems=("nvidia-smi failed",)))["env-probe"]
    assert probe == Finding(
        "env-probe", "warning", "environment probe: nvidia-smi failed", "distributed_type", 1, 1, None, 1, 17
    )  # at the key: the probe is about the whole run
    suggestion = "to check against the machine that will run it: --gpus N --gpu MODEL, or --target FILE"
    here = _by_rule(fsdp, Environment(source="detected"))["env-no-gpu"]
    assert here == Finding(
        "env-no-gpu",
        "warning",
        "distributed_type FSDP runs on GPUs, but there are none on this machine",
        "distributed_type",
        1,
        19,
        suggestion,
        1,
        23,
    )
    target = _by_rule(fsdp, target_from_args(0, "H100"))["env-no-gpu"]
    assert target.message == "distributed_type FSDP runs on GPUs, but there are none on the target (arguments)"
    assert "env-no-gpu" not in _by_rule(fsdp, Environment(source="detected", unknown=frozenset({"gpus"})))


def test_gpu_ids_beyond_the_node_name_the_missing_ids_the_range_and_the_ids_that_fit() -> None:
    import dataclasses

    def gpu_ids(text: str, env: Environment) -> list[tuple[str, str | None]]:
        base = "distributed_type: MULTI_GPU\nnum_processes: 1\n"
        return [
            (f.message, f.suggestion)
            for f in check_environment(load_text(base + text, "c.yaml"), env)
            if f.rule == "env-gpu-ids"
        ]

    one, two, four = (target_from_args(n, "H100") for n in (1, 2, 4))
    assert gpu_ids("gpu_ids: 0,1\n", one) == [("gpu_ids lists GPU 1, but the node has 1 GPU (ids 0)", "gpu_ids: 0")]
    assert gpu_ids('gpu_ids: "5"\n', two) == [
        ("gpu_ids lists GPU 5, but the node has 2 GPUs (ids 0-1)", "gpu_ids: all")
    ]
    assert gpu_ids("gpu_ids: 2,5,7\n", four) == [
        ("gpu_ids lists GPU 5, 7, but the node has 4 GPUs (ids 0-3)", "gpu_ids: 2")
    ]
    assert gpu_ids("gpu_ids: 0,1\nuse_cpu: true\n", one) == []  # on the CPU: gpu_ids are not used
    assert gpu_ids("gpu_ids: 0,1\n", dataclasses.replace(one, unknown=frozenset({"gpu_count"}))) == []
