"""Where a file named inside another file is looked for (:mod:`accelconf.text.paths`), the one rule
the DeepSpeed file reference and every other reference follow."""

from __future__ import annotations

import os
from pathlib import Path

from accelconf.deepspeed.path import config_file_path
from accelconf.kinds.references import locate
from accelconf.text.paths import candidates


def test_beside_the_referrer_then_here() -> None:
    assert candidates("ds.json", "configs/train.yaml") == [os.path.join("configs", "ds.json"), "ds.json"]
    assert candidates("../ds.json", "configs/sub/train.yaml") == [
        os.path.join("configs", "ds.json"),
        os.path.join("..", "ds.json"),
    ]
    assert candidates("./ds.json", "train.yaml") == ["ds.json"]  # beside it is here: tried once
    assert candidates("ds.json", "<stdin>") == candidates("ds.json", "") == candidates("ds.json", None) == ["ds.json"]
    absolute = os.path.abspath("x/ds.json")
    assert candidates(absolute, "configs/train.yaml") == [absolute]


def test_both_readers_find_the_same_file(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "ds.json").write_text("{}")
    (tmp_path / "ds.json").write_text("{}")
    (tmp_path / "only_here.json").write_text("{}")
    (tmp_path / "a_dir.json").mkdir()
    ref = "configs/train.yaml"
    # beside the referrer wins over the working directory
    assert config_file_path("ds.json", ref) == locate("ds.json", ref) == os.path.join("configs", "ds.json")
    assert config_file_path("only_here.json", ref) == locate("only_here.json", ref) == "only_here.json"
    assert config_file_path("missing.json", ref) is None and locate("missing.json", ref) is None
    # a DeepSpeed config must be a file; any reference may name a folder
    assert config_file_path("a_dir.json", ref) is None and locate("a_dir.json", ref) == "a_dir.json"
    # outside the working directory: the DeepSpeed path as named, the reference absolute
    (tmp_path / "work").mkdir()
    monkeypatch.chdir(tmp_path / "work")
    far = os.path.join("..", "configs", "train.yaml")
    assert config_file_path("ds.json", far) == os.path.join("..", "configs", "ds.json")
    assert locate("ds.json", far) == str(tmp_path / "configs" / "ds.json")
