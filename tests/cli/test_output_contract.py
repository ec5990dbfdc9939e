"""The ``--format json`` output contract: every command's JSON validates against the published
schema (``schemas/accelconf-output.schema.json``), with the field names scripts rely on, and the
exit code of a run over several files that end differently is the worst of them (2 unreadable,
1 an error, 0 clean), whatever the order."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import jsonschema
import pytest

from accelconf.report import FORMATS

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
SCHEMA = json.loads((ROOT / "schemas" / "accelconf-output.schema.json").read_text(encoding="utf-8"))
# --format sarif follows the official SARIF 2.1.0 schema, not accelconf's own
SARIF = json.loads((ROOT / "tests" / "data" / "sarif" / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))


def _check(shape: str, data: object) -> None:
    schema = {**SCHEMA, "$ref": f"#/$defs/{shape}"}
    schema.pop("oneOf")
    jsonschema.Draft7Validator(schema).validate(data)
    jsonschema.Draft7Validator(SCHEMA).validate(data)  # and exactly one shape of the whole contract


def test_the_schema_is_valid_draft7() -> None:
    jsonschema.Draft7Validator.check_schema(SCHEMA)


@pytest.fixture
def inputs(tmp_path: Path) -> dict[str, Path]:
    bad = tmp_path / "bad.yaml"
    bad.write_bytes(b"distributed_type: [\n")
    warn = tmp_path / "warn.yaml"
    warn.write_text(
        "distributed_type: FSDP\nmixed_precision: bf16\nnum_processes: 2\nfsdp_config:\n  fsdp_version: 2\n"
        "  fsdp_backward_prefetch: BACKWARD_PRE\n",
        encoding="utf-8",
    )
    return {
        "clean": EXAMPLES / "fsdp2.yaml",
        "errors": EXAMPLES / "mistakes.yaml",
        "ds": EXAMPLES / "ds_zero3.json",
        "bad": bad,
        "warn": warn,
    }


def test_validate_json_output_follows_the_contract(cli, inputs) -> None:
    r = cli("validate", "--format", "json", *map(str, inputs.values()))
    data = json.loads(r.out)
    _check("report", data)
    by_path = {f["path"]: f for f in data["files"]}
    assert set(by_path) == {str(p) for p in inputs.values()}
    assert by_path[str(inputs["clean"])]["findings"] == [] and "error" not in by_path[str(inputs["clean"])]
    bad = by_path[str(inputs["bad"])]
    assert bad["findings"] == [] and set(bad["error"]) == {"message", "line", "column"} and bad["error"]["line"] == 2
    finding = by_path[str(inputs["errors"])]["findings"][0]
    assert set(finding) >= {
        "rule",
        "severity",
        "message",
        "key",
        "line",
        "column",
        "end_line",
        "end_column",
        "suggestion",
    }
    assert {f["severity"] for f in by_path[str(inputs["warn"])]["findings"]} == {"warning"}


def test_check_json_output_follows_the_contract(cli, inputs) -> None:
    r = cli("check", "--format", "json", "--gpus", "8", "--gpu", "H100-80GB", "--params", "7e9", str(inputs["clean"]))
    data = json.loads(r.out)
    _check("report", data)
    assert {"files", "environment", "memory"} <= set(data)


def test_diff_json_output_follows_the_contract(cli, inputs) -> None:
    data = json.loads(cli("diff", "--format", "json", str(inputs["clean"]), str(inputs["errors"])).out)
    _check("diff", data)
    assert data and {"key", "a", "b", "kind", "a_line", "b_line"} <= set(data[0])
    assert json.loads(cli("diff", "--format", "json", str(inputs["clean"]), str(inputs["clean"])).out) == []


def test_explain_json_output_follows_the_contract(cli, inputs) -> None:
    data = json.loads(cli("explain", "--format", "json", str(inputs["clean"])).out)
    _check("explain", data)
    assert any(row["setting"] == "num_processes" and row["value"] == 8 for row in data["settings"])


def test_env_json_output_follows_the_contract(cli) -> None:
    data = json.loads(cli("env", "--format", "json").out)
    _check("env", data)


@pytest.mark.parametrize("command", ["validate", "check"])
def test_sarif_output_of_every_input_follows_the_sarif_schema(cli, inputs, command: str) -> None:
    r = cli(command, "--format", "sarif", *map(str, inputs.values()))
    log = json.loads(r.out)
    jsonschema.Draft4Validator(SARIF).validate(log)
    assert r.code == 2 and len(log["runs"]) == 1
    assert {x["ruleId"] for x in log["runs"][0]["results"]} >= {"parse-error", "enum-case", "fsdp1-key-in-fsdp2"}


@pytest.mark.parametrize(
    "names, code",
    [
        (("clean", "bad"), 2),
        (("errors", "bad"), 2),
        (("clean", "errors"), 1),
        (("clean", "warn"), 0),
        (("clean", "ds"), 0),
    ],
)
def test_exit_code_of_files_that_end_differently_is_the_worst_in_any_order(cli, inputs, names, code) -> None:
    for order in itertools.permutations(names):
        for fmt in FORMATS:
            r = cli("validate", "--format", fmt, *(str(inputs[n]) for n in order))
            assert r.code == code, (order, fmt, r.out)
    assert cli("validate", "--strict", str(inputs["clean"]), str(inputs["warn"])).code == 1


def test_fit_json_output_follows_the_contract(cli, tmp_path) -> None:
    out = tmp_path / "fit.yaml"
    r = cli(
        "fit", "--format", "json", "--gpus", "8", "--gpu", "H100-80GB", "--params", "7e9", "--write-config", str(out)
    )
    data = json.loads(r.out)
    _check("fit", data)
    assert r.code == 0 and data["written"] == str(out) and data["cheapest_that_fits"]
    assert {"strategy", "per_gpu_bytes", "host_ram_per_node_bytes", "verdict", "comm_cost"} <= set(data["rows"][0])
