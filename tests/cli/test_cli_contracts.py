"""What every command promises alike: the exit codes its --help documents, how it reads its input
(a file or '-', empty, undecodable, a directory, too large), the machine rank it is given, and
that a command line is printed only when it launches what the config says."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"

TWO_MACHINES = """\
compute_environment: LOCAL_MACHINE
distributed_type: MULTI_GPU
num_machines: 2
num_processes: 16
machine_rank: 0
main_process_ip: 10.0.0.1
main_process_port: 29500
mixed_precision: bf16
"""
# accelerate's FullyShardedDataParallelPlugin refuses this strategy name: an error in every command
HALF_SHARD = """\
distributed_type: FSDP
num_processes: 2
fsdp_config:
  fsdp_sharding_strategy: HALF_SHARD
"""
# a misspelled nested key: validate warns, and the converters report the key they cannot place
WARNING = "distributed_type: FSDP\nnum_processes: 2\nfsdp_config:\n  fsdp_cpu_offload: true\n"
FSDP1 = (
    "distributed_type: FSDP\nnum_processes: 2\nfsdp_config:\n  fsdp_version: 1\n  fsdp_sharding_strategy: FULL_SHARD\n"
)


@pytest.fixture
def files(tmp_path: Path) -> dict[str, str]:
    texts = {
        "two.yaml": TWO_MACHINES,
        "half.yaml": HALF_SHARD,
        "warn.yaml": WARNING,
        "fsdp1.yaml": FSDP1,
        "empty.yaml": "",
        "comments.yaml": "# nothing but a comment\n\n---\n",
    }
    out = {name: str(tmp_path / name) for name in texts}
    for name, text in texts.items():
        (tmp_path / name).write_text(text)
    (tmp_path / "latin1.yaml").write_bytes(b"distributed_type: MULTI_GPU\nnum_processes: 2\nmixed_precision: \xe9\n")
    out["latin1.yaml"] = str(tmp_path / "latin1.yaml")
    (tmp_path / "folder").mkdir()
    out["folder"] = str(tmp_path / "folder")
    return out


# -- a command line only when it launches ------------------------------------------------------


def test_to_cli_prints_no_command_when_the_config_has_errors(cli, files):
    r = cli("to-cli", files["half.yaml"])
    assert r.code == 1 and r.out == ""
    assert f"{files['half.yaml']}:4:3: error: `fsdp_sharding_strategy: HALF_SHARD`" in r.err
    assert "no command printed" in r.err
    ok = cli("to-cli", str(EXAMPLES / "fsdp2.yaml"))
    assert ok.code == 0 and ok.out.startswith("accelerate launch")


def test_to_cli_all_ranks_prints_no_command_when_the_config_has_errors(cli, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(TWO_MACHINES.replace("MULTI_GPU", "FSDP") + "fsdp_config:\n  fsdp_sharding_strategy: HALF_SHARD\n")
    r = cli("to-cli", "--all-ranks", str(bad))
    assert r.code == 1 and r.out == "" and "[invalid-value]" in r.err


def _fake_accelerate(tmp_path: Path) -> tuple[dict[str, str], Path]:
    """A PATH whose `accelerate` only records that it was started, and where it writes."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    marker = tmp_path / "launched"
    fake = bin_dir / "accelerate"
    fake.write_text(f'#!/bin/sh\necho "$@" > "{marker}"\n')
    fake.chmod(0o755)
    env = dict(
        os.environ,
        PATH=f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        PYTHONPATH=os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p),
    )
    return env, marker


@pytest.mark.skipif(shutil.which("bash") is None, reason="the idiom under test is bash's")
def test_eval_of_to_cli_under_set_e_does_not_launch_an_invalid_config(files, tmp_path):
    env, marker = _fake_accelerate(tmp_path)
    accelconf = f"{sys.executable} -m accelconf"

    def job(config: str, script: str) -> subprocess.CompletedProcess[str]:
        marker.unlink(missing_ok=True)
        body = f"set -e\n{script.format(accelconf=accelconf, config=config)}\necho after\n"
        return subprocess.run(["bash", "-c", body], env=env, capture_output=True, text=True, timeout=120)

    eval_idiom = 'eval "$({accelconf} to-cli -q {config}) train.py --lr 1e-4"'
    good = job(str(EXAMPLES / "fsdp2.yaml"), eval_idiom)
    assert good.returncode == 0 and marker.read_text().startswith("launch --use_fsdp"), good.stderr
    bad = job(files["half.yaml"], eval_idiom)
    assert not marker.exists(), "an invalid config was launched"
    assert bad.returncode != 0 and "after" not in bad.stdout and "[invalid-value]" in bad.stderr
    # the form docs/conversions.md shows, which stops at the substitution itself
    assigned = job(files["half.yaml"], 'cmd="$({accelconf} to-cli -q {config})"\neval "$cmd train.py"')
    assert not marker.exists() and assigned.returncode == 1 and "after" not in assigned.stdout


# -- the machine rank --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "argv, refusal",
    [
        (("to-env", "{two}", "--machine-rank", "5"), "--machine-rank 5 is outside 0..1: num_machines is 2 ({two}:3)"),
        (("to-cli", "{two}", "--machine-rank", "-1"), "--machine-rank -1 is outside 0..1"),
        (("to-cli", "--machine-rank", "2", "-q", "{two}"), "--machine-rank 2 is outside 0..1"),
        (("convert", "--to", "kwargs", "--machine-rank", "2", "{two}"), "--machine-rank 2 is outside 0..1"),
        (
            ("explain", "{two}", "--launch-args", "--machine_rank 2"),
            "--machine_rank 2 is outside 0..1: num_machines is 2 ({two}:3)",
        ),
        (
            ("explain", "{two}", "--launch-args", "--num_machines 3 --machine_rank 3"),
            "--machine_rank 3 is outside 0..2: num_machines is 3 (--launch-args)",
        ),
        (
            ("preflight", "{two}", "--machine-rank", "2", "--timeout", "1"),
            "--machine-rank 2 is outside 0..1: num_machines is 2 ({two})",
        ),
    ],
)
def test_a_machine_rank_outside_the_machines_is_refused(cli, files, argv, refusal):
    r = cli(*(a.format(two=files["two.yaml"]) for a in argv))
    assert r.code == 2 and r.out == ""
    assert f"accelconf: {refusal.format(two=files['two.yaml'])}" in r.err
    assert "Traceback" not in r.err


def test_a_machine_rank_of_the_job_is_written(cli, files):
    r = cli("to-env", files["two.yaml"], "--machine-rank", "1")
    assert r.code == 0 and "--node_rank=1 " in r.out
    assert cli("explain", files["two.yaml"], "--launch-args", "--machine_rank 1").code == 0


def test_a_machine_rank_for_a_single_machine_config_is_refused(cli):
    r = cli("to-cli", str(EXAMPLES / "fsdp2.yaml"), "--machine-rank", "1")
    assert r.code == 2 and "--machine-rank 1 is outside 0..0: num_machines is 1" in r.err


def test_the_machine_rank_bound_is_validates_for_the_flag_and_the_file(cli, tmp_path, files):
    from accelconf.accelerate.validate import machine_rank_outside

    in_file = tmp_path / "rank5.yaml"
    in_file.write_text(TWO_MACHINES.replace("machine_rank: 0", "machine_rank: 5"))
    found = cli("validate", str(in_file))
    assert found.code == 1 and f"error: {machine_rank_outside(5, 2)} [multi-node]" in found.out
    refused = cli("to-env", files["two.yaml"], "--machine-rank", "5")
    assert f"accelconf: {machine_rank_outside(5, 2, '--machine-rank')}:" in refused.err


def test_a_machine_rank_outside_the_machines_in_the_input_is_validates_error_in_every_converter(cli, tmp_path):
    from accelconf.accelerate.validate import machine_rank_outside

    in_file = tmp_path / "rank3.yaml"
    in_file.write_text(TWO_MACHINES.replace("machine_rank: 0", "machine_rank: 3"))
    script = tmp_path / "launch.sh"
    script.write_text(
        "accelerate launch --multi_gpu --num_machines 2 --num_processes 4 --machine_rank 3 "
        "--main_process_ip 10.0.0.1 train.py\n"
    )
    for path in (in_file, script):
        for command in ("to-env", "to-cli", "to-kwargs", "explain"):
            r = cli(command, str(path))
            assert (
                r.code == 1
                and f"error: {'--machine_rank: ' if path == script else ''}{machine_rank_outside(3, 2)} [multi-node]"
                in r.err
            ), (command, r.err)
        assert cli("to-cli", str(path)).out == ""


# -- explain reports what to-env reports -------------------------------------------------------


def test_explain_reports_the_error_findings_of_to_env_and_exits_1(cli, files):
    def errors(text: str) -> list[str]:
        return [line for line in text.splitlines() if ": error: " in line]

    explained = cli("explain", files["half.yaml"])
    converted = cli("to-env", files["half.yaml"])
    assert explained.code == converted.code == 1
    assert errors(explained.err) == errors(converted.err) and errors(explained.err)
    row = next(line for line in explained.out.splitlines() if line.startswith("fsdp_config.fsdp_sharding_strategy"))
    assert "HALF_SHARD" in row and "error [invalid-value]" in row
    assert cli("explain", str(EXAMPLES / "fsdp2.yaml")).code == 0


def test_explain_json_lists_the_findings_in_the_published_output_schema(cli, files):
    import json

    import jsonschema

    r = cli("explain", "--format", "json", files["half.yaml"])
    data = json.loads(r.out)
    assert r.code == 1
    schema = json.loads((ROOT / "schemas" / "accelconf-output.schema.json").read_text(encoding="utf-8"))
    schema.pop("oneOf")
    jsonschema.Draft7Validator({**schema, "$ref": "#/$defs/explain"}).validate(data)
    assert schema["$defs"]["explain"]["properties"]["findings"] == {
        "type": "array",
        "items": {"$ref": "#/$defs/finding"},
    }
    assert [(f["rule"], f["key"]) for f in data["findings"] if f["severity"] == "error"] == [
        ("invalid-value", "fsdp_config.fsdp_sharding_strategy")
    ]


def test_explain_reports_a_bad_value_in_the_launch_args_at_the_launch_args(cli, files):
    r = cli("explain", files["two.yaml"], "--launch-args", "--use_fsdp --fsdp_sharding_strategy HALF_SHARD")
    assert r.code == 1 and "--launch-args:1:" in r.err and "HALF_SHARD` is not one of" in r.err


# -- input: a file or '-', empty, undecodable, a directory, too large ----------------------------

# Every command that reads a config, with "{}" where the input goes.
READERS = [
    ("validate", "{}"),
    ("check", "--probe", "none", "{}"),
    ("fmt", "{}"),
    ("migrate", "--to", "fsdp2", "{}"),
    ("convert", "--to", "env", "{}"),
    ("to-env", "{}"),
    ("to-cli", "{}"),
    ("to-kwargs", "{}"),
    ("to-yaml", "{}"),
    ("to-json", "{}"),
    ("explain", "{}"),
    ("diff", "{}", str(EXAMPLES / "fsdp2.yaml")),
    ("diff", str(EXAMPLES / "fsdp2.yaml"), "{}"),
    ("preflight", "--machine-rank", "0", "--timeout", "1", "{}"),
]


def _argv(reader: tuple[str, ...], path: str) -> list[str]:
    return [path if a == "{}" else a for a in reader]


@pytest.mark.parametrize("reader", READERS, ids=lambda r: " ".join(r))
@pytest.mark.parametrize("name", ["empty.yaml", "comments.yaml"])
def test_an_empty_file_is_refused_by_every_command(cli, files, reader, name):
    r = cli(*_argv(reader, files[name]))
    assert r.code == 2
    assert f"{files[name]}:1:1" in r.out + r.err and "empty document: no settings to read" in r.out + r.err
    assert "distributed_type" not in r.out


@pytest.mark.parametrize("reader", READERS, ids=lambda r: " ".join(r))
def test_empty_stdin_is_refused_by_every_command(cli, reader):
    r = cli(*_argv(reader, "-"), stdin=b"\n")
    assert r.code == 2 and "<stdin>:1:1" in r.out + r.err and "empty document" in r.out + r.err


@pytest.mark.parametrize("reader", READERS, ids=lambda r: " ".join(r))
@pytest.mark.parametrize(
    "name, message",
    [
        ("latin1.yaml", "{path}:3:18: {sev}not UTF-8 text (byte 0xe9 at offset 62)"),
        ("folder", "{path}: {sev}is a directory"),
    ],
)
def test_undecodable_bytes_and_a_directory_get_validates_message_in_every_command(cli, files, reader, name, message):
    r = cli(*_argv(reader, files[name]))
    shown = r.out + r.err
    assert r.code == 2
    # validate and check print it as a finding line, the others as accelconf's error line
    sev = "error: " if reader[0] in ("validate", "check") else ""
    assert message.format(path=files[name], sev=sev) in shown, shown
    assert "codec" not in shown and "Errno" not in shown and "Traceback" not in shown


def test_diff_check_and_migrate_read_stdin(cli, files):
    text = (EXAMPLES / "fsdp2.yaml").read_bytes()
    r = cli("diff", "-", str(EXAMPLES / "fsdp2.yaml"), stdin=text)
    assert r.code == 0 and r.out.startswith("--- <stdin>\n") and "equivalent" in r.out
    assert cli("diff", str(EXAMPLES / "legacy.yaml"), "-", stdin=text).code == 1
    r = cli("check", "--probe", "none", "--format", "json", "-", stdin=Path(files["half.yaml"]).read_bytes())
    assert r.code == 1 and '"path": "<stdin>"' in r.out and "HALF_SHARD" in r.out
    r = cli("migrate", "--to", "fsdp2", "-", stdin=FSDP1.encode())
    assert r.code == 0 and "fsdp_version: 2" in r.out and "<stdin>: " in r.err


def test_diff_refuses_stdin_for_both_sides(cli):
    r = cli("diff", "-", "-", stdin=b"distributed_type: 'NO'\n")
    assert r.code == 2 and "only one of A and B" in r.err


def test_validate_reports_a_50_mb_files_true_size(cli, tmp_path):
    big = tmp_path / "big.yaml"
    with open(big, "wb") as fh:
        fh.truncate(50 * 1024 * 1024)  # sparse: nothing is written
    r = cli("validate", str(big))
    assert r.code == 2 and "file is too large (52,428,800 bytes; the limit is 8,388,608)" in r.out


def test_stdin_over_the_limit_reports_its_true_size(cli):
    r = cli("to-env", "-", stdin=b"#" * (9 * 1024 * 1024))
    assert r.code == 2 and "<stdin>: file is too large (9,437,184 bytes" in r.err


def _documented_exit_codes(cli, command: str) -> dict[int, str]:
    """``exit codes: 0 what, 1 what, 2 what`` of a command's --help, as {code: what}."""
    r = cli(command, "--help")
    assert r.code == 0
    text = " ".join(r.out.split("exit codes:", 1)[1].split())
    parts = re.split(r"(?:^|, )(\d) ", text)
    return {int(code): what for code, what in zip(parts[1::2], parts[2::2])}


# What a run's exit code must be documented as: an error exits 1 without --strict, a warning only with it.
CASE_WORDS = {
    "error": ("error", "errors"),
    "strict-warning": ("--strict",),
    "unreadable": ("unreadable", "could not be read"),
}


def _battery(files: dict[str, str]) -> dict[str, list[tuple[str, list[str]]]]:
    """For each command: (case, arguments) runs on a clean, a warning (with --strict where it has
    one), an error and an unreadable input, and what else it documents (differences, files to
    reformat, bad arguments)."""
    clean, legacy = str(EXAMPLES / "fsdp2.yaml"), str(EXAMPLES / "legacy.yaml")
    checked = [
        ("clean", [clean]),
        ("warning", [files["warn.yaml"]]),
        ("error", [files["half.yaml"]]),
        ("unreadable", [files["folder"]]),
        ("strict-warning", ["--strict", files["warn.yaml"]]),
    ]
    return {
        "validate": checked,
        "check": [(case, ["--probe", "none", *argv]) for case, argv in checked],
        "fmt": checked[:4] + [("changes", ["--check", legacy])],
        "migrate": [(case, ["--to", "fsdp2", *argv]) for case, argv in checked[:4]]
        + [("changes", ["--to", "fsdp2", files["fsdp1.yaml"]])],
        "convert": [(case, ["--to", "env", *argv]) for case, argv in checked],
        **{name: checked for name in ("to-env", "to-cli", "to-kwargs", "to-yaml", "to-json", "to-args")},
        "explain": checked[:4],
        "diff": [
            ("clean", [clean, clean]),
            ("changes", [clean, legacy]),
            ("changes", [clean, files["half.yaml"]]),
            ("unreadable", [clean, files["folder"]]),
        ],
        "schema": [("clean", ["accelerate"]), ("clean", ["deepspeed"]), ("usage", ["no-such-schema"])],
        "env": [("clean", ["--probe", "none"]), ("usage", ["--probe", "no-such-probe"])],
        "rules": [("clean", []), ("clean", ["unknown-key"]), ("usage", ["no-such-rule"])],
        "fit": [
            ("clean", ["--params", "8B", "--gpus", "8", "--gpu", "H100-80GB"]),
            ("nothing fits", ["--params", "2T", "--gpus", "1", "--gpu", "T4"]),
            ("usage", ["--params", "8B", "--gpu", "no-such-gpu"]),
        ],
        "lsp": [("usage", ["--no-such-option"])],  # its exit 0 (a session that ends) is run below, in a process
        "preflight": [("unreadable", ["--machine-rank", "0", files["folder"]]), ("usage", ["--machine-rank", "0"])],
    }


# Exit codes only a multi-node job gives: tests/e2e/test_preflight.py starts the nodes that give them.
BY_A_JOB = {"preflight": {0, 1}}


def _lsp_session_exit_code() -> int:
    path = os.pathsep.join(p for p in (str(ROOT), str(ROOT / "lsp"), os.environ.get("PYTHONPATH")) if p)
    return subprocess.run(
        [sys.executable, "-m", "accelconf", "lsp"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=120,
        cwd=ROOT,
        env=dict(os.environ, PYTHONPATH=path),
    ).returncode


def test_every_command_exits_with_the_codes_its_help_documents(cli, files):
    from accelconf.cli import COMMANDS

    battery = _battery(files)
    assert set(battery) == set(COMMANDS)
    for command, runs in battery.items():
        documented = _documented_exit_codes(cli, command)
        seen = {_lsp_session_exit_code()} if command == "lsp" else set()
        for case, argv in runs:
            code = cli(command, *argv).code
            seen.add(code)
            what = documented.get(code, "")
            assert what, f"{command} {argv}: exit {code} is not in its --help ({documented})"
            if code == 1 and case == "error":
                assert any(w in what.split() for w in CASE_WORDS[case]) and not what.startswith("with --strict"), (
                    command,
                    what,
                )
            elif case in ("strict-warning", "unreadable") and code != 0:
                assert any(w in what for w in CASE_WORDS[case]), (command, case, what)
        assert seen | BY_A_JOB.get(command, set()) == set(documented), command
