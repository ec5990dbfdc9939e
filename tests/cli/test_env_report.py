"""What ``accelconf env`` prints, word for word, for environments built by hand (a probe's results
vary by machine): versions and builds, the driver, each GPU with its model, capability, memory and
precisions, the default config, problems and notes, and the JSON form."""

from __future__ import annotations

import json

from accelconf.commands import env as env_command
from accelconf.environment.probe import GPU, Environment


def test_a_gpu_machine_in_full() -> None:
    env = Environment(
        python_version="3.11.9",
        platform="Linux-x86_64",
        torch_version="2.7.1+cu126",
        accelerate_version="1.15.0",
        deepspeed_version=None,
        transformers_version="4.57.1",
        fp8_backends=("transformer-engine", "torchao"),
        gpus=(
            GPU(0, "NVIDIA H100 80GB HBM3", "H100-80GB", (9, 0), 79.6, True, True),
            GPU(1, "NVIDIA A100-SXM4-40GB", "A100-SXM4-40GB", (8, 0), 40.0, True, False),
        ),
        cuda_version="12.6",
        driver_version="560.35.03",
        driver_cuda_version="12.6",
        default_config="/home/u/.cache/huggingface/accelerate/default_config.yaml",
        source="detected (nvml)",
        problems=("nvidia-smi timed out",),
        notes=("a note",),
    )
    assert env_command.format_text(env, 0.0123) == (
        "accelconf env: detected (nvml), 12 ms\n"
        "  python          3.11.9 (Linux-x86_64)\n"
        "  torch           2.7.1+cu126 (CUDA 12.6)\n"
        "  accelerate      1.15.0\n"
        "  deepspeed       not installed\n"
        "  transformers    4.57.1\n"
        "  fp8 backends    transformer-engine, torchao\n"
        "  driver          560.35.03 (CUDA 12.6)\n"
        "  GPUs            2\n"
        "    0             NVIDIA H100 80GB HBM3 [H100-80GB] (CC 9.0, 79.6 GiB, bf16, fp8)\n"
        "    1             NVIDIA A100-SXM4-40GB [A100-SXM4-40GB] (CC 8.0, 40 GiB, bf16)\n"
        "  default config  /home/u/.cache/huggingface/accelerate/default_config.yaml\n"
        "  problem         nvidia-smi timed out\n"
        "  note            a note\n"
    )
    assert env_command.format_text(env, 2.0).startswith("accelconf env: detected (nvml), 2000 ms\n")


def test_a_cpu_machine_and_a_target_described_by_flags() -> None:
    cpu = Environment(python_version="3.12.1", platform="Darwin-arm64", torch_version="2.13.0", source="arguments")
    assert env_command.format_text(cpu) == (
        "accelconf env: arguments\n"
        "  python        3.12.1 (Darwin-arm64)\n"
        "  torch         2.13.0 (CPU-only build)\n"
        "  accelerate    not installed\n"
        "  deepspeed     not installed\n"
        "  transformers  not installed\n"
        "  fp8 backends  none\n"
        "  GPUs          none found\n"
    )
    unprobed = Environment(unknown=frozenset({"gpus"}), source="arguments")
    assert "  GPUs          not probed\n" in env_command.format_text(unprobed)
    assert "  torch         not installed\n" in env_command.format_text(unprobed)  # no build without torch


def test_rocm_builds_unknown_models_and_a_driver_without_cuda() -> None:
    env = Environment(
        torch_version="2.5.1+rocm6.2",
        rocm_version="6.2",
        deepspeed_version="0.17.2",
        driver_version="6.8.5",
        gpus=(
            GPU(0, "AMD Instinct MI300X", "MI300X", None, 192.0, True, True, "amd", "gfx942"),
            GPU(1, "Mystery", None),
        ),
        source="target lab.yaml",
    )
    text = env_command.format_text(env)
    assert "  torch         2.5.1+rocm6.2 (ROCm 6.2)\n" in text
    assert "  driver        6.8.5\n" in text and "  deepspeed     0.17.2\n" in text
    assert "    0           AMD Instinct MI300X [MI300X] (gfx942, 192 GiB, bf16, fp8)\n" in text
    assert "    1           Mystery (unknown arch)\n" in text  # nothing known, no model shown twice
    assert "default config" not in text  # only a probe of this machine has one
    same = Environment(gpus=(GPU(0, "H100-80GB", "H100-80GB", (9, 0)),), source="arguments")
    assert "    0           H100-80GB (CC 9.0)\n" in env_command.format_text(same)


def test_a_probe_without_a_default_config_names_where_it_would_be(monkeypatch) -> None:
    from accelconf.environment import probe

    monkeypatch.setattr(probe, "default_config_file", lambda: "/cfg/default_config.yaml")
    text = env_command.format_text(Environment(source="detected (none)"))
    assert "  default config  /cfg/default_config.yaml (not there)\n" in text


def test_the_command_prints_the_probe_as_text_or_json(cli, monkeypatch) -> None:
    from accelconf.environment import probe

    env = Environment(python_version="3.11.9", torch_version="2.7.1+cu126", cuda_version="12.6", source="detected (x)")
    asked = []
    monkeypatch.setattr(probe, "timed_probe", lambda mode, timeout: asked.append((mode, timeout)) or (env, 0.12345))
    r = cli("env")
    assert (r.code, r.out) == (0, env_command.format_text(env, 0.12345)) and asked == [("auto", 2.0)]
    r = cli("env", "--format", "json", "--probe", "none", "--timeout", "5")
    assert r.code == 0 and asked[-1] == ("none", 5.0)
    assert r.out == json.dumps({**env.to_json(), "probe_ms": 123.5}, indent=2) + "\n"
