"""Findings: what validation, checks and conversions report about a configuration.

A :class:`Finding` is a value, never an exception. Lines and columns are 1-based, as the CLI prints
them (``FILE:LINE:COL``); 0 means "no position" (for example a setting that is missing).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

Severity = Literal["error", "warning", "info"]
SEVERITY_ORDER: dict[str, int] = {"error": 0, "warning": 1, "info": 2}


_FIELDS = (
    "rule", "severity", "message", "key", "line", "column", "suggestion", "end_line", "end_column", "path", "fix",
)  # fmt: skip


class Finding:
    """One problem or remark about one place in a document.

    ``key`` is the dotted key path (``fsdp_config.fsdp_version``); ``end_line``/``end_column``
    (1-based, exclusive end) give the span for editors when known. ``fix`` is an optional list of
    text edits ``(start_offset, end_offset, replacement)`` that repairs the problem.

    A frozen value: two findings are equal (and hash alike) when every field but ``fix`` is;
    :meth:`replace` makes a changed copy. (Not a dataclass: every command creates findings, and
    importing ``dataclasses`` costs about 7 ms of start-up.)
    """

    rule: str
    severity: Severity
    message: str
    key: str
    line: int
    column: int
    suggestion: str | None
    end_line: int
    end_column: int
    path: str
    fix: tuple[tuple[int, int, str], ...]

    def __init__(
        self,
        rule: str,
        severity: Severity,
        message: str,
        key: str = "",
        line: int = 0,
        column: int = 0,
        suggestion: str | None = None,
        end_line: int = 0,
        end_column: int = 0,
        path: str = "",
        fix: tuple[tuple[int, int, str], ...] = (),
    ) -> None:
        values = (rule, severity, message, key, line, column, suggestion, end_line, end_column, path, fix)
        self.__dict__.update(zip(_FIELDS, values))
        # the exit code and every output format key on the three words: a misspelt severity would
        # make an error finding exit 0 and render as nothing any reader knows
        if self.severity not in SEVERITY_ORDER:
            raise ValueError(f"finding {self.rule!r}: severity {self.severity!r} is not error, warning or info")

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"cannot assign to field {name!r}: a Finding is frozen (use .replace)")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r}: a Finding is frozen")

    def _compared(self) -> tuple[Any, ...]:
        return tuple(self.__dict__[name] for name in _FIELDS[:-1])  # all but fix

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._compared() == other._compared()

    def __hash__(self) -> int:
        return hash(self._compared())

    def __repr__(self) -> str:
        return "Finding(" + ", ".join(f"{name}={self.__dict__[name]!r}" for name in _FIELDS) + ")"

    def replace(self, **changes: Any) -> Finding:
        """A copy with the fields named changed (``dataclasses.replace``)."""
        return Finding(**{**{name: self.__dict__[name] for name in _FIELDS}, **changes})

    def to_json(self) -> dict[str, Any]:
        return {name: self.__dict__[name] for name in _FIELDS[:-2]}  # neither path nor fix

    def with_path(self, path: str) -> Finding:
        return self.replace(path=path)


def sort_findings(findings: Iterable[Finding]) -> list[Finding]:
    return sorted(findings, key=lambda f: (f.path, f.line or 10**9, f.column, SEVERITY_ORDER[f.severity], f.rule))


def count_errors(findings: Iterable[Finding]) -> int:
    return sum(1 for f in findings if f.severity == "error")
