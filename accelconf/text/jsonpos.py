"""A small JSON parser that keeps positions and tolerates what DeepSpeed's hjson reader accepts.

It builds :class:`accelconf.text.document.Node` trees (offsets and 0-based lines/columns) so that JSON
findings point at the exact key or value. Comments (``//``, ``#``, ``/* */``) and trailing commas
are accepted and recorded as quirks: DeepSpeed reads them, accelerate's ``json.load`` does not.
Anything else that is not JSON raises :class:`InputError` with a 1-based position.
"""

from __future__ import annotations

import re
from typing import Any

from accelconf.errors import InputError
from accelconf.text.nodes import MAX_DEPTH, MAX_NODES, Node, Quirk

_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?")
_STRING = re.compile(r'"(?:[^"\\\x00-\x1f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"')
_WS = " \t\r\n\ufeff"


class _Parser:
    def __init__(self, text: str, path: str) -> None:
        self.text = text
        self.path = path
        self.i = 0
        self.quirks: list[Quirk] = []
        self.count = 0
        # line starts for offset -> (line, col)
        self.starts = [0] + [m.end() for m in re.finditer(r"\n", text)]

    def pos(self, offset: int) -> tuple[int, int]:
        import bisect

        line = bisect.bisect_right(self.starts, offset) - 1
        col = offset - self.starts[line]
        if line == 0 and offset > 0 and self.text.startswith("\ufeff"):
            col -= 1  # a byte-order mark is no column: PyYAML's reader does not count it either (reader.py forward)
        return line, col

    def fail(self, message: str, offset: int | None = None) -> InputError:
        line, col = self.pos(self.i if offset is None else offset)
        return InputError(f"invalid JSON: {message}", self.path, line + 1, col + 1)

    def skip(self) -> None:
        t = self.text
        n = len(t)
        while self.i < n:
            c = t[self.i]
            if c in _WS:
                self.i += 1
            elif t.startswith("//", self.i) or c == "#":
                self._quirk("comment", "comment in JSON")
                end = t.find("\n", self.i)
                self.i = n if end < 0 else end
            elif t.startswith("/*", self.i):
                self._quirk("comment", "comment in JSON")
                end = t.find("*/", self.i + 2)
                if end < 0:
                    raise self.fail("unterminated /* comment")
                self.i = end + 2
            else:
                break

    def _quirk(self, kind: str, message: str) -> None:
        line, col = self.pos(self.i)
        self.quirks.append(Quirk(kind, message, line, col, self.i))

    def node(self, kind: str, start: int, end: int, **kw: Any) -> Node:
        self.count += 1
        if self.count > MAX_NODES:
            raise self.fail(f"more than {MAX_NODES} values; refused", start)
        line, col = self.pos(start)
        eline, ecol = self.pos(end)
        return Node(kind, start, end, line, col, eline, ecol, **kw)  # type: ignore[arg-type]

    def value(self, depth: int) -> Node:
        if depth > MAX_DEPTH:
            raise self.fail(f"nesting deeper than {MAX_DEPTH} levels")
        self.skip()
        t = self.text
        if self.i >= len(t):
            raise self.fail("unexpected end of input")
        c = t[self.i]
        start = self.i
        if c == "{":
            return self.obj(depth)
        if c == "[":
            return self.arr(depth)
        if c == '"':
            m = _STRING.match(t, self.i)
            if not m:
                raise self.fail("unterminated or invalid string")
            self.i = m.end()
            import json  # loaded by the first JSON string: a YAML input (to-env's) never needs it

            s = json.loads(m.group())
            return self.node("scalar", start, self.i, value=s, value12=s, raw=s, style='"')
        m = _NUMBER.match(t, self.i)
        if m and m.end() > self.i:
            self.i = m.end()
            raw = m.group()
            v: Any = float(raw) if any(ch in raw for ch in ".eE") else int(raw)
            return self.node("scalar", start, self.i, value=v, value12=v, raw=raw)
        for word, v in (("true", True), ("false", False), ("null", None)):
            if t.startswith(word, self.i):
                self.i += len(word)
                return self.node("scalar", start, self.i, value=v, value12=v, raw=word)
        token = re.match(r"[^\s,:\]\}]{1,20}", t[self.i :])
        raise self.fail(f"unexpected {token.group() if token else t[self.i]!r}")

    def obj(self, depth: int) -> Node:
        start = self.i
        self.i += 1
        node = self.node("map", start, start)
        seen: dict[str, Node] = {}
        first = True
        while True:
            self.skip()
            if self.i < len(self.text) and self.text[self.i] == "}":
                self.i += 1
                break
            if not first:
                if self.i >= len(self.text) or self.text[self.i] != ",":
                    raise self.fail("expected ',' or '}'")
                comma = self.i
                self.i += 1
                self.skip()
                if self.i < len(self.text) and self.text[self.i] == "}":
                    line, col = self.pos(comma)
                    self.quirks.append(Quirk("trailing-comma", "trailing comma in JSON", line, col, comma))
                    self.i += 1
                    break
            first = False
            self.skip()
            if self.i >= len(self.text) or self.text[self.i] != '"':
                raise self.fail("expected a double-quoted key")
            key = self.value(depth + 1)
            self.skip()
            if self.i >= len(self.text) or self.text[self.i] != ":":
                raise self.fail("expected ':' after key")
            self.i += 1
            val = self.value(depth + 1)
            if key.value in seen:
                prev = seen[key.value]
                self.quirks.append(
                    Quirk(
                        "duplicate-key",
                        f"duplicate key {key.value!r} (first at line {prev.line + 1}); the last one wins",
                        key.line,
                        key.col,
                        key.start,
                    )
                )
            seen[key.value] = key
            node.pairs.append((key, val))
        node.end = self.i
        node.end_line, node.end_col = self.pos(self.i)
        return node

    def arr(self, depth: int) -> Node:
        start = self.i
        self.i += 1
        node = self.node("seq", start, start)
        first = True
        while True:
            self.skip()
            if self.i < len(self.text) and self.text[self.i] == "]":
                self.i += 1
                break
            if not first:
                if self.i >= len(self.text) or self.text[self.i] != ",":
                    raise self.fail("expected ',' or ']'")
                comma = self.i
                self.i += 1
                self.skip()
                if self.i < len(self.text) and self.text[self.i] == "]":
                    line, col = self.pos(comma)
                    self.quirks.append(Quirk("trailing-comma", "trailing comma in JSON", line, col, comma))
                    self.i += 1
                    break
            first = False
            node.items.append(self.value(depth + 1))
        node.end = self.i
        node.end_line, node.end_col = self.pos(self.i)
        return node


def parse_json(text: str, path: str = "<text>") -> tuple[Node | None, list[Quirk]]:
    p = _Parser(text, path)
    p.skip()
    if p.i >= len(text):
        return None, p.quirks
    root = p.value(0)
    p.skip()
    if p.i < len(text):
        raise p.fail("extra data after the top-level value")
    return root, p.quirks
