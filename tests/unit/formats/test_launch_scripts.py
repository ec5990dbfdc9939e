"""Launch scripts (``accelconf.formats.cli.read_script``, ``accelconf.formats.shell``): every
``accelerate launch`` of a shell or sbatch script, each with its flags, environment and findings at
the line and column of the original file."""

from __future__ import annotations

from pathlib import Path

import pytest

from accelconf.errors import InputError
from accelconf.formats import cli as C
from accelconf.formats import shell

CORPUS = Path(__file__).resolve().parents[4] / "shared" / "corpus" / "trainer" / "scripts"

SCRIPT = """#!/bin/bash
#SBATCH --nodes=2
export ACCELERATE_NUM_PROCESSES=4   # read by nothing
export WANDB_PROJECT=x
NGPU=8
MASTER=$(scontrol show hostnames | head -n 1)

CUDA_VISIBLE_DEVICES=0,1,2,3 accelerate launch --multi_gpu \\
    --num_processes $NGPU \\
    --mixed_precision_type bf16 \\
    --main_process_ip $MASTER \\
    train.py --lr 1e-4 --bogus_trainer_flag

srun python3 -m accelerate.commands.launch --use_fsdp --fsdp_sharding_strategy HALF_SHARD \\
    --mixed_precision bf17 --num_machines two --cpu=1 train.py
"""


def _where(findings) -> list[tuple[str, str, int, int]]:
    return [(f.rule, f.severity, f.line, f.column) for f in findings]


def test_read_script_finds_every_launch_with_its_line_and_column() -> None:
    first, second = C.read_script(SCRIPT, "job.sh")
    assert (first.line, first.column) == (8, 30) and (second.line, second.column) == (14, 6)  # python3, after srun
    assert first.config.get("num_processes") == 8  # NGPU=8, assigned once before the launch
    assert first.config.entries["num_processes"].line == 9
    assert second.config.get("distributed_type") == "FSDP"


def test_read_script_reports_every_bad_flag_at_its_line_and_column() -> None:
    _, second = C.read_script(SCRIPT, "job.sh")
    assert _where(second.findings) == [
        ("cli.invalid-choice", "error", 15, 5),
        ("cli.bad-value", "error", 15, 28),
        ("cli.bad-value", "error", 15, 47),
        ("env.never-read", "warning", 3, 8),
        ("invalid-value", "error", 14, 55),
    ]
    messages = [f.message for f in second.findings]
    assert messages[0] == "--mixed_precision: invalid choice: 'bf17' (accelerate 1.15 accepts no, fp16, bf16, fp8)"
    assert messages[1] == "--num_machines: invalid literal for int() with base 10: 'two'"
    assert messages[2] == "--cpu takes no value"
    assert messages[4].startswith(
        "--fsdp_sharding_strategy: `fsdp_sharding_strategy: HALF_SHARD` is not one of FULL_SHARD"
    )


def test_read_script_unknown_flag_gets_the_flag_meant() -> None:
    first, _ = C.read_script(SCRIPT, "job.sh")
    unknown = [f for f in first.findings if f.rule == "cli.unknown-flag"]
    assert [(f.line, f.column, f.message) for f in unknown] == [
        (
            10,
            5,
            "unknown accelerate launch flag --mixed_precision_type (accelerate refuses the command line); "
            "did you mean --mixed_precision?",
        )
    ]
    # a misspelling YAML keys know gets the same answer as a flag
    (launch,) = C.read_script("accelerate launch --fsdp_cpu_offload true train.py\n")
    assert launch.findings[0].message.endswith("did you mean --fsdp_offload_params?")


def test_read_script_training_script_arguments_are_not_accelerate_flags() -> None:
    first, _ = C.read_script(SCRIPT, "job.sh")
    assert all("bogus_trainer_flag" not in f.message for f in first.findings)
    (launch,) = C.read_script("accelerate launch --bogus x train.py --lr 1\n")
    assert [f.rule for f in launch.findings] == ["cli.unknown-flag"]


def test_read_script_a_value_the_script_cannot_know_is_not_read_never_an_error() -> None:
    first, _ = C.read_script(SCRIPT, "job.sh")
    assert "main_process_ip" not in first.config
    notes = [(n.rule, n.severity, n.line, n.column) for n in first.config.notes if n.rule == "cli.not-read"]
    assert notes == [("cli.not-read", "info", 11, 23)]
    assert not [f for f in first.findings if f.severity == "error" and "MASTER" in f.message]


def test_read_script_a_variable_assigned_twice_or_from_the_caller_is_not_known() -> None:
    text = "N=2\nif x; then N=4; fi\naccelerate launch --num_processes $N --num_machines ${NODES:-1} train.py\n"
    (launch,) = C.read_script(text)
    assert "num_processes" not in launch.config and "num_machines" not in launch.config
    assert [n.column for n in launch.config.notes if n.rule == "cli.not-read"] == [35, 53]


def test_read_script_an_unknown_word_where_the_script_may_stand_ends_the_flags() -> None:
    (launch,) = C.read_script("accelerate launch --num_processes 2 $SCRIPT --not_an_accelerate_flag\n")
    assert launch.config.get("num_processes") == 2 and launch.findings == []
    assert [n.rule for n in launch.config.notes] == ["cli.not-read"]


def test_read_script_environment_of_a_launch_is_its_exports_and_its_prefix_assignments() -> None:
    first, second = C.read_script(SCRIPT, "job.sh")
    assert first.env == {
        "ACCELERATE_NUM_PROCESSES": ("4", 3, 8),
        "WANDB_PROJECT": ("x", 4, 8),
        "CUDA_VISIBLE_DEVICES": ("0,1,2,3", 8, 1),
    }
    assert "CUDA_VISIBLE_DEVICES" not in second.env  # a prefix assignment is for its own command only
    never = [f for f in first.findings if f.rule == "env.never-read"]
    assert [(f.line, f.column, f.message) for f in never] == [
        (
            3,
            8,
            "ACCELERATE_NUM_PROCESSES is read by nothing; use torchrun "
            "--nproc_per_node / accelerate launch --num_processes",
        )
    ]


def test_read_script_config_file_is_named_not_read() -> None:
    (launch,) = C.read_script("accelerate launch --config_file 'my cfg.yaml' --num_processes 2 train.py\n")
    assert launch.config_file == "my cfg.yaml" and launch.config.get("num_processes") == 2


def test_read_script_of_a_script_without_accelerate_launch_is_empty() -> None:
    text = "torchrun --nproc_per_node 8 train.py --deepspeed ds.json --bf16 true\ndeepspeed train.py --fp16\n"
    assert C.read_script(text) == []


def test_read_one_line_command_keeps_working_and_names_the_first_of_several() -> None:
    cfg = C.read("accelerate launch --num_processes 2 --multi_gpu a.py\naccelerate launch --cpu b.py\n")
    assert cfg.get("num_processes") == 2
    assert [n.message for n in cfg.notes if n.rule == "cli.several-launches"] == [
        "2 accelerate launch commands: read the first (line 1)"
    ]


def test_read_one_line_raises_at_the_first_refusal_with_its_position() -> None:
    with pytest.raises(InputError) as err:
        C.read("accelerate launch --num_processes 2 \\\n  --bogus 1 --worse 2 train.py\n", path="l.sh")
    assert (err.value.line, err.value.column) == (2, 3)


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("a 'b c' \"d $X e\" f\\ g", ["a", "b c", "d ${X} e", "f g"]),
        ("a \\\n  b # c d\n", ["a", "b"]),
        ("a > log.txt 2>&1 b", ["a", "b"]),
        ("a $(x y) `z w` ${Y:-1} $1", ["a", "$(x y)", "`z w`", "${Y:-1}", "$1"]),
    ],
)
def test_shell_words_as_the_shell_splits_them(text: str, words: list[str]) -> None:
    (cmd,) = shell.commands(text)
    assert [w.raw for w in cmd] == words


def test_shell_commands_are_split_at_separators() -> None:
    cmds = shell.commands("a; b && c || d | e & f\n(g)\n")
    assert [[w.raw for w in c] for c in cmds] == [["a"], ["b"], ["c"], ["d"], ["e"], ["f"], ["g"]]


@pytest.mark.parametrize(
    ("text", "message", "column"),
    [
        ("a 'b", "unterminated single quote", 3),
        ('a "b', "unterminated double quote", 3),
        ("a $(b", "unterminated $(", 3),
        ("a `b", "unterminated backquote", 3),
    ],
)
def test_shell_unterminated_quotes_are_input_errors_at_their_position(text: str, message: str, column: int) -> None:
    with pytest.raises(InputError) as err:
        shell.commands(text, "s.sh")
    assert (err.value.message, err.value.line, err.value.column) == (message, 1, column)


@pytest.mark.skipif(not CORPUS.is_dir(), reason=f"no corpus at {CORPUS}")
@pytest.mark.parametrize("path", sorted(CORPUS.glob("*.sh")) if CORPUS.is_dir() else [], ids=lambda p: p.name[:60])
def test_corpus_scripts_read_without_a_traceback_or_a_false_error(path: Path) -> None:
    for launch in C.read_script(path.read_text(encoding="utf-8"), str(path)):
        assert [f for f in launch.findings if f.severity == "error"] == []


# -- explain of a launch script ---------------------------------------------------------------------


def test_explain_of_a_script_reports_every_bad_flag_and_exits_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from accelconf.cli import main

    script = tmp_path / "job.sh"
    script.write_text(
        "accelerate launch --use_fsdp --num_processes 2 --mixed_precision_type bf16 \\\n"
        "   --fsdp_sharding_strategy HALF_SHARD --mixed_precision bf17 train.py --lr 1\n"
    )
    assert main(["explain", str(script)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert [line.split(": ")[0] for line in err[:3]] == [f"{script}:1:48", f"{script}:2:4", f"{script}:2:40"]
    assert "[cli.unknown-flag]" in err[0] and "[invalid-value]" in err[1] and "[cli.invalid-choice]" in err[2]
    assert err[3] == f"accelconf: {script}: accelerate launch refuses 2 flags (each reported above)"


def test_explain_of_launch_args_reports_every_bad_flag(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    from accelconf.cli import main

    cfg = tmp_path / "c.yaml"
    cfg.write_text("distributed_type: MULTI_GPU\nnum_processes: 2\n")
    assert main(["explain", str(cfg), "--launch-args", "--bogus 1 --num_processes x"]) == 2
    err = capsys.readouterr().err
    assert "--launch-args:1:1: error: unknown accelerate launch flag --bogus" in err
    assert "--launch-args:1:11: error: --num_processes: invalid literal for int()" in err


def test_explain_of_a_script_explains_each_launch_with_its_environment(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    import json

    from accelconf.cli import main

    script = tmp_path / "job.sh"
    script.write_text(
        "export ACCELERATE_MIXED_PRECISION=fp16\nN=2\naccelerate launch --multi_gpu --num_processes $N a.py\n"
        "accelerate launch --cpu --mixed_precision bf16 b.py\n"
    )
    assert main(["explain", str(script), "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    from tests.cli.test_output_contract import _check

    _check("explain", out)  # the output contract: the first launch at the top, every launch in `launches`
    first, second = out["launches"]
    assert (first["line"], first["mode"], second["line"], second["mode"]) == (3, "torchrun", 4, "simple")
    assert (out["mode"], out["settings"]) == (first["mode"], first["settings"])
    mp = next(r for r in first["settings"] if r["setting"] == "mixed_precision")
    # the launcher writes the variable itself: the script's export never reaches the process
    assert mp["value"] == "no" and "replaces ACCELERATE_MIXED_PRECISION=fp16" in mp["note"]
    assert next(r for r in first["settings"] if r["setting"] == "num_processes")["value"] == 2
    assert next(r for r in second["settings"] if r["setting"] == "mixed_precision")["value"] == "bf16"


def test_explain_of_a_script_reads_the_config_file_its_launch_names(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import json

    from accelconf.cli import main

    (tmp_path / "fsdp.yaml").write_text("distributed_type: FSDP\nnum_processes: 4\nmixed_precision: bf16\n")
    script = tmp_path / "run.sh"
    script.write_text(
        "accelerate launch --config_file fsdp.yaml --num_processes 2 train.py\n"
        "accelerate launch --config_file nope.yaml train.py\n"
    )
    monkeypatch.chdir(tmp_path)
    assert main(["explain", "run.sh", "--format", "json"]) == 0
    cap = capsys.readouterr()
    first, second = json.loads(cap.out)["launches"]
    rows = {r["setting"]: r for r in first["settings"]}
    assert (rows["num_processes"]["value"], rows["num_processes"]["source"]) == (2, "cli")  # the flag beats the file
    assert (rows["mixed_precision"]["value"], rows["mixed_precision"]["where"]) == ("bf16", "fsdp.yaml:3")
    assert first["mode"] == "torchrun" and second["mode"] == "simple"
    assert "run.sh:2:1: info: --config_file 'nope.yaml' not found from here or beside the script" in cap.err


@pytest.mark.parametrize(
    "command",
    [
        "~/.local/bin/accelerate launch",
        "uv run accelerate launch",
        "accelerate-launch",
        "/usr/bin/python3.11 -m accelerate.commands.launch",
        "env A=1 accelerate launch",
    ],
)
def test_read_script_finds_every_spelling_of_the_launch_command(command: str) -> None:
    (launch,) = C.read_script(f"echo start\n{command} --num_processes 3 train.py\n")
    assert launch.config.get("num_processes") == 3 and launch.line == 2


def test_validate_of_a_launch_script_reports_every_bad_flag_of_every_launch_at_its_line_and_column() -> None:
    from accelconf import api

    got = api.validate_source(SCRIPT, "job.sh")
    errors = [(f.rule, f.line, f.column) for f in got if f.severity == "error"]
    assert errors == [
        ("cli.unknown-flag", 10, 5),
        ("invalid-value", 14, 55),
        ("cli.invalid-choice", 15, 5),
        ("cli.bad-value", 15, 28),
        ("cli.bad-value", 15, 47),
    ]
    assert ("cli.not-read", 11, 23) in {(f.rule, f.line, f.column) for f in got}
