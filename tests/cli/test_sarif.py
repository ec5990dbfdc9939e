"""``--format sarif``: SARIF 2.1.0 that validates against the official schema, rule metadata from
the rule catalogue, results at the positions the text output prints."""

from __future__ import annotations

import json
import os
from pathlib import Path

import jsonschema
import pytest

from accelconf import catalogue

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "tests" / "data" / "sarif" / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
MISTAKE = "distributed_type: MULTI_GPU\nnum_processes: 2\nmixed_precison: fp16\n"


def _validate(log: dict) -> None:
    jsonschema.Draft4Validator.check_schema(SCHEMA)
    jsonschema.Draft4Validator(SCHEMA, format_checker=jsonschema.FormatChecker()).validate(log)


@pytest.fixture
def files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "configs").mkdir()
    out = {
        "mistake": tmp_path / "configs" / "my config.yaml",
        "bad": tmp_path / "bad.yaml",
        "ds": tmp_path / "ds.json",
        "clean": tmp_path / "clean.yaml",
    }
    out["mistake"].write_text(MISTAKE)
    out["bad"].write_text("distributed_type: [\n")
    out["ds"].write_text('{"zero_optimization": {"stage": 3}, "train_micro_batch_size_per_gpu": 4}\n')
    out["clean"].write_text("distributed_type: MULTI_GPU\nnum_processes: 2\n")
    return out


def test_validate_sarif_follows_the_official_schema(cli, files: dict[str, Path]) -> None:
    r = cli("validate", "--format", "sarif", *(str(p) for p in files.values()))
    assert r.code == 2  # one file does not parse: as with every format
    log = json.loads(r.out)
    _validate(log)
    run = log["runs"][0]
    results = run["results"]
    assert {x["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for x in results} == {
        "configs/my%20config.yaml",
        "bad.yaml",
        "ds.json",
    }  # relative to the working directory, percent-encoded
    typo = next(x for x in results if x["ruleId"] == "unknown-key")
    assert typo["level"] == "error" and "mixed_precison" in typo["message"]["text"]
    region = typo["locations"][0]["physicalLocation"]["region"]
    assert region == {"startLine": 3, "startColumn": 1, "endLine": 3, "endColumn": 15}
    parse = next(x for x in results if x["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "bad.yaml")
    assert parse["ruleId"] == "parse-error" and parse["locations"][0]["physicalLocation"]["region"]["startLine"] == 2


def test_sarif_rules_are_the_catalogue_with_their_docs_page_and_level(cli, files: dict[str, Path]) -> None:
    log = json.loads(cli("validate", "--format", "sarif", str(files["mistake"])).out)
    rules = log["runs"][0]["tool"]["driver"]["rules"]
    assert [x["id"] for x in rules] == [r.id for r in catalogue.all_rules()]
    by_id = {x["id"]: x for x in rules}
    info = by_id["unprefixed-key"]
    assert info["defaultConfiguration"] == {"level": "note"} and info["helpUri"].endswith("/rules/unprefixed-key/")
    assert info["shortDescription"]["text"] == catalogue.get("unprefixed-key").summary  # type: ignore[union-attr]
    result = log["runs"][0]["results"][0]
    assert rules[result["ruleIndex"]]["id"] == result["ruleId"]


def test_check_sarif_with_environment_findings_follows_the_schema(cli, files: dict[str, Path]) -> None:
    config = files["clean"]
    config.write_text("distributed_type: MULTI_GPU\nnum_processes: 2\nmixed_precision: bf16\n")
    r = cli("check", "--format", "sarif", "--target", "v100-node", str(config))
    log = json.loads(r.out)
    _validate(log)
    assert "env-bf16" in {x["ruleId"] for x in log["runs"][0]["results"]}
    assert r.code == 1


def test_a_finding_without_a_position_has_a_location_without_a_region(tmp_path: Path) -> None:
    from accelconf.findings import Finding
    from accelconf.sarif import sarif_log

    whole = Finding("convert.lossy", "warning", "dropped", "num_processes")  # line 0: no position
    other = Finding("ds-batch", "error", "batch", "train_batch_size", 2, 3, path=str(tmp_path / "ds.json"))
    log = sarif_log([(str(tmp_path / "a.yaml"), [whole, other], None)], "0")
    _validate(log)
    first, second = (x["locations"][0]["physicalLocation"] for x in log["runs"][0]["results"])
    assert "region" not in first and first["artifactLocation"]["uri"].endswith("a.yaml")
    assert second["artifactLocation"]["uri"].endswith("ds.json") and second["region"] == {
        "startLine": 2,
        "startColumn": 3,
    }


def test_the_schema_refuses_what_sarif_forbids() -> None:
    """The vendored schema is the real one: a result without a message is refused."""
    bad = {"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "accelconf"}}, "results": [{"ruleId": "x"}]}]}
    with pytest.raises(jsonschema.ValidationError):
        _validate(bad)
    assert os.path.getsize(ROOT / "tests" / "data" / "sarif" / "sarif-schema-2.1.0.json") > 100_000
