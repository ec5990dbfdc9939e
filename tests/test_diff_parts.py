"""The parts of the semantic diff one by one: reading a side (:mod:`accelconf.diff.files`), the
values a diff returns (:mod:`accelconf.diff.result`), and the comparisons that tests/test_diff.py
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


@pytest.mark.parametrize("name,text,what", [
    ("empty.yaml", "", "empty"),
    ("comments.yml", "# nothing here\n", "empty"),
    ("SHOUT.YML", "- 1\n", "a list, not a mapping of settings"),
    ("list.json", "[1, 2]\n", "a list, not a mapping of settings"),
    ("number.yaml", "3\n", "a int, not a mapping of settings"),
    ("text.json", '"fp16"\n', "a str, not a mapping of settings"),
])
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
