"""Shell words with their positions: what the launch-script reader needs of a shell or sbatch script.

Splits a script the way a POSIX shell does before it runs anything, as far as a reader that never
executes can: quotes (``'...'``, ``"..."``, backslash escapes), ``\\`` newline continuations, ``#``
comments, and commands separated by newlines, ``;``, ``&``, ``|``, ``&&``, ``||`` and parentheses.
Each :class:`Word` keeps the 1-based line and column of its first character in the original text
and its expansions unexpanded: ``$NAME``/``${NAME}`` are variable references, ``$(...)``, backticks,
``$((...))``, ``${NAME:-x}`` and positional parameters are values the reader cannot know. Variables a
script assigns itself are resolved by :func:`resolve` (the cli reader decides which ones to trust);
a word with anything left unknown is ``None``, never a guess. Redirections are dropped with their
target. Here-documents, functions and control flow are not interpreted: their words are just words.
"""

from __future__ import annotations

import bisect
import re
from typing import NamedTuple

from accelconf.errors import InputError

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
ASSIGNMENT = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=")
_OPERATORS = ";&|()"
_BLANK = " \t\r"


class Word(NamedTuple):
    """One shell word: its pieces (``("lit", text)``, ``("var", NAME)`` or ``("unknown", as written)``)
    and the 1-based position of its first character."""

    pieces: tuple[tuple[str, str], ...]
    line: int
    column: int

    @property
    def raw(self) -> str:
        """The word as written, expansions kept (``--num_processes=$N``)."""
        return "".join(t if k != "var" else f"${{{t}}}" for k, t in self.pieces)

    @property
    def literal(self) -> str | None:
        """The word when it holds no expansion at all (None otherwise)."""
        if any(k != "lit" for k, _ in self.pieces):
            return None
        return "".join(t for _, t in self.pieces)


def resolve(word: Word, variables: dict[str, str]) -> str | None:
    """The word's text with the known variables substituted; None when any piece stays unknown."""
    out = []
    for kind, text in word.pieces:
        if kind == "lit":
            out.append(text)
        elif kind == "var" and text in variables:
            out.append(variables[text])
        else:
            return None
    return "".join(out)


class _Scanner:
    """A single pass over the text: words, grouped into commands."""

    def __init__(self, text: str, path: str) -> None:
        self.text, self.path, self.i = text, path, 0
        self.starts = [0] + [m.end() for m in re.finditer("\n", text)]
        self.commands: list[list[Word]] = []
        self.current: list[Word] = []
        self.pieces: list[tuple[str, str]] = []
        self.start = -1
        self.redirect = False  # the next word is a redirection target

    def position(self, index: int) -> tuple[int, int]:
        line = bisect.bisect_right(self.starts, index)
        return line, index - self.starts[line - 1] + 1

    def error(self, message: str, index: int) -> InputError:
        return InputError(message, self.path, *self.position(index))

    def lit(self, text: str) -> None:
        if self.start < 0:
            self.start = self.i
        if self.pieces and self.pieces[-1][0] == "lit":
            self.pieces[-1] = ("lit", self.pieces[-1][1] + text)
        else:
            self.pieces.append(("lit", text))

    def piece(self, kind: str, text: str, start: int) -> None:
        if self.start < 0:
            self.start = start
        self.pieces.append((kind, text))

    def end_word(self) -> None:
        if self.start >= 0:
            if self.redirect:
                self.redirect = False  # `> log.txt`: not an argument
            else:
                self.current.append(Word(tuple(self.pieces), *self.position(self.start)))
        self.pieces, self.start = [], -1

    def end_command(self) -> None:
        self.end_word()
        if self.current:
            self.commands.append(self.current)
        self.current = []
        self.redirect = False

    def run(self) -> list[list[Word]]:
        text = self.text
        while self.i < len(text):
            c = text[self.i]
            if c == "\\" and text[self.i + 1 : self.i + 2] == "\n":
                self.i += 2  # a continuation: the word and the command go on
            elif c == "\\":
                self.lit(text[self.i + 1 : self.i + 2])
                self.i += 2
            elif c == "#" and self.start < 0:
                end = text.find("\n", self.i)
                self.i = len(text) if end < 0 else end
            elif c == "\n":
                self.end_command()
                self.i += 1
            elif c in _BLANK:
                self.end_word()
                self.i += 1
            elif c in _OPERATORS:
                self.end_command()
                self.i += 1
            elif c in "<>":
                self.redirection()
            elif c == "'":
                self.single_quoted()
            elif c == '"':
                self.double_quoted()
            elif c in "$`":
                self.expansion()
            else:
                self.lit(c)
                self.i += 1
        self.end_command()
        return self.commands

    def redirection(self) -> None:
        """``>``, ``>>``, ``2>&1``, ``<``: the operator and its target are not arguments."""
        if len(self.pieces) == 1 and self.pieces[0][0] == "lit" and self.pieces[0][1].isdigit():
            # `2>`: the number belongs to the operator
            self.pieces, self.start = [], -1
        self.end_word()
        j = self.i + 1
        while j < len(self.text) and self.text[j] in "<>&":
            j += 1
        if self.text[j - 1] == "&" and self.text[j : j + 1].isdigit():
            j += 1  # `>&1`: a descriptor, no target word
            while j < len(self.text) and self.text[j].isdigit():
                j += 1
        else:
            self.redirect = True
        self.i = j

    def single_quoted(self) -> None:
        end = self.text.find("'", self.i + 1)
        if end < 0:
            raise self.error("unterminated single quote", self.i)
        if self.start < 0:
            self.start = self.i
        self.lit(self.text[self.i + 1 : end])
        self.i = end + 1

    def double_quoted(self) -> None:
        start = self.i
        if self.start < 0:
            self.start = start
        self.lit("")  # "" is a word of its own
        self.i += 1
        text = self.text
        while self.i < len(text) and text[self.i] != '"':
            c = text[self.i]
            if c == "\\" and text[self.i + 1 : self.i + 2] in ('"', "\\", "$", "`", "\n"):
                if text[self.i + 1] != "\n":
                    self.lit(text[self.i + 1])
                self.i += 2
            elif c in "$`":
                self.expansion()
            else:
                self.lit(c)
                self.i += 1
        if self.i >= len(text):
            raise self.error("unterminated double quote", start)
        self.i += 1

    def expansion(self) -> None:
        """``$NAME``, ``${NAME}``: a variable; ``$(...)``, ``${...}`` with an operator, `` `...` ``,
        ``$1``, ``$@``: unknown. A lone ``$`` is a literal dollar."""
        text, start = self.text, self.i
        if text[start] == "`":
            end = text.find("`", start + 1)
            if end < 0:
                raise self.error("unterminated backquote", start)
            self.piece("unknown", text[start : end + 1], start)
            self.i = end + 1
            return
        nxt = text[start + 1 : start + 2]
        if nxt in ("(", "{"):
            end = self._closing(start + 1)
            body = text[start + 2 : end]
            if nxt == "{" and _NAME.fullmatch(body):
                self.piece("var", body, start)
            else:
                self.piece("unknown", text[start : end + 1], start)
            self.i = end + 1
            return
        m = _NAME.match(text, start + 1)
        if m:
            self.piece("var", m.group(0), start)
            self.i = m.end()
        elif nxt and (nxt.isdigit() or nxt in "@*#?$!-"):
            self.piece("unknown", text[start : start + 2], start)
            self.i = start + 2
        else:
            self.lit("$")
            self.i += 1

    def _closing(self, open_index: int) -> int:
        """The index of the bracket closing the one at ``open_index`` (quotes inside are skipped)."""
        pairs = {"(": ")", "{": "}"}
        stack = [pairs[self.text[open_index]]]
        j = open_index + 1
        while j < len(self.text):
            c = self.text[j]
            if c == "\\":
                j += 2
                continue
            if c in "'\"":
                end = self.text.find(c, j + 1)
                j = len(self.text) if end < 0 else end + 1
                continue
            if c in pairs:
                stack.append(pairs[c])
            elif c == stack[-1]:
                stack.pop()
                if not stack:
                    return j
            j += 1
        raise self.error(f"unterminated ${self.text[open_index]}", open_index - 1)


def commands(text: str, path: str = "<text>") -> list[list[Word]]:
    """The simple commands of a script, each a list of words in order (comments and blank lines
    gone). Raises :class:`InputError` at an unterminated quote or expansion."""
    return _Scanner(text, path).run()


__all__ = ["ASSIGNMENT", "Word", "commands", "resolve"]


# words that may stand before a command without being one (`then N=4`, `do export X=1`)
RESERVED = frozenset({"if", "then", "else", "elif", "do", "while", "until", "!", "{", "time"})
DECLARE = ("export", "declare", "typeset", "local", "readonly")


class Variables:
    """The variables a script assigns, in order: a variable is known at a command when it was
    assigned once before it, to a value without expansions the script cannot know."""

    def __init__(self) -> None:
        self.values: dict[str, list[str | None]] = {}
        self.exported: dict[str, tuple[int, int]] = {}

    def known(self) -> dict[str, str]:
        return {n: v[0] for n, v in self.values.items() if len(v) == 1 and v[0] is not None}

    def record(self, words: list[Word]) -> None:
        """An assignment command (``A=1``, ``export A=1 B``, ``declare -x A=1``, ``local A``)."""
        known = self.known()
        export = words[0].literal in DECLARE
        is_export = words[0].literal == "export" or any(w.literal == "-x" for w in words[1:])
        for w in words[1:] if export else words:
            m = ASSIGNMENT.match(w.literal or w.raw)
            if m is None:
                if (
                    export
                    and is_export
                    and w.literal
                    and ASSIGNMENT.match(w.literal + "=")
                    and not w.literal.startswith("-")
                ):
                    self.exported[w.literal] = (w.line, w.column)
                continue
            value = resolve(after_equals(w), known)
            self.values.setdefault(m.group(1), []).append(value)
            if is_export:
                self.exported[m.group(1)] = (w.line, w.column)

    def environment(self) -> dict[str, tuple[str | None, int, int]]:
        known = self.known()
        return {n: (known.get(n), line, col) for n, (line, col) in self.exported.items()}


def after_equals(w: Word) -> Word:
    """The value part of a ``NAME=value`` word."""
    (kind, first), *rest = w.pieces
    return Word((("lit", first.partition("=")[2]), *rest), w.line, w.column)
