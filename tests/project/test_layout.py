"""No function in the package or the language server is longer than MAX_LINES: a function longer
than a screen usually does two jobs. Measured with :mod:`ast`, from the ``def`` line to the
function's last line (decorators excluded, docstring and nested functions included)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MAX_LINES = 80
# "package/module.py:function" -> why it is allowed past the limit for now. An entry needs a reason
# (a stale entry fails below).
ALLOWED: dict[str, str] = {}


def long_functions(source: str, name: str = "<text>", limit: int = MAX_LINES) -> list[tuple[str, int]]:
    """("name:function", lines) for each function (methods and nested ones too) longer than ``limit`` lines."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            lines = (node.end_lineno or node.lineno) - node.lineno + 1
            if lines > limit:
                out.append((f"{name}:{node.name}", lines))
    return out


def _sources() -> list[Path]:
    return sorted(list((ROOT / "accelconf").rglob("*.py")) + list((ROOT / "lsp" / "accelconf_lsp").rglob("*.py")))


def test_no_function_is_longer_than_the_limit():
    found = [
        (where, n)
        for path in _sources()
        for where, n in long_functions(path.read_text(encoding="utf-8"), path.relative_to(ROOT).as_posix())
    ]
    too_long = [f"{where} ({n} lines)" for where, n in found if where not in ALLOWED]
    assert not too_long, (
        f"functions over {MAX_LINES} lines (split them, or allow one in ALLOWED with the reason): {too_long}"
    )
    stale = set(ALLOWED) - {where for where, _ in found}
    assert not stale, f"ALLOWED names functions that are no longer too long: {sorted(stale)}"


def test_the_sources_are_found():
    names = {p.relative_to(ROOT).as_posix() for p in _sources()}
    assert {"accelconf/api.py", "accelconf/assist/cursor.py", "lsp/accelconf_lsp/server.py"} <= names


def _function(lines: int, nested: bool = False, method: bool = False) -> str:
    body = "".join(f"    x{i} = {i}\n" for i in range(lines - 1))
    src = "def f():\n" + body
    if nested:
        src = "def outer():\n" + "".join("    " + ln + "\n" for ln in src.splitlines()) + "    return f\n"
    if method:
        src = "class C:\n" + "".join("    " + ln + "\n" for ln in src.splitlines())
    return "@decorator\n" + src


def test_the_measure_counts_def_to_last_line():
    assert long_functions(_function(MAX_LINES)) == []
    assert long_functions(_function(MAX_LINES + 1)) == [("<text>:f", MAX_LINES + 1)]
    assert ("<text>:f", MAX_LINES + 1) in long_functions(_function(MAX_LINES + 1, nested=True))
    assert long_functions(_function(MAX_LINES + 1, method=True)) == [("<text>:f", MAX_LINES + 1)]
