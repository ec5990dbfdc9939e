"""Every field of a completion candidate for a key: DeepSpeed keys and accelerate settings, YAML and
JSON, with and without the colon typed (the values' candidates are tests/unit/assist/test_assist.py's)."""

from __future__ import annotations

from accelconf import assist
from accelconf import deepspeed as dsmod
from accelconf.accelerate import registry
from accelconf.assist.hover import _ds_markdown, setting_markdown
from accelconf.text.scalars import yaml_scalar
from tests.unit.assist.test_assist import cursor


def _complete(marked: str, **kw: object) -> dict[str, assist.Candidate]:
    text, line, col = cursor(marked)
    return {c.label: c for c in assist.complete(text, line, col, **kw)}  # type: ignore[arg-type]


def test_deepspeed_key_candidates_carry_kind_insert_detail_doc_sort_and_deprecation() -> None:
    got = _complete('{"zero_optimization": {"stage": 3, "|"}}', path="ds.json")
    assert "stage" not in got  # present already
    leaf = got["overlap_comm"]
    k = dsmod.lookup(("zero_optimization", "overlap_comm"))
    assert (leaf.kind, leaf.insert, leaf.start, leaf.end, leaf.detail, leaf.sort, leaf.deprecated) == (
        "key",
        '"overlap_comm": ',
        35,
        37,
        "boolean",
        "1overlap_comm",
        False,
    )
    assert leaf.doc == _ds_markdown("overlap_comm", k) and leaf.doc.startswith("**overlap_comm** · DeepSpeed")
    section = got["offload_param"]
    assert (section.kind, section.insert, section.detail) == ("section", '"offload_param": {}', "object")
    assert got["cpu_offload"].deprecated is True
    # a key of several types names them all
    assert (
        _complete('{"train_batch_size": 8, "data_types": {"|"}}', path="ds.json")["keep_in_fp32_modules"].detail
        == "string | array"
    )
    # the colon typed already: the name alone, a section too
    typed = _complete('{"zero_optimization": {"stage": 3, "ov|": true}}', path="ds.json")
    assert typed["overlap_comm"].insert == '"overlap_comm"' and typed["offload_param"].insert == '"offload_param"'
    assert _complete('{"train_batch_size": 8, "no_such_section": {"|"}}', path="ds.json") == {}


def test_accelerate_key_candidates_in_yaml() -> None:
    got = _complete("distributed_type: FSDP\n|")
    fsdp = got["fsdp_config"]
    assert (fsdp.kind, fsdp.insert, fsdp.detail) == ("section", "fsdp_config:\n  ", "section")
    mp = registry.get("", "mixed_precision")
    assert mp is not None
    c = got["mixed_precision"]
    assert (c.kind, c.insert, c.detail) == ("key", "mixed_precision: ", f"enum = {yaml_scalar(mp.launcher_default)}")
    assert c.doc == setting_markdown(mp, "yaml")
    assert got["main_process_ip"].detail == "str"  # no launcher default: the type alone
    # registry order, and keys after one already present are still offered
    top = [s.key for s in registry.settings_in("", registry.NEWEST)]
    sorts = {label: c.sort for label, c in got.items() if c.kind != "snippet"}
    assert sorts == {key: f"1{i:03d}" for i, key in enumerate(top) if key in sorts} and "distributed_type" not in sorts
    assert top.index("num_processes") > top.index("distributed_type") and "num_processes" in got
    nested = _complete("distributed_type: FSDP\nfsdp_config:\n  fsdp_v|")
    assert nested["fsdp_version"].insert == "fsdp_version: " and not any(c.kind == "snippet" for c in nested.values())


def test_accelerate_key_candidates_in_json_show_json_defaults() -> None:
    got = _complete('{"distributed_type": "FSDP", "|"}', path="accelerate.json")
    mp = registry.get("", "mixed_precision")
    assert mp is not None
    assert got["mixed_precision"].doc == setting_markdown(mp, "json") and '`"no"`' in got["mixed_precision"].doc
    assert got["fsdp_config"].insert == '"fsdp_config": {}' and got["fsdp_config"].kind == "section"
    assert not any(c.kind == "snippet" for c in got.values())


def test_section_snippets_follow_the_release_and_what_is_present() -> None:
    def snippets(marked: str, version: str | None = None) -> dict[str, assist.Candidate]:
        return {k: c for k, c in _complete(marked, version=version).items() if c.kind == "snippet"}

    for version in (None, registry.NEWEST, "1.10"):  # releases with fsdp_version: FSDP2 blocks
        assert "fsdp_version: 2" in snippets("distributed_type: FSDP\nfs|", version)["fsdp_config block"].insert
    assert "fsdp_version" not in snippets("distributed_type: FSDP\nfs|", "1.5")["fsdp_config block"].insert
    present = snippets("deepspeed_config:\n  zero_stage: 2\nde|")
    assert list(present) == ["fsdp_config block"]
    assert present["fsdp_config block"].doc.startswith("A new `fsdp_config` section")
    assert snippets("fsdp_config:\n  fsdp_version: 2\nde|")["deepspeed_config block"].doc.startswith(
        "A new `deepspeed_config` section."
    )


def _values(marked: str, **kw: object) -> list[tuple[str, str, str | None, int, int, str, str, str]]:
    text, line, col = cursor(marked)
    return [
        (c.label, c.insert, c.filter, c.start, c.end, c.detail, c.sort, c.doc)
        for c in assist.complete(text, line, col, **kw)  # type: ignore[arg-type]
        if c.kind == "value"
    ]


def test_value_candidates_in_yaml_quote_what_yaml_1_1_would_misread_and_say_why() -> None:
    no, fp16 = _values("mixed_precision: |")[:2]
    quoted = "Quoted: a bare `no` is read as `False` by accelerate (YAML 1.1)."
    assert no == ("'no'", "'no'", "no", 17, 17, "", "0000", registry.ENUM_DOCS["no"] + "\n\n" + quoted)
    assert fp16 == ("fp16", "fp16", "fp16", 17, 17, "", "0001", registry.ENUM_DOCS["fp16"])
    # inside a quote the filter is the quoted text; the candidate replaces the quote
    assert _values("mixed_precision: '|")[0][:5] == ("'no'", "'no'", "'no'", 17, 18)
    # booleans: written lower case, nothing to explain
    assert _values("use_cpu: |") == [
        ("true", "true", "true", 9, 9, "", "0000", ""),
        ("false", "false", "false", 9, 9, "", "0001", ""),
    ]


def test_value_candidates_in_json_and_deepspeed() -> None:
    no = _values('{"distributed_type": "FSDP", "mixed_precision": |}', path="a.json")[0]
    assert no == ('"no"', '"no"', "no", 48, 48, "", "0000", registry.ENUM_DOCS["no"])  # JSON: no YAML note
    stage = dsmod.lookup(("zero_optimization", "stage"))
    got = _values('{"train_batch_size": 8, "zero_optimization": {"stage": |}}', path="ds.json")
    # each value with its own doc, then "auto" (which accelerate fills in)
    assert stage.auto and [(v[0], v[7]) for v in got] == [
        *((str(v), d) for v, d in zip(stage.enum, stage.enum_docs)),
        ('"auto"', ""),
    ]
    assert [v[0] for v in _values('{"train_batch_size": 8, "sparse_gradients": |}', path="ds.json")] == [
        "true",
        "false",
    ]  # one of its types is boolean
    assert [v[0] for v in _values('{"train_batch_size": 8, "train_micro_batch_size_per_gpu": |}', path="ds.json")] == [
        '"auto"'
    ]
    assert _values('{"train_batch_size": 8, "no_such_key": |}', path="ds.json") == []
    assert _values('{"train_batch_size": 8, "zero_optimization": |}', path="ds.json") == []  # a section: no values
