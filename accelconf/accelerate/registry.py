"""The settings registry: the one table of every setting accelerate's config file knows.

Each :class:`Setting` ties together the YAML key, the ``accelerate launch`` flag and its namespace
``dest``, the environment variable the launcher writes (and how it encodes the value), the
``Accelerator``/plugin field that finally reads it, its type, the launcher default (the flag
default, used when the key is absent) and the plugin default (used when the env var is absent:
they differ), allowed values, a doc string, and the accelerate versions that know it.

Everything else derives from this table: the JSON Schema (:mod:`accelconf.accelerate.schema`), validation
(:mod:`accelconf.accelerate.validate`), the converters (:mod:`accelconf.formats`), diff, completion and hover.
Facts come from accelerate 1.15.0's source (``commands/launch.py``, ``utils/launch.py``,
``utils/dataclasses.py``, ``commands/config/config_args.py``) and from comparing the wheels of
0.20 to 1.15; ``tests/oracle/test_registry_oracle.py`` compares this table with the installed accelerate.

Versions: ``since`` is the first accelerate release that has the setting (inclusive), ``until``
the first that no longer has it (exclusive); ``None`` means "all known versions".
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache, lru_cache
from typing import TYPE_CHECKING, Any, NamedTuple

from accelconf import releases, versions
from accelconf.versions import installed_version

if TYPE_CHECKING:
    from packaging.version import Version

OLDEST = "0.20"
NEWEST = "1.15"
KNOWN_VERSIONS = (
    "0.20",
    "0.21",
    "0.22",
    "0.23",
    "0.24",
    "0.25",
    "0.26",
    "0.27",
    "0.28",
    "0.29",
    "0.30",
    "0.31",
    "0.32",
    "0.33",
    "0.34",
    "1.0",
    "1.1",
    "1.2",
    "1.3",
    "1.4",
    "1.5",
    "1.6",
    "1.7",
    "1.8",
    "1.9",
    "1.10",
    "1.11",
    "1.12",
    "1.13",
    "1.14",
    "1.15",
)

# Launcher paths (accelerate/utils/launch.py): S simple, T torchrun (multi-GPU, FSDP, Megatron),
# D DeepSpeed, X TPU, M SageMaker.
ALL_PATHS = frozenset("STDXM")


class Setting(NamedTuple):
    section: str  # "" for top level, else the nested dict name ("fsdp_config", ...)
    key: str  # the canonical YAML key (what `accelerate config` writes, with its prefix)
    type: str  # str | int | float | bool | enum | path | classlist | list | boolish | intlist
    doc: str
    flag: str | None = None  # launch flag without dashes (dest may differ: see `dest`)
    dest: str | None = None  # argparse namespace attribute; defaults to the flag
    env: str | None = None  # variable the launcher writes for the training process
    encoding: str = "str"  # how the launcher writes it: str | lower | upper | title | raw | int | flag1
    env_when: str = "set"  # always | set (only when a value is given)
    env_paths: frozenset[str] = ALL_PATHS
    plugin: str | None = None  # "FullyShardedDataParallelPlugin.cpu_offload"
    launcher_default: Any = None  # flag default: what `accelerate launch` uses when the key is absent
    plugin_default: Any = None  # what the plugin uses when the env var is absent
    choices: tuple[Any, ...] | None = None
    case_insensitive: bool = False
    legacy_values: tuple[tuple[Any, Any], ...] = ()  # (legacy spelling, canonical value)
    aliases: tuple[tuple[str, str | None], ...] = ()  # (other accepted key, since version)
    since: str | None = None
    until: str | None = None
    file_ignored: bool = False  # set in a file, the launcher never applies it
    fsdp_versions: tuple[int, ...] = (1, 2)
    deprecated: str | None = None
    lost: bool = False  # exported under a name nothing reads, or never exported
    minimum: int | float | None = None
    versions_note: str = ""
    ds_json: str | None = None  # the same setting in a DeepSpeed JSON file (dotted path)
    # (until, value): before accelerate ``until`` the flag default was ``value`` (ascending order)
    older_launcher_defaults: tuple[tuple[str, Any], ...] = ()
    # severity when the target accelerate is older than ``since`` and ignores the key: "error" where
    # ignoring it runs something else than written (fsdp_version 2 on 1.2 runs FSDP1), else "warning"
    too_new: str = "warning"
    # the values that say what the releases before ``since`` (which lack the setting) do anyway, read
    # from their source: written for such a release the ignored key changes nothing (fsdp_version 1
    # before 1.6 is the FSDP1 that runs), so key-too-new is only info there, whatever ``too_new`` says
    before_since: tuple[Any, ...] = ()

    @property
    def path(self) -> str:
        return f"{self.section}.{self.key}" if self.section else self.key

    @property
    def cli_flag(self) -> str | None:
        return f"--{self.flag}" if self.flag else None

    @property
    def namespace(self) -> str:
        return self.dest or self.flag or self.key

    def launcher_default_for(self, version: str | None) -> Any:
        """The flag default of that accelerate version (defaults changed in some releases)."""
        if version is not None:
            for until, value in self.older_launcher_defaults:
                if not version_in(version, None, until):
                    continue
                return value
        return self.launcher_default

    def exists_in(self, version: str | None) -> bool:
        return version_in(version, self.since, self.until)

    def runs_before_since(self, value: Any) -> bool:
        """Whether ``value`` (canonical) is what the releases before ``since`` do without the key."""
        return any(value == v and type(value) is type(v) for v in self.before_since)

    def canonical_value(self, value: Any) -> Any:
        """The spelling accelerate itself writes for an accepted value (enum case, legacy ints)."""
        for legacy, canon in self.legacy_values:
            if value == legacy and type(value) is type(legacy):
                return canon
        if (
            self.choices
            and isinstance(value, str)
            and value.strip().isdigit()
            and all(isinstance(c, int) for c in self.choices)
        ):
            return int(value)  # integer enums arrive as strings from env vars and flags
        if self.choices and isinstance(value, str):
            for c in self.choices:
                if isinstance(c, str) and c.lower() == value.lower():
                    return c
            if self.case_insensitive:  # the case accelerate converts to before it looks the value up
                if all(isinstance(c, str) and c == c.upper() for c in self.choices):
                    return value.upper()
                if all(isinstance(c, str) and c == c.lower() for c in self.choices):
                    return value.lower()
        return value


class Section(NamedTuple):
    name: str
    doc: str
    prefix: str | None = None  # prefix the launcher adds to keys that lack it
    prefix_optional_since: str | None = None  # since when unprefixed keys work
    since: str | None = None
    until: str | None = None
    plugin: str | None = None
    removed_note: str = ""
    # (top-level key, value) the section needs to take effect: accelerate builds the section's plugin
    # or reads its keys only then (accelerate/commands/launch.py and utils/launch.py); None: always read
    active_when: tuple[str, str] | None = None


def version_key(v: str) -> Version:
    from packaging.version import Version

    return Version(v)


def normalize_version(v: str | None) -> str | None:
    """``1.15.0`` or ``1.15.0.dev0`` -> ``1.15`` (minor release), ``None`` stays ``None``."""
    if v is None:
        return None
    return versions.minor(v)


def version_in(version: str | None, since: str | None, until: str | None) -> bool:
    if version is None:
        return until is None
    v = normalize_version(version) or version
    if since is not None and versions.compare(v, since) < 0:
        return False
    if until is not None and versions.compare(v, until) >= 0:
        return False
    return True


@lru_cache(maxsize=1)
def installed_accelerate_version() -> str | None:
    """The installed accelerate version, read from its metadata (accelerate is never imported)."""
    return installed_version("accelerate")


def resolve_version(requested: str | None) -> str:
    """The accelerate version to check against: requested, else installed, else the newest known."""
    v = normalize_version(requested) if requested else normalize_version(installed_accelerate_version())
    if v is None:
        return NEWEST
    if versions.compare(v, NEWEST) > 0:
        return NEWEST
    if versions.compare(v, OLDEST) < 0:
        return OLDEST
    return v


# -- enums (accelerate/utils/dataclasses.py and constants.py, 1.15) ---------------------------------

DISTRIBUTED_TYPES = (
    "NO",
    "MULTI_CPU",
    "MULTI_GPU",
    "MULTI_NPU",
    "MULTI_MLU",
    "MULTI_SDAA",
    "MULTI_MUSA",
    "MULTI_XPU",
    "MULTI_HPU",
    "MULTI_NEURON",
    "DEEPSPEED",
    "FSDP",
    "XLA",
    "MEGATRON_LM",
)
DISTRIBUTED_TYPE_SINCE = {
    "MULTI_NPU": "0.21",
    "XLA": "0.28",
    "MULTI_MLU": "0.29",
    "MULTI_MUSA": "0.33",
    "MULTI_SDAA": "1.5",
    "MULTI_HPU": "1.5",
    "MULTI_NEURON": "1.13",
}
DISTRIBUTED_TYPE_UNTIL = {"TPU": "0.28", "TP": "1.10"}
MULTI_GPU_TYPES = (
    "MULTI_GPU",
    "MULTI_NPU",
    "MULTI_MLU",
    "MULTI_SDAA",
    "MULTI_MUSA",
    "MULTI_XPU",
    "MULTI_HPU",
    "MULTI_NEURON",
)
SAGEMAKER_DISTRIBUTED_TYPES = ("NO", "DATA_PARALLEL", "MODEL_PARALLEL")
PRECISIONS = ("no", "fp16", "bf16", "fp8")
DYNAMO_BACKENDS = (
    "NO",
    "EAGER",
    "AOT_EAGER",
    "INDUCTOR",
    "AOT_TS_NVFUSER",
    "NVPRIMS_NVFUSER",
    "CUDAGRAPHS",
    "OFI",
    "FX2TRT",
    "ONNXRT",
    "TENSORRT",
    "AOT_TORCHXLA_TRACE_ONCE",
    "TORCHXLA_TRACE_ONCE",
    "TVM",
    "HPU_BACKEND",
    "NEURON",
)
DYNAMO_BACKEND_SINCE = {
    "AOT_TS_NVFUSER": "0.24",
    "NVPRIMS_NVFUSER": "0.24",
    "CUDAGRAPHS": "0.24",
    "TENSORRT": "0.24",
    "TVM": "0.24",
    "AOT_TORCHXLA_TRACE_ONCE": "0.32",
    "TORCHXLA_TRACE_ONCE": "0.32",
    "HPU_BACKEND": "1.5",
    "NEURON": "1.15",
}
DYNAMO_BACKEND_UNTIL = {"NVFUSER": "0.24", "AOT_NVFUSER": "0.24", "AOT_CUDAGRAPHS": "0.24", "IPEX": "1.13"}
DYNAMO_MODES = ("default", "reduce-overhead", "max-autotune")
SHARDING_STRATEGIES = ("FULL_SHARD", "SHARD_GRAD_OP", "NO_SHARD", "HYBRID_SHARD", "HYBRID_SHARD_ZERO2")
# What each strategy shards (torch FSDP): (the ZeRO stage it equals, the group it shards over: every
# process, the processes of one node, or none). The memory estimate and diff's consequences read it.
SHARDING: dict[str, tuple[int, str]] = {
    "FULL_SHARD": (3, "world"),
    "SHARD_GRAD_OP": (2, "world"),
    "HYBRID_SHARD": (3, "node"),
    "HYBRID_SHARD_ZERO2": (2, "node"),
    "NO_SHARD": (0, "one"),
}
# accelerate to-fsdp2 (1.15): FSDP1 sharding strategy -> FSDP2 fsdp_reshard_after_forward.
FSDP2_RESHARD_OF_STRATEGY = {
    "FULL_SHARD": True,
    "HYBRID_SHARD": True,
    "SHARD_GRAD_OP": False,
    "HYBRID_SHARD_ZERO2": False,
    "NO_SHARD": False,
}
AUTO_WRAP_POLICIES = ("TRANSFORMER_BASED_WRAP", "SIZE_BASED_WRAP", "NO_WRAP")
BACKWARD_PREFETCH = ("BACKWARD_PRE", "BACKWARD_POST", "NO_PREFETCH")
STATE_DICT_TYPES = ("FULL_STATE_DICT", "LOCAL_STATE_DICT", "SHARDED_STATE_DICT")
FSDP2_STATE_DICT_TYPES = ("SHARDED_STATE_DICT", "FULL_STATE_DICT")
OFFLOAD_DEVICES = ("none", "cpu", "nvme")
MULTINODE_LAUNCHERS = ("pdsh", "standard", "openmpi", "mvapich", "mpich", "nossh", "slurm")
# accelerate's DEEPSPEED_MULTINODE_LAUNCHERS: launch takes the first when none is given; the second is torchrun
DEFAULT_MULTINODE_LAUNCHER, STANDARD_LAUNCHER = MULTINODE_LAUNCHERS[:2]
FP8_BACKENDS = ("TE", "MSAMP", "AO")
FP8_FORMATS = ("HYBRID", "E4M3", "E5M2")
RDZV_BACKENDS = ("static", "c10d", "etcd", "etcd-v2")

ENUM_DOCS: dict[str, str] = {
    "NO": "No distributed training: one process (or `num_processes` via the simple launcher).",
    "MULTI_CPU": "Several CPU processes (simple launcher; use `mpirun_config` to start them all).",
    "MULTI_GPU": "DistributedDataParallel over CUDA GPUs, started with torchrun.",
    "MULTI_NPU": "DistributedDataParallel over Ascend NPUs.",
    "MULTI_MLU": "DistributedDataParallel over Cambricon MLUs.",
    "MULTI_SDAA": "DistributedDataParallel over SDAA devices.",
    "MULTI_MUSA": "DistributedDataParallel over Moore Threads MUSA GPUs.",
    "MULTI_XPU": "DistributedDataParallel over Intel XPUs.",
    "MULTI_HPU": "DistributedDataParallel over Intel Gaudi HPUs.",
    "MULTI_NEURON": "DistributedDataParallel over AWS Neuron cores.",
    "DEEPSPEED": "DeepSpeed ZeRO; settings in `deepspeed_config`.",
    "FSDP": "PyTorch Fully Sharded Data Parallel; settings in `fsdp_config`.",
    "XLA": "TPUs through torch_xla (was `TPU` before 0.28).",
    "MEGATRON_LM": "Megatron-LM; settings in `megatron_lm_config`.",
    "FULL_SHARD": "Shard parameters, gradients and optimizer state (ZeRO-3 like). Integer 1.",
    "SHARD_GRAD_OP": "Shard gradients and optimizer state (ZeRO-2 like). Integer 2.",
    "NO_SHARD": "No sharding (DDP). Integer 3.",
    "HYBRID_SHARD": "FULL_SHARD within a node, replicate across nodes. Integer 4.",
    "HYBRID_SHARD_ZERO2": "SHARD_GRAD_OP within a node, replicate across nodes. Integer 5.",
    "TRANSFORMER_BASED_WRAP": "Wrap each transformer block named in `fsdp_transformer_layer_cls_to_wrap`.",
    "SIZE_BASED_WRAP": "Wrap modules with at least `fsdp_min_num_params` parameters.",
    "NO_WRAP": "Do not auto-wrap.",
    "BACKWARD_PRE": "Prefetch the next parameters before the current gradient computation (more memory, faster).",
    "BACKWARD_POST": "Prefetch after the current gradient computation.",
    "NO_PREFETCH": "No backward prefetch.",
    "FULL_STATE_DICT": "Gather a full state dict on rank 0 when saving.",
    "LOCAL_STATE_DICT": "Each rank saves its local shard (FSDP1 only).",
    "SHARDED_STATE_DICT": "Save sharded checkpoints (distributed checkpoint format).",
    "no": "Full precision (fp32).",
    "fp16": "Automatic mixed precision with float16 and a gradient scaler.",
    "bf16": "Automatic mixed precision with bfloat16 (needs compute capability 8.0+ on NVIDIA).",
    "fp8": "FP8 through TransformerEngine, MS-AMP or torchao (needs compute capability 8.9+).",
}


# Variables `accelerate launch` writes that belong to no single setting (accelerate/utils/launch.py).
# distributed_type -> the variable that selects its plugin ("true" only: `=="true"` readers).
# accelerate/utils/environment.py str_to_bool: the words accelerate reads as true and as false
# (lower-cased first), in env vars, str_to_bool launch flags and parse_flag_from_env.
TRUE_WORDS = frozenset({"y", "yes", "t", "true", "on", "1"})
FALSE_WORDS = frozenset({"n", "no", "f", "false", "off", "0"})

USE_ENV: dict[str, str] = {
    "DEEPSPEED": "ACCELERATE_USE_DEEPSPEED",
    "FSDP": "ACCELERATE_USE_FSDP",
    "MEGATRON_LM": "ACCELERATE_USE_MEGATRON_LM",
}
USE_PARALLELISM_CONFIG_ENV = "ACCELERATE_USE_PARALLELISM_CONFIG"  # a non-empty parallelism_config
USE_SAGEMAKER_ENV = "ACCELERATE_USE_SAGEMAKER"
SAGEMAKER_DISTRIBUTED_TYPE_ENV = (
    "ACCELERATE_SAGEMAKER_DISTRIBUTED_TYPE"  # the SageMaker job's distributed_type (utils/launch.py)
)
CONFIG_DS_FIELDS_ENV = "ACCELERATE_CONFIG_DS_FIELDS"  # the file's deepspeed_config keys, for the JSON conflict check
THREADS_ENV = "OMP_NUM_THREADS"  # --num_cpu_threads_per_process (no config-file key)
RENDEZVOUS_ENV = ("MASTER_ADDR", "MASTER_PORT")  # main_process_ip / main_process_port on the simple launcher
PYTHONPATH_ENV = "PYTHONPATH"  # the DeepSpeed launcher appends the working directory
# The prefixes of the variables accelerate's own code reads (os.environ lookups in accelerate/).
READ_PREFIXES = ("ACCELERATE_", "FSDP_", "MEGATRON_LM_", "PARALLELISM_CONFIG_")
# Section settings whose variable the training process reads under every distributed type: path ->
# (the Accelerator argument it overrides, that argument's default). Accelerator.__init__ takes
# ACCELERATE_GRADIENT_ACCUMULATION_STEPS over gradient_accumulation_steps= whatever the type
# (accelerate 1.15 accelerator.py, parse_choice_from_env), and accelerate launch passes the shell's
# environment on; but the launcher exports it, and a config file or flag holds it, only for DeepSpeed.
ACCELERATOR_ENV_ARGS: dict[str, tuple[str, Any]] = {
    "deepspeed_config.gradient_accumulation_steps": ("gradient_accumulation_steps", 1)
}
FP8_OVERRIDE_PREFIX = "ACCELERATE_FP8_OVERRIDE_"  # override_linear_precision: _FPROP, _DGRAD, _WGRAD
# the parts in override_linear_precision's order (accelerate/utils/dataclasses.py TERecipeKwargs)
FP8_OVERRIDE_PARTS = ("FPROP", "DGRAD", "WGRAD")


def _s(section: str, key: str, type_: str, doc: str, **kw: Any) -> Setting:
    if "flag" not in kw:
        kw["flag"] = key
    if "env_paths" in kw and isinstance(kw["env_paths"], str):
        kw["env_paths"] = frozenset(kw["env_paths"])
    for name in ("choices", "legacy_values", "aliases"):
        if name in kw and kw[name] is not None and not isinstance(kw[name], tuple):
            kw[name] = tuple(kw[name])
    return Setting(section=section, key=key, type=type_, doc=doc, **kw)


FSDP = "FullyShardedDataParallelPlugin"
DS = "DeepSpeedPlugin"
DYN = "TorchDynamoPlugin"
MEG = "MegatronLMPlugin"
PAR = "ParallelismConfig"
TE = "TERecipeKwargs"
AO = "AORecipeKwargs"
MSAMP = "MSAMPRecipeKwargs"

_TOP: list[Setting] = [
    _s(
        "",
        "compute_environment",
        "enum",
        "Where training runs. `LOCAL_MACHINE` selects the cluster config; anything else (even lowercase "
        "`local_machine`) selects the SageMaker config.",
        flag=None,
        choices=("LOCAL_MACHINE", "AMAZON_SAGEMAKER"),
        launcher_default="LOCAL_MACHINE",
    ),
    _s(
        "",
        "distributed_type",
        "enum",
        "The training paradigm. Required. Exact upper case; quote `'NO'` (a bare `NO` is the YAML boolean false).",
        flag=None,
        choices=DISTRIBUTED_TYPES,
        legacy_values=(("TPU", "XLA"),),
    ),
    _s(
        "",
        "mixed_precision",
        "enum",
        "Mixed precision mode. Quote `'no'`: a bare `no` is the YAML boolean false, which crashes `accelerate launch` "
        "(0.34+).",
        env="ACCELERATE_MIXED_PRECISION",
        encoding="lower",
        env_when="always",
        env_paths="STDM",
        plugin="Accelerator.mixed_precision",
        launcher_default="no",
        plugin_default="no",
        choices=PRECISIONS,
        case_insensitive=True,
    ),
    _s(
        "",
        "use_cpu",
        "bool",
        "Force training on the CPU even when accelerators are present.",
        flag="cpu",
        env="ACCELERATE_USE_CPU",
        encoding="title",
        env_when="always",
        env_paths="S",
        plugin="Accelerator.cpu",
        launcher_default=False,
        plugin_default=False,
    ),
    _s(
        "",
        "debug",
        "bool",
        "Debug mode: extra checks that operations are in sync across processes.",
        env="ACCELERATE_DEBUG_MODE",
        encoding="true_if",
        env_paths="STDX",
        launcher_default=False,
        plugin_default=False,
        since="0.22",
    ),
    _s(
        "",
        "num_processes",
        "int",
        "Total number of processes across **all** machines (not per machine). Required unless `distributed_type` is "
        "`'NO'`.",
        launcher_default=None,
        minimum=1,
    ),
    _s("", "num_machines", "int", "Number of machines (nodes).", launcher_default=1, minimum=1),
    _s("", "machine_rank", "int", "Rank of this machine, from 0 to `num_machines - 1`.", launcher_default=0, minimum=0),
    _s(
        "",
        "gpu_ids",
        "str",
        "Which GPUs to use on this machine: `all` or a comma-separated **string** of ids such as `'0,1'` (a bare `0` "
        "is an integer and crashes the launcher).",
        env="CUDA_VISIBLE_DEVICES",
        encoding="raw",
        env_paths="STD",
        launcher_default="all",
    ),
    _s("", "main_process_ip", "str", "IP address of the machine with rank 0 (multi-node).", launcher_default=None),
    _s(
        "",
        "main_process_port",
        "int",
        "Port on the rank 0 machine (default 29500; 0 picks a free port).",
        launcher_default=29500,
        minimum=0,
    ),
    _s(
        "",
        "rdzv_backend",
        "enum",
        "torchrun rendezvous backend. **Ignored in a config file** (the flag default `static` always wins): pass "
        "`--rdzv_backend`.",
        choices=RDZV_BACKENDS,
        launcher_default="static",
        file_ignored=True,
    ),
    _s(
        "",
        "same_network",
        "bool",
        "Whether all machines are on the same network. **Ignored in a config file**: pass `--same_network`.",
        launcher_default=False,
        file_ignored=True,
    ),
    _s("", "main_training_function", "str", "Name of the function to launch (TPU only).", launcher_default="main"),
    _s(
        "",
        "enable_cpu_affinity",
        "bool",
        "Pin processes to NUMA nodes. **Ignored in a config file** (flag default wins): pass `--enable_cpu_affinity`.",
        env="ACCELERATE_CPU_AFFINITY",
        encoding="flag1",
        env_paths="STD",
        launcher_default=False,
        file_ignored=True,
        since="0.29",
    ),
    _s(
        "",
        "downcast_bf16",
        "bool",
        "TPU: use bf16 for float tensors and fp32 for double. **Ignored in a config file**: pass `--downcast_bf16`.",
        launcher_default=False,
        file_ignored=True,
    ),
    _s("", "tpu_name", "str", "Name of the TPU pod.", flag=None),
    _s("", "tpu_zone", "str", "Zone of the TPU pod.", flag=None),
    _s(
        "",
        "tpu_use_cluster",
        "bool",
        "Launch on a TPU pod (only used when `distributed_type` is `XLA`).",
        flag="tpu_cluster",
        dest="tpu_use_cluster",
        launcher_default=False,
    ),
    _s(
        "",
        "tpu_use_sudo",
        "bool",
        "Run TPU pod commands with sudo. **Ignored in a config file**: pass `--tpu_use_sudo`.",
        launcher_default=False,
        file_ignored=True,
    ),
    _s("", "command_file", "path", "File of commands for `accelerate tpu-config`.", flag=None),
    _s("", "commands", "list", "Commands for `accelerate tpu-config`.", flag=None),
    _s("", "tpu_vm", "list", "TPU VM names for the pod launcher.", flag=None),
    _s("", "tpu_env", "list", "Environment for TPU pod VMs (not used by `launch`).", flag=None),
    _s("", "fp8_config", "section", "FP8 recipe settings (used when `mixed_precision: fp8`).", flag=None, since="0.34"),
    _s("", "deepspeed_config", "section", "DeepSpeed settings (used when `distributed_type: DEEPSPEED`).", flag=None),
    _s("", "fsdp_config", "section", "FSDP settings (used when `distributed_type: FSDP`).", flag=None),
    _s(
        "",
        "parallelism_config",
        "section",
        "N-D parallelism sizes (data, tensor, context, sequence). Non-empty turns on `use_parallelism_config`.",
        flag=None,
        since="1.10",
    ),
    _s(
        "",
        "megatron_lm_config",
        "section",
        "Megatron-LM settings (used when `distributed_type: MEGATRON_LM`).",
        flag=None,
    ),
    _s("", "mpirun_config", "section", "mpirun settings for `MULTI_CPU`.", flag=None, since="0.28"),
    _s("", "dynamo_config", "section", "torch.compile (TorchDynamo) settings.", flag=None),
    _s(
        "",
        "ipex_config",
        "section",
        "Intel Extension for PyTorch settings. Removed in 1.13: now an unknown key that fails loading.",
        flag=None,
        until="1.13",
        deprecated=(
            "`ipex_config` was removed in accelerate 1.13; delete it (IPEX optimizations are applied automatically)."
        ),
    ),
    _s(
        "",
        "tp_config",
        "section",
        "Tensor parallel settings (1.4 to 1.6). Use `parallelism_config` instead.",
        flag=None,
        since="1.4",
        until="1.7",
        deprecated=(
            "`tp_config` existed only in accelerate 1.4 to 1.6; use `parallelism_config.parallelism_config_tp_size`."
        ),
    ),
    _s(
        "",
        "fp16",
        "bool",
        "Legacy: `fp16: true` means `mixed_precision: fp16`. Converted and dropped when the file is loaded.",
        flag=None,
        deprecated="legacy key: write `mixed_precision: fp16` instead",
    ),
    _s(
        "",
        "dynamo_backend",
        "enum",
        "Legacy top-level spelling of `dynamo_config.dynamo_backend` (it replaces the whole `dynamo_config`).",
        flag=None,
        choices=DYNAMO_BACKENDS,
        case_insensitive=True,
        deprecated="legacy key: write `dynamo_config: {dynamo_backend: ...}` instead",
    ),
]

_SAGEMAKER: list[Setting] = [
    _s("", "ec2_instance_type", "str", "SageMaker: EC2 instance type (required for `AMAZON_SAGEMAKER`).", flag=None),
    _s("", "iam_role_name", "str", "SageMaker: IAM role name (required).", flag=None),
    _s("", "image_uri", "str", "SageMaker: training image URI.", flag=None),
    _s("", "profile", "str", "SageMaker: AWS profile.", flag=None),
    _s("", "region", "str", "SageMaker: AWS region.", flag=None, launcher_default="us-east-1"),
    _s("", "base_job_name", "str", "SageMaker: job name prefix.", flag=None),
    _s("", "pytorch_version", "str", "SageMaker: PyTorch version of the image.", flag=None),
    _s("", "transformers_version", "str", "SageMaker: transformers version of the image.", flag=None),
    _s("", "py_version", "str", "SageMaker: Python version of the image.", flag=None),
    _s("", "sagemaker_inputs_file", "path", "SageMaker: TSV of input channels.", flag=None),
    _s("", "sagemaker_metrics_file", "path", "SageMaker: TSV of metric definitions.", flag=None),
    _s("", "additional_args", "dict", "SageMaker: extra estimator arguments.", flag=None),
]

_F = "fsdp_config"
_FSDP: list[Setting] = [
    _s(
        _F,
        "fsdp_version",
        "enum",
        "FSDP version: 1 or 2. FSDP2 needs torch 2.6 or newer.",
        env="FSDP_VERSION",
        env_when="always",
        env_paths="T",
        plugin=f"{FSDP}.fsdp_version",
        launcher_default=1,
        plugin_default=1,
        choices=(1, 2),
        legacy_values=(("1", 1), ("2", 2)),
        since="1.6",
        too_new="error",
        before_since=(1,),
    ),
    _s(
        _F,
        "fsdp_sharding_strategy",
        "enum",
        "FSDP1 sharding strategy. Deprecated in favour of `fsdp_reshard_after_forward` (FSDP2), but FSDP1 reads only "
        "this key.",
        env="FSDP_SHARDING_STRATEGY",
        encoding="raw",
        env_when="always",
        env_paths="T",
        plugin=f"{FSDP}.sharding_strategy",
        launcher_default="FULL_SHARD",
        plugin_default="FULL_SHARD",
        choices=SHARDING_STRATEGIES,
        case_insensitive=True,
        legacy_values=tuple((i + 1, name) for i, name in enumerate(SHARDING_STRATEGIES))
        + tuple((str(i + 1), name) for i, name in enumerate(SHARDING_STRATEGIES)),
        fsdp_versions=(1,),
        older_launcher_defaults=(("0.26", 1),),
        versions_note="an integer until 0.25 (flag default 1; the plugin calls int() on the value), a name from 0.26",
    ),
    _s(
        _F,
        "fsdp_reshard_after_forward",
        "bool",
        "FSDP2: free parameters after the forward pass (true is like FULL_SHARD, false like SHARD_GRAD_OP).",
        env="FSDP_RESHARD_AFTER_FORWARD",
        encoding="lower",
        env_when="always",
        env_paths="T",
        plugin=f"{FSDP}.reshard_after_forward",
        launcher_default=True,
        plugin_default=True,
        since="1.6",
    ),
    _s(
        _F,
        "fsdp_offload_params",
        "bool",
        "Offload parameters and gradients to the CPU.",
        env="FSDP_OFFLOAD_PARAMS",
        encoding="lower",
        env_when="always",
        env_paths="T",
        plugin=f"{FSDP}.cpu_offload",
        launcher_default=False,
        plugin_default=False,
    ),
    _s(
        _F,
        "fsdp_auto_wrap_policy",
        "enum",
        "How modules are wrapped into FSDP units.",
        env="FSDP_AUTO_WRAP_POLICY",
        encoding="raw",
        env_paths="T",
        plugin=f"{FSDP}.auto_wrap_policy",
        launcher_default=None,
        plugin_default="NO_WRAP",
        choices=AUTO_WRAP_POLICIES,
        case_insensitive=True,
    ),
    _s(
        _F,
        "fsdp_transformer_layer_cls_to_wrap",
        "classlist",
        "Comma-separated **string** of transformer block class names to wrap (a YAML list is exported as a Python "
        "repr and breaks). Absent: the model's `_no_split_modules`.",
        env="FSDP_TRANSFORMER_CLS_TO_WRAP",
        encoding="raw",
        env_paths="T",
        plugin=f"{FSDP}.transformer_cls_names_to_wrap",
    ),
    _s(
        _F,
        "fsdp_min_num_params",
        "int",
        "Minimum parameters per wrapped module (only with `SIZE_BASED_WRAP`).",
        env="FSDP_MIN_NUM_PARAMS",
        env_when="always",
        env_paths="T",
        plugin=f"{FSDP}.min_num_params",
        launcher_default=100000000,
        plugin_default=0,
        minimum=0,
        older_launcher_defaults=(("1.13", 1e8),),
        versions_note="launcher default 1e8 (a float: exported as 100000000.0) until 1.12, int from 1.13",
    ),
    _s(
        _F,
        "fsdp_backward_prefetch",
        "enum",
        "FSDP1 backward prefetch. Forced to None (with a warning) on FSDP2.",
        env="FSDP_BACKWARD_PREFETCH",
        encoding="raw",
        env_paths="T",
        plugin=f"{FSDP}.backward_prefetch",
        choices=BACKWARD_PREFETCH,
        case_insensitive=True,
        legacy_values=((1, "BACKWARD_PRE"), (2, "BACKWARD_POST")),
        since="0.26",
        fsdp_versions=(1,),
    ),
    _s(
        _F,
        "fsdp_backward_prefetch_policy",
        "enum",
        "Legacy spelling of `fsdp_backward_prefetch` (read until 0.34, silently ignored since 1.0).",
        choices=BACKWARD_PREFETCH,
        case_insensitive=True,
        until="1.0",
        fsdp_versions=(1,),
        deprecated="`fsdp_backward_prefetch_policy` is ignored since accelerate 1.0; use `fsdp_backward_prefetch`",
    ),
    _s(
        _F,
        "fsdp_state_dict_type",
        "enum",
        "Checkpoint format. FSDP2 allows only SHARDED_STATE_DICT and FULL_STATE_DICT.",
        env="FSDP_STATE_DICT_TYPE",
        encoding="raw",
        env_paths="T",
        plugin=f"{FSDP}.state_dict_type",
        plugin_default="FULL_STATE_DICT",
        choices=STATE_DICT_TYPES,
        case_insensitive=True,
        legacy_values=((1, "FULL_STATE_DICT"), (2, "LOCAL_STATE_DICT"), (3, "SHARDED_STATE_DICT")),
    ),
    _s(
        _F,
        "fsdp_forward_prefetch",
        "bool",
        "FSDP1: prefetch the next all-gather during the forward pass.",
        env="FSDP_FORWARD_PREFETCH",
        encoding="lower",
        env_when="always",
        env_paths="T",
        plugin=f"{FSDP}.forward_prefetch",
        launcher_default=False,
        plugin_default=False,
        since="0.21",
        fsdp_versions=(1,),
        before_since=(False,),
    ),
    _s(
        _F,
        "fsdp_use_orig_params",
        "bool",
        "FSDP1: keep the original parameters (needed for torch.compile and parameter groups).",
        env="FSDP_USE_ORIG_PARAMS",
        encoding="lower",
        env_when="always",
        env_paths="T",
        plugin=f"{FSDP}.use_orig_params",
        launcher_default=True,
        plugin_default=False,
        since="0.21",
        fsdp_versions=(1,),
        older_launcher_defaults=(("0.25", False),),
        before_since=(False,),
        versions_note="launcher default false until 0.24, true from 0.25",
    ),
    _s(
        _F,
        "fsdp_cpu_ram_efficient_loading",
        "bool",
        "Load the checkpoint on rank 0 only and broadcast it (needs `fsdp_sync_module_states: true` on FSDP1).",
        env="FSDP_CPU_RAM_EFFICIENT_LOADING",
        encoding="lower",
        env_when="always",
        env_paths="T",
        plugin=f"{FSDP}.cpu_ram_efficient_loading",
        launcher_default=True,
        plugin_default=False,
        since="0.24",
        before_since=(False,),
    ),
    _s(
        _F,
        "fsdp_sync_module_states",
        "bool",
        "FSDP1: broadcast module states from rank 0.",
        env="FSDP_SYNC_MODULE_STATES",
        encoding="lower",
        env_when="always",
        env_paths="T",
        plugin=f"{FSDP}.sync_module_states",
        launcher_default=True,
        plugin_default=False,
        since="0.21",
        fsdp_versions=(1,),
        older_launcher_defaults=(("0.22", False),),
        before_since=(False,),
        versions_note="launcher default false in 0.21, true from 0.22",
    ),
    _s(
        _F,
        "fsdp_activation_checkpointing",
        "bool",
        "Activation checkpointing of wrapped blocks.",
        env="FSDP_ACTIVATION_CHECKPOINTING",
        encoding="lower",
        env_when="always",
        env_paths="T",
        plugin=f"{FSDP}.activation_checkpointing",
        launcher_default=False,
        plugin_default=False,
        since="0.31",
        before_since=(False,),
    ),
    _s(
        _F,
        "fsdp_activation_checkpointing_offload",
        "bool",
        "FSDP2: offload checkpointed activations to the CPU (needs `fsdp_activation_checkpointing`).",
        env="FSDP_ACTIVATION_CHECKPOINTING_OFFLOAD",
        encoding="lower",
        env_when="always",
        env_paths="T",
        plugin=f"{FSDP}.activation_checkpointing_offload",
        launcher_default=False,
        plugin_default=False,
        since="1.15",
        fsdp_versions=(2,),
        before_since=(False,),
    ),
    _s(
        _F,
        "fsdp_ignored_modules",
        "str",
        "Regex (full match on module names) of modules FSDP leaves alone. Config only, no launch flag. FSDP2 needs "
        "torch 2.7.",
        flag=None,
        env="FSDP_IGNORED_MODULES",
        env_paths="T",
        plugin=f"{FSDP}.ignored_modules",
        since="1.10",
    ),
]

_D = "deepspeed_config"
_DEEPSPEED: list[Setting] = [
    _s(
        _D,
        "deepspeed_config_file",
        "path",
        "Path to a DeepSpeed JSON config. When set, the keys it covers must not also be set here (accelerate raises "
        "at training time).",
        env="ACCELERATE_DEEPSPEED_CONFIG_FILE",
        encoding="raw",
        env_paths="D",
        plugin=f"{DS}.hf_ds_config",
        plugin_default="none",
    ),
    _s(
        _D,
        "zero_stage",
        "enum",
        "ZeRO stage: 0 disabled, 1 optimizer state, 2 + gradients, 3 + parameters.",
        env="ACCELERATE_DEEPSPEED_ZERO_STAGE",
        env_paths="D",
        ds_json="zero_optimization.stage",
        plugin=f"{DS}.zero_stage",
        plugin_default=2,
        choices=(0, 1, 2, 3),
    ),
    _s(
        _D,
        "offload_optimizer_device",
        "enum",
        "Where optimizer state is offloaded (ZeRO 1-3).",
        env="ACCELERATE_DEEPSPEED_OFFLOAD_OPTIMIZER_DEVICE",
        encoding="lower",
        env_paths="D",
        ds_json="zero_optimization.offload_optimizer.device",
        plugin=f"{DS}.offload_optimizer_device",
        plugin_default="none",
        choices=OFFLOAD_DEVICES,
        case_insensitive=True,
    ),
    _s(
        _D,
        "offload_param_device",
        "enum",
        "Where parameters are offloaded (ZeRO-3 only).",
        env="ACCELERATE_DEEPSPEED_OFFLOAD_PARAM_DEVICE",
        encoding="lower",
        env_paths="D",
        ds_json="zero_optimization.offload_param.device",
        plugin=f"{DS}.offload_param_device",
        plugin_default="none",
        choices=OFFLOAD_DEVICES,
        case_insensitive=True,
    ),
    _s(
        _D,
        "offload_optimizer_nvme_path",
        "path",
        "NVMe path for optimizer offload. **Never exported by the launcher** (the plugin sees `none`): put it in a "
        "DeepSpeed JSON file.",
        plugin=f"{DS}.offload_optimizer_nvme_path",
        plugin_default="none",
        lost=True,
        ds_json="zero_optimization.offload_optimizer.nvme_path",
    ),
    _s(
        _D,
        "offload_param_nvme_path",
        "path",
        "NVMe path for parameter offload. **Never exported by the launcher**: put it in a DeepSpeed JSON file.",
        plugin=f"{DS}.offload_param_nvme_path",
        plugin_default="none",
        lost=True,
        ds_json="zero_optimization.offload_param.nvme_path",
    ),
    _s(
        _D,
        "gradient_accumulation_steps",
        "int",
        "Gradient accumulation steps. Also overrides `Accelerator(gradient_accumulation_steps=)`.",
        env="ACCELERATE_GRADIENT_ACCUMULATION_STEPS",
        env_paths="D",
        plugin=f"{DS}.gradient_accumulation_steps",
        plugin_default="auto",
        minimum=1,
        ds_json="gradient_accumulation_steps",
    ),
    _s(
        _D,
        "gradient_clipping",
        "float",
        "Gradient clipping (max norm).",
        env="ACCELERATE_GRADIENT_CLIPPING",
        encoding="lower",
        env_paths="D",
        plugin=f"{DS}.gradient_clipping",
        plugin_default="auto",
        ds_json="gradient_clipping",
    ),
    _s(
        _D,
        "zero3_init_flag",
        "bool",
        "ZeRO-3: build the model already partitioned (`deepspeed.zero.Init`). Forced false on other stages.",
        env="ACCELERATE_DEEPSPEED_ZERO3_INIT",
        encoding="lower",
        env_paths="D",
        plugin=f"{DS}.zero3_init_flag",
    ),
    _s(
        _D,
        "zero3_save_16bit_model",
        "bool",
        "ZeRO-3: gather a 16-bit model when saving.",
        env="ACCELERATE_DEEPSPEED_ZERO3_SAVE_16BIT_MODEL",
        encoding="lower",
        env_paths="D",
        plugin=f"{DS}.zero3_save_16bit_model",
        plugin_default=False,
        ds_json="zero_optimization.stage3_gather_16bit_weights_on_model_save",
    ),
    _s(
        _D,
        "deepspeed_moe_layer_cls_names",
        "classlist",
        "Comma-separated MoE layer class names (DeepSpeed 0.14+).",
        env="ACCELERATE_DEEPSPEED_MOE_LAYER_CLS_NAMES",
        encoding="raw",
        env_paths="D",
        plugin=f"{DS}.transformer_moe_cls_names",
        since="0.30",
    ),
    _s(_D, "deepspeed_hostfile", "path", "Multi-node: hostfile for the DeepSpeed launcher (`--hostfile`)."),
    _s(
        _D,
        "deepspeed_exclusion_filter",
        "str",
        "Multi-node: hosts/GPUs to exclude (`--exclude`); wins over the inclusion filter.",
    ),
    _s(_D, "deepspeed_inclusion_filter", "str", "Multi-node: hosts/GPUs to include (`--include`)."),
    _s(
        _D,
        "deepspeed_multinode_launcher",
        "enum",
        "Multi-node launcher: `pdsh` (default), `standard` (torchrun), `openmpi`, `mvapich`, `mpich`, `nossh` "
        "(DeepSpeed 0.14.5+), `slurm`.",
        choices=MULTINODE_LAUNCHERS,
        plugin_default=DEFAULT_MULTINODE_LAUNCHER,
    ),
]

_P8 = "fp8_config"
_FP8: list[Setting] = [
    _s(
        _P8,
        "backend",
        "enum",
        "FP8 backend. Upper case only: lowercase crashes `Accelerator()` (1.9+).",
        flag="fp8_backend",
        env="ACCELERATE_FP8_BACKEND",
        plugin="Accelerator.fp8_backend",
        choices=FP8_BACKENDS,
        aliases=(("fp8_backend", None),),
        since="0.34",
    ),
    _s(
        _P8,
        "use_autocast_during_eval",
        "bool",
        "TE: keep FP8 autocast during evaluation.",
        flag="fp8_use_autocast_during_eval",
        env="ACCELERATE_FP8_USE_AUTOCAST_DURING_EVAL",
        env_when="always",
        plugin=f"{TE}.use_autocast_during_eval",
        launcher_default=False,
        plugin_default=False,
        aliases=(("fp8_use_autocast_during_eval", None),),
        since="0.34",
    ),
    _s(
        _P8,
        "margin",
        "int",
        "TE: scaling factor margin.",
        flag="fp8_margin",
        env="ACCELERATE_FP8_MARGIN",
        env_when="always",
        plugin=f"{TE}.margin",
        launcher_default=0,
        plugin_default=0,
        aliases=(("fp8_margin", None),),
        since="0.34",
    ),
    _s(
        _P8,
        "interval",
        "int",
        "TE: how often the scaling factor is recomputed.",
        flag="fp8_interval",
        env="ACCELERATE_FP8_INTERVAL",
        env_when="always",
        plugin=f"{TE}.interval",
        launcher_default=1,
        plugin_default=1,
        aliases=(("fp8_interval", None),),
        since="0.34",
    ),
    _s(
        _P8,
        "fp8_format",
        "enum",
        "TE: FP8 format.",
        flag="fp8_format",
        env="ACCELERATE_FP8_FORMAT",
        env_when="always",
        plugin=f"{TE}.fp8_format",
        launcher_default="HYBRID",
        plugin_default="HYBRID",
        choices=FP8_FORMATS,
        case_insensitive=True,
        aliases=(("format", None),),
        since="0.34",
        older_launcher_defaults=(("1.8", "E4M3"),),
        versions_note="launcher default E4M3 until 1.7, HYBRID from 1.8",
    ),
    _s(
        _P8,
        "amax_history_len",
        "int",
        "TE: length of the amax history window. (`accelerate config` writes `amax_history_length`, which nothing "
        "reads.)",
        flag="fp8_amax_history_len",
        env="ACCELERATE_FP8_AMAX_HISTORY_LEN",
        env_when="always",
        plugin=f"{TE}.amax_history_len",
        launcher_default=1024,
        plugin_default=1024,
        aliases=(("fp8_amax_history_len", None),),
        since="0.34",
    ),
    _s(
        _P8,
        "amax_compute_algo",
        "enum",
        "TE: how amax is computed. (`accelerate config` writes `amax_compute_algorithm`, which nothing reads.)",
        flag="fp8_amax_compute_algo",
        env="ACCELERATE_FP8_AMAX_COMPUTE_ALGO",
        env_when="always",
        plugin=f"{TE}.amax_compute_algo",
        launcher_default="most_recent",
        plugin_default="most_recent",
        choices=("max", "most_recent"),
        case_insensitive=True,
        aliases=(("fp8_amax_compute_algo", None),),
        since="0.34",
    ),
    _s(
        _P8,
        "override_linear_precision",
        "list",
        "TE: three booleans (fprop, dgrad, wgrad) to run in higher precision.",
        flag="fp8_override_linear_precision",
        env="ACCELERATE_FP8_OVERRIDE_FPROP",
        env_when="always",
        plugin=f"{TE}.override_linear_precision",
        launcher_default=(False, False, False),
        plugin_default=(False, False, False),
        aliases=(("fp8_override_linear_precision", None),),
        since="0.34",
    ),
    _s(
        _P8,
        "opt_level",
        "enum",
        "MS-AMP optimization level. (`accelerate config` writes `optimization_level`, which nothing reads.)",
        flag="fp8_opt_level",
        env="ACCELERATE_FP8_OPT_LEVEL",
        env_when="always",
        plugin=f"{MSAMP}.opt_level",
        launcher_default="O2",
        plugin_default="O2",
        choices=("O1", "O2"),
        aliases=(("fp8_opt_level", None),),
        since="0.34",
    ),
    _s(
        _P8,
        "enable_fsdp_float8_all_gather",
        "bool",
        "torchao: all-gather in float8 under FSDP2.",
        flag="fp8_enable_fsdp_float8_all_gather",
        env="ACCELERATE_FP8_ENABLE_FSDP_FLOAT8_ALL_GATHER",
        env_when="always",
        plugin=f"{AO}.enable_fsdp_float8_all_gather",
        launcher_default=True,
        plugin_default=True,
        aliases=(("fp8_enable_fsdp_float8_all_gather", None),),
        since="1.13",
    ),
    _s(
        _P8,
        "pad_inner_dim",
        "bool",
        "torchao: pad inner dimensions to multiples of 16.",
        flag="fp8_pad_inner_dim",
        env="ACCELERATE_FP8_PAD_INNER_DIM",
        env_when="always",
        plugin=f"{AO}.pad_inner_dim",
        launcher_default=True,
        plugin_default=True,
        aliases=(("fp8_pad_inner_dim", None),),
        since="1.13",
    ),
    # Keys the 1.x wizard writes that reach nothing (exported under names no reader uses).
    _s(
        _P8,
        "amax_history_length",
        "int",
        "Written by `accelerate config`, but exported as `ACCELERATE_FP8_AMAX_HISTORY_LENGTH`, which nothing reads. "
        "Use `amax_history_len`.",
        flag=None,
        since="0.34",
        lost=True,
        deprecated="no effect: rename to `amax_history_len`",
    ),
    _s(
        _P8,
        "amax_compute_algorithm",
        "enum",
        "Written by `accelerate config`, but nothing reads it. Use `amax_compute_algo`.",
        flag=None,
        choices=("max", "most_recent"),
        since="0.34",
        lost=True,
        deprecated="no effect: rename to `amax_compute_algo`",
    ),
    _s(
        _P8,
        "optimization_level",
        "enum",
        "Written by `accelerate config`, but nothing reads it. Use `opt_level`.",
        flag=None,
        choices=("O1", "O2"),
        since="0.34",
        lost=True,
        deprecated="no effect: rename to `opt_level`",
    ),
]

_DY = "dynamo_config"
_DYNAMO: list[Setting] = [
    _s(
        _DY,
        "dynamo_backend",
        "enum",
        "torch.compile backend (`NO` disables compilation). Any case.",
        env="ACCELERATE_DYNAMO_BACKEND",
        encoding="upper",
        env_when="always",
        env_paths="STM",
        plugin=f"{DYN}.backend",
        launcher_default="NO",
        plugin_default="NO",
        choices=DYNAMO_BACKENDS,
        case_insensitive=True,
        aliases=(("backend", "1.14"),),
    ),
    _s(
        _DY,
        "dynamo_mode",
        "enum",
        "torch.compile mode.",
        env="ACCELERATE_DYNAMO_MODE",
        encoding="raw",
        env_when="always",
        env_paths="STM",
        plugin=f"{DYN}.mode",
        launcher_default="default",
        plugin_default="default",
        choices=DYNAMO_MODES,
        aliases=(("mode", "1.14"),),
    ),
    _s(
        _DY,
        "dynamo_use_fullgraph",
        "bool",
        "torch.compile fullgraph=True.",
        env="ACCELERATE_DYNAMO_USE_FULLGRAPH",
        encoding="title",
        env_when="always",
        env_paths="STM",
        plugin=f"{DYN}.fullgraph",
        launcher_default=False,
        plugin_default=False,
        aliases=(("use_fullgraph", "1.14"),),
    ),
    _s(
        _DY,
        "dynamo_use_dynamic",
        "bool",
        "torch.compile dynamic=True.",
        env="ACCELERATE_DYNAMO_USE_DYNAMIC",
        encoding="title",
        env_when="always",
        env_paths="STM",
        plugin=f"{DYN}.dynamic",
        launcher_default=False,
        plugin_default=None,
        aliases=(("use_dynamic", "1.14"),),
    ),
    _s(
        _DY,
        "dynamo_use_regional_compilation",
        "bool",
        "Compile repeated blocks once (regional compilation).",
        env="ACCELERATE_DYNAMO_USE_REGIONAL_COMPILATION",
        encoding="title",
        env_when="always",
        env_paths="STM",
        plugin=f"{DYN}.use_regional_compilation",
        launcher_default=False,
        plugin_default=False,
        since="1.7",
        aliases=(("use_regional_compilation", "1.14"),),
        before_since=(False,),
    ),
]

_M = "megatron_lm_config"


def _meg(key: str, type_: str, doc: str, **kw: Any) -> Setting:
    full = f"megatron_lm_{key}"
    kw.setdefault("env", f"MEGATRON_LM_{key.upper()}")
    kw.setdefault("env_paths", "T")
    kw.setdefault("plugin", f"{MEG}.{key}")
    return _s(_M, full, type_, doc, **kw)


_MEGATRON: list[Setting] = [
    _meg(
        "tp_degree",
        "int",
        "Tensor parallel degree.",
        env_when="always",
        launcher_default=1,
        plugin_default=1,
        minimum=1,
    ),
    _meg(
        "pp_degree",
        "int",
        "Pipeline parallel degree.",
        env_when="always",
        launcher_default=1,
        plugin_default=1,
        minimum=1,
    ),
    _meg("num_micro_batches", "int", "Micro batches per pipeline step.", plugin_default=1, minimum=1),
    _meg(
        "sequence_parallelism",
        "boolish",
        "Sequence parallelism (needs tp_degree > 1).",
        plugin_default=False,
        plugin=f"{MEG}.sequence_parallelism",
    ),
    _meg("recompute_activations", "boolish", "Selective activation recomputation."),
    _meg("use_distributed_optimizer", "boolish", "Shard optimizer state across data parallel ranks."),
    _meg(
        "gradient_clipping",
        "float",
        "Gradient clipping (global norm).",
        env_when="always",
        launcher_default=1.0,
        plugin_default=1.0,
    ),
    _meg(
        "use_custom_fsdp",
        "bool",
        "Megatron's custom FSDP. (The flag is `type=bool`: any non-empty value, even `False`, is true.)",
        env_when="always",
        launcher_default=False,
        plugin_default=False,
        since="1.13",
        too_new="error",
        before_since=(False,),
    ),
    _meg(
        "no_load_optim",
        "bool",
        "Do not load optimizer state from checkpoints.",
        env_when="always",
        launcher_default=False,
        plugin_default=False,
        since="1.13",
        before_since=(False,),
    ),
    _meg(
        "eod_mask_loss",
        "bool",
        "Mask the loss at end-of-document tokens.",
        env_when="always",
        launcher_default=False,
        plugin_default=False,
        since="1.13",
        before_since=(False,),
    ),
    _meg(
        "overlap_cpu_optimizer_d2h_h2d",
        "bool",
        "Overlap CPU optimizer transfers.",
        env_when="always",
        launcher_default=False,
        plugin_default=False,
        since="1.13",
        before_since=(False,),
    ),
    _meg(
        "no_save_optim",
        "bool",
        "Do not save optimizer state.",
        env_when="always",
        launcher_default=False,
        plugin_default=False,
        since="1.13",
        before_since=(False,),
    ),
    _meg(
        "optimizer_cpu_offload",
        "bool",
        "Offload the optimizer to the CPU.",
        env_when="always",
        launcher_default=False,
        plugin_default=False,
        since="1.13",
        before_since=(False,),
    ),
    _meg(
        "use_precision_aware_optimizer",
        "bool",
        "Precision-aware optimizer.",
        env_when="always",
        launcher_default=False,
        plugin_default=False,
        since="1.13",
        before_since=(False,),
    ),
    _meg("decoder_last_pipeline_num_layers", "int", "Layers in the last pipeline stage.", since="1.13"),
    _meg(
        "recompute_granularity",
        "enum",
        "Activation recomputation granularity.",
        choices=("full", "selective"),
        plugin_default="full",
        since="1.13",
    ),
    _meg(
        "recompute_method",
        "enum",
        "Activation recomputation method.",
        choices=("uniform", "block"),
        plugin_default="uniform",
        since="1.13",
    ),
    _meg("recompute_num_layers", "int", "Layers per recomputation unit.", plugin_default=1, since="1.13"),
    _meg(
        "attention_backend", "boolish", "Use Megatron's attention backend selection.", plugin_default=True, since="1.13"
    ),
    _meg(
        "expert_model_parallel_size",
        "int",
        "Expert (MoE) model parallel size.",
        plugin_default=1,
        since="1.13",
        too_new="error",
        before_since=(1,),
    ),
    _meg(
        "context_parallel_size",
        "int",
        "Context parallel size.",
        plugin_default=2,
        since="1.13",
        too_new="error",
        before_since=(1,),
    ),
    _meg("attention_dropout", "float", "Attention dropout.", plugin_default=0.0, since="1.13"),
    _meg("hidden_dropout", "float", "Hidden dropout.", plugin_default=0.0, since="1.13"),
    _meg(
        "attention_softmax_in_fp32", "boolish", "Compute attention softmax in fp32.", plugin_default=True, since="1.13"
    ),
    _meg(
        "expert_tensor_parallel_size",
        "int",
        "Expert tensor parallel size.",
        plugin_default=1,
        since="1.13",
        too_new="error",
    ),
    _meg("calculate_per_token_loss", "boolish", "Average the loss per token.", plugin_default=True, since="1.13"),
    _meg("use_rotary_position_embeddings", "boolish", "Rotary position embeddings.", plugin_default=True, since="1.13"),
]

_MPI = "mpirun_config"
_MPIRUN: list[Setting] = [
    _s(
        _MPI,
        "mpirun_hostfile",
        "path",
        "Hostfile: the simple launcher then runs under `mpirun`/`mpiexec` (MULTI_CPU).",
        since="0.28",
    ),
    _s(
        _MPI,
        "mpirun_ccl",
        "int",
        "oneCCL worker count (exported as `CCL_WORKER_COUNT`). Ignored since 1.13.",
        env="CCL_WORKER_COUNT",
        since="0.28",
        until="1.13",
        launcher_default=1,
        env_paths="S",
        deprecated="`mpirun_ccl` is ignored since accelerate 1.13",
    ),
]

_PC = "parallelism_config"


def _par(key: str, type_: str, doc: str, plugin: str, **kw: Any) -> Setting:
    full = f"parallelism_config_{key}"
    kw.setdefault("env", f"PARALLELISM_CONFIG_{key.upper()}")
    kw.setdefault("env_paths", "TD")
    kw.setdefault("since", "1.10")
    return _s(_PC, full, type_, doc, plugin=plugin, **kw)


_PARALLELISM: list[Setting] = [
    _par(
        "dp_replicate_size",
        "int",
        "Data parallel replicas (DDP / HSDP replicate dimension).",
        f"{PAR}.dp_replicate_size",
        env_when="always",
        launcher_default=1,
        plugin_default=1,
        minimum=1,
    ),
    _par(
        "dp_shard_size",
        "int",
        "Data parallel shards (FSDP2 shard dimension).",
        f"{PAR}.dp_shard_size",
        env_when="always",
        launcher_default=1,
        plugin_default=1,
        minimum=1,
    ),
    _par(
        "tp_size",
        "int",
        "Tensor parallel size (torch 2.3+, transformers 4.52+).",
        f"{PAR}.tp_size",
        env_when="always",
        launcher_default=1,
        plugin_default=1,
        minimum=1,
    ),
    _par(
        "cp_size",
        "int",
        "Context parallel size (torch 2.6+, FSDP2).",
        f"{PAR}.cp_size",
        env_when="always",
        launcher_default=1,
        plugin_default=1,
        minimum=1,
    ),
    _par(
        "cp_comm_strategy",
        "enum",
        "Context parallel communication strategy (only exported when cp_size > 1).",
        "TorchContextParallelConfig.cp_comm_strategy",
        choices=("allgather", "alltoall"),
        launcher_default="allgather",
        plugin_default="allgather",
    ),
    _par(
        "cp_backend",
        "enum",
        "Context parallel backend.",
        f"{PAR}.cp_backend",
        choices=("torch",),
        env_when="always",
        launcher_default="torch",
        plugin_default="torch",
        since="1.12",
        before_since=("torch",),
    ),
    _par(
        "sp_size",
        "int",
        "Sequence parallel size (DeepSpeed Ulysses/ALST; DeepSpeed 0.18.2+).",
        f"{PAR}.sp_size",
        env_when="always",
        launcher_default=1,
        plugin_default=1,
        minimum=1,
        since="1.12",
        too_new="error",
        before_since=(1,),
    ),
    _par(
        "sp_backend",
        "enum",
        "Sequence parallel backend.",
        f"{PAR}.sp_backend",
        choices=("deepspeed",),
        env_when="always",
        launcher_default="deepspeed",
        plugin_default="deepspeed",
        since="1.12",
    ),
    _par(
        "sp_seq_length",
        "int",
        "Sequence length for sequence parallelism (only exported when sp_size > 1).",
        "DeepSpeedSequenceParallelConfig.sp_seq_length",
        since="1.12",
    ),
    _par(
        "sp_seq_length_is_variable",
        "bool",
        "Whether sequence length varies (only exported when sp_size > 1).",
        "DeepSpeedSequenceParallelConfig.sp_seq_length_is_variable",
        launcher_default=True,
        plugin_default=True,
        since="1.12",
    ),
    _par(
        "sp_attn_implementation",
        "str",
        "Attention implementation: `flash_attention_2`, `flash_attention_3`, `sdpa`, or a hub kernel id (only "
        "exported when sp_size > 1).",
        "DeepSpeedSequenceParallelConfig.sp_attn_implementation",
        launcher_default="sdpa",
        since="1.12",
    ),
]

_IPEX: list[Setting] = [
    _s("ipex_config", "ipex", "bool", "Use Intel Extension for PyTorch (removed in 1.13).", flag="ipex", until="1.13"),
    _s("ipex_config", "use_xpu", "bool", "Use Intel XPU (removed in 1.6).", flag="use_xpu", until="1.6"),
]
_TP: list[Setting] = [_s("tp_config", "tp_size", "int", "Tensor parallel size (1.4 to 1.6).", since="1.4", until="1.7")]

SECTIONS: dict[str, Section] = {
    "": Section("", "Top level of an accelerate config file (`ClusterConfig`)."),
    "fsdp_config": Section(
        "fsdp_config",
        "FSDP settings, read when `distributed_type: FSDP`.",
        prefix="fsdp_",
        prefix_optional_since=None,
        plugin=FSDP,
        active_when=("distributed_type", "FSDP"),
    ),
    "deepspeed_config": Section(
        "deepspeed_config",
        "DeepSpeed settings, read when `distributed_type: DEEPSPEED`.",
        plugin=DS,
        active_when=("distributed_type", "DEEPSPEED"),
    ),
    "fp8_config": Section(
        "fp8_config",
        "FP8 recipe, read when `mixed_precision: fp8`.",
        prefix="fp8_",
        prefix_optional_since=None,
        since="0.34",
        active_when=("mixed_precision", "fp8"),
    ),
    "dynamo_config": Section(
        "dynamo_config", "torch.compile settings.", prefix="dynamo_", prefix_optional_since="1.14", plugin=DYN
    ),
    "megatron_lm_config": Section(
        "megatron_lm_config",
        "Megatron-LM settings (full `megatron_lm_` names required).",
        plugin=MEG,
        active_when=("distributed_type", "MEGATRON_LM"),
    ),
    "mpirun_config": Section(
        "mpirun_config", "mpirun settings for MULTI_CPU.", since="0.28", active_when=("distributed_type", "MULTI_CPU")
    ),
    "parallelism_config": Section(
        "parallelism_config", "N-D parallelism (full `parallelism_config_` names required).", since="1.10", plugin=PAR
    ),
    "ipex_config": Section("ipex_config", "Removed in 1.13.", until="1.13", removed_note="removed in accelerate 1.13"),
    "tp_config": Section(
        "tp_config",
        "Existed in 1.4 to 1.6.",
        since="1.4",
        until="1.7",
        removed_note="existed only in accelerate 1.4 to 1.6",
    ),
}

SETTINGS: tuple[Setting, ...] = tuple(
    _TOP + _SAGEMAKER + _FSDP + _DEEPSPEED + _FP8 + _DYNAMO + _MEGATRON + _MPIRUN + _PARALLELISM + _IPEX + _TP
)
SAGEMAKER_KEYS = frozenset(s.key for s in _SAGEMAKER) | {
    "compute_environment",
    "distributed_type",
    "mixed_precision",
    "use_cpu",
    "debug",
    "num_machines",
    "gpu_ids",
    "dynamo_config",
    "enable_cpu_affinity",
}
# Keys the top-level dataclass accepts (ClusterConfig), for the unknown-key check.
CLUSTER_ONLY_KEYS = frozenset(s.key for s in _TOP) - {"fp16", "dynamo_backend"}


@cache
def _index() -> dict[tuple[str, str], Setting]:
    out: dict[tuple[str, str], Setting] = {}
    for s in SETTINGS:
        out[(s.section, s.key)] = s
    return out


@cache
def _alias_index() -> dict[tuple[str, str], tuple[Setting, str | None]]:
    out: dict[tuple[str, str], tuple[Setting, str | None]] = {}
    for s in SETTINGS:
        for alias, since in s.aliases:
            out[(s.section, alias)] = (s, since)
        sec = SECTIONS.get(s.section)
        if (
            sec is not None
            and sec.prefix
            and s.key.startswith(sec.prefix)
            and s.section in ("fsdp_config", "dynamo_config")
        ):
            short = s.key[len(sec.prefix) :]
            out.setdefault((s.section, short), (s, sec.prefix_optional_since))
    return out


def section_active(section: str, data: Any) -> bool:
    """Whether a section takes effect in a config's top-level ``data`` (a dict, or a Config with
    ``get``): its ``active_when`` value is set there, in canonical spelling (``mixed_precision``
    compared in lower case, ``distributed_type`` exactly, as accelerate reads them)."""
    sec = SECTIONS.get(section)
    need = sec.active_when if sec is not None else None
    if need is None:
        return True
    key, want = need
    value = data.get(key) if hasattr(data, "get") else None
    if key == "mixed_precision" and isinstance(value, str):
        value = value.lower()
    return bool(value == want)


def get(section: str, key: str) -> Setting | None:
    """The setting with this canonical key."""
    return _index().get((section, key))


def lookup(section: str, key: str, version: str | None = None) -> tuple[Setting | None, str]:
    """Resolve a key as written in a file. Returns (setting, how) where how is
    ``canonical``, ``alias`` (accepted other spelling), ``alias-too-new`` (an alias that this
    version ignores) or ``unknown``."""
    s = _index().get((section, key))
    if s is not None:
        return s, "canonical"
    hit = _alias_index().get((section, key))
    if hit is not None:
        setting, since = hit
        if since is not None and version is not None and not version_in(version, since, None):
            return setting, "alias-too-new"
        return setting, "alias"
    return None, "unknown"


def settings_in(section: str, version: str | None = None, include_removed: bool = False) -> list[Setting]:
    out = [s for s in SETTINGS if s.section == section]
    if version is not None and not include_removed:
        out = [s for s in out if s.exists_in(version)]
    return out


def by_env(name: str) -> Setting | None:
    for s in SETTINGS:
        if s.env == name:
            return s
    return None


def by_flag(flag: str) -> Setting | None:
    flag = flag.lstrip("-").replace("-", "_")
    for s in SETTINGS:
        if s.flag == flag:
            return s
    return None


def by_plugin(cls: str, field_name: str) -> Setting | None:
    want = f"{cls}.{field_name}"
    for s in SETTINGS:
        if s.plugin == want:
            return s
    return None


def deepspeed_json_keys() -> dict[str, str]:
    """accelerate ``deepspeed_config`` key -> the same setting's dotted path in a DeepSpeed JSON. With
    ``deepspeed_config_file`` set, exactly these keys (and a top-level ``mixed_precision``) make
    accelerate raise at training time."""
    return {s.key: s.ds_json for s in SETTINGS if s.section == "deepspeed_config" and s.ds_json}


def all_keys(section: str) -> list[str]:
    return [s.key for s in SETTINGS if s.section == section]


def enum_exists(setting: Setting, value: Any, version: str) -> bool:
    """Whether an enum value exists in that accelerate version (distributed types and dynamo backends changed)."""
    if setting.key == "distributed_type" and isinstance(value, str):
        return version_in(version, DISTRIBUTED_TYPE_SINCE.get(value), DISTRIBUTED_TYPE_UNTIL.get(value))
    if setting.key == "dynamo_backend" and isinstance(value, str):
        v = value.upper()
        return version_in(version, DYNAMO_BACKEND_SINCE.get(v), DYNAMO_BACKEND_UNTIL.get(v))
    return True


def enum_choices(setting: Setting, version: str | None) -> tuple[Any, ...]:
    """An enum's choices in that release: the newest release's, and the dynamo backends an older
    release still has (IPEX until 1.13)."""
    choices = setting.choices or ()
    if setting.key == "dynamo_backend" and version is not None:
        choices += tuple(v for v in DYNAMO_BACKEND_UNTIL if v not in choices and enum_exists(setting, v, version))
    return choices


def iter_settings(sections: Iterable[str] | None = None) -> Iterable[Setting]:
    wanted = set(sections) if sections is not None else None
    for s in SETTINGS:
        if wanted is None or s.section in wanted:
            yield s


# -- a value as accelerate reads it --------------------------------------------------------------

REFUSED: Any = object()  # what read_value gives for a value accelerate refuses (validate reports it)


def read_value(setting: Setting, value: Any, version: str | None = None, *, from_file: bool = True) -> Any:
    """A setting's value as accelerate ``version`` reads it (``None``: the newest), or :data:`REFUSED`.

    What a file gives is read as PyYAML loaded it: an integer setting takes an integer only (a string
    reaches ``num_machines > 1`` and raises), an enum takes its choices exactly (``DistributedType
    ('multi_gpu')`` raises ValueError) unless the setting ignores case, a legacy spelling reads as
    the value it stands for; a boolean setting takes booleans and the truth words the plugins read
    (``str_to_bool``). ``from_file=False``: a string from an env var or a flag, which the launcher
    converts first. ``None`` (unset, or null) stays ``None``.
    """
    if value is None:
        return None
    reader = _READERS.get(setting.path) or _READERS.get(setting.type)
    return reader(setting, value, resolve_version(version), from_file) if reader else value


def _read_distributed_type(s: Setting, v: Any, version: str, from_file: bool) -> Any:
    if isinstance(v, bool):
        return "NO"  # no DistributedType equals a boolean: the launcher takes its one-process path
    if not isinstance(v, str) or (v not in DISTRIBUTED_TYPES and v not in DISTRIBUTED_TYPE_UNTIL):
        return REFUSED
    return v if enum_exists(s, v, version) else REFUSED


def _read_mixed_precision(s: Setting, v: Any, version: str, from_file: bool) -> Any:
    if v is False and from_file and releases.has(version, "yaml-false-precision-no"):
        return "no"  # load_config_from_file turns an unquoted `no` back into 'no' before 0.34
    if not isinstance(v, str) or v.lower() not in PRECISIONS:
        return REFUSED
    return v.lower()  # the launcher lower-cases it


def _read_enum(s: Setting, v: Any, version: str, from_file: bool) -> Any:
    choices = enum_choices(s, version)
    canon = s.canonical_value(v)
    exact = any(v == c and type(v) is type(c) for c in choices)
    legacy = any(v == old and type(v) is type(old) for old, _ in s.legacy_values)
    other_case = (
        isinstance(v, str)
        and canon in choices
        and (s.case_insensitive or (s.key == "backend" and not releases.has(version, "fp8-backend-enum")))
    )
    digits = isinstance(v, str) and isinstance(canon, int) and canon in choices  # zero_stage: '2'
    if not (exact or legacy or other_case or digits) or not choices:
        return REFUSED if choices else v
    return canon if enum_exists(s, canon, version) else REFUSED


def _read_int(s: Setting, v: Any, version: str, from_file: bool) -> Any:
    if isinstance(v, int) and not isinstance(v, bool):
        return v
    if not from_file and isinstance(v, str) and v.strip().lstrip("-").isdigit():
        return int(v)
    return REFUSED


def _read_bool(s: Setting, v: Any, version: str, from_file: bool) -> Any:
    if isinstance(v, bool):
        return v
    low = v.strip().lower() if isinstance(v, str) else None
    return True if low in TRUE_WORDS else False if low in FALSE_WORDS else REFUSED


def _read_str(s: Setting, v: Any, version: str, from_file: bool) -> Any:
    return v if isinstance(v, str) else REFUSED


_READERS: dict[str, Any] = {
    "distributed_type": _read_distributed_type,
    "mixed_precision": _read_mixed_precision,
    "enum": _read_enum,
    "int": _read_int,
    "bool": _read_bool,
    "str": _read_str,
    "path": _read_str,
    "classlist": _read_str,
}
