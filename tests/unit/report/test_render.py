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
