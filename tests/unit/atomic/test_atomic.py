"""Atomic writes (``fmt --write``, ``migrate --write``, ``fit --write``): all or nothing, in place, with
the file's permissions kept and no temporary file left behind, whatever happens."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from accelconf.atomic import write_atomic


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith(".accelconf-"))


def test_a_new_file_gets_the_permissions_open_would_give_it(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        write_atomic(str(tmp_path / "new.yaml"), b"num_processes: 2\n")
        os.umask(0o077)
        write_atomic(str(tmp_path / "private.yaml"), b"num_processes: 2\n")
    finally:
        os.umask(old)
    assert (tmp_path / "new.yaml").read_bytes() == b"num_processes: 2\n"
    assert _mode(tmp_path / "new.yaml") == 0o644
    assert _mode(tmp_path / "private.yaml") == 0o600
    assert _leftovers(tmp_path) == []


def test_an_existing_file_is_replaced_and_keeps_its_permissions(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_bytes(b"old\n")
    path.chmod(0o640)
    write_atomic(str(path), b"new\n")
    assert path.read_bytes() == b"new\n" and _mode(path) == 0o640
    path.chmod(0o755)
    write_atomic(str(path), b"newer\n")
    assert _mode(path) == 0o755
    assert _leftovers(tmp_path) == []


def test_a_relative_name_is_written_in_the_current_directory(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    write_atomic("c.yaml", b"x: 1\n")
    assert (tmp_path / "c.yaml").read_bytes() == b"x: 1\n" and _leftovers(tmp_path) == []


def test_a_failed_write_leaves_the_file_as_it_was_and_no_temporary_file(tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "c.yaml"
    path.write_bytes(b"old\n")

    def refuse(src, dst):  # the rename fails (a full disk, a read-only mount)
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(OSError, match="No space left"):
        write_atomic(str(path), b"new\n")
    assert path.read_bytes() == b"old\n"
    assert _leftovers(tmp_path) == []


def test_an_interrupt_while_writing_leaves_no_temporary_file(tmp_path: Path, monkeypatch) -> None:
    def interrupt(fd):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "fsync", interrupt)
    with pytest.raises(KeyboardInterrupt):
        write_atomic(str(tmp_path / "c.yaml"), b"new\n")
    assert not (tmp_path / "c.yaml").exists() and _leftovers(tmp_path) == []


def test_the_temporary_file_is_written_beside_the_target(tmp_path: Path, monkeypatch) -> None:
    """Beside it, so that the rename is one step on one file system; named so that a leftover is seen."""
    seen: list[list[str]] = []
    fsync = os.fsync

    def look(fd):
        seen.append(_leftovers(tmp_path))
        fsync(fd)

    monkeypatch.setattr(os, "fsync", look)
    write_atomic(str(tmp_path / "c.yaml"), b"x: 1\n")
    assert len(seen) == 1 and len(seen[0]) == 1 and seen[0][0].startswith(".accelconf-")
    assert _leftovers(tmp_path) == []
