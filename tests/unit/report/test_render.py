"""The renderers of accelconf.report line by line: an unreadable file, the summary counts, colors,
and GitHub's workflow-command escaping and positions (the severity table of every format is
tests/cli/test_report_formats.py's, the JSON contract tests/cli/test_output_contract.py's)."""

from __future__ import annotations

import io

import pytest

from accelconf.errors import InputError
from accelconf.findings import Finding
from accelconf.report import FileResult, finding_line, render_github, render_text, use_color

RED, YELLOW, RESET, BOLD = "\033[31m", "\033[33m", "\033[0m", "\033[1m"


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


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


def test_color_on_a_terminal_unless_never_or_no_color(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    assert use_color(_Tty()) is True
    assert use_color(_Tty(), "never") is False
    assert use_color(io.StringIO()) is False
    assert use_color(io.StringIO(), "always") is True
    assert use_color(object()) is False  # type: ignore[arg-type]  # a stream without isatty is no terminal
    monkeypatch.setenv("NO_COLOR", "1")
    assert use_color(_Tty()) is False
    assert use_color(_Tty(), "always") is True


def test_a_colored_finding_line_has_a_bold_location_and_a_colored_severity() -> None:
    f = Finding("some-rule", "warning", "m", "num_processes", 3, 1)
    assert finding_line(f, "a.yaml", color=True) == f"{BOLD}a.yaml:3:1{RESET}: {YELLOW}warning{RESET}: m [some-rule]"
    assert finding_line(f, "a.yaml") == "a.yaml:3:1: warning: m [some-rule]"


def _f(severity: str, line: int, suggestion: str | None = None) -> Finding:
    return Finding(f"r-{severity}", severity, "m", "k", line, 1, suggestion)  # type: ignore[arg-type]


def test_text_summary_counts_each_severity_in_words() -> None:
    many = FileResult("a.yaml", [_f("error", 1, "do x"), _f("error", 2), _f("warning", 3), _f("info", 4)])
    assert render_text([many]) == (
        "a.yaml:1:1: error: m [r-error]\n    suggestion: do x\n"
        "a.yaml:2:1: error: m [r-error]\n"
        "a.yaml:3:1: warning: m [r-warning]\n"
        "a.yaml:4:1: info: m [r-info]\n"
        "1 file checked, 2 errors, 1 warning, 1 info\n"
    )
    two_warnings = FileResult("b.yaml", [_f("warning", 1), _f("warning", 2)])
    assert render_text([two_warnings]).endswith("\n1 file checked, 0 errors, 2 warnings\n")
    assert render_text([FileResult("c.yaml", [_f("error", 1)])]).endswith("\n1 file checked, 1 error, 0 warnings\n")


def test_text_summary_only_for_several_files_or_some_lines() -> None:
    assert render_text([FileResult("ok.yaml")]) == ""
    assert render_text([FileResult("ok.yaml"), FileResult("ok2.yaml")]) == "2 files checked, 0 errors, 0 warnings\n"
    assert render_text([FileResult("c.yaml", [_f("error", 1)])], summary=False) == "c.yaml:1:1: error: m [r-error]\n"


def test_output_options_defaults_choices_and_help() -> None:
    import argparse

    from accelconf.report import FORMATS, add_output_options

    parser = argparse.ArgumentParser()
    add_output_options(parser)
    assert vars(parser.parse_args([])) == {"format": "text", "color": "auto", "strict": False}
    assert vars(parser.parse_args(["--format", "sarif", "--color", "never", "--strict"])) == {
        "format": "sarif",
        "color": "never",
        "strict": True,
    }
    assert FORMATS == ("text", "json", "github", "sarif")
    with pytest.raises(SystemExit):
        parser.parse_args(["--color", "sometimes"])
    helps = {a.dest: a.help for a in parser._actions}
    assert helps["format"] == "output format (default: text)"
    assert helps["color"] == "colors (default: only on a TTY)"
    assert helps["strict"] == "exit 1 on warnings too"
    assert [a.choices for a in parser._actions if a.dest in ("format", "color")] == [
        FORMATS,
        ("auto", "always", "never"),
    ]


def test_exit_code_is_2_for_any_unreadable_input_else_1_for_an_error_or_a_strict_warning() -> None:
    from accelconf.report import exit_code

    warned, failed = FileResult("w.yaml", [_f("warning", 1)]), FileResult("e.yaml", [_f("error", 1)])
    assert exit_code([]) == 0
    assert exit_code([warned]) == 0 and exit_code([warned], strict=True) == 1
    assert exit_code([FileResult("i.yaml", [_f("info", 1)])], strict=True) == 0
    assert exit_code([failed, warned]) == 1
    assert exit_code([failed, _bad()]) == 2 and exit_code([_bad(), failed]) == 2


def test_unique_sorts_and_drops_a_finding_reported_twice_at_the_same_place() -> None:
    from accelconf.report import unique

    a = _f("error", 2)
    assert unique([a, _f("warning", 1), Finding("r-error", "error", "m", "other", 2, 1, "s")]) == [_f("warning", 1), a]
    assert len(unique([a, Finding("r-error", "error", "m2", "k", 2, 1)])) == 2  # another message
    assert len(unique([a, Finding("r-error", "error", "m", "k", 2, 1, path="b.json")])) == 2  # another file
    assert len(unique([a, Finding("r-error", "error", "m", "k", 2, 2)])) == 2  # another column


def test_json_nulls_the_position_of_a_whole_file_finding_and_names_another_file() -> None:
    import json

    from accelconf.report import findings_json, render

    whole = Finding("r", "warning", "m", "k", suggestion="s")
    (d,) = findings_json([whole], "a.yaml")
    assert (d["line"], d["column"], d["end_line"], d["end_column"], d["suggestion"]) == (None, None, None, None, "s")
    placed = Finding("r", "warning", "m", "k", 3, 4, None, 3, 9, path="b.json")
    (d,) = findings_json([placed], "a.yaml")
    assert (d["line"], d["column"], d["end_line"], d["end_column"], d["file"]) == (3, 4, 3, 9, "b.json")
    assert "file" not in findings_json([placed], "b.json")[0]
    data = json.loads(render([_bad(line=0, column=0), _bad("b.yaml")], "json", extra={"environment": {"x": 1}}))
    assert data["files"][0] == {
        "path": "bad.yaml",
        "findings": [],
        "error": {"message": "unclosed [", "line": None, "column": None},
    }
    assert data["files"][1]["error"] == {"message": "unclosed [", "line": 2, "column": 5}
    assert data["environment"] == {"x": 1}
    assert (
        render([FileResult("ok.yaml")], "json")
        == '{\n  "files": [\n    {\n      "path": "ok.yaml",\n      "findings": []\n    }\n  ]\n}\n'
    )


def test_render_picks_the_format_and_colors_only_when_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    from accelconf.report import render

    monkeypatch.delenv("NO_COLOR", raising=False)
    results = [_bad()]
    assert render(results, stream=io.StringIO()) == render_text(results)  # text, plain off a terminal
    assert render(results, color="always") == render_text(results, color=True)
    assert render(results, stream=_Tty()) == render_text(results, color=True)
    assert render(results, "github") == render_github(results)


def test_json_names_only_another_file_and_writes_any_extra_value_as_text() -> None:
    import json
    from pathlib import PurePosixPath

    from accelconf.report import render

    same = Finding("r", "warning", "m", "k", 1, 1, path="a.yaml")
    data = json.loads(render([FileResult("a.yaml", [same])], "json", extra={"where": PurePosixPath("x/y")}))
    assert "file" not in data["files"][0]["findings"][0] and data["where"] == "x/y"
