"""The parts of the SARIF log one by one: rule descriptors, regions, results, artifact URIs and the
log's driver, each field as code scanning reads it."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from accelconf import catalogue
from accelconf.errors import InputError
from accelconf.findings import Finding
from accelconf.sarif import _region, artifact_uri, render_sarif, result, rule_descriptor, sarif_log


def _rule(rule_id: str) -> catalogue.Rule:
    return next(r for r in catalogue.all_rules() if r.id == rule_id)


def test_a_rule_descriptor_names_the_rule_in_camel_case():
    r = _rule("cli.bad-value")
    assert rule_descriptor(r) == {
        "id": "cli.bad-value",
        "name": "CliBadValue",
        "shortDescription": {"text": r.summary},
        "fullDescription": {"text": r.why},
        "helpUri": f"{catalogue.SITE}/rules/cli.bad-value/",
        "help": {"text": f"{r.summary} {r.why}"},
        "defaultConfiguration": {"level": {"info": "note"}.get(r.severity, r.severity)},
        "properties": {"tags": [r.area], "fmtSafe": r.fmt_safe},
    }
    assert r.why


def test_a_rule_without_a_why_is_described_by_its_summary():
    r = _rule("env-deepspeed-missing")
    d = rule_descriptor(r)
    assert d["fullDescription"] == {"text": r.summary}
    assert d["help"] == {"text": r.summary}
    assert d["name"] == "EnvDeepspeedMissing"


@pytest.mark.parametrize(
    ("line", "column", "end_line", "end_column", "region"),
    [
        (0, 0, 0, 0, None),
        (3, 0, 0, 0, {"startLine": 3, "startColumn": 1}),
        (3, 5, 3, 5, {"startLine": 3, "startColumn": 5}),  # an empty span has no end
        (3, 5, 3, 6, {"startLine": 3, "startColumn": 5, "endLine": 3, "endColumn": 6}),
        (3, 5, 4, 1, {"startLine": 3, "startColumn": 5, "endLine": 4, "endColumn": 1}),
        (3, 5, 2, 9, {"startLine": 3, "startColumn": 5}),  # an end before the start is dropped
    ],
    ids=["whole_file", "no_column", "empty_span", "one_line", "two_lines", "end_before_start"],
)
def test_a_region_has_an_end_only_after_its_start(line, column, end_line, end_column, region):
    f = Finding("unknown-key", "error", "m", "k", line, column, end_line=end_line, end_column=end_column)
    assert _region(f) == region


def test_a_result_adds_the_suggestion_to_the_message():
    with_s = result(Finding("unknown-key", "error", "unknown key", "k", 1, 1, "num_processes"), "a.yaml", {})
    without = result(Finding("unknown-key", "warning", "unknown key", "k", 1, 1), "a.yaml", {"unknown-key": 4})
    assert with_s["message"] == {"text": "unknown key (suggestion: num_processes)"}
    assert "ruleIndex" not in with_s
    assert without["message"] == {"text": "unknown key"}
    assert (without["level"], without["ruleIndex"]) == ("warning", 4)


@pytest.mark.parametrize("path", ["-", "<stdin>"])
def test_standard_input_is_the_artifact_stdin(path):
    assert artifact_uri(path) == "stdin"


def test_an_artifact_is_relative_to_the_given_directory_else_the_working_one(tmp_path: Path, monkeypatch):
    (tmp_path / "sub dir").mkdir()
    target = tmp_path / "sub dir" / "a.yaml"
    assert artifact_uri(str(target), str(tmp_path)) == "sub%20dir/a.yaml"
    monkeypatch.chdir(tmp_path / "sub dir")
    assert artifact_uri(str(target)) == "a.yaml"
    assert artifact_uri(str(target), str(tmp_path)) == "sub%20dir/a.yaml"


def test_a_path_with_no_relative_form_is_a_file_uri(tmp_path: Path, monkeypatch):
    # os.path.relpath raises ValueError across Windows drives; elsewhere it never does, so stand in for it
    def no_relative(*_args):
        raise ValueError("path is on mount 'C:', start on mount 'D:'")

    monkeypatch.setattr(os.path, "relpath", no_relative)
    assert artifact_uri(str(tmp_path / "a.yaml")) == (tmp_path / "a.yaml").as_uri()


def test_an_unreadable_file_is_a_parse_error_result_at_the_reader_position():
    log = sarif_log([("bad.yaml", [], InputError("mapping values are not allowed here", "bad.yaml", 2, 7))], "9.9")
    (res,) = log["runs"][0]["results"]
    assert res["ruleId"] == "parse-error" and res["level"] == "error"
    assert res["message"] == {"text": "mapping values are not allowed here"}
    assert res["locations"][0]["physicalLocation"]["region"] == {"startLine": 2, "startColumn": 7}
    assert res["locations"][0]["physicalLocation"]["artifactLocation"] == {"uri": "bad.yaml"}


def test_the_driver_is_accelconf_with_every_rule():
    driver = sarif_log([], "9.9")["runs"][0]["tool"]["driver"]
    assert (driver["name"], driver["version"], driver["informationUri"]) == (
        "accelconf",
        "9.9",
        catalogue.SITE + "/",
    )
    assert [r["id"] for r in driver["rules"]] == [r.id for r in catalogue.all_rules()]


def test_the_rendered_log_is_indented_by_two_and_ends_with_a_newline():
    text = render_sarif([], "9.9")
    assert text == json.dumps(sarif_log([], "9.9"), indent=2) + "\n"
    assert text.startswith('{\n  "$schema": ')
