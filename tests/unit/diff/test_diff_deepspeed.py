"""The DeepSpeed diffs (:mod:`accelconf.diff.deepspeed`) part by part: reading a DeepSpeed JSON flat
(``bfloat16``, ``"zero_optimization": true``, aliases), its precision, the key-by-key diff of two
DeepSpeed JSON documents (kinds, values, DeepSpeed defaults, lines, locations, ignore patterns,
the notes on batch size and precision), a DeepSpeed JSON read as the accelerate settings it fixes,
and an accelerate config against a DeepSpeed JSON (both orders, the accelerate version, defaults
of the DeepSpeed side, keys only one side expresses, the processes of the batch size).

Written from the survivors of ``make mutants`` (bench/MUTANTS.md): the assertions compare whole
rows and exact notes, so that a small change to the code changes one of them.
"""

from __future__ import annotations

import importlib
from typing import Any

import pytest

from accelconf.accelerate.model import Config, from_document
from accelconf.text.document import Document, load_text

ds = importlib.import_module("accelconf.diff.deepspeed")
semdiff = importlib.import_module("accelconf.diff")

VERSION = "1.15"
AUTO_NOTE = '"auto" is filled by the HF Trainer or accelerate at prepare time'
BF16_NOTE = (
    "precision fp16 -> bf16: numerics change, losses are not directly comparable; bf16 autocast, fp32's "
    "range without a loss scaler (needs compute capability 8.0+ on NVIDIA)"
)
FP16_NOTE = (
    "precision bf16 -> fp16: numerics change, losses are not directly comparable; fp16 autocast with a "
    "dynamic loss scaler (overflowing steps are skipped)"
)
NO_TBS = "train_micro_batch_size_per_gpu: no accelerate key (accelerate derives it from the dataloader batch size)"
NO_WCB = "wall_clock_breakdown: no accelerate key; keep a deepspeed_config_file to use it"


def _rows(r: Any) -> list[tuple]:
    return [(c.key, c.a, c.b, c.kind, c.a_line, c.b_line) for c in r.changes]


def _where(r: Any) -> list[tuple]:
    return [(c.key, c.a_where, c.b_where, c.note) for c in r.changes]


# -- flatten_deepspeed --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "data",
    [
        {"bf16": {"enabled": True}, "bfloat16": {"enabled": False}, "zero_optimization": {"stage": 2}},
        {"bfloat16": {"enabled": False}, "bf16": {"enabled": True}, "zero_optimization": {"stage": 2}},
    ],
)
def test_bf16_wins_over_its_alias_bfloat16_in_either_order(data: dict) -> None:
    assert ds.flatten_deepspeed(data) == {
        "bf16.enabled": (True, ("bf16", "enabled")),
        "zero_optimization.stage": (2, ("zero_optimization", "stage")),
    }


def test_bfloat16_alone_is_read_as_bf16_and_keeps_its_written_path() -> None:
    assert ds.flatten_deepspeed({"bfloat16": {"enabled": True}, "steps_per_print": 5}) == {
        "bf16.enabled": (True, ("bfloat16", "enabled")),
        "steps_per_print": (5, ("steps_per_print",)),
    }


def test_zero_optimization_true_is_stage_1_and_false_or_other_trues_stay_as_written() -> None:
    assert ds.flatten_deepspeed({"zero_optimization": True, "fp16": {"enabled": True}}) == {
        "zero_optimization.stage": (1, ("zero_optimization",)),
        "fp16.enabled": (True, ("fp16", "enabled")),
    }
    assert ds.flatten_deepspeed({"zero_optimization": False, "wall_clock_breakdown": True}) == {
        "zero_optimization": (False, ("zero_optimization",)),
        "wall_clock_breakdown": (True, ("wall_clock_breakdown",)),
    }


def test_nested_paths_lists_and_empty_sections_are_leaves() -> None:
    data = {"optimizer": {"type": "AdamW", "params": {"betas": [0.9, 0.99], "lr": 1e-5}}, "comms_logger": {}}
    assert ds.flatten_deepspeed(data) == {
        "optimizer.type": ("AdamW", ("optimizer", "type")),
        "optimizer.params.betas": ([0.9, 0.99], ("optimizer", "params", "betas")),
        "optimizer.params.lr": (1e-5, ("optimizer", "params", "lr")),
        "comms_logger": ({}, ("comms_logger",)),
    }
    assert ds.flatten_deepspeed([{"fp16": {"enabled": True}}]) == {}
    assert ds.flatten_deepspeed(None) == {}


def test_an_alias_takes_the_canonical_path_unless_that_path_is_written_too() -> None:
    assert ds.flatten_deepspeed({"zero_optimization": {"prefetch_bucket_size": 9}}) == {
        "zero_optimization.stage3_prefetch_bucket_size": (9, ("zero_optimization", "prefetch_bucket_size"))
    }
    both = {"zero_optimization": {"stage3_prefetch_bucket_size": 7, "prefetch_bucket_size": 9}}
    assert ds.flatten_deepspeed(both) == {
        "zero_optimization.stage3_prefetch_bucket_size": (7, ("zero_optimization", "stage3_prefetch_bucket_size")),
        "zero_optimization.prefetch_bucket_size": (9, ("zero_optimization", "prefetch_bucket_size")),
    }


# -- canonical values, order, precision ---------------------------------------------------------


def test_only_device_values_are_compared_without_case() -> None:
    assert ds._ds_canon("zero_optimization.offload_param.device", "CPU") == "cpu"
    assert ds._ds_canon("optimizer.type", "AdamW") == "AdamW"
    assert ds._ds_canon("zero_optimization.offload_param.device", 3) == 3
    assert ds._ds_order({"b": 1, "a": 2}, {"c": 3, "a": 4}) == ["b", "a", "c"]


@pytest.mark.parametrize(
    "flat,precision",
    [
        ({}, "no"),
        ({"fp16.enabled": False, "bf16.enabled": False}, "no"),
        ({"fp16.enabled": True}, "fp16"),
        ({"fp16.enabled": True, "bf16.enabled": True}, "fp16"),  # DeepSpeed refuses both; fp16 is read first
        ({"bf16.enabled": True}, "bf16"),
        ({"fp16.enabled": False, "bf16.enabled": True}, "bf16"),
        ({"fp16.enabled": "auto", "bf16.enabled": True}, "auto"),
        ({"bf16.enabled": "auto"}, "auto"),
        # DeepSpeed's ``enabled`` is a pydantic bool in lax mode: 1, "true", "yes" are true, 0 false
        ({"fp16.enabled": 1}, "fp16"),
        ({"bf16.enabled": "true"}, "bf16"),
        ({"fp16.enabled": 0, "bf16.enabled": "yes"}, "bf16"),
        ({"fp16.enabled": "maybe"}, "no"),
    ],
)
def test_precision_of_a_flat_deepspeed_config(flat: dict, precision: str) -> None:
    assert ds._ds_precision_of(flat) == precision


# -- diff_deepspeed -----------------------------------------------------------------------------

DS_A = """{
  "train_micro_batch_size_per_gpu": 4,
  "gradient_accumulation_steps": "auto",
  "fp16": {"enabled": true},
  "zero_optimization": {
    "stage": 2,
    "offload_optimizer": {"device": "CPU"}
  },
  "steps_per_print": 10
}
"""
DS_B = """{
  "zero_optimization": {
    "stage": 3,
    "offload_optimizer": {"device": "cpu"},
    "offload_param": {"device": "cpu"}
  },
  "bf16": {"enabled": true},
  "train_micro_batch_size_per_gpu": 8,
  "gradient_accumulation_steps": 2,
  "wall_clock_breakdown": true
}
"""


def _ds_pair() -> tuple[Document, Document]:
    return load_text(DS_A, "cfg/a.json"), load_text(DS_B, "cfg/b.json")


def test_diff_deepspeed_rows_kinds_defaults_and_lines() -> None:
    a, b = _ds_pair()
    r = ds.diff_deepspeed(a, b)
    assert (r.a_source, r.b_source, r.mode, r.version) == ("cfg/a.json", "cfg/b.json", "deepspeed", "")
    # A's keys in A's order, then B's; an absent key is DeepSpeed's default where every version has
    # the same one (steps_per_print's changed in DeepSpeed 0.15.2: None); "CPU" and "cpu" are one device.
    assert _rows(r) == [
        ("train_micro_batch_size_per_gpu", 4, 8, "changed", 2, 8),
        ("gradient_accumulation_steps", "auto", 2, "changed", 3, 9),
        ("fp16.enabled", True, False, "removed", 4, 0),
        ("zero_optimization.stage", 2, 3, "changed", 6, 3),
        ("steps_per_print", 10, None, "removed", 9, 0),
        ("zero_optimization.offload_param.device", "none", "cpu", "added", 0, 5),
        ("bf16.enabled", False, True, "added", 0, 7),
        ("wall_clock_breakdown", False, True, "added", 0, 10),
    ]
    assert _where(r) == [
        ("train_micro_batch_size_per_gpu", "cfg/a.json:2", "cfg/b.json:8", ""),
        ("gradient_accumulation_steps", "cfg/a.json:3", "cfg/b.json:9", AUTO_NOTE),
        ("fp16.enabled", "cfg/a.json:4", "default", ""),
        ("zero_optimization.stage", "cfg/a.json:6", "cfg/b.json:3", ""),
        ("steps_per_print", "cfg/a.json:9", "default", ""),
        ("zero_optimization.offload_param.device", "default", "cfg/b.json:5", ""),
        ("bf16.enabled", "default", "cfg/b.json:7", ""),
        ("wall_clock_breakdown", "default", "cfg/b.json:10", ""),
    ]
    assert r.notes == [
        "zero_optimization.stage 2 -> 3: more sharding, less memory per GPU and more communication",
        "zero_optimization.offload_param.device none -> cpu: less GPU memory, slower steps (host transfers)",
        # A's accumulation is "auto" (no number): only the micro batch is in the ratio
        "effective global batch size (processes x gradient accumulation x micro batch): "
        "? x ? x 4 -> ? x 2 x 8, x2 for the same processes and accumulation",
        BF16_NOTE,
    ]


def test_diff_deepspeed_the_other_way_round_mirrors() -> None:
    a, b = _ds_pair()
    ab, ba = ds.diff_deepspeed(a, b), ds.diff_deepspeed(b, a)
    assert sorted(_rows(ba)) == sorted(
        (k, y, x, {"added": "removed", "removed": "added"}.get(kind, kind), lb, la)
        for k, x, y, kind, la, lb in _rows(ab)
    )
    assert ba.notes[-2:] == [
        "effective global batch size (processes x gradient accumulation x micro batch): "
        "? x 2 x 8 -> ? x ? x 4, x0.5 for the same processes and accumulation",
        FP16_NOTE,
    ]


def test_diff_deepspeed_ignore_patterns_skip_keys_and_their_notes_but_not_the_rest() -> None:
    a, b = _ds_pair()
    r = ds.diff_deepspeed(a, b, ignore=["train_micro_batch_size_per_gpu", "zero_optimization", "*_breakdown"])
    assert _rows(r) == [
        ("gradient_accumulation_steps", "auto", 2, "changed", 3, 9),
        ("fp16.enabled", True, False, "removed", 4, 0),
        ("steps_per_print", 10, None, "removed", 9, 0),
        ("bf16.enabled", False, True, "added", 0, 7),
    ]
    # the batch size and the precision are read from the whole files, not from the kept changes
    assert r.notes == [
        "effective global batch size (processes x gradient accumulation x micro batch): "
        "? x ? x 4 -> ? x 2 x 8, x2 for the same processes and accumulation",
        BF16_NOTE,
    ]


def test_diff_deepspeed_defaults_and_equal_values_are_no_change() -> None:
    a = load_text('{\n  "zero_optimization": {"stage": 0},\n  "gradient_clipping": 1.0\n}\n', "a.json")
    b = load_text('{\n  "gradient_clipping": 1,\n  "fp16": {"enabled": false}\n}\n', "b.json")
    r = ds.diff_deepspeed(a, b)
    assert r.changes == [] and r.notes == [] and r.equivalent


def test_diff_deepspeed_a_key_only_b_sets_has_a_default_a_side() -> None:
    a = load_text('{"train_micro_batch_size_per_gpu": 2}\n', "a.json")
    b = load_text('{\n  "train_micro_batch_size_per_gpu": 2,\n  "zero_optimization": {"stage": 3}\n}\n', "b.json")
    r = ds.diff_deepspeed(a, b)
    assert _rows(r) == [("zero_optimization.stage", 0, 3, "added", 0, 3)]
    assert _where(r) == [("zero_optimization.stage", "default", "b.json:3", "")]
    assert r.notes == ["zero_optimization.stage 0 -> 3: more sharding, less memory per GPU and more communication"]


@pytest.mark.parametrize(
    "pa,pb,notes",
    [
        ('"fp16": {"enabled": true}', '"fp16": {"enabled": true}', []),
        ('"fp16": {"enabled": "auto"}', '"bf16": {"enabled": true}', []),
        ('"bf16": {"enabled": true}', '"fp16": {"enabled": "auto"}', []),
        ('"fp16": {"enabled": true}', '"bf16": {"enabled": true}', [BF16_NOTE]),
        ('"bf16": {"enabled": true}', '"fp16": {"enabled": true}', [FP16_NOTE]),
        (
            '"bf16": {"enabled": true}',
            '"steps_per_print": 10',
            [
                "precision bf16 -> no: numerics change, losses are not directly comparable; "
                "full fp32: about twice the activation memory of 16-bit, slower matmuls"
            ],
        ),
    ],
)
def test_a_precision_note_when_the_precisions_differ_and_neither_is_auto(pa: str, pb: str, notes: list[str]) -> None:
    a = load_text(f'{{"gradient_clipping": 1.0, {pa}}}', "a.json")
    b = load_text(f'{{"gradient_clipping": 0.5, {pb}}}', "b.json")
    r = ds.diff_deepspeed(a, b)
    assert r.changes[0].key == "gradient_clipping"
    assert r.notes == notes


# -- deepspeed_to_accelerate / deepspeed_config -------------------------------------------------

FULL = {
    "zero_optimization": {
        "stage": 3,
        "offload_optimizer": {"device": "CPU", "nvme_path": "/nvme", "pin_memory": True},
        "overlap_comm": True,
    },
    "gradient_accumulation_steps": "auto",
    "fp16": {"enabled": True, "loss_scale": 0},
    "train_batch_size": 64,
    "optimizer": {"type": "AdamW"},
}


def test_deepspeed_to_accelerate_values_and_the_notes_on_what_has_no_accelerate_key() -> None:
    mapped, notes = ds.deepspeed_to_accelerate(FULL)
    assert mapped == {
        "deepspeed_config.gradient_accumulation_steps": "auto",  # "auto" stays a value of its own
        "deepspeed_config.offload_optimizer_device": "cpu",
        "deepspeed_config.offload_optimizer_nvme_path": "/nvme",
        "deepspeed_config.zero_stage": 3,
        "mixed_precision": "fp16",
    }
    # the unmapped and not-exported notes, not the "auto" one (the diff shows "auto" itself)
    assert notes == [
        "offload_optimizer_nvme_path: accelerate 1.15 does not export it to the training process "
        "(ACCELERATE_DEEPSPEED_OFFLOAD_*_NVME_PATH is never set); keep a deepspeed_config_file for NVMe",
        "zero_optimization.offload_optimizer: no accelerate key for pin_memory",
        "zero_optimization keys with no accelerate key: overlap_comm",
        "fp16: no accelerate key for loss_scale",
        "train_batch_size: no accelerate key (accelerate derives it from the dataloader batch size)",
        "optimizer: no accelerate key; keep a deepspeed_config_file to use it",
    ]


def test_deepspeed_to_accelerate_precision_only_when_fp16_or_bf16_is_written() -> None:
    assert ds.deepspeed_to_accelerate({"zero_optimization": {"stage": 1}}) == ({"deepspeed_config.zero_stage": 1}, [])
    assert ds.deepspeed_to_accelerate({"fp16": {"enabled": False}, "zero_optimization": {}})[0] == {
        "mixed_precision": "no"
    }
    assert ds.deepspeed_to_accelerate({"bf16": {"enabled": "auto"}, "zero_optimization": {}})[0] == {
        "mixed_precision": "auto"
    }


def test_deepspeed_to_accelerate_of_something_that_is_no_mapping_is_empty() -> None:
    assert ds.deepspeed_to_accelerate([{"zero_optimization": {"stage": 3}}]) == ({}, [])


DS_DOC = """{
  "zero_optimization": {
    "stage": 3,
    "offload_param": {"device": "CPU"},
    "stage3_gather_fp16_weights_on_model_save": true
  },
  "gradient_clipping": 1.0,
  "bf16": {"enabled": true},
  "train_micro_batch_size_per_gpu": 16
}
"""


def test_deepspeed_config_is_a_config_with_positions_and_notes() -> None:
    cfg = ds.deepspeed_config(load_text(DS_DOC, "run/ds.json"))
    assert (cfg.source, cfg.format) == ("run/ds.json", "deepspeed")
    assert [(n.rule, n.message) for n in cfg.notes] == [("convert.input", NO_TBS)]
    assert {p: (e.value, e.line, e.origin, e.where, e.written_key) for p, e in cfg.entries.items()} == {
        "deepspeed_config.gradient_clipping": (1.0, 7, "file", "run/ds.json:7", "gradient_clipping"),
        "deepspeed_config.offload_param_device": (
            "cpu",
            4,
            "file",
            "run/ds.json:4",
            "zero_optimization.offload_param.device",
        ),
        "deepspeed_config.zero_stage": (3, 3, "file", "run/ds.json:3", "zero_optimization.stage"),
        # the deprecated spelling is read as the key it stands for, at its own line
        "deepspeed_config.zero3_save_16bit_model": (
            True,
            5,
            "file",
            "run/ds.json:5",
            "zero_optimization.stage3_gather_16bit_weights_on_model_save",
        ),
        "mixed_precision": ("bf16", 8, "file", "run/ds.json:8", "bf16.enabled"),
    }
    assert cfg.entries["deepspeed_config.zero_stage"].setting.key == "zero_stage"


@pytest.mark.parametrize(
    "body,value,key,line",
    [
        ('"fp16": {"enabled": true}', "fp16", "fp16.enabled", 2),
        ('"bf16": {"enabled": "auto"}', "auto", "bf16.enabled", 2),
        ('"bfloat16": {"enabled": true}', "bf16", "bf16.enabled", 2),
        # the key that decides, in _ds_precision_of's order: "auto", then true, fp16 first
        ('"fp16": {"enabled": false},\n  "bf16": {"enabled": true}', "bf16", "bf16.enabled", 3),
        ('"fp16": {"enabled": true},\n  "bf16": {"enabled": false}', "fp16", "fp16.enabled", 2),
        ('"fp16": {"enabled": true},\n  "bf16": {"enabled": true}', "fp16", "fp16.enabled", 2),
        ('"bf16": {"enabled": true},\n  "fp16": {"enabled": "auto"}', "auto", "fp16.enabled", 3),
        ('"fp16": {"enabled": false},\n  "bf16": {"enabled": "auto"}', "auto", "bf16.enabled", 3),
        ('"fp16": {"enabled": false},\n  "bf16": {"enabled": false}', "no", "fp16.enabled", 2),
        ('"fp16": {"enabled": 0},\n  "bf16": {"enabled": 1}', "bf16", "bf16.enabled", 3),
        ('"fp16": {"enabled": "true"},\n  "bf16": {"enabled": false}', "fp16", "fp16.enabled", 2),
        # only bf16 written, and false: the precision comes from that key (it used to name an absent
        # fp16.enabled, with no line)
        ('"bf16": {"enabled": false}', "no", "bf16.enabled", 2),
    ],
)
def test_deepspeed_config_mixed_precision_points_at_the_key_it_comes_from(
    body: str, value: str, key: str, line: int
) -> None:
    cfg = ds.deepspeed_config(load_text(f"{{\n  {body}\n}}\n", "p.json"))
    e = cfg.entries["mixed_precision"]
    assert (e.value, e.written_key, e.line, e.where, e.origin) == (value, key, line, f"p.json:{line}", "file")


def test_deepspeed_config_without_fp16_or_bf16_has_no_mixed_precision() -> None:
    cfg = ds.deepspeed_config(load_text('{\n  "zero_optimization": true\n}\n', "p.json"))
    assert {p: (e.value, e.line, e.written_key) for p, e in cfg.entries.items()} == {
        "deepspeed_config.zero_stage": (1, 2, "zero_optimization.stage")
    }
    assert cfg.notes == []


# -- diff_accelerate_deepspeed ------------------------------------------------------------------

ACC = """distributed_type: DEEPSPEED
num_processes: 8
mixed_precision: fp16
deepspeed_config:
  zero_stage: 3
  zero3_init_flag: false
  gradient_accumulation_steps: 4
  deepspeed_moe_layer_cls_names: MixtralSparseMoeBlock
"""
JSON = """{
  "zero_optimization": {"stage": 3, "offload_param": {"device": "cpu"}},
  "bf16": {"enabled": true},
  "gradient_accumulation_steps": 2,
  "train_micro_batch_size_per_gpu": 16,
  "wall_clock_breakdown": true
}
"""
CANNOT = "deepspeed cannot express it"


def _acc(text: str = ACC, version: str = VERSION) -> Config:
    return from_document(load_text(text, "run/a.yaml"), version)


def test_accelerate_against_deepspeed_json() -> None:
    r = ds.diff_accelerate_deepspeed(_acc(), load_text(JSON, "run/ds.json"), version=VERSION)
    assert (r.a_source, r.b_source, r.mode, r.version) == ("run/a.yaml", "run/ds.json", "accelerate-deepspeed", VERSION)
    assert _rows(r) == [
        ("mixed_precision", "fp16", "bf16", "changed", 3, 3),
        ("deepspeed_config.offload_param_device", "none", "cpu", "added", 0, 2),
        ("deepspeed_config.gradient_accumulation_steps", 4, 2, "changed", 7, 4),
        # keys only the accelerate side can say (zero3_init_flag would be true at stage 3)
        ("deepspeed_config.zero3_init_flag", False, None, "not_comparable", 6, 0),
        ("deepspeed_config.deepspeed_moe_layer_cls_names", "MixtralSparseMoeBlock", None, "not_comparable", 8, 0),
    ]
    assert _where(r) == [
        ("mixed_precision", "run/a.yaml:3", "run/ds.json:3", ""),
        ("deepspeed_config.offload_param_device", "default", "run/ds.json:2", ""),
        ("deepspeed_config.gradient_accumulation_steps", "run/a.yaml:7", "run/ds.json:4", ""),
        ("deepspeed_config.zero3_init_flag", "run/a.yaml:6", CANNOT, "B (deepspeed) cannot express this setting"),
        (
            "deepspeed_config.deepspeed_moe_layer_cls_names",
            "run/a.yaml:8",
            CANNOT,
            "B (deepspeed) cannot express this setting",
        ),
    ]
    assert r.notes == [
        BF16_NOTE,
        "offload_param_device none -> cpu: less GPU memory, slower steps (host transfers)",
        # the JSON does not say how many processes: the accelerate side's 8
        "effective global batch size (processes x gradient accumulation x micro batch): "
        "8 x 4 x ? -> 8 x 2 x 16 = 256, x0.5 for the same micro batch",
        NO_TBS,
        NO_WCB,  # what the DeepSpeed side cannot carry
    ]
    assert r.ignored == []


def test_deepspeed_json_against_accelerate_is_the_mirror() -> None:
    acc, js = _acc(), load_text(JSON, "run/ds.json")
    ab = ds.diff_accelerate_deepspeed(acc, js, version=VERSION)
    ba = ds.diff_accelerate_deepspeed(js, acc, version=VERSION)
    assert (ba.a_source, ba.b_source, ba.mode, ba.version) == (
        "run/ds.json",
        "run/a.yaml",
        "accelerate-deepspeed",
        VERSION,
    )
    assert ba.changes == [c.mirrored() for c in ab.changes]
    assert ba.notes == [
        FP16_NOTE,
        "offload_param_device cpu -> none: more GPU memory, faster steps",
        # the processes come from B, the accelerate side, this time
        "effective global batch size (processes x gradient accumulation x micro batch): "
        "8 x 2 x 16 = 256 -> 8 x 4 x ?, x2 for the same micro batch",
        NO_TBS,
        NO_WCB,
    ]


@pytest.mark.parametrize("order", ["acc-ds", "ds-acc"])
def test_the_accelerate_version_decides_what_the_accelerate_side_means(order: str) -> None:
    """deepspeed_moe_layer_cls_names is read from accelerate 0.30: in 0.29 it is a written difference
    without effect (``ignored``), not a change."""
    acc, js = _acc(version="0.29"), load_text(JSON, "run/ds.json")
    r = ds.diff_accelerate_deepspeed(*((acc, js) if order == "acc-ds" else (js, acc)), version="0.29")
    assert r.version == "0.29"
    keys = [c.key for c in r.changes]
    assert keys == [
        "mixed_precision",
        "deepspeed_config.offload_param_device",
        "deepspeed_config.gradient_accumulation_steps",
        "deepspeed_config.zero3_init_flag",
    ]
    (ign,) = r.ignored
    side = ("MixtralSparseMoeBlock", None) if order == "acc-ds" else (None, "MixtralSparseMoeBlock")
    assert (ign.key, (ign.a, ign.b), ign.note) == (
        "deepspeed_config.deepspeed_moe_layer_cls_names",
        side,
        "not read by accelerate 0.29",
    )


def test_the_deepspeed_side_has_deepspeeds_defaults() -> None:
    """A DeepSpeed JSON without a zero_optimization section runs stage 0 (accelerate's plugin default
    would be 2), without offload, 16-bit save or mixed precision."""
    acc = _acc(
        "distributed_type: DEEPSPEED\nmixed_precision: bf16\ndeepspeed_config:\n  zero_stage: 2\n"
        "  offload_optimizer_device: cpu\n  zero3_save_16bit_model: true\n"
    )
    js = load_text('{"train_micro_batch_size_per_gpu": 4}\n', "run/ds.json")
    r = ds.diff_accelerate_deepspeed(acc, js, version=VERSION)
    assert _rows(r) == [
        ("mixed_precision", "bf16", "no", "removed", 2, 0),
        ("deepspeed_config.zero_stage", 2, 0, "removed", 4, 0),
        ("deepspeed_config.offload_optimizer_device", "cpu", "none", "removed", 5, 0),
        ("deepspeed_config.zero3_save_16bit_model", True, False, "removed", 6, 0),
    ]
    assert ds._ds_side_defaults() == {
        "deepspeed_config.gradient_accumulation_steps": None,
        "deepspeed_config.gradient_clipping": None,
        "deepspeed_config.offload_optimizer_device": "none",
        "deepspeed_config.offload_optimizer_nvme_path": None,
        "deepspeed_config.offload_param_device": "none",
        "deepspeed_config.offload_param_nvme_path": None,
        "deepspeed_config.zero3_save_16bit_model": False,
        "deepspeed_config.zero_stage": 0,
        "mixed_precision": "no",
    }


def test_deepspeed_reads_enabled_1_as_true() -> None:
    """``"enabled": 1`` runs fp16 (DeepSpeed's pydantic bool is lax): the same precision as
    accelerate's ``mixed_precision: fp16``. It used to be read as "no", a precision change."""
    acc = _acc("distributed_type: DEEPSPEED\nmixed_precision: fp16\ndeepspeed_config:\n  zero_stage: 2\n")
    js = load_text('{"fp16": {"enabled": 1}, "zero_optimization": {"stage": 2}}\n', "run/ds.json")
    r = ds.diff_accelerate_deepspeed(acc, js, version=VERSION)
    assert r.changes == [] and r.notes == []
    assert ds.deepspeed_config(js).entries["mixed_precision"].value == "fp16"


def test_an_accelerate_only_key_equal_to_its_default_is_no_change() -> None:
    """zero3_init_flag true at stage 3 is accelerate's default: nothing to say the JSON cannot."""
    acc = _acc("distributed_type: DEEPSPEED\ndeepspeed_config:\n  zero_stage: 3\n  zero3_init_flag: true\n")
    js = load_text('{"zero_optimization": {"stage": 3}}\n', "run/ds.json")
    assert ds.diff_accelerate_deepspeed(acc, js, version=VERSION).changes == []


def test_auto_on_the_deepspeed_side_is_noted() -> None:
    acc = _acc("distributed_type: DEEPSPEED\ndeepspeed_config:\n  gradient_accumulation_steps: 4\n")
    js = load_text('{\n  "gradient_accumulation_steps": "auto",\n  "zero_optimization": {"stage": 0}\n}\n', "ds.json")
    r = ds.diff_accelerate_deepspeed(js, acc, version=VERSION)
    assert [(c.key, c.a, c.b, c.kind, c.note) for c in r.changes] == [
        # stage 0 written against accelerate's plugin default, 2
        ("deepspeed_config.zero_stage", 0, 2, "removed", ""),
        (
            "deepspeed_config.gradient_accumulation_steps",
            "auto",
            4,
            "changed",
            '"auto" is filled from the accelerate side at prepare time',
        ),
    ]
    assert semdiff.diff_accelerate_deepspeed is ds.diff_accelerate_deepspeed
