"""The conversion hub: one reader (text -> Config) and one writer (Config -> text) per format.

Formats: ``yaml`` and ``json`` (the accelerate config file), ``env`` (dotenv ``KEY=VALUE`` lines:
what ``accelerate launch`` exports), ``cli`` (``accelerate launch`` flags; a whole shell or sbatch
script, launch by launch, through :func:`accelconf.formats.cli.read_script`) and ``kwargs`` (Python
source building ``Accelerator(...)`` and its plugins). Converting A to B is
``write(read(text, A), B)``; every format goes through :class:`accelconf.accelerate.model.Config`, so N formats
need N readers and N writers. Writers return ``(text, findings)``: every lossy step is a finding.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any, NamedTuple

from accelconf.accelerate.model import Config
from accelconf.errors import UsageError
from accelconf.findings import Finding
from accelconf.kinds import ENV_SUFFIX, SCRIPT_SUFFIXES, text_format
from accelconf.text.document import FILE_SUFFIXES


class FormatSpec(NamedTuple):
    """One format: ``module`` (under :mod:`accelconf.formats`) has ``read(text, path=, version=, fmt=)``
    and ``write(cfg, version=, fmt=, **opts)``; ``launch``: written from what ``accelerate launch``
    does (so refused for a config it would not launch). Adding a format is one entry and one module;
    which format a text is stays the recogniser's (:func:`accelconf.kinds.text_format`), whose suffix
    tables :attr:`suffixes` reads."""

    name: str
    module: str
    launch: bool = False

    @property
    def suffixes(self) -> tuple[str, ...]:
        table = {**FILE_SUFFIXES, **SCRIPT_SUFFIXES, ENV_SUFFIX: "env"}
        return tuple(sorted(sfx for sfx, fmt in table.items() if fmt == self.name))

    def reader(self) -> Callable[..., Config]:
        return importlib.import_module(f"accelconf.formats.{self.module}").read  # type: ignore[no-any-return]

    def writer(self) -> Callable[..., tuple[str, list[Finding]]]:
        return importlib.import_module(f"accelconf.formats.{self.module}").write  # type: ignore[no-any-return]


SPECS: dict[str, FormatSpec] = {
    spec.name: spec
    for spec in (
        FormatSpec("yaml", "yamljson"),
        FormatSpec("json", "yamljson"),
        FormatSpec("env", "env", launch=True),
        FormatSpec("cli", "cli", launch=True),
        FormatSpec("kwargs", "kwargs", launch=True),
    )
}
FORMATS: tuple[str, ...] = tuple(SPECS)
LAUNCH_FORMATS = tuple(
    name for name, spec in SPECS.items() if spec.launch
)  # formats written from what `accelerate launch` does


def spec(fmt: str) -> FormatSpec:
    """The spec of a format name, else a :class:`UsageError` naming the known ones."""
    if fmt not in SPECS:
        raise UsageError(f"unknown format {fmt!r} (choose from {', '.join(FORMATS)})")
    return SPECS[fmt]


def detect_format(text: str, path: str = "") -> str:
    """The format of a text: from the file suffix, else from the content (the recogniser of file
    kinds decides, :func:`accelconf.kinds.text_format`)."""
    return text_format(text, path)


def read(text: str, fmt: str | None = None, path: str = "<text>", version: str | None = None) -> Config:
    """Read a text in any format into a Config (``fmt`` None: detect)."""
    fmt = fmt or detect_format(text, path)
    cfg: Config = spec(fmt).reader()(text, path=path, version=version, fmt=fmt)
    cfg.format = fmt
    return cfg


def write(cfg: Config, fmt: str, version: str | None = None, **opts: Any) -> tuple[str, list[Finding]]:
    """Write a Config in a format; returns the text and the findings of lossy steps.

    A config accelerate refuses to launch cannot be written as what the launch gives: for env, cli
    and kwargs this raises :class:`accelconf.accelerate.launch.LaunchError` (exit 2 in the CLI).
    """
    if spec(fmt).launch:
        _refuse_unlaunchable(cfg, version)
    return spec(fmt).writer()(cfg, version=version, fmt=fmt, **opts)


def _refuse_unlaunchable(cfg: Config, version: str | None = None) -> None:
    from accelconf.accelerate.launch import LaunchError
    from accelconf.accelerate.validate import null_counts, quoted_counts

    found = null_counts(
        cfg.get("num_processes"), cfg.get("num_machines"), cfg.get("distributed_type"), cfg.entries, cfg.get("use_cpu")
    )
    if cfg.format in ("yaml", "json"):  # a file's quoted number stays a string; flags and env vars do not
        found += [(key, message) for key, message, _ in quoted_counts(cfg.as_dict(), version)]
    for key, message in found:
        e = cfg.entries[key]
        raise LaunchError(message, cfg.source or "<text>", e.line, e.column)


def value_findings(cfg: Config, version: str | None = None) -> list[Finding]:
    """validate's value rules over a Config read from any format, at the input's own positions.

    The rules are functions of the setting, its entry and the release
    (:func:`accelconf.accelerate.validate.valuerules.config_problems`), the same validate applies
    to a YAML file's nodes; each finding is at the line and column of the entry it is about (a
    flag, a variable, a keyword argument), named by where the value came from.
    """
    from accelconf.accelerate.registry import resolve_version
    from accelconf.accelerate.validate.valuerules import config_problems

    out = []
    for e, p in config_problems(cfg, resolve_version(version)):
        message = p.message if not e.where or e.origin == "file" else f"{e.where}: {p.message}"
        out.append(Finding(p.rule, p.severity, message, e.path, e.line, e.column, p.suggestion))
    return out


__all__ = ["FORMATS", "SPECS", "FormatSpec", "detect_format", "read", "spec", "value_findings", "write"]
