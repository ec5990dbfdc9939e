"""A config's ``deepspeed_config_file`` in a diff: the DeepSpeed settings in effect are the file's
(accelerate reads them from it, ``DeepSpeedPlugin.__post_init__``), in both directions and in every
format that names a file (YAML, env, launch command); and the one place that finds the file
(:func:`accelconf.deepspeed.config_file_path`), which validate, check and the memory estimate share.
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import pytest

from accelconf.deepspeed import config_file_path

semdiff = importlib.import_module("accelconf.diff")

VERSION = "1.15"
ZERO3_BF16 = {
    "zero_optimization": {"stage": 3, "stage3_gather_16bit_weights_on_model_save": True},
    "bf16": {"enabled": True},
    "gradient_accumulation_steps": 4,
    "train_micro_batch_size_per_gpu": "auto",
}
ZERO2_FP16 = {
    "zero_optimization": {"stage": 2, "offload_optimizer": {"device": "cpu"}, "overlap_comm": True},
    "fp16": {"enabled": True},
    "optimizer": {"type": "AdamW"},
    "gradient_accumulation_steps": 4,
    "train_micro_batch_size_per_gpu": "auto",
}


def _yaml(ref: str, extra: str = "") -> str:
    return (
        "compute_environment: LOCAL_MACHINE\ndistributed_type: DEEPSPEED\ndeepspeed_config:\n"
        f"  deepspeed_config_file: {ref}\n{extra}num_machines: 1\nnum_processes: 8\n"
    )


def _write(folder: Path, files: dict[str, str | dict]) -> None:
    for name, content in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(content if isinstance(content, str) else json.dumps(content, indent=2) + "\n")


def _rows(r) -> list[tuple]:
    return [(c.key, c.a, c.b, c.kind) for c in r.changes]


@pytest.mark.parametrize("order", ["config-first", "json-first"])
def test_a_config_diffed_against_the_deepspeed_file_it_names_is_equivalent(tmp_path, order) -> None:
    _write(tmp_path, {"a.yaml": _yaml("ds.json"), "ds.json": ZERO3_BF16})
    a, b = tmp_path / "a.yaml", tmp_path / "ds.json"
    r = semdiff.diff_files(*((a, b) if order == "config-first" else (b, a)), version=VERSION)
    assert r.changes == [] and r.equivalent
    assert [c.key for c in r.ignored] == ["deepspeed_config.deepspeed_config_file"]
    assert "compared, not its name" in r.ignored[0].note


def test_a_config_against_another_deepspeed_json_shows_the_named_files_settings(tmp_path) -> None:
    _write(tmp_path, {"a.yaml": _yaml("ds3.json"), "ds3.json": ZERO3_BF16, "ds2.json": ZERO2_FP16})
    r = semdiff.diff_files(tmp_path / "a.yaml", tmp_path / "ds2.json", version=VERSION)
    assert _rows(r) == [
        ("mixed_precision", "bf16", "fp16", "changed"),
        ("deepspeed_config.zero_stage", 3, 2, "changed"),
        ("deepspeed_config.offload_optimizer_device", "none", "cpu", "added"),
        ("deepspeed_config.zero3_save_16bit_model", True, False, "removed"),
        ("zero_optimization.overlap_comm", None, True, "added"),
        ("optimizer.type", None, "AdamW", "added"),
    ]
    # a value comes from the line of the file that sets it
    assert r.changes[1].a_where == f"{tmp_path / 'ds3.json'}:3"


def test_two_configs_naming_different_deepspeed_files_differ_by_the_files_settings(tmp_path) -> None:
    _write(
        tmp_path,
        {"a.yaml": _yaml("ds3.json"), "b.yaml": _yaml("ds2.json"), "ds3.json": ZERO3_BF16, "ds2.json": ZERO2_FP16},
    )
    r = semdiff.diff_files(tmp_path / "a.yaml", tmp_path / "b.yaml", version=VERSION)
    assert [c.key for c in r.differences] == [
        "mixed_precision",
        "deepspeed_config.zero_stage",
        "deepspeed_config.offload_optimizer_device",
        "deepspeed_config.zero3_save_16bit_model",
        "zero_optimization.overlap_comm",
        "optimizer.type",
    ]
    assert [(c.key, c.a, c.b) for c in r.ignored] == [
        ("deepspeed_config.deepspeed_config_file", "ds3.json", "ds2.json")
    ]
    assert any(n.startswith("zero_stage 3 -> 2") for n in r.notes)


def test_two_configs_naming_files_with_the_same_settings_are_equivalent(tmp_path) -> None:
    _write(
        tmp_path,
        {
            "a.yaml": _yaml("one.json"),
            "b.yaml": _yaml("conf/two.json"),
            "one.json": ZERO3_BF16,
            "conf/two.json": ZERO3_BF16,
        },
    )
    r = semdiff.diff_files(tmp_path / "a.yaml", tmp_path / "b.yaml", version=VERSION)
    assert r.equivalent and r.changes == []


def test_a_config_with_a_file_equals_one_that_sets_the_same_settings_inline(tmp_path) -> None:
    inline = (
        "distributed_type: DEEPSPEED\ndeepspeed_config:\n  zero_stage: 3\n  zero3_save_16bit_model: true\n"
        "  gradient_accumulation_steps: 4\nmixed_precision: bf16\nnum_machines: 1\nnum_processes: 8\n"
    )
    _write(tmp_path, {"a.yaml": _yaml("ds.json"), "b.yaml": inline, "ds.json": ZERO3_BF16})
    assert semdiff.diff_files(tmp_path / "a.yaml", tmp_path / "b.yaml", version=VERSION).equivalent
    _write(tmp_path, {"b.yaml": inline.replace("zero_stage: 3", "zero_stage: 2")})
    r = semdiff.diff_files(tmp_path / "a.yaml", tmp_path / "b.yaml", version=VERSION)
    assert ("deepspeed_config.zero_stage", 3, 2, "changed") in _rows(r)


def test_file_keys_without_an_accelerate_setting_are_named_when_the_other_side_has_no_file(tmp_path) -> None:
    inline = "distributed_type: DEEPSPEED\ndeepspeed_config:\n  zero_stage: 2\nnum_machines: 1\nnum_processes: 8\n"
    _write(tmp_path, {"a.yaml": inline, "b.yaml": _yaml("ds.json"), "ds.json": ZERO2_FP16})
    r = semdiff.diff_files(tmp_path / "a.yaml", tmp_path / "b.yaml", version=VERSION)
    assert (
        "B's DeepSpeed file also sets zero_optimization.overlap_comm, optimizer.type, which have no accelerate "
        "setting: not compared (A has no DeepSpeed file; accelerate builds its DeepSpeed config from the settings "
        "above)"
    ) in r.notes  # train_micro_batch_size_per_gpu "auto" is in accelerate's own config too
    r = semdiff.diff_files(
        tmp_path / "a.yaml", tmp_path / "b.yaml", version=VERSION, ignore=["optimizer", "overlap_comm"]
    )
    assert not any("also sets" in n for n in r.notes)


def test_zero3_init_flag_defaults_to_whether_the_named_file_is_zero3(tmp_path) -> None:
    _write(tmp_path, {"a.yaml": _yaml("ds.json", "  zero3_init_flag: false\n"), "ds.json": ZERO3_BF16})
    r = semdiff.diff_files(tmp_path / "a.yaml", tmp_path / "ds.json", version=VERSION)
    assert _rows(r) == [("deepspeed_config.zero3_init_flag", False, None, "not_comparable")]
    _write(tmp_path, {"a.yaml": _yaml("ds.json", "  zero3_init_flag: true\n")})
    assert semdiff.diff_files(tmp_path / "a.yaml", tmp_path / "ds.json", version=VERSION).changes == []


@pytest.mark.parametrize(
    "name, text",
    [
        ("launch.env", "ACCELERATE_USE_DEEPSPEED=true\nACCELERATE_DEEPSPEED_CONFIG_FILE=ds.json\n"),
        ("launch.sh", "accelerate launch --use_deepspeed --deepspeed_config_file ds.json --num_processes 8 train.py\n"),
    ],
)
def test_env_and_launch_inputs_that_name_a_deepspeed_file_are_compared_by_its_settings(tmp_path, name, text) -> None:
    _write(tmp_path, {name: text, "a.yaml": _yaml("ds.json"), "ds.json": ZERO3_BF16, "ds2.json": ZERO2_FP16})
    for other in ("ds.json", "a.yaml"):
        r = semdiff.diff_files(tmp_path / name, tmp_path / other, version=VERSION)
        assert r.equivalent, (other, _rows(r))
    r = semdiff.diff_files(tmp_path / name, tmp_path / "ds2.json", version=VERSION)
    assert ("deepspeed_config.zero_stage", 3, 2, "changed") in _rows(r)


def test_a_deepspeed_file_that_cannot_be_found_is_compared_by_name_with_a_note(tmp_path) -> None:
    _write(tmp_path, {"a.yaml": _yaml("nowhere.json"), "b.yaml": _yaml("ds.json"), "ds.json": ZERO3_BF16})
    r = semdiff.diff_files(tmp_path / "a.yaml", tmp_path / "b.yaml", version=VERSION)
    assert ("deepspeed_config.deepspeed_config_file", "nowhere.json", "ds.json", "changed") in _rows(r)
    assert r.ignored == []
    assert any(
        n.startswith("A's deepspeed_config_file 'nowhere.json' was not found next to")
        and n.endswith("the DeepSpeed settings in it are not compared")
        for n in r.notes
    )


def test_the_named_file_is_read_only_when_the_config_runs_deepspeed(tmp_path) -> None:
    text = _yaml("ds.json").replace("DEEPSPEED", "MULTI_GPU")
    _write(
        tmp_path,
        {
            "a.yaml": text,
            "b.yaml": text.replace("ds.json", "other.json"),
            "ds.json": ZERO3_BF16,
            "other.json": ZERO2_FP16,
        },
    )
    r = semdiff.diff_files(tmp_path / "a.yaml", tmp_path / "b.yaml", version=VERSION)
    assert r.equivalent and not any(n.startswith("precision") for n in r.notes)


def test_cli_diff_of_a_config_and_the_file_it_names_exits_0(cli, tmp_path) -> None:
    _write(tmp_path, {"a.yaml": _yaml("ds.json"), "ds.json": ZERO3_BF16})
    r = cli("diff", str(tmp_path / "a.yaml"), str(tmp_path / "ds.json"))
    assert r.code == 0, r.out
    assert "equivalent: no difference in meaning" in r.out and "zero_stage" not in r.out


# -- finding the file ---------------------------------------------------------------------------


def test_the_deepspeed_file_is_found_next_to_the_config_before_the_current_directory(tmp_path, monkeypatch) -> None:
    _write(tmp_path, {"conf/a.yaml": "", "conf/ds.json": "{}", "ds.json": "{}", "only_here.json": "{}"})
    monkeypatch.chdir(tmp_path)
    assert config_file_path("ds.json", "conf/a.yaml") == "conf/ds.json"
    assert config_file_path("only_here.json", "conf/a.yaml") == "only_here.json"  # the launch directory
    assert config_file_path("ds.json", "<stdin>") == "ds.json"
    assert config_file_path("ds.json", None) == "ds.json"
    assert config_file_path("missing.json", "conf/a.yaml") is None
    assert config_file_path(str(tmp_path / "ds.json"), "elsewhere/a.yaml") == str(tmp_path / "ds.json")
    assert config_file_path(str(tmp_path / "missing.json"), "conf/a.yaml") is None


def test_a_config_with_no_file_name_looks_in_the_current_directory_only(tmp_path, monkeypatch) -> None:
    # an editor's unsaved buffer is named in angle brackets: its "directory" is not one to look in
    _write(tmp_path, {"<untitled>/ds.json": "{}"})
    monkeypatch.chdir(tmp_path)
    assert config_file_path("ds.json", "<untitled>/a.yaml") is None
    _write(tmp_path, {"ds.json": "{}"})
    assert config_file_path("ds.json", "<untitled>/a.yaml") == "ds.json"


def test_validate_reads_a_deepspeed_file_found_in_the_current_directory(cli, tmp_path, monkeypatch) -> None:
    # a repository-relative name, as in a config kept in a subfolder and launched from the root
    bad = {**ZERO3_BF16, "zero_optimization": {"stage": 7}}
    _write(tmp_path, {"configs/a.yaml": _yaml("ds/zero.json"), "ds/zero.json": bad})
    monkeypatch.chdir(tmp_path)
    r = cli("validate", "configs/a.yaml")
    assert "deepspeed-config-file-missing" not in r.out + r.err
    assert "ds/zero.json" in r.out + r.err and r.code == 1


def test_the_memory_estimate_and_check_read_a_deepspeed_file_found_in_the_current_directory(
    tmp_path, monkeypatch
) -> None:
    from accelconf.environment.checks import _referenced_ds_json, reading
    from accelconf.environment.memory import strategy_of
    from accelconf.text.document import load_file

    zero3 = {"zero_optimization": {"stage": 3, "offload_param": {"device": "cpu"}}, "fp16": {"enabled": True}}
    _write(tmp_path, {"configs/a.yaml": _yaml("ds/zero.json"), "ds/zero.json": zero3})
    monkeypatch.chdir(tmp_path)
    doc = load_file("configs/a.yaml")
    s, _ = strategy_of(doc.data, doc.path)
    assert (s.zero_stage, s.offload_param, s.precision) == (3, "cpu", "fp16")
    found = _referenced_ds_json(reading(doc))
    assert found is not None and found.path == "ds/zero.json"


def test_a_configs_own_keys_beside_the_file_are_listed_without_effect(tmp_path) -> None:
    _write(
        tmp_path, {"a.yaml": _yaml("ds.json", "  zero_stage: 2\n") + "mixed_precision: fp16\n", "ds.json": ZERO3_BF16}
    )
    r = semdiff.diff_files(tmp_path / "ds.json", tmp_path / "a.yaml", version=VERSION)
    assert r.equivalent  # the file's values are the ones in effect (validate reports the conflict)
    assert [(c.key, c.a, c.b, c.kind, c.b_line) for c in r.ignored] == [
        ("deepspeed_config.deepspeed_config_file", None, "ds.json", "added", 4),
        ("deepspeed_config.zero_stage", None, 2, "added", 5),
        ("mixed_precision", None, "fp16", "added", 8),
    ]
    assert (
        r.ignored[1].note == "beside deepspeed_config_file, accelerate raises ValueError; the file's value is compared"
    )
