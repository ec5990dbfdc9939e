"""Where the cursor is: the section, key and value an editor position is in.

:func:`context_at` answers for YAML by reading indentation line by line and for JSON by a tolerant
token scan, so half-typed text (the normal case in an editor) needs no parse. Positions are 0-based
and count characters (code points), as :class:`accelconf.text.document.Node` does.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Literal

from accelconf.text.document import sniff_format

Part = Literal["key", "value", "none"]


@dataclass(frozen=True)
class Where:
    """What the cursor is in.

    ``path`` is the chain of mapping keys enclosing the cursor's mapping (``()`` at top level,
    ``("fsdp_config",)`` inside it). ``part`` is ``key`` where a key is (being) typed, ``value``
    after ``key:``, ``none`` in a comment or somewhere nothing can be typed. ``key`` is the key of
    the cursor's line. ``prefix`` is the part of the token typed before the cursor, and
    ``start``..``end`` the columns on ``line`` of the token a completion replaces. ``present``
    holds the keys already in the cursor's mapping (the cursor's own line excluded).
    """

    format: Literal["yaml", "json"]
    line: int
    path: tuple[str, ...]
    part: Part
    key: str | None = None
    prefix: str = ""
    start: int = 0
    end: int = 0
    present: frozenset[str] = frozenset()
    indent: int = 0
    quote: str = ""  # the quote the token starts with (JSON keys and strings, quoted YAML values)
    has_colon: bool = False  # key part: a ':' already follows the token
    value_text: str = ""  # value part: the value as written (comment stripped)
    spaced: bool = True  # value part: a blank separates ':' and the value (YAML needs one)

    @property
    def section(self) -> str | None:
        """The registry section of the cursor's mapping, or ``None`` below any known section."""
        if not self.path:
            return ""
        if len(self.path) == 1:
            return self.path[0]
        return None


_KEY_LINE = re.compile(
    r"""^(?P<indent>[ ]*)(?P<q>['"]?)"""
    r"""(?P<key>[^\s:'"#{}\[\],&*!|>%@`-][^:'"#{}\[\],]*?|-[^\s:'"#{}\[\],][^:'"#{}\[\],]*?)"""
    r"""(?P=q)[ \t]*:(?=[ \t]|$)(?P<rest>.*)$"""
)
_WORD = re.compile(r"[A-Za-z0-9_.\-]*$")
_WORD_AHEAD = re.compile(r"^[A-Za-z0-9_.\-]*")


def _lines(text: str) -> list[str]:
    return [ln[:-1] if ln.endswith("\r") else ln for ln in text.split("\n")]


def _strip_comment(rest: str) -> str:
    """The value part of ``rest`` (after ``key:``) without a trailing ``# comment``."""
    quote = ""
    for i, c in enumerate(rest):
        if quote:
            if c == quote:
                quote = ""
        elif c in "'\"" and (i == 0 or rest[:i].strip() == ""):
            quote = c
        elif c == "#" and (i == 0 or rest[i - 1] in " \t"):
            return rest[:i].rstrip()
    return rest.rstrip()


def _indent(s: str) -> int:
    return len(s) - len(s.lstrip(" "))


def _is_blank(s: str) -> bool:
    t = s.strip()
    return not t or t.startswith("#")


def _yaml_parents(lines: list[str], line: int, indent: int) -> tuple[tuple[str, ...], int]:
    """(enclosing keys, the line of the innermost one or -1)."""
    path: list[str] = []
    want = indent
    block_line = -1
    for i in range(min(line, len(lines)) - 1, -1, -1):
        s = lines[i]
        if _is_blank(s) or s.lstrip().startswith("- "):
            continue
        ind = _indent(s)
        if ind >= want:
            continue
        m = _KEY_LINE.match(s)
        if m is not None and not _strip_comment(m.group("rest")).strip():
            path.append(m.group("key"))
            if block_line < 0:
                block_line = i
        # A less-indented line that is not a block start: keep looking from its level.
        want = ind
        if want == 0:
            break
    return tuple(reversed(path)), block_line


def _yaml_siblings(lines: list[str], block_line: int, level: int, skip: int) -> frozenset[str]:
    parent_indent = _indent(lines[block_line]) if block_line >= 0 else -1
    keys: set[str] = set()
    for i in range(block_line + 1, len(lines)):
        s = lines[i]
        if _is_blank(s):
            continue
        ind = _indent(s)
        if ind <= parent_indent:
            break
        if i == skip or ind != level:
            continue
        m = _KEY_LINE.match(s)
        if m is not None:
            keys.add(m.group("key"))
    return frozenset(keys)


def _yaml_where(text: str, line: int, col: int) -> Where:
    lines = _lines(text)
    cur = lines[line] if 0 <= line < len(lines) else ""
    col = max(0, min(col, len(cur)))
    before = cur[:col]
    if before.lstrip().startswith("#") or cur.lstrip().startswith("%") or cur.startswith("---"):
        return Where("yaml", line, (), "none")
    m = _KEY_LINE.match(cur)
    colon = cur.index(":", m.end("key")) if m is not None else -1
    if m is not None and col > colon:
        level = len(m.group("indent"))
        path, block = _yaml_parents(lines, line, level)
        rest = m.group("rest")
        value = _strip_comment(rest)
        vstart = colon + 1 + (len(rest) - len(rest.lstrip(" \t")))
        vend = max(vstart, colon + 1 + len(value))
        if col < vstart:  # cursor in the blank between ':' and the value
            vstart = col if not value.strip() else vstart
        quote = cur[vstart] if vstart < len(cur) and cur[vstart] in "'\"" else ""
        if "#" in before[colon + 1 :] and col > colon + 1 + len(value):
            return Where("yaml", line, path, "none", key=m.group("key"))
        return Where(
            "yaml",
            line,
            path,
            "value",
            key=m.group("key"),
            prefix=cur[vstart:col] if col >= vstart else "",
            start=vstart,
            end=vend,
            present=_yaml_siblings(lines, block, level, line),
            indent=level,
            quote=quote,
            value_text=value.strip(),
            spaced=vstart > colon + 1,
        )
    if cur.strip():
        level = _indent(cur)
    else:
        level = len(before) - len(before.lstrip(" ")) if not before.strip() else _indent(cur)
    path, block = _yaml_parents(lines, line, level)
    word = _WORD.search(before)
    start = word.start() if word else col
    ahead = _WORD_AHEAD.match(cur[col:])
    end = col + (ahead.end() if ahead else 0)
    tail = cur[end:].lstrip(" \t")
    opener = before[level:start].strip()
    quoted = m is not None and m.group("q") != "" and opener == m.group("q") and col <= m.end("key")
    if quoted and m is not None:  # inside a quoted key: the quotes are not part of the name
        tail = cur[end:].removeprefix(m.group("q")).lstrip(" \t")
    elif opener not in ("", "-"):
        return Where("yaml", line, path, "none")
    return Where(
        "yaml",
        line,
        path,
        "key",
        key=m.group("key") if m else None,
        prefix=before[start:col],
        start=start,
        end=end,
        present=_yaml_siblings(lines, block, level, line),
        indent=level,
        has_colon=tail.startswith(":"),
    )


@dataclass
class _Frame:
    kind: Literal["obj", "arr"]
    key: str | None = None  # the last key read in this object
    expect: Literal["key", "colon", "value", "after"] = "key"
    keys: list[str] = field(default_factory=list)


def _json_string_end(text: str, i: int) -> tuple[int, bool]:
    """The end of the JSON string opening at i (past its closing quote), and whether it is closed on its line."""
    n = len(text)
    j = i + 1
    while j < n and text[j] != '"' and text[j] != "\n":
        j += 2 if text[j] == "\\" else 1
    closed = j < n and text[j] == '"'
    return (j + 1 if closed else j), closed


def _json_comment_end(text: str, i: int) -> int:
    """Where the // or /* comment opening at i ends (JSONC)."""
    if text.startswith("//", i):
        j = text.find("\n", i)
        return len(text) if j < 0 else j
    j = text.find("*/", i + 2)
    return len(text) if j < 0 else j + 2


# What the scan saw when it reached the cursor: (frames, frame, part, start, end, quote, key). The
# frames are copies (their ``key`` as it was then) sharing ``keys`` with the live ones, and ``frame``
# is the live innermost one, so ``present`` also holds the keys after the cursor.
_Snap = tuple[list[_Frame], _Frame | None, str, int, int, str, str | None]


@dataclass
class _JsonScan:
    """A tolerant token scan of JSON(C) text up to its end, noting what the token at ``offset`` is in."""

    text: str
    offset: int
    stack: list[_Frame] = field(default_factory=list)
    snap: _Snap | None = None

    @property
    def top(self) -> _Frame | None:
        return self.stack[-1] if self.stack else None

    def expects_key(self) -> bool:
        top = self.top
        return top is not None and top.kind == "obj" and top.expect == "key"

    def take(self, part: str, start: int, end: int, quote: str) -> None:
        frames = [_Frame(f.kind, f.key, f.expect, f.keys) for f in self.stack]
        self.snap = (frames, self.top, part, start, end, quote, self.top.key if self.top else None)

    def run(self) -> _Snap:
        text, i, n = self.text, 0, len(self.text)
        while i < n:
            if self.snap is None and i >= self.offset:
                self._take_between_tokens()
            c = text[i]
            if c in " \t\r\n":
                i += 1
            elif text.startswith(("//", "/*"), i):
                i = _json_comment_end(text, i)
            elif c == '"':
                i = self._string(i)
            elif c in "{[}]:,":
                self._punctuation(c)
                i += 1
            else:
                i = self._bare_word(i)
        if self.snap is None:
            top = self.top
            part = "key" if self.expects_key() else ("value" if top is not None and top.expect == "value" else "none")
            self.take(part, self.offset, self.offset, "")
        assert self.snap is not None
        return self.snap

    def _take_between_tokens(self) -> None:
        """The cursor is before the next token: what could be typed there."""
        top = self.top
        part = "none"
        if self.expects_key():
            part = "key"
        elif top is not None and (top.expect == "value" or top.kind == "arr"):
            part = "value"
        self.take(part, self.offset, self.offset, "")

    def _token(self, word: str) -> None:
        """A string or bare word was read: a key where one is expected, else a value."""
        top = self.top
        if top is None:
            return
        if self.expects_key():
            top.key = word
            top.keys.append(word)
            top.expect = "colon"
        else:
            top.expect = "after"

    def _string(self, i: int) -> int:
        text = self.text
        end, closed = _json_string_end(text, i)
        if self.snap is None and i < self.offset <= (end - 1 if closed else end):
            self.take("key" if self.expects_key() else "value", i, end, '"')
        try:
            s = json.loads(text[i:end]) if closed else text[i + 1 : end]
        except ValueError:
            s = text[i + 1 : end]
        self._token(str(s))
        return end

    def _bare_word(self, i: int) -> int:
        text, n = self.text, len(self.text)
        j = i
        while j < n and text[j] not in ' \t\r\n,:{}[]"/':
            j += 1
        j = max(j, i + 1)
        if self.snap is None and i < self.offset <= j:
            self.take("key" if self.expects_key() else "value", i, j, "")
        self._token(text[i:j])
        return j

    def _punctuation(self, c: str) -> None:
        top = self.top
        if c in "{[":
            if top is not None:
                top.expect = "after"
            self.stack.append(_Frame("obj" if c == "{" else "arr", expect="key" if c == "{" else "value"))
        elif c in "}]":
            if self.stack:
                self.stack.pop()
        elif c == ":":
            if top is not None and top.kind == "obj":
                top.expect = "value"
        elif top is not None:  # ","
            top.expect = "key" if top.kind == "obj" else "value"


def _json_where(text: str, line: int, col: int) -> Where:
    lines = _lines(text)
    cur = lines[line] if 0 <= line < len(lines) else ""
    col = max(0, min(col, len(cur)))
    offset = sum(len(x) + 1 for x in text.split("\n")[:line]) + col if line < len(lines) else len(text)
    snap = _JsonScan(text, offset).run()
    return _json_result(text, line, cur, offset, offset - col, snap)


def _json_result(text: str, line: int, cur: str, offset: int, line_start: int, snap: _Snap) -> Where:
    """The Where for the token the scan stopped at (frames, frame, part, start, end, quote, key)."""
    frames, frame, part, start, end, quote, key = snap
    if frames and any(f.kind == "arr" for f in frames):
        return Where("json", line, (), "none")
    path = tuple(f.key or "" for f in frames[:-1])
    present = frozenset(frame.keys) - {""} if frame is not None else frozenset()
    scol = max(0, start - line_start)
    ecol = min(len(cur), max(scol, end - line_start))
    token = text[start:offset]
    prefix = token[1:] if quote else token
    if part == "key":
        own = text[start:end]
        try:
            own_key = json.loads(own) if own.startswith('"') and own.endswith('"') and len(own) > 1 else own
        except ValueError:
            own_key = own
        present = (
            present - {str(own_key)}
            if str(own_key) in present and list(frame.keys if frame else []).count(str(own_key)) == 1
            else present
        )
        after = cur[ecol:].lstrip()
        return Where(
            "json",
            line,
            path,
            "key",
            key=None,
            prefix=prefix,
            start=scol,
            end=ecol,
            present=present,
            quote=quote,
            has_colon=after.startswith(":"),
        )
    if part == "value":
        return Where(
            "json",
            line,
            path,
            "value",
            key=key,
            prefix=prefix,
            start=scol,
            end=ecol,
            present=present,
            quote=quote,
            value_text=text[start:end],
        )
    return Where("json", line, path, "none")


def context_at(text: str, line: int, col: int, fmt: Literal["yaml", "json"] | None = None, path: str = "") -> Where:
    """What the cursor at 0-based (line, col) is in. Never raises, whatever the text."""
    fmt = fmt or sniff_format(text, path)
    try:
        if fmt == "json":
            return _json_where(text, line, col)
        return _yaml_where(text, line, col)
    except Exception:  # noqa: BLE001 - editor help must never fail on odd text
        return Where(fmt, line, (), "none")
