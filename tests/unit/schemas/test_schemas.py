"""``make schemas`` / ``accelconf schema --write``: every generated file written under the folder given,
only those that differ, and the list of what was written."""

from __future__ import annotations

import os
from pathlib import Path

from accelconf.schemas import generated_files, write_all


def test_write_all_writes_each_file_once_and_then_only_what_differs(tmp_path: Path) -> None:
    expected = generated_files()
    written = write_all(str(tmp_path))
    assert sorted(written) == sorted(os.path.join(str(tmp_path), name) for name in expected)
    for name, text in expected.items():
        assert (tmp_path / name).read_text(encoding="utf-8") == text  # nested folders made as needed

    assert write_all(str(tmp_path)) == []  # all equal: nothing touched
    one = tmp_path / "catalog.json"
    one.write_text("{}\n", encoding="utf-8")
    assert write_all(str(tmp_path)) == [str(one)]
    assert one.read_text(encoding="utf-8") == expected["catalog.json"]
    assert not [p.name for p in tmp_path.rglob(".accelconf-*")]
