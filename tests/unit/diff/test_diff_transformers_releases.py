"""``accelconf diff --transformers-version A..B``: one arguments file (or two) under two transformers
releases, by what runs; and ``what_runs`` of one file in releases that build the FSDP plugin in
different ways. (The release matrix, tests/oracle/test_transformers_runs_matrix.py, proves both against
each release's own Trainer init.)"""

from __future__ import annotations

import json

import pytest

from accelconf.trainer import releases
from accelconf.trainer.argvalues import ArgValues
from accelconf.trainer.runs import what_runs

ARGS = """output_dir: out
fsdp: full_shard auto_wrap
fsdp_config:
  transformer_layer_cls_to_wrap: LlamaDecoderLayer
bf16: true
evaluation_strategy: steps
"""


@pytest.fixture
def args_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "args.yaml").write_text(ARGS)
    (tmp_path / "plain.yaml").write_text("output_dir: out\nbf16: true\n")
    (tmp_path / "accel.yaml").write_text("distributed_type: FSDP\nmixed_precision: bf16\n")
    return tmp_path


def _by_key(out: str) -> dict[str, dict]:
    return {c["key"]: c for c in json.loads(out)}


def test_one_file_across_two_releases_names_removed_fields_changed_defaults_and_the_fsdp_version(args_file, cli):
    r = cli("diff", "args.yaml", "--transformers-version", "4.46..5.24", "--format", "json")
    assert r.code == 1, r.err
    got = _by_key(r.out)
    gone = got["arguments.evaluation_strategy"]
    assert gone["kind"] == "removed" and gone["a"] == "steps" and "refuses the file" in gone["note"]
    assert got["fsdp_plugin.fsdp_version"]["a"] == 1 and got["fsdp_plugin.fsdp_version"]["b"] == 2
    assert "defaults to 1 in transformers 4.46, to 2 in 5.24" in got["fsdp_plugin.fsdp_version"]["note"]
    optim = got["defaults.optim"]
    assert (optim["a"], optim["b"]) == (
        releases.fields("4.46")["optim"].default,
        releases.fields("5.24")["optim"].default,
    )
    assert "arguments.bf16" not in got  # set in both, taken by both
    assert not any(k.startswith("defaults.") and got[k]["kind"] != "changed" for k in got)


def test_the_same_release_on_both_ends_is_equivalent(args_file, cli):
    r = cli("diff", "args.yaml", "--transformers-version", "5.10..5.24")
    assert "evaluation_strategy" not in r.out  # 5.10 already refuses it, and so does 5.24: not a difference
    r = cli("diff", "plain.yaml", "--transformers-version", "5.23..5.24")
    assert r.code == 0 and "equivalent" in r.out, r.out


def test_two_files_under_two_releases_and_the_text_header_names_both(args_file, cli):
    r = cli("diff", "plain.yaml", "args.yaml", "--transformers-version", "5.24..4.46")
    assert r.code == 1
    assert "(transformers 5.24 -> 4.46: fields, defaults and what the Accelerator is built with)" in r.out
    assert "fields the file sets" in r.out and "+ evaluation_strategy: (absent)  ->  steps" in r.out
    # between two files the other file is what lacks a field: a rename or a missing field is said
    # only where the release really lacks it (5.24 has fsdp and fsdp_config)
    assert "transformers 5.24 has no field evaluation_strategy (removed in 4.51)" in r.out
    assert "has no field fsdp" not in r.out and "its replacement" not in r.out


def test_a_release_range_needs_an_arguments_file_and_known_releases(args_file, cli):
    r = cli("diff", "accel.yaml", "--transformers-version", "5.0..5.24")
    assert r.code == 2 and "Trainer arguments" in r.err
    r = cli("diff", "args.yaml", "--transformers-version", "3.0..5.24")
    assert r.code == 2 and "unknown transformers version" in r.err
    r = cli("diff", "args.yaml")
    assert r.code == 2 and "one file with --transformers-version A..B" in r.err


def test_a_refusal_in_one_release_only_is_a_difference_at_its_stage(args_file, cli):
    (args_file / "hybrid.yaml").write_text("output_dir: out\nfsdp: hybrid_shard\n")
    r = cli("diff", "hybrid.yaml", "--transformers-version", "5.9..5.10", "--format", "json")
    got = _by_key(r.out)
    assert got["raises.construction"]["kind"] == "added", got  # FSDP2 by default from 5.10: FSDP1 options refused
    assert "fsdp_plugin.sharding_strategy" in got and got["fsdp_plugin.sharding_strategy"]["b"] is None


def _fields(version: str, args: dict, env: dict | None = None) -> dict:
    runs = what_runs(ArgValues(args, version=version), env={k: (v, "shell", k) for k, v in (env or {}).items()})
    assert not runs.raises, [r.message for r in runs.raises]
    assert runs.fsdp is not None
    return {k: v.value for k, v in runs.fsdp.items()}


def test_transformers_4_writes_variables_that_override_the_launchers():
    env = {"FSDP_SHARDING_STRATEGY": "SHARD_GRAD_OP", "FSDP_BACKWARD_PREFETCH": "BACKWARD_PRE"}
    old = _fields("4.57", {"fsdp": "full_shard", "fsdp_config": {"version": 2}}, env)
    assert old["fsdp_version"] == 1  # fsdp_config's version is not read before transformers 5
    assert old["sharding_strategy"] == "FULL_SHARD" and old["backward_prefetch"] is None
    new = _fields("5.24", {"fsdp": "full_shard", "fsdp_config": {"version": 1}}, env)
    assert new["sharding_strategy"] == "SHARD_GRAD_OP"  # 5.10 on: the fsdp option is no sharding kwarg for FSDP1


def test_an_inline_fsdp_config_keeps_its_prefix_before_4_52():
    args = {"fsdp": "full_shard auto_wrap", "fsdp_config": {"fsdp_transformer_layer_cls_to_wrap": "LlamaDecoderLayer"}}
    assert _fields("4.51", args)["transformer_cls_names_to_wrap"] is None
    assert _fields("4.52", args)["transformer_cls_names_to_wrap"] == ["LlamaDecoderLayer"]


def test_the_trainer_sets_limit_all_gathers_as_written_before_5_10():
    args = {"fsdp": "full_shard", "fsdp_config": {"limit_all_gathers": "false"}}
    assert _fields("5.9", args)["limit_all_gathers"] == "false"  # setattr of the written value
    assert (
        _fields("5.10", {**args, "fsdp_config": {"limit_all_gathers": "false", "version": 1}})["limit_all_gathers"]
        is False
    )


def test_every_runs_fact_covers_every_release_once():
    for name in releases.runs_facts():
        for minor in releases.RELEASES:
            releases.runs_fact(name, minor)  # exactly one segment holds each release (StopIteration otherwise)
