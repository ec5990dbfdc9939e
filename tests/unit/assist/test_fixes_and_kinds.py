"""The title of each quick fix an editor lists, and which documents the language server takes as
its own (the modeline, then the recogniser)."""

from __future__ import annotations

import pytest

from accelconf.assist.detect import MODELINE_LINES, document_kind, modeline
from accelconf.assist.fixes import fix_title
from accelconf.findings import Finding

TEXT = "distributed_type: MULTI_GPU\nmixed_precison: fp16\nnum_processes: 2\n"


def _at(word: str) -> tuple[int, int]:
    start = TEXT.index(word)
    return start, start + len(word)


@pytest.mark.parametrize(
    "rule, key, edits, title",
    [
        # a removal names the key, from the finding or else from the removed text
        ("no-effect", "fsdp_config.num_processes", [(*_at("num_processes: 2\n"), "")], "Remove `num_processes`"),
        ("no-effect", "", [(*_at("num_processes: 2\n"), "")], "Remove `num_processes`"),
        ("no-effect", "a.b.renamed", [(*_at("num_processes: 2\n"), "")], "Remove `renamed`"),  # the key's last part
        # the same value quoted
        ("yaml-bool-value", "mixed_precison", [(*_at("fp16"), "'fp16'")], "Quote as 'fp16'"),
        ("yaml-bool-value", "mixed_precison", [(*_at("fp16"), '"fp16"')], 'Quote as "fp16"'),
        # only quotes are stripped to compare: an X at either end is part of the value
        ("r", "x", [(*_at("MULTI_GPU"), "'MULTI_GPU'")], "Quote as 'MULTI_GPU'"),
        ("r", "x", [(*_at("MULTI_GPU"), "MULTI_GPUX")], "Change value `MULTI_GPU` to `MULTI_GPUX`"),
        # a key renamed, and a value changed
        (
            "unknown-key",
            "mixed_precison",
            [(*_at("mixed_precison"), "mixed_precision")],
            "Did you mean `mixed_precision`? Rename `mixed_precison`",
        ),
        (
            "unknown-nested-key",
            "x.mixed_precison",
            [(*_at("mixed_precison"), "mixed_precision")],
            "Did you mean `mixed_precision`? Rename `mixed_precison`",
        ),
        (
            "unprefixed-key",
            "x",
            [(*_at("mixed_precison"), "mixed_precision")],
            "Change key `mixed_precison` to `mixed_precision`",
        ),
        (
            "enum-case",
            "distributed_type",
            [(*_at("MULTI_GPU"), "multi_gpu")],
            "Change value `MULTI_GPU` to `multi_gpu`",
        ),
    ],
)
def test_one_edit_is_titled_by_what_it_does(rule: str, key: str, edits: list, title: str) -> None:
    assert fix_title(Finding(rule, "warning", "m", key, fix=tuple(edits)), TEXT) == title


def test_a_requoted_value_and_a_removed_entry_without_a_key() -> None:
    text = "a: 'fp16'\nurl: http://host:80\nx: XL\n"
    at = text.index("'fp16'")
    assert fix_title(Finding("r", "info", "m", fix=((at, at + 6, '"fp16"'),)), text) == 'Quote as "fp16"'
    at = text.index("XL")
    assert fix_title(Finding("r", "info", "m", fix=((at, at + 2, "'XL'"),)), text) == "Quote as 'XL'"
    at = text.index("url")
    # the name is what comes before the first colon of the removed line
    assert fix_title(Finding("r", "info", "m", fix=((at, text.index("x: XL"), ""),)), text) == "Remove `url`"


def test_the_sixty_character_limit_of_a_title_and_a_change_across_lines() -> None:
    for width, titled in ((60, True), (61, False)):
        text = "k: " + "v" * width + "\n"
        edit = ((3, 3 + width, "w"),)
        title = fix_title(Finding("r", "info", "m", fix=edit, suggestion="s"), text)
        assert title == (f"Change value `{'v' * width}` to `w`" if titled else "Fix: s"), width
    across = ((TEXT.index("fp16"), TEXT.index("num_processes") + 3, "x"),)
    assert fix_title(Finding("r", "info", "m", fix=across, suggestion="s"), TEXT) == "Fix: s"


def test_long_or_several_edits_fall_back_to_the_suggestion_or_the_rule() -> None:
    long = "x" * 61
    one = ((*_at("fp16"), long),)
    assert fix_title(Finding("r", "error", "m", fix=one, suggestion="use bf16"), TEXT) == "Fix: use bf16"
    assert fix_title(Finding("r", "error", "m", fix=one), TEXT) == "Fix r"
    sixty = ((*_at("fp16"), "x" * 60),)
    assert fix_title(Finding("r", "error", "m", fix=sixty), TEXT) == f"Change value `fp16` to `{'x' * 60}`"
    lines = ((*_at("fp16"), "a\nb"),)
    assert fix_title(Finding("r", "error", "m", fix=lines), TEXT) == "Fix r"
    two = ((*_at("fp16"), "bf16"), (*_at("MULTI_GPU"), "FSDP"))
    assert fix_title(Finding("r", "error", "m", fix=two, suggestion="s"), TEXT) == "Fix: s"
    assert fix_title(Finding("r", "error", "m", suggestion="s"), TEXT) == ""  # no edit, no menu entry


@pytest.mark.parametrize(
    "text, mode",
    [
        ("# accelconf: enable\nx: 1\n", "enable"),
        ("// accelconf: disable\n{}", "disable"),
        ("  #accelconf:disable  trailing words\n", "disable"),
        ("\ufeff# accelconf: enable\n", "enable"),
        ("a: 1\n" * (MODELINE_LINES - 1) + "# accelconf: disable\n", "disable"),  # the last line that counts
        ("a: 1\n" * MODELINE_LINES + "# accelconf: disable\n", None),  # one line too late
        ("# accelconf: enabled\n", None),
        ("# accelconf: maybe\n", None),
        ("x: 1  # accelconf: disable\n", None),  # a comment after a key is not the modeline
        ("X# accelconf: enable\n", None),  # only a byte-order mark is skipped before it
        ("# accelconf: disable\n# accelconf: enable\n", "disable"),  # the first one
    ],
)
def test_the_modeline(text: str, mode: str | None) -> None:
    assert modeline(text) == mode


ACCEL = "compute_environment: LOCAL_MACHINE\ndistributed_type: MULTI_GPU\nnum_processes: 2\n"
DS = '{"zero_optimization": {"stage": 2}, "train_micro_batch_size_per_gpu": "auto"}\n'
OTHER = "name: CI\non: push\njobs: {}\n"


def test_document_kind_by_content_and_the_modeline() -> None:
    assert document_kind("train.yaml", ACCEL) == "accelerate"
    assert document_kind("anything.json", DS) == "deepspeed"
    assert document_kind("accelerate-tests.yml", OTHER) is None
    assert document_kind("c.yaml", "# accelconf: disable\n" + ACCEL) is None
    assert document_kind("c.yaml", "# accelconf: enable\n" + OTHER) == "accelerate"
    assert document_kind("c.json", "// accelconf: enable\n" + DS) == "deepspeed"  # its own kind, not forced
    # only YAML and JSON names count: another suffix is read by content alone
    assert document_kind("notes.txt", ACCEL) == "accelerate"
    assert document_kind("launch.sh", ACCEL) == "accelerate"  # not read as a launch script
    # the YAML and JSON suffixes tell a flow mapping's YAML from broken JSON
    flow = "{distributed_type: NO, num_processes: 1}"
    assert document_kind("c.yaml", flow) == document_kind("c.YML", flow) == "accelerate"
    assert document_kind("c.json", flow) is None
    assert document_kind("ds.JSON", DS) == "deepspeed"


def test_the_outline_of_lists_block_scalars_and_quoted_values() -> None:
    from accelconf.assist.symbols import symbols
    from accelconf.text.document import load_text

    text = (
        "gpu_ids: '0,1'\n"  # 0
        "fp8_config:\n"  # 1
        "  override_linear_precision: [false, true]\n"  # 2
        "note: |\n"  # 3
        "  first line\n"  # 4
        "  second\n"  # 5
        "long: " + "x" * 100 + "\n"  # 6
        "empty:\n"  # 7
        "items:\n"  # 8
        "  - {a: 1}\n"  # 9
        "  - plain\n"  # 10
    )
    out = symbols(load_text(text, "c.yaml"))
    assert [(s.name, s.kind, s.detail) for s in out] == [
        ("gpu_ids", "key", "'0,1'"),
        ("fp8_config", "section", ""),
        ("note", "key", "first line"),
        ("long", "key", "x" * 80),
        ("empty", "key", ""),
        ("items", "list", ""),
    ]
    gpu, fp8, note, _, empty, items = out
    assert (gpu.line, gpu.col, gpu.end_line, gpu.end_col) == (0, 0, 0, 14)
    assert (gpu.sel_line, gpu.sel_col, gpu.sel_end_line, gpu.sel_end_col) == (0, 0, 0, 7)
    [override] = fp8.children
    assert (override.name, override.kind, override.line, override.col) == ("override_linear_precision", "list", 2, 2)
    assert [(c.name, c.kind, c.detail, c.line, c.col) for c in override.children] == [
        ("[0]", "item", "false", 2, 30),
        ("[1]", "item", "true", 2, 37),
    ]
    first = override.children[0]
    assert (first.end_line, first.end_col, first.sel_end_line, first.sel_end_col) == (2, 35, 2, 30)
    assert note.line == 3 and note.end_line >= 5  # the entry spans its block
    # a key with no value: its null ends after the colon
    assert (empty.end_line, empty.end_col, empty.sel_end_line, empty.sel_end_col) == (7, 6, 7, 5)
    mapping, plain = items.children
    assert (mapping.kind, mapping.detail, [c.name for c in mapping.children]) == ("item", "", ["a"])
    assert (plain.detail, plain.line, plain.col) == ("plain", 10, 4)


def test_the_outline_of_a_document_that_does_not_parse_or_nests_too_deep() -> None:
    from accelconf.assist.symbols import symbols
    from accelconf.errors import InputError
    from accelconf.text.document import load_text

    try:
        doc = load_text("a: [1,\n", "c.yaml")
    except InputError:
        doc = None
    assert doc is None or symbols(doc) == []
    deep = "".join("  " * i + f"k{i}:\n" for i in range(25)) + "  " * 25 + "leaf: 1\n"
    out = symbols(load_text(deep, "c.yaml"))
    depth, cur = 0, out
    while cur:
        depth, cur = depth + 1, cur[0].children
    assert depth == 21  # the outline stops below 20 levels; the document itself is fine
    assert symbols(load_text('{"a": {"b": 1}}', "c.json"))[0].children[0].name == "b"


def test_the_outline_shows_a_block_scalar_by_its_first_line() -> None:
    from accelconf.assist.symbols import symbols
    from accelconf.text.document import load_text

    text = "folded: >\n  " + "w" * 90 + "\n  more\nempty: |\nitems:\n  - " + "i" * 90 + "\n"
    folded, empty, items = symbols(load_text(text, "c.yaml"))
    assert (folded.name, folded.detail) == ("folded", "w" * 80)
    assert (empty.name, empty.detail) == ("empty", "")
    assert items.children[0].detail == "i" * 80
