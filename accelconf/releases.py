"""Every release boundary accelconf asks about, by name: one table, checked against each release's source.

A :class:`Change` is a behaviour that only some accelerate releases have, those in ``[since, until)``;
a :class:`Requirement` is a version of another package (torch, DeepSpeed, torchao, the NVIDIA driver)
that some accelerate releases demand. Modules never spell a release number: they ask
``releases.has(version, "explicit-flags-win")`` or ``releases.minimum("fsdp2-torch", version)``.
Each entry's ``marker`` is a regular expression over accelerate's own source file ``file`` (relative to
the ``accelerate`` package) that matches in exactly the releases of its range:
``tests/oracle/test_release_matrix.py`` checks every entry against every installed release, so a wrong range
fails there. Setting-level differences (a key's first release, an older flag default, an enum value's
life) live with the setting in :mod:`accelconf.accelerate.registry`.

``LAUNCHER`` holds the launcher's control flow (``accelconf.accelerate.launch`` re-exports it as
``CHANGES``, and the boundary oracle launches both sides of each); ``RULES`` holds the loading and
runtime behaviours the checks ask about. Nothing here imports beyond the standard library and
``packaging``.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from accelconf import versions


class Change(NamedTuple):
    """A behaviour that only the accelerate releases in ``[since, until)`` have (``None``: open end)."""

    since: str | None
    until: str | None
    file: str
    marker: str
    doc: str


class Requirement(NamedTuple):
    """``package >= version`` is what the accelerate releases in ``[since, until)`` demand (``marker``
    over ``file`` matches in exactly those releases)."""

    package: str
    version: str
    since: str | None
    until: str | None
    file: str
    marker: str
    doc: str


def _lit(text: str) -> str:
    return re.escape(text)


# Every per-release difference of the launcher's control flow, in one place.
LAUNCHER: dict[str, Change] = {
    "num-processes-default": Change(
        "0.34",
        None,
        "commands/config/config_args.py",
        _lit("num_processes: int = -1"),
        "ClusterConfig has a num_processes default; before, a file without it fails to load (TypeError)",
    ),
    "omp-threads-per-process": Change(
        "0.34",
        None,
        "commands/launch.py",
        _lit("max(int(args.num_processes / args.num_machines), 1)"),
        "with use_cpu, OMP_NUM_THREADS is physical cores / processes per machine; before, all physical cores",
    ),
    "multi-xpu-dispatch": Change(
        "0.21",
        None,
        "commands/launch.py",
        r"args\.multi_gpu = \([^)]*DistributedType\.MULTI_XPU",
        "MULTI_XPU (and MULTI_NPU) go to the multi-GPU launcher; 0.20 sends only MULTI_GPU there",
    ),
    "ze-mask-inverted": Change(
        "0.21",
        "0.22",
        "utils/launch.py",
        r"if not is_xpu_available\(\):\n\s*current_env\[\"ZE_AFFINITY_MASK\"\]",
        "the multi-GPU path writes gpu_ids to ZE_AFFINITY_MASK when no XPU is present (an inverted test)",
    ),
    "backward-prefetch-policy": Change(
        None,
        "1.0",
        "utils/launch.py",
        _lit("fsdp_backward_prefetch_policy"),
        "the legacy fsdp_backward_prefetch_policy is exported as FSDP_BACKWARD_PREFETCH (and wins over "
        "fsdp_backward_prefetch)",
    ),
    "fp8-backend-ao-flag": Change(
        "1.13",
        None,
        "commands/launch.py",
        _lit('choices=["ao", "te", "msamp"]'),
        "--fp8_backend accepts ao; before, only te and msamp (a file's AO still works from 1.10)",
    ),
    "fp8-backend-enum": Change(
        "1.9",
        None,
        "accelerator.py",
        _lit('FP8BackendType(parse_choice_from_env("ACCELERATE_FP8_BACKEND"'),
        "Accelerator() reads ACCELERATE_FP8_BACKEND into FP8BackendType: only upper case (TE, "
        "MSAMP, AO) is accepted, the lowercase --fp8_backend value raises ValueError",
    ),
    "sharding-strategy-int": Change(
        None,
        "0.26",
        "utils/dataclasses.py",
        _lit("ShardingStrategy(int(os.environ.get("),
        "the sharding strategy is an integer (flag default 1); the plugin calls int() on FSDP_SHARDING_STRATEGY",
    ),
    "ds-multinode-no-local-rank-first": Change(
        None,
        "1.6",
        "utils/launch.py",
        _lit('cmd = ["deepspeed", "--no_local_rank"]'),
        "the DeepSpeed multi-node command starts `deepspeed --no_local_rank --hostfile H`",
    ),
    "ds-multinode-master-addr": Change(
        "0.29",
        None,
        "utils/launch.py",
        _lit('cmd.extend(["--master_addr", str(main_process_ip)])'),
        "the DeepSpeed multi-node command passes --master_addr",
    ),
    "rendezvous-port-default": Change(
        "1.7",
        None,
        "utils/launch.py",
        _lit("args.main_process_port = 29500"),
        "the torchrun rendezvous uses port 29500 when none is given; before, the endpoint is `IP:None`",
    ),
    "sagemaker-cpu-affinity-unknown": Change(
        "0.29",
        "0.30",
        "commands/config/config_args.py",
        r'config_dict\["enable_cpu_affinity"\] = False[\s\S]*class '
        r"SageMakerConfig\(BaseConfig\):(?:(?!enable_cpu_affinity)[\s\S])*\Z",
        "loading adds enable_cpu_affinity, which SageMakerConfig lacks: every SageMaker config fails to load",
    ),
    "fp8-config": Change(
        "1.4",
        None,
        "commands/launch.py",
        _lit("fp8_config"),
        "fp8_config keys are copied into the launch arguments; before (0.34-1.3), only the flag defaults are exported",
    ),
    "fp8-override-split": Change(
        "1.4",
        None,
        "utils/launch.py",
        _lit("FP8_OVERRIDE_FPROP"),
        "override_linear_precision is exported as three variables; before, as one (a tuple's repr)",
    ),
    "fp8-override-unconverted": Change(
        "1.5",
        "1.9",
        "utils/launch.py",
        _lit('current_env[prefix + "FP8_OVERRIDE_FPROP"] = value[0]'),
        "the three override values are not converted to str: Popen (simple launcher) and the "
        "DeepSpeed env file raise TypeError on booleans",
    ),
    "explicit-flags-win": Change(
        "1.5",
        None,
        "commands/launch.py",
        _lit('if hasattr(args, "nondefault") and key not in args.nondefault'),
        "a nested config key does not override a flag given on the command line; before, it does",
    ),
    "simple-rendezvous-any-count": Change(
        "1.8",
        None,
        "utils/launch.py",
        _lit("if (num_processes is not None and num_processes > 1) or num_machines > 1:"),
        "the simple launcher writes MASTER_ADDR/PORT (defaults 127.0.0.1:29500) for several processes or machines; "
        "before, for several processes, or for several machines as given",
    ),
    "simple-multinode-asserts": Change(
        "1.8",
        None,
        "utils/launch.py",
        _lit("When using multiple machines, you need to specify the main process IP."),
        "the simple launcher asserts main_process_ip and then main_process_port for several "
        "machines; before, a missing port is written as 'None' and a missing IP makes Popen raise",
    ),
    "mpirun-bind-to": Change(
        "0.32",
        None,
        "utils/launch.py",
        _lit("bind_to_arg = _get_mpirun_args()"),
        "the mpirun command ends with `--bind-to socket`",
    ),
    "ccl-count-unconverted": Change(
        "0.28",
        "0.32",
        "utils/launch.py",
        _lit('current_env["CCL_WORKER_COUNT"] = mpirun_ccl'),
        "CCL_WORKER_COUNT is put into the env without str(): an integer makes Popen raise TypeError",
    ),
    "kmp-vars": Change(
        "1.8",
        None,
        "utils/launch.py",
        _lit('current_env["KMP_AFFINITY"] = "granularity=fine,compact,1,0"'),
        "KMP_AFFINITY/KMP_BLOCKTIME are written for CPU training",
    ),
    "kmp-test-string": Change(
        "1.8",
        "1.13",
        "utils/launch.py",
        _lit('if current_env["ACCELERATE_USE_CPU"]:'),
        "the CPU test reads the string 'True'/'False', always truthy: KMP variables on every simple launch",
    ),
    "kmp-test-flag-name": Change(
        "1.13",
        "1.15",
        "utils/launch.py",
        _lit('parse_flag_from_env(current_env["ACCELERATE_USE_CPU"]'),
        "the CPU test looks up a variable named 'True'/'False', never set: KMP variables never written",
    ),
    "yaml-false-precision-no": Change(
        None,
        "0.34",
        "commands/config/config_args.py",
        _lit('if isinstance(config_dict["mixed_precision"], bool) and not config_dict["mixed_precision"]:'),
        "loading a YAML file turns `mixed_precision: false` (an unquoted no) into 'no'; JSON files and true are not "
        "converted",
    ),
    "parallelism-config": Change(
        "1.10",
        None,
        "commands/launch.py",
        _lit("--use_parallelism_config"),
        "a non-empty parallelism_config turns on use_parallelism_config",
    ),
    "parallelism-under-deepspeed": Change(
        "1.12",
        None,
        "utils/launch.py",
        _lit("prepare_extend_env_parallelism_config"),
        "the parallelism variables are written on the DeepSpeed path too; before, only on the multi-GPU path",
    ),
    "parallelism-sp-any-size": Change(
        "1.13",
        None,
        "parallelism_config.py",
        r'if self\.sp_backend == "deepspeed" and self\.sp_size > 1:\n\s*pass',
        "with sp_size above 1 (DeepSpeed sequence parallelism) the sizes need not multiply to the "
        "number of processes; before, they must",
    ),
    "parallelism-cp-sp-exclusive": Change(
        "1.13",
        None,
        "parallelism_config.py",
        _lit("Context Parallelism (CP) and Sequence Parallelism (SP) are mutually exclusive"),
        "cp_size and sp_size both above 1 raise ValueError; before, they combine",
    ),
    "parallelism-fsdp2-shard-dim": Change(
        "1.15",
        None,
        "parallelism_config.py",
        _lit("no dimension for FSDP to shard across"),
        "FSDP2 with neither dp_shard_size nor cp_size above 1 raises ValueError when the "
        "Accelerator starts; before, prepare fails later (a KeyError from device_mesh)",
    ),
}

# Loading (config_args.py), plugin and runtime behaviours the checks ask about.
RULES: dict[str, Change] = {
    "simple-launcher-processes-first": Change(
        "1.8",
        None,
        "utils/launch.py",
        _lit("if (num_processes is not None and num_processes > 1) or num_machines > 1:"),
        "the simple launcher compares num_processes with 1 before num_machines; before, a file naming "
        "several machines never compares num_processes there",
    ),
    "sagemaker-parallelism-attribute": Change(
        "1.10",
        None,
        "commands/launch.py",
        _lit("args.use_parallelism_config = defaults.parallelism_config != {}"),
        "launch reads parallelism_config from the loaded config: a SageMakerConfig has none "
        "(AttributeError), so every SageMaker config crashes `accelerate launch`",
    ),
    "num-processes-injected": Change(
        "0.34",
        None,
        "commands/config/config_args.py",
        _lit('config_dict["num_processes"] = 1'),
        "loading adds num_processes: 1 to a distributed_type NO config (a SageMaker one then fails: unknown key)",
    ),
    "hybrid-shard": Change(
        "0.21",
        None,
        "utils/constants.py",
        _lit('"HYBRID_SHARD", "HYBRID_SHARD_ZERO2"'),
        "FSDP knows five sharding strategies (HYBRID_SHARD, HYBRID_SHARD_ZERO2); before, three",
    ),
    "sharding-strategy-any-case": Change(
        "0.34",
        None,
        "utils/dataclasses.py",
        r"self\.sharding_strategy\.upper\(\) in FSDP_SHARDING_STRATEGY",
        "the FSDP plugin upper-cases a sharding strategy name; before, names are case-sensitive",
    ),
    "ram-efficient-needs-sync": Change(
        "0.24",
        None,
        "utils/launch.py",
        _lit("When using `--fsdp_cpu_ram_efficient_loading` set `--fsdp_sync_module_states` to `True`"),
        "the launcher raises ValueError for cpu_ram_efficient_loading without sync_module_states",
    ),
    "fsdp2": Change(
        "1.6",
        None,
        "utils/dataclasses.py",
        _lit('self.fsdp_version = int(os.environ.get(env_prefix + "VERSION", "1"))'),
        "the FSDP plugin reads fsdp_version (FSDP2); before, the key is ignored and FSDP1 runs",
    ),
    "fsdp-prefix-startswith": Change(
        "1.5",
        None,
        "commands/launch.py",
        _lit('if name == "fsdp_config" and not key.startswith("fsdp"):'),
        "an fsdp_config key gets the fsdp_ prefix unless it starts with fsdp; before, unless it contains fsdp",
    ),
    "fp8-override-sequence": Change(
        "1.5",
        None,
        "utils/launch.py",
        r'current_env\[prefix \+ "FP8_OVERRIDE_FPROP"\] = (?:str\()?value\[0\]',
        'override_linear_precision is indexed as a sequence; before, a "(a, b, c)" string is split '
        "(a list raises AttributeError)",
    ),
}

CHANGES: dict[str, Change] = {**LAUNCHER, **RULES}

# DeepSpeed behaviours by the first DeepSpeed release that has them (its configuration checks; the
# DeepSpeed oracle tests run the releases around them). Key-level DeepSpeed differences live in
# accelconf.deepspeed.keys, DeepSpeed's registry.
DEEPSPEED_SINCE: dict[str, str] = {
    "ds-dynamic-scaling-checked": "0.17.1",  # fp16 with loss_scale 0: the dynamic scaling arguments are checked
    "ds-loss-scale-window-refused": "0.19.3",  # a loss_scale_window <= 0 raises; before, it only misbehaves
    "ds-param-dtype-matches-precision": "0.19.5",  # data_types.param_dtype must match the fp16/bf16 mode
    "ds-autoep-config": "0.19.0",  # parse_autoep_config reads expert_parallel.load_balance_coeff
}

REQUIREMENTS: dict[str, tuple[Requirement, ...]] = {
    "fsdp1-torch": (
        Requirement(
            "torch",
            "1.12.0",
            None,
            "0.21",
            "accelerator.py",
            _lit('"FSDP requires PyTorch >= 1.12.0"'),
            "the Accelerator's FSDP check before FSDP_PYTORCH_VERSION existed",
        ),
        Requirement(
            "torch",
            "2.0.1",
            "0.21",
            "0.25",
            "utils/constants.py",
            _lit('FSDP_PYTORCH_VERSION = "2.0.1"'),
            "FSDP_PYTORCH_VERSION",
        ),
        Requirement(
            "torch",
            "2.1.0",
            "0.25",
            "0.34",
            "utils/constants.py",
            _lit('FSDP_PYTORCH_VERSION = "2.1.0"'),
            "FSDP_PYTORCH_VERSION",
        ),
        Requirement(
            "torch",
            "2.1.0a0",
            "0.34",
            None,
            "utils/constants.py",
            _lit('"2.1.0.a0+32f93b1"'),
            "FSDP_PYTORCH_VERSION: a prerelease MS-AMP's image ships (shown as 2.1.0)",
        ),
    ),
    "fsdp2-torch": (
        Requirement(
            "torch",
            "2.5.1",
            "1.6",
            "1.7",
            "utils/constants.py",
            _lit('FSDP2_PYTORCH_VERSION = "2.5.1"'),
            "FSDP2_PYTORCH_VERSION",
        ),
        Requirement(
            "torch",
            "2.6.0",
            "1.7",
            None,
            "utils/constants.py",
            _lit('FSDP2_PYTORCH_VERSION = "2.6.0"'),
            "FSDP2_PYTORCH_VERSION",
        ),
    ),
    "deepspeed": (
        Requirement(
            "deepspeed",
            "0.9.3",
            "0.21",
            None,
            "accelerator.py",
            _lit("DeepSpeed version must be >= 0.9.3"),
            "the Accelerator refuses an older DeepSpeed",
        ),
    ),
    "deepspeed-nossh": (
        Requirement(
            "deepspeed",
            "0.14.5",
            "1.6",
            None,
            "utils/launch.py",
            _lit("nossh launcher requires DeepSpeed >= 0.14.5"),
            "the nossh multi-node launcher",
        ),
    ),
    "deepspeed-moe": (
        Requirement(
            "deepspeed",
            "0.14.0",
            "0.30",
            None,
            "utils/dataclasses.py",
            _lit('"0.14.0"'),
            "DeepSpeed MoE leaf modules (deepspeed_moe_layer_cls_names)",
        ),
    ),
    "deepspeed-tp": (
        Requirement(
            "deepspeed", "0.16.4", "1.6", None, "accelerator.py", _lit("0.16.4"), "DeepSpeed tensor parallelism"
        ),
    ),
    "deepspeed-sp": (
        Requirement(
            "deepspeed",
            "0.18.2",
            "1.12",
            None,
            "utils/constants.py",
            _lit('BETA_SP_AVAILABLE_DEEPSPEED_VERSION = "0.18.2"'),
            "DeepSpeed sequence parallelism",
        ),
    ),
    "torchao-fp8": (
        Requirement(
            "torchao",
            "0.6.1",
            "1.4",
            None,
            "utils/imports.py",
            _lit('compare_versions(torchao_version, ">=", "0.6.1")'),
            "is_torchao_available: an older torchao counts as missing",
        ),
    ),
    "rtx40-driver": (
        Requirement(
            "nvidia-driver",
            "550.40.07",
            "0.29",
            None,
            "utils/environment.py",
            _lit("550.40.07"),
            "check_cuda_p2p_ib_support: RTX 40 cards before this driver need NCCL P2P/IB off",
        ),
    ),
}


def _vin(version: str | None, since: str | None, until: str | None) -> bool:
    """``version`` (a minor release, or a full one) lies in ``[since, until)``; unknown means newest."""
    if version is None:
        return until is None
    v = versions.minor(version)
    if v is None:
        return until is None
    return (since is None or versions.compare(v, since) >= 0) and (until is None or versions.compare(v, until) < 0)


def has(version: str | None, name: str) -> bool:
    """Whether accelerate ``version`` has the behaviour ``CHANGES[name]`` (``None``: the newest does)."""
    c = CHANGES[name]
    return _vin(version, c.since, c.until)


def since(name: str) -> str:
    """The first release with ``CHANGES[name]`` (for messages such as "since 1.9")."""
    first = CHANGES[name].since
    if first is None:
        raise ValueError(f"{name} has no first release: it is older than every release accelconf knows")
    return first


def fsdp_version_runs(written: object, version: str | None) -> int:
    """The FSDP version accelerate ``version`` runs for a written ``fsdp_version``: 2 only for ``2``
    (or ``"2"``) in a release that reads the key, else 1."""
    return 2 if written in (2, "2") and has(version, "fsdp2") else 1


def requirement(name: str, version: str | None) -> Requirement | None:
    """The requirement ``name`` as accelerate ``version`` states it (``None``: the newest), or ``None``
    when that release has no such requirement."""
    return next((r for r in REQUIREMENTS[name] if _vin(version, r.since, r.until)), None)


def minimum(name: str, version: str | None) -> str | None:
    """The minimum version of the package ``REQUIREMENTS[name]`` is about, for accelerate ``version``."""
    r = requirement(name, version)
    return r.version if r is not None else None
