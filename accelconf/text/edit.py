"""Setting a value at a key path of a loaded document, as text edits on its original text.

The writer of a change to a file the user wrote: a YAML or JSON mapping keeps its comments, order and
every byte it does not change (what ``fmt`` and ``migrate`` do with their edits). A value that is
there is replaced in place (a YAML scalar in its quote style); a key that is not is added after the
last entry of the nearest mapping that is, at that mapping's indentation, with the sections it needs;
a section written as null (``fsdp_config:``) becomes a flow mapping, so a comment after it stays.
Scalars are written by :mod:`accelconf.text.scalars`. The edits are ``(start, end, text)`` offsets
into ``Document.text``, applied by :func:`accelconf.accelerate.fmt.apply_edits`.
"""

from __future__ import annotations

from typing import Any

from accelconf.text.document import Document, Node
from accelconf.text.scalars import json_scalar, yaml_scalar

Edit = tuple[int, int, str]


def set_value(doc: Document, keypath: tuple[str, ...], value: Any) -> Edit:
    """The one edit that makes ``doc`` hold ``value`` at ``keypath`` (a scalar; the sections of the
    path that are missing are written too). Raises ``ValueError`` where the path runs through a value
    that is not a mapping (a list, a string), which the edit cannot keep."""
    if doc.root is None or not keypath:
        raise ValueError("no mapping to set a value in")
    depth = len(keypath)
    while depth and doc.node(keypath[:depth]) is None:  # the nearest part of the path that is there
        depth -= 1
    node = doc.node(keypath[:depth])
    assert node is not None  # depth 0 is the root
    rest = keypath[depth:]
    if not rest:
        if node.kind != "scalar":
            raise ValueError(f"{'.'.join(keypath)} is a {node.kind}, not a value")
        return (node.start, node.end, _scalar(doc, value, node))
    if node.kind == "scalar" and node.value is None:  # a section written as null: a mapping of the rest
        return _replace_null(doc, keypath[:depth], node, _flow(doc, rest, value))
    if node.kind != "map":
        raise ValueError(f"{'.'.join(keypath[:depth])} is not a mapping")
    if doc.format == "json" or node.flow:
        return _into_flow(doc, node, rest, value)
    return _into_block(doc, node, rest, value)


def _scalar(doc: Document, value: Any, like: Node | None = None) -> str:
    if doc.format == "json":
        return json_scalar(value)
    return yaml_scalar(value, quote=like.style if like is not None else None, flow=True)


def _key(doc: Document, key: str) -> str:
    return json_scalar(key) if doc.format == "json" else yaml_scalar(key, flow=True)


def _flow(doc: Document, rest: tuple[str, ...], value: Any) -> str:
    """``{a: {b: value}}`` (JSON or YAML) for the missing keys ``rest``."""
    text = _scalar(doc, value)
    for key in reversed(rest):
        text = "{" + _key(doc, key) + ": " + text + "}"
    return text


def _replace_null(doc: Document, keypath: tuple[str, ...], node: Node, mapping: str) -> Edit:
    if node.end > node.start and doc.text[node.start : node.end].strip():
        return (node.start, node.end, mapping)  # null, ~ or JSON's null
    key = doc.key(keypath)
    if key is None:
        raise ValueError("an empty document has no key to set a value under")
    colon = doc.text.index(":", key.end)
    return (colon + 1, colon + 1, " " + mapping)


def _into_flow(doc: Document, node: Node, rest: tuple[str, ...], value: Any) -> Edit:
    """A new last entry of a JSON object or a YAML flow mapping, on its own line at the indentation
    of the entry before it when that one starts a line, else after it on its line."""
    entry = _key(doc, rest[0]) + ": " + (_flow(doc, rest[1:], value) if rest[1:] else _scalar(doc, value))
    if not node.pairs:
        close = doc.text.rindex("}", node.start, node.end)
        return (close, close, entry)
    last_key, last_value = node.pairs[-1]
    start = doc.text.rfind("\n", 0, last_key.start) + 1
    indent = doc.text[start : last_key.start]
    sep = "," + (doc.newline + indent if not indent.strip() else " ")
    return (last_value.end, last_value.end, sep + entry)


def _into_block(doc: Document, node: Node, rest: tuple[str, ...], value: Any) -> Edit:
    """New lines after the last entry of a block mapping, at its keys' indentation; the sections
    of ``rest`` that are missing nest two spaces deeper each."""
    text, nl = doc.text, doc.newline
    first_key = node.pairs[0][0]
    pad = " " * first_key.col
    lines = []
    for i, key in enumerate(rest):
        last = i == len(rest) - 1
        lines.append(pad + "  " * i + _key(doc, key) + ":" + (" " + _scalar(doc, value) if last else ""))
    end = _last_leaf(node).end
    eol = text.find("\n", end)
    if eol < 0:  # the last line has no line break: the new lines go after it, likewise without one
        return (len(text), len(text), nl + nl.join(lines))
    return (eol + 1, eol + 1, nl.join(lines) + nl)


def _last_leaf(node: Node) -> Node:
    """The last scalar (or flow collection) of a block: its end is the last text of the block,
    where a block mapping's own end may be the start of a later line, past comments."""
    while not node.flow and (node.pairs or node.items):
        node = node.pairs[-1][1] if node.kind == "map" else node.items[-1]
    return node
