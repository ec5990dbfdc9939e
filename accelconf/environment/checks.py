"""Environment checks: does this config fit the machine it will run on?

This module owns the ``env-*`` rules. Each is a pure function ``(Reading, Environment) ->
Iterable[Finding]`` over the :class:`accelconf.accelerate.model.Config` of a loaded
:class:`accelconf.text.document.Document` (each value as accelerate reads it at the target release) and an
:class:`accelconf.environment.probe.Environment` (detected, or a target from :mod:`accelconf.environment.targets`); each
finding points at the config line that causes it (1-based, as :class:`Finding` is). A fact the
environment does not know (``Environment.unknown``) skips the rules that need it. Whether keys
and values exist in the accelerate version at hand is left to :mod:`accelconf.accelerate.validate`.

Requirements follow accelerate 1.15.0's source: ``FSDP2_PYTORCH_VERSION`` and
``FSDP_PYTORCH_VERSION`` (``utils/constants.py``), bf16/fp8 checks in ``AcceleratorState``
(``state.py``), DeepSpeed minimums in ``accelerator.py``, ``utils/launch.py`` and
``utils/dataclasses.py``, and the multi-node arguments ``utils/launch.py`` builds.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from accelconf import catalogue, releases
from accelconf.accelerate import registry as _registry
from accelconf.accelerate.model import Config, from_document
from accelconf.accelerate.validate import machine_rank_outside
from accelconf.deepspeed import config_file_path
from accelconf.environment.probe import Environment
from accelconf.errors import InputError
from accelconf.findings import Finding, Severity
from accelconf.kinds import is_deepspeed_data
from accelconf.text.document import Document, load_file

# distributed_type values that run on CUDA/ROCm GPUs, and those that never do: every other type the
# registry knows but NO (which runs where it is started), and the old names of those (TPU for XLA).
GPU_TYPES = frozenset({"MULTI_GPU", "FSDP", "DEEPSPEED", "MEGATRON_LM"})
_NON_GPU = frozenset(_registry.DISTRIBUTED_TYPES) - GPU_TYPES - {"NO"}
NON_GPU_TYPES = _NON_GPU | {
    old
    for old, new in _registry.get("", "distributed_type").legacy_values  # type: ignore[union-attr]
    if new in _NON_GPU
}

DEFAULT_PORT = _registry.get("", "main_process_port").launcher_default  # type: ignore[union-attr]


@dataclass(frozen=True)
class Reading:
    """What the rules judge: the document's :class:`~accelconf.accelerate.model.Config` (the one
    config model), each value as accelerate reads it at the target release
    (:func:`accelconf.accelerate.registry.read_value`: a value it refuses reads as unset, validate
    reports it), and the document, for positions."""

    doc: Document
    cfg: Config
    version: str | None = None  # the target's accelerate (None: the newest)
    validated: bool = False  # validate runs too: skip what its multi-node rule already says

    def read(self, path: str) -> Any:
        """The value at a canonical path as accelerate reads it; ``None`` when unset or refused."""
        e = self.cfg.entries.get(path)
        if e is None or e.setting is None:
            return None
        v = _registry.read_value(e.setting, e.value, self.version)
        return None if v is _registry.REFUSED else v

    def written(self, path: str) -> bool:
        """Whether the config writes the setting (null included)."""
        return path in self.cfg.entries

    @property
    def distributed_type(self) -> str:
        return self.read("distributed_type") or ""

    @property
    def mixed_precision(self) -> str:
        return self.read("mixed_precision") or ""

    @property
    def num_machines(self) -> int:
        v = self.read("num_machines")
        return v if v is not None and v >= 1 else 1

    @property
    def num_processes(self) -> int | None:
        v = self.read("num_processes")
        return v if v is not None and v > 0 else None  # -1 is "not set"

    @property
    def uses_gpus(self) -> bool:
        """The job would run on CUDA/ROCm GPUs (if any are there)."""
        return self.read("use_cpu") is not True and self.distributed_type not in NON_GPU_TYPES

    def finding(
        self,
        rule: str,
        severity: Severity,
        message: str,
        key: str,
        *,
        value: bool = True,
        suggestion: str | None = None,
    ) -> Finding:
        return finding_at(self.doc, rule, severity, message, key, value=value, suggestion=suggestion)


def reading(doc: Document, version: str | None = None, validated: bool = False, cfg: Config | None = None) -> Reading:
    """A loaded accelerate config as the environment rules read it (``version``: the target's accelerate;
    ``cfg``: the document's Config read at that release, when the caller has it)."""
    return Reading(
        doc, cfg if cfg is not None else from_document(doc, _registry.resolve_version(version)), version, validated
    )


def finding_at(
    doc: Document,
    rule: str,
    severity: Severity,
    message: str,
    key: str,
    *,
    value: bool = True,
    suggestion: str | None = None,
) -> Finding:
    """A finding at ``key`` of a document (its value when ``value``), or at the nearest parent that
    exists (:meth:`accelconf.text.document.Document.span`)."""
    line, col, end_line, end_col = doc.span(key, value)
    return Finding(rule, severity, message, key, line, col, suggestion, end_line, end_col)


def _version(v: str | None) -> Any:
    """A comparable version, or ``None`` when there is none or it does not parse."""
    if not v:
        return None
    from packaging.version import InvalidVersion, Version

    try:
        return Version(v)
    except InvalidVersion:
        return None


def older(have: str | None, need: str) -> bool:
    """``have`` is a parseable version below ``need``, compared as accelerate compares (PEP 440:
    ``2.6.0+cu124`` is not below ``2.6.0``, a ``2.6.0.dev`` nightly is)."""
    from packaging.version import Version

    h = _version(have)
    return h is not None and h < Version(need)


def _where(env: Environment, fact: str = "") -> str:
    if fact in env.local_packages:
        return "here"
    return "here" if env.source.startswith("detected") and "arguments" not in env.source else "on the target"


def _missing_here(cfg: Reading, rule: str, missing: str, need: str, flag: str | None) -> Finding:
    """A package missing from this interpreter while the flags describe another machine: that says
    nothing about the target, so it is info naming the way to check the target's packages."""
    import sys

    state = f", or state {flag} V" if flag else ""
    return cfg.finding(
        rule,
        "info",
        f"{missing} among the packages of {sys.executable} (this machine's, not those of the target the flags "
        f"describe); {need}: check the interpreter that will train with --python PATH{state}",
        "distributed_type",
        value=False,
        suggestion="--python /path/to/the/training/venv/bin/python" + (f" or {flag} V" if flag else ""),
    )


# -- rules ------------------------------------------------------------------------------------


def rule_probe(cfg: Reading, env: Environment) -> Iterator[Finding]:
    """env-probe: a probe that failed; GPU rules may be incomplete."""
    for problem in env.problems:
        yield cfg.finding("env-probe", "warning", f"environment probe: {problem}", "distributed_type", value=False)


def rule_no_gpu(cfg: Reading, env: Environment) -> Iterator[Finding]:
    """env-no-gpu: a GPU distributed_type, but no GPU was found."""
    if not env.knows("gpus") or env.gpus or cfg.distributed_type not in GPU_TYPES or not cfg.uses_gpus:
        return
    where = (
        "on this machine"
        if env.source.startswith("detected") and "arguments" not in env.source
        else f"on the target ({env.source})"
    )
    yield cfg.finding(
        "env-no-gpu",
        "warning",
        f"distributed_type {cfg.distributed_type} runs on GPUs, but there are none {where}",
        "distributed_type",
        suggestion="to check against the machine that will run it: --gpus N --gpu MODEL, or --target FILE",
    )


def _gpu_ids(cfg: Reading) -> list[int] | None:
    """The GPU ids listed in ``gpu_ids``, or ``None`` for ``all``, unset or unreadable."""
    v = cfg.read("gpu_ids")  # an integer is refused (the launcher splits a string)
    if v is None or v.strip().lower() in ("all", ""):
        return None
    ids = []
    for part in v.split(","):
        part = part.strip()
        if not part.isdigit():
            return None  # validate reports the syntax
        ids.append(int(part))
    return ids


def rule_gpu_ids(cfg: Reading, env: Environment) -> Iterator[Finding]:
    """env-gpu-ids: gpu_ids names GPUs the node does not have."""
    ids = _gpu_ids(cfg)
    if ids is None or not env.knows("gpu_count") or not env.gpus or not cfg.uses_gpus:
        return
    missing = sorted({i for i in ids if i >= env.gpu_count})
    if missing:
        have = f"0-{env.gpu_count - 1}" if env.gpu_count > 1 else "0"
        yield cfg.finding(
            "env-gpu-ids",
            "error",
            f"gpu_ids lists GPU {', '.join(map(str, missing))}, but the node has {env.gpu_count} GPU"
            f"{'s' if env.gpu_count != 1 else ''} (ids {have})",
            "gpu_ids",
            suggestion=f"gpu_ids: {','.join(str(i) for i in ids if i < env.gpu_count) or 'all'}",
        )


def rule_num_processes(cfg: Reading, env: Environment) -> Iterator[Finding]:
    """env-num-processes: processes per node (num_processes / num_machines) vs the GPUs there."""
    n, machines = cfg.num_processes, cfg.num_machines
    if n is None or cfg.distributed_type not in GPU_TYPES | {"NO"}:
        return
    if cfg.distributed_type == "NO":
        yield from _one_process(cfg, env, machines)
        return
    if n % machines and not cfg.validated:
        yield cfg.finding(
            "env-num-processes",
            "warning",
            f"num_processes {n} is the total over num_machines {machines} and is not a multiple of it: "
            f"each machine starts {n // machines} (the launcher rounds down), {n // machines * machines} in all",
            "num_processes",
            suggestion=f"num_processes: {max(n // machines, 1) * machines}",
        )
    if not env.knows("gpu_count") or not env.gpus or not cfg.uses_gpus:
        return
    per_node = n // machines
    if per_node < 1:  # nothing starts: validate's process-layout error says so, GPU counts say nothing
        return
    ids = _gpu_ids(cfg)
    visible = len(set(ids) & set(range(env.gpu_count))) if ids is not None else env.gpu_count
    if per_node > visible:
        what = (
            f"gpu_ids leaves {visible} usable GPU{'s' if visible != 1 else ''} of the node's {env.gpu_count}"
            if ids is not None
            else f"the node has {env.gpu_count} GPU{'s' if env.gpu_count != 1 else ''}"
        )
        total = f" (num_processes is the total over {machines} machines)" if machines > 1 else ""
        yield cfg.finding(
            "env-num-processes",
            "error",
            f"num_processes {n} means {per_node} processes per node{total}, but {what} {_where(env)}",
            "num_processes",
            suggestion=f"num_processes: {visible * machines}",
        )
    elif per_node < visible and ids is None:  # GPUs left idle: a warning with the count that fits
        yield cfg.finding(
            "env-num-processes",
            "warning",
            f"{per_node} process{'es' if per_node != 1 else ''} per node use{'s' if per_node == 1 else ''} "
            f"{per_node} of the {visible} GPUs {_where(env)}",
            "num_processes",
            suggestion=f"num_processes: {visible * machines}",
        )


def _one_process(cfg: Reading, env: Environment, machines: int) -> Iterator[Finding]:
    """``distributed_type: 'NO'``: with a config file, ``accelerate launch`` takes its simple launcher
    and starts one process whatever num_processes says (validate's ``processes`` info), so more
    processes than GPUs is no error, and a node of several GPUs leaves all but one idle; the count
    alone would change nothing, so the suggestion names the distributed type too."""
    if not env.knows("gpu_count") or not env.gpus or not cfg.uses_gpus or _gpu_ids(cfg) is not None:
        return
    if env.gpu_count > 1:
        yield cfg.finding(
            "env-num-processes",
            "warning",
            f"`distributed_type: 'NO'` starts one process, which uses 1 of the {env.gpu_count} GPUs {_where(env)}",
            "distributed_type",
            suggestion=f"distributed_type: MULTI_GPU and num_processes: {env.gpu_count * machines}",
        )


def rule_num_machines(cfg: Reading, env: Environment) -> Iterator[Finding]:
    """env-num-machines: the config's num_machines differs from the target's."""
    if env.num_machines is None or env.num_machines == cfg.num_machines:
        return
    yield cfg.finding(
        "env-num-machines",
        "warning",
        f"num_machines is {cfg.num_machines}, but the target has {env.num_machines} machine"
        f"{'s' if env.num_machines != 1 else ''}",
        "num_machines",
        suggestion=f"num_machines: {env.num_machines}",
    )


def _first_lacking(env: Environment, feature: str) -> Any:
    return next((g for g in env.gpus if getattr(g, feature) is False), None)


def _ds_bf16(doc: Document) -> Finding | None:
    """A placeholder finding at ``bf16.enabled: true`` of a DeepSpeed JSON, or ``None``."""
    data = doc.data
    if not isinstance(data, dict):
        return None
    for section in ("bf16", "bfloat16"):  # DeepSpeed still reads the old name
        sec = data.get(section)
        if isinstance(sec, dict) and sec.get("enabled") is True:
            node = doc.node((section, "enabled"))
            line, col = (node.line + 1, node.col + 1) if node else (1, 1)
            return Finding("env-bf16", "warning", "", f"{section}.enabled", line, col)
    return None


def _referenced_ds_json(cfg: Reading) -> Document | None:
    """The ``deepspeed_config_file`` of a DEEPSPEED config, found as validate finds it."""
    ref = cfg.read("deepspeed_config.deepspeed_config_file")
    if cfg.distributed_type != "DEEPSPEED" or not ref:
        return None
    full = config_file_path(ref, cfg.doc.path)
    if full is None:
        return None

    try:
        return load_file(full, "json")
    except InputError:
        return None  # validate reports it


def rule_bf16(cfg: Reading, env: Environment) -> Iterator[Finding]:
    """env-bf16: bf16 on GPUs without native bf16 (compute capability below 8.0), asked for by
    mixed_precision or by ``bf16.enabled: true`` in a DeepSpeed JSON (given, or referenced)."""
    if not env.knows("gpus") or not cfg.uses_gpus:
        return
    gpu = _first_lacking(env, "bf16")
    if gpu is None:
        return
    label = gpu.model or gpu.name
    ds_doc = cfg.doc if is_deepspeed_data(cfg.doc.data) else _referenced_ds_json(cfg)
    at = _ds_bf16(ds_doc) if ds_doc is not None else None
    if at is not None:
        msg = (
            f"bf16 is enabled in the DeepSpeed config, but it needs compute capability 8.0 or higher; "
            f"{label} has {gpu.cc_text}: bf16 runs emulated (slow) or fails in a kernel"
        )
        elsewhere = ds_doc is not None and ds_doc is not cfg.doc
        yield at.replace(
            message=msg,
            path=ds_doc.path if elsewhere and ds_doc else "",
            suggestion='"bf16": {"enabled": false}, "fp16": {"enabled": true}',
        )
        return
    if cfg.mixed_precision != "bf16":
        return
    if cfg.distributed_type in ("DEEPSPEED", "MEGATRON_LM"):
        # Accelerator skips its bf16 check for these; the engine then runs bf16 without hardware support
        yield cfg.finding(
            "env-bf16",
            "warning",
            f"mixed_precision bf16 needs compute capability 8.0 or higher; {label} has {gpu.cc_text}. accelerate "
            f"does not check this under {cfg.distributed_type}: bf16 runs emulated (slow) or fails in a kernel",
            "mixed_precision",
            suggestion="mixed_precision: fp16",
        )
        return
    yield cfg.finding(
        "env-bf16",
        "error",
        f"mixed_precision bf16 needs compute capability 8.0 or higher; {label} has {gpu.cc_text}. "
        "Accelerator() raises 'bf16 mixed precision requires PyTorch >= 1.10 and a supported device'",
        "mixed_precision",
        suggestion="mixed_precision: fp16",
    )


def rule_fp8(cfg: Reading, env: Environment) -> Iterator[Finding]:
    """env-fp8-gpu, env-fp8-backend: fp8 needs compute capability 8.9+ and an fp8 backend."""
    if cfg.mixed_precision != "fp8":
        return
    if env.knows("gpus") and cfg.uses_gpus:
        gpu = _first_lacking(env, "fp8")
        if gpu is not None:
            yield cfg.finding(
                "env-fp8-gpu",
                "warning",
                f"mixed_precision fp8 needs compute capability 8.9 or higher (Ada, Hopper, Blackwell); "
                f"{gpu.model or gpu.name} has {gpu.cc_text}: accelerate logs a warning and trains in fp16",
                "mixed_precision",
                suggestion="mixed_precision: bf16" if gpu.bf16 else "mixed_precision: fp16",
            )
    if not env.knows("fp8_backends"):
        return
    names = {"TE": "transformer-engine", "MSAMP": "ms-amp", "AO": "torchao"}
    wanted = cfg.read("fp8_config.backend")
    wanted_pkg = names.get(wanted) if wanted is not None else None
    if not env.fp8_backends and "fp8_backends" in env.local_packages:
        yield _missing_here(
            cfg,
            "env-fp8-backend",
            "no fp8 backend (transformer-engine, torchao >= 0.6.1, ms-amp) is installed",
            "mixed_precision fp8 needs one",
            None,
        )
    elif not env.fp8_backends:
        yield cfg.finding(
            "env-fp8-backend",
            "error",
            f"mixed_precision fp8 needs transformer-engine, torchao >= 0.6.1 or ms-amp installed "
            f"{_where(env)}, and none is: Accelerator() raises ValueError",
            "mixed_precision",
        )
    elif wanted_pkg and wanted_pkg not in env.fp8_backends:
        yield cfg.finding(
            "env-fp8-backend",
            "error",
            f"fp8_config.backend {wanted} needs {wanted_pkg}, which is not installed {_where(env)} "
            f"(fp8 backends installed: {', '.join(env.fp8_backends)})",
            "fp8_config.backend",
        )


def _fsdp_version(cfg: Reading, accelerate_version: str | None) -> int:
    """The FSDP version accelerate will use: before 1.6 it ignores ``fsdp_version`` (validate says so)."""
    return releases.fsdp_version_runs(cfg.read("fsdp_config.fsdp_version"), accelerate_version)


def fsdp2_torch_min(accelerate_version: str | None) -> str:
    """FSDP2_PYTORCH_VERSION of that release (the newest when unknown; releases.REQUIREMENTS)."""
    return releases.minimum("fsdp2-torch", accelerate_version) or releases.minimum("fsdp2-torch", None) or ""


def fsdp1_torch_min(accelerate_version: str | None) -> str:
    """FSDP_PYTORCH_VERSION of that release (1.12.0 in 0.20, before the constant; 2.1.0a0 from 0.34
    is a prerelease MS-AMP's image ships, shown as 2.1.0)."""
    return releases.minimum("fsdp1-torch", accelerate_version) or ""


def rule_torch(cfg: Reading, env: Environment) -> Iterator[Finding]:
    """env-torch-missing, env-fsdp-torch, env-fsdp2-torch, env-torch-cpu-only."""
    if not env.knows("torch_version"):
        return
    if env.torch_version is None and "torch_version" in env.local_packages:
        yield _missing_here(
            cfg, "env-torch-missing", "torch is not installed", "accelerate needs it", "--torch-version"
        )
        return
    if env.torch_version is None:
        yield cfg.finding(
            "env-torch-missing",
            "warning",
            f"torch is not installed {_where(env, 'torch_version')}; accelerate needs it",
            "distributed_type",
            value=False,
            suggestion="check against the machine that will run it: --target FILE or --torch-version V",
        )
        return
    if cfg.distributed_type == "FSDP":
        if _fsdp_version(cfg, env.accelerate_version if env.knows("accelerate_version") else None) == 2:
            need = fsdp2_torch_min(env.accelerate_version)
            if older(env.torch_version, need):
                yield cfg.finding(
                    "env-fsdp2-torch",
                    "error",
                    f"FSDP2 (fsdp_version: 2) needs torch >= {need}; torch is {env.torch_version} "
                    f"{_where(env, 'torch_version')}: "
                    f"the FSDP plugin raises ImportError('FSDP2 requires PyTorch >= {need}')",
                    "fsdp_config.fsdp_version",
                    suggestion=f"upgrade torch to {need} or newer, or use FSDP1 (fsdp_version: 1)",
                )
        else:
            need = fsdp1_torch_min(env.accelerate_version)
            if older(env.torch_version, need):
                shown = need.replace("a0", "")
                yield cfg.finding(
                    "env-fsdp-torch",
                    "error",
                    f"FSDP needs torch >= {shown}; torch is {env.torch_version} {_where(env, 'torch_version')}",
                    "distributed_type",
                    suggestion=f"upgrade torch to {shown} or newer",
                )
    if (
        env.knows("cuda_version")
        and env.cuda_version is None
        and env.rocm_version is None
        and env.gpus
        and cfg.uses_gpus
        and cfg.distributed_type in GPU_TYPES | {"NO"}
    ):
        yield cfg.finding(
            "env-torch-cpu-only",
            "warning",
            f"torch {env.torch_version} is a CPU-only build: it cannot use the {env.gpu_count} GPU"
            f"{'s' if env.gpu_count != 1 else ''} {_where(env, 'torch_version')}",
            "distributed_type",
            value=False,
            suggestion="install a CUDA or ROCm build of torch",
        )


def rule_deepspeed(cfg: Reading, env: Environment) -> Iterator[Finding]:
    """env-deepspeed-missing, env-deepspeed-version: DeepSpeed present, new enough for the features used."""
    if cfg.distributed_type != "DEEPSPEED" or not env.knows("deepspeed_version"):
        return
    ds = env.deepspeed_version
    if ds is None and "deepspeed_version" in env.local_packages:
        yield _missing_here(
            cfg,
            "env-deepspeed-missing",
            "deepspeed is not installed",
            "distributed_type DEEPSPEED needs it",
            "--deepspeed-version",
        )
        return
    if ds is None:
        yield cfg.finding(
            "env-deepspeed-missing",
            "error",
            "distributed_type DEEPSPEED needs the deepspeed package, which is not installed "
            f"{_where(env, 'deepspeed_version')}",
            "distributed_type",
            suggestion="pip install deepspeed",
        )
        return
    av = env.accelerate_version if env.knows("accelerate_version") else None
    need = releases.minimum("deepspeed", av)
    if need is not None and older(ds, need):
        yield cfg.finding(
            "env-deepspeed-version",
            "error",
            f"accelerate needs deepspeed >= {need}; deepspeed is {ds} {_where(env, 'deepspeed_version')}",
            "distributed_type",
        )
    launcher = cfg.read("deepspeed_config.deepspeed_multinode_launcher")
    need = releases.minimum("deepspeed-nossh", av)
    if launcher == "nossh" and cfg.num_machines > 1 and need is not None and older(ds, need):
        yield cfg.finding(
            "env-deepspeed-version",
            "error",
            f"the nossh launcher needs deepspeed >= {need}; deepspeed is {ds} {_where(env, 'deepspeed_version')} "
            "(accelerate launch raises ValueError)",
            "deepspeed_config.deepspeed_multinode_launcher",
        )
    need = releases.minimum("deepspeed-moe", av)
    if cfg.read("deepspeed_config.deepspeed_moe_layer_cls_names") and need is not None and older(ds, need):
        yield cfg.finding(
            "env-deepspeed-version",
            "error",
            f"deepspeed_moe_layer_cls_names needs deepspeed >= {need}; deepspeed is {ds} "
            f"{_where(env, 'deepspeed_version')}",
            "deepspeed_config.deepspeed_moe_layer_cls_names",
        )
    for key, name, what in (
        ("parallelism_config_tp_size", "deepspeed-tp", "tensor parallelism"),
        ("parallelism_config_sp_size", "deepspeed-sp", "sequence parallelism"),
    ):
        size = cfg.read(f"parallelism_config.{key}")
        need = releases.minimum(name, av)
        if size is not None and size > 1 and need is not None and older(ds, need):
            yield cfg.finding(
                "env-deepspeed-version",
                "error",
                f"DeepSpeed {what} ({key}: {size}) needs deepspeed >= {need}; deepspeed is {ds} "
                f"{_where(env, 'deepspeed_version')}",
                f"parallelism_config.{key}",
            )


def rule_rendezvous(cfg: Reading, env: Environment) -> Iterator[Finding]:
    """env-rendezvous: a multi-node config must say where and who: main_process_ip/port, machine_rank."""
    machines = cfg.num_machines
    if machines <= 1:
        return
    ds_launcher = cfg.read("deepspeed_config.deepspeed_multinode_launcher") or _registry.DEFAULT_MULTINODE_LAUNCHER
    ds_hostfile_launch = cfg.distributed_type == "DEEPSPEED" and ds_launcher != _registry.STANDARD_LAUNCHER
    ip = cfg.cfg.get("main_process_ip")  # (whether it is set: its value is validate's)
    if ds_hostfile_launch:
        if not cfg.cfg.get("deepspeed_config.deepspeed_hostfile"):
            yield cfg.finding(
                "env-rendezvous",
                "error",
                f"multi-node DeepSpeed with the {ds_launcher} launcher reads the machines from a hostfile, "
                "but deepspeed_config.deepspeed_hostfile is not set",
                "deepspeed_config.deepspeed_hostfile",
                suggestion="deepspeed_hostfile: /job/hostfile (or deepspeed_multinode_launcher: standard)",
            )
    elif ip in (None, "") and not cfg.validated:
        yield cfg.finding(
            "env-rendezvous",
            "warning",
            f"num_machines is {machines}, but main_process_ip is not set: the other machines cannot find "
            "the main one unless --main_process_ip is passed at launch",
            "num_machines",
            suggestion="main_process_ip: <address of machine 0>",
        )
    if cfg.cfg.get("main_process_port") is None:
        yield cfg.finding(
            "env-rendezvous",
            "warning",
            f"num_machines is {machines}, but main_process_port is not set: every machine must agree on "
            f"it; accelerate uses {DEFAULT_PORT}",
            "num_machines",
            suggestion=f"main_process_port: {DEFAULT_PORT}",
        )
    rank = cfg.read("machine_rank")
    if not cfg.written("machine_rank"):
        yield cfg.finding(
            "env-rendezvous",
            "warning",
            f"num_machines is {machines}, but machine_rank is not set: it defaults to 0 (the main machine); "
            "each other machine needs its own",
            "num_machines",
            suggestion="machine_rank: 0 on the main machine, 1.. on the others",
        )
    elif rank is None or (machine_rank_outside(rank, machines) is not None and not cfg.validated):
        yield cfg.finding(
            "env-rendezvous",
            "error",
            f"machine_rank must be a whole number from 0 to {machines - 1} (num_machines is {machines}); "
            f"got {cfg.cfg.get('machine_rank')!r}",
            "machine_rank",
        )


def rule_rtx40(cfg: Reading, env: Environment) -> Iterator[Finding]:
    """env-rtx40-p2p: several RTX 40 series GPUs with a driver before 550.40.07."""
    n = cfg.num_processes
    if not cfg.uses_gpus or env.gpu_count < 2 or n is None or n // cfg.num_machines < 2 or not env.driver_version:
        return
    if not any("RTX 40" in g.name or (g.model or "").startswith("RTX-40") for g in env.gpus):
        return
    need = releases.minimum("rtx40-driver", env.accelerate_version if env.knows("accelerate_version") else None)
    if need is None or not older(env.driver_version, need):
        return
    yield cfg.finding(
        "env-rtx40-p2p",
        "info",
        f"RTX 40 series with driver {env.driver_version} (before {need}): accelerate launch sets "
        "NCCL_P2P_DISABLE=1 and NCCL_IB_DISABLE=1 (slower communication); started without the launcher, "
        "PartialState raises NotImplementedError",
        "num_processes",
        suggestion=f"upgrade the NVIDIA driver to {need} or newer",
    )


def rule_default_config(cfg: Reading, env: Environment) -> Iterator[Finding]:
    """env-default-config: a multi-node config, and this host has accelerate's default config: a launch
    without --config_file reads that file, which is this host's own (what preflight finds at run time)."""
    if cfg.num_machines <= 1 or not env.default_config:
        return
    yield cfg.finding(
        "env-default-config",
        "warning",
        f"this host has accelerate's default config ({env.default_config}): `accelerate launch` without "
        "--config_file reads it, and every node reads its own copy, or none; pass --config_file on every node "
        "(`accelconf preflight` compares what the nodes read)",
        "num_machines",
        suggestion="accelerate launch --config_file THIS_FILE ...",
    )


RULES: tuple[Callable[[Reading, Environment], Iterable[Finding]], ...] = (
    rule_probe,
    rule_no_gpu,
    rule_num_processes,
    rule_gpu_ids,
    rule_num_machines,
    rule_bf16,
    rule_fp8,
    rule_torch,
    rule_deepspeed,
    rule_rendezvous,
    rule_rtx40,
    rule_default_config,
)

RULE_IDS: dict[str, str] = {k: v for k, v in catalogue.describe("environment").items() if k.startswith("env-")}


def check_environment(
    doc: Document, env: Environment, *, validated: bool = False, cfg: Config | None = None
) -> list[Finding]:
    """Every ``env-*`` finding for one document against one environment (1-based positions).

    ``validated=True`` when :func:`accelconf.accelerate.validate.validate_document` runs on the same document:
    the config-only multi-node checks it already makes (num_processes divisible by num_machines,
    main_process_ip present, machine_rank in range) are then left to it. ``cfg``: the document's
    Config read at :func:`target_release` (validate's, passed down by :func:`accelconf.api.check_document`
    so the document is read once); else it is read here.
    """
    if not isinstance(doc.data, dict):
        return []  # validate reports a document that is not a mapping
    judged = reading(doc, target_release(env), validated, cfg)
    out: list[Finding] = []
    for rule in RULES:
        out.extend(rule(judged, env))
    return out


def target_release(env: Environment) -> str | None:
    """The accelerate release the environment rules read a config at: the target's, when it knows one
    (``None``: the installed, else the newest, as :func:`accelconf.accelerate.registry.resolve_version`)."""
    return env.accelerate_version if env.knows("accelerate_version") else None
