"""The parts of the semantic diff one by one: reading a side (:mod:`accelconf.diff.files`), the
values a diff returns (:mod:`accelconf.diff.result`), and the comparisons that tests/unit/diff/test_diff.py
covers only through whole data-directory cases.

Written from the survivors of ``make mutants`` (bench/MUTANTS.md): each test pins one behaviour
that a small change to the code would otherwise leave unnoticed.
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import pytest

from accelconf.errors import InputError

semdiff = importlib.import_module("accelconf.diff")
result = importlib.import_module("accelconf.diff.result")

DS_A = '{"zero_optimization": {"stage": 2}, "train_micro_batch_size_per_gpu": 4}\n'
DS_B = '{"zero_optimization": {"stage": 3}, "train_micro_batch_size_per_gpu": 4}\n'


# -- diff/files: reading one side ---------------------------------------------------------------


def test_read_side_reads_the_text_given_not_the_file(tmp_path: Path) -> None:
    p = tmp_path / "a.yaml"
    p.write_text("mixed_precision: fp16\n", encoding="utf-8")
    on_disk, given = semdiff.read_side(p), semdiff.read_side(p, text="mixed_precision: bf16\n")
    assert on_disk.path == given.path == str(p)
    assert not on_disk.is_deepspeed and not given.is_deepspeed
    r = semdiff.diff_sides(on_disk, given)
    assert [(c.key, c.a, c.b) for c in r.changes] == [("mixed_precision", "fp16", "bf16")]
    assert (r.a_source, r.b_source) == (str(p), str(p))


def test_a_deepspeed_text_needs_no_file_and_keeps_its_name() -> None:
    a = semdiff.read_side("nowhere/a.json", text=DS_A)
    b = semdiff.read_side("nowhere/b.json", text=DS_B)
    assert a.is_deepspeed and a.config is None and a.path == "nowhere/a.json"
    assert a.document.path == "nowhere/a.json"
    r = semdiff.diff_sides(a, b)
    assert r.mode == "deepspeed" and (r.a_source, r.b_source) == ("nowhere/a.json", "nowhere/b.json")
    assert [(c.key, c.a, c.b) for c in r.changes] == [("zero_optimization.stage", 2, 3)]


@pytest.mark.parametrize(
    "name,text,what",
    [
        ("empty.yaml", "", "empty"),
        ("comments.yml", "# nothing here\n", "empty"),
        ("SHOUT.YML", "- 1\n", "a list, not a mapping of settings"),
        ("list.json", "[1, 2]\n", "a list, not a mapping of settings"),
        ("number.yaml", "3\n", "a int, not a mapping of settings"),
        ("text.json", '"fp16"\n', "a str, not a mapping of settings"),
    ],
)
def test_a_yaml_or_json_side_that_is_no_mapping_is_refused(name: str, text: str, what: str) -> None:
    with pytest.raises(InputError) as err:
        semdiff.read_side(f"dir/{name}", text=text)
    assert (err.value.message, err.value.path) == (f"the document is {what}", f"dir/{name}")


def test_an_empty_env_file_is_an_empty_config_not_an_error() -> None:
    side = semdiff.read_side("train.env", text="")
    assert side.config is not None and side.config.entries == {} and side.config.source == "train.env"


def test_a_file_side_that_is_not_utf8_names_its_path(tmp_path: Path) -> None:
    p = tmp_path / "bad.env"
    p.write_bytes(b"ACCELERATE_MIXED_PRECISION=\xff\xfe\xfa\n")
    with pytest.raises(InputError) as err:
        semdiff.read_side(p)
    assert err.value.path == str(p)


def test_read_side_reads_in_the_version_given() -> None:
    # --fsdp_version is a flag from accelerate 1.6: an older release's reader says it does not exist.
    text = "--use_fsdp --fsdp_version 2 --num_processes 2"
    old = semdiff.read_side("run.sh", "1.5", text=text).config
    new = semdiff.read_side("run.sh", "1.15", text=text).config
    assert any("does not exist in accelerate 1.5" in n.message for n in old.notes)
    assert not any("does not exist" in n.message for n in new.notes)


def test_diff_files_passes_the_version_to_the_diff(tmp_path: Path) -> None:
    # fsdp_use_orig_params: the launcher default was false until 0.24, true from 0.25.
    a, b = tmp_path / "a.yaml", tmp_path / "b.yaml"
    a.write_text("distributed_type: FSDP\nfsdp_config: {fsdp_use_orig_params: true}\n", encoding="utf-8")
    b.write_text("distributed_type: FSDP\nfsdp_config: {}\n", encoding="utf-8")
    old = semdiff.diff_files(a, b, version="0.24")
    assert [c.kind for c in old.changes] == ["removed"] and old.version == "0.24"
    assert semdiff.diff_files(a, b, version="0.25").equivalent
    assert semdiff.diff_files(a, b, version="0.24", ignore=["fsdp_use_orig_params"]).equivalent


def test_diff_sides_of_deepspeed_sides_honours_ignore() -> None:
    a = semdiff.read_side("a.json", text=DS_A)
    b = semdiff.read_side("b.json", text=DS_B)
    assert not semdiff.diff_sides(a, b).equivalent
    assert semdiff.diff_sides(a, b, ignore=["zero_optimization.stage"]).equivalent


def test_a_mixed_diff_gets_the_version_and_ignore() -> None:
    acc = semdiff.read_side("acc.yaml", text="distributed_type: DEEPSPEED\ndeepspeed_config:\n  zero_stage: 2\n")
    ds = semdiff.read_side("ds.json", text=DS_B)
    r = semdiff.diff_sides(acc, ds, version="1.4")
    assert r.mode == "accelerate-deepspeed" and r.version == "1.4"
    assert "deepspeed_config.zero_stage" in {c.key for c in r.changes}
    ignored = semdiff.diff_sides(acc, ds, version="1.4", ignore=["zero_stage"])
    assert "deepspeed_config.zero_stage" not in {c.key for c in ignored.changes}
    assert semdiff.diff_sides(ds, acc).mode == "accelerate-deepspeed"


# -- diff/result: the values a diff returns -----------------------------------------------------


def test_a_change_to_json_keeps_one_sided_key_names_and_makes_values_json() -> None:
    class Odd:
        def __str__(self) -> str:
            return "odd"

    c = result.Change("fsdp_config.x", ("a", (1, float("inf"))), float("nan"), "changed", 3, 0, a_key="fsdp_config.y")
    assert c.to_json() == {
        "key": "fsdp_config.x",
        "a": ["a", [1, "inf"]],
        "b": "nan",
        "kind": "changed",
        "a_line": 3,
        "b_line": 0,
        "a_key": "fsdp_config.y",
        "b_key": "",
    }
    assert json.loads(json.dumps(result.Change("k", Odd(), {"x": [1]}, "changed").to_json()))["a"] == "odd"
    assert "a_key" not in result.Change("k", 1, 2, "changed").to_json()


def test_a_note_joins_only_what_is_said() -> None:
    c = result.Change("k", 1, 2, "changed", remark=result.Note.of("first"))
    assert c.noted("").note == "first" and c.noted(result.Note()).remark == result.Note.of("first")
    assert c.noted("second").note == "first; second"
    assert result.Change("k", 1, 2, "changed").noted("only").note == "only"
    assert result.Note.of(result.SideRef.A, " and ", result.SideRef.B).then("x").mirrored().parts == (
        result.SideRef.B,
        " and ",
        result.SideRef.A,
        "; x",
    )


# -- diff/consequences: what a difference does --------------------------------------------------

cq = importlib.import_module("accelconf.diff.consequences")
SHARD = "fsdp_config.fsdp_sharding_strategy"


@pytest.mark.parametrize(
    "a,b,note",
    [
        (
            "SHARD_GRAD_OP",
            "FULL_SHARD",
            "fsdp_sharding_strategy SHARD_GRAD_OP -> FULL_SHARD: more "
            "sharding, less memory per GPU and more communication",
        ),
        (
            "FULL_SHARD",
            "NO_SHARD",
            "fsdp_sharding_strategy FULL_SHARD -> NO_SHARD: less sharding, more memory per GPU and less communication",
        ),
        (
            "FULL_SHARD",
            "HYBRID_SHARD",
            "hybrid sharding shards within a node and replicates across nodes: "
            "less inter-node traffic, more memory per GPU on several nodes",
        ),
        (
            "HYBRID_SHARD_ZERO2",
            "SHARD_GRAD_OP",
            "hybrid sharding shards within a node and replicates across nodes: "
            "less inter-node traffic, more memory per GPU on several nodes",
        ),
        ("FULL_SHARD", True, ""),  # one level: no note
        (None, "HYBRID_SHARD", ""),  # a level only one side has: no note, no comparison
        ("FULL_SHARD", None, ""),
        ("FULL_SHARD", "SOMETHING_ELSE", ""),
    ],
)
def test_sharding_notes(a: object, b: object, note: str) -> None:
    assert cq._sharding_note(SHARD, a, b) == note


def test_zero_stage_notes_compare_stages_as_numbers() -> None:
    assert cq._sharding_note("deepspeed_config.zero_stage", 2, 3) == (
        "zero_stage 2 -> 3: more sharding, less memory per GPU and more communication"
    )
    assert cq._sharding_note("zero_optimization.stage", 3, "1") == (
        "zero_optimization.stage 3 -> 1: less sharding, more memory per GPU and less communication"
    )


@pytest.mark.parametrize(
    "a,b,note",
    [
        (None, "cpu", "offload_optimizer_device (unset) -> cpu: less GPU memory, slower steps (host transfers)"),
        ("cpu", "none", "offload_optimizer_device cpu -> none: more GPU memory, faster steps"),
        ("nvme", False, "offload_optimizer_device nvme -> false: more GPU memory, faster steps"),
        ("cpu", "nvme", ""),
        (None, "none", ""),
        (False, None, ""),
    ],
)
def test_offload_notes(a: object, b: object, note: str) -> None:
    assert cq._offload_note("deepspeed_config.offload_optimizer_device", a, b) == note


def test_precision_notes() -> None:
    assert cq.precision_note("fp16", "fp16") == ""
    assert (
        cq.precision_note("no", "auto") == "precision no -> auto: numerics change, losses are not directly comparable"
    )
    assert cq.precision_note(None, "bf16") == (
        "precision (unset) -> bf16: numerics change, losses are not directly comparable; "
        "bf16 autocast, fp32's range without a loss scaler (needs compute capability 8.0+ on NVIDIA)"
    )


def test_short_drops_only_an_accelerate_section() -> None:
    assert cq._short("fsdp_config.fsdp_offload_params") == "fsdp_offload_params"
    assert cq._short("fsdp_config.a.b") == "a.b"
    assert cq._short("zero_optimization.offload_param.device") == "zero_optimization.offload_param.device"
    assert cq._short("mixed_precision") == "mixed_precision"


def test_batch_note_shows_fractions_and_whole_numbers() -> None:
    assert cq.batch_note((2.0, 1.0, 4.0), (1.0, 1.0, 4.0)) == (
        "effective global batch size (processes x gradient accumulation "
        "x micro batch): 2 x 1 x 4 = 8 -> 1 x 1 x 4 = 4, x0.5"
    )
    assert cq.batch_note((3.0, 1.0, None), (2.0, 1.0, None)) == (
        "effective global batch size (processes x gradient accumulation x micro batch): 3 x 1 x ? -> 2 x 1 x ?, "
        "x0.6667 for the same micro batch"
    )
    assert cq._fmt_num(2.5) == "2.5" and cq._fmt_num(4.0) == "4" and cq._fmt_num(None) == "?"
    assert cq._fmt_num(1000000.0) == "1000000"  # not 1e+06


# -- diff/result: comparing values and ignore patterns; diff/consequences: batch factors ---------------


def test_same_keeps_booleans_apart_from_numbers_and_lists_equal_to_tuples() -> None:
    same = result.same
    assert same(True, True) and not same(True, False) and not same(True, 1) and not same(1, True)
    assert not same(False, 0) and not same(0, False) and not same("true", True)
    assert same(5e8, 500000000) and same(2, 2.0) and not same(2, 3)
    assert same([1, 2], (1, 2)) and same((True,), [True]) and not same([1, 2], [1]) and not same([True], [1])
    assert not same("1", 1) and not same([1], 1) and same("a", "a") and same(None, None) and not same(None, 0)


@pytest.mark.parametrize(
    "path,patterns,hit",
    [
        ("fsdp_config.fsdp_offload_params", ["fsdp_offload_params"], True),  # the key alone
        ("fsdp_config.fsdp_offload_params", ["fsdp_config"], True),  # the section
        ("fsdp_config.fsdp_offload_params", ["fsdp_config.fsdp_offload_params"], True),
        ("fsdp_config.fsdp_offload_params", ["*offload*"], True),
        ("fsdp_config.fsdp_offload_params", ["fsdp_config.*"], True),
        ("fsdp_config.fsdp_offload_params", ["offload"], False),
        ("fsdp_config.fsdp_offload_params", ["config"], False),
        ("zero_optimization.offload_param.device", ["device"], True),
        ("zero_optimization.offload_param.device", ["offload_param.device"], False),
        ("zero_optimization.offload_param.device", ["zero_optimization"], True),
        ("zero_optimization.offload_param.device", ["offload_param"], False),
        ("mixed_precision", ["mixed_precision"], True),
        ("mixed_precision", [""], False),
        ("mixed_precision", ["Mixed_Precision"], False),
        ("mixed_precision", ["XXXX"], False),
        ("mixed_precision", [], False),
    ],
)
def test_ignore_patterns(path: str, patterns: list[str], hit: bool) -> None:
    assert result.matches(path, patterns) is hit


def _cfg(text: str):
    from accelconf import formats

    return formats.read(text, fmt="yaml", path="x.yaml")


@pytest.mark.parametrize(
    "text,factors",
    [
        ("distributed_type: 'NO'\n", (1.0, None, None)),
        ("distributed_type: MULTI_GPU\n", (None, None, None)),
        ("distributed_type: 'NO'\nnum_processes: 3\n", (3.0, None, None)),
        (
            "num_processes: 8\nparallelism_config:\n  parallelism_config_tp_size: 2\n  parallelism_config_cp_size: 2\n",
            (2.0, None, None),
        ),
        ("num_processes: 8\nparallelism_config:\n  parallelism_config_sp_size: 4\n", (2.0, None, None)),
        ("num_processes: 8\nparallelism_config:\n  parallelism_config_tp_size: 1\n", (8.0, None, None)),
        (
            "num_processes: 6\nparallelism_config:\n  parallelism_config_tp_size: 4\n",
            (6.0, None, None),
        ),  # 4 does not divide 6
        (
            "num_processes: 8\nmegatron_lm_config:\n  megatron_lm_tp_degree: 2\n  megatron_lm_pp_degree: 2\n",
            (2.0, None, None),
        ),
        ("num_processes: 8\nmegatron_lm_config:\n  megatron_lm_pp_degree: 4\n", (2.0, None, None)),
        ("num_processes: 4\ndeepspeed_config:\n  gradient_accumulation_steps: 8\n", (4.0, 8.0, None)),
    ],
)
def test_batch_factors(text: str, factors: tuple) -> None:
    assert cq.batch_factors(_cfg(text)) == factors


def test_batch_factors_of_a_deepspeed_json() -> None:
    cfg = _cfg("num_processes: 4\ndeepspeed_config:\n  gradient_accumulation_steps: 8\n")
    assert cq.batch_factors(cfg, {"gradient_accumulation_steps": 2, "train_micro_batch_size_per_gpu": 16}) == (
        4.0,
        2.0,
        16.0,
    )
    assert cq.batch_factors(cfg, {"gradient_accumulation_steps": "auto", "train_micro_batch_size_per_gpu": "auto"}) == (
        4.0,
        8.0,
        None,
    )
    assert cq.batch_factors(None) == (None, None, None)
    assert (
        cq._num(True) is None
        and cq._num(None) is None
        and cq._num("2") == 2.0
        and cq._num("x") is None
        and cq._num([1]) is None
    )


def test_batch_note_when_only_one_side_knows_a_factor() -> None:
    assert cq.batch_note((4.0, None, None), (4.0, None, None)) == ""
    assert cq.batch_note((4.0, 2.0, None), (None, 2.0, None)) == ""  # what both know is the same
    assert cq.batch_note((4.0, 1.0, 8.0), (4.0, 2.0, None)) == (
        "effective global batch size (processes x gradient accumulation x micro batch): 4 x 1 x 8 = 32 -> 4 x 2 x ?, "
        "x2 for the same micro batch"
    )
    assert cq.batch_note((4.0, 2.0, 8.0), (4.0, 0.0, 8.0)) == (
        "effective global batch size (processes x gradient accumulation "
        "x micro batch): 4 x 2 x 8 = 64 -> 4 x 0 x 8 = 0, x0"
    )
    assert cq.batch_note((0.0, 1.0, 1.0), (2.0, 1.0, 1.0)) == (
        "effective global batch size (processes x gradient accumulation "
        "x micro batch): 0 x 1 x 1 = 0 -> 2 x 1 x 1 = 2, x2"
    )
