"""How fmt's text edits land: an inline comment after a changed value stays where it was (the
spaces before ``#`` absorb the change in length), and never for an edit that spans lines."""

from __future__ import annotations

import pytest

from accelconf import formats
from accelconf.accelerate.fmt import apply_edits, format_text
from accelconf.errors import InputError


def test_a_longer_value_takes_its_room_from_the_spaces_before_the_comment():
    assert apply_edits("a: no    # c\nb: 1", [(3, 5, "'no'")]) == "a: 'no'  # c\nb: 1"
    assert apply_edits("a: no # c", [(3, 5, "'no'")]) == "a: 'no' # c"  # at least one space stays


def test_a_shorter_value_gives_its_room_to_the_spaces_before_the_comment():
    assert apply_edits("a: xxxx # c", [(3, 7, "x")]) == "a: x    # c"


def test_without_a_comment_only_the_value_changes():
    assert apply_edits("a: no    \nb: 1", [(3, 5, "'no'")]) == "a: 'no'    \nb: 1"
    assert apply_edits("a: no    x", [(3, 5, "'no'")]) == "a: 'no'    x"


def test_an_edit_that_adds_lines_keeps_the_comment_spacing():
    out = format_text("dynamo_backend: inductor   # fast\nnum_processes: 1\n")
    assert out == "dynamo_config:\n  dynamo_backend: INDUCTOR   # fast\nnum_processes: 1\n"
    assert apply_edits("k: v  # c", [(3, 4, "x\n  y")]) == "k: x\n  y  # c"


def test_an_edit_that_removes_a_line_break_keeps_the_comment_spacing():
    assert apply_edits("k: 'a\n b'  # c", [(3, 9, "'ab'")]) == "k: 'ab'  # c"


def test_edits_apply_from_the_end_so_offsets_stay_valid():
    text = "a: x\nb: y\nc: z\n"
    edits = [(3, 4, "xxx"), (13, 14, "z"), (8, 9, "")]
    assert apply_edits(text, edits) == "a: xxx\nb: \nc: z\n"
    assert apply_edits(text, list(reversed(edits))) == "a: xxx\nb: \nc: z\n"


def test_format_text_errors_name_the_path_or_a_placeholder():
    with pytest.raises(InputError, match=r"^<text>:2:1: invalid YAML"):
        format_text("a: [1,")
    with pytest.raises(InputError, match=r"^bad\.yaml:2:1: invalid YAML"):
        format_text("a: [1,", "bad.yaml")


def test_write_passes_the_target_version_on():
    cfg = formats.read("distributed_type: FSDP\nnum_processes: 2\nfsdp_config:\n  fsdp_version: 2\n")
    old, _ = formats.write(cfg, "cli", version="0.25")
    new, _ = formats.write(cfg, "cli")
    assert old != new and formats.write(cfg, "cli", version="0.25")[0] == old


# (text, path, target accelerate version, expected output): each row pins one condition of
# fmt's rewrites, so loosening or dropping it changes an answer here.
REWRITES = [
    # TPU was renamed XLA in accelerate 0.28: older targets keep TPU
    ("distributed_type: TPU\nnum_processes: 8\n", "c.yaml", "0.27", "distributed_type: TPU\nnum_processes: 8\n"),
    ("distributed_type: TPU\nnum_processes: 8\n", "c.yaml", "1.15", "distributed_type: XLA\nnum_processes: 8\n"),
    # integer sharding strategies are the only spelling before 0.26
    (
        "fsdp_config:\n  fsdp_sharding_strategy: 1\ndistributed_type: FSDP\n",
        "c.yaml",
        "0.25",
        "fsdp_config:\n  fsdp_sharding_strategy: 1\ndistributed_type: FSDP\n",
    ),
    (
        "fsdp_config:\n  fsdp_sharding_strategy: 1\ndistributed_type: FSDP\n",
        "c.yaml",
        "0.26",
        "fsdp_config:\n  fsdp_sharding_strategy: FULL_SHARD\ndistributed_type: FSDP\n",
    ),
    # of the type fixes only gpu_ids' is safe; a quoted number elsewhere is left alone
    ("gpu_ids: 0\nnum_processes: 1\n", "c.yaml", None, "gpu_ids: '0'\nnum_processes: 1\n"),
    (
        "num_processes: '2'\ndistributed_type: MULTI_GPU\n",
        "c.yaml",
        None,
        "num_processes: '2'\ndistributed_type: MULTI_GPU\n",
    ),
    # legacy fp16: only a plain `fp16: true`, only when mixed_precision is not set, only in block YAML
    ("fp16: true\nnum_processes: 1\n", "c.yaml", None, "mixed_precision: fp16\nnum_processes: 1\n"),
    ("fp16: false\nnum_processes: 1\n", "c.yaml", None, "fp16: false\nnum_processes: 1\n"),
    ("fp16: [true]\n", "c.yaml", None, "fp16: [true]\n"),
    ("fp16: true\nmixed_precision: bf16\n", "c.yaml", None, "fp16: true\nmixed_precision: bf16\n"),
    ("{fp16: true, num_processes: 1}", "c.yaml", None, "{fp16: true, num_processes: 1}"),
    ('{"fp16": true, "num_processes": 1}', "c.json", None, '{"fp16": true, "num_processes": 1}'),
    # top-level dynamo_backend moves into dynamo_config, indented under it, unless that exists
    (
        "  fp16: true\n  dynamo_backend: eager\n",
        "c.yaml",
        None,
        "  mixed_precision: fp16\n  dynamo_config:\n    dynamo_backend: EAGER\n",
    ),
    ("dynamo_backend: 'NO'\n", "c.yaml", None, "dynamo_config: {}\n"),
    ("dynamo_backend: inductor\ndynamo_config: {}\n", "c.yaml", None, "dynamo_backend: INDUCTOR\ndynamo_config: {}\n"),
    ("dynamo_backend: [a]\n", "c.yaml", None, "dynamo_backend: [a]\n"),
    ("dynamo_backend: 3\n", "c.yaml", None, "dynamo_backend: 3\n"),
]


@pytest.mark.parametrize("text,path,version,want", REWRITES)
def test_fmt_rewrites_only_what_accelerate_reads_the_same(text, path, version, want):
    assert format_text(text, path, version=version) == want


def test_an_edit_at_the_end_of_the_text_before_trailing_spaces():
    assert apply_edits("a: no  ", [(3, 5, "'no'")]) == "a: 'no'  "


def test_fmt_says_why_it_rewrites_legacy_keys():
    from accelconf.accelerate.fmt import format_document
    from accelconf.text.document import load_text

    res = format_document(load_text("fp16: true\ndynamo_backend: eager\n", "c.yaml"))
    assert res.changes == [
        "fp16: legacy key, written as mixed_precision: fp16",
        "dynamo_backend: legacy top-level key, moved into dynamo_config",
    ]
