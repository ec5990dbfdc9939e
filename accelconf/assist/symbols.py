"""The outline of a parsed document: every key, nested, with its span and its key's span.

Spans are 0-based (line, column) in code points, from the document's nodes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from accelconf.text.document import Document, Node


@dataclass(frozen=True)
class Symbol:
    """One outline entry: a key with its whole entry span and the key's own span (0-based)."""

    name: str
    detail: str
    kind: Literal["section", "key", "list", "item"]
    line: int
    col: int
    end_line: int
    end_col: int
    sel_line: int
    sel_col: int
    sel_end_line: int
    sel_end_col: int
    children: tuple[Symbol, ...] = ()


def _node_symbols(node: Node, depth: int) -> tuple[Symbol, ...]:
    out: list[Symbol] = []
    if depth > 20:
        return ()
    if node.kind == "map":
        for k, v in node.pairs:
            kind: Literal["section", "key", "list", "item"] = (
                "section" if v.kind == "map" else "list" if v.kind == "seq" else "key"
            )
            detail = "" if v.kind != "scalar" else (v.raw if v.style is None else f"{v.style}{v.raw}{v.style}")[:80]
            if v.kind == "scalar" and v.style in ("|", ">"):
                detail = v.raw.splitlines()[0][:80] if v.raw else ""
            end_line, end_col = (
                (v.end_line, v.end_col)
                if (v.end_line, v.end_col) >= (k.end_line, k.end_col)
                else (k.end_line, k.end_col)
            )
            out.append(
                Symbol(
                    str(k.value if k.kind == "scalar" else k.raw),
                    detail,
                    kind,
                    k.line,
                    k.col,
                    end_line,
                    end_col,
                    k.line,
                    k.col,
                    k.end_line,
                    k.end_col,
                    _node_symbols(v, depth + 1),
                )
            )
    elif node.kind == "seq":
        for i, item in enumerate(node.items):
            detail = item.raw[:80] if item.kind == "scalar" else ""
            out.append(
                Symbol(
                    f"[{i}]",
                    detail,
                    "item",
                    item.line,
                    item.col,
                    item.end_line,
                    item.end_col,
                    item.line,
                    item.col,
                    item.line,
                    item.col,
                    _node_symbols(item, depth + 1),
                )
            )
    return tuple(out)


def symbols(doc: Document) -> list[Symbol]:
    """The outline of a parsed document: every key, nested."""
    if doc.root is None:
        return []
    return list(_node_symbols(doc.root, 0))
