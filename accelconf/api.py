"""Convenience functions behind the public API: each accepts a path, a Document or text."""

from __future__ import annotations

import os
from typing import Any

from accelconf.text.document import Document, load_file, load_text
from accelconf.findings import Finding
from accelconf.accelerate.model import Config


def _doc(source: Document | str | os.PathLike[str]) -> Document:
    if isinstance(source, Document):
        return source
    s = os.fspath(source)
    if "\n" in s or not os.path.exists(s):
        return load_text(s)
    return load_file(s)


def validate_config(source: Document | str | os.PathLike[str], *, accelerate_version: str | None = None, **kw: Any) -> list[Finding]:
    """Findings for an accelerate config or a DeepSpeed JSON (a path, text or Document)."""
    from accelconf.accelerate.validate import validate_any

    return validate_any(_doc(source), accelerate_version=accelerate_version, **kw)


def read_config(source: Document | str | os.PathLike[str], fmt: str | None = None, *, version: str | None = None) -> Config:
    """Read any supported format (yaml, json, env, cli, kwargs) into the one model."""
    from accelconf import formats

    if isinstance(source, Document):
        from accelconf.accelerate.model import from_document

        return from_document(source, version)
    s = os.fspath(source)
    if "\n" not in s and os.path.exists(s):
        with open(s, encoding="utf-8") as fh:
            return formats.read(fh.read(), fmt, path=s, version=version)
    return formats.read(s, fmt, version=version)


def convert(source: Document | str | os.PathLike[str], to: str, *, fmt: str | None = None, version: str | None = None) -> tuple[str, list[Finding]]:
    """Convert a config to another format: returns (text, findings about lossy steps)."""
    from accelconf import formats

    return formats.write(read_config(source, fmt, version=version), to, version=version)


def diff_configs(a: Any, b: Any, *, version: str | None = None, ignore: tuple[str, ...] = ()) -> Any:
    """Semantic diff of two configs (paths, texts or Configs)."""
    from accelconf import diff as diffmod

    ca = a if isinstance(a, Config) else read_config(a, version=version)
    cb = b if isinstance(b, Config) else read_config(b, version=version)
    return diffmod.diff(ca, cb, version=version, ignore=ignore)


def check_config(source: Document | str | os.PathLike[str], env: Any = None, **kw: Any) -> list[Finding]:
    """Findings for a config against an environment (a probe result or target; default: detect)."""
    from accelconf.environment.checks import check_environment
    from accelconf.environment.probe import probe

    doc = _doc(source)
    return validate_config(doc, **kw) + check_environment(doc, env if env is not None else probe())


def estimate_memory(config: Document | str | os.PathLike[str], *, params: int | str | None = None,
                    model: str | os.PathLike[str] | None = None, target: Any = None, seq_len: int | None = None,
                    micro_batch: int | None = None, host_ram_gib: float | None = None) -> Any:
    """Training memory per GPU and host RAM per node for a config and a model (``params="8B"`` or
    ``model=DIR``) on a ``target`` (an Environment from ``target_from_args``/``load_target``, a profile
    path, or ``None``: no machine, figures only). Returns :class:`accelconf.environment.memory.Report`
    (``.estimate``, ``.verdict``, ``.suggestion``, ``.to_json()``)."""
    from accelconf.environment import memory, modelsize
    from accelconf.environment.probe import Environment
    from accelconf.errors import UsageError

    if (params is None) == (model is None):
        raise UsageError("estimate_memory needs params=... or model=..., not both")
    size = modelsize.from_model_dir(os.fspath(model)) if model is not None else modelsize.from_count(params)  # type: ignore[arg-type]
    if target is None:
        from accelconf.environment.targets import ALL_FACTS

        target = Environment(source="no target", unknown=ALL_FACTS)
    elif not isinstance(target, Environment):
        from accelconf.environment.targets import load_target

        target = load_target(target)
    return memory.check_memory(_doc(config), target, size, seq_len=seq_len, micro_batch=micro_batch,
                               host_ram_gib=host_ram_gib)[0]
