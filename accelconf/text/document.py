"""Loading YAML and JSON documents with exact source positions, safely.

This module owns reading bytes into a :class:`Document`: a tree of :class:`Node` objects that keep
their character offsets (0-based ``start``/``end`` into ``Document.text``) and 0-based line and
column, plus ``Document.data``, the plain Python value *as accelerate will read it* (PyYAML
``safe_load``, YAML 1.1: an unquoted ``no`` is ``False``). It never constructs a tag, never expands
aliases beyond a fixed budget, and refuses binary or non-UTF-8 input with an :class:`InputError`.

The node tree is :mod:`accelconf.text.nodes`'s, the scalar rules :mod:`accelconf.text.scalars`'s (both
re-exported here). YAML is composed (never constructed) with PyYAML, accelerate's own reader.
Writing is left to :mod:`accelconf.accelerate.fmt`: a document that is not edited is its original bytes, so
a round trip is byte-identical by construction. JSON is read by a small position-keeping parser
that also accepts the comments and trailing commas DeepSpeed's hjson reader allows (recorded as
``Document.quirks``). Interpretation of values (what a key means) is left to the registry.
"""

from __future__ import annotations

import io
import os
import re
import sys
from collections.abc import Iterator
from typing import Any

from accelconf.errors import InputError
from accelconf.records import Record
from accelconf.text.jsonpos import parse_json
from accelconf.text.nodes import MAX_BYTES, MAX_DEPTH, MAX_NODES, Format, Node, Quirk
from accelconf.text.scalars import resolve_yaml11, resolve_yaml12

__all__ = [
    "FILE_SUFFIXES",
    "MAX_BYTES",
    "MAX_DEPTH",
    "MAX_NODES",
    "STDIN",
    "Document",
    "Format",
    "Node",
    "Quirk",
    "decode",
    "is_blank",
    "load_bytes",
    "load_file",
    "load_source",
    "load_text",
    "looks_like_json",
    "read_bytes",
    "read_source",
    "read_text",
    "refuse_empty",
    "resolve_yaml11",
    "resolve_yaml12",
    "sniff_format",
    "to_python",
]

_STD = "tag:yaml.org,2002:"
_ALLOWED_TAGS = {_STD + t for t in ("str", "int", "float", "bool", "null", "map", "seq", "merge", "value")}


class Document(Record):
    _fields = ("path", "text", "format", "root", "data", "quirks", "bom", "raw_bytes")

    def __init__(
        self,
        path: str,
        text: str,
        format: Format,
        root: Node | None,
        data: Any,
        quirks: list[Quirk] | None = None,
        bom: bool = False,
        raw_bytes: bytes | None = None,
    ) -> None:
        self.path, self.text, self.format, self.root, self.data = path, text, format, root, data
        self.quirks: list[Quirk] = [] if quirks is None else quirks
        self.bom, self.raw_bytes = bom, raw_bytes

    # -- navigation -------------------------------------------------------------------------
    def node(self, keypath: tuple[str | int, ...] | str) -> Node | None:
        """The value node at a key path (a tuple, or a dotted string), or ``None``."""
        if isinstance(keypath, str):
            keypath = tuple(keypath.split(".")) if keypath else ()
        cur = self.root
        for part in keypath:
            if cur is None:
                return None
            if cur.kind == "map":
                cur = cur.get(str(part)) if not isinstance(part, int) else cur.get(part)  # type: ignore[arg-type]
            elif cur.kind == "seq" and isinstance(part, int) and 0 <= part < len(cur.items):
                cur = cur.items[part]
            else:
                return None
        return cur

    def key(self, keypath: tuple[str, ...] | str) -> Node | None:
        """The key node of the last element of a key path."""
        if isinstance(keypath, str):
            keypath = tuple(keypath.split("."))
        parent = self.node(keypath[:-1])
        if parent is None or parent.kind != "map":
            return None
        return parent.key_node(keypath[-1])

    def position(self, keypath: tuple[str, ...] | str, value: bool = False) -> tuple[int, int]:
        """1-based (line, column) of a key (or of its value), or of the closest existing parent."""
        if isinstance(keypath, str):
            keypath = tuple(keypath.split(".")) if keypath else ()
        while keypath:
            n = self.node(keypath) if value else self.key(keypath)
            if n is not None:
                return n.line + 1, n.col + 1
            keypath = keypath[:-1]
            value = False
        return 1, 1

    def span(self, keypath: tuple[str, ...] | str, value: bool = False) -> tuple[int, int, int, int]:
        """Where a finding about ``keypath`` goes: 1-based ``(line, column, end line, end column)`` of its
        value (when ``value`` and there is one) or its key, else of the nearest parent key that exists,
        else ``(1, 1, 1, 1)``. A block (a mapping or list value) is marked on its first character only.
        The one "at this path, else at its parent" rule: validate's and the environment checks' findings."""
        if isinstance(keypath, str):
            keypath = tuple(keypath.split(".")) if keypath else ()
        node = None
        if keypath:
            node = self.node(keypath) if value else self.key(keypath)
            if node is None and value:
                node = self.key(keypath)
        parent = keypath
        while node is None and parent:
            parent = parent[:-1]
            node = self.key(parent) if parent else None
        if node is None:
            return 1, 1, 1, 1
        line, col = node.line + 1, node.col + 1
        if node.kind != "scalar":
            return line, col, line, col + 1
        return line, col, node.end_line + 1, node.end_col + 1

    def offset_to_position(self, offset: int) -> tuple[int, int]:
        """0-based (line, col) of a character offset."""
        line = self.text.count("\n", 0, offset)
        col = offset - (self.text.rfind("\n", 0, offset) + 1)
        return line, col

    def scalars(self) -> Iterator[tuple[tuple[str | int, ...], Node, Node | None]]:
        """Every scalar value with its key path and (for mapping values) its key node."""

        def walk(node: Node, path: tuple, keynode: Node | None) -> Iterator:
            if node.kind == "scalar":
                yield path, node, keynode
            elif node.kind == "map":
                for k, v in node.pairs:
                    yield from walk(v, path + (k.value,), k)
            else:
                for i, item in enumerate(node.items):
                    yield from walk(item, path + (i,), None)

        if self.root is not None:
            yield from walk(self.root, (), None)

    @property
    def newline(self) -> str:
        return "\r\n" if "\r\n" in self.text else "\n"


# -- reading ----------------------------------------------------------------------------------


def decode(raw: bytes, path: str) -> tuple[str, bool]:
    """Bytes to text, refusing binary and non-UTF-8 input. Returns (text, had_bom)."""
    if len(raw) > MAX_BYTES:
        raise _too_large(len(raw), path)
    if b"\x00" in raw:
        return _binary(raw, path)
    bom = raw.startswith(b"\xef\xbb\xbf")
    try:
        text = raw.decode("utf-8-sig" if bom else "utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        col = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        raise InputError(
            f"not UTF-8 text (byte 0x{raw[exc.start]:02x} at offset {exc.start})", path, line, col
        ) from exc
    bad = re.search(r"[\x01-\x08\x0b\x0c\x0e-\x1f\x7f]", text)
    if bad:
        line = text.count("\n", 0, bad.start()) + 1
        col = bad.start() - (text.rfind("\n", 0, bad.start()) + 1) + 1
        raise InputError(f"binary content (control character U+{ord(bad.group()):04X})", path, line, col)
    return text, bom


def _binary(raw: bytes, path: str) -> tuple[str, bool]:
    at = raw.index(b"\x00")
    line = raw.count(b"\n", 0, at) + 1
    col = at - (raw.rfind(b"\n", 0, at) + 1) + 1
    raise InputError("binary content (NUL byte); expected a YAML or JSON text file", path, line, col)


# The one place that says how a YAML or JSON file is recognised (formats.detect_format builds on it).
FILE_SUFFIXES: dict[str, Format] = {".json": "json", ".yaml": "yaml", ".yml": "yaml"}


def looks_like_json(text: str) -> bool:
    """The text starts (after a byte-order mark and blank space) with ``{`` or ``[``."""
    return text.lstrip("\ufeff \t\r\n")[:1] in ("{", "[")


def sniff_format(text: str, path: str = "") -> Format:
    """``json`` for a ``.json`` name or text that starts with ``{`` or ``[``, else ``yaml``."""
    known = FILE_SUFFIXES.get(os.path.splitext(path)[1].lower())
    if known is not None:
        return known
    return "json" if looks_like_json(text) else "yaml"


def load_file(path: str | os.PathLike[str], fmt: Format | None = None) -> Document:
    """Read and parse a file. Raises :class:`InputError` with a position on any problem."""
    p = os.fspath(path)
    return load_bytes(read_bytes(p), p, fmt)


def read_bytes(path: str | os.PathLike[str]) -> bytes:
    """A file's bytes, or an :class:`InputError` (a file over the size limit says its true size)."""
    p = os.fspath(path)
    try:
        with open(p, "rb") as fh:
            raw = fh.read(MAX_BYTES + 1)
            if len(raw) > MAX_BYTES:
                raise _too_large(max(os.fstat(fh.fileno()).st_size, len(raw)), p)
            return raw
    except IsADirectoryError as exc:
        raise InputError("is a directory", p) from exc
    except FileNotFoundError as exc:
        raise InputError("no such file", p) from exc
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", p) from exc


def _too_large(size: int, path: str) -> InputError:
    return InputError(f"file is too large ({size:,} bytes; the limit is {MAX_BYTES:,})", path)


# The name findings give standard input, which every command reads for the argument "-".
STDIN = "<stdin>"


def read_source(path: str) -> tuple[bytes, str]:
    """The bytes of a file, or of standard input for ``-``, and the name to report them under."""
    if path != "-":
        return read_bytes(path), path
    stream = getattr(sys.stdin, "buffer", None)
    if stream is None:  # a text stream put in place of stdin (an embedding program, a test)
        stream = io.BytesIO(sys.stdin.read().encode("utf-8"))
    raw = stream.read(MAX_BYTES + 1)
    if len(raw) > MAX_BYTES:
        size = len(raw)
        while chunk := stream.read(1 << 20):  # count the rest without keeping it
            size += len(chunk)
        raise _too_large(size, STDIN)
    return raw, STDIN


# A line that holds nothing in any format accelconf reads: blank, a comment, a YAML directive or
# document marker. A file of such lines is what yaml.safe_load reads as None.
_BLANK_LINE = re.compile(r"\s*(?:%.*|(?:---|\.\.\.)(?:\s+#.*)?|#.*)?\s*")


def is_blank(text: str) -> bool:
    """The text holds no setting in any format: only blank lines, comments and YAML markers."""
    return all(_BLANK_LINE.fullmatch(line) for line in text.lstrip("\ufeff").splitlines())


def refuse_empty(text: str, path: str) -> None:
    """The one "empty input" rule of every command: an :class:`InputError` for a blank text
    (accelerate's loader fails on it, and a converter would make a config out of nothing)."""
    if is_blank(text):
        raise InputError("empty document: no settings to read", path, 1, 1)


def read_text(path: str) -> tuple[str, str]:
    """(text, name) of a file or of ``-`` (standard input) in any format, as every command reads
    its input: decoded as :func:`decode` does, newlines made ``\\n``, refused when empty."""
    raw, name = read_source(path)
    text, _ = decode(raw, name)
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    refuse_empty(text, name)
    return text, name


def load_source(path: str, fmt: Format | None = None) -> Document:
    """The Document of a file or of ``-`` (standard input), refused when empty: the YAML/JSON
    input of ``validate``, ``check``, ``fmt`` and ``migrate``."""
    raw, name = read_source(path)
    doc = load_bytes(raw, name, fmt)
    refuse_empty(doc.text, name)
    return doc


def load_bytes(raw: bytes, path: str = "<text>", fmt: Format | None = None) -> Document:
    text, bom = decode(raw, path)
    doc = load_text(text, path, fmt)
    doc.bom = bom
    doc.raw_bytes = raw
    return doc


def load_text(text: str, path: str = "<text>", fmt: Format | None = None) -> Document:
    """Parse text (already decoded). An empty document has ``root`` and ``data`` ``None``."""
    if len(text) > MAX_BYTES:
        raise InputError(f"document is too large ({len(text)} characters; the limit is {MAX_BYTES})", path)
    fmt = fmt or sniff_format(text, path)
    if fmt == "json":
        root, quirks = parse_json(text, path)
        doc = Document(path, text, "json", root, None, quirks)
    else:
        root, quirks = _parse_yaml(text, path)
        doc = Document(path, text, "yaml", root, None, quirks)
    if root is not None:
        _check_size(root, path)
        doc.data = to_python(root)
    return doc


def _check_size(root: Node, path: str) -> None:
    """Refuse documents whose alias-expanded size or depth exceeds the budget (billion laughs)."""
    sizes: dict[int, int] = {}

    def size(node: Node, depth: int) -> int:
        if depth > MAX_DEPTH:
            raise InputError(f"nesting deeper than {MAX_DEPTH} levels", path, node.line + 1, node.col + 1)
        known = sizes.get(id(node))
        if known is not None:
            return known
        total = 1
        if node.kind == "map":
            for k, v in node.pairs:
                total += size(k, depth + 1) + size(v, depth + 1)
                if total > MAX_NODES:
                    break
        elif node.kind == "seq":
            for item in node.items:
                total += size(item, depth + 1)
                if total > MAX_NODES:
                    break
        if total > MAX_NODES:
            raise InputError(
                f"document expands to more than {MAX_NODES} nodes (alias bomb?); refused",
                path,
                node.line + 1,
                node.col + 1,
            )
        sizes[id(node)] = total
        return total

    size(root, 0)


def to_python(node: Node) -> Any:
    """Plain Python value of a node, as PyYAML safe_load builds it (merge keys applied)."""
    memo: dict[int, Any] = {}

    def conv(n: Node) -> Any:
        got = memo.get(id(n))
        if got is not None:
            return got
        if n.kind == "scalar":
            return n.value
        if n.kind == "seq":
            out_list: list[Any] = []
            memo[id(n)] = out_list
            out_list.extend(conv(i) for i in n.items)
            return out_list
        out: dict[Any, Any] = {}
        memo[id(n)] = out
        merged: dict[Any, Any] = {}
        for k, v in n.pairs:
            if k.tag == _STD + "merge" or (k.style is None and k.raw == "<<" and n is not None and k.kind == "scalar"):
                sources = [v] if v.kind == "map" else [s for s in v.items if s.kind == "map"]
                for src in reversed(sources):
                    merged.update(conv(src))
                continue
            key = conv(k)
            try:
                hash(key)
            except TypeError:
                key = str(key)
            out[key] = conv(v)
        for key, value in merged.items():
            out.setdefault(key, value)
        return out

    return conv(node)


# -- YAML through a composer (no constructor: tags are never instantiated) ---------------------

# PyYAML compiles one large character class when yaml.reader is imported (about 7 ms, a tenth of a
# short command's whole run). Only its pure-Python Reader searches with it, and accelconf reads
# through the C parser, so that one pattern compiles on its first use instead.
_READER_PATTERN = "[^\x09\x0a\x0d\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]"


class _DeferredPattern:
    """A compiled pattern that compiles when first used."""

    def __init__(self, pattern: str, flags: int) -> None:
        self._args = (pattern, flags)
        self._compiled: re.Pattern[str] | None = None

    def __getattr__(self, name: str) -> Any:
        if self._compiled is None:
            self._compiled = re.compile(*self._args)
        return getattr(self._compiled, name)


def _import_yaml() -> Any:
    if "yaml" in sys.modules:
        return sys.modules["yaml"]
    compile_now = re.compile

    def compile_reader_later(pattern: Any, flags: int = 0) -> Any:
        return _DeferredPattern(pattern, flags) if pattern == _READER_PATTERN else compile_now(pattern, flags)

    re.compile = compile_reader_later
    try:
        import yaml
    finally:
        re.compile = compile_now
    return yaml


def _composer() -> tuple[Any, Any]:
    """(compose function, error classes). PyYAML's C parser is accelerate's own reader and ~50x
    faster than a pure-Python one; ruamel.yaml's pure composer is the fallback."""
    try:
        yaml = _import_yaml()

        loader = getattr(yaml, "CSafeLoader", None) or yaml.SafeLoader
        return (lambda text: yaml.compose(text, Loader=loader)), (yaml.MarkedYAMLError, yaml.YAMLError)
    except ImportError:  # pragma: no cover - PyYAML is a dependency
        from ruamel.yaml import YAML
        from ruamel.yaml.error import MarkedYAMLError, YAMLError

        return YAML(typ="safe", pure=True).compose, (MarkedYAMLError, YAMLError)


def _parse_yaml(text: str, path: str) -> tuple[Node | None, list[Quirk]]:
    compose, (marked_error, yaml_error) = _composer()
    quirks: list[Quirk] = []
    try:
        composed = compose(text)
    except marked_error as exc:
        mark = exc.problem_mark or exc.context_mark
        msg = " ".join(x for x in (exc.context, exc.problem) if x) or "invalid YAML"
        line, col = (mark.line + 1, mark.column + 1) if mark is not None else (0, 0)
        raise InputError(f"invalid YAML: {msg}", path, line, col) from exc
    except yaml_error as exc:
        raise InputError(f"invalid YAML: {exc}", path) from exc
    except RecursionError as exc:
        raise InputError(f"nesting deeper than {MAX_DEPTH} levels", path) from exc
    if composed is None:
        return None, quirks
    memo: dict[int, Node] = {}
    count = [0]
    try:
        root = _convert(composed, path, memo, quirks, count, 0)
    except RecursionError as exc:
        raise InputError(f"nesting deeper than {MAX_DEPTH} levels", path) from exc
    return root, quirks


def _convert(rn: Any, path: str, memo: dict[int, Node], quirks: list[Quirk], count: list[int], depth: int) -> Node:
    got = memo.get(id(rn))
    if got is not None:
        return got
    count[0] += 1
    if count[0] > MAX_NODES or depth > MAX_DEPTH:
        raise InputError(
            "document too large or too deeply nested; refused", path, rn.start_mark.line + 1, rn.start_mark.column + 1
        )
    tag = str(getattr(rn.tag, "value", rn.tag) or "")
    sm, em = rn.start_mark, rn.end_mark
    base = dict(start=sm.index, end=em.index, line=sm.line, col=sm.column, end_line=em.line, end_col=em.column)
    kind = rn.id  # "scalar" | "sequence" | "mapping", for PyYAML and ruamel.yaml nodes alike
    if tag and tag not in _ALLOWED_TAGS:
        shown = tag.replace(_STD, "!!")
        raise InputError(
            f"tag {shown} is not allowed: accelerate reads configs with yaml.safe_load, which refuses it; accelconf "
            "never constructs tags",
            path,
            sm.line + 1,
            sm.column + 1,
        )
    if kind == "scalar":
        raw = rn.value
        style = rn.style or None
        if style is None:
            v11, v12 = resolve_yaml11(raw), resolve_yaml12(raw)
            if tag == _STD + "str" and not isinstance(v12, str):  # explicit !!str
                v11 = v12 = raw
        else:
            v11 = v12 = raw
        node = Node("scalar", value=v11, value12=v12, raw=raw, style=style, tag=tag, **base)
        memo[id(rn)] = node
        return node
    if kind == "sequence":
        node = Node("seq", tag=tag, flow=bool(rn.flow_style), **base)
        memo[id(rn)] = node
        node.items = [_convert(i, path, memo, quirks, count, depth + 1) for i in rn.value]
        return node
    node = Node("map", tag=tag, flow=bool(rn.flow_style), **base)
    memo[id(rn)] = node
    seen: dict[Any, Node] = {}
    for kn, vn in rn.value:
        k = _convert(kn, path, memo, quirks, count, depth + 1)
        v = _convert(vn, path, memo, quirks, count, depth + 1)
        if k.kind == "scalar":
            try:
                prev = seen.get(k.value)
            except TypeError:
                prev = None
            if prev is not None:
                quirks.append(
                    Quirk(
                        "duplicate-key",
                        f"duplicate key {k.raw!r} (first at line {prev.line + 1}); the last one wins",
                        k.line,
                        k.col,
                        k.start,
                    )
                )
            try:
                seen[k.value] = k
            except TypeError:
                pass
        node.pairs.append((k, v))
    return node
