"""The finding value every command returns: its defaults, equality (everything but the fix), its
frozen fields, the order findings are reported in, and the error count the exit code comes from."""

from __future__ import annotations

import pytest

from accelconf.findings import Finding, count_errors, sort_findings


def test_a_finding_has_no_position_key_or_fix_unless_given() -> None:
    f = Finding("unknown-key", "warning", "unknown key")
    assert repr(f) == (
        "Finding(rule='unknown-key', severity='warning', message='unknown key', key='', line=0, column=0, "
        "suggestion=None, end_line=0, end_column=0, path='', fix=())"
    )


def test_two_findings_are_equal_when_all_but_the_fix_is() -> None:
    a = Finding("r", "error", "m", "k", 1, 2, None, 1, 3, "a.yaml", ((0, 1, "x"),))
    b = a.replace(fix=())
    assert a == b and hash(a) == hash(b) and len({a, b}) == 1
    assert a != a.replace(path="b.yaml") and hash(a) != hash(a.replace(path="b.yaml"))
    assert a != a.replace(end_column=4)
    assert a.to_json() == {
        "rule": "r",
        "severity": "error",
        "message": "m",
        "key": "k",
        "line": 1,
        "column": 2,
        "suggestion": None,
        "end_line": 1,
        "end_column": 3,
    }


def test_a_finding_is_frozen() -> None:
    f = Finding("r", "info", "m")
    with pytest.raises(AttributeError, match="cannot assign to field 'line': a Finding is frozen"):
        f.line = 3  # type: ignore[misc]
    with pytest.raises(AttributeError, match="cannot delete field 'line': a Finding is frozen"):
        del f.line


def test_findings_are_sorted_by_file_line_column_severity_and_rule_with_no_line_last() -> None:
    at = [
        Finding("b", "warning", "", line=0),  # no position: after every placed finding
        Finding("z", "info", "", line=100, column=5),
        Finding("y", "warning", "", line=100, column=5),
        Finding("x", "error", "", line=100, column=5),
        Finding("w", "error", "", line=100, column=5),
        Finding("a", "info", "", line=100, column=1),
        Finding("c", "info", "", line=2),
        Finding("d", "info", "", line=1, path="b.yaml"),
    ]
    assert [f.rule for f in sort_findings(at)] == ["c", "a", "w", "x", "y", "z", "b", "d"]


def test_the_error_count_counts_errors_only() -> None:
    found = [
        Finding("a", "error", ""),
        Finding("b", "warning", ""),
        Finding("c", "error", ""),
        Finding("d", "error", ""),
    ]
    assert count_errors(found) == 3 and count_errors(found[1:2]) == 0 and count_errors([]) == 0
