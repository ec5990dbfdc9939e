"""``to-cli``: the flags written for a config, and a finding (with the key's position) for every
setting that no flag carries on that launch path."""

from __future__ import annotations

from accelconf import formats
from accelconf.formats.cli import flags_for


def flags(text: str, version: str = "1.15"):
    fl, findings = flags_for(formats.read(text, "yaml"), version)
    return fl, [(f.rule, f.severity, f.key, f.line, f.column) for f in findings], [f.message for f in findings]


def test_a_multi_device_type_is_written_as_multi_gpu_with_a_warning():
    fl, found, msgs = flags("distributed_type: MULTI_NPU\nnum_processes: 2\nuse_cpu: true\nmixed_precision: bf16\n")
    assert fl == ["--multi_gpu", "--num_processes", "2", "--mixed_precision", "bf16"]
    assert found == [
        ("convert.lossy", "warning", "distributed_type", 1, 1),
        ("convert.lossy", "warning", "use_cpu", 3, 1),
    ]
    assert msgs[0].startswith(
        "`distributed_type: MULTI_NPU` cannot be given as a flag: --multi_gpu leaves the device type"
    )
    # use_cpu under torchrun still sets OMP_NUM_THREADS from the machine's cores (the release matrix launches both)
    assert msgs[1].startswith("use_cpu is not written as --cpu on the torchrun path") and "OMP_NUM_THREADS" in msgs[1]


def test_multi_gpu_itself_needs_no_warning():
    fl, found, _ = flags("distributed_type: MULTI_GPU\nnum_processes: 2\n")
    assert fl == ["--multi_gpu", "--num_processes", "2"] and found == []


def test_the_simple_launcher_takes_cpu_and_dynamo_but_not_fsdp():
    fl, found, msgs = flags(
        "distributed_type: 'NO'\nnum_processes: 1\nuse_cpu: true\ndynamo_config:\n"
        "  dynamo_backend: INDUCTOR\nfsdp_config:\n  fsdp_version: 2\n"
    )
    assert fl == ["--cpu", "--num_processes", "1", "--dynamo_backend", "inductor"]
    assert found == [("convert.lossy", "info", "fsdp_config.fsdp_version", 7, 3)]
    assert msgs == ["`fsdp_config.fsdp_version` is not used on this launch path; not written"]


FSDP_FP8 = (
    "distributed_type: FSDP\nnum_processes: 4\nnum_machines: 2\nmain_process_ip: 10.0.0.1\nmain_process_port: 29500\n"
    "mixed_precision: fp8\nfp8_config:\n  fp8_backend: TE\nfsdp_config:\n  fsdp_version: 2\n"
    "  fsdp_offload_params: true\nmegatron_lm_config:\n  megatron_lm_tp_degree: 2\n"
)


def test_fsdp_multinode_fp8_flags():
    """From 1.9 the lowercase --fp8_backend makes Accelerator() raise (FP8BackendType): not written, with the reason."""
    fl, found, msgs = flags(FSDP_FP8)
    assert fl == [
        "--use_fsdp",
        "--num_processes",
        "4",
        "--machine_rank",
        "0",
        "--num_machines",
        "2",
        "--main_process_ip",
        "10.0.0.1",
        "--main_process_port",
        "29500",
        "--mixed_precision",
        "fp8",
        "--fsdp_version",
        "2",
        "--fsdp_offload_params",
        "True",
    ]
    assert found[:2] == [
        ("convert.lossy", "warning", "fp8_config.backend", 8, 3),
        ("convert.lossy", "info", "megatron_lm_config.megatron_lm_tp_degree", 13, 3),
    ]
    assert msgs[0].startswith(
        "`fp8_config.backend: TE` cannot be given as --fp8_backend: the flag takes only lowercase, "
        "which Accelerator() rejects in accelerate 1.15"
    )
    assert msgs[1] == "`megatron_lm_config.megatron_lm_tp_degree` is not used on this launch path; not written"


def test_fp8_backend_flag_before_1_9_is_written_lowercase():
    """1.4-1.8 take the flag (choices te/msamp) and their Accelerator() does not parse the variable."""
    fl, found, msgs = flags(FSDP_FP8, "1.8")
    assert fl[fl.index("--fp8_backend") :][:2] == ["--fp8_backend", "te"]
    assert ("convert.lossy", "warning", "fp8_config.backend", 0, 0) in found
    assert any(
        m.startswith("ACCELERATE_FP8_BACKEND differs without the config file: 'TE' from the file, 'te'") for m in msgs
    )


def test_parallelism_without_fsdp_is_dropped_with_warnings():
    fl, found, msgs = flags(
        "distributed_type: MULTI_GPU\nnum_processes: 4\nparallelism_config:\n  parallelism_config_tp_size: 2\n"
    )
    assert fl == ["--multi_gpu", "--num_processes", "4"]
    assert found[:2] == [
        ("convert.lossy", "warning", "parallelism_config", 0, 0),
        ("convert.lossy", "warning", "parallelism_config.parallelism_config_tp_size", 4, 3),
    ]
    assert msgs[0].startswith(
        "parallelism_config without FSDP cannot be given as flags (--use_parallelism_config requires --use_fsdp)"
    )
    assert "no flag can carry it; dropped" in msgs[1]
