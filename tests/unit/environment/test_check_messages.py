"""What each environment finding says, word for word, and what it suggests: the counts in the text
(singular and plural), where the facts come from ("here", "on the target"), and the suggested value,
for every branch of the GPU-count, GPU-id, no-GPU, probe and bf16 rules. Each suggestion is one a
user can paste; the message is what they read in the terminal, the editor and the JSON report."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from accelconf import releases
from accelconf.environment.checks import check_environment, fsdp2_torch_min
from accelconf.environment.probe import Environment
from accelconf.environment.targets import target_from_args
from accelconf.text.document import load_file, load_text

MULTI = "distributed_type: MULTI_GPU\nnum_processes: {n}\nnum_machines: {m}\n"
NODES = "machine_rank: 0\nmain_process_ip: 10.0.0.1\nmain_process_port: 29500\n"


def _env(gpus: int, source: str | None = None, gpu: str = "H100-80GB") -> Environment:
    env = target_from_args(gpus=gpus, gpu=gpu, accelerate_version="1.15", torch_version="2.7.1+cu126")
    return dataclasses.replace(env, source=source) if source else env


def _said(text: str, env: Environment, rule: str, path: str = "train.yaml") -> list[tuple]:
    doc = load_text(text, path)
    return [(f.severity, f.message, f.suggestion, f.key, f.line) for f in check_environment(doc, env) if f.rule == rule]


def _columns(text: str, env: Environment, rule: str) -> tuple[int, int]:
    """Where on its line the one finding of ``rule`` starts and ends (1-based, end exclusive)."""
    [found] = [f for f in check_environment(load_text(text, "c.yaml"), env) if f.rule == rule]
    return found.column, found.end_column


def _config(n: int, machines: int = 1, gpu_ids: str | None = None) -> str:
    text = MULTI.format(n=n, m=machines) + (NODES if machines > 1 else "")
    return text + (f"gpu_ids: '{gpu_ids}'\n" if gpu_ids is not None else "")


@pytest.mark.parametrize(
    "n, machines, gpu_ids, gpus, source, expected",
    [
        # more processes per node than GPUs: the node's count, singular and plural
        (
            2,
            1,
            None,
            1,
            None,
            (
                "error",
                "num_processes 2 means 2 processes per node, but the node has 1 GPU on the target",
                "num_processes: 1",
            ),
        ),
        (
            9,
            1,
            None,
            8,
            None,
            (
                "error",
                "num_processes 9 means 9 processes per node, but the node has 8 GPUs on the target",
                "num_processes: 8",
            ),
        ),
        # the total over several machines is said to be one, and the suggestion is the total again
        (
            18,
            2,
            None,
            8,
            None,
            (
                "error",
                "num_processes 18 means 9 processes per node (num_processes is the total over 2 machines), "
                "but the node has 8 GPUs on the target",
                "num_processes: 16",
            ),
        ),
        # gpu_ids narrows the node: what it leaves, singular and plural
        (
            2,
            1,
            "0",
            4,
            None,
            (
                "error",
                "num_processes 2 means 2 processes per node, "
                "but gpu_ids leaves 1 usable GPU of the node's 4 on the target",
                "num_processes: 1",
            ),
        ),
        (
            3,
            1,
            "0,1",
            4,
            None,
            (
                "error",
                "num_processes 3 means 3 processes per node, "
                "but gpu_ids leaves 2 usable GPUs of the node's 4 on the target",
                "num_processes: 2",
            ),
        ),
        # fewer: GPUs left idle, one process and several; facts probed on this machine are "here"
        (1, 1, None, 8, None, ("warning", "1 process per node uses 1 of the 8 GPUs on the target", "num_processes: 8")),
        (7, 1, None, 8, "detected", ("warning", "7 processes per node use 7 of the 8 GPUs here", "num_processes: 8")),
        (
            14,
            2,
            None,
            8,
            None,
            ("warning", "7 processes per node use 7 of the 8 GPUs on the target", "num_processes: 16"),
        ),
        # probed, but the GPUs were overridden by flags: not "here"
        (
            7,
            1,
            None,
            8,
            "detected, with arguments",
            ("warning", "7 processes per node use 7 of the 8 GPUs on the target", "num_processes: 8"),
        ),
    ],
)
def test_processes_per_node_against_the_gpus(n, machines, gpu_ids, gpus, source, expected) -> None:
    assert _said(_config(n, machines, gpu_ids), _env(gpus, source), "env-num-processes") == [
        (*expected, "num_processes", 2)
    ]


def test_a_total_not_a_multiple_of_the_machines_says_what_the_launcher_starts() -> None:
    said = _said(_config(10, 4), _env(8), "env-num-processes")
    assert said[0] == (
        "warning",
        "num_processes 10 is the total over num_machines 4 and is not a multiple of it: each machine starts 2 "
        "(the launcher rounds down), 8 in all",
        "num_processes: 8",
        "num_processes",
        2,
    )
    # fewer processes than machines: one per machine is the smallest layout that starts
    said = _said(_config(3, 4), _env(8), "env-num-processes")
    assert said == [
        (
            "warning",
            "num_processes 3 is the total over num_machines 4 and is not a multiple of it: each machine starts 0 "
            "(the launcher rounds down), 0 in all",
            "num_processes: 4",
            "num_processes",
            2,
        )
    ]  # and no "0 processes per node use 0 of the 8 GPUs": that layout does not start at all


@pytest.mark.parametrize("n", [1, 2, 8, 16])
def test_no_distributed_type_starts_one_process_whatever_num_processes_says(n: int) -> None:
    """With a config file, `accelerate launch` takes its simple launcher for 'NO' (it reads
    multi_gpu from the distributed type), so num_processes above the GPUs is no error, and the
    count alone leaves the other GPUs idle: the suggestion names the distributed type too."""
    text = f"distributed_type: 'NO'\nnum_processes: {n}\n"
    assert _said(text, _env(1), "env-num-processes") == []
    assert _said(text, _env(8), "env-num-processes") == [
        (
            "warning",
            "`distributed_type: 'NO'` starts one process, which uses 1 of the 8 GPUs on the target",
            "distributed_type: MULTI_GPU and num_processes: 8",
            "distributed_type",
            1,
        )
    ]
    assert _said(text, _env(2, "detected"), "env-num-processes")[0][1].endswith("1 of the 2 GPUs here")
    # gpu_ids picks the GPUs the one process sees: nothing to say about the rest
    assert _said(text + "gpu_ids: '0'\n", _env(8), "env-num-processes") == []
    # on the CPU, no GPU is idle
    assert _said(text + "use_cpu: true\n", _env(8), "env-num-processes") == []


def test_no_distributed_type_on_a_node_with_no_gpu_count_says_nothing() -> None:
    text = "distributed_type: 'NO'\nnum_processes: 1\n"
    assert _said(text, _env(0), "env-num-processes") == []
    unknown = dataclasses.replace(_env(8), gpus=())
    assert _said(text, unknown, "env-num-processes") == []


@pytest.mark.parametrize(
    "gpu_ids, gpus, message, suggestion",
    [
        ("4", 1, "gpu_ids lists GPU 4, but the node has 1 GPU (ids 0)", "gpu_ids: all"),
        ("0,2,5", 2, "gpu_ids lists GPU 2, 5, but the node has 2 GPUs (ids 0-1)", "gpu_ids: 0"),
        ("0,1,8", 8, "gpu_ids lists GPU 8, but the node has 8 GPUs (ids 0-7)", "gpu_ids: 0,1"),
        ("5,6", 4, "gpu_ids lists GPU 5, 6, but the node has 4 GPUs (ids 0-3)", "gpu_ids: all"),
    ],
)
def test_gpu_ids_the_node_lacks(gpu_ids: str, gpus: int, message: str, suggestion: str) -> None:
    n = len(gpu_ids.split(","))
    assert _said(_config(n, gpu_ids=gpu_ids), _env(gpus), "env-gpu-ids") == [
        ("error", message, suggestion, "gpu_ids", 4)
    ]


@pytest.mark.parametrize("gpu_ids", ["all", "ALL", " All ", ""])
def test_gpu_ids_all_or_empty_is_every_gpu(gpu_ids: str) -> None:
    assert _said(_config(2, gpu_ids=gpu_ids), _env(1), "env-gpu-ids") == []
    # and the processes are judged against the whole node
    assert _said(_config(2, gpu_ids=gpu_ids), _env(1), "env-num-processes")[0][1].endswith(
        "the node has 1 GPU on the target"
    )


@pytest.mark.parametrize(
    "source, where",
    [
        ("detected", "on this machine"),
        ("arguments", "on the target (arguments)"),
        ("detected, with arguments", "on the target (detected, with arguments)"),
        ("profile h100.json", "on the target (profile h100.json)"),
    ],
)
def test_no_gpu_says_where_there_are_none(source: str, where: str) -> None:
    assert _said(_config(2), _env(0, source), "env-no-gpu") == [
        (
            "warning",
            f"distributed_type MULTI_GPU runs on GPUs, but there are none {where}",
            "to check against the machine that will run it: --gpus N --gpu MODEL, or --target FILE",
            "distributed_type",
            1,
        )
    ]


def test_no_gpu_is_not_said_when_nothing_is_known_of_the_gpus_or_the_run_needs_none() -> None:
    assert _said(_config(2), Environment(source="arguments", unknown=frozenset({"gpus"})), "env-no-gpu") == []
    assert _said("distributed_type: MULTI_CPU\nnum_processes: 2\n", _env(0), "env-no-gpu") == []
    assert _said(_config(2) + "use_cpu: true\n", _env(0), "env-no-gpu") == []


def test_a_failed_probe_is_reported_at_distributed_type() -> None:
    env = dataclasses.replace(_env(8), problems=("nvidia-smi timed out",))
    assert _said("num_processes: 8\ndistributed_type: MULTI_GPU\n", env, "env-probe") == [
        ("warning", "environment probe: nvidia-smi timed out", None, "distributed_type", 2)
    ]


def test_bf16_in_a_deepspeed_file_under_its_old_name_is_found_at_its_line(tmp_path: Path) -> None:
    text = '{\n  "train_batch_size": 8,\n  "bfloat16": {\n    "enabled": true\n  }\n}\n'
    said = _said(text, _env(8, gpu="V100-32GB"), "env-bf16", path="ds.json")
    assert [(s[0], s[3], s[4]) for s in said] == [("warning", "bfloat16.enabled", 4)]
    assert said[0][1].startswith("bf16 is enabled in the DeepSpeed config, but it needs compute capability 8.0")


@pytest.mark.parametrize("name", ["ds.json", "ds_config.yaml"])
def test_a_referenced_deepspeed_file_is_read_as_json_only(tmp_path: Path, name: str) -> None:
    """accelerate json-loads the file whatever its name: one written in YAML enables nothing (validate
    reports it)."""
    config = f"distributed_type: DEEPSPEED\nnum_processes: 8\ndeepspeed_config:\n  deepspeed_config_file: {name}\n"
    (tmp_path / "train.yaml").write_text(config)
    (tmp_path / name).write_text("bf16:\n  enabled: true\n")
    env = _env(8, gpu="V100-32GB")
    assert [f.rule for f in check_environment(load_file(tmp_path / "train.yaml"), env) if f.rule == "env-bf16"] == []
    (tmp_path / name).write_text(json.dumps({"bf16": {"enabled": True}}))
    [found] = [f for f in check_environment(load_file(tmp_path / "train.yaml"), env) if f.rule == "env-bf16"]
    assert (found.key, found.path) == ("bf16.enabled", str(tmp_path / name))


def test_bf16_names_the_gpu_model_not_the_name_the_driver_prints() -> None:
    env = _env(8, gpu="V100-32GB")
    probed = dataclasses.replace(env.gpus[0], name="Tesla V100-SXM2-32GB")
    env = dataclasses.replace(env, gpus=(probed,) * 8)
    text = '{\n  "bf16": {\n    "enabled": true\n  }\n}\n'
    assert _said(text, env, "env-bf16", path="ds.json") == [
        (
            "warning",
            "bf16 is enabled in the DeepSpeed config, but it needs compute capability 8.0 or higher; V100-32GB has "
            "7.0: bf16 runs emulated (slow) or fails in a kernel",
            '"bf16": {"enabled": false}, "fp16": {"enabled": true}',
            "bf16.enabled",
            3,
        )
    ]


@pytest.mark.parametrize(
    "machines, said",
    [
        (1, ("num_machines is 2, but the target has 1 machine", "num_machines: 1")),
        (2, None),
        (3, ("num_machines is 2, but the target has 3 machines", "num_machines: 3")),
    ],
)
def test_num_machines_against_the_target(machines: int, said: tuple[str, str] | None) -> None:
    env = target_from_args(
        gpus=8, gpu="H100-80GB", num_machines=machines, accelerate_version="1.15", torch_version="2.7.1+cu126"
    )
    found = _said(_config(16, 2), env, "env-num-machines")
    assert found == ([("warning", *said, "num_machines", 3)] if said else [])


def test_a_release_without_fsdp2_is_held_to_the_newest_fsdp2_requirement() -> None:
    assert releases.minimum("fsdp2-torch", "1.0.0") is None  # FSDP2 came later
    assert fsdp2_torch_min("1.0.0") == releases.minimum("fsdp2-torch", None) == fsdp2_torch_min(None) != ""


@pytest.mark.parametrize(
    "distributed_type, said",
    [
        # accelerate skips its own bf16 check under these: the engine runs it unsupported
        (
            "DEEPSPEED",
            (
                "warning",
                "mixed_precision bf16 needs compute capability 8.0 or higher; V100-32GB has 7.0. accelerate does not "
                "check this under DEEPSPEED: bf16 runs emulated (slow) or fails in a kernel",
            ),
        ),
        (
            "MEGATRON_LM",
            (
                "warning",
                "mixed_precision bf16 needs compute capability 8.0 or higher; V100-32GB has 7.0. accelerate does not "
                "check this under MEGATRON_LM: bf16 runs emulated (slow) or fails in a kernel",
            ),
        ),
        (
            "MULTI_GPU",
            (
                "error",
                "mixed_precision bf16 needs compute capability 8.0 or higher; V100-32GB has 7.0. Accelerator() raises "
                "'bf16 mixed precision requires PyTorch >= 1.10 and a supported device'",
            ),
        ),
    ],
)
def test_mixed_precision_bf16_on_a_gpu_without_it(distributed_type: str, said: tuple[str, str]) -> None:
    text = f"distributed_type: {distributed_type}\nmixed_precision: bf16\nnum_processes: 8\n"
    assert _said(text, _env(8, gpu="V100-32GB"), "env-bf16") == [(*said, "mixed_precision: fp16", "mixed_precision", 2)]


FP8 = "distributed_type: MULTI_GPU\nmixed_precision: fp8\nnum_processes: 8\n"


@pytest.mark.parametrize(
    "gpu, cc, suggestion",
    [("V100-32GB", "7.0", "mixed_precision: fp16"), ("A100-80GB", "8.0", "mixed_precision: bf16")],
)
def test_fp8_on_a_gpu_without_it_suggests_the_best_precision_the_gpu_has(gpu: str, cc: str, suggestion: str) -> None:
    assert _said(FP8, _env(8, gpu=gpu), "env-fp8-gpu") == [
        (
            "warning",
            f"mixed_precision fp8 needs compute capability 8.9 or higher (Ada, Hopper, Blackwell); {gpu} has {cc}: "
            "accelerate logs a warning and trains in fp16",
            suggestion,
            "mixed_precision",
            2,
        )
    ]
    assert _said(FP8, _env(8, gpu="H100-80GB"), "env-fp8-gpu") == []
    assert _said(FP8 + "use_cpu: true\n", _env(8, gpu=gpu), "env-fp8-gpu") == []  # the run uses no GPU
    # the table's model names the GPU; a probed GPU the table does not know is named as the driver names it
    env = _env(8, gpu=gpu)
    probed = dataclasses.replace(env, gpus=tuple(dataclasses.replace(g, name=f"NVIDIA {gpu} PCIe") for g in env.gpus))
    assert f"; {gpu} has {cc}:" in _said(FP8, probed, "env-fp8-gpu")[0][1]
    unknown = dataclasses.replace(env, gpus=tuple(dataclasses.replace(g, name="Tesla X", model=None) for g in env.gpus))
    assert "; Tesla X has " in _said(FP8, unknown, "env-fp8-gpu")[0][1]


def _with_backends(backends: tuple[str, ...], local: bool = False) -> Environment:
    env = _env(8, gpu="H100-80GB")
    return dataclasses.replace(
        env,
        fp8_backends=backends,
        unknown=env.unknown - {"fp8_backends"},
        local_packages=frozenset({"fp8_backends"}) if local else frozenset(),
    )


def test_fp8_with_no_backend_on_the_target_is_an_error() -> None:
    assert _said(FP8, _with_backends(()), "env-fp8-backend") == [
        (
            "error",
            "mixed_precision fp8 needs transformer-engine, torchao >= 0.6.1 or ms-amp installed on the target, "
            "and none is: Accelerator() raises ValueError",
            None,
            "mixed_precision",
            2,
        )
    ]
    # unknown backends: nothing said
    assert _said(FP8, _env(8, gpu="H100-80GB"), "env-fp8-backend") == []


def test_a_package_missing_from_this_interpreter_is_info_naming_how_to_check_the_target() -> None:
    import sys

    assert _said(FP8, _with_backends((), local=True), "env-fp8-backend") == [
        (
            "info",
            f"no fp8 backend (transformer-engine, torchao >= 0.6.1, ms-amp) is installed among the packages of "
            f"{sys.executable} (this machine's, not those of the target the flags describe); mixed_precision fp8 "
            "needs one: check the interpreter that will train with --python PATH",
            "--python /path/to/the/training/venv/bin/python",
            "distributed_type",
            1,
        )
    ]
    env = _env(8)
    env = dataclasses.replace(
        env, torch_version=None, unknown=env.unknown - {"torch_version"}, local_packages=frozenset({"torch_version"})
    )
    assert _said(FP8, env, "env-torch-missing") == [
        (
            "info",
            f"torch is not installed among the packages of {sys.executable} (this machine's, not those of the target "
            "the flags describe); accelerate needs it: check the interpreter that will train with --python PATH, "
            "or state --torch-version V",
            "--python /path/to/the/training/venv/bin/python or --torch-version V",
            "distributed_type",
            1,
        )
    ]


@pytest.mark.parametrize(
    "backend, installed, package",
    [
        ("TE", ("torchao",), "transformer-engine"),
        ("MSAMP", ("transformer-engine", "torchao"), "ms-amp"),
        ("AO", ("ms-amp",), "torchao"),
    ],
)
def test_the_fp8_backend_asked_for_must_be_installed(backend: str, installed: tuple[str, ...], package: str) -> None:
    text = FP8 + f"fp8_config:\n  backend: {backend}\n"
    assert _said(text, _with_backends(installed), "env-fp8-backend") == [
        (
            "error",
            f"fp8_config.backend {backend} needs {package}, which is not installed on the target "
            f"(fp8 backends installed: {', '.join(installed)})",
            None,
            "fp8_config.backend",
            5,
        )
    ]
    assert _said(text, _with_backends((package,)), "env-fp8-backend") == []
    assert _said(FP8, _with_backends(installed), "env-fp8-backend") == []  # no backend asked for: any will do


@pytest.mark.parametrize("source, where", [("arguments", "on the target"), ("detected", "here")])
def test_torch_missing_on_the_machine_judged(source: str, where: str) -> None:
    env = target_from_args(gpus=8, gpu="H100-80GB", accelerate_version="1.15", torch_version="none")
    env = dataclasses.replace(env, source=source)
    text = "num_processes: 8\ndistributed_type: MULTI_GPU\n"
    assert _said(text, env, "env-torch-missing") == [
        (
            "warning",
            f"torch is not installed {where}; accelerate needs it",
            "check against the machine that will run it: --target FILE or --torch-version V",
            "distributed_type",
            2,
        )
    ]
    assert _columns(text, env, "env-torch-missing") == (1, 17)  # at the key, not its value


@pytest.mark.parametrize("accelerate", ["1.15", None])
def test_fsdp2_on_a_torch_too_old_for_it(accelerate: str | None) -> None:
    env = target_from_args(gpus=8, gpu="H100-80GB", accelerate_version=accelerate, torch_version="2.4.0")
    text = "distributed_type: FSDP\nnum_processes: 8\nfsdp_config:\n  fsdp_version: 2\n"
    assert _said(text, env, "env-fsdp2-torch") == [
        (
            "error",
            "FSDP2 (fsdp_version: 2) needs torch >= 2.6.0; torch is 2.4.0 on the target: the FSDP plugin raises "
            "ImportError('FSDP2 requires PyTorch >= 2.6.0')",
            "upgrade torch to 2.6.0 or newer, or use FSDP1 (fsdp_version: 1)",
            "fsdp_config.fsdp_version",
            4,
        )
    ]
    # before accelerate 1.6 fsdp_version is not read: FSDP1 runs, and torch 2.4 is enough for it
    old = target_from_args(gpus=8, gpu="H100-80GB", accelerate_version="1.5", torch_version="2.4.0")
    assert _said(text, old, "env-fsdp2-torch") == []


@pytest.mark.parametrize("local, where", [(False, "on the target"), (True, "here")])
def test_fsdp1_on_a_torch_too_old_for_it_shows_the_release_not_the_prerelease_tag(local: bool, where: str) -> None:
    env = target_from_args(gpus=8, gpu="H100-80GB", accelerate_version="1.15", torch_version="1.13.0")
    if local:  # the flags give the GPUs, torch is read from this interpreter
        env = dataclasses.replace(env, local_packages=frozenset({"torch_version"}))
    text = "distributed_type: FSDP\nnum_processes: 8\nfsdp_config:\n  fsdp_version: 1\n"
    assert releases.minimum("fsdp1-torch", "1.15") == "2.1.0a0"
    assert _said(text, env, "env-fsdp-torch") == [
        (
            "error",
            f"FSDP needs torch >= 2.1.0; torch is 1.13.0 {where}",
            "upgrade torch to 2.1.0 or newer",
            "distributed_type",
            1,
        )
    ]


@pytest.mark.parametrize(
    "gpus, distributed_type, local, end",
    [
        (1, "MULTI_GPU", False, "the 1 GPU on the target"),
        (4, "NO", False, "the 4 GPUs on the target"),
        (4, "MULTI_GPU", True, "the 4 GPUs here"),
    ],
)
def test_a_cpu_only_torch_on_a_gpu_node(gpus: int, distributed_type: str, local: bool, end: str) -> None:
    env = target_from_args(gpus=gpus, gpu="H100-80GB", accelerate_version="1.15", torch_version="2.7.1+cpu")
    if local:
        env = dataclasses.replace(env, local_packages=frozenset({"torch_version"}))
    text = f"distributed_type: {distributed_type}\nnum_processes: 1\n"
    assert _said(text, env, "env-torch-cpu-only") == [
        (
            "warning",
            f"torch 2.7.1+cpu is a CPU-only build: it cannot use {end}",
            "install a CUDA or ROCm build of torch",
            "distributed_type",
            1,
        )
    ]
    assert _columns(text, env, "env-torch-cpu-only")[0] == 1  # at the key
    assert _said("distributed_type: MULTI_CPU\nnum_processes: 1\n", env, "env-torch-cpu-only") == []


def test_deepspeed_missing_from_this_interpreter() -> None:
    import sys

    env = target_from_args(
        gpus=8, gpu="H100-80GB", accelerate_version="1.15", torch_version="2.7.1+cu126", deepspeed_version="none"
    )
    env = dataclasses.replace(env, local_packages=frozenset({"deepspeed_version"}))
    assert _said("distributed_type: DEEPSPEED\nnum_processes: 8\n", env, "env-deepspeed-missing") == [
        (
            "info",
            f"deepspeed is not installed among the packages of {sys.executable} (this machine's, not those of the "
            "target the flags describe); distributed_type DEEPSPEED needs it: check the interpreter that will train "
            "with --python PATH, or state --deepspeed-version V",
            "--python /path/to/the/training/venv/bin/python or --deepspeed-version V",
            "distributed_type",
            1,
        )
    ]


def _ds_env(deepspeed: str, accelerate: str | None = "1.15", local: bool = False) -> Environment:
    env = target_from_args(
        gpus=8, gpu="H100-80GB", accelerate_version=accelerate, torch_version="2.7.1+cu126", deepspeed_version=deepspeed
    )
    return dataclasses.replace(env, local_packages=frozenset({"deepspeed_version"})) if local else env


DS = "distributed_type: DEEPSPEED\nnum_processes: 8\n"


def test_deepspeed_missing_on_the_target() -> None:
    assert _said(DS, _ds_env("none"), "env-deepspeed-missing") == [
        (
            "error",
            "distributed_type DEEPSPEED needs the deepspeed package, which is not installed on the target",
            "pip install deepspeed",
            "distributed_type",
            1,
        )
    ]


@pytest.mark.parametrize(
    "accelerate, local, said",
    [
        ("1.15", False, "accelerate needs deepspeed >= 0.9.3; deepspeed is 0.9.0 on the target"),
        ("1.15", True, "accelerate needs deepspeed >= 0.9.3; deepspeed is 0.9.0 here"),
        (None, False, "accelerate needs deepspeed >= 0.9.3; deepspeed is 0.9.0 on the target"),  # the newest's
        ("0.20.0", False, None),  # a release with no DeepSpeed minimum
    ],
)
def test_a_deepspeed_older_than_accelerate_needs(accelerate: str | None, local: bool, said: str | None) -> None:
    assert releases.minimum("deepspeed", "1.15") == "0.9.3" and releases.minimum("deepspeed", "0.20.0") is None
    assert _said(DS, _ds_env("0.9.0", accelerate, local), "env-deepspeed-version") == (
        [("error", said, None, "distributed_type", 1)] if said else []
    )


@pytest.mark.parametrize(
    "machines, accelerate, fires",
    [(2, "1.15", True), (1, "1.15", False), (2, "1.0.0", False)],  # 1.0 has no nossh minimum
)
def test_the_nossh_launcher_on_an_old_deepspeed(machines: int, accelerate: str, fires: bool) -> None:
    text = (
        f"distributed_type: DEEPSPEED\nnum_processes: 16\nnum_machines: {machines}\n"
        + (NODES if machines > 1 else "")
        + "deepspeed_config:\n  deepspeed_multinode_launcher: nossh\n"
    )
    line = text.splitlines().index("  deepspeed_multinode_launcher: nossh") + 1
    expected = (
        "error",
        "the nossh launcher needs deepspeed >= 0.14.5; deepspeed is 0.14.0 on the target (accelerate launch raises "
        "ValueError)",
        None,
        "deepspeed_config.deepspeed_multinode_launcher",
        line,
    )
    assert _said(text, _ds_env("0.14.0", accelerate), "env-deepspeed-version") == ([expected] if fires else [])


@pytest.mark.parametrize("local, where", [(False, "on the target"), (True, "here")])
def test_deepspeed_features_an_old_deepspeed_lacks(local: bool, where: str) -> None:
    text = (
        "distributed_type: DEEPSPEED\nnum_processes: 8\ndeepspeed_config:\n"
        "  deepspeed_moe_layer_cls_names: MixtralSparseMoeBlock\n"
        "parallelism_config:\n  parallelism_config_tp_size: 2\n  parallelism_config_sp_size: 2\n"
    )
    assert _said(text, _ds_env("0.9.5", local=local), "env-deepspeed-version") == [
        (
            "error",
            f"deepspeed_moe_layer_cls_names needs deepspeed >= 0.14.0; deepspeed is 0.9.5 {where}",
            None,
            "deepspeed_config.deepspeed_moe_layer_cls_names",
            4,
        ),
        (
            "error",
            "DeepSpeed tensor parallelism (parallelism_config_tp_size: 2) needs deepspeed >= 0.16.4; "
            f"deepspeed is 0.9.5 {where}",
            None,
            "parallelism_config.parallelism_config_tp_size",
            6,
        ),
        (
            "error",
            "DeepSpeed sequence parallelism (parallelism_config_sp_size: 2) needs deepspeed >= 0.18.2; "
            f"deepspeed is 0.9.5 {where}",
            None,
            "parallelism_config.parallelism_config_sp_size",
            7,
        ),
    ]
    # a size of 1 is no parallelism; new enough, nothing is said
    one = text.replace("tp_size: 2", "tp_size: 1").replace("sp_size: 2", "sp_size: 1")
    assert [s[3] for s in _said(one, _ds_env("0.9.5"), "env-deepspeed-version")] == [
        "deepspeed_config.deepspeed_moe_layer_cls_names"
    ]
    assert _said(text, _ds_env("0.18.2"), "env-deepspeed-version") == []
    # accelerate 0.28 names no DeepSpeed minimum for any of them
    assert _said(text, _ds_env("0.9.5", accelerate="0.28.0"), "env-deepspeed-version") == []


def test_the_nossh_launcher_on_an_old_deepspeed_found_here() -> None:
    text = (
        "distributed_type: DEEPSPEED\nnum_processes: 16\nnum_machines: 2\n"
        + NODES
        + "deepspeed_config:\n  deepspeed_multinode_launcher: nossh\n"
    )
    [said] = _said(text, _ds_env("0.14.0", local=True), "env-deepspeed-version")
    assert said[1] == (
        "the nossh launcher needs deepspeed >= 0.14.5; deepspeed is 0.14.0 here (accelerate launch raises ValueError)"
    )


# -- several machines: where the main machine is, who each machine is ---------------------------

TWO = "distributed_type: MULTI_GPU\nnum_processes: 16\nnum_machines: 2\n"


def _rendezvous(text: str, validated: bool = False) -> list[tuple]:
    doc = load_text(text, "c.yaml")
    found = check_environment(doc, _env(8), validated=validated)
    return [(f.severity, f.message, f.suggestion, f.key, f.line) for f in found if f.rule == "env-rendezvous"]


def test_a_multi_node_config_that_says_nothing_of_the_rendezvous() -> None:
    assert _rendezvous(TWO) == [
        (
            "warning",
            "num_machines is 2, but main_process_ip is not set: the other machines cannot find the main one unless "
            "--main_process_ip is passed at launch",
            "main_process_ip: <address of machine 0>",
            "num_machines",
            3,
        ),
        (
            "warning",
            "num_machines is 2, but main_process_port is not set: every machine must agree on it; "
            "accelerate uses 29500",
            "main_process_port: 29500",
            "num_machines",
            3,
        ),
        (
            "warning",
            "num_machines is 2, but machine_rank is not set: it defaults to 0 (the main machine); each other machine "
            "needs its own",
            "machine_rank: 0 on the main machine, 1.. on the others",
            "num_machines",
            3,
        ),
    ]
    # beside validate, which reports the address itself, the address is not said twice
    assert [m for _, m, *_ in _rendezvous(TWO, validated=True)] == [m for _, m, *_ in _rendezvous(TWO)[1:]]
    # one machine needs none of it
    assert _rendezvous(TWO.replace("num_machines: 2", "num_machines: 1")) == []


def test_an_empty_address_is_no_address_and_a_full_rendezvous_says_nothing() -> None:
    assert [
        m[:46]
        for _, m, *_ in _rendezvous(TWO + "main_process_ip: ''\n" + NODES.replace("main_process_ip: 10.0.0.1\n", ""))
    ] == ["num_machines is 2, but main_process_ip is not "]
    assert _rendezvous(TWO + NODES) == []


@pytest.mark.parametrize(
    "rank, validated, got",
    [
        ("null", False, "None"),
        ("null", True, "None"),
        ("2", False, "2"),
        ("-1", False, "-1"),
        ("'one'", False, "'one'"),
    ],
)
def test_a_machine_rank_that_names_no_machine(rank: str, validated: bool, got: str) -> None:
    text = TWO + NODES.replace("machine_rank: 0", f"machine_rank: {rank}")
    assert _rendezvous(text, validated) == [
        (
            "error",
            f"machine_rank must be a whole number from 0 to 1 (num_machines is 2); got {got}",
            None,
            "machine_rank",
            4,
        )
    ]


@pytest.mark.parametrize("rank", ["0", "1"])
def test_each_machine_rank_of_the_job_is_fine_and_validate_owns_the_rest(rank: str) -> None:
    assert _rendezvous(TWO + NODES.replace("machine_rank: 0", f"machine_rank: {rank}")) == []
    # a rank outside the machines is validate's multi-node error: beside it, check says nothing more
    assert _rendezvous(TWO + NODES.replace("machine_rank: 0", "machine_rank: 2"), validated=True) == []


DS_TWO = "distributed_type: DEEPSPEED\nnum_processes: 16\nnum_machines: 2\n" + NODES


@pytest.mark.parametrize("launcher", [None, "pdsh", "nossh", "openmpi"])
def test_multi_node_deepspeed_launchers_read_a_hostfile(launcher: str | None) -> None:
    text = DS_TWO + "deepspeed_config:\n  zero_stage: 2\n"
    if launcher:
        text += f"  deepspeed_multinode_launcher: {launcher}\n"
    assert _rendezvous(text) == [
        (
            "error",
            f"multi-node DeepSpeed with the {launcher or 'pdsh'} launcher reads the machines from a hostfile, but "
            "deepspeed_config.deepspeed_hostfile is not set",
            "deepspeed_hostfile: /job/hostfile (or deepspeed_multinode_launcher: standard)",
            "deepspeed_config.deepspeed_hostfile",
            7,  # at its section: the key is not there
        )
    ]
    assert _rendezvous(text + "  deepspeed_hostfile: /job/hostfile\n") == []


def test_the_standard_deepspeed_launcher_is_torchrun_and_needs_the_address() -> None:
    text = (
        DS_TWO.replace("main_process_ip: 10.0.0.1\n", "")
        + "deepspeed_config:\n  deepspeed_multinode_launcher: standard\n"
    )
    assert [(s, m[:46], k) for s, m, _, k, _ in _rendezvous(text)] == [
        ("warning", "num_machines is 2, but main_process_ip is not ", "num_machines")
    ]
    # the hostfile launchers do not need it: the hostfile names the machines
    assert (
        _rendezvous(DS_TWO.replace("main_process_ip: 10.0.0.1\n", "") + "deepspeed_config:\n  deepspeed_hostfile: h\n")
        == []
    )


# -- RTX 40 series peer to peer, and this host's default config --------------------------------


def _rtx(driver: str | None, gpus: int = 2, gpu: str = "RTX-4090", accelerate: str = "1.15") -> Environment:
    env = target_from_args(gpus=gpus, gpu=gpu, accelerate_version=accelerate, torch_version="2.7.1+cu126")
    return dataclasses.replace(env, driver_version=driver)


@pytest.mark.parametrize("name", ["NVIDIA GeForce RTX 4090", "NVIDIA RTX 4000 Ada Generation"])
def test_rtx40_is_known_by_the_name_the_driver_reports(name: str) -> None:
    """A probed GPU has the driver's name and no model of the table."""
    env = _rtx("535.54.03")
    env = dataclasses.replace(env, gpus=tuple(dataclasses.replace(g, name=name, model=None) for g in env.gpus))
    assert [s for s, *_ in _said("distributed_type: MULTI_GPU\nnum_processes: 2\n", env, "env-rtx40-p2p")] == ["info"]
    lower = dataclasses.replace(env, gpus=tuple(dataclasses.replace(g, name=name.lower()) for g in env.gpus))
    assert _said("distributed_type: MULTI_GPU\nnum_processes: 2\n", lower, "env-rtx40-p2p") == []


def test_rtx40_with_an_old_driver_loses_peer_to_peer() -> None:
    text = "distributed_type: MULTI_GPU\nnum_processes: 2\n"
    assert _said(text, _rtx("535.54.03"), "env-rtx40-p2p") == [
        (
            "info",
            "RTX 40 series with driver 535.54.03 (before 550.40.07): accelerate launch sets NCCL_P2P_DISABLE=1 and "
            "NCCL_IB_DISABLE=1 (slower communication); started without the launcher, PartialState raises "
            "NotImplementedError",
            "upgrade the NVIDIA driver to 550.40.07 or newer",
            "num_processes",
            2,
        )
    ]
    assert _said(text, _rtx("550.40.07"), "env-rtx40-p2p") == []  # the driver that fixed it
    assert _said(text, _rtx("535.54.03", gpu="A100-80GB"), "env-rtx40-p2p") == []
    assert _said(text, _rtx("535.54.03", gpus=1), "env-rtx40-p2p") == []  # one GPU: no peer
    assert _said(text, _rtx(None), "env-rtx40-p2p") == []  # the driver unknown
    assert _said(text, _rtx("535.54.03", accelerate="0.20"), "env-rtx40-p2p") == []  # before the check
    # one process per node on two machines: no peer either
    assert _said(TWO.replace("16", "2") + NODES, _rtx("535.54.03"), "env-rtx40-p2p") == []
    assert _said(TWO.replace("16", "4") + NODES, _rtx("535.54.03"), "env-rtx40-p2p")[0][0] == "info"


def test_a_default_config_on_this_host_shadows_a_multi_node_launch() -> None:
    env = dataclasses.replace(_env(8), default_config="~/.cache/huggingface/accelerate/default_config.yaml")
    assert _said(TWO + NODES, env, "env-default-config") == [
        (
            "warning",
            "this host has accelerate's default config (~/.cache/huggingface/accelerate/default_config.yaml): "
            "`accelerate launch` without --config_file reads it, and every node reads its own copy, or none; pass "
            "--config_file on every node (`accelconf preflight` compares what the nodes read)",
            "accelerate launch --config_file THIS_FILE ...",
            "num_machines",
            3,
        )
    ]
    assert _said("distributed_type: MULTI_GPU\nnum_processes: 8\n", env, "env-default-config") == []
    assert _said(TWO + NODES, _env(8), "env-default-config") == []


@pytest.mark.parametrize("accelerate, judged", [("1.8", True), ("1.15", False), (None, False)])
def test_the_config_is_read_as_the_target_release_reads_it(accelerate: str | None, judged: bool) -> None:
    """A lowercase fp8 backend reads as TE before 1.9 (the launcher upper-cased it) and is refused
    from 1.9 (validate says so): the backend check judges the value the target's release reads."""
    env = dataclasses.replace(_with_backends(("torchao",)), accelerate_version=accelerate)
    if accelerate is None:
        env = dataclasses.replace(env, unknown=env.unknown | {"accelerate_version"})
    said = _said(FP8 + "fp8_config:\n  backend: te\n", env, "env-fp8-backend")
    assert said == (
        [
            (
                "error",
                "fp8_config.backend TE needs transformer-engine, which is not installed on the target "
                "(fp8 backends installed: torchao)",
                None,
                "fp8_config.backend",
                5,
            )
        ]
        if judged
        else []
    )
    # a Config the caller passes down (validate's, read once) holds the values as written: they are
    # read at the target's release all the same
    from accelconf.accelerate.model import from_document

    doc = load_text(FP8 + "fp8_config:\n  backend: te\n", "c.yaml")
    for read_at in ("1.8", "1.15"):
        passed = [f.rule for f in check_environment(doc, env, cfg=from_document(doc, read_at))]
        assert ("env-fp8-backend" in passed) is judged


def test_an_unknown_gpu_count_says_nothing_of_idle_gpus() -> None:
    env = _env(8)
    env = dataclasses.replace(env, unknown=env.unknown | {"gpu_count"})
    assert _said("distributed_type: 'NO'\nnum_processes: 1\n", env, "env-num-processes") == []
    assert _said(_config(2), env, "env-num-processes") == []
