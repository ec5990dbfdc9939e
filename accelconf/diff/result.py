"""The result of a diff: :class:`Change` (one difference in meaning) and :class:`DiffResult`.

This module owns the values every kind of diff returns and the two comparisons they share: whether
two canonical values are one value (:func:`same`) and whether a key path is ignored (:func:`matches`).
Computing changes is left to :mod:`accelconf.diff.accelerate` and :mod:`accelconf.diff.deepspeed`.
Line numbers are 1-based; 0 means the value did not come from a line.
"""

from __future__ import annotations

import fnmatch
import math
from dataclasses import dataclass, field
from typing import Any, Iterable, Literal

# What a Change is; not :data:`accelconf.assist.Kind` (what a document is).
ChangeKind = Literal["changed", "added", "removed", "not_comparable"]
KINDS: tuple[str, ...] = ("changed", "added", "removed", "not_comparable")


@dataclass(frozen=True)
class Change:
    """One difference in meaning.

    ``a``/``b`` are the values in canonical spelling (the effective default where a side does not
    set the key, ``None`` where there is none). ``kind``: ``changed`` (both sides set it),
    ``added`` (only B sets it), ``removed`` (only A sets it), ``not_comparable`` (one side's
    format cannot express it). ``a_key``/``b_key`` are set when the two sides spell one setting
    with different keys (FSDP1 vs FSDP2).
    """

    key: str
    a: Any
    b: Any
    kind: ChangeKind
    a_line: int = 0
    b_line: int = 0
    a_where: str = ""
    b_where: str = ""
    note: str = ""
    a_key: str = ""
    b_key: str = ""

    @property
    def section(self) -> str:
        """The part of the key before the first dot (``""`` for top-level keys)."""
        return self.key.split(".", 1)[0] if "." in self.key else ""

    def mirrored(self) -> "Change":
        """The same change seen from the other side (A and B swapped)."""
        kind: ChangeKind = {"added": "removed", "removed": "added"}.get(self.kind, self.kind)  # type: ignore[assignment]
        return Change(self.key, self.b, self.a, kind, self.b_line, self.a_line, self.b_where, self.a_where,
                      _mirror_note(self.note), self.b_key, self.a_key)

    def to_json(self) -> dict[str, Any]:
        out = {"key": self.key, "a": _jsonable(self.a), "b": _jsonable(self.b), "kind": self.kind,
               "a_line": self.a_line, "b_line": self.b_line}
        if self.note:
            out["note"] = self.note
        if self.a_key or self.b_key:
            out["a_key"], out["b_key"] = self.a_key, self.b_key
        return out


@dataclass
class DiffResult:
    """Every change, the settings that differ without effect, and notes on consequences."""

    changes: list[Change] = field(default_factory=list)
    ignored: list[Change] = field(default_factory=list)  # differ as written, no effect in this version
    notes: list[str] = field(default_factory=list)  # batch size, sharding, precision
    a_source: str = ""
    b_source: str = ""
    version: str = ""
    mode: str = "accelerate"  # accelerate | deepspeed | accelerate-deepspeed

    @property
    def differences(self) -> list[Change]:
        """The changes that make the configs different (everything but ``not_comparable``)."""
        return [c for c in self.changes if c.kind != "not_comparable"]

    @property
    def not_comparable(self) -> list[Change]:
        return [c for c in self.changes if c.kind == "not_comparable"]

    @property
    def equivalent(self) -> bool:
        return not self.differences

    def to_json(self) -> list[dict[str, Any]]:
        return [c.to_json() for c in self.changes]



def _mirror_note(note: str) -> str:
    return note.replace("only A", "\0").replace("only B", "only A").replace("\0", "only B") \
        .replace("A (", "\1").replace("B (", "A (").replace("\1", "B (")


def _jsonable(v: Any) -> Any:
    if isinstance(v, tuple):
        return [_jsonable(x) for x in v]
    if isinstance(v, float) and not math.isfinite(v):
        return str(v)
    if isinstance(v, (str, int, float, bool, type(None), list, dict)):
        return v
    return str(v)



def matches(path: str, patterns: Iterable[str]) -> bool:
    key = path.rsplit(".", 1)[-1]
    section = path.split(".", 1)[0] if "." in path else ""
    for p in patterns:
        if p in (path, key, section) or fnmatch.fnmatchcase(path, p) or fnmatch.fnmatchcase(key, p):
            return True
    return False


def same(x: Any, y: Any) -> bool:
    if isinstance(x, bool) or isinstance(y, bool):
        return x is y if isinstance(x, bool) and isinstance(y, bool) else x == y and type(x) is type(y)
    if isinstance(x, (int, float)) and isinstance(y, (int, float)):
        return x == y  # 5e8 and 500000000 are one value
    if isinstance(x, (list, tuple)) and isinstance(y, (list, tuple)):
        return len(x) == len(y) and all(same(p, q) for p, q in zip(x, y))
    return bool(x == y)
