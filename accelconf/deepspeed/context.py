"""The context every DeepSpeed rule gets (:mod:`.validate`'s key rules and :mod:`.rules`' rules between
keys): the document, the runtime, the DeepSpeed version, and where findings go."""

from __future__ import annotations

from dataclasses import dataclass, field

from packaging.version import Version

from accelconf.deepspeed.keys import _ver
from accelconf.findings import Finding, Severity
from accelconf.text.document import Document, Node


@dataclass
class Context:
    """What every DeepSpeed rule writes to: the document, the runtime that reads it, the DeepSpeed
    version (``None``: unknown) and the findings so far."""

    doc: Document
    runtime: str
    version: Version | None
    findings: list[Finding] = field(default_factory=list)
    autotuning: bool = False

    def add(
        self, rule: str, severity: Severity, message: str, key: str, node: Node | None, suggestion: str | None = None
    ) -> None:
        if node is None:  # at the key, else at its nearest parent (Document.span)
            line, col, end_line, end_col = self.doc.span(key)
            self.findings.append(Finding(rule, severity, message, key, line, col, suggestion, end_line, end_col))
            return
        self.findings.append(
            Finding(
                rule,
                severity,
                message,
                key,
                node.line + 1,
                node.col + 1,
                suggestion,
                node.end_line + 1,
                node.end_col + 1,
            )
        )

    def active(self, since: str | None, removed: str | None) -> bool | None:
        """True if the key exists in the target version, False if not, None if unknown (no version)."""
        if self.version is None:
            return None
        s, r = _ver(since), _ver(removed)
        if s is not None and self.version < s:
            return False
        if r is not None and self.version >= r:
            return False
        return True
