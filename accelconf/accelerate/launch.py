"""A pure re-implementation of ``accelerate launch``: config (+ explicit flags) -> child environment.

This module owns the launcher's merge and export logic (accelerate ``commands/launch.py``
``_validate_launch_command`` and ``utils/launch.py`` ``prepare_*_env``) for one accelerate version.
It emulates the argparse namespace accelerate builds: every flag starts at its argparse default
(derived from the registry), the config file fills it with accelerate's rules (top-level keys only
where the flag default is ``None``; nested keys always in <= 1.4, unless the flag was explicit from
1.5), and the environment is then written per launcher path. Names of keys, flags, namespace
attributes and environment variables all come from :mod:`accelconf.accelerate.registry`; what lives here is
only the launcher's control flow (paradigm flags, rendezvous, thread count).

The environment is the *delta* ``accelerate launch`` adds to an empty shell: variables the shell
already had are not modelled. ``PYTHONPATH`` (DeepSpeed path only) is the absolute working directory
given as ``cwd`` (default: the current directory), which is what accelerate appends to an empty
``PYTHONPATH``. ``OMP_NUM_THREADS`` assumes ``OMP_NUM_THREADS`` is unset in the shell; with
``use_cpu`` accelerate then divides the physical core count by the local process count, which is
only modelled when ``physical_cores`` is given (otherwise a finding says so).

A config accelerate refuses to launch raises :class:`LaunchError` with accelerate's own message.
Nothing here imports accelerate or torch.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from functools import cache
from typing import Any

from accelconf import releases
from accelconf.accelerate import registry
from accelconf.accelerate.model import Config, Entry, canonical
from accelconf.accelerate.registry import Setting
from accelconf.errors import InputError, UsageError
from accelconf.findings import Finding
from accelconf.records import Record

Mode = str  # "simple" | "torchrun" | "deepspeed" | "tpu" | "sagemaker"

# Launcher control flags (not settings: they select the launcher path). distributed_type -> flag.
PARADIGM_FLAGS = ("multi_gpu", "tpu", "use_deepspeed", "use_fsdp", "use_megatron_lm")
PARADIGM_OF_TYPE: dict[str, str] = {
    "DEEPSPEED": "use_deepspeed",
    "FSDP": "use_fsdp",
    "MEGATRON_LM": "use_megatron_lm",
    "XLA": "tpu",
    **{t: "multi_gpu" for t in registry.MULTI_GPU_TYPES},
}
TYPE_OF_PARADIGM: dict[str, str] = {
    "use_deepspeed": "DEEPSPEED",
    "use_fsdp": "FSDP",
    "use_megatron_lm": "MEGATRON_LM",
    "tpu": "XLA",
    "multi_gpu": "MULTI_GPU",
}
# Launcher-only flags a command line may carry (kept in Config.unknown under "--name").
LAUNCHER_FLAGS: dict[str, str] = {
    "num_cpu_threads_per_process": "int",
    "use_parallelism_config": "store_true",
    "rdzv_conf": "str",
    "max_restarts": "int",
    "monitor_interval": "float",
    "module": "store_true",
    "no_python": "store_true",
    "quiet": "store_true",
    "role": "str",
    "tee": "str",
    "log_dir": "str",
}
PATH_LETTER = {"simple": "S", "torchrun": "T", "deepspeed": "D", "tpu": "X", "sagemaker": "M"}
# Flags whose argparse default is None and whose launcher default is filled in by
# _validate_launch_command (so that a config file can still set them).
FILLED_LATER = frozenset({"dynamo_config.dynamo_backend"})
# Flag defaults that changed: path -> ((first version with the registry's default, older default), ...).
# From the registry's versions_note, checked against the wheels.
# (section, prefix, first release that adds it): the registry's sections say when their prefix is added.
NESTED_PREFIX_RULES: tuple[tuple[str, str, str | None], ...] = tuple(
    (name, sec.prefix, sec.prefix_optional_since or sec.since)
    for name, sec in ((n, registry.SECTIONS[n]) for n in ("fsdp_config", "fp8_config", "dynamo_config"))
    if sec.prefix
)


# The launcher's per-release differences (accelconf.releases.LAUNCHER: one table for every boundary).
Change = releases.Change
CHANGES: dict[str, releases.Change] = releases.LAUNCHER


def changed(version: str, name: str) -> bool:
    """Whether release ``version`` has the launcher behaviour ``CHANGES[name]``."""
    return releases.has(version, name)


class LaunchError(InputError):
    """accelerate launch would refuse this configuration (its own message is kept)."""


def machine_rank_outside(rank: Any, machines: Any, name: str = "`machine_rank`") -> str | None:
    """What is wrong with a machine rank that names no machine of ``num_machines`` (``None``: it
    names one, or either is not a whole number). ``name`` says how the rank was given (the key, or
    a command-line option): every place that judges a machine rank uses this bound, validate's rule
    for the key as well as the launcher's refusal of ``--machine-rank`` below."""
    whole = all(isinstance(v, int) and not isinstance(v, bool) for v in (rank, machines))
    if not whole or 0 <= rank < machines:
        return None
    return f"{name} {rank} is outside 0..{machines - 1}"


def refuse_machine_rank(rank: int, machines: int, where: str, flag: str = "--machine-rank") -> None:
    """A machine rank given on the command line names a machine of the job, by validate's rule for
    ``machine_rank`` in a file; else a :class:`UsageError` (torchrun would wait for the missing node)."""
    problem = machine_rank_outside(rank, machines, flag)
    if problem:
        raise UsageError(
            f"{problem}: num_machines is {machines} ({where}), so no node has that rank "
            "and torchrun would wait for it forever"
        )


class LaunchResult(Record):
    """What ``accelerate launch`` does with a configuration.

    ``env``: the variables it writes for the training process (added to an empty shell).
    ``torchrun``: the arguments it passes to ``torch.distributed.run`` (torchrun and multi-node
    DeepSpeed ``standard`` paths). ``cmd``: the command line of the DeepSpeed multi-node launcher or
    of ``mpirun`` (without the training script), else ``None``. ``findings``: what env cannot carry,
    or what the launcher drops.
    """

    _fields = ("mode", "env", "torchrun", "cmd", "findings", "explicit", "namespace", "origins")

    def __init__(
        self,
        mode: Mode,
        env: dict[str, str],
        torchrun: dict[str, Any] | None = None,
        cmd: list[str] | None = None,
        findings: list[Finding] | None = None,
        explicit: frozenset[str] = frozenset(),
        namespace: dict[str, Any] | None = None,
        origins: dict[str, str] | None = None,
    ) -> None:
        self.mode, self.env, self.cmd = mode, env, cmd
        self.torchrun: dict[str, Any] = {} if torchrun is None else torchrun
        self.findings: list[Finding] = [] if findings is None else findings
        self.explicit = explicit  # namespace attributes given on the command line
        # the final argparse namespace (emulated)
        self.namespace: dict[str, Any] = {} if namespace is None else namespace
        self.origins: dict[str, str] = {} if origins is None else origins  # attribute -> "cli" | "file" | "default"


# -- argparse emulation ---------------------------------------------------------------------------


def flag_kind(s: Setting) -> str:
    """How ``accelerate launch`` parses the flag of a setting (its argparse action/type).

    One of ``store_true``, ``bool`` (``type=bool``: any non-empty string is true), ``str_to_bool``
    (0/1), ``int``, ``float``, ``list3`` (three comma-separated booleans) or ``str``.
    ``tests/oracle/test_oracle_launch.py`` checks this against accelerate's own parser.
    """
    sec, t = s.section, s.type
    if sec == "":
        if t == "bool":
            return "store_true"
        return "int" if t == "int" else "str"
    if sec == "dynamo_config":
        return "store_true" if t == "bool" else "str"
    if sec == "fp8_config":
        if t == "bool":
            return "store_true" if s.launcher_default is False else "str_to_bool"
        if t == "list":
            return "list3"
        return "int" if t == "int" else "str"
    if sec in ("megatron_lm_config", "parallelism_config"):
        if t == "bool":
            return "bool"
        if t == "int" and s.plugin and not s.plugin.startswith("DeepSpeedSequenceParallelConfig"):
            return "int"
        return "float" if t == "float" else "str"
    if sec == "deepspeed_config":
        if t == "int" or (t == "enum" and s.choices and all(isinstance(c, int) for c in s.choices)):
            return "int"
        return "float" if t == "float" else "str"
    if sec in ("fsdp_config", "mpirun_config"):
        return "int" if t == "int" else "str"
    return "str"


def argparse_default(s: Setting, version: str | None = None) -> Any:
    """The namespace value of a flag that was not given (argparse converts string defaults)."""
    kind = flag_kind(s)
    if s.section == "":
        if s.file_ignored:
            return s.launcher_default
        return False if kind == "store_true" and s.namespace != s.key else None
    if s.path in FILLED_LATER:
        return None
    d = s.launcher_default_for(version)
    if kind == "store_true":
        return False
    if kind == "str_to_bool":
        return None if d is None else (1 if d else 0)
    if kind == "str" and isinstance(d, bool):
        return str(d).lower()
    if kind == "str" and isinstance(d, int):
        return str(d)
    return d


def parse_flag_value(s: Setting | None, kind: str, raw: str | None) -> Any:
    """Convert a command-line string as accelerate's parser would (raises ValueError like argparse)."""
    if kind == "store_true":
        return True
    assert raw is not None
    if kind == "int":
        return int(raw)
    if kind == "float":
        return float(raw)
    if kind == "bool":
        return bool(raw)
    if kind == "str_to_bool":
        return str_to_bool(raw)
    if kind == "list3":
        return tuple(str_to_bool(p) for p in raw.split(","))
    return raw


def namespace_value(s: Setting, value: Any) -> Any:
    """An explicit flag's value as accelerate's parser stores it (booleans of ``str_to_bool`` flags are 0/1)."""
    kind = flag_kind(s)
    if kind == "str_to_bool" and isinstance(value, bool):
        return int(value)
    if kind == "list3" and isinstance(value, (list, tuple)) and all(isinstance(v, bool) for v in value):
        return tuple(int(v) for v in value)
    return value


def str_to_bool(value: str) -> int:
    low = value.lower()
    if low in registry.TRUE_WORDS:
        return 1
    if low in registry.FALSE_WORDS:
        return 0
    raise ValueError(f"invalid truth value {value}")


def nested_attr(section: str, key: str, version: str) -> str:
    """The namespace attribute a nested config key is copied to (prefix rules per version)."""
    for sec, prefix, since in NESTED_PREFIX_RULES:
        if section != sec or (since and not _vin(version, since, None)):
            continue
        if sec == "fsdp_config" and not releases.has(version, "fsdp-prefix-startswith"):
            return key if "fsdp" in key else prefix + key  # <= 1.4: substring test
        if not key.startswith(prefix.rstrip("_") if sec != "dynamo_config" else prefix):
            return prefix + key
    return key


@cache
def _vin(version: str, since: str | None, until: str | None) -> bool:
    return registry.version_in(version, since, until)


@cache
def _settings(version: str) -> tuple[Setting, ...]:
    return tuple(s for s in registry.SETTINGS if _vin(version, s.since, s.until))


@cache
def _section(section: str, version: str) -> tuple[Setting, ...]:
    return tuple(s for s in _settings(version) if s.section == section)


@cache
def _flag_settings(version: str) -> dict[str, Setting]:
    return {s.namespace: s for s in _settings(version) if s.flag}


@cache
def resolve(version: str | None) -> str:
    """registry.resolve_version, once per process (reading the installed version costs milliseconds)."""
    return registry.resolve_version(version)


def _encode(s: Setting | None, value: Any) -> str:
    enc = s.encoding if s is not None else "str"
    if enc == "lower":
        return str(value).lower()
    if enc == "upper":
        return str(value).upper()
    if enc == "true_if":
        return "true"
    if enc == "flag1":
        return "1"
    return str(value)


def _finding(
    rule: str, severity: str, message: str, entry: Entry | None = None, key: str = "", suggestion: str | None = None
) -> Finding:
    if entry is not None:
        return Finding(rule, severity, message, key or entry.path, entry.line, entry.column, suggestion)  # type: ignore[arg-type]
    return Finding(rule, severity, message, key, 0, 0, suggestion)  # type: ignore[arg-type]


# -- the launcher ---------------------------------------------------------------------------------


def launch_env(
    cfg: Config | None,
    *,
    version: str | None = None,
    cli_overrides: Config | None = None,
    machine_rank: int | None = None,
    physical_cores: int | None = None,
    device_count: int = 0,
    cwd: str | None = None,
) -> LaunchResult:
    """What ``accelerate launch [flags] --config_file FILE`` gives the training process.

    ``cfg`` is the config file (``None``, or a Config read from a command line, for a launch without
    a file: then ``cli_overrides`` defaults to it). ``cli_overrides`` holds explicit flags (its
    entries' settings name the flags; ``distributed_type`` stands for the paradigm flag).
    Launcher-only flags a Config read from an environment carries (``OMP_NUM_THREADS`` as
    ``--num_cpu_threads_per_process``) count as explicit flags too. ``machine_rank`` acts as
    ``--machine_rank N``. ``device_count`` is what accelerate would detect without a config file
    (num_processes default). Raises :class:`LaunchError` where accelerate raises.
    """
    ver = resolve(version)
    findings: list[Finding] = []
    if cfg is not None and cfg.format == "cli" and cli_overrides is None:
        cfg, cli_overrides = None, cfg
    ns = _default_namespace(ver)
    origins: dict[str, str] = {name: "default" for name in ns}
    explicit: set[str] = set()
    # 1. explicit command-line flags
    _apply_flags(cfg, cli_overrides, machine_rank, ver, ns, explicit, origins, findings)
    # 2. sanity checks on the raw command line
    _check_flags(ns, ver)
    mp_from_config = False
    sagemaker = False
    ds_fields: list[str] = []
    if cfg is not None:
        mp_from_config, sagemaker, ds_fields = _apply_file(cfg, ver, ns, explicit, origins, findings)
    else:
        _apply_no_file(ns, device_count, findings)
    if not sagemaker and ns["num_cpu_threads_per_process"] is None:  # not on SageMaker
        _thread_count(ns, ver, physical_cores, findings)
    # 3. dispatch, as launch_command does
    mode = _dispatch(ns, sagemaker)
    env, torchrun, cmd = _prepare(mode, ns, ver, ds_fields, mp_from_config, cwd)
    findings.extend(_machine_findings(mode, ns, ver, env))
    result = LaunchResult(mode, env, torchrun, cmd, findings, frozenset(explicit), ns, origins)
    if cfg is not None:
        findings.extend(_file_findings(cfg, ver, mode, ns))
    findings.extend(_layout_findings(mode, ns, torchrun, cmd))
    return result


def _default_namespace(ver: str) -> dict[str, Any]:
    """The argparse namespace of `accelerate launch` with no flag given."""
    flags = _flag_settings(ver)
    ns: dict[str, Any] = {name: argparse_default(s, ver) for name, s in flags.items()}
    for name in PARADIGM_FLAGS:
        ns[name] = False
    ns.update(
        cpu=False,
        tpu_use_cluster=False,
        use_parallelism_config=False,
        dynamo_backend=None,
        mixed_precision=None,
        num_cpu_threads_per_process=None,
        module=None,
        no_python=None,
        debug=None,
    )
    return ns


def _apply_flags(
    cfg: Config | None,
    cli_overrides: Config | None,
    machine_rank: int | None,
    ver: str,
    ns: dict[str, Any],
    explicit: set[str],
    origins: dict[str, str],
    findings: list[Finding],
) -> None:
    """Explicit command-line flags, launcher-only flags and --machine_rank into the namespace."""
    if cli_overrides is not None:
        for path, e in cli_overrides.items():
            if path == "distributed_type":
                flag = PARADIGM_OF_TYPE.get(str(e.value))
                if flag:
                    ns[flag] = True
                    explicit.add(flag)
                    origins[flag] = "cli"
                continue
            s = e.setting
            if s is None or not s.flag:
                findings.append(
                    _finding("convert.no-flag", "warning", f"`{path}` has no `accelerate launch` flag; dropped", e)
                )
                continue
            if not _vin(ver, s.since, s.until):
                findings.append(
                    _finding("convert.version", "warning", f"`--{s.flag}` does not exist in accelerate {ver}", e)
                )
                continue
            ns[s.namespace] = namespace_value(s, e.value)
            explicit.add(s.namespace)
            origins[s.namespace] = "cli"
    # launcher-only flags: from the command line, or read back from the environment they produced
    for source in (cli_overrides, cfg if cfg is not None and cfg.format == "env" else None):
        for path, e in source.unknown.items() if source is not None else ():
            if path.startswith("--") and path[2:] in LAUNCHER_FLAGS and path[2:] not in explicit:
                ns[path[2:]] = e.value
                explicit.add(path[2:])
                origins[path[2:]] = "cli"
    if machine_rank is not None:
        ns["machine_rank"] = machine_rank
        explicit.add("machine_rank")
        origins["machine_rank"] = "cli"


def _check_flags(ns: dict[str, Any], ver: str) -> None:
    """The checks accelerate makes on the raw command line, before it reads a config file."""
    if sum(bool(ns[f]) for f in ("multi_gpu", "cpu", "tpu", "use_deepspeed", "use_fsdp")) > 1:
        raise LaunchError(
            "You can only use one of `--cpu`, `--multi_gpu`, `--tpu`, `--use_deepspeed`, `--use_fsdp` at a time."
        )
    if ns["multi_gpu"] and ns.get("num_processes") is not None and _num(ns["num_processes"]) < 2:
        raise LaunchError("You need to use at least 2 processes to use `--multi_gpu`.")
    if (
        changed(ver, "parallelism-config")
        and ns["use_parallelism_config"]
        and (not ns["use_fsdp"] or ns.get("fsdp_version") == 1)
    ):
        raise LaunchError("You cannot use `--use_parallelism_config` without `--use_fsdp` and `--fsdp_version=2`. ")


def _thread_count(ns: dict[str, Any], ver: str, physical_cores: int | None, findings: list[Finding]) -> None:
    """num_cpu_threads_per_process when neither flag nor file sets it (OMP_NUM_THREADS)."""
    ns["num_cpu_threads_per_process"] = 1
    if ns.get("use_cpu") and _num(ns.get("num_processes") or 0) >= 1:
        per_process = changed(ver, "omp-threads-per-process")
        local = max(int(_num(ns["num_processes"]) / _num(ns["num_machines"])), 1) if per_process else 1
        if physical_cores is not None:
            if int(physical_cores / local) > 1:
                ns["num_cpu_threads_per_process"] = int(physical_cores / local)
        else:
            formula = "physical cores / processes per machine" if per_process else "the number of physical cores"
            findings.append(
                _finding(
                    "convert.machine-dependent",
                    "info",
                    f"with use_cpu, accelerate {ver} sets OMP_NUM_THREADS to {formula} of the machine "
                    "it runs on (when the shell has no OMP_NUM_THREADS); written here as 1",
                    key="use_cpu",
                )
            )


def _dispatch(ns: dict[str, Any], sagemaker: bool) -> str:
    """The launcher path launch_command picks."""
    if ns["use_deepspeed"] and not ns["cpu"]:
        return "deepspeed"
    if (ns["use_fsdp"] or ns["use_megatron_lm"] or ns["multi_gpu"]) and not ns["cpu"]:
        return "torchrun"
    if ns["tpu"] and not ns["cpu"]:
        return "tpu"
    if sagemaker:
        return "sagemaker"
    return "simple"


def _num(v: Any) -> float:
    try:
        return float(v)
    except (TypeError, ValueError):
        return 0.0


def _apply_file(
    cfg: Config, ver: str, ns: dict[str, Any], explicit: set[str], origins: dict[str, str], findings: list[Finding]
) -> tuple[bool, bool, list[str]]:
    """The config branch of _validate_launch_command; returns (mp_from_config, sagemaker, ds fields)."""
    compute = cfg.get("compute_environment", "LOCAL_MACHINE")
    sagemaker = compute != "LOCAL_MACHINE"
    if "distributed_type" not in cfg and cfg.format in ("env", "kwargs"):
        cfg.set("distributed_type", "NO", origin="default")
    if "distributed_type" not in cfg:
        raise LaunchError("A `distributed_type` must be specified in the config file.")
    dtype = cfg.get("distributed_type")
    lenient = cfg.format in ("env", "kwargs")  # not a file: unknown names were reported by the reader
    _check_file_keys(cfg, ver, sagemaker, lenient)
    if sagemaker:
        if changed(ver, "sagemaker-cpu-affinity-unknown"):
            raise LaunchError(
                "The config file had unknown keys (['enable_cpu_affinity']): accelerate 0.29 adds this key "
                "while loading a SageMaker config, and its SageMakerConfig does not know it"
            )
        if changed(ver, "parallelism-config"):
            raise LaunchError("'SageMakerConfig' object has no attribute 'parallelism_config'")
        ns["sagemaker_distributed_type"] = dtype  # prepare_sagemager_args_inputs: distributed_type.value
    elif "num_processes" not in cfg and not lenient and not changed(ver, "num-processes-default"):
        raise LaunchError(
            "ClusterConfig.__init__() missing 1 required positional argument: 'num_processes' "
            f"(accelerate {ver} has no default for it; 0.34 added one)"
        )
    if (dtype == "NO" or lenient) and "num_processes" not in cfg:
        num_processes: Any = 1
        if lenient:
            findings.append(
                _finding("convert.default", "info", "no process count in the input: taken as 1", key="num_processes")
            )
    else:
        num_processes = cfg.get("num_processes", -1)
    if not any(ns[f] for f in ("multi_gpu", "tpu", "tpu_use_cluster", "use_deepspeed", "use_fsdp", "use_megatron_lm")):
        _file_paradigm(cfg, ver, dtype, ns, origins)
    _file_gpu_ids(cfg, ns, origins)
    ds_fields: list[str] = []
    if not sagemaker:
        ds_fields = _file_nested(cfg, ver, ns, explicit, origins)
        _file_top_level(cfg, ns, origins, num_processes)
    if not ns["debug"]:
        ns["debug"] = cfg.get("debug", False)
    mp_from_config = False
    if not ns["mixed_precision"]:
        mp = cfg.get("mixed_precision")
        if mp is None:
            ns["mixed_precision"] = "no"
        else:
            if mp is False and cfg.format == "yaml" and changed(ver, "yaml-false-precision-no"):
                mp = "no"
            ns["mixed_precision"] = mp
            origins["mixed_precision"] = "file"
            mp_from_config = True
    if ns["dynamo_backend"] is None:
        ns["dynamo_backend"] = "no"
    if ns.get("num_processes") == -1:
        raise LaunchError("You need to manually pass in `--num_processes` using this config yaml.")
    return mp_from_config, sagemaker, ds_fields


def _check_file_keys(cfg: Config, ver: str, sagemaker: bool, lenient: bool) -> None:
    """Unknown top-level keys fail loading (nested dicts count by their section name)."""
    allowed = registry.SAGEMAKER_KEYS if sagemaker else registry.CLUSTER_ONLY_KEYS
    written = {p.split(".")[0] for p in cfg.entries}
    if not lenient:
        written |= {p.split(".")[0] for p in cfg.unknown if not p.startswith("--")} | cfg.sections
    extra = []
    for key in written:
        s = registry.get("", key)
        if key not in allowed or s is None or not _vin(ver, s.since, s.until):
            extra.append(key)
    if extra:
        raise LaunchError(
            f"The config file had unknown keys ({sorted(extra)}), please try upgrading your `accelerate` version "
            "or fix (and potentially remove) these keys from your config file."
        )


def _file_paradigm(cfg: Config, ver: str, dtype: Any, ns: dict[str, Any], origins: dict[str, str]) -> None:
    """The paradigm flags from distributed_type, when no paradigm flag was given."""
    flag = PARADIGM_OF_TYPE.get(dtype) if isinstance(dtype, str) else None
    if flag == "multi_gpu" and dtype != "MULTI_GPU" and not changed(ver, "multi-xpu-dispatch"):
        flag = None  # 0.20: only MULTI_GPU selects the multi-GPU launcher
    for f in PARADIGM_FLAGS:
        ns[f] = f == flag
        origins[f] = "file"
    ns["tpu_use_cluster"] = bool(cfg.get("tpu_use_cluster", False)) if ns["tpu"] else False
    if changed(ver, "parallelism-config"):
        ns["use_parallelism_config"] = bool(cfg.section("parallelism_config")) or any(
            p.startswith("parallelism_config.") for p in cfg.unknown
        )


def _file_gpu_ids(cfg: Config, ns: dict[str, Any], origins: dict[str, str]) -> None:
    """gpu_ids and num_machines (multi-GPU), and the check that multi-GPU names two GPUs."""
    if ns["gpu_ids"] is None:
        ns["gpu_ids"] = cfg.get("gpu_ids") if cfg.get("gpu_ids") is not None else "all"
        origins["gpu_ids"] = "file" if cfg.get("gpu_ids") is not None else "default"
    if ns["multi_gpu"] and ns["num_machines"] is None:
        ns["num_machines"] = cfg.get("num_machines", 1)
    gpu_ids = ns["gpu_ids"]
    if not isinstance(gpu_ids, str):
        raise LaunchError(f"'{type(gpu_ids).__name__}' object has no attribute 'split'")
    if len(gpu_ids.split(",")) < 2 and gpu_ids != "all" and ns["multi_gpu"] and _num(ns["num_machines"] or 1) <= 1:
        raise LaunchError(
            "Less than two GPU ids were configured and tried to run on multiple GPUs. "
            "Please ensure at least two are specified for `--gpu_ids`, or use `--gpu_ids='all'`."
        )


def _file_nested(cfg: Config, ver: str, ns: dict[str, Any], explicit: set[str], origins: dict[str, str]) -> list[str]:
    """Nested dicts, in file order (known and unknown keys alike); returns the deepspeed_config fields."""
    ds_fields: list[str] = []
    nested = sorted(
        [e for p, e in cfg.items() if "." in p]
        + [e for p, e in cfg.unknown.items() if "." in p and not p.startswith("--")],
        key=lambda e: (e.line == 0, e.line, e.column),
    )
    for e in nested:
        section = e.path.split(".")[0]
        name = e.written_key or e.path.split(".", 1)[1]
        if e.origin != "file" and e.setting is not None:
            name = e.setting.key
        attr = nested_attr(section, name, ver)
        if section == "deepspeed_config":
            ds_fields.append(name)
        if section == "fp8_config" and not changed(ver, "fp8-config"):
            continue
        if changed(ver, "explicit-flags-win") and attr in explicit:
            continue
        ns[attr] = e.value
        origins[attr] = "file"
    return ds_fields


def _file_top_level(cfg: Config, ns: dict[str, Any], origins: dict[str, str], num_processes: Any) -> None:
    """Top-level scalars: only where the namespace still holds None."""
    dataclass_defaults = {
        "num_machines": 1,
        "machine_rank": 0,
        "main_training_function": "main",
        "use_cpu": False,
        "debug": False,
        "num_processes": num_processes,
    }
    names = {p for p in cfg.entries if "." not in p} | set(dataclass_defaults)
    for name in sorted(names):
        if name in ("compute_environment", "mixed_precision", "distributed_type"):
            continue
        s = registry.get("", name)
        if s is not None and s.type == "section":
            continue
        value = num_processes if name == "num_processes" else cfg.get(name, dataclass_defaults.get(name))
        if ns.get(name) is None:
            ns[name] = value
            origins[name] = "file" if name in cfg else "default"


def _apply_no_file(ns: dict[str, Any], device_count: int, findings: list[Finding]) -> None:
    if ns["num_processes"] is None:
        ns["num_processes"] = device_count
        findings.append(
            _finding(
                "convert.machine-dependent",
                "info",
                f"`--num_processes` not given: accelerate uses the number of visible devices (taken as {device_count})",
                key="num_processes",
            )
        )
    if ns["debug"] is None:
        ns["debug"] = False
    if not ns["multi_gpu"] and _num(ns["num_processes"]) > 1 and device_count > 1:
        ns["multi_gpu"] = True
    if ns["num_machines"] is None:
        ns["num_machines"] = 1
    if ns["mixed_precision"] is None:
        ns["mixed_precision"] = "no"
    if "use_cpu" not in ns:
        ns["use_cpu"] = ns["cpu"]
    if ns["dynamo_backend"] is None:
        ns["dynamo_backend"] = "no"


def _mixed_precision(ns: dict[str, Any]) -> str:
    mp = ns["mixed_precision"]
    if not isinstance(mp, str):
        raise LaunchError(f"'{type(mp).__name__}' object has no attribute 'lower'")
    if mp.lower() not in registry.PRECISIONS:
        raise LaunchError(f"Unknown mixed_precision mode: {mp.lower()}. Choose between {list(registry.PRECISIONS)}.")
    return mp.lower()


def _put(env: dict[str, str], letter: str, s: Setting, value: Any) -> None:
    """Set the setting's variable when accelerate's launcher path `letter` exports it."""
    if s.env and letter in s.env_paths:
        env[s.env] = _encode(s, value)


def _get(section: str, key: str) -> Setting:
    s = registry.get(section, key)
    assert s is not None, (section, key)
    return s


def _mpirun_cmd(ns: dict[str, Any], ver: str) -> list[str]:
    n, m = ns.get("num_processes"), ns["num_machines"]
    cmd = ["mpirun", "--hostfile", str(ns["mpirun_hostfile"]), "--npernode", str(int(n) // int(m)) if n and m else "1"]
    if n:
        cmd += ["-n", str(n)]
    if changed(ver, "mpirun-bind-to"):
        cmd += ["--bind-to", "socket"]
    return cmd


def _simple_env(ns: dict[str, Any], ver: str, env: dict[str, str], unconverted: list[Any], use_cpu: bool) -> None:
    """The simple launcher's rendezvous (MASTER_ADDR/PORT, oneCCL count) and KMP variables."""
    if _num(ns["num_machines"]) > 1 and changed(ver, "simple-multinode-asserts"):
        for key in ("IP", "port"):
            if ns.get(f"main_process_{key.lower()}") is None:
                raise LaunchError(f"When using multiple machines, you need to specify the main process {key}.")
    n = ns.get("num_processes")
    ip, port = ns.get("main_process_ip"), ns.get("main_process_port")
    ccl = registry.get("mpirun_config", "mpirun_ccl")
    if not changed(ver, "simple-rendezvous-any-count") and _num(ns["num_machines"]) > 1:
        env["MASTER_ADDR"] = str(ip)
        if not isinstance(ip, str):
            unconverted.append(ip)  # the IP goes into the env as it is (the port through str())
        env["MASTER_PORT"] = str(port)
        if ns.get("mpirun_hostfile") is not None and ccl is not None and _vin(ver, ccl.since, ccl.until):
            env[ccl.env or ""] = str(ns.get(ccl.namespace))
            if changed(ver, "ccl-count-unconverted") and not isinstance(ns.get(ccl.namespace), str):
                unconverted.append(ns.get(ccl.namespace))
    elif (n is not None and _num(n) > 1) or _num(ns["num_machines"]) > 1:
        env["MASTER_ADDR"] = ip if ip is not None else "127.0.0.1"
        env["MASTER_PORT"] = str(port if port is not None else _get("", "main_process_port").launcher_default)
        if ccl is not None and _vin(ver, ccl.since, ccl.until) and changed(ver, "simple-rendezvous-any-count"):
            env[ccl.env or ""] = "0"  # 1.8-1.12: the count only when oneCCL is installed, else 0
    if changed(ver, "kmp-test-string"):
        use_cpu = True
    if changed(ver, "kmp-test-flag-name"):
        use_cpu = False
    if use_cpu and changed(ver, "kmp-vars"):
        env["KMP_AFFINITY"] = "granularity=fine,compact,1,0"
        env["KMP_BLOCKTIME"] = "1"


def _fp8_env(ns: dict[str, Any], ver: str, env: dict[str, str], unconverted: list[Any]) -> None:
    """The fp8_* recipe overrides (mixed_precision fp8)."""
    settings = _settings(ver)
    for attr, value in list(ns.items()):
        if not attr.startswith("fp8_") or value is None:
            continue
        s = next((x for x in settings if x.namespace == attr), None)
        if s is not None and s.type == "list" and not changed(ver, "fp8-override-split"):
            env[f"ACCELERATE_{attr.upper()}"] = str(value)  # one variable, the repr of the tuple
        elif s is not None and s.type == "list":  # accelerate indexes [0], [1], [2] (a YAML string too)
            base = (s.env or "").rsplit("_", 1)[0]
            try:
                if not releases.has(ver, "fp8-override-sequence"):  # parsed a "(a, b, c)" string
                    if not isinstance(value, str):
                        raise LaunchError(f"'{type(value).__name__}' object has no attribute 'strip'")
                    value = [v.strip() for v in value.strip("()").split(",")]
                for i, part in enumerate(("FPROP", "DGRAD", "WGRAD")):
                    env[f"{base}_{part}"] = str(value[i])
                    if changed(ver, "fp8-override-unconverted") and not isinstance(value[i], str):
                        unconverted.append(value[i])
            except (IndexError, TypeError) as exc:
                raise LaunchError(f"{attr}: {exc}") from exc
        else:
            env[f"ACCELERATE_{attr.upper()}"] = str(value)


def _dynamo_env(ns: dict[str, Any], ver: str, env: dict[str, str], letter: str) -> None:
    backend = str(ns["dynamo_backend"]).upper()
    if backend not in registry.DYNAMO_BACKENDS:
        raise LaunchError(f"Unknown dynamo backend: {backend}. Choose between {list(registry.DYNAMO_BACKENDS)}.")
    for s in _section("dynamo_config", ver):
        if s.env:
            _put(env, letter, s, backend if s.key == "dynamo_backend" else ns.get(s.namespace))


def _deepspeed_env(
    ns: dict[str, Any], ver: str, env: dict[str, str], letter: str, ds_fields: list[str], mp_from_config: bool
) -> None:
    env[registry.CONFIG_DS_FIELDS_ENV] = ",".join(ds_fields + (["mixed_precision"] if mp_from_config else [])).lower()
    env[registry.USE_ENV["DEEPSPEED"]] = "true"
    for s in _section("deepspeed_config", ver):
        if s.env and ns.get(s.namespace) is not None:
            _put(env, letter, s, ns[s.namespace])


def _fsdp_env(ns: dict[str, Any], ver: str, env: dict[str, str], letter: str) -> None:
    env[registry.USE_ENV["FSDP"]] = "true"
    ram, sync = ns.get("fsdp_cpu_ram_efficient_loading"), ns.get("fsdp_sync_module_states")
    if "fsdp_cpu_ram_efficient_loading" in ns and ram and not sync:
        raise LaunchError("When using `--fsdp_cpu_ram_efficient_loading` set `--fsdp_sync_module_states` to `True`")
    for s in _section("fsdp_config", ver):
        if not s.env:
            continue
        value = ns.get(s.namespace)
        if s.env_when == "always" or value is not None:
            _put(env, letter, s, value)
    policy = ns.get("fsdp_backward_prefetch_policy")
    if changed(ver, "backward-prefetch-policy") and policy is not None:
        env[_get("fsdp_config", "fsdp_backward_prefetch").env or ""] = str(policy)


def _megatron_env(ns: dict[str, Any], ver: str, env: dict[str, str], letter: str) -> None:
    env[registry.USE_ENV["MEGATRON_LM"]] = "true"
    for s in _section("megatron_lm_config", ver):
        value = ns.get(s.namespace)
        if s.env and (value is not None or s.env_when == "always"):
            _put(env, letter, s, value)


def _parallelism_env(ns: dict[str, Any], ver: str, env: dict[str, str], letter: str) -> None:
    env[registry.USE_PARALLELISM_CONFIG_ENV] = "true"
    cp = _get("parallelism_config", "parallelism_config_cp_size")
    sp = _get("parallelism_config", "parallelism_config_sp_size")
    for s in _section("parallelism_config", ver):
        plugin = s.plugin or ""
        if plugin.startswith("TorchContextParallelConfig") and not _gt1(ns.get(cp.namespace)):
            continue
        if plugin.startswith("DeepSpeedSequenceParallelConfig") and not _gt1(ns.get(sp.namespace)):
            continue
        _put(env, letter, s, ns.get(s.namespace))


def _sagemaker_env(ns: dict[str, Any], env: dict[str, str]) -> None:
    env[registry.USE_SAGEMAKER_ENV] = "true"
    dtype = ns.get("sagemaker_distributed_type")
    if not isinstance(dtype, str):
        raise LaunchError(f"'{type(dtype).__name__}' object has no attribute 'value'")
    env[registry.SAGEMAKER_DISTRIBUTED_TYPE_ENV] = dtype


def _prepare(
    mode: str, ns: dict[str, Any], ver: str, ds_fields: list[str], mp_from_config: bool, cwd: str | None
) -> tuple[dict[str, str], dict[str, Any], list[str] | None]:
    """The environment, torchrun arguments and command accelerate's launcher path `mode` builds.

    The helpers run in the order accelerate sets the variables, so the first error raised is its first."""
    letter = PATH_LETTER[mode]
    env: dict[str, str] = {}
    torchrun: dict[str, Any] = {}
    cmd: list[str] | None = None
    unconverted: list[Any] = []  # values accelerate puts into the env without str() (fp8-override-unconverted)
    if mode == "tpu":
        if ns["debug"]:
            _put(env, letter, _get("", "debug"), True)
        return env, torchrun, cmd
    if mode in ("torchrun", "deepspeed"):
        torchrun, cmd = _rendezvous(mode, ns, ver)
    elif mode == "simple" and ns.get("mpirun_hostfile") is not None:
        cmd = _mpirun_cmd(ns, ver)
    use_cpu = False
    if mode == "simple":
        use_cpu = bool(ns["cpu"] or ns.get("use_cpu"))
        env[_get("", "use_cpu").env or ""] = str(ns["cpu"] or ns.get("use_cpu"))
    if ns["debug"] and mode != "sagemaker":
        _put(env, letter, _get("", "debug"), True)
    gpu_ids = ns.get("gpu_ids")
    if mode != "sagemaker" and gpu_ids != "all" and gpu_ids is not None:
        if mode == "torchrun" and changed(ver, "ze-mask-inverted"):
            env["ZE_AFFINITY_MASK"] = str(gpu_ids)  # on a machine without an XPU (with one: CUDA_VISIBLE_DEVICES)
        else:
            _put(env, letter, _get("", "gpu_ids"), gpu_ids)
    if mode == "simple":
        _simple_env(ns, ver, env, unconverted, use_cpu)
    mp = _mixed_precision(ns)
    if mode == "deepspeed":
        env["PYTHONPATH"] = os.path.abspath(cwd or ".")
    _put(env, letter, _get("", "mixed_precision"), mp)
    if mp == "fp8":
        _fp8_env(ns, ver, env, unconverted)
    if mode in ("simple", "torchrun", "sagemaker"):
        _dynamo_env(ns, ver, env, letter)
    if mode == "deepspeed":
        _deepspeed_env(ns, ver, env, letter, ds_fields, mp_from_config)
    if mode == "torchrun" and ns["use_fsdp"]:
        _fsdp_env(ns, ver, env, letter)
    if mode == "torchrun" and ns["use_megatron_lm"]:
        _megatron_env(ns, ver, env, letter)
    if mode in ("simple", "torchrun"):
        env["OMP_NUM_THREADS"] = str(ns["num_cpu_threads_per_process"])
    if ns.get("enable_cpu_affinity") and mode in ("simple", "torchrun", "deepspeed"):
        _put(env, letter, _get("", "enable_cpu_affinity"), True)
    if (mode == "torchrun" or (mode == "deepspeed" and changed(ver, "parallelism-under-deepspeed"))) and ns.get(
        "use_parallelism_config"
    ):
        _parallelism_env(ns, ver, env, letter)
    if mode == "sagemaker":
        _sagemaker_env(ns, env)
    if unconverted and mode == "simple":  # subprocess.Popen encodes every value
        raise LaunchError(f"expected str, bytes or os.PathLike object, not {type(unconverted[0]).__name__}")
    if unconverted and mode == "deepspeed" and cmd:  # the DeepSpeed env file joins key + "=" + value
        raise LaunchError(f'can only concatenate str (not "{type(unconverted[0]).__name__}") to str')
    return env, torchrun, cmd


def _gt1(v: Any) -> bool:
    if isinstance(v, str):
        raise LaunchError("'>' not supported between instances of 'str' and 'int'")
    return v is not None and v > 1


def _rendezvous(mode: str, ns: dict[str, Any], ver: str) -> tuple[dict[str, Any], list[str] | None]:
    given = port = ns.get("main_process_port")
    if port is None:
        port = registry.get("", "main_process_port").launcher_default  # type: ignore[union-attr]
    rdzv_port = port if changed(ver, "rendezvous-port-default") else given
    n: Any = ns.get("num_processes")  # set by now: a missing count was refused above
    m, ip = ns["num_machines"], ns.get("main_process_ip")
    out: dict[str, Any] = {}
    cmd: list[str] | None = None
    launcher = ns.get("deepspeed_multinode_launcher") or registry.DEFAULT_MULTINODE_LAUNCHER
    if mode == "deepspeed" and _num(m) > 1 and launcher != registry.STANDARD_LAUNCHER:
        if changed(ver, "ds-multinode-no-local-rank-first"):
            cmd = [
                "deepspeed",
                "--no_local_rank",
                "--hostfile",
                str(ns.get("deepspeed_hostfile")),
                "--launcher",
                str(launcher),
            ]
        else:
            cmd = ["deepspeed", "--hostfile", str(ns.get("deepspeed_hostfile"))]
            if launcher == "nossh":
                cmd += ["--node_rank", str(ns.get("machine_rank")), "--no_ssh"]
            else:
                cmd += ["--no_local_rank", "--launcher", str(launcher)]
        if ns.get("deepspeed_exclusion_filter") is not None:
            cmd += ["--exclude", str(ns["deepspeed_exclusion_filter"])]
        elif ns.get("deepspeed_inclusion_filter") is not None:
            cmd += ["--include", str(ns["deepspeed_inclusion_filter"])]
        else:
            cmd += ["--num_gpus", str(int(n) // int(m))]
        if ip and changed(ver, "ds-multinode-master-addr"):
            cmd += ["--master_addr", str(ip)]
        cmd += ["--master_port", str(port)]
    elif _num(m) > 1:
        out["nproc_per_node"] = str(int(n) // int(m))
        out["nnodes"] = str(m)
        out["node_rank"] = int(ns.get("machine_rank") or 0)
        if ns.get("same_network"):
            out["master_addr"] = str(ip)
            out["master_port"] = str(rdzv_port)
        else:
            out["rdzv_endpoint"] = f"{ip}:{rdzv_port}"
    else:
        out["nproc_per_node"] = str(n)
        out["master_port"] = str(port)
    out["rdzv_backend"] = ns.get("rdzv_backend")
    return out, cmd


def accelerator_env_entries(cfg: Config) -> list[tuple[Entry, str]]:
    """The entries of an environment (origin ``env``) that the training process reads although their
    section is not in use (:data:`registry.ACCELERATOR_ENV_ARGS`), each with the ``Accelerator``
    argument that can carry it instead: ``ACCELERATE_GRADIENT_ACCUMULATION_STEPS`` under FSDP or
    MULTI_GPU. No config file or launch flag can hold them there (the launcher exports them only
    for DeepSpeed)."""
    out: list[tuple[Entry, str]] = []
    for path, (arg, _) in registry.ACCELERATOR_ENV_ARGS.items():
        e = cfg.entries.get(path)
        if (
            e is not None
            and e.origin == "env"
            and e.value is not None
            and not registry.section_active(path.split(".", 1)[0], cfg)
        ):
            out.append((e, arg))
    return out


# -- findings -------------------------------------------------------------------------------------


def _file_findings(cfg: Config, ver: str, mode: str, ns: dict[str, Any]) -> Iterable[Finding]:
    letter = PATH_LETTER[mode]
    dtype = cfg.get("distributed_type")
    for path, e in cfg.items():
        s = e.setting
        if s is None:
            continue
        if s.file_ignored:
            if canonical(s, e.value) == canonical(s, s.launcher_default):
                continue
            yield _finding(
                "launch.file-ignored",
                "warning",
                f"accelerate ignores `{path}` in a config file (the flag default {s.launcher_default!r} wins); "
                f"pass `--{s.flag}` on the command line instead",
                e,
            )
            continue
        if s.lost:
            yield _finding("launch.lost", "warning", f"`{path}` never reaches the training process: {s.doc}", e)
            continue
        if not _vin(ver, s.since, s.until):
            yield _finding("launch.version", "warning", f"`{path}` is not read by accelerate {ver}", e)
            continue
        if s.section == "dynamo_config" and mode == "deepspeed":
            yield _finding(
                "launch.dropped",
                "warning",
                f"`{path}` is not exported on the DeepSpeed launcher path: torch.compile settings are lost",
                e,
            )
            continue
        if (
            s.section in ("fsdp_config", "deepspeed_config", "megatron_lm_config")
            and s.env
            and letter not in s.env_paths
        ):
            if e.origin == "env" and path in registry.ACCELERATOR_ENV_ARGS:
                continue  # the training process reads the variable under every type (accelerator_env_entries)
            yield _finding("launch.unused", "info", f"`{path}` is not used: distributed_type is {dtype!r}", e)
            continue
        if s.section == "fp8_config" and str(ns.get("mixed_precision")).lower() != "fp8":
            yield _finding("launch.unused", "info", f"`{path}` is not used: mixed_precision is not fp8", e)
    for path, e in cfg.unknown.items():
        if path.startswith("--"):
            continue
        section = path.split(".")[0] if "." in path else ""
        if section == "fp8_config":
            attr = nested_attr(section, path.split(".", 1)[1], ver)
            yield _finding(
                "launch.unknown",
                "warning",
                f"`{path}` is exported as ACCELERATE_{attr.upper()}, which nothing reads",
                e,
            )
        elif section:
            yield _finding(
                "launch.unknown", "warning", f"`{path}` is not a setting accelerate {ver} knows: it is ignored", e
            )


def _machine_findings(mode: str, ns: dict[str, Any], ver: str, env: dict[str, str]) -> Iterable[Finding]:
    """Where this release's launcher answers differently on another machine: say so, do not guess."""
    if "ZE_AFFINITY_MASK" in env:
        yield Finding(
            "convert.machine-dependent",
            "info",
            f"accelerate {ver} writes gpu_ids to ZE_AFFINITY_MASK on a machine without an Intel XPU (its test is "
            "inverted) and to CUDA_VISIBLE_DEVICES on one with an XPU; written for a machine without",
            "gpu_ids",
        )
    ccl = registry.get("mpirun_config", "mpirun_ccl")
    if ccl is not None and ccl.env in env and changed(ver, "simple-rendezvous-any-count"):
        yield Finding(
            "convert.machine-dependent",
            "info",
            f"accelerate {ver} writes CCL_WORKER_COUNT as mpirun_ccl when oneCCL is installed on the machine that "
            "launches, else 0; written here as 0",
            "mpirun_config.mpirun_ccl",
        )


def _layout_findings(
    mode: str, ns: dict[str, Any], torchrun: dict[str, Any], cmd: list[str] | None
) -> Iterable[Finding]:
    if mode in ("torchrun", "deepspeed") and torchrun and not cmd:  # a deepspeed/pdsh command runs no torchrun
        parts = []
        for k in (
            "nproc_per_node",
            "nnodes",
            "node_rank",
            "master_addr",
            "master_port",
            "rdzv_endpoint",
            "rdzv_backend",
        ):
            if k in torchrun and torchrun[k] is not None:
                parts.append(f"--{k}={torchrun[k]}")
        yield Finding(
            "launch.not-env",
            "info",
            "env does not carry the process layout; accelerate passes it to torchrun: torchrun " + " ".join(parts),
            "num_processes",
        )
    if cmd:
        yield Finding(
            "launch.not-env",
            "info",
            "env does not carry the process layout; accelerate runs: " + " ".join(cmd),
            "num_processes",
        )
    if mode == "tpu":
        yield Finding(
            "launch.tpu",
            "info",
            "TPU launch: XLA_USE_BF16 / XLA_DOWNCAST_BF16 depend on a TPU being present",
            "distributed_type",
        )
    if mode == "sagemaker":
        yield Finding(
            "launch.sagemaker",
            "warning",
            "SageMaker: this is the environment of the SageMaker job; launching also needs AWS credentials (a "
            "`profile`, "
            "or --aws_access_key_id and --aws_secret_access_key) and reads sagemaker_inputs_file / "
            "sagemaker_metrics_file "
            "from the working directory of the machine that launches",
            "compute_environment",
        )
