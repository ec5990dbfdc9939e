"""Edges of the CLI people hit first: `check --python` (the interpreter that trains), explain's
table, `fmt --diff` headers, shipped target profiles by name."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


def _fake_interpreter(tmp_path: Path, packages: dict[str, str], cuda: str | None = None) -> Path:
    """An executable that answers accelconf's one question like a Python would, with a site-packages
    of bare dist-info folders (and torch/version.py): nothing there could be imported."""
    site = tmp_path / "site-packages"
    site.mkdir()
    for name, version in packages.items():
        (site / f"{name}-{version}.dist-info").mkdir()
    if cuda and "torch" in packages:
        (site / "torch").mkdir()
        (site / "torch" / "version.py").write_text(
            f"__version__ = '{packages['torch']}'\ncuda: Optional[str] = '{cuda}'\nhip = None\n"
        )
        (site / "torch" / "__init__.py").write_text("raise SystemExit('torch must not be imported')\n")
    exe = tmp_path / "bin" / "python"
    exe.parent.mkdir()
    exe.write_text(f'#!/bin/sh\necho \'[["", "{site}"], "3.9.18"]\'\n')
    exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
    return exe


@pytest.mark.skipif(os.name == "nt", reason="the fake interpreter is a shell script")
def test_check_python_reads_the_other_interpreters_packages(cli, tmp_path):
    exe = _fake_interpreter(tmp_path, {"torch": "2.4.1", "accelerate": "1.3.0", "deepspeed": "0.15.4"}, cuda="12.1")
    r = cli("check", "--python", str(exe), "--probe", "none", str(EXAMPLES / "fsdp2.yaml"))
    summary = r.err.splitlines()[0]
    assert f"packages of {exe}" in summary, summary
    assert "torch 2.4.1, accelerate 1.3.0, deepspeed 0.15.4" in summary, summary
    # validate ran for that interpreter's accelerate: FSDP2 keys are too new for 1.3
    assert "accelerate 1.3 ignores it [key-too-new]" in r.out


def test_check_python_with_the_real_interpreter(cli):
    from accelconf.versions import installed_version

    r = cli("check", "--python", sys.executable, "--probe", "none", "--format", "json", str(EXAMPLES / "fsdp2.yaml"))
    import json

    env = json.loads(r.out)["environment"]
    assert env["accelerate_version"] == installed_version("accelerate")
    assert env["source"].endswith(f"packages of {sys.executable}")


@pytest.mark.skipif(os.name == "nt", reason="the fake interpreter is a shell script")
def test_check_without_accelerate_says_where_it_looked_and_how_to_point_elsewhere(cli, tmp_path):
    exe = _fake_interpreter(tmp_path, {"torch": "2.6.0"})
    r = cli("check", "--python", str(exe), "--probe", "none", str(EXAMPLES / "fsdp2.yaml"))
    assert f"no accelerate among the packages of {exe}" in r.err
    assert "--python /path/to/venv/bin/python" in r.err


def test_summary_names_this_interpreter_by_default(cli):
    r = cli("check", "--probe", "none", str(EXAMPLES / "fsdp2.yaml"))
    assert f"packages of {sys.executable}" in r.err.splitlines()[0]


def test_check_python_that_does_not_exist_is_a_usage_error(cli, tmp_path):
    r = cli("check", "--python", str(tmp_path / "nope" / "python"), str(EXAMPLES / "fsdp2.yaml"))
    assert r.code == 2 and "no such executable" in r.err and "Traceback" not in r.err


def test_target_by_name_and_unknown_name(cli):
    r = cli("check", "--target", "v100-node", str(EXAMPLES / "fsdp2.yaml"))
    assert r.err.startswith("checking against target v100-node.yaml: 1 machine, 4x V100-32GB")
    r = cli("check", "--target", "no-such-node", str(EXAMPLES / "fsdp2.yaml"))
    assert r.code == 2 and "a10g-g5, h100-node, v100-node" in r.err


def test_explain_table_columns_line_up(cli):
    r = cli("explain", str(EXAMPLES / "fsdp2.yaml"))
    lines = r.out.splitlines()
    env_col = lines[0].index("ENV")
    for line in lines[1:]:
        if len(line) > env_col:
            assert line[env_col - 2 : env_col] == "  " and line[env_col] != " ", line
    assert any("(torchrun/launcher argument, not env)" in ln for ln in lines)


def test_explain_color(cli):
    assert "\033[1m" in cli("explain", "--color", "always", str(EXAMPLES / "fsdp2.yaml")).out
    assert "\033[" not in cli("explain", "--color", "never", str(EXAMPLES / "fsdp2.yaml")).out


def test_fmt_and_migrate_diff_headers_on_an_absolute_path(cli, tmp_path):
    path = tmp_path / "legacy.yaml"
    path.write_bytes((EXAMPLES / "legacy.yaml").read_bytes())
    for argv in (("fmt", "--diff", str(path)), ("migrate", "--to", "fsdp2", "--diff", str(path))):
        out = cli(*argv).out
        assert f"--- a/{str(path).lstrip('/')}\n" in out and "a//" not in out and "b//" not in out, out[:300]
