"""Severities are data: the rule catalogue's accelerate examples, one per rule id and case, with the
severity it must have (tests/unit/catalogue/test_catalogue.py runs each). Every rule id validate can emit has a case,
so changing a severity, or adding a rule without deciding its severity, fails a test."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from accelconf import catalogue


def _rows() -> list[tuple[str, str, str, str, str, str]]:
    """(rule, case, text, accelerate version, key the finding is about, expected severity): the
    catalogue's accelerate examples that name a severity."""
    return [
        (r.id, e.case, e.text, e.accelerate or "1.15", e.key, e.severity)
        for r in catalogue.all_rules()
        if r.area == "accelerate"
        for e in r.examples
        if e.severity is not None
    ]


TABLE = _rows()


def reads_a_file_beside(rule: str, case: str) -> bool:
    """Whether the row's document names a file its example puts beside it (it is checked with that file)."""
    example = next(e for r in catalogue.all_rules() if r.id == rule for e in r.examples if e.case == case)
    return any(name in example.text for name, _ in example.files)


def _rule_ids_in_validate() -> set[str]:
    """Every rule id validate can emit (``ctx.finding("x", ...)``, ``Finding("x", ...)``, ``"a" if c else "b"``).

    Read with :mod:`ast`; the mutant copies ``make mutants`` adds to the module (functions named
    ``*__mutmut_<n>``) are passed over, so the scan sees the rules as written."""
    import accelconf.accelerate.validate as v

    ids: set[str] = set()

    def first_arg(node: ast.expr) -> list[ast.expr]:
        return [node.body, node.orelse] if isinstance(node, ast.IfExp) else [node]

    def visit(node: ast.AST) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and re.search(r"__mutmut_\d+$", node.name):
            return
        if (
            isinstance(node, ast.Call)
            and node.args
            and (
                (
                    isinstance(node.func, ast.Attribute)
                    and node.func.attr == "finding"
                    and isinstance(node.func.value, ast.Name)
                    and node.func.value.id == "ctx"
                )
                or (isinstance(node.func, ast.Name) and node.func.id == "Finding")
            )
        ):
            ids.update(
                a.value for a in first_arg(node.args[0]) if isinstance(a, ast.Constant) and isinstance(a.value, str)
            )
        for child in ast.iter_child_nodes(node):
            visit(child)

    here = Path(str(v.__file__))
    for path in (
        sorted(here.parent.glob("*.py")) if here.name == "__init__.py" else [here]
    ):  # a module, or a package of them
        visit(ast.parse(path.read_text(encoding="utf-8")))
    return ids


def test_every_validate_rule_id_has_rows_in_the_table() -> None:
    ids = _rule_ids_in_validate()
    assert len(ids) > 30  # the scan finds the rules: the test can fail
    missing = ids - {row[0] for row in TABLE}
    assert not missing, f"rule ids without a severity row: {sorted(missing)}"


def test_each_rule_s_default_severity_is_one_of_its_cases() -> None:
    by_rule: dict[str, set[str]] = {}
    for rule, _case, _text, _version, _key, severity in TABLE:
        by_rule.setdefault(rule, set()).add(severity)
    wrong = {
        r.id: (r.severity, by_rule[r.id])
        for r in catalogue.all_rules()
        if r.id in by_rule and r.severity not in by_rule[r.id]
    }
    assert not wrong
