"""The rule catalogue: every id accelconf emits is in it, and every example in it does what it says."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from accelconf import catalogue
from accelconf.api import check_document, validate_source
from accelconf.catalogue import Example, Rule
from accelconf.errors import InputError
from accelconf.text.document import load_file
from tests.conftest import corpus_files

ROOT = Path(__file__).resolve().parents[3]
SOURCES = sorted([*(ROOT / "accelconf").rglob("*.py"), *(ROOT / "lsp").rglob("*.py")])
# Functions that take a rule id as their first argument (a finding's constructor and its helpers).
EMITTERS = {"Finding", "finding", "add", "_finding", "finding_at", "Issue", "_differ"}
# Prefixed ids are recognisable wherever they are written (a ``rule=`` keyword, a helper's third argument).
PREFIXED = re.compile(r"^(?:ds|env|mem|launch|convert|cli|kwargs|preflight)[-.][a-z0-9][a-z0-9-]*$|^model-wrap-class$")
# launch.CHANGES entries and a file name, not findings
NOT_IDS = {"ds.json"}  # a file name
RELEASE_LOOKUPS = {"changed", "has", "since"}  # releases-table lookups by name
IN_TEXT = re.compile(r"\[(preflight\.[a-z-]+)\]")  # preflight's messages name their id in brackets


def _strings(node: ast.expr) -> list[str]:
    if isinstance(node, ast.IfExp):
        return _strings(node.body) + _strings(node.orelse)
    return [node.value] if isinstance(node, ast.Constant) and isinstance(node.value, str) else []


def _ids_in(path: Path) -> set[str]:
    """Rule ids written in one module: first arguments of the emitters, any prefixed id, the ids
    DeepSpeed's conversion notes prefix with ``convert.ds-``. Mutant copies (``*__mutmut_<n>``) are skipped."""
    text = path.read_text(encoding="utf-8")
    found = set(IN_TEXT.findall(text))
    stack: list[ast.AST] = [ast.parse(text)]
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and re.search(r"__mutmut_\d+$", node.name):
            continue
        if isinstance(node, ast.JoinedStr):
            continue  # the pieces of an f-string are no ids
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
            stack.append(node.value)  # a key into a table (releases.DEEPSPEED_SINCE["ds-..."]), not an id
            continue
        if isinstance(node, ast.Dict):
            stack.extend(v for v in node.values if v is not None)  # keys name table entries (launch changes...)
            continue
        if isinstance(node, ast.Call):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if name in RELEASE_LOOKUPS:
                continue  # the name of a release boundary (releases.has(v, "ds-multinode-...")), not an id
            if name in EMITTERS and node.args:
                found.update(s for s in _strings(node.args[0]) if re.fullmatch(r"[a-z][a-z0-9.-]*", s))
            if name == "rule" and isinstance(node.func, ast.Name):  # validate's decorator names every id its rule emits
                found.update(s for a in node.args for s in _strings(a))
            if name == "note" and isinstance(node.func, ast.Attribute) and getattr(node.func.value, "id", "") == "conv":
                found.update("convert.ds-" + s for s in _strings(node.args[0]))
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and PREFIXED.match(node.value):
            found.add(node.value)
        stack.extend(ast.iter_child_nodes(node))
    return found - NOT_IDS


def _emitted() -> dict[str, str]:
    out: dict[str, str] = {}
    for path in SOURCES:
        for rid in _ids_in(path):
            out.setdefault(rid, str(path.relative_to(ROOT)))
    return out


def test_every_id_written_in_the_source_is_in_the_catalogue() -> None:
    emitted = _emitted()
    assert {"unknown-key", "ds-batch", "env-bf16", "mem-gpu", "convert.lossy", "preflight.hang"} <= set(
        emitted
    )  # the scan sees them
    missing = {rid: where for rid, where in emitted.items() if catalogue.get(rid) is None}
    assert not missing, f"ids emitted but not in accelconf/catalogue/: {missing}"


def test_every_id_a_validate_rule_declares_is_in_the_catalogue() -> None:
    from accelconf.accelerate.validate import RULES

    declared = {rid for ids, _fn in RULES for rid in ids}
    assert len(RULES) > 15 and "yaml-bool-value" in declared
    assert declared <= catalogue.ids(), sorted(declared - catalogue.ids())


def test_the_scan_finds_an_id_missing_from_the_catalogue(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text("ctx.finding('no-such-rule', 'error', 'm', ())\nx = 'env-not-a-rule'\n")
    assert {"no-such-rule", "env-not-a-rule"} <= _ids_in(module)
    assert catalogue.get("no-such-rule") is None


def _corpus_and_data() -> list[Path]:
    data = [p for p in (ROOT / "tests" / "data").rglob("*") if p.suffix in (".yaml", ".yml", ".json", ".env", ".sh")]
    return [*corpus_files("accelerate"), *corpus_files("deepspeed"), *corpus_files("trainer"), *sorted(data)]


def test_every_id_the_corpus_and_the_test_data_produce_is_in_the_catalogue() -> None:
    files = _corpus_and_data()
    assert len(files) > 100
    seen: dict[str, str] = {}
    for path in files:
        try:
            found = validate_source(path.read_text(encoding="utf-8"), str(path))
        except (InputError, UnicodeDecodeError, ValueError):
            continue  # files that are meant not to parse
        for f in found:
            seen.setdefault(f.rule, path.name)
    assert len(seen) > 20
    missing = {rid: where for rid, where in seen.items() if catalogue.get(rid) is None}
    assert not missing, f"ids produced but not in the catalogue: {missing}"


def test_each_rule_has_a_summary_a_known_area_and_one_docs_page_path() -> None:
    rules = catalogue.all_rules()
    assert len(rules) == len({r.id for r in rules}) > 100
    for r in rules:
        assert r.summary and r.area in catalogue.AREAS and r.severity in ("error", "warning", "info"), r
        assert r.doc_path == f"docs/rules/{r.id}.md"


def test_every_accelerate_and_deepspeed_rule_that_validate_reports_has_an_example_with_its_fix() -> None:
    lacking = [r.id for r in catalogue.all_rules() if r.area == "accelerate" and not any(e.fixed for e in r.examples)]
    assert not lacking, f"accelerate rules without a fixed example: {lacking}"


def _run(rule: Rule, example: Example, tmp_path: Path, text: str) -> list:
    from accelconf.environment.targets import load_target

    for name, content in example.files:
        (tmp_path / name).write_text(content)
    path = tmp_path / example.file
    path.write_text(text)
    env = load_target(example.target) if example.target else None
    if rule.area == "accelerate":  # what validate does with a document it has read (an empty one too)
        return check_document(load_file(path), env, accelerate_version=example.accelerate or "1.15")
    return validate_source(
        text,
        str(path),
        env,
        accelerate_version=example.accelerate or "1.15",
        deepspeed_version=example.deepspeed,
        runtime=example.runtime,
    )


EXAMPLES = [(r, e) for r in catalogue.all_rules() for e in r.examples]


@pytest.mark.parametrize("rule,example", EXAMPLES, ids=[f"{r.id}:{e.case}" for r, e in EXAMPLES])
def test_example_triggers_its_rule_and_the_fixed_example_does_not(rule: Rule, example: Example, tmp_path: Path) -> None:
    got = [
        f
        for f in _run(rule, example, tmp_path, example.text)
        if f.rule == rule.id and (not example.key or f.key == example.key)
    ]
    assert got, f"{rule.id} ({example.case}) does not fire"
    if example.severity is not None:
        assert {f.severity for f in got} == {example.severity}, [(f.severity, f.message) for f in got]
    if example.fixed is not None:
        fixed = [f for f in _run(rule, example, tmp_path, example.fixed) if f.rule == rule.id]
        assert not fixed, f"the fixed example still triggers {rule.id}: {[f.message for f in fixed]}"


def test_deepspeed_examples_name_the_severity_and_the_key_their_finding_has() -> None:
    examples = [e for r in catalogue.all_rules() if r.area == "deepspeed" for e in r.examples]
    assert examples and all(e.severity in ("error", "warning", "info") for e in examples)
    assert all(e.file == "ds_config.json" and e.text.startswith("{") for e in examples)
    enum = catalogue.get("ds-enum")
    assert enum is not None and [e.key for e in enum.examples] == ["scheduler.type"]


def test_nearest_names_the_known_id_a_typo_meant() -> None:
    assert catalogue.nearest("unknwn-key") == "unknown-key"
    assert catalogue.nearest("ds-batchh") == "ds-batch"
    message = catalogue.unknown_message(["unknown-key", "yaml11-scaler"])
    assert message is not None and "'yaml11-scaler' (did you mean 'yaml11-scalar'?)" in message
    assert catalogue.unknown_message(["unknown-key", "ds-batch"]) is None


def test_nearest_takes_a_close_enough_match_and_else_an_id_one_name_ends_with() -> None:
    # difflib's ratio of 0.5 is enough (the library's default 0.6 is not, for this long id)
    assert catalogue.nearest("x-ds-batch-size-mismatch") == "ds-batch"
    # no close match: another tool's qualified name ending with a known id, or a known id's tail
    assert catalogue.nearest("com.example.lint.rules.ds-batch") == "ds-batch"
    assert catalogue.nearest("16bit") == "zero3-save-16bit"
    assert catalogue.nearest("p2p") == "env-rtx40-p2p"
    assert catalogue.nearest("zero") is None


def test_unknown_message_names_where_each_unknown_id_was_given_and_its_nearest() -> None:
    assert catalogue.unknown_message(["unknwn-key"]) == (
        "--disable: unknown rule id 'unknwn-key' (did you mean 'unknown-key'?); `accelconf rules` lists them"
    )
    # an id with no near one gets no hint; several are listed in the order given, each once
    assert catalogue.unknown_message(["zero", "unknown-key", "p2p", "zero"], "disabledRules") == (
        "disabledRules: unknown rule id 'zero', 'p2p' (did you mean 'env-rtx40-p2p'?); `accelconf rules` lists them"
    )
    assert catalogue.unknown_message(["zero"], "") == "unknown rule id 'zero'; `accelconf rules` lists them"
    assert catalogue.unknown(["zero", "ds-batch", "zero"]) == [("zero", None)]


def test_register_refuses_an_id_given_twice_and_an_unknown_area() -> None:
    known = catalogue.get("unknown-key")
    assert known is not None
    with pytest.raises(ValueError, match="rule 'unknown-key' is registered twice"):
        catalogue.register(known)
    with pytest.raises(ValueError, match="rule 'no-such-rule': unknown area 'linting'"):
        catalogue.register(Rule("no-such-rule", "linting", "error", "a rule of no area"))
    assert catalogue.get("no-such-rule") is None


def test_ids_and_describe_take_one_area() -> None:
    memory = catalogue.ids("memory")
    assert memory and all(catalogue.get(r).area == "memory" for r in memory)  # type: ignore[union-attr]
    assert catalogue.ids() == frozenset().union(*(catalogue.ids(a) for a in catalogue.AREAS))
    described = catalogue.describe("memory")
    assert set(described) == memory
    assert all(described[r] == catalogue.get(r).summary for r in memory)  # type: ignore[union-attr]


def test_the_deepspeed_package_lists_the_deepspeed_rules_when_asked() -> None:
    import accelconf.deepspeed as ds

    assert ds.RULES == tuple(sorted(catalogue.ids("deepspeed"))) and "ds-batch" in ds.RULES
    with pytest.raises(AttributeError, match="module 'accelconf.deepspeed' has no attribute 'RULE'"):
        ds.RULE  # noqa: B018


def test_require_refuses_an_id_that_is_not_registered() -> None:
    assert catalogue.require("unknown-key") == ("unknown-key",)
    with pytest.raises(LookupError, match="catalogue/\\): no-such-rule, no-such-other$"):
        catalogue.require("unknown-key", "no-such-rule", "no-such-other")
