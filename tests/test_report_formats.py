"""Every output format says each severity the way its reader expects, and the JSON report holds the
shape its published schema promises, for findings and for an unreadable file alike.

One table per format is the contract: GitHub workflow commands (``::error``/``::warning``/``::notice``),
SARIF levels (``error``/``warning``/``note``), the text line's severity word and the JSON ``severity``.
A renderer that maps one severity to another's level (an info shown as a warning annotation) fails here.
"""

from __future__ import annotations

import json

import jsonschema
import pytest

from accelconf.errors import InputError
from accelconf.findings import Finding
from accelconf.report import FileResult, output_schema, render

SEVERITIES = ("error", "warning", "info")
GITHUB = {"error": "::error ", "warning": "::warning ", "info": "::notice "}
SARIF = {"error": "error", "warning": "warning", "info": "note"}


def _one(severity: str, line: int = 3) -> list[FileResult]:
    f = Finding(f"rule-{severity}", severity, f"a {severity} finding", "num_processes", line, 1)  # type: ignore[arg-type]
    return [FileResult("train.yaml", [f])]


@pytest.mark.parametrize("severity", SEVERITIES)
def test_github_annotation_level_follows_the_severity(severity: str) -> None:
    (line,) = render(_one(severity), "github").splitlines()
    assert line.startswith(GITHUB[severity]), line
    assert f"title=rule-{severity}::" in line and "line=3" in line


@pytest.mark.parametrize("severity", SEVERITIES)
def test_sarif_level_follows_the_severity(severity: str) -> None:
    (result,) = json.loads(render(_one(severity), "sarif"))["runs"][0]["results"]
    assert result["level"] == SARIF[severity] and result["ruleId"] == f"rule-{severity}"


@pytest.mark.parametrize("severity", SEVERITIES)
def test_text_and_json_keep_the_severity_word(severity: str) -> None:
    assert f"train.yaml:3:1: {severity}: a {severity} finding [rule-{severity}]" in render(_one(severity), "text")
    (f,) = json.loads(render(_one(severity), "json"))["files"][0]["findings"]
    assert f["severity"] == severity


def _schema() -> dict:
    return output_schema("https://example.invalid/accelconf-output.schema.json")


def test_json_report_of_an_unreadable_file_has_the_schema_error_object() -> None:
    bad = FileResult("broken.yaml", error=InputError("mapping values are not allowed here", "broken.yaml", 4, 7))
    out = json.loads(render([bad], "json"))
    jsonschema.validate(out, _schema())
    assert out["files"][0]["error"] == {"message": "mapping values are not allowed here", "line": 4, "column": 7}


def test_json_report_findings_have_exactly_the_schema_keys() -> None:
    whole_file = Finding("rule-file", "warning", "about the whole file")
    out = json.loads(render([FileResult("a.yaml", [whole_file, *_one("error")[0].findings])], "json"))
    jsonschema.validate(out, _schema())
    keys = set(_schema()["$defs"]["finding"]["required"])
    for f in out["files"][0]["findings"]:
        assert set(f) == keys
    (whole,) = [f for f in out["files"][0]["findings"] if f["rule"] == "rule-file"]
    assert (whole["line"], whole["column"], whole["end_line"], whole["end_column"]) == (None, None, None, None)
