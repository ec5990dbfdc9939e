"""Every output format says each severity the way its reader expects (the JSON report's shape is
tests/cli/test_output_contract.py's).

One table per format is the contract: GitHub workflow commands (``::error``/``::warning``/``::notice``),
SARIF levels (``error``/``warning``/``note``), the text line's severity word and the JSON ``severity``.
A renderer that maps one severity to another's level (an info shown as a warning annotation) fails here.
"""

from __future__ import annotations

import json

import pytest

from accelconf.findings import Finding
from accelconf.report import FileResult, render

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


def test_a_finding_with_a_misspelt_severity_cannot_be_made() -> None:
    # each rule's severity is a string literal at its call; one typo ("ERROR") would exit 0
    with pytest.raises(ValueError, match="severity 'ERROR'"):
        Finding("ds-version", "ERROR", "x")  # type: ignore[arg-type]
