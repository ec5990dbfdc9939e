"""``accelconf rules`` and the checked ``--disable``: the ids come from the rule catalogue."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from accelconf import catalogue

MISTAKE = "distributed_type: MULTI_GPU\nnum_processes: 2\nmixed_precison: fp16\n"


@pytest.mark.parametrize("command", ["validate", "check"])
def test_disable_refuses_an_unknown_id_naming_the_nearest(cli, tmp_path: Path, command: str) -> None:
    config = tmp_path / "c.yaml"
    config.write_text(MISTAKE)
    r = cli(command, "--disable", "unknwn-key", str(config))
    assert r.code == 2
    assert "unknown rule id 'unknwn-key' (did you mean 'unknown-key'?)" in r.err and "Traceback" not in r.err


def test_disable_with_a_known_id_turns_that_rule_off(cli, tmp_path: Path) -> None:
    config = tmp_path / "c.yaml"
    config.write_text(MISTAKE)
    assert cli("validate", str(config)).code == 1
    r = cli("validate", "--disable", "unknown-key", "--format", "json", str(config))
    assert r.code == 0 and [f["rule"] for f in json.loads(r.out)["files"][0]["findings"]] == []


def test_rules_lists_every_catalogue_id_once(cli) -> None:
    r = cli("rules")
    assert r.code == 0
    listed = [line.split()[0] for line in r.out.splitlines()]
    assert sorted(listed) == sorted(catalogue.ids()) and len(listed) == len(set(listed))


def test_rules_explains_one_rule_with_its_example_and_fix(cli) -> None:
    r = cli("rules", "unknown-key")
    assert r.code == 0
    assert r.out.startswith("unknown-key (accelerate)") and "mixed_precison: fp16" in r.out and "Fixed:" in r.out


def test_rules_json_is_the_catalogue(cli) -> None:
    r = cli("rules", "--format", "json")
    rules = json.loads(r.out)
    assert {x["id"] for x in rules} == catalogue.ids()
    assert all(isinstance(x["fmt_safe"], bool) for x in rules), [x["id"] for x in rules if x["fmt_safe"] is None]
    one = json.loads(cli("rules", "yaml-bool-value", "--format", "json").out)
    assert one["fmt_safe"] is True and one["severity"] == "error" and one["docs"] == "docs/rules/yaml-bool-value.md"


def test_rules_with_an_unknown_id_exits_2_naming_the_nearest(cli) -> None:
    r = cli("rules", "yaml11-scaler")
    assert r.code == 2 and "did you mean 'yaml11-scalar'?" in r.err
