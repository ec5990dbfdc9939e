"""The conversion hub: one reader (text -> Config) and one writer (Config -> text) per format.

Formats: ``yaml`` and ``json`` (the accelerate config file), ``env`` (dotenv ``KEY=VALUE`` lines:
what ``accelerate launch`` exports), ``cli`` (``accelerate launch`` flags) and ``kwargs`` (Python
source building ``Accelerator(...)`` and its plugins). Converting A to B is
``write(read(text, A), B)``; every format goes through :class:`accelconf.accelerate.model.Config`, so N formats
need N readers and N writers. Writers return ``(text, findings)``: every lossy step is a finding.
"""

from __future__ import annotations

import os
from typing import Any, Callable

from accelconf.errors import UsageError
from accelconf.findings import Finding
from accelconf.accelerate.model import Config

FORMATS: tuple[str, ...] = ("yaml", "json", "env", "cli", "kwargs")
SUFFIXES: dict[str, str] = {".yaml": "yaml", ".yml": "yaml", ".json": "json", ".env": "env", ".py": "kwargs", ".sh": "cli"}


def _module(fmt: str) -> Any:
    if fmt in ("yaml", "json"):
        from accelconf.formats import yamljson as mod
    elif fmt == "env":
        from accelconf.formats import env as mod  # type: ignore[no-redef]
    elif fmt == "cli":
        from accelconf.formats import cli as mod  # type: ignore[no-redef]
    elif fmt == "kwargs":
        from accelconf.formats import kwargs as mod  # type: ignore[no-redef]
    else:
        raise UsageError(f"unknown format {fmt!r} (choose from {', '.join(FORMATS)})")
    return mod


def detect_format(text: str, path: str = "") -> str:
    """The format of a text: from the file suffix, else from the content."""
    # "-", "<stdin>" and "<text>" have no suffix; splitext gives a dotfile such as ".env" none either
    suffix = os.path.splitext(path)[1].lower()
    if suffix in SUFFIXES:
        return SUFFIXES[suffix]
    if os.path.basename(path).lower().endswith(".env"):
        return "env"
    lines = [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.strip().startswith("#")]
    if not lines:
        return "yaml"
    first = lines[0]
    if first.startswith(("accelerate ", "accelerate-launch", "--")):
        return "cli"
    if first.startswith(("{", "[")):
        return "json"
    if any(tok in text for tok in ("Accelerator(", "Plugin(", "import accelerate", "from accelerate")):
        return "kwargs"
    import re

    if all(re.match(r"^(export\s+)?[A-Za-z_][A-Za-z0-9_]*=", ln) for ln in lines):
        return "env"
    return "yaml"


def read(text: str, fmt: str | None = None, path: str = "<text>", version: str | None = None) -> Config:
    """Read a text in any format into a Config (``fmt`` None: detect)."""
    fmt = fmt or detect_format(text, path)
    cfg: Config = _module(fmt).read(text, path=path, version=version, fmt=fmt)
    cfg.format = fmt
    return cfg


def write(cfg: Config, fmt: str, version: str | None = None, **opts: Any) -> tuple[str, list[Finding]]:
    """Write a Config in a format; returns the text and the findings of lossy steps."""
    writer: Callable[..., tuple[str, list[Finding]]] = _module(fmt).write
    return writer(cfg, version=version, fmt=fmt, **opts)


__all__ = ["FORMATS", "detect_format", "read", "write"]
