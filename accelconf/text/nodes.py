"""The node tree every loader builds: :class:`Node` (one YAML or JSON node with its source span) and
:class:`Quirk` (a parse-level remark), and the limits loaders enforce.

This module imports nothing from accelconf, so both loaders (:mod:`accelconf.text.document` for
YAML, :mod:`accelconf.text.jsonpos` for JSON) can build on it without importing each other.
Positions are 0-based, as in ruamel.yaml and the LSP.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

MAX_BYTES = 8 * 1024 * 1024
MAX_NODES = 200_000
MAX_DEPTH = 200

Format = Literal["yaml", "json"]


@dataclass(eq=False)
class Node:
    """One node of a parsed document.

    Offsets (``start``, ``end``) index ``Document.text`` (0-based, end exclusive); ``line`` and
    ``col`` are 0-based, as in ruamel.yaml and the LSP. ``value`` is the scalar as accelerate reads
    it; ``value12`` as a YAML 1.2 reader would. ``style`` is ``None`` for plain scalars, else the
    quote or block indicator.
    """

    kind: Literal["map", "seq", "scalar"]
    start: int
    end: int
    line: int
    col: int
    end_line: int
    end_col: int
    value: Any = None
    value12: Any = None
    raw: str = ""
    style: str | None = None
    tag: str = ""
    pairs: list[tuple[Node, Node]] = field(default_factory=list)
    items: list[Node] = field(default_factory=list)
    flow: bool = False

    def get(self, key: str) -> Node | None:
        for k, v in reversed(self.pairs):  # the last duplicate wins, as in PyYAML
            if k.value == key:
                return v
        return None

    def key_node(self, key: str) -> Node | None:
        for k, _ in reversed(self.pairs):
            if k.value == key:
                return k
        return None


@dataclass
class Quirk:
    """A parse-level remark (duplicate key, JSON comment, trailing comma), 0-based position."""

    kind: str
    message: str
    line: int
    col: int
    offset: int = 0
