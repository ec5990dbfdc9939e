"""The renderers of accelconf.report line by line: an unreadable file, the summary counts, colors,
and GitHub's workflow-command escaping and positions (the severity table of every format is
tests/cli/test_report_formats.py's, the JSON contract tests/cli/test_output_contract.py's)."""

from __future__ import annotations

from accelconf.errors import InputError
from accelconf.findings import Finding
from accelconf.report import FileResult, render_github, render_text

RED, RESET = "\033[31m", "\033[0m"


def _bad(path: str = "bad.yaml", line: int = 2, column: int = 5) -> FileResult:
    return FileResult(path, error=InputError("unclosed [", path, line, column))


def _finding(line: int = 3, column: int = 0, suggestion: str | None = None) -> Finding:
    return Finding("some-rule", "warning", "50% done\r\nnext", "num_processes", line, column, suggestion)


def test_text_names_an_unreadable_file_at_its_position_and_counts_it() -> None:
    out = render_text([_bad(), _bad("worse.yaml", 0, 0), FileResult("ok.yaml")])
    assert out == (
        "bad.yaml:2:5: error: unclosed [ [parse]\n"
        "worse.yaml: error: unclosed [ [parse]\n"
        "3 files checked, 0 errors, 0 warnings, 2 unreadable\n"
    )


def test_text_is_plain_unless_color_is_asked_for() -> None:
    assert "\033" not in render_text([_bad()])
    assert render_text([_bad()], color=True).startswith(f"bad.yaml:2:5: {RED}error{RESET}: unclosed [")


def test_github_escapes_percent_and_line_breaks_in_messages() -> None:
    out = render_github([FileResult("a.yaml", [_finding(suggestion="use 2%")])])
    assert out == "::warning file=a.yaml,line=3,col=1,title=some-rule::50%25 done%0D%0Anext (suggestion: use 2%25)\n"


def test_github_parse_errors_with_and_without_a_position_and_every_file_after_them() -> None:
    out = render_github([_bad(line=2, column=0), _bad("worse.yaml", 0, 0), FileResult("a.yaml", [_finding(0)])])
    assert out.splitlines() == [
        "::error file=bad.yaml,line=2,col=1,title=parse::unclosed [",
        "::error file=worse.yaml,title=parse::unclosed [",
        "::warning file=a.yaml,title=some-rule::50%25 done%0D%0Anext",
    ]
    assert render_github([_bad(column=7)]) == "::error file=bad.yaml,line=2,col=7,title=parse::unclosed [\n"
    assert render_github([FileResult("ok.yaml")]) == ""
