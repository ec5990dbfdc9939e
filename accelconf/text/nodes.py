"""The node tree every loader builds: :class:`Node` (one YAML or JSON node with its source span) and
:class:`Quirk` (a parse-level remark), and the limits loaders enforce.

This module imports nothing from accelconf but :mod:`accelconf.records`, so both loaders
(:mod:`accelconf.text.document` for YAML, :mod:`accelconf.text.jsonpos` for JSON) can build on it
without importing each other.
Positions are 0-based, as in ruamel.yaml and the LSP.
"""

from __future__ import annotations

from typing import Any, Literal

from accelconf.records import Record

MAX_BYTES = 8 * 1024 * 1024
MAX_NODES = 200_000
MAX_DEPTH = 200

Format = Literal["yaml", "json"]


class Node(Record):
    """One node of a parsed document.

    Offsets (``start``, ``end``) index ``Document.text`` (0-based, end exclusive); ``line`` and
    ``col`` are 0-based, as in ruamel.yaml and the LSP. ``value`` is the scalar as accelerate reads
    it; ``value12`` as a YAML 1.2 reader would. ``style`` is ``None`` for plain scalars, else the
    quote or block indicator.
    """

    _fields = (
        "kind", "start", "end", "line", "col", "end_line", "end_col",
        "value", "value12", "raw", "style", "tag", "pairs", "items", "flow",
    )  # fmt: skip
    # a node is one place in one document: two nodes are equal only when they are the same node
    __eq__ = object.__eq__
    __hash__ = object.__hash__

    def __init__(
        self,
        kind: Literal["map", "seq", "scalar"],
        start: int,
        end: int,
        line: int,
        col: int,
        end_line: int,
        end_col: int,
        value: Any = None,
        value12: Any = None,
        raw: str = "",
        style: str | None = None,
        tag: str = "",
        pairs: list[tuple[Node, Node]] | None = None,
        items: list[Node] | None = None,
        flow: bool = False,
    ) -> None:
        self.kind = kind
        self.start, self.end, self.line, self.col = start, end, line, col
        self.end_line, self.end_col = end_line, end_col
        self.value, self.value12, self.raw, self.style, self.tag = value, value12, raw, style, tag
        self.pairs: list[tuple[Node, Node]] = [] if pairs is None else pairs
        self.items: list[Node] = [] if items is None else items
        self.flow = flow

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


class Quirk(Record):
    """A parse-level remark (duplicate key, JSON comment, trailing comma), 0-based position."""

    _fields = ("kind", "message", "line", "col", "offset")

    def __init__(self, kind: str, message: str, line: int, col: int, offset: int = 0) -> None:
        self.kind, self.message, self.line, self.col, self.offset = kind, message, line, col, offset
