"""accelconf.accelerate.launch without the oracle: what ``accelerate launch`` writes for small configs,
where it refuses, and the argparse emulation helpers. (tests/oracle/test_oracle_launch.py proves the same
function against accelerate's own launcher over the corpus; these run without accelerate installed.)"""

from __future__ import annotations

import pytest

from accelconf import formats
from accelconf.accelerate import registry
from accelconf.accelerate.launch import LaunchError, flag_kind, launch_env, nested_attr, str_to_bool

V = "1.15"


def _launch(text: str, **kw):
    return launch_env(formats.read(text, "yaml", "x.yaml", V), version=V, **kw)


def test_multi_gpu_goes_through_torchrun_with_the_processes_per_node() -> None:
    r = _launch("distributed_type: MULTI_GPU\nnum_processes: 4\nmixed_precision: bf16\n")
    assert r.mode == "torchrun"
    assert r.torchrun == {"nproc_per_node": "4", "master_port": "29500", "rdzv_backend": "static"}
    assert r.env["ACCELERATE_MIXED_PRECISION"] == "bf16" and r.cmd is None
    assert not any(k.startswith(("FSDP_", "ACCELERATE_USE_")) for k in r.env)


def test_fsdp2_exports_the_plugin_and_its_defaults() -> None:
    r = _launch(
        "distributed_type: FSDP\nnum_processes: 2\nfsdp_config:\n  fsdp_version: 2\n  fsdp_offload_params: true\n"
    )
    assert r.env[registry.USE_ENV["FSDP"]] == "true"
    assert r.env["FSDP_VERSION"] == "2" and r.env["FSDP_OFFLOAD_PARAMS"] == "true"
    # FSDP2 reads reshard_after_forward; the launcher still writes the FSDP1 default strategy beside it
    assert r.env["FSDP_RESHARD_AFTER_FORWARD"] == "true" and r.env["FSDP_SHARDING_STRATEGY"] == "FULL_SHARD"


def test_use_cpu_is_dropped_under_a_torchrun_type_and_kept_by_the_simple_launcher() -> None:
    gpu = _launch("distributed_type: MULTI_GPU\nnum_processes: 2\nuse_cpu: true\n")
    assert registry.get("", "use_cpu").env not in gpu.env  # type: ignore[union-attr]
    cpu = _launch("distributed_type: MULTI_CPU\nnum_processes: 2\nuse_cpu: true\n")
    assert cpu.mode != "torchrun" and cpu.env[registry.get("", "use_cpu").env] == "True"  # type: ignore[union-attr,index]
    assert cpu.env["MASTER_ADDR"] == "127.0.0.1"  # the local rendezvous accelerate fills in


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("num_processes: 2\n", "A `distributed_type` must be specified"),
        ("distributed_type: MULTI_GPU\nnum_processes: 2\nbogus_key: 1\n", "unknown keys"),
        ("distributed_type: MULTI_GPU\nnum_processes: 2\ngpu_ids: '0'\n", "Less than two GPU ids"),
    ],
)
def test_refusals_keep_accelerates_message(text: str, message: str) -> None:
    with pytest.raises(LaunchError) as exc:
        _launch(text)
    assert message in exc.value.message


def test_machine_rank_reaches_torchrun() -> None:
    text = (
        "distributed_type: MULTI_GPU\nnum_machines: 2\nnum_processes: 8\nmain_process_ip: 10.0.0.1\n"
        "main_process_port: 29500\n"
    )
    ranks = [_launch(text, machine_rank=n).torchrun for n in (0, 1)]
    assert [r["node_rank"] for r in ranks] == [0, 1]  # accelerate keeps the int it parsed
    assert {r["nnodes"] for r in ranks} == {"2"} and {r["nproc_per_node"] for r in ranks} == {"4"}
    assert {r["rdzv_endpoint"] for r in ranks} == {"10.0.0.1:29500"}
    given = _launch(text, machine_rank=1)
    assert "machine_rank" in given.explicit and given.origins["machine_rank"] == "cli"
    assert "machine_rank" not in _launch(text).explicit


def test_a_paradigm_flag_is_explicit_and_from_the_command_line() -> None:
    r = launch_env(
        formats.read("distributed_type: MULTI_GPU\nnum_processes: 2\n", "yaml", "x.yaml", V),
        version=V,
        cli_overrides=formats.read("--use_fsdp", "cli", "<flags>", V),
    )
    assert r.env["ACCELERATE_USE_FSDP"] == "true"
    assert "use_fsdp" in r.explicit and r.origins["use_fsdp"] == "cli"


def test_a_python_script_without_a_distributed_type_launches_as_no() -> None:
    """A to-kwargs snippet (or an env file) need not say the type: accelerate's default, NO."""
    script = formats.read(
        "from accelerate import Accelerator\nAccelerator(mixed_precision='bf16')\n", "kwargs", "train.py", V
    )
    r = launch_env(script, version=V)
    assert r.mode == "simple" and r.env["ACCELERATE_MIXED_PRECISION"] == "bf16"
    assert (script.get("distributed_type"), script.entries["distributed_type"].origin) == ("NO", "default")


def test_overrides_without_a_flag_or_before_it_existed_are_dropped_with_a_warning() -> None:
    """Overrides stand for command-line flags: a setting with no flag, or a flag newer than the
    release, is dropped, with a warning that names it (and where it was written)."""
    cfg = "distributed_type: MULTI_GPU\nnum_processes: 2\nmixed_precision: fp8\n"
    over = formats.read("tpu_name: x\nfp8_config:\n  amax_history_length: 16\n  backend: TE\n", "yaml", "o.yaml")
    r = launch_env(formats.read(cfg, "yaml", "x.yaml"), version="0.30", cli_overrides=over)
    got = [(f.rule, f.severity, f.key, f.line, f.message) for f in r.findings if f.rule.startswith("convert.")]
    assert got == [
        ("convert.no-flag", "warning", "tpu_name", 1, "`tpu_name` has no `accelerate launch` flag; dropped"),
        (
            "convert.no-flag",
            "warning",
            "fp8_config.amax_history_length",
            3,
            "`fp8_config.amax_history_length` has no `accelerate launch` flag; dropped",
        ),
        ("convert.version", "warning", "fp8_config.backend", 4, "`--fp8_backend` does not exist in accelerate 0.30"),
    ]
    assert "ACCELERATE_FP8_BACKEND" not in r.env and "tpu_name" not in r.explicit
    # a dropped override does not stop the ones after it
    later = formats.read("fp8_config:\n  backend: TE\nmixed_precision: bf16\n", "yaml", "o.yaml")
    assert (
        launch_env(formats.read(cfg, "yaml", "x.yaml"), version="0.30", cli_overrides=later).env[
            "ACCELERATE_MIXED_PRECISION"
        ]
        == "bf16"
    )
    newer = launch_env(formats.read(cfg, "yaml", "x.yaml"), version="0.34", cli_overrides=over)
    assert newer.env["ACCELERATE_FP8_BACKEND"] == "TE" and newer.origins["fp8_backend"] == "cli"
    assert not any(f.rule == "convert.version" for f in newer.findings)


def test_str_to_bool_uses_accelerates_words() -> None:
    assert {w: str_to_bool(w.upper()) for w in registry.TRUE_WORDS} == dict.fromkeys(registry.TRUE_WORDS, 1)
    assert {w: str_to_bool(w) for w in registry.FALSE_WORDS} == dict.fromkeys(registry.FALSE_WORDS, 0)
    with pytest.raises(ValueError, match="invalid truth value maybe"):
        str_to_bool("maybe")


def test_flag_kinds_and_nested_attributes() -> None:
    assert flag_kind(registry.get("", "use_cpu")) == "store_true"  # type: ignore[arg-type]
    assert flag_kind(registry.get("fsdp_config", "fsdp_offload_params")) == "str"  # type: ignore[arg-type]
    assert nested_attr("fsdp_config", "sharding_strategy", V) == "fsdp_sharding_strategy"
    # dynamo keys gained the prefix rule in 1.14: before it, an unprefixed key is copied as is
    assert nested_attr("dynamo_config", "backend", "1.13") == "backend"
    assert nested_attr("dynamo_config", "backend", V) == "dynamo_backend"
    # accelerate <= 1.4 tested the substring ("fsdp" not in key), 1.5+ the prefix (not key.startswith("fsdp"));
    # dynamo keys need "dynamo_" itself, fp8 keys only "fp8" (accelerate/commands/launch.py, 1.15)
    assert nested_attr("fsdp_config", "cpu_fsdp_x", "1.4") == "cpu_fsdp_x"
    assert nested_attr("fsdp_config", "cpu_fsdp_x", V) == "fsdp_cpu_fsdp_x"
    assert nested_attr("fsdp_config", "fsdpx", V) == "fsdpx"
    assert nested_attr("dynamo_config", "dynamomode", V) == "dynamo_dynamomode"
    assert nested_attr("fp8_config", "fp8format", V) == "fp8format"


MPI = "distributed_type: MULTI_CPU\nmpirun_config:\n  mpirun_hostfile: hosts\n"


@pytest.mark.parametrize(
    "version,extra,cmd",
    [
        # accelerate/utils/launch.py prepare_simple_launcher_cmd_env with Open MPI's argument names
        (
            "1.15",
            "num_processes: 8\nnum_machines: 2\nmain_process_ip: 10.0.0.1\nmain_process_port: 29500\n",
            ["mpirun", "--hostfile", "hosts", "--npernode", "4", "-n", "8", "--bind-to", "socket"],
        ),
        (
            "1.15",
            "num_processes: 3\n",
            ["mpirun", "--hostfile", "hosts", "--npernode", "3", "-n", "3", "--bind-to", "socket"],
        ),
        ("1.15", "num_processes: 0\n", ["mpirun", "--hostfile", "hosts", "--npernode", "1", "--bind-to", "socket"]),
        (
            "0.31",
            "num_processes: 3\n",
            ["mpirun", "--hostfile", "hosts", "--npernode", "3", "-n", "3"],
        ),  # --bind-to from 0.32
    ],
)
def test_mpirun_command(version: str, extra: str, cmd: list[str]) -> None:
    r = launch_env(formats.read(MPI + extra, "yaml", "x.yaml", version), version=version)
    assert (r.mode, r.cmd) == ("simple", cmd)
    assert _launch("distributed_type: MULTI_CPU\nnum_processes: 2\n").cmd is None


SAGEMAKER = (
    "compute_environment: AMAZON_SAGEMAKER\ndistributed_type: DATA_PARALLEL\nec2_instance_type: ml.p3.2xlarge\n"
    "iam_role_name: r\nprofile: default\nregion: us-east-1\nnum_machines: 1\nmixed_precision: fp16\n"
)


def test_sagemaker_exports_its_distributed_type() -> None:
    r = launch_env(formats.read(SAGEMAKER, "yaml", "x.yaml", "1.9"), version="1.9")
    assert r.mode == "sagemaker"
    assert (
        r.env[registry.USE_SAGEMAKER_ENV] == "true"
        and r.env[registry.SAGEMAKER_DISTRIBUTED_TYPE_ENV] == "DATA_PARALLEL"
    )
    assert r.env["ACCELERATE_MIXED_PRECISION"] == "fp16"
    with pytest.raises(
        LaunchError, match="'int' object has no attribute 'value'"
    ):  # SageMakerDistributedType(...).value
        launch_env(formats.read(SAGEMAKER.replace("DATA_PARALLEL", "3"), "yaml", "x.yaml", "1.9"), version="1.9")


MULTI_CPU_2 = (
    "distributed_type: MULTI_CPU\nnum_processes: 4\nnum_machines: 2\nmain_process_ip: 10.0.0.1\n"
    "main_process_port: 29501\nmpirun_config:\n  mpirun_hostfile: hosts\n  mpirun_ccl: 2\n"
)
NOT_ENV = (
    "launch.not-env",
    "info",
    "env does not carry the process layout; accelerate runs: "
    "mpirun --hostfile hosts --npernode 2 -n 4 --bind-to socket",
)


def _ccl_installed(version: str) -> tuple[str, str, str]:
    return (
        "convert.machine-dependent",
        "info",
        f"accelerate {version} writes CCL_WORKER_COUNT as mpirun_ccl when oneCCL is "
        "installed on the machine that launches, else 0; written here as 0",
    )


# The simple launcher's rendezvous by release (tests/oracle/test_release_matrix.py checks the same paths against
# each release's own launcher; these pin them without it): accelerate/utils/launch.py
# prepare_simple_launcher_cmd_env.
@pytest.mark.parametrize(
    "version,text,env,findings",
    [
        (
            "0.33",
            MULTI_CPU_2,
            {
                "ACCELERATE_USE_CPU": "False",
                "MASTER_ADDR": "10.0.0.1",
                "MASTER_PORT": "29501",
                "CCL_WORKER_COUNT": "2",
                "ACCELERATE_MIXED_PRECISION": "no",
                "OMP_NUM_THREADS": "1",
            },
            [NOT_ENV],
        ),
        (
            "1.8",
            MULTI_CPU_2,
            {
                "ACCELERATE_USE_CPU": "False",
                "MASTER_ADDR": "10.0.0.1",
                "MASTER_PORT": "29501",
                "CCL_WORKER_COUNT": "0",
                "KMP_AFFINITY": "granularity=fine,compact,1,0",
                "KMP_BLOCKTIME": "1",
                "ACCELERATE_MIXED_PRECISION": "no",
                "OMP_NUM_THREADS": "1",
            },
            [_ccl_installed("1.8"), NOT_ENV],
        ),
        (
            "1.15",
            MULTI_CPU_2,
            {
                "ACCELERATE_USE_CPU": "False",
                "MASTER_ADDR": "10.0.0.1",
                "MASTER_PORT": "29501",
                "ACCELERATE_MIXED_PRECISION": "no",
                "OMP_NUM_THREADS": "1",
            },
            [("launch.version", "warning", "`mpirun_config.mpirun_ccl` is not read by accelerate 1.15"), NOT_ENV],
        ),
        # several machines without an mpirun hostfile: no CCL_WORKER_COUNT (checked against 0.33's own launcher)
        (
            "0.33",
            MULTI_CPU_2.split("mpirun_config")[0],
            {
                "ACCELERATE_USE_CPU": "False",
                "MASTER_ADDR": "10.0.0.1",
                "MASTER_PORT": "29501",
                "ACCELERATE_MIXED_PRECISION": "no",
                "OMP_NUM_THREADS": "1",
            },
            [],
        ),
        (
            "1.10",
            "distributed_type: MULTI_CPU\nnum_processes: 4\n",
            {
                "ACCELERATE_USE_CPU": "False",
                "MASTER_ADDR": "127.0.0.1",
                "MASTER_PORT": "29500",
                "CCL_WORKER_COUNT": "0",
                "KMP_AFFINITY": "granularity=fine,compact,1,0",
                "KMP_BLOCKTIME": "1",
                "ACCELERATE_MIXED_PRECISION": "no",
                "OMP_NUM_THREADS": "1",
            },
            [_ccl_installed("1.10")],
        ),
    ],
)
def test_simple_launcher_rendezvous_by_release(version: str, text: str, env: dict, findings: list) -> None:
    r = launch_env(formats.read(text, "yaml", "x.yaml", version), version=version)
    assert r.mode == "simple"
    assert {k: v for k, v in r.env.items() if "DYNAMO" not in k} == env
    assert [(f.rule, f.severity, f.message) for f in r.findings] == findings


def test_simple_launcher_refusals_by_release() -> None:
    # 0.28-0.32 put the integer mpirun_ccl into the env without str(): Popen raises
    with pytest.raises(LaunchError, match=r"^<text>: expected str, bytes or os.PathLike object, not int$"):
        launch_env(formats.read(MULTI_CPU_2, "yaml", "x.yaml", "0.30"), version="0.30")
    # 1.8 on asserts the IP, then the port (accelerate's two messages); 1.7 writes the port as 'None'
    # and the IP unconverted, which Popen refuses
    for text, missing in (("", "IP"), ("main_process_ip: 10.0.0.1\n", "port")):
        with pytest.raises(LaunchError) as err:
            _launch("distributed_type: MULTI_CPU\nnum_processes: 4\nnum_machines: 2\n" + text)
        assert err.value.message == f"When using multiple machines, you need to specify the main process {missing}."
    two = "distributed_type: MULTI_CPU\nnum_processes: 4\nnum_machines: 2\n"
    with pytest.raises(LaunchError, match="expected str, bytes or os.PathLike object, not NoneType$"):
        launch_env(formats.read(two, "yaml", "x.yaml", "1.7"), version="1.7")
    old = launch_env(formats.read(two + "main_process_ip: 10.0.0.1\n", "yaml", "x.yaml", "1.7"), version="1.7")
    assert (old.env["MASTER_ADDR"], old.env["MASTER_PORT"]) == ("10.0.0.1", "None")


DS_MULTINODE = (
    "distributed_type: DEEPSPEED\nnum_processes: 16\nnum_machines: 2\nmachine_rank: 1\nmain_process_ip: 10.0.0.1\n"
    "main_process_port: 29501\ndeepspeed_config:\n  zero_stage: 2\n  deepspeed_hostfile: /h\n"
    "  deepspeed_multinode_launcher: {}\n"
)
TAIL = ["--master_addr", "10.0.0.1", "--master_port", "29501"]


# The DeepSpeed multi-node command (accelerate/utils/launch.py prepare_deepspeed_cmd_env), each row
# checked against that release's own launcher (tests/oracle/harness.py).
@pytest.mark.parametrize(
    "version,launcher,extra,cmd",
    [
        (
            "1.15",
            "pdsh",
            "  deepspeed_inclusion_filter: host1\n",
            ["deepspeed", "--hostfile", "/h", "--no_local_rank", "--launcher", "pdsh", "--include", "host1", *TAIL],
        ),
        (
            "1.15",
            "nossh",
            "",
            ["deepspeed", "--hostfile", "/h", "--node_rank", "1", "--no_ssh", "--num_gpus", "8", *TAIL],
        ),
        (
            "0.34",
            "nossh",
            "",
            ["deepspeed", "--no_local_rank", "--hostfile", "/h", "--launcher", "nossh", "--num_gpus", "8", *TAIL],
        ),
        (
            "0.34",
            "pdsh",
            "  deepspeed_inclusion_filter: host1\n",
            ["deepspeed", "--no_local_rank", "--hostfile", "/h", "--launcher", "pdsh", "--include", "host1", *TAIL],
        ),
    ],
)
def test_deepspeed_multinode_command(version: str, launcher: str, extra: str, cmd: list[str]) -> None:
    r = launch_env(formats.read(DS_MULTINODE.format(launcher) + extra, "yaml", "x.yaml", version), version=version)
    assert (r.mode, r.cmd) == ("deepspeed", cmd)


def test_flags_alone_on_a_machine_with_several_gpus_turn_multi_gpu_on() -> None:
    # accelerate/commands/launch.py _validate_launch_command: more than one process and more than one
    # visible GPU set args.multi_gpu ("More than one GPU was found, enabling multi-GPU training.")
    r = launch_env(formats.read("--num_processes 2", "cli", "x.sh", V), version=V, device_count=2)
    assert r.mode == "torchrun" and str(r.torchrun["nproc_per_node"]) == "2"
    assert launch_env(formats.read("--num_processes 2", "cli", "x.sh", V), version=V, device_count=1).mode == "simple"
    r = launch_env(formats.read("--debug", "cli", "x.sh", V), version=V, device_count=4)
    assert r.mode == "torchrun" and str(r.torchrun["nproc_per_node"]) == "4"
    # --multi_gpu without --num_processes is not refused (the "at least 2 processes" check needs a count)
    r = launch_env(formats.read("--multi_gpu", "cli", "x.sh", V), version=V, device_count=4)
    assert r.mode == "torchrun" and str(r.torchrun["nproc_per_node"]) == "4"


def test_flags_alone_take_accelerates_defaults() -> None:
    r = launch_env(formats.read("--num_processes 2", "cli", "x.sh", V), version=V)
    assert (r.mode, {k: v for k, v in r.env.items() if "DYNAMO" not in k}, r.findings) == (
        "simple",
        {
            "ACCELERATE_USE_CPU": "False",
            "MASTER_ADDR": "127.0.0.1",
            "MASTER_PORT": "29500",
            "ACCELERATE_MIXED_PRECISION": "no",
            "OMP_NUM_THREADS": "1",
        },
        [],
    )
    r = launch_env(formats.read("--debug", "cli", "x.sh", V), version=V)
    assert {k: v for k, v in r.env.items() if "DYNAMO" not in k} == {
        "ACCELERATE_USE_CPU": "False",
        "ACCELERATE_DEBUG_MODE": "true",
        "ACCELERATE_MIXED_PRECISION": "no",
        "OMP_NUM_THREADS": "1",
    }
    assert [(f.rule, f.severity, f.message, f.key) for f in r.findings] == [
        (
            "convert.machine-dependent",
            "info",
            "`--num_processes` not given: accelerate uses the number of visible devices (taken as 0)",
            "num_processes",
        )
    ]


# Checked against the release's own launcher (tests/oracle/harness.py); DYNAMO variables left out.
PARALLEL = (
    "distributed_type: MULTI_GPU\nnum_processes: 4\nparallelism_config:\n  parallelism_config_dp_shard_size: 2\n"
    "  parallelism_config_cp_size: 2\n  parallelism_config_sp_size: 2\n"
)
MEGATRON = (
    "distributed_type: MEGATRON_LM\nnum_processes: 2\nmegatron_lm_config:\n  megatron_lm_tp_degree: 2\n"
    "  megatron_lm_gradient_clipping: null\n"
)
NO_MEGATRON_FLAGS = {
    f"MEGATRON_LM_{k}": "False"
    for k in (
        "EOD_MASK_LOSS",
        "NO_LOAD_OPTIM",
        "NO_SAVE_OPTIM",
        "OPTIMIZER_CPU_OFFLOAD",
        "OVERLAP_CPU_OPTIMIZER_D2H_H2D",
        "USE_CUSTOM_FSDP",
        "USE_PRECISION_AWARE_OPTIMIZER",
    )
}


@pytest.mark.parametrize(
    "version,text,env",
    [
        # 1.10 has no sequence parallelism and no cp_backend: only the keys it knows are exported
        (
            "1.10",
            PARALLEL,
            {
                "ACCELERATE_MIXED_PRECISION": "no",
                "ACCELERATE_USE_PARALLELISM_CONFIG": "true",
                "OMP_NUM_THREADS": "1",
                "PARALLELISM_CONFIG_CP_COMM_STRATEGY": "allgather",
                "PARALLELISM_CONFIG_CP_SIZE": "2",
                "PARALLELISM_CONFIG_DP_REPLICATE_SIZE": "1",
                "PARALLELISM_CONFIG_DP_SHARD_SIZE": "2",
                "PARALLELISM_CONFIG_TP_SIZE": "1",
            },
        ),
        # the always-exported Megatron-LM settings go out even when null (as the string None)
        (
            "1.15",
            MEGATRON,
            {
                "ACCELERATE_MIXED_PRECISION": "no",
                "ACCELERATE_USE_MEGATRON_LM": "true",
                "OMP_NUM_THREADS": "1",
                "MEGATRON_LM_GRADIENT_CLIPPING": "None",
                "MEGATRON_LM_PP_DEGREE": "1",
                "MEGATRON_LM_TP_DEGREE": "2",
                **NO_MEGATRON_FLAGS,
            },
        ),
    ],
)
def test_plugin_sections_by_release(version: str, text: str, env: dict) -> None:
    r = launch_env(formats.read(text, "yaml", "x.yaml", version), version=version)
    assert {k: v for k, v in r.env.items() if "DYNAMO" not in k} == env


def test_a_launcher_flag_given_beats_the_one_read_back_from_the_environment() -> None:
    """OMP_NUM_THREADS in an env file reads back as --num_cpu_threads_per_process; a flag given
    beside it wins, as the later flag on accelerate's command line would."""
    env = formats.read("ACCELERATE_MIXED_PRECISION=bf16\nOMP_NUM_THREADS=4\n", "env", "x.env", V)
    assert launch_env(env, version=V).env["OMP_NUM_THREADS"] == "4"
    flag = formats.read("--num_cpu_threads_per_process 8", "cli", "<flags>", V)
    r = launch_env(env, version=V, cli_overrides=flag)
    assert r.env["OMP_NUM_THREADS"] == "8" and r.origins["num_cpu_threads_per_process"] == "cli"
