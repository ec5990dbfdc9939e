"""Editor help without a server: cursor context, completion, hover, symbols, document kinds."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from accelconf import assist
from accelconf.findings import Finding
from accelconf.text.document import load_text
from tests.conftest import DATA, ROOT, need_corpus

EXAMPLES = ROOT / "examples"

CONFIG = """\
# training config
compute_environment: LOCAL_MACHINE
distributed_type: FSDP
mixed_precision: no
num_processes: 8
fsdp_config:
  fsdp_cpu_offload: true  # offload
  fsdp_sharding_strategy: FULL_SHARD
"""


def cursor(text: str) -> tuple[str, int, int]:
    """Text with a ``|`` marking the cursor -> (text without it, line, col)."""
    at = text.index("|")
    before = text[:at]
    return text[:at] + text[at + 1 :], before.count("\n"), at - (before.rfind("\n") + 1)


def labels(marked: str, **kw: object) -> list[str]:
    text, line, col = cursor(marked)
    return [c.label for c in assist.complete(text, line, col, **kw)]  # type: ignore[arg-type]


# -- context ----------------------------------------------------------------------------------------


def test_context_key_inside_section() -> None:
    text, line, col = cursor(CONFIG.replace("  fsdp_cpu", "  fsd|p_cpu"))
    w = assist.context_at(text, line, col)
    assert (w.path, w.part, w.key, w.prefix, w.start, w.end) == (
        ("fsdp_config",),
        "key",
        "fsdp_cpu_offload",
        "fsd",
        2,
        18,
    )
    assert w.present == {"fsdp_sharding_strategy"} and w.has_colon


def test_context_value_and_comment() -> None:
    text, line, col = cursor(CONFIG.replace("precision: no", "precision: n|o"))
    w = assist.context_at(text, line, col)
    assert (w.path, w.part, w.key, w.prefix, w.start, w.end, w.value_text) == (
        (),
        "value",
        "mixed_precision",
        "n",
        17,
        19,
        "no",
    )
    assert "mixed_precision" not in w.present and "fsdp_config" in w.present
    text, line, col = cursor(CONFIG.replace("# offload", "# off|load"))
    assert assist.context_at(text, line, col).part == "none"


def test_context_on_broken_yaml() -> None:
    text, line, col = cursor("distributed_type: [FSDP\nfsdp_config:\n  fsdp_version: 2\n  |\nmixed_precision: 'no\n")
    w = assist.context_at(text, line, col)
    assert (w.path, w.part, w.present) == (("fsdp_config",), "key", frozenset({"fsdp_version"}))


def test_context_json() -> None:
    text, line, col = cursor('{"fsdp_config": {"fsdp_version": 2, "fsdp_o|"}, "mixed_precision": "no"}')
    w = assist.context_at(text, line, col)
    assert (w.format, w.path, w.part, w.prefix, w.quote) == ("json", ("fsdp_config",), "key", "fsdp_o", '"')
    assert w.present == {"fsdp_version"}
    text, line, col = cursor('{"zero_optimization": {"stage": 3|, "x": 1}}')
    w = assist.context_at(text, line, col)
    assert (w.path, w.part, w.key, w.value_text) == (("zero_optimization",), "value", "stage", "3")


# -- completion -------------------------------------------------------------------------------------


def test_keys_in_section_exclude_present_and_other_sections() -> None:
    got = labels(CONFIG + "  |\n")
    assert "fsdp_offload_params" in got and "fsdp_sharding_strategy" not in got and "mixed_precision" not in got
    top = labels(CONFIG + "|")
    assert "mixed_precision" not in top and "use_cpu" in top and "fsdp_config block" not in top
    assert "deepspeed_config block" in top


def test_key_candidates_carry_docs_and_insert_text() -> None:
    text, line, col = cursor(CONFIG + "  fsdp_off|\n")
    (cand,) = [c for c in assist.complete(text, line, col) if c.label == "fsdp_offload_params"]
    assert cand.insert == "fsdp_offload_params: " and (cand.start, cand.end) == (2, 10)
    assert "Offload parameters" in cand.doc and "`FSDP_OFFLOAD_PARAMS`" in cand.doc


def test_version_filters_keys() -> None:
    assert "fsdp_version" in labels("fsdp_config:\n  |\n", version="1.15")
    assert "fsdp_version" not in labels("fsdp_config:\n  |\n", version="1.5")


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("mixed_precision: |", ["'no'", "fp16", "bf16", "fp8"]),
        ("distributed_type: |", ["'NO'", "MULTI_CPU"]),
        ("fsdp_config:\n  fsdp_version: |", ["2", "1"][::-1]),
        ("fsdp_config:\n  fsdp_offload_params: |", ["true", "false"]),
    ],
)
def test_enum_values_quoted_for_yaml_1_1(line: str, expected: list[str]) -> None:
    assert labels(line)[: len(expected)] == expected


def test_value_right_after_colon_gets_a_space() -> None:
    text, line, col = cursor("mixed_precision:|")
    cands = assist.complete(text, line, col)
    assert cands[0].insert == " 'no'" and cands[0].filter == "no"


def test_snippet_blocks() -> None:
    text, line, col = cursor("distributed_type: FSDP\nfs|")
    snip = next(c for c in assist.complete(text, line, col) if c.label == "fsdp_config block")
    assert snip.snippet is not None and "${1|2,1|}" in snip.snippet
    assert "fsdp_version: 2" in snip.insert and load_text(snip.insert).data["fsdp_config"]["fsdp_version"] == 2
    old = next(c for c in assist.complete(text, line, col, version="1.5") if c.label == "fsdp_config block")
    assert "fsdp_sharding_strategy" in old.insert and "fsdp_version" not in old.insert


def test_json_completion() -> None:
    got = labels('{"distributed_type": "FSDP", "mixed_precision": |}', path="accelerate.json")
    assert got[:2] == ['"no"', '"fp16"']
    text, line, col = cursor('{"distributed_type": "FSDP", "|"}')
    cands = assist.complete(text, line, col, path="accelerate.json")
    assert next(c for c in cands if c.label == "mixed_precision").insert == '"mixed_precision": '


def test_deepspeed_completion() -> None:
    text = '{\n  "train_batch_size": 16,\n  "zero_optimization": {"stage": 3, "|"}\n}'
    got = labels(text, path="ds_config.json")
    assert "overlap_comm" in got and "stage" not in got
    assert labels('{"train_batch_size": 8, "zero_optimization": {"stage": |}}', path="ds.json")[:4] == [
        "0",
        "1",
        "2",
        "3",
    ]


# -- hover ------------------------------------------------------------------------------------------


def hover(marked: str, **kw: object) -> str | None:
    text, line, col = cursor(marked)
    return assist.hover(text, line, col, **kw)  # type: ignore[arg-type]


def test_hover_key() -> None:
    md = hover(CONFIG.replace("  fsdp_cpu_offload", "  fsdp_offl|oad_params"))
    assert md is not None
    for part in (
        "**fsdp_offload_params**",
        "`FSDP_OFFLOAD_PARAMS`",
        "`--fsdp_offload_params`",
        "FullyShardedDataParallelPlugin.cpu_offload",
        "Effective value:** `true`",
        "Default:** `false`",
    ):
        assert part in md


@pytest.mark.parametrize("q", ['"', "'"])
def test_a_quoted_key_is_the_key_for_hover_and_completion(q: str) -> None:
    """YAML lets a key be quoted (a JSON-minded writer does it): the quotes are not part of its name."""
    plain = hover(CONFIG.replace("  fsdp_cpu_offload", "  fsdp_offl|oad_params"))
    assert hover(CONFIG.replace("  fsdp_cpu_offload", f"  {q}fsdp_offl|oad_params{q}")) == plain
    top = hover(CONFIG.replace("num_processes", f"{q}num_pro|cesses{q}"))
    assert top is not None and top.startswith("**num_processes**") and "Effective value:** `8`" in top
    # completing inside the quotes replaces the word between them and leaves the quotes alone
    text, line, col = cursor(CONFIG.replace("num_processes: 8", f"{q}num_proc|{q}: 8"))
    found = {c.label: c for c in assist.complete(text, line, col)}
    cand = found["num_processes"]
    assert (cand.start, cand.end, cand.insert) == (1, 9, "num_processes")
    # a quote that is not the key's own still leaves nothing to say
    assert hover(CONFIG.replace("num_processes: 8", f"x {q}num_pro|cesses{q}: 8")) is None


def test_hover_defaults_that_differ_and_version_range() -> None:
    md = hover("fsdp_config:\n  fsdp_use_orig|_params: true\n")
    assert md is not None and "(launcher, key absent)" in md and "(plugin, env var unset)" in md
    md = hover("fsdp_config:\n  fsdp_vers|ion: 2\n")
    assert md is not None and "accelerate 1.6+" in md and "Allowed:** `1`, `2`" in md


def test_hover_effective_value_of_bare_no() -> None:
    md = hover(CONFIG.replace("precision: no", "precision: n|o"))
    # accelerate 1.15 crashes on the boolean: hover says so instead of naming an effective value
    assert (
        md is not None
        and "Effective value:** none: unquoted `no` is the YAML boolean False" in md
        and "Full precision" not in md
    )
    md = assist.hover("mixed_precision: no\n", 0, 18, version="0.30")
    assert md is not None and "YAML 1.1 boolean" in md  # before 0.34 the loader turns it into 'no'
    md = hover("mixed_precision: 'n|o'\n")
    assert md is not None and md.startswith("`no`: Full precision")


def test_hover_unknown_and_comment() -> None:
    assert hover(CONFIG.replace("  fsdp_cpu", "  fsdp_c|pu")) is None
    assert hover("# a comm|ent\n") is None


def test_hover_default_when_absent_is_not_claimed_for_written_value() -> None:
    md = hover("num_mach|ines: 2\n")
    assert md is not None and "Effective value:** `2`" in md


def test_hover_deepspeed() -> None:
    md = hover('{"train_batch_size": 8, "zero_optimization": {"st|age": 3}}', path="ds.json")
    assert md is not None and "zero_optimization.stage" in md and "Effective value:** `3`" in md


# -- symbols, kinds, titles -------------------------------------------------------------------------


def test_symbols() -> None:
    syms = assist.symbols(load_text(CONFIG))
    assert [s.name for s in syms] == [
        "compute_environment",
        "distributed_type",
        "mixed_precision",
        "num_processes",
        "fsdp_config",
    ]
    fsdp = syms[-1]
    assert fsdp.kind == "section" and [c.name for c in fsdp.children] == ["fsdp_cpu_offload", "fsdp_sharding_strategy"]
    assert (fsdp.sel_line, fsdp.sel_col, fsdp.sel_end_col) == (5, 0, 11) and fsdp.end_line == 8
    assert syms[2].detail == "no"


@pytest.mark.parametrize(
    ("path", "text", "kind"),
    [
        ("x.yaml", "distributed_type: FSDP\n", "accelerate"),
        ("x.yaml", "fsdp_config:\n  fsdp_version: [\n", "accelerate"),
        # By content, not by name: a name that looks like a config decides nothing.
        ("/a/default_config.yaml", "foo: 1\n", None),
        ("/a/my-accelerate-fsdp.yml", "", None),
        ("/a/notes.yaml", "distributed_type: NO\nnum_processes: 1\n", "accelerate"),
        # A marker among mostly foreign keys is a training script's own config, not accelerate's.
        ("x.yaml", "distributed_type: ddp\nlr: 1\nepochs: 3\nmodel: x\n", None),
        ("x.yaml", "# accelconf: enable\nfoo: 1\n", "accelerate"),
        ("x.yaml", "\n\n\n\n#accelconf:enable\nfoo: 1\n", "accelerate"),
        ("x.yaml", "\n\n\n\n\n# accelconf: enable\nfoo: 1\n", None),  # past MODELINE_LINES
        ("x.yaml", "# accelconf: enabled\nfoo: 1\n", None),
        ("default_config.yaml", "# accelconf: disable\ndistributed_type: FSDP\n", None),
        ("x.json", '{"distributed_type": "NO"}', "accelerate"),
        ("x.json", '// accelconf: enable\n{"foo": 1}', "accelerate"),
        ("ds.json", '{"train_batch_size": 8, "zero_optimization": {"stage": 2}}', "deepspeed"),
        ("ds.json", '{"train_batch_size": 8, "zero_optimization": {', "deepspeed"),
        ("compose.yaml", "services:\n  web: {}\n", None),
        ("package.json", '{"name": "x"}', None),
    ],
)
def test_document_kind(path: str, text: str, kind: str | None) -> None:
    assert assist.document_kind(path, text) == kind


def test_modeline_lines_is_five() -> None:
    # The editors page and the editor clients' comments say 5; change them together.
    assert assist.MODELINE_LINES == 5
    assert assist.modeline("\n" * 4 + "# accelconf: disable\n") == "disable"
    assert assist.modeline("\n" * 5 + "# accelconf: disable\n") is None
    for doc in (
        "docs/editors.md",
        "editors/vscode/README.md",
        "editors/nvim/README.md",
        "editors/emacs/accelconf-eglot.el",
    ):
        assert f"first {assist.MODELINE_LINES} lines" in (ROOT / doc).read_text(encoding="utf-8"), doc


RECOGNIZE = DATA / "recognize"


def _recognize_cases() -> list[object]:
    out: list[object] = []
    for f in sorted((RECOGNIZE / "other").iterdir()):
        out.append(pytest.param(f, None, id=f"other/{f.name}"))
    for f in sorted((RECOGNIZE / "config").iterdir()):
        out.append(pytest.param(f, "deepspeed" if f.suffix == ".json" else "accelerate", id=f"config/{f.name}"))
    for f in sorted(EXAMPLES.iterdir()):
        if f.is_file():
            out.append(pytest.param(f, "deepspeed" if f.suffix == ".json" else "accelerate", id=f"examples/{f.name}"))
    return out


@pytest.mark.parametrize(("path", "kind"), _recognize_cases())
def test_recognition_by_content(path: Path, kind: str | None) -> None:
    text = path.read_text(encoding="utf-8")
    assert assist.document_kind(str(path), text) == kind
    # The same text under a neutral name: the name never decides.
    assert assist.document_kind("doc" + path.suffix, text) == kind


def test_recognition_on_the_corpus() -> None:
    wrong = {}
    for kind in ("accelerate", "deepspeed"):
        for f in need_corpus(kind):
            got = assist.document_kind(str(f), f.read_text(encoding="utf-8-sig"))
            if got != kind:
                wrong[f.name] = got
    assert not wrong


def test_fix_titles() -> None:
    text = CONFIG
    start = text.index("fsdp_cpu_offload")
    rename = Finding(
        "unknown-nested-key",
        "warning",
        "m",
        "fsdp_config.fsdp_cpu_offload",
        fix=((start, start + 16, "fsdp_offload_params"),),
    )
    assert assist.fix_title(rename, text) == "Did you mean `fsdp_offload_params`? Rename `fsdp_cpu_offload`"
    at = text.index("no\n")
    assert (
        assist.fix_title(Finding("yaml-bool-value", "error", "m", fix=((at, at + 2, "'no'"),)), text) == "Quote as 'no'"
    )
    line = text.index("num_processes")
    assert (
        assist.fix_title(Finding("no-effect", "warning", "m", "num_processes", fix=((line, line + 17, ""),)), text)
        == "Remove `num_processes`"
    )
    assert assist.fix_title(Finding("x", "info", "m"), text) == ""


@pytest.mark.parametrize(
    ("value", "written"),
    [
        ("no", "'no'"),
        ("NO", "'NO'"),
        ("fp16", "fp16"),
        (True, "true"),
        (2, "2"),
        ("0,1", "0,1"),
        ("1", "'1'"),
        ("a: b", "'a: b'"),
        ("", "''"),
        ("it's", "it's"),
        ("'x", "'''x'"),
    ],
)
def test_yaml_scalar(value: object, written: str) -> None:
    assert assist.yaml_scalar(value) == written


# -- robustness -------------------------------------------------------------------------------------

FRAGMENTS = st.sampled_from(
    [
        "fsdp_config:",
        "  ",
        "\n",
        ":",
        "- ",
        "mixed_precision: no",
        "'",
        '"',
        "{",
        "}",
        "[",
        "#",
        "fsdp_version: 2",
        "\t",
        "\r\n",
        "é",
        "😀",
        "distributed_type",
        ",",
        "  fsdp_",
        "\x00",
    ]
)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(FRAGMENTS | st.text(max_size=5), max_size=30),
    st.integers(0, 40),
    st.integers(0, 60),
    st.sampled_from(["x.yaml", "x.json", "ds.json"]),
)
def test_never_raises(parts: list[str], line: int, col: int, path: str) -> None:
    text = "".join(parts)
    assist.context_at(text, line, col, path=path)
    assist.complete(text, line, col, path=path)
    assist.hover(text, line, col, path=path)
    assist.document_kind(path, text)
