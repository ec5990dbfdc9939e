"""The detected environment: package versions and GPUs, found cheaply and without raising.

This module owns :class:`Environment` (what a machine has: torch, accelerate, deepspeed and
transformers versions, the fp8 backends installed, the GPUs and the CUDA/ROCm versions) and
:func:`probe`, which fills one in for this machine. Versions are read with ``importlib.metadata``
and the CUDA/ROCm version torch was built for from ``torch/version.py`` as text: nothing here
imports torch, accelerate or deepspeed, except ``probe(mode="torch")`` when asked. GPUs come from
NVML (nvidia-ml-py), else ``nvidia-smi`` with a short timeout, else ``rocm-smi``. A probe that
fails becomes a string in ``Environment.problems``; :func:`probe` never raises.

For tests and for machines without GPUs, every outside call can be replaced: pass ``runner`` (runs
a command, returns its stdout), ``nvml`` (a module-like object) or ``versions`` (name -> version),
or set ``ACCELCONF_FAKE_NVIDIA_SMI`` to a file holding canned ``nvidia-smi --query-gpu`` output.
Target machines described by flags or a profile are built in :mod:`accelconf.environment.targets`; the rules
that compare an environment with a config live in :mod:`accelconf.environment.checks`.
"""

from __future__ import annotations

import os
import platform as _platform
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Literal

from accelconf import releases
from accelconf.environment.gpus import lookup
from accelconf.versions import installed_version

ProbeMode = Literal["auto", "nvml", "nvidia-smi", "torch", "none"]
PROBE_MODES: tuple[str, ...] = ("auto", "nvml", "nvidia-smi", "torch", "none")

# Distribution names read with importlib.metadata. fp8 backends as accelerate looks for them
# (accelerate/utils/imports.py: is_transformer_engine_available, is_msamp_available, is_torchao_available).
PACKAGES = ("torch", "accelerate", "deepspeed", "transformers")
FP8_BACKENDS: dict[str, tuple[str, ...]] = {
    "transformer-engine": ("transformer-engine", "transformer_engine"),
    "torchao": ("torchao",),
    "ms-amp": ("ms-amp", "msamp"),
}
TORCHAO_FP8_MIN = releases.minimum("torchao-fp8", None) or ""  # is_torchao_available's floor (the newest release's)

NVIDIA_SMI_QUERY = "index,name,compute_cap,memory.total,driver_version"
FAKE_NVIDIA_SMI_ENV = "ACCELCONF_FAKE_NVIDIA_SMI"

Runner = Callable[[list[str], float], str]


@dataclass(frozen=True)
class GPU:
    """One GPU. ``bf16``/``fp8`` are ``None`` when neither the probe nor the table can tell."""

    index: int
    name: str
    model: str | None = None
    compute_capability: tuple[int, int] | None = None
    memory_gib: float | None = None
    bf16: bool | None = None
    fp8: bool | None = None
    vendor: str = "nvidia"
    arch: str | None = None

    @property
    def cc_text(self) -> str:
        cc = self.compute_capability
        return f"{cc[0]}.{cc[1]}" if cc else (self.arch or "?")


@dataclass(frozen=True)
class Environment:
    """What one machine has. Versions are ``None`` when the package is not installed.

    ``unknown`` names the facts nobody stated (a target profile that leaves out
    ``deepspeed_version`` says nothing about DeepSpeed): rules that need them are skipped.
    Possible members: the version field names, ``gpus``, ``gpu_count``, ``fp8_backends``,
    ``cuda_version``. ``num_machines`` is only set for a target. ``default_config`` is the config
    file ``accelerate launch`` reads when given none, if it exists. ``source`` says where the facts
    came from (``detected (nvml)``, ``target h100-node.yaml``, ``arguments``). ``problems`` are
    probe failures; ``notes`` are remarks for the user (an ambiguous GPU name and what was assumed).
    ``local_packages`` names the package facts (version field names, ``fp8_backends``) read from
    this machine's interpreter while the GPUs are described by flags: they may not be the target's.
    """

    python_version: str = ""
    platform: str = ""
    torch_version: str | None = None
    accelerate_version: str | None = None
    deepspeed_version: str | None = None
    transformers_version: str | None = None
    fp8_backends: tuple[str, ...] = ()
    gpus: tuple[GPU, ...] = ()
    cuda_version: str | None = None
    rocm_version: str | None = None
    driver_version: str | None = None
    driver_cuda_version: str | None = None
    num_machines: int | None = None
    default_config: str | None = None
    source: str = "detected"
    problems: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    unknown: frozenset[str] = field(default_factory=frozenset)
    local_packages: frozenset[str] = field(default_factory=frozenset)

    def knows(self, fact: str) -> bool:
        return fact not in self.unknown

    @property
    def gpu_count(self) -> int:
        return len(self.gpus)

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["unknown"] = sorted(self.unknown)
        d["local_packages"] = sorted(self.local_packages)
        d["gpus"] = [
            {**asdict(g), "compute_capability": g.cc_text if g.compute_capability else None} for g in self.gpus
        ]
        return d


def default_config_file(environ: Mapping[str, str] | None = None) -> str:
    """Where ``accelerate launch`` looks for its config when given none (whether or not it exists):
    ``$HF_HOME/accelerate/default_config.yaml``, else under ``$XDG_CACHE_HOME/huggingface``, else
    ``~/.cache/huggingface`` (accelerate/commands/config/config_args.py)."""
    env = os.environ if environ is None else environ
    hf_home = env.get("HF_HOME") or os.path.join(env.get("XDG_CACHE_HOME") or "~/.cache", "huggingface")
    return os.path.join(os.path.expanduser(hf_home), "accelerate", "default_config.yaml")


# -- versions ---------------------------------------------------------------------------------


def _metadata_version(name: str) -> str | None:
    return installed_version(name)


def _version_tuple(v: str) -> tuple[int, ...]:
    nums = re.findall(r"\d+", v.split("+")[0])[:3]
    return tuple(int(n) for n in nums)


def read_versions(versions: Callable[[str], str | None] = _metadata_version) -> dict[str, Any]:
    """Versions of the packages accelconf cares about and the fp8 backends present."""
    out: dict[str, Any] = {f"{name}_version": versions(name) for name in PACKAGES}
    backends = []
    for backend, names in FP8_BACKENDS.items():
        v = next((v for v in map(versions, names) if v), None)
        if v is None:
            continue
        if backend == "torchao" and _version_tuple(v) < _version_tuple(TORCHAO_FP8_MIN):
            continue  # accelerate ignores torchao before 0.6.1
        backends.append(backend)
    out["fp8_backends"] = tuple(backends)
    return out


def torch_build() -> tuple[str | None, str | None]:
    """(CUDA, ROCm) versions the installed torch was built for, read from ``torch/version.py``
    as text, without importing torch. ``(None, None)`` for a CPU-only build or no torch."""
    import importlib.util

    try:
        spec = importlib.util.find_spec("torch")
    except (ImportError, ValueError):
        return None, None
    if spec is None or not spec.submodule_search_locations:
        return None, None
    return torch_build_from(os.path.join(list(spec.submodule_search_locations)[0], "version.py"))


def torch_build_from(version_py: str) -> tuple[str | None, str | None]:
    """(CUDA, ROCm) read as text from a ``torch/version.py`` (any interpreter's); ``(None, None)``
    when the file is missing."""
    try:
        with open(version_py, encoding="utf-8") as fh:
            text = fh.read()
    except OSError:
        return None, None

    def field_of(name: str) -> str | None:
        m = re.search(rf"^{name}\s*(?::[^=]*)?=\s*['\"]([^'\"]+)['\"]", text, re.M)
        return m.group(1) if m else None

    return field_of("cuda"), field_of("hip")


# -- GPUs -------------------------------------------------------------------------------------


def _run(argv: list[str], timeout: float) -> str:
    """Run a command, return stdout; raise on a missing binary, a timeout or a non-zero exit."""
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
    if proc.returncode != 0:
        detail = (proc.stderr or proc.stdout).strip().splitlines()
        raise RuntimeError(f"exit status {proc.returncode}" + (f": {detail[0]}" if detail else ""))
    return proc.stdout


def _gpu_from(
    index: int,
    name: str,
    cc: tuple[int, int] | None,
    mem_gib: float | None,
    vendor: str = "nvidia",
    arch: str | None = None,
) -> GPU:
    model = lookup(name, mem_gib)
    if cc is None and model is not None:
        cc = model.compute_capability
    if vendor == "nvidia" and cc is not None:
        bf16: bool | None = cc >= (8, 0)
        fp8: bool | None = cc >= (8, 9)
    elif model is not None:
        bf16, fp8 = model.bf16, model.fp8
    else:
        bf16 = fp8 = None
    if mem_gib is None and model is not None:
        mem_gib = float(model.memory_gib)
    return GPU(
        index,
        name,
        model.key if model else None,
        cc,
        mem_gib,
        bf16,
        fp8,
        vendor,
        arch or (model.arch if model else None),
    )


def _cc(text: str) -> tuple[int, int] | None:
    m = re.fullmatch(r"\s*(\d+)\.(\d+)\s*", text)
    return (int(m.group(1)), int(m.group(2))) if m else None


def _mib_to_gib(text: str) -> float | None:
    try:
        return round(float(text.strip()) / 1024, 1)
    except ValueError:
        return None


def parse_nvidia_smi(text: str) -> tuple[list[GPU], str | None]:
    """Parse ``--query-gpu=index,name,compute_cap,memory.total,driver_version --format=csv,noheader,nounits``.

    Also accepts the four-column output without ``compute_cap`` (older drivers). Returns (GPUs,
    driver version). Raises ``ValueError`` on output that does not look like either.
    """
    gpus: list[GPU] = []
    driver = None
    for line in text.splitlines():
        if not line.strip():
            continue
        cols = [c.strip() for c in line.split(",")]
        if len(cols) == 5:
            index, name, cc_text, mem, drv = cols
        elif len(cols) == 4:
            index, name, mem, drv = cols
            cc_text = ""
        else:
            raise ValueError(f"unexpected nvidia-smi line: {line.strip()[:80]!r}")
        if not index.isdigit():
            raise ValueError(f"unexpected nvidia-smi line: {line.strip()[:80]!r}")
        gpus.append(_gpu_from(int(index), name, _cc(cc_text), _mib_to_gib(mem)))
        driver = driver or (drv if drv and not drv.startswith("[") else None)
    return gpus, driver


def _probe_nvidia_smi(runner: Runner, timeout: float, fake: str | None) -> tuple[list[GPU], str | None]:
    if fake:
        with open(fake, encoding="utf-8") as fh:
            return parse_nvidia_smi(fh.read())
    exe = shutil.which("nvidia-smi") if runner is _run else "nvidia-smi"
    if exe is None:
        raise FileNotFoundError("nvidia-smi not found")
    fmt = "--format=csv,noheader,nounits"
    try:
        out = runner([exe, f"--query-gpu={NVIDIA_SMI_QUERY}", fmt], timeout)
    except RuntimeError as exc:
        if "compute_cap" not in str(exc):
            raise
        # drivers before 510 do not know compute_cap: ask without it, take CC from the table
        out = runner([exe, "--query-gpu=index,name,memory.total,driver_version", fmt], timeout)
    return parse_nvidia_smi(out)


def _probe_nvml(nvml: Any) -> tuple[list[GPU], str | None, str | None]:
    def text(v: Any) -> str:
        return v.decode() if isinstance(v, bytes) else str(v)

    nvml.nvmlInit()
    try:
        driver = text(nvml.nvmlSystemGetDriverVersion())
        try:
            cv = int(nvml.nvmlSystemGetCudaDriverVersion())
            driver_cuda: str | None = f"{cv // 1000}.{cv % 1000 // 10}"
        except Exception:
            driver_cuda = None
        gpus = []
        for i in range(int(nvml.nvmlDeviceGetCount())):
            h = nvml.nvmlDeviceGetHandleByIndex(i)
            name = text(nvml.nvmlDeviceGetName(h))
            try:
                major, minor = nvml.nvmlDeviceGetCudaComputeCapability(h)
                cc: tuple[int, int] | None = (int(major), int(minor))
            except Exception:
                cc = None
            try:
                mem: float | None = round(nvml.nvmlDeviceGetMemoryInfo(h).total / 2**30, 1)
            except Exception:
                mem = None
            gpus.append(_gpu_from(i, name, cc, mem))
        return gpus, driver, driver_cuda
    finally:
        try:
            nvml.nvmlShutdown()
        except Exception:
            pass


def _nvml_library_present() -> None:
    """On Linux, dlopen libnvidia-ml before importing pynvml (which costs tens of ms): without an
    NVIDIA driver this fails in about a millisecond with the error pynvml would raise."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    try:
        ctypes.CDLL("libnvidia-ml.so.1")
    except OSError as exc:
        raise ImportError("NVML Shared Library Not Found") from exc


def _nvml_missing(exc: BaseException) -> bool:
    """True when NVML is simply absent (no NVIDIA driver): not a problem worth reporting."""
    return isinstance(exc, ImportError) or "LibraryNotFound" in type(exc).__name__ or "not found" in str(exc).lower()


def parse_rocm_smi(text: str) -> list[GPU]:
    """Parse ``rocm-smi --showproductname --showmeminfo vram --json``."""
    import json

    data = json.loads(text)
    gpus = []
    for card, info in sorted(data.items()):
        m = re.fullmatch(r"card(\d+)", card)
        if not m or not isinstance(info, dict):
            continue
        name = str(info.get("Card Series") or info.get("Card series") or info.get("Card model") or card)
        arch = info.get("GFX Version") or None
        total = str(info.get("VRAM Total Memory (B)") or "")
        mem = round(int(total) / 2**30, 1) if total.isdigit() else None
        gpus.append(_gpu_from(int(m.group(1)), name, None, mem, vendor="amd", arch=arch))
    return gpus


def _probe_rocm(runner: Runner, timeout: float) -> list[GPU]:
    exe = shutil.which("rocm-smi") if runner is _run else "rocm-smi"
    if exe is None:
        raise FileNotFoundError("rocm-smi not found")
    return parse_rocm_smi(runner([exe, "--showproductname", "--showmeminfo", "vram", "--json"], timeout))


def _probe_torch() -> tuple[list[GPU], str | None, str | None]:
    import torch  # only on request: importing torch costs seconds

    gpus = []
    vendor = "amd" if getattr(torch.version, "hip", None) else "nvidia"
    if torch.cuda.is_available():
        for i in range(torch.cuda.device_count()):
            props = torch.cuda.get_device_properties(i)
            cc = tuple(torch.cuda.get_device_capability(i))
            gpus.append(
                _gpu_from(
                    i,
                    props.name,
                    cc if vendor == "nvidia" else None,  # type: ignore[arg-type]
                    round(props.total_memory / 2**30, 1),
                    vendor,
                    getattr(props, "gcnArchName", None) if vendor == "amd" else None,
                )
            )
    return gpus, torch.version.cuda, getattr(torch.version, "hip", None)


def _describe(exc: BaseException) -> str:
    if isinstance(exc, subprocess.TimeoutExpired):
        return f"timed out after {exc.timeout:g}s"
    if isinstance(exc, RuntimeError) and str(exc):
        return str(exc)
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def probe(
    mode: str = "auto",
    timeout: float = 2.0,
    *,
    runner: Runner | None = None,
    nvml: Any = None,
    versions: Callable[[str], str | None] | None = None,
    environ: Mapping[str, str] | None = None,
    build: tuple[str | None, str | None] | None = None,
) -> Environment:
    """Detect this machine. Never raises: a failing probe is reported in ``problems``.

    ``mode``: ``auto`` tries NVML, then nvidia-smi, then rocm-smi (each only if present), and never
    torch; ``nvml``/``nvidia-smi``/``torch`` use only that source; ``none`` skips GPU detection.
    With ``ACCELCONF_FAKE_NVIDIA_SMI`` set, ``auto`` reads that file instead of asking NVML.
    Fakes: ``runner``, ``nvml``, ``versions``, ``environ`` and ``build`` (the torch CUDA/ROCm pair).
    """
    problems: list[str] = []
    env = os.environ if environ is None else environ
    vers, cuda, hip = _software(versions, build, problems)
    if mode not in PROBE_MODES:
        problems.append(f"unknown probe mode {mode!r}; use one of {', '.join(PROBE_MODES)}")
        mode = "none"
    found = _gpus(mode, timeout, runner, nvml, env.get(FAKE_NVIDIA_SMI_ENV), problems)
    if found.torch_build is not None:
        cuda, hip = found.torch_build
    notes: list[str] = []
    if found.used != "none" and mode == "auto":
        # a later source answered: an earlier one failing is worth saying, not worth a warning
        notes = [f"{p} ({found.used} answered)" for p in problems if not p.startswith("reading package versions")]
        problems = [p for p in problems if p.startswith("reading package versions")]
    return Environment(
        python_version=_platform.python_version(),
        platform=f"{_platform.system()} {_platform.machine()}".strip(),
        torch_version=vers.get("torch_version"),
        accelerate_version=vers.get("accelerate_version"),
        deepspeed_version=vers.get("deepspeed_version"),
        transformers_version=vers.get("transformers_version"),
        fp8_backends=vers.get("fp8_backends", ()),
        gpus=tuple(found.gpus),
        cuda_version=cuda,
        rocm_version=hip,
        driver_version=found.driver,
        driver_cuda_version=found.driver_cuda,
        default_config=_existing(default_config_file(env)),
        source=_source(mode, found.used),
        problems=tuple(problems),
        notes=tuple(notes),
        unknown=frozenset({"gpus", "gpu_count"}) if mode == "none" else frozenset(),
    )


def _software(
    versions: Callable[[str], str | None] | None, build: tuple[str | None, str | None] | None, problems: list[str]
) -> tuple[dict[str, Any], str | None, str | None]:
    """Package versions and torch's CUDA/ROCm build; a failure is added to ``problems``."""
    try:
        vers = read_versions(versions or _metadata_version)
    except Exception as exc:  # never raise
        vers = {}
        problems.append(f"reading package versions failed: {_describe(exc)}")
    try:
        cuda, hip = torch_build() if build is None else build
    except Exception:
        cuda, hip = None, None
    return vers, cuda, hip


@dataclass
class _Found:
    """What a GPU probe found, and which source answered (``none`` when none did)."""

    gpus: list[GPU] = field(default_factory=list)
    driver: str | None = None
    driver_cuda: str | None = None
    used: str = "none"
    torch_build: tuple[str | None, str | None] | None = None  # (cuda, hip) when torch itself was asked


def _gpus(mode: str, timeout: float, runner: Runner | None, nvml: Any, fake: str | None, problems: list[str]) -> _Found:
    """GPU detection by mode: NVML, then nvidia-smi, then rocm-smi in ``auto``; one source otherwise."""
    run = runner or _run
    found = _Found()
    if mode == "nvml" or (mode == "auto" and not fake):
        try:
            if nvml is None:
                _nvml_library_present()
                import pynvml as nvml_mod
            else:
                nvml_mod = nvml
            found.gpus, found.driver, found.driver_cuda = _probe_nvml(nvml_mod)
            found.used = "nvml"
        except Exception as exc:
            if mode == "nvml" or not _nvml_missing(exc):
                problems.append(f"NVML probe failed: {_describe(exc)}")
    if mode == "nvidia-smi" or (mode == "auto" and found.used == "none"):
        try:
            found.gpus, found.driver = _probe_nvidia_smi(run, timeout, fake)
            found.used = "nvidia-smi"
        except FileNotFoundError as exc:
            if mode == "nvidia-smi" or fake:
                problems.append(f"nvidia-smi probe failed: {exc}")
        except Exception as exc:
            problems.append(f"nvidia-smi probe failed: {_describe(exc)}")
    if mode == "auto" and found.used == "none" and (runner is not None or shutil.which("rocm-smi")):
        try:
            found.gpus = _probe_rocm(run, timeout)
            found.used = "rocm-smi"
        except FileNotFoundError:
            pass
        except Exception as exc:
            problems.append(f"rocm-smi probe failed: {_describe(exc)}")
    if mode == "torch":
        try:
            gpus, cuda, hip = _probe_torch()
            found.gpus, found.torch_build, found.used = gpus, (cuda, hip), "torch"
        except Exception as exc:
            problems.append(f"torch probe failed: {_describe(exc)}")
    return found


def _existing(path: str) -> str | None:
    return path if os.path.isfile(path) else None


def _source(mode: str, used: str) -> str:
    if used != "none":
        return f"detected via {used}"
    if mode == "none":
        return "detected (GPU probe off)"
    return "detected (no GPU driver answered)" if mode == "auto" else f"detected ({mode} failed)"


def timed_probe(mode: str = "auto", timeout: float = 2.0) -> tuple[Environment, float]:
    """:func:`probe` and the seconds it took (for ``accelconf env``)."""
    start = time.perf_counter()
    env = probe(mode, timeout)
    return env, time.perf_counter() - start


def with_overrides(env: Environment, **changes: Any) -> Environment:
    """A copy of ``env`` with some facts replaced; replaced facts become known."""
    known = {k for k in changes if k not in ("unknown", "notes", "problems", "source", "local_packages")}
    if "gpus" in changes:
        known.add("gpu_count")
    unknown = (changes.pop("unknown", env.unknown)) - known
    return replace(env, unknown=frozenset(unknown), **changes)


__all__ = [
    "Environment",
    "FAKE_NVIDIA_SMI_ENV",
    "GPU",
    "PROBE_MODES",
    "default_config_file",
    "parse_nvidia_smi",
    "parse_rocm_smi",
    "probe",
    "read_versions",
    "timed_probe",
    "torch_build",
    "with_overrides",
]
