"""The result of a diff: :class:`Change` (one difference in meaning) and :class:`DiffResult`.

This module owns the values every kind of diff returns and the two comparisons they share: whether
two canonical values are one value (:func:`same`) and whether a key path is ignored (:func:`matches`).
Computing changes is left to :mod:`accelconf.diff.accelerate` and :mod:`accelconf.diff.deepspeed`.
Line numbers are 1-based; 0 means the value did not come from a line.
"""

from __future__ import annotations

import fnmatch
import math
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Any, Literal

# What a Change is; not :data:`accelconf.assist.Kind` (what a document is).
ChangeKind = Literal["changed", "added", "removed", "not_comparable"]
KINDS: tuple[str, ...] = ("changed", "added", "removed", "not_comparable")


class SideRef(Enum):
    """A side of a diff named in a note: printed as ``A`` or ``B``."""

    A = "A"
    B = "B"

    @property
    def other(self) -> SideRef:
        return SideRef.B if self is SideRef.A else SideRef.A


NotePart = str | SideRef


@dataclass(frozen=True)
class Note:
    """The note on a change: text, with the sides it names kept as :class:`SideRef` data, so that
    mirroring a change swaps the sides without touching the text (a key named ``DATA`` or a value
    ``80GB`` is never read as a side name). ``str()`` prints the sides as ``A``/``B``.
    Adjacent texts are joined and empty ones dropped, so equal notes have equal ``parts``."""

    parts: tuple[NotePart, ...] = ()

    def __post_init__(self) -> None:
        merged: list[NotePart] = []
        for part in self.parts:
            if isinstance(part, str) and merged and isinstance(merged[-1], str):
                merged[-1] += part
            elif part != "":
                merged.append(part)
        object.__setattr__(self, "parts", tuple(merged))

    @classmethod
    def of(cls, *parts: NotePart) -> Note:
        return cls(parts)

    def __str__(self) -> str:
        return "".join(p if isinstance(p, str) else p.value for p in self.parts)

    def __bool__(self) -> bool:
        return bool(self.parts)

    def mirrored(self) -> Note:
        """The same note with A and B swapped."""
        return Note(tuple(p if isinstance(p, str) else p.other for p in self.parts))

    def then(self, more: Note | str) -> Note:
        """This note followed by ``more`` after ``"; "`` (either alone when the other is empty)."""
        more = more if isinstance(more, Note) else Note.of(more)
        if not self:
            return more
        return Note(self.parts + (("; ",) + more.parts if more else ()))


@dataclass(frozen=True)
class Change:
    """One difference in meaning.

    ``a``/``b`` are the values in canonical spelling (the effective default where a side does not
    set the key, ``None`` where there is none). ``kind``: ``changed`` (both sides set it),
    ``added`` (only B sets it), ``removed`` (only A sets it), ``not_comparable`` (one side's
    format cannot express it). ``a_key``/``b_key`` are set when the two sides spell one setting
    with different keys (FSDP1 vs FSDP2). ``remark`` is the note as data (:class:`Note`: the sides
    it names are data); ``note`` is its text.
    """

    key: str
    a: Any
    b: Any
    kind: ChangeKind
    a_line: int = 0
    b_line: int = 0
    a_where: str = ""
    b_where: str = ""
    remark: Note = Note()
    a_key: str = ""
    b_key: str = ""

    @property
    def note(self) -> str:
        """The note's text, the sides it names printed as ``A``/``B``."""
        return str(self.remark)

    def noted(self, more: Note | str) -> Change:
        """The change with ``more`` added to its note."""
        return replace(self, remark=self.remark.then(more))

    @property
    def section(self) -> str:
        """The part of the key before the first dot (``""`` for top-level keys)."""
        return self.key.split(".", 1)[0] if "." in self.key else ""

    def mirrored(self) -> Change:
        """The same change seen from the other side (A and B swapped)."""
        kind: ChangeKind = {"added": "removed", "removed": "added"}.get(self.kind, self.kind)  # type: ignore[assignment]
        return Change(
            self.key,
            self.b,
            self.a,
            kind,
            self.b_line,
            self.a_line,
            self.b_where,
            self.a_where,
            self.remark.mirrored(),
            self.b_key,
            self.a_key,
        )

    def to_json(self) -> dict[str, Any]:
        out = {
            "key": self.key,
            "a": _jsonable(self.a),
            "b": _jsonable(self.b),
            "kind": self.kind,
            "a_line": self.a_line,
            "b_line": self.b_line,
        }
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
        if not p:
            continue  # an empty pattern names nothing (it would equal a top-level key's empty section)
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
