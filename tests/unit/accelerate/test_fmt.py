"""fmt and migrate: spelling normalized, comments and bytes elsewhere kept, meaning preserved."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from accelconf.accelerate import registry
from accelconf.accelerate.fmt import format_text
from accelconf.accelerate.migrate import migrate_text
from accelconf.accelerate.model import canonical, from_document
from accelconf.text.document import load_text

LEGACY = """\
# top comment
compute_environment: LOCAL_MACHINE\r
distributed_type: FSDP   # trailing comment
fp16: true
dynamo_backend: inductor
fsdp_config:
  sharding_strategy: 2            # legacy integer, unprefixed
  fsdp_auto_wrap_policy: transformer_based_wrap
  fsdp_backward_prefetch: backward_pre
num_processes: 4"""


def meaning(text: str) -> dict:
    cfg = from_document(load_text(text))
    return {p: canonical(e.setting, e.value) for p, e in cfg.entries.items()}


def test_fmt_normalizes_spelling_and_keeps_everything_else():
    out = format_text(LEGACY)
    assert "fsdp_sharding_strategy: SHARD_GRAD_OP" in out
    assert "fsdp_auto_wrap_policy: TRANSFORMER_BASED_WRAP" in out
    assert "fsdp_backward_prefetch: BACKWARD_PRE" in out
    assert "mixed_precision: fp16" in out and "fp16: true" not in out
    assert "dynamo_config:\r\n  dynamo_backend: INDUCTOR" in out  # the file's newline style
    assert out.startswith("# top comment\ncompute_environment: LOCAL_MACHINE\r\n")
    assert "distributed_type: FSDP   # trailing comment" in out
    assert "# legacy integer, unprefixed" in out
    assert not out.endswith("\n")  # the missing final newline stays missing
    assert meaning(out) == meaning(LEGACY)


def test_fmt_repairs_values_accelerate_crashes_on():
    out = format_text("distributed_type: multi_gpu\nnum_processes: 2\nmixed_precision: no\ngpu_ids: 0\n")
    assert out == "distributed_type: MULTI_GPU\nnum_processes: 2\nmixed_precision: 'no'\ngpu_ids: '0'\n"


def test_fmt_keeps_integers_for_old_accelerate():
    text = "distributed_type: FSDP\nnum_processes: 2\nfsdp_config:\n  fsdp_sharding_strategy: 1\n"
    assert format_text(text, version="0.25") == text
    assert "FULL_SHARD" in format_text(text, version="1.15")


def test_fmt_on_json_writes_json():
    text = (
        '{"distributed_type": "FSDP", "num_processes": 2, "fsdp_config": '
        '{"fsdp_sharding_strategy": 1, "offload_params": true}}'
    )
    out = format_text(text, "c.json")
    assert json.loads(out)["fsdp_config"] == {"fsdp_sharding_strategy": "FULL_SHARD", "fsdp_offload_params": True}


def test_canonical_file_comes_back_byte_identical():
    text = "compute_environment: LOCAL_MACHINE\ndistributed_type: 'NO'\nmixed_precision: 'no'\n"
    assert format_text(text) == text


_VALUES = {
    "mixed_precision": ["'no'", "no", "BF16", "fp16"],
    "distributed_type": ["FSDP", "fsdp", "'NO'", "MULTI_GPU"],
    "fsdp_config.fsdp_sharding_strategy": ["1", "2", "full_shard", "SHARD_GRAD_OP"],
    "fsdp_config.offload_params": ["true", "false"],
    "fsdp_config.fsdp_state_dict_type": ["sharded_state_dict", "3"],
    "dynamo_config.dynamo_backend": ["inductor", "NO"],
    "num_processes": ["2", "8"],
}


@settings(max_examples=100, deadline=None)
@given(
    st.fixed_dictionaries({}, optional={k: st.sampled_from(v) for k, v in _VALUES.items()}),
    st.sampled_from(["\n", "\r\n"]),
    st.booleans(),
)
def test_fmt_is_idempotent_and_preserves_meaning(choice, newline, comments):
    lines, nested = [], {}
    for k, v in choice.items():
        if "." in k:
            sec, key = k.split(".")
            nested.setdefault(sec, []).append(f"  {key}: {v}" + ("  # c" if comments else ""))
        else:
            lines.append(f"{k}: {v}" + ("  # c" if comments else ""))
    for sec, body in nested.items():
        lines.append(f"{sec}:")
        lines.extend(body)
    text = newline.join(lines) + newline
    once = format_text(text)
    assert format_text(once) == once
    before, after = meaning(text), meaning(once)
    for path, value in before.items():
        if path in ("mixed_precision", "distributed_type") and isinstance(value, bool):
            continue  # repaired on purpose: the boolean is what accelerate crashes on
        assert after.get(path) == value, (path, text, once)
    if comments:
        assert once.count("# c") == text.count("# c")


def test_migrate_to_fsdp2_keeps_comments_and_reports():
    text = (
        "distributed_type: FSDP\nnum_processes: 4\nfsdp_config:\n  # how to shard\n"
        "  fsdp_sharding_strategy: HYBRID_SHARD  # across nodes\n  fsdp_use_orig_params: true\n"
        "  fsdp_offload_params: false\n  fsdp_cpu_offlaod: true\n"
    )
    out, notes = migrate_text(text)
    assert "  # how to shard\n  fsdp_version: 2\n  fsdp_reshard_after_forward: true" in out
    assert "# across nodes" in out and "fsdp_use_orig_params" not in out
    assert any("loses meaning" in n for n in notes)
    assert any(n.startswith("removed fsdp_use_orig_params") for n in notes)
    assert any("fsdp_cpu_offlaod" in n and "fsdp_offload_params" in n for n in notes)
    from accelconf.accelerate.validate import validate_document

    assert not [f for f in validate_document(load_text(out)) if f.severity == "error"]
    again, notes2 = migrate_text(out)
    assert again == out and "already FSDP2" in notes2[0]


def test_registry_enums_are_complete_for_fmt():
    s = registry.get("fsdp_config", "fsdp_sharding_strategy")
    assert (
        s is not None
        and s.canonical_value(5) == "HYBRID_SHARD_ZERO2"
        and s.canonical_value("hybrid_shard") == "HYBRID_SHARD"
    )


def test_fmt_keeps_aligned_comments_aligned():
    """examples/mistakes.yaml: FULL_SHARD is longer than `1` plus its padding; the whole group of
    aligned comments moves with it instead of one comment leaving the column."""
    from pathlib import Path

    from accelconf.accelerate.fmt import _comment_column

    text = (Path(__file__).resolve().parents[3] / "examples" / "mistakes.yaml").read_text()
    out = format_text(text)
    before = {_comment_column(ln) for ln in text.splitlines()} - {None}
    after = {_comment_column(ln) for ln in out.splitlines()} - {None}
    assert len(before) == 1 and len(after) == 1, out
    assert "fsdp_sharding_strategy: FULL_SHARD #" in out
    assert format_text(out) == out
    # a shorter value keeps the column; unaligned comments and CRLF lines are left as they were
    small = "distributed_type: multi_gpu   # a\nnum_processes: 2              # b\n"
    assert format_text(small) == "distributed_type: MULTI_GPU   # a\nnum_processes: 2              # b\n"
    crlf = (
        "distributed_type: FSDP  # a\r\nnum_processes: 2        # b\r\nfsdp_config:\r\n"
        "  fsdp_sharding_strategy: 1 # c\r\n"
    )
    got = format_text(crlf)
    assert got.count("\r\n") == 4 and len({_comment_column(ln) for ln in got.split("\r\n")} - {None}) == 2
