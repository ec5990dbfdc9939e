"""Findings: what validation, checks and conversions report about a configuration.

A :class:`Finding` is a value, never an exception. Lines and columns are 1-based, as the CLI prints
them (``FILE:LINE:COL``); 0 means "no position" (for example a setting that is missing).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Literal

Severity = Literal["error", "warning", "info"]
SEVERITY_ORDER: dict[str, int] = {"error": 0, "warning": 1, "info": 2}


@dataclass(frozen=True)
class Finding:
    """One problem or remark about one place in a document.

    ``key`` is the dotted key path (``fsdp_config.fsdp_version``); ``end_line``/``end_column``
    (1-based, exclusive end) give the span for editors when known. ``fix`` is an optional list of
    text edits ``(start_offset, end_offset, replacement)`` that repairs the problem.
    """

    rule: str
    severity: Severity
    message: str
    key: str = ""
    line: int = 0
    column: int = 0
    suggestion: str | None = None
    end_line: int = 0
    end_column: int = 0
    path: str = ""
    fix: tuple[tuple[int, int, str], ...] = field(default=(), compare=False)

    def __post_init__(self) -> None:
        # the exit code and every output format key on the three words: a misspelt severity would
        # make an error finding exit 0 and render as nothing any reader knows
        if self.severity not in SEVERITY_ORDER:
            raise ValueError(f"finding {self.rule!r}: severity {self.severity!r} is not error, warning or info")

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d.pop("fix")
        d.pop("path")
        return d

    def with_path(self, path: str) -> Finding:
        return replace(self, path=path)


def sort_findings(findings: Iterable[Finding]) -> list[Finding]:
    return sorted(findings, key=lambda f: (f.path, f.line or 10**9, f.column, SEVERITY_ORDER[f.severity], f.rule))


def count_errors(findings: Iterable[Finding]) -> int:
    return sum(1 for f in findings if f.severity == "error")
