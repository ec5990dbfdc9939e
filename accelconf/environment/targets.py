"""Target machines: the environment a config will run in, described instead of detected.

This module owns the machine profile format and turns it, or ``check``'s ``--gpus``/``--gpu``/
``--*-version`` flags, into an :class:`accelconf.environment.probe.Environment`. A profile is a small YAML
file::

    gpu: H100-80GB            # any spelling accelconf.environment.gpus.lookup accepts
    gpus_per_node: 8
    num_machines: 2
    torch_version: "2.6.0"
    accelerate_version: "1.15.0"
    deepspeed_version: none   # not installed; leave the key out when you do not know
    transformers_version: "4.57.1"
    cuda_version: "12.4"
    fp8_backends: [transformer-engine]

Facts a profile leaves out are *unknown* (``Environment.unknown``), and the rules that need them
are skipped; they are never filled in from the machine running accelconf. A bad profile raises
:class:`accelconf.errors.InputError` with the 1-based line and column of the offending value.
Detecting this machine is :mod:`accelconf.environment.probe`'s job; comparing with a config is
:mod:`accelconf.environment.checks`'.
"""

from __future__ import annotations

import os
import re
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from accelconf.environment.gpus import known_models, lookup, resolve
from accelconf.environment.probe import FP8_BACKENDS, GPU, PACKAGES, Environment, with_overrides
from accelconf.errors import InputError, UsageError
from accelconf.text import suggest
from accelconf.text.document import load_file

if TYPE_CHECKING:
    from accelconf.text.document import Document

PACKAGE_FACTS = tuple(f"{name}_version" for name in PACKAGES)
VERSION_KEYS = ("torch_version", "accelerate_version", "deepspeed_version", "transformers_version", "cuda_version")
PROFILE_KEYS = ("gpu", "gpus_per_node", "num_machines", *VERSION_KEYS, "fp8_backends")
_NOT_INSTALLED = {"none", "no", "false", "null", "~", "", "not installed"}
_VERSION_RE = re.compile(r"^\d+(\.\d+){0,3}([.+-]?[0-9A-Za-z.+-]*)?$")

# Everything a target does not state. Stated facts are removed by with_overrides().
ALL_FACTS = frozenset({*VERSION_KEYS, "gpus", "gpu_count", "fp8_backends"})


def unknown_environment() -> Environment:
    """An environment that knows nothing (no target given): estimates without a verdict."""
    return Environment(source="no target", unknown=ALL_FACTS)


def gpus_of(model_name: str, count: int) -> tuple[tuple[GPU, ...], str | None]:
    """``count`` GPUs of a table model, and the ambiguity note (``'a100' could be ...``).

    Raises :class:`UsageError` for a name that is not in the table.
    """
    match = resolve(model_name)
    if match is None:
        raise UsageError(f"unknown GPU model {model_name!r}; known: {', '.join(known_models())}")
    m = match.model
    gpus = tuple(
        GPU(i, m.key, m.key, m.compute_capability, float(m.memory_gib), m.bf16, m.fp8, m.vendor, m.arch)
        for i in range(max(count, 1))
    )
    return gpus, match.note


def _version(value: Any, key: str, allow_none: bool) -> str | None:
    text = "" if value is None or value is False else str(value).strip()
    if text.lower() in _NOT_INSTALLED:
        if allow_none:
            return None
        raise ValueError(f"{key} must be a version such as 2.6.0")
    if not _VERSION_RE.match(text):
        raise ValueError(f"{key}: {text!r} is not a version")
    return text


def target_from_args(
    gpus: int | None = None,
    gpu: str | None = None,
    torch_version: str | None = None,
    accelerate_version: str | None = None,
    deepspeed_version: str | None = None,
    num_machines: int | None = None,
    *,
    base: Environment | None = None,
    transformers_version: str | None = None,
    cuda_version: str | None = None,
) -> Environment:
    """An environment from ``check``'s flags, laid over ``base`` (a probe or a profile).

    Arguments left as ``None`` keep ``base``'s fact, or stay unknown when there is no base.
    ``deepspeed_version="none"`` means DeepSpeed is not installed. ``gpus`` is GPUs per node;
    without ``gpu`` the model is taken from ``base``'s GPUs when it has some, else unknown.
    Notes for the user (an ambiguous GPU name) are added to ``notes``. Raises
    :class:`UsageError` on a bad value.
    """
    env = base or Environment(source="arguments", unknown=ALL_FACTS)
    if gpus is not None and gpus < 0:
        raise UsageError("--gpus must be 0 or more")
    if num_machines is not None and num_machines < 1:
        raise UsageError("--num-machines must be 1 or more")
    changes, notes, count_unknown = _gpu_changes(env, gpus, gpu)
    changes.update(
        _version_changes(
            torch_version=torch_version,
            accelerate_version=accelerate_version,
            transformers_version=transformers_version,
            cuda_version=cuda_version,
            deepspeed_version=deepspeed_version,
        )
    )
    if num_machines is not None:
        changes["num_machines"] = num_machines
    detected = base is not None and base.source.startswith("detected")
    build_unknown = False
    if cuda_version is None and changes.get("torch_version"):
        # a torch version given describes that torch: its build is its local suffix, never this machine's
        cuda, rocm, build_unknown = torch_build_of(changes["torch_version"])
        changes["cuda_version"], changes["rocm_version"] = cuda, rocm
    elif "gpus" in changes and cuda_version is None and detected:
        # this machine's torch build says nothing about the CUDA of the machine described
        changes["cuda_version"] = None
        changes["rocm_version"] = None
        build_unknown = True
    if "gpus" in changes and detected and "packages of " not in env.source:
        # the packages are this interpreter's, the GPUs another machine's: see rule_torch/rule_deepspeed
        changes["local_packages"] = frozenset(
            k for k in (*PACKAGE_FACTS, "fp8_backends") if k not in changes and env.knows(k)
        )
    if changes and base is not None:
        changes["source"] = (
            "arguments + installed versions" if detected and "gpus" in changes else f"{env.source} + arguments"
        )
    if notes:
        changes["notes"] = env.notes + tuple(notes)
    out = with_overrides(env, **changes)
    extra = {"gpu_count"} if count_unknown else set()
    if build_unknown:
        extra.add("cuda_version")
    return replace(out, unknown=out.unknown | extra) if extra else out


def torch_build_of(torch_version: str) -> tuple[str | None, str | None, bool]:
    """(CUDA, ROCm, unknown) a torch version's local suffix names, as PyTorch's wheels spell it:
    ``2.7.1+cu126`` is CUDA 12.6, ``2.5.1+rocm6.2`` ROCm 6.2, ``+cpu`` neither. Without a suffix
    (or with another) the build is unknown: ``(None, None, True)``."""
    local = torch_version.partition("+")[2].lower()
    cu = re.fullmatch(r"cu(\d+)(\d)", local)
    if cu:
        return f"{int(cu.group(1))}.{cu.group(2)}", None, False
    rocm = re.fullmatch(r"rocm(\d+(?:\.\d+)*)", local)
    if rocm:
        return None, ".".join(rocm.group(1).split(".")[:2]), False
    if local == "cpu":
        return None, None, False
    return None, None, True


def _gpu_changes(env: Environment, gpus: int | None, gpu: str | None) -> tuple[dict[str, Any], list[str], bool]:
    """The GPUs ``--gpus``/``--gpu`` describe over ``env``: (changes, notes, whether the count stays unknown)."""
    changes: dict[str, Any] = {}
    notes: list[str] = []
    if gpu is not None:
        count = gpus if gpus is not None else (env.gpu_count if env.knows("gpu_count") and env.gpus else 1)
        made, note = gpus_of(gpu, count)
        changes["gpus"] = () if gpus == 0 else made
        if note:
            notes.append(note)
        return changes, notes, gpus is None and not (env.knows("gpu_count") and env.gpus)
    if gpus is not None:
        if env.gpus and env.knows("gpus"):
            first = env.gpus[0]
            changes["gpus"] = tuple(
                GPU(
                    i,
                    first.name,
                    first.model,
                    first.compute_capability,
                    first.memory_gib,
                    first.bf16,
                    first.fp8,
                    first.vendor,
                    first.arch,
                )
                for i in range(gpus)
            )
        else:
            changes["gpus"] = tuple(GPU(i, "unknown model") for i in range(gpus))
            if gpus:
                notes.append("--gpus without --gpu: the GPU model is unknown, bf16/fp8 support is not checked")
    return changes, notes, False


def _version_changes(**versions: str | None) -> dict[str, Any]:
    """The versions given (``None``: not given), checked; "none" is "not installed" except for CUDA."""
    changes: dict[str, Any] = {}
    for key, value in versions.items():
        if value is not None:
            try:
                changes[key] = _version(value, key, allow_none=key != "cuda_version")
            except ValueError as exc:
                raise UsageError(str(exc)) from exc
    return changes


# Machine profiles shipped with the package (accelconf/environment/profiles/*.yaml), selectable by
# name: `check --target h100-node`. A path to a file of one's own works everywhere a name does.
PROFILES_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "profiles")


def profile_names() -> list[str]:
    """Names of the shipped machine profiles (``h100-node``, ...), sorted."""
    try:
        return sorted(f[:-5] for f in os.listdir(PROFILES_DIR) if f.endswith(".yaml"))
    except OSError:
        return []


def find_target(name_or_path: str | os.PathLike[str]) -> str:
    """The profile file for ``name_or_path``: an existing file, else a shipped profile's name.
    Raises :class:`UsageError` naming the shipped profiles when it is neither."""
    p = os.fspath(name_or_path)
    if os.path.isfile(p):
        return p
    name = p[:-5] if p.endswith(".yaml") else p
    if os.sep not in name and name in profile_names():
        return os.path.join(PROFILES_DIR, name + ".yaml")
    raise UsageError(f"--target {p!r} is neither a file nor a shipped profile ({', '.join(profile_names())})")


class _Profile:
    """A loaded machine profile: its facts as read, and errors placed at the offending key or value."""

    def __init__(self, path: str, doc: Document) -> None:
        self.path, self.doc = path, doc
        self.data: dict[str, Any] = doc.data if isinstance(doc.data, dict) else {}

    def fail(self, message: str, key: str | None = None, value: bool = True) -> InputError:
        line, col = self.doc.position(key, value=value) if key else (1, 1)
        return InputError(message, self.path, line, col)

    def raw(self, key: str) -> Any:
        # Versions as written: an unquoted 2.10 is the float 2.1 to YAML, but the user meant 2.10.
        data = self.data
        node = self.doc.node((key,))
        if (
            node is not None
            and node.kind == "scalar"
            and node.style is None
            and isinstance(data[key], (int, float))
            and not isinstance(data[key], bool)
        ):
            return node.raw
        return data[key]

    def count(self, key: str, minimum: int) -> int | None:
        if key not in self.data:
            return None
        v = self.data[key]
        if isinstance(v, bool) or not isinstance(v, int) or v < minimum:
            raise self.fail(f"{key} must be a whole number of at least {minimum}", key)
        return v


def load_target(path: str | os.PathLike[str]) -> Environment:
    """Read a machine profile (a file, or a shipped profile's name). Raises :class:`InputError`
    (with a position) on a bad one, :class:`UsageError` when there is no such file or profile."""
    p = find_target(path)
    prof = _Profile(p, load_file(p))
    _check_profile_keys(prof)
    data = prof.data
    per_node = prof.count("gpus_per_node", 0)
    machines = prof.count("num_machines", 1)
    changes, notes = _profile_gpus(prof, per_node)
    for key in VERSION_KEYS:
        if key in data:
            try:
                changes[key] = _version(prof.raw(key), key, allow_none=key != "cuda_version")
            except ValueError as exc:
                raise prof.fail(str(exc), key) from exc
    if changes.get("torch_version") and "cuda_version" not in data:
        cuda, rocm, unknown = torch_build_of(changes["torch_version"])
        if not unknown:
            changes["cuda_version"], changes["rocm_version"] = cuda, rocm
    if "fp8_backends" in data:
        changes["fp8_backends"] = _profile_fp8_backends(prof)
    if machines is not None:
        changes["num_machines"] = machines
    base = Environment(source=f"target {os.path.basename(p)}", unknown=ALL_FACTS)
    env = with_overrides(base, **changes)
    if "gpu" in data and per_node is None:
        env = replace(env, unknown=env.unknown | {"gpu_count"})
    if notes:
        env = with_overrides(env, notes=tuple(notes))
    return env


def _check_profile_keys(prof: _Profile) -> None:
    """A profile is a mapping of known keys."""
    data = prof.doc.data
    if data is None:
        raise prof.fail("the target profile is empty")
    if not isinstance(data, dict):
        raise prof.fail("a target profile is a mapping of facts (gpu, gpus_per_node, torch_version, ...)")
    for key in data:
        if key not in PROFILE_KEYS:
            close = suggest.ranked(str(key), PROFILE_KEYS, 1)
            hint = f"; did you mean {close[0]!r}?" if close else f"; known keys: {', '.join(PROFILE_KEYS)}"
            raise prof.fail(f"unknown key {key!r} in target profile{hint}", str(key), value=False)


def _profile_gpus(prof: _Profile, per_node: int | None) -> tuple[dict[str, Any], list[str]]:
    """The GPUs a profile's ``gpu`` and ``gpus_per_node`` describe: (changes, notes)."""
    data = prof.data
    changes: dict[str, Any] = {}
    notes: list[str] = []
    if "gpu" in data:
        if not isinstance(data["gpu"], str):
            raise prof.fail("gpu must be a model name such as H100-80GB", "gpu")
        if lookup(data["gpu"]) is None:
            raise prof.fail(f"unknown GPU model {data['gpu']!r}; known: {', '.join(known_models())}", "gpu")
        gpus, note = gpus_of(data["gpu"], per_node if per_node is not None else 1)
        changes["gpus"] = () if per_node == 0 else gpus
        if note:
            notes.append(note)
    elif per_node is not None:
        changes["gpus"] = tuple(GPU(i, "unknown model") for i in range(per_node))
    return changes, notes


def _profile_fp8_backends(prof: _Profile) -> tuple[str, ...]:
    """``fp8_backends``: a list (one name, or none, also accepted) of known backends."""
    v = prof.data["fp8_backends"]
    if v is None or v == "none":
        v = []
    if isinstance(v, str):
        v = [v]
    if not isinstance(v, list) or any(b not in FP8_BACKENDS for b in v):
        raise prof.fail(f"fp8_backends is a list drawn from {', '.join(FP8_BACKENDS)}", "fp8_backends")
    return tuple(v)
