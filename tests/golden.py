"""Reviewed records of accelconf's own output (``tests/data/*/findings.golden``): one section per input,
headed ``== TITLE @ RELEASE``. After a deliberate change, ``ACCELCONF_UPDATE_EXPECTED=1`` rewrites a
record file from the current output; read the diff before committing it (CI refuses the variable)."""

from __future__ import annotations

import difflib
import os
from collections.abc import Iterable
from pathlib import Path

import pytest


def update_requested() -> bool:
    return bool(os.environ.get("ACCELCONF_UPDATE_EXPECTED"))


def write(path: Path, sections: Iterable[list[str]]) -> None:
    path.write_text("".join(ln + "\n" for lines in sections for ln in lines), encoding="utf-8")


def sections(path: Path) -> dict[str, list[str]]:
    """TITLE -> its lines (every release of it, headers included)."""
    out: dict[str, list[str]] = {}
    lines: list[str] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("== "):
            lines = out.setdefault(line[3:].rsplit(" @ ", 1)[0], [])
        lines.append(line)
    return out


def check(path: Path, title: str, got: list[str], what: str = "records") -> None:
    """Fail with a short unified diff when the output for ``title`` differs from its record."""
    expected = sections(path).get(title, [])
    if got != expected:
        diff = "\n".join(list(difflib.unified_diff(expected, got, "expected", "got", n=1, lineterm=""))[:80])
        root = Path(__file__).resolve().parents[1]
        pytest.fail(f"{what} differ from {path.resolve().relative_to(root)}:\n{diff}")
