"""Conversions against accelerate itself: the committed Python names, the launcher replacing a shell value, every
command over the corpus files accelerate launches."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from accelconf.cli import main


@pytest.mark.oracle
def test_python_names_match_the_installed_accelerate() -> None:
    """The committed table of names is what the installed accelerate has (regenerate on drift)."""
    from accelconf.formats import pynames
    from tests.oracle.pynames_gen import generate

    pytest.importorskip("accelerate", reason="the drift check compares with the installed accelerate")
    assert generate() == Path(pynames.__file__).read_text(), (
        "accelconf/formats/pynames.py is stale: python tests/oracle/pynames_gen.py > accelconf/formats/pynames.py"
    )


@pytest.mark.oracle
def test_the_launcher_really_replaces_the_shell_value(tmp_path: Path) -> None:
    """The oracle: accelerate's launcher, started from a shell that sets ACCELERATE_MIXED_PRECISION=fp16,
    gives the process the config's bf16."""
    from tests.oracle.run import have_accelerate

    if not have_accelerate():
        pytest.skip("accelerate and torch are not installed: the launcher oracle cannot run")
    cfg = tmp_path / "c.yaml"
    cfg.write_text(
        "distributed_type: FSDP\nnum_processes: 2\nmixed_precision: bf16\nfsdp_config:\n"
        "  fsdp_sharding_strategy: FULL_SHARD\n"
    )
    code = (
        "import json, os, sys; sys.path.insert(0, 'tests/oracle'); import harness as H; "
        "os.environ.update(ACCELERATE_MIXED_PRECISION='fp16', FSDP_SHARDING_STRATEGY='NO_SHARD'); "
        f"print(json.dumps(H.launch(['--config_file', {str(cfg)!r}, 'train.py'])['env']))"
    )
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=root, timeout=300)
    env = json.loads(out.stdout.strip().splitlines()[-1])
    assert env["ACCELERATE_MIXED_PRECISION"] == "bf16" and env["FSDP_SHARDING_STRATEGY"] == "FULL_SHARD"


COMMANDS_OVER_CORPUS = (
    ["validate"],
    ["fmt", "--check"],
    ["migrate"],
    ["to-env"],
    ["to-cli"],
    ["to-kwargs"],
    ["to-yaml"],
    ["to-json"],
    ["explain"],
    ["check", "--gpus", "8", "--gpu", "H100"],
)


@pytest.mark.oracle
def test_every_command_over_the_corpus_gives_no_traceback_and_no_error_on_what_accelerate_launches(capsys) -> None:
    """Exit 0/1/2 and no traceback for every command and corpus file; for a file accelerate's launcher
    accepts, no error finding and no exit 1 (fmt --check and migrate report changes, not errors; check
    reports the target machine, here one without fp8 libraries or enough GPUs for some files)."""
    from tests.conftest import corpus_files, need_corpus
    from tests.oracle.run import oracle

    files = need_corpus("accelerate")
    launched = {p for p, v in oracle(files).items() if v["ok"]}
    problems = []
    for path in files + corpus_files("deepspeed"):
        for command in COMMANDS_OVER_CORPUS:
            code = main([*command, str(path)])
            out, err = capsys.readouterr()
            if code not in (0, 1, 2) or "Traceback" in out + err:
                problems.append(f"{command[0]} {path.name}: exit {code}")
            elif (
                str(path) in launched
                and command[0] not in ("fmt", "migrate", "check")
                and (code == 1 or ": error:" in out + err)
            ):
                problems.append(
                    f"{command[0]} {path.name}: "
                    + next((ln for ln in (out + err).splitlines() if "error" in ln), f"exit {code}")
                )
    assert not problems, "\n".join(problems)
