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


FULL = catalogue.Rule(
    "some-rule",
    "accelerate",
    "warning",
    "What it catches.",
    "Why it matters.",
    True,
    (
        catalogue.Example("bad: 1\n", None, "no fix here", "warning"),
        catalogue.Example("a: 1\nb: 2\n", "a: 1\n", "the fixed one", "warning", "a", "c.yaml", "1.13"),
    ),
)


def test_one_rule_in_full_word_for_word() -> None:
    """The text of `accelconf rules ID`: the example shown is the first one with a fix, indented,
    with the release it is judged at."""
    from accelconf.commands.rules import rule_text

    assert rule_text(FULL) == (
        "some-rule (accelerate)\n"
        "\n"
        "What it catches.\n"
        "\n"
        "Why it matters.\n"
        "\n"
        "Default severity: warning. Fixed by `accelconf fmt`: yes.\n"
        "\n"
        "Example (c.yaml, accelerate 1.13):\n"
        "    a: 1\n"
        "    b: 2\n"
        "\n"
        "Fixed:\n"
        "    a: 1\n"
    )
    # no fix among the examples: the first is shown, alone; no why, no example: those lines go
    bare = catalogue.Rule("bare", "deepspeed", "error", "Only a summary.", examples=(FULL.examples[0],))
    assert rule_text(bare) == (
        "bare (deepspeed)\n\nOnly a summary.\n\nDefault severity: error. Fixed by `accelconf fmt`: no.\n"
        "\nExample (c.yaml):\n    bad: 1\n"
    )
    assert rule_text(catalogue.Rule("none", "environment", "info", "S.")) == (
        "none (environment)\n\nS.\n\nDefault severity: info. Fixed by `accelconf fmt`: no.\n"
    )


def test_one_rule_as_json_names_every_field_of_its_examples() -> None:
    from accelconf.commands.rules import rule_json

    assert rule_json(FULL) == {
        "id": "some-rule",
        "area": "accelerate",
        "severity": "warning",
        "summary": "What it catches.",
        "why": "Why it matters.",
        "fmt_safe": True,
        "docs": "docs/rules/some-rule.md",
        "examples": [
            {
                "case": "no fix here",
                "file": "c.yaml",
                "text": "bad: 1\n",
                "fixed": None,
                "severity": "warning",
                "accelerate": None,
            },
            {
                "case": "the fixed one",
                "file": "c.yaml",
                "text": "a: 1\nb: 2\n",
                "fixed": "a: 1\n",
                "severity": "warning",
                "accelerate": "1.13",
            },
        ],
    }


def test_the_json_is_indented_by_two_and_the_list_is_aligned(cli) -> None:
    one = cli("rules", "null-count", "--format", "json")
    assert one.code == 0 and one.out == json.dumps(json.loads(one.out), indent=2) + "\n"
    every = cli("rules", "--format", "json")
    assert every.code == 0 and every.out == json.dumps(json.loads(every.out), indent=2) + "\n"
    listed = cli("rules")
    assert listed.code == 0 and listed.err == ""
    width = max(len(i) for i in catalogue.ids())
    for r in catalogue.all_rules():
        line = f"{r.id:<{width}}  {r.area:<11}  {r.severity:<7}  {'fmt' if r.fmt_safe else '   '}  {r.summary}\n"
        assert line in listed.out
    text = cli("rules", "null-count")
    assert text.code == 0 and text.out.startswith("null-count (accelerate)\n\n")


def test_an_unknown_rule_id_without_a_near_one_says_only_that(cli) -> None:
    r = cli("rules", "zzzzzzzzzzzzzzzz")
    assert (r.code, r.out, r.err) == (2, "", "accelconf rules: unknown rule id 'zzzzzzzzzzzzzzzz'\n")
    r = cli("rules", "yaml11-scaler")
    assert r.err == "accelconf rules: unknown rule id 'yaml11-scaler' (did you mean 'yaml11-scalar'?)\n"


def test_rules_help_says_what_it_lists_with_examples(cli) -> None:
    r = cli("rules", "--help")
    out = r.out
    assert r.code == 0
    for part in (
        "usage: accelconf rules [-h] [--format {text,json}] [ID]",
        "List every rule id accelconf reports",
        "one rule id",
        "output format (default: text)",
        "accelconf rules yaml11-scalar",
        "one rule in full",
        "the catalogue as JSON",
        "0 printed, 2 an unknown rule id",
    ):
        assert part in " ".join(out.split()), part
    assert cli("rules", "null-count", "--format", "yaml").code == 2  # only text and json
