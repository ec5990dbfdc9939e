"""The ``accelerate launch`` flag format (``accelconf.formats.cli``), pinned value by value.

Reader: the command-line prefixes, comments and continuations, every flag kind (store_true with and
without ``=value``, int, float, ``type=bool``, ``str_to_bool``, three booleans, strings), paradigm
flags, launcher-only flags, ``--config_file``/``--no_tpu_cluster``, flags a version lacks, ``-q`` and
the training script, each entry's origin. Writer ``flags_for``: the exact flag list and every
finding (rule, severity, message, key, position) of each launch path, the 0.20-0.25 sharding-strategy
numbers, the fp8 backend flag by version, the restricted choices (``flag_choices``) and the
self-check. Written from the survivors of ``make mutants`` (bench/MUTANTS.md).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from accelconf import formats
from accelconf.accelerate import registry
from accelconf.accelerate.launch import launch_env
from accelconf.accelerate.model import Config, Entry
from accelconf.errors import InputError
from accelconf.findings import Finding
from accelconf.formats import cli as C


@pytest.fixture(autouse=True)
def _cwd(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)  # the DeepSpeed path exports PYTHONPATH=<working directory>


# -- reader -----------------------------------------------------------------------------------------


def _at(text: str, word: str) -> tuple[int, int]:
    """The 1-based line and column of a word's first occurrence in a text."""
    before = text[: text.index(word)]
    return before.count("\n") + 1, len(before) - (before.rfind("\n") + 1) + 1


def _entry(path: str, value: object, flag: str, where: str | None = None, text: str = "", spelled: str = "") -> Entry:
    section, _, key = path.rpartition(".")
    line, col = _at(text, spelled or f"--{flag}") if text else (1, 1)
    return Entry(path, value, registry.get(section, key), f"--{flag}", line, col, "cli", where or f"--{flag}")


def _launcher(flag: str, value: object, text: str = "", spelled: str = "") -> Entry:
    line, col = _at(text, spelled or f"--{flag}") if text else (1, 1)
    if spelled.startswith(" "):
        col += 1
    return Entry(f"--{flag}", value, None, f"--{flag}", line, col, "cli", f"--{flag}")


def _placed(entries: dict[str, Entry], text: str) -> dict[str, Entry]:
    """The entries at the position of their flag in the text (those placed already kept)."""
    for e in entries.values():
        if (e.line, e.column) == (1, 1):
            e.line, e.column = _at(text, e.written_key)
    return entries


MULTI_GPU_NOTE = (
    "--multi_gpu: read as distributed_type MULTI_GPU; accelerate takes the device type from the hardware it "
    "runs on (MULTI_NPU, MULTI_MLU, MULTI_SDAA, MULTI_MUSA, MULTI_XPU, MULTI_HPU, MULTI_NEURON on other accelerators)"
)


def test_read_every_flag_kind() -> None:
    text = (
        "# a launch script\naccelerate launch --multi-gpu --num_processes=4 \\\n"
        "  --mixed_precision bf16 --fsdp_offload_params true "
        "--megatron_lm_use_custom_fsdp '' --megatron_lm_sequence_parallelism '' \\\n"
        "  --fp8_override_linear_precision 1,0,true --fp8_use_autocast_during_eval --gradient_clipping 0.5 \\\n"
        "  --max_restarts 3 --module --monitor_interval=2 --tee 3 -q train.py --lr 1 --use_fsdp\n"
    )
    cfg = C.read(text, path="l.sh")
    assert (cfg.source, cfg.format) == ("l.sh", "cli")
    assert dict(cfg.items()) == _placed(
        {
            "distributed_type": _entry(
                "distributed_type",
                "MULTI_GPU",
                "multi_gpu",
                "--multi_gpu (device type from the hardware)",
                text,
                "--multi-gpu",
            ),
            "num_processes": _entry("num_processes", 4, "num_processes"),
            "mixed_precision": _entry("mixed_precision", "bf16", "mixed_precision"),
            "fsdp_config.fsdp_offload_params": _entry("fsdp_config.fsdp_offload_params", "true", "fsdp_offload_params"),
            # type=bool: the empty string is False, anything else True
            "megatron_lm_config.megatron_lm_use_custom_fsdp": _entry(
                "megatron_lm_config.megatron_lm_use_custom_fsdp", False, "megatron_lm_use_custom_fsdp"
            ),
            "megatron_lm_config.megatron_lm_sequence_parallelism": _entry(
                "megatron_lm_config.megatron_lm_sequence_parallelism", "", "megatron_lm_sequence_parallelism"
            ),
            "fp8_config.override_linear_precision": _entry(
                "fp8_config.override_linear_precision", (True, False, True), "fp8_override_linear_precision"
            ),
            "fp8_config.use_autocast_during_eval": _entry(
                "fp8_config.use_autocast_during_eval", True, "fp8_use_autocast_during_eval"
            ),
            "deepspeed_config.gradient_clipping": _entry(
                "deepspeed_config.gradient_clipping", 0.5, "gradient_clipping"
            ),
        },
        text,
    )
    assert type(cfg.get("fp8_config.override_linear_precision")[0]) is bool
    # -q is accelerate's short spelling of --quiet
    assert cfg.unknown == _placed(
        {
            "--max_restarts": _launcher("max_restarts", 3),
            "--module": _launcher("module", True),
            "--monitor_interval": _launcher("monitor_interval", 2.0),
            "--tee": _launcher("tee", "3"),
            "--quiet": _launcher("quiet", True, text, " -q"),
        },
        text,
    )
    assert cfg.notes == [
        Finding("convert.input", "info", MULTI_GPU_NOTE),
        Finding("convert.input", "info", "training script 'train.py' and its arguments are not settings: ignored"),
    ]


def test_read_str_to_bool_flags_are_booleans_and_type_bool_flags_any_text() -> None:
    cfg = C.read("--fp8_override_linear_precision 0,1,0 --megatron_lm_use_custom_fsdp False")
    assert cfg.get("fp8_config.override_linear_precision") == (False, True, False)
    assert cfg.get("megatron_lm_config.megatron_lm_use_custom_fsdp") is True  # bool("False")
    s = registry.get("fp8_config", "use_autocast_during_eval")
    assert s is not None and C._config_value("str_to_bool", 1) is True and C._config_value("str_to_bool", 0) is False
    assert C._config_value("str_to_bool", "x") == "x" and C._config_value("list3", [1, 0]) == [1, 0]
    assert C._config_value("list3", (1, 0, 1)) == (True, False, True) and C._config_value("int", 1) == 1


@pytest.mark.parametrize(
    "prefix", ["accelerate launch", "accelerate-launch", "python -m accelerate.commands.launch", ""]
)
def test_read_prefixes(prefix: str) -> None:
    cfg = C.read(f"{prefix} --use_deepspeed --zero_stage 2\n")
    assert {p: e.value for p, e in cfg.items()} == {"distributed_type": "DEEPSPEED", "deepspeed_config.zero_stage": 2}
    assert cfg.notes == []


def test_read_paradigms_config_file_and_no_tpu_cluster() -> None:
    text = "--config_file c.yaml --no_tpu_cluster --tpu --use_deepspeed --use_megatron_lm"
    cfg = C.read(text)
    assert dict(cfg.items()) == _placed(
        {
            "tpu_use_cluster": _entry("tpu_use_cluster", False, "no_tpu_cluster"),
            "distributed_type": _entry("distributed_type", "MEGATRON_LM", "use_megatron_lm"),
        },
        text,
    )
    assert cfg.notes == [
        Finding("convert.input", "info", "--config_file 'c.yaml': read that file separately", "", 1, 1)
    ]
    for flag, dtype in (("--tpu", "XLA"), ("--use_fsdp", "FSDP"), ("--use_deepspeed", "DEEPSPEED")):
        cfg = C.read(flag)
        assert cfg.entries["distributed_type"] == _entry("distributed_type", dtype, flag[2:]) and cfg.notes == []


def test_read_store_true_flags() -> None:
    cfg = C.read("--dynamo_use_fullgraph --cpu --debug --dynamo_backend inductor")
    assert {p: e.value for p, e in cfg.items()} == {
        "dynamo_config.dynamo_use_fullgraph": True,
        "use_cpu": True,
        "debug": True,
        "dynamo_config.dynamo_backend": "inductor",
    }


@pytest.mark.parametrize(
    ("flags", "version"),
    [
        ("--mixed_precision BF16", "1.15"),
        ("--dynamo_backend INDUCTOR", "1.15"),
        ("--fp8_backend ao", "1.12"),
        ("--fsdp_version 3", "1.15"),
    ],
)
def test_read_refuses_a_value_the_flag_does_not_accept(flags: str, version: str) -> None:
    """argparse's choices are case-sensitive: accelerate launch refuses these command lines before
    reading anything (tests/oracle/test_oracle_launch.py compares the choices with its parser)."""
    with pytest.raises(
        InputError, match=f"^<text>:1:1: --[a-z0-9_]+: invalid choice: '[^']+' \\(accelerate {version} accepts "
    ):
        C.read(flags, version=version)


def test_read_flags_a_version_lacks_are_notes() -> None:
    cfg = C.read("--fsdp_version 2 --parallelism_config_tp_size 2 --num_processes 2", version="1.0")
    assert {p: e.value for p, e in cfg.items()} == {
        "fsdp_config.fsdp_version": "2",
        "parallelism_config.parallelism_config_tp_size": 2,
        "num_processes": 2,
    }
    assert cfg.notes == [
        Finding("convert.input", "info", "--fsdp_version does not exist in accelerate 1.0", "", 1, 1),
        Finding("convert.input", "info", "--parallelism_config_tp_size does not exist in accelerate 1.0", "", 1, 18),
    ]
    assert C.read("--fsdp_version 2 --parallelism_config_tp_size 2", version="1.15").notes == []


@pytest.mark.parametrize(
    ("text", "message", "column"),
    [
        ("--use_fsdp=true x.py", "--use_fsdp takes no value", 1),
        ("--cpu=1", "--cpu takes no value", 1),
        ("--module=1", "--module takes no value", 1),
        ("python -m accelerate.commands.launch --num_processes", "--num_processes needs a value", 38),
        ("--max_restarts", "--max_restarts needs a value", 1),
        ("--num_processes x", "--num_processes: invalid literal for int() with base 10: 'x'", 1),
        ("--max_restarts=x", "--max_restarts: invalid literal for int() with base 10: 'x'", 1),
        ("--fp8_override_linear_precision 1,maybe,0", "--fp8_override_linear_precision: invalid truth value maybe", 1),
        ("--bogus 1", "unknown accelerate launch flag --bogus (accelerate refuses the command line)", 1),
        (
            "--mixed-precison bf16",
            "unknown accelerate launch flag --mixed_precison (accelerate refuses the command line); "
            "did you mean --mixed_precision?",
            1,
        ),
        ("accelerate launch 'unclosed", "unterminated single quote", 19),
    ],
)
def test_read_errors(text: str, message: str, column: int) -> None:
    with pytest.raises(InputError) as err:
        C.read(text, path="l.sh")
    assert (err.value.message, err.value.path, err.value.line, err.value.column) == (message, "l.sh", 1, column)


def test_read_stops_at_the_script_and_reads_q_as_quiet() -> None:
    cfg = C.read("-q --num_processes 2 -q run.py --num_processes 8")
    assert cfg.get("num_processes") == 2 and cfg.unknown["--quiet"].value is True
    assert [n.message for n in cfg.notes] == ["training script 'run.py' and its arguments are not settings: ignored"]
    assert C.read("").entries == {} and C.read("# only a comment\n").notes == []


# -- writer helpers ---------------------------------------------------------------------------------


def _setting(section: str, key: str) -> registry.Setting:
    s = registry.get(section, key)
    assert s is not None
    return s


@pytest.mark.parametrize(
    ("section", "key", "value", "text"),
    [
        ("fp8_config", "override_linear_precision", [True, False, True], "true,false,true"),
        ("fp8_config", "override_linear_precision", (False, False, True), "false,false,true"),
        ("fp8_config", "fp8_format", "E4M3", "E4M3"),
        ("megatron_lm_config", "megatron_lm_use_custom_fsdp", True, "True"),
        ("megatron_lm_config", "megatron_lm_use_custom_fsdp", False, ""),
        ("megatron_lm_config", "megatron_lm_use_custom_fsdp", "x", "True"),
        ("megatron_lm_config", "megatron_lm_sequence_parallelism", False, "False"),
        ("", "mixed_precision", "BF16", "bf16"),
        ("dynamo_config", "dynamo_backend", "INDUCTOR", "inductor"),
        ("fp8_config", "backend", "TE", "te"),
        ("fp8_config", "opt_level", "O1", "O1"),
        ("", "num_processes", 4.0, "4"),
        ("", "num_processes", 4.5, "4.5"),
        ("deepspeed_config", "gradient_clipping", 1.0, "1.0"),
        ("fsdp_config", "fsdp_sharding_strategy", "FULL_SHARD", "FULL_SHARD"),
    ],
)
def test_cli_string(section: str, key: str, value: object, text: str) -> None:
    assert C._cli_string(_setting(section, key), value) == text


def test_cli_string_of_a_str_to_bool_flag() -> None:
    s = next(s for s in registry.SETTINGS if s.flag and C.flag_kind(s) == "str_to_bool")
    assert C._cli_string(s, True) == "true" and C._cli_string(s, False) == "false" and C._cli_string(s, 1) == "1"


def test_flag_choices_by_version() -> None:
    backend = _setting("fp8_config", "backend")
    assert C.flag_choices(backend, "1.13") == ("te", "msamp", "ao")
    assert C.flag_choices(backend, "1.12") == ("te", "msamp")
    assert C.flag_choices(_setting("", "mixed_precision"), "1.0") == ("no", "fp16", "bf16", "fp8")
    assert C.flag_choices(_setting("fsdp_config", "fsdp_version"), "1.15") == ("1", "2")
    assert C.flag_choices(_setting("fp8_config", "opt_level"), "1.15") == ("O1", "O2")
    assert C.flag_choices(_setting("parallelism_config", "parallelism_config_cp_comm_strategy"), "1.15") == (
        "allgather",
        "alltoall",
    )
    assert C.flag_choices(_setting("", "num_processes"), "1.15") is None
    dyn = C.FLAG_CHOICES["dynamo_config.dynamo_backend"]
    assert dyn[0] == "no" and dyn[-1] == "torhchxla_trace_once" and "inductor" in dyn
    assert not {"neuron", "hpu_backend", "torchxla_trace_once"} & set(dyn)


def test_strategy_number() -> None:
    s = _setting("fsdp_config", "fsdp_sharding_strategy")
    assert [C._strategy_number(s, n) for n in registry.SHARDING_STRATEGIES] == [1, 2, 3, 4, 5]
    assert (
        C._strategy_number(s, "shard_grad_op") == 2
        and C._strategy_number(s, 3) == 3
        and C._strategy_number(s, "X") == "X"
    )


def test_int_and_out_names() -> None:
    assert (C._int("2"), C._int(3), C._int(None), C._int("x")) == (2, 3, 0, 0)
    assert C._out_names(["--a", "1", "--b_c", "x--y"]) == {"a", "b_c"}


def test_format_flags() -> None:
    assert C.format_flags([]) == "accelerate launch\n"
    assert C.format_flags(["--use_fsdp", "--num_processes", "2", "--gpu_ids", "0,1 2", "--debug"]) == (
        "accelerate launch \\\n    --use_fsdp \\\n    --num_processes 2 \\\n    --gpu_ids '0,1 2' \\\n    --debug\n"
    )


# -- flags_for ----------------------------------------------------------------------------------------


def flags(text: str, version: str = "1.15", machine_rank: int | None = None):
    fl, findings = C.flags_for(formats.read(text, "yaml"), version, machine_rank)
    return fl, [(f.rule, f.severity, f.message, f.key, f.line, f.column) for f in findings]


def L(severity: str, message: str, key: str, line: int = 0, column: int = 0, rule: str = "convert.lossy"):
    return (rule, severity, message, key, line, column)


def test_one_process_multi_gpu_is_written_without_the_flag() -> None:
    fl, found = flags("distributed_type: MULTI_GPU\nnum_processes: 1\n")
    assert fl == ["--num_processes", "1"]
    assert found == [
        L(
            "warning",
            "`distributed_type: MULTI_GPU` with one process cannot be given as --multi_gpu "
            "(accelerate refuses it with fewer than 2 processes): written without it, the "
            "script runs as one plain process instead of a one-process group under torchrun",
            "distributed_type",
            1,
            1,
        ),
        L(
            "warning",
            "ACCELERATE_USE_CPU differs without the config file: None from the file, 'False' from the flags",
            "use_cpu",
        ),
    ]


def test_multi_device_type_on_the_simple_launcher_of_0_20() -> None:
    fl, found = flags("distributed_type: MULTI_NPU\nnum_processes: 2\n", "0.20")
    assert fl == ["--num_processes", "2"]
    assert found == [
        L(
            "info",
            "`distributed_type: MULTI_NPU` runs the simple launcher in this accelerate version; written "
            "without --multi_gpu (which would start torchrun)",
            "distributed_type",
            1,
            1,
        )
    ]
    fl, found = flags("num_processes: 2\ndistributed_type: MULTI_NPU\n")
    assert fl == ["--multi_gpu", "--num_processes", "2"]
    assert found == [
        L(
            "warning",
            "`distributed_type: MULTI_NPU` cannot be given as a flag: --multi_gpu leaves the device type "
            "to the hardware accelerate runs on (read back as MULTI_GPU)",
            "distributed_type",
            2,
            1,
        )
    ]


def test_deepspeed_flags_use_cpu_and_dynamo() -> None:
    fl, found = flags(
        "distributed_type: DEEPSPEED\nnum_processes: 2\nuse_cpu: true\ndeepspeed_config:\n  zero_stage: 2\n"
        "  zero3_init_flag: false\n  offload_optimizer_device: none\ndynamo_config:\n  dynamo_backend: INDUCTOR\n"
    )
    assert fl == [
        "--use_deepspeed",
        "--num_processes",
        "2",
        "--zero_stage",
        "2",
        "--zero3_init_flag",
        "False",
        "--offload_optimizer_device",
        "none",
    ]
    assert found == [
        L(
            "warning",
            "use_cpu is not written as --cpu on the deepspeed path (which would switch to the simple "
            "launcher), but in the file it sets OMP_NUM_THREADS from the physical cores of the machine "
            "that launches (per process from 0.34): add --num_cpu_threads_per_process N for that machine",
            "use_cpu",
            3,
            1,
        ),
        L(
            "info",
            "`dynamo_config.dynamo_backend` is not used on this launch path; not written",
            "dynamo_config.dynamo_backend",
            9,
            3,
        ),
        L(
            "warning",
            "ACCELERATE_CONFIG_DS_FIELDS differs without the config file: "
            "'zero_stage,zero3_init_flag,offload_optimizer_device' from the file, '' from the flags (accelerate "
            "lists the file's deepspeed_config keys; without a file its DeepSpeed JSON conflict check is skipped)",
            "ACCELERATE_CONFIG_DS_FIELDS",
        ),
    ]


def test_use_cpu_with_a_thread_count_from_the_command_line_needs_no_warning() -> None:
    cfg = formats.read("distributed_type: MULTI_GPU\nnum_processes: 2\nuse_cpu: true\n", "yaml")
    cfg.unknown["--num_cpu_threads_per_process"] = _launcher("num_cpu_threads_per_process", 4)
    fl, findings = C.flags_for(cfg, "1.15")
    assert fl == ["--multi_gpu", "--num_processes", "2", "--num_cpu_threads_per_process", "4"]
    assert not any(f.message.startswith("use_cpu is not written") for f in findings)


def test_simple_launcher_cpu() -> None:
    fl, found = flags("distributed_type: 'NO'\nnum_processes: 1\nuse_cpu: true\n")
    assert fl == ["--cpu", "--num_processes", "1"] and found == []


def test_tpu_flags() -> None:
    fl, found = flags(
        "distributed_type: XLA\nnum_processes: 8\nuse_cpu: true\nmain_training_function: main\n"
        "tpu_use_cluster: true\ndowncast_bf16: 'no'\n"
    )
    assert fl == ["--tpu", "--num_processes", "8", "--main_training_function", "main", "--tpu_cluster"]
    assert found == [
        L(
            "info",
            "use_cpu is not used on the tpu path; not written as --cpu (which would switch to the simple launcher)",
            "use_cpu",
            3,
            1,
        )
    ]


def test_main_training_function_and_tpu_cluster_only_on_tpu() -> None:
    fl, found = flags(
        "distributed_type: MULTI_GPU\nnum_processes: 2\nmain_training_function: main\ntpu_use_cluster: true\n"
        "mixed_precision: bf16\n"
    )
    assert fl == ["--multi_gpu", "--num_processes", "2", "--mixed_precision", "bf16"] and found == []


def test_megatron_flags() -> None:
    fl, found = flags(
        "distributed_type: MEGATRON_LM\nnum_processes: 2\nmegatron_lm_config:\n  megatron_lm_tp_degree: 2\n"
        "  megatron_lm_sequence_parallelism: true\n  megatron_lm_use_distributed_optimizer: false\n"
    )
    assert fl == [
        "--use_megatron_lm",
        "--num_processes",
        "2",
        "--megatron_lm_tp_degree",
        "2",
        "--megatron_lm_sequence_parallelism",
        "True",
        "--megatron_lm_use_distributed_optimizer",
        "False",
    ]
    assert found == []


def test_fsdp_sharding_strategy_is_a_number_before_0_26() -> None:
    fl, found = flags(
        "distributed_type: FSDP\nnum_processes: 2\nfsdp_config:\n  fsdp_sharding_strategy: SHARD_GRAD_OP\n"
        "  fsdp_offload_params: false\n",
        "0.20",
    )
    assert fl == [
        "--use_fsdp",
        "--num_processes",
        "2",
        "--fsdp_sharding_strategy",
        "2",
        "--fsdp_offload_params",
        "False",
    ]
    assert found == [
        L(
            "warning",
            "FSDP_SHARDING_STRATEGY differs without the config file: 'SHARD_GRAD_OP' from the file, '2' "
            "from the flags (before accelerate 0.26 the flag takes only the strategy's number; the file's name passes "
            "through to FullyShardedDataParallelPlugin, which calls int() on it)",
            "fsdp_config.fsdp_sharding_strategy",
        )
    ]
    fl, found = flags(
        "distributed_type: FSDP\nnum_processes: 2\nfsdp_config:\n  fsdp_sharding_strategy: SHARD_GRAD_OP\n"
        "  fsdp_version: 2\n"
    )
    assert fl == [
        "--use_fsdp",
        "--num_processes",
        "2",
        "--fsdp_sharding_strategy",
        "SHARD_GRAD_OP",
        "--fsdp_version",
        "2",
    ]
    assert found == []


def test_a_key_the_version_does_not_read() -> None:
    fl, found = flags(
        "distributed_type: FSDP\nnum_processes: 2\nfsdp_config:\n  fsdp_version: 2\n"
        "  fsdp_auto_wrap_policy: TRANSFORMER_BASED_WRAP\n",
        "1.5",
    )
    assert fl == ["--use_fsdp", "--num_processes", "2", "--fsdp_auto_wrap_policy", "TRANSFORMER_BASED_WRAP"]
    assert found == [
        L(
            "info",
            "`fsdp_config.fsdp_version` is not read by accelerate 1.5; not written",
            "fsdp_config.fsdp_version",
            4,
            3,
        )
    ]
    fl, found = flags(
        "distributed_type: MULTI_GPU\nnum_processes: 2\ndynamo_config:\n  dynamo_backend: inductor\n"
        "  dynamo_use_regional_compilation: true\n",
        "1.0",
    )
    assert fl == ["--multi_gpu", "--num_processes", "2", "--dynamo_backend", "inductor"]
    assert found == [
        L(
            "info",
            "`dynamo_config.dynamo_use_regional_compilation` is not read by accelerate 1.0; not written",
            "dynamo_config.dynamo_use_regional_compilation",
            5,
            3,
        )
    ]


def test_parallelism_config_with_fsdp() -> None:
    fl, found = flags(
        "distributed_type: FSDP\nnum_processes: 2\nfsdp_config:\n  fsdp_version: 2\nparallelism_config:\n"
        "  parallelism_config_dp_shard_size: 2\n  parallelism_config_cp_size: 1\n"
    )
    assert fl == [
        "--use_fsdp",
        "--num_processes",
        "2",
        "--use_parallelism_config",
        "--fsdp_version",
        "2",
        "--parallelism_config_dp_shard_size",
        "2",
        "--parallelism_config_cp_size",
        "1",
    ]
    assert found == []


def test_parallelism_config_without_fsdp() -> None:
    fl, found = flags(
        "distributed_type: MULTI_GPU\nnum_processes: 4\nparallelism_config:\n  parallelism_config_tp_size: 2\n"
        "fsdp_config:\n  fsdp_version: 2\n"
    )
    assert fl == ["--multi_gpu", "--num_processes", "4"]
    assert found[:3] == [
        L(
            "warning",
            "parallelism_config without FSDP cannot be given as flags (--use_parallelism_config requires --use_fsdp); "
            "dropped",
            "parallelism_config",
        ),
        L(
            "warning",
            "`parallelism_config.parallelism_config_tp_size` is exported from the config file, but accelerate refuses "
            "--use_parallelism_config without --use_fsdp (FSDP2): no flag can carry it; dropped",
            "parallelism_config.parallelism_config_tp_size",
            4,
            3,
        ),
        L(
            "info",
            "`fsdp_config.fsdp_version` is not used on this launch path; not written",
            "fsdp_config.fsdp_version",
            6,
            3,
        ),
    ]


def test_multi_machine_flags_and_machine_rank() -> None:
    text = (
        "distributed_type: MULTI_GPU\nnum_processes: 4\nnum_machines: 2\nmain_process_ip: 10.0.0.1\n"
        "main_process_port: 29500\ngpu_ids: all\ncompute_environment: LOCAL_MACHINE\nrdzv_backend: c10d\n"
        "same_network: true\n"
    )
    fl, found = flags(text)
    assert fl == [
        "--multi_gpu",
        "--num_processes",
        "4",
        "--machine_rank",
        "0",
        "--num_machines",
        "2",
        "--main_process_ip",
        "10.0.0.1",
        "--main_process_port",
        "29500",
    ]
    assert found == [
        L(
            "info",
            "`rdzv_backend` is ignored by accelerate in a config file; "
            "not written (passing --rdzv_backend would change the launch)",
            "rdzv_backend",
            8,
            1,
            "convert.file-ignored",
        ),
        L(
            "info",
            "`same_network` is ignored by accelerate in a config file; "
            "not written (passing --same_network would change the launch)",
            "same_network",
            9,
            1,
            "convert.file-ignored",
        ),
    ]
    fl, _ = flags(text, machine_rank=1)
    assert fl == [
        "--multi_gpu",
        "--num_processes",
        "4",
        "--num_machines",
        "2",
        "--main_process_ip",
        "10.0.0.1",
        "--main_process_port",
        "29500",
        "--machine_rank",
        "1",
    ]
    fl, found = flags(text.replace("num_machines: 2\n", "num_machines: 2\nmachine_rank: 1\n"))
    assert fl == [
        "--multi_gpu",
        "--num_processes",
        "4",
        "--num_machines",
        "2",
        "--machine_rank",
        "1",
        "--main_process_ip",
        "10.0.0.1",
        "--main_process_port",
        "29500",
    ]
    # machine_rank in the file and as the argument: the argument's, once
    fl, _ = flags(text.replace("num_machines: 2\n", "num_machines: 2\nmachine_rank: 1\n"), machine_rank=0)
    assert fl.count("--machine_rank") == 1 and fl[-2:] == ["--machine_rank", "0"]


def test_single_machine_keys() -> None:
    fl, found = flags(
        "distributed_type: 'NO'\nnum_processes: 1\nmachine_rank: 0\ngpu_ids: '0'\nenable_cpu_affinity: false\n"
    )
    assert fl == ["--num_processes", "1", "--machine_rank", "0", "--gpu_ids", "0"] and found == []
    fl, found = flags("distributed_type: 'NO'\nnum_processes: 1\nenable_cpu_affinity: true\n")
    assert fl == ["--num_processes", "1"]
    assert found == [
        L(
            "info",
            "`enable_cpu_affinity` is ignored by accelerate in a config file; not written (passing "
            "--enable_cpu_affinity would change the launch)",
            "enable_cpu_affinity",
            3,
            1,
            "convert.file-ignored",
        )
    ]


def test_store_true_flags() -> None:
    fl, found = flags("distributed_type: 'NO'\nnum_processes: 1\ndebug: true\n")
    assert fl == ["--num_processes", "1", "--debug"] and found == []
    fl, found = flags("distributed_type: 'NO'\nnum_processes: 1\ndebug: false\n")
    assert fl == ["--num_processes", "1"] and found == []
    fl, found = flags("distributed_type: 'NO'\nnum_processes: 1\ndebug: 'yes'\n")
    assert fl == ["--num_processes", "1"]
    assert found == [
        L("warning", "`debug: 'yes'` cannot be given as the on/off flag --debug", "debug", 3, 1),
        L(
            "warning",
            "ACCELERATE_DEBUG_MODE differs without the config file: 'true' from the file, None from the flags",
            "debug",
        ),
    ]


def test_dynamo_choices() -> None:
    fl, found = flags(
        "distributed_type: 'NO'\nnum_processes: 1\ndynamo_config:\n  dynamo_backend: NEURON\n"
        "  dynamo_use_fullgraph: true\n  dynamo_mode: max-autotune\n"
    )
    assert fl == ["--num_processes", "1", "--dynamo_use_fullgraph", "--dynamo_mode", "max-autotune"]
    assert found == [
        L(
            "warning",
            "`dynamo_config.dynamo_backend: NEURON` cannot be given as --dynamo_backend (the flag accepts no, eager, "
            "aot_eager, inductor, aot_ts_nvfuser, nvprims_nvfuser, cudagraphs, ofi, fx2trt, onnxrt, tensorrt, "
            "aot_torchxla_trace_once, tvm, torhchxla_trace_once); not written",
            "dynamo_config.dynamo_backend",
            4,
            3,
        ),
        L(
            "warning",
            "ACCELERATE_DYNAMO_BACKEND differs without the config file: 'NEURON' from the file, 'NO' from the flags",
            "dynamo_config.dynamo_backend",
        ),
    ]


FP8_NOT_WRITTEN = (
    "`fp8_config.backend: {b}` cannot be given as --fp8_backend: the flag takes only lowercase, which "
    "Accelerator() rejects in accelerate {v} (FP8BackendType); not written, so accelerate picks the backend "
    "itself (torchao, then TransformerEngine, then MS-AMP, whichever is installed)"
)


def test_fp8_backend_is_not_written_from_1_9() -> None:
    fl, found = flags(
        "distributed_type: 'NO'\nnum_processes: 1\nmixed_precision: FP8\nfp8_config:\n  backend: TE\n"
        "  override_linear_precision: [true, false, true]\n"
    )
    assert fl == [
        "--num_processes",
        "1",
        "--mixed_precision",
        "fp8",
        "--fp8_override_linear_precision",
        "true,false,true",
    ]
    assert found == [
        L("warning", FP8_NOT_WRITTEN.format(b="TE", v="1.15"), "fp8_config.backend", 5, 3),
        L(
            "warning",
            "ACCELERATE_FP8_BACKEND differs without the config file: 'TE' from the file, None from the flags",
            "fp8_config.backend",
        ),
        L(
            "warning",
            "ACCELERATE_FP8_OVERRIDE_DGRAD differs without the config file: 'False' from the file, '0' from the flags",
            "ACCELERATE_FP8_OVERRIDE_DGRAD",
        ),
        L(
            "warning",
            "ACCELERATE_FP8_OVERRIDE_FPROP differs without the config file: 'True' from the file, '1' from the flags",
            "fp8_config.override_linear_precision",
        ),
        L(
            "warning",
            "ACCELERATE_FP8_OVERRIDE_WGRAD differs without the config file: 'True' from the file, '1' from the flags",
            "ACCELERATE_FP8_OVERRIDE_WGRAD",
        ),
    ]
    _, found = flags(
        "distributed_type: 'NO'\nnum_processes: 1\nmixed_precision: fp8\nfp8_config:\n  backend: AO\n", "1.12"
    )
    assert found[0] == L("warning", FP8_NOT_WRITTEN.format(b="AO", v="1.12"), "fp8_config.backend", 5, 3)


def test_fp8_section_only_with_fp8() -> None:
    fl, found = flags("distributed_type: 'NO'\nnum_processes: 1\nmixed_precision: bf16\nfp8_config:\n  backend: TE\n")
    assert fl == ["--num_processes", "1", "--mixed_precision", "bf16"]
    assert found == [
        L("info", "`fp8_config.backend` is not used on this launch path; not written", "fp8_config.backend", 5, 3)
    ]


def test_mpirun_section_is_always_read() -> None:
    fl, found = flags("distributed_type: 'NO'\nnum_processes: 1\nmpirun_config:\n  mpirun_hostfile: /h\n")
    assert fl == ["--num_processes", "1", "--mpirun_hostfile", "/h"] and found == []


# -- _entry_flags branches that no launchable file reaches ---------------------------------------------


def _entry_flags(
    path: str,
    value: object,
    mode: str = "simple",
    ns: dict | None = None,
    sections: set | None = None,
    version: str = "1.15",
    machine_rank: int | None = None,
    no_par: bool = False,
):
    section, _, key = path.rpartition(".")
    s = registry.get(section, key)
    assert s is not None
    e = Entry(path, value, s, key, 7, 3)
    findings: list[Finding] = []
    out = C._entry_flags(
        path,
        e,
        s,
        sections if sections is not None else {"", section},
        no_par,
        mode,
        ns if ns is not None else {s.namespace: value},
        version,
        machine_rank,
        findings,
    )
    return out, [(f.rule, f.severity, f.message, f.key, f.line, f.column) for f in findings]


def test_entry_without_a_flag() -> None:
    assert _entry_flags("tpu_name", "x") == (
        [],
        [L("info", "`tpu_name` is not used by accelerate launch on the simple path; not written", "tpu_name", 7, 3)],
    )
    assert _entry_flags("tpu_name", "x", mode="tpu") == (
        [],
        [L("warning", "`tpu_name` has no accelerate launch flag; dropped", "tpu_name", 7, 3)],
    )
    s = next(s for s in registry.SETTINGS if s.section and not s.flag and s.section != "parallelism_config")
    assert _entry_flags(s.path, 1) == (
        [],
        [L("warning", f"`{s.path}` has no accelerate launch flag; dropped", s.path, 7, 3)],
    )


def test_entry_in_a_section_the_path_does_not_read() -> None:
    assert _entry_flags("parallelism_config.parallelism_config_tp_size", 2, sections={""}) == (
        [],
        [
            L(
                "info",
                "`parallelism_config.parallelism_config_tp_size` is not used on this launch path; not written",
                "parallelism_config.parallelism_config_tp_size",
                7,
                3,
            )
        ],
    )
    assert (
        _entry_flags("parallelism_config.parallelism_config_tp_size", 2, sections={""}, no_par=True)[1][0][1]
        == "warning"
    )
    # a top-level key outside the sections: nothing to say
    assert _entry_flags("debug", True, sections={"fsdp_config"}) == ([], [])
    assert _entry_flags("fsdp_config.fsdp_version", 2, sections={""}, no_par=True) == (
        [],
        [
            L(
                "info",
                "`fsdp_config.fsdp_version` is not used on this launch path; not written",
                "fsdp_config.fsdp_version",
                7,
                3,
            )
        ],
    )


def test_entry_values_read_from_the_namespace() -> None:
    # a section's value comes from the launcher's namespace, a top-level one from the file
    assert _entry_flags("fsdp_config.fsdp_version", 2, ns={"fsdp_version": "1"}) == (["--fsdp_version", "1"], [])
    assert _entry_flags("fsdp_config.fsdp_version", 2, ns={}) == ([], [])
    assert _entry_flags("mixed_precision", "fp16", ns={}) == (["--mixed_precision", "fp16"], [])
    assert _entry_flags("gpu_ids", "all") == ([], []) and _entry_flags("gpu_ids", "0,1") == (["--gpu_ids", "0,1"], [])
    assert _entry_flags("machine_rank", 1, machine_rank=0) == ([], [])
    assert _entry_flags("machine_rank", 1) == (["--machine_rank", "1"], [])


def test_entry_bool_flags() -> None:
    p = "megatron_lm_config.megatron_lm_use_custom_fsdp"
    assert _entry_flags(p, False) == ([], [])  # type=bool, launcher default False: nothing to write
    assert _entry_flags(p, True) == (["--megatron_lm_use_custom_fsdp", "True"], [])
    p = "megatron_lm_config.megatron_lm_sequence_parallelism"
    assert _entry_flags(p, "") == (["--megatron_lm_sequence_parallelism", ""], [])


def test_entry_list3_that_is_not_a_list() -> None:
    assert _entry_flags("fp8_config.override_linear_precision", "x") == (
        [],
        [
            L(
                "warning",
                "`fp8_config.override_linear_precision: 'x'` is not a list of three booleans and cannot be given as "
                "--fp8_override_linear_precision (accelerate indexes the file's value as written); not written",
                "fp8_config.override_linear_precision",
                7,
                3,
            )
        ],
    )


def test_entry_restricted_choices() -> None:
    assert _entry_flags("fp8_config.fp8_format", "e4m3") == (
        [],
        [
            L(
                "warning",
                "`fp8_config.fp8_format: e4m3` cannot be given as --fp8_format (the flag accepts HYBRID, E4M3, E5M2); "
                "not written",
                "fp8_config.fp8_format",
                7,
                3,
            )
        ],
    )
    assert _entry_flags("fp8_config.fp8_format", "E5M2") == (["--fp8_format", "E5M2"], [])
    # before 1.9 the backend flag is written, lowercase, within that version's choices
    assert _entry_flags("fp8_config.backend", "MSAMP", version="1.8") == (["--fp8_backend", "msamp"], [])
    assert _entry_flags("fp8_config.backend", "AO", version="1.8") == (
        [],
        [
            L(
                "warning",
                "`fp8_config.backend: AO` cannot be given as --fp8_backend (the flag accepts te, msamp); not written",
                "fp8_config.backend",
                7,
                3,
            )
        ],
    )
    assert _entry_flags("mixed_precision", "FP16") == (["--mixed_precision", "fp16"], [])


def test_entry_store_true_values() -> None:
    assert _entry_flags("dynamo_config.dynamo_use_fullgraph", True) == (["--dynamo_use_fullgraph"], [])
    assert _entry_flags("dynamo_config.dynamo_use_fullgraph", False) == ([], [])
    assert _entry_flags("dynamo_config.dynamo_use_fullgraph", "on") == (
        [],
        [
            L(
                "warning",
                "`dynamo_config.dynamo_use_fullgraph: 'on'` cannot be given as the on/off flag --dynamo_use_fullgraph",
                "dynamo_config.dynamo_use_fullgraph",
                7,
                3,
            )
        ],
    )


def test_entry_file_ignored_at_its_default_is_silent() -> None:
    assert _entry_flags("rdzv_backend", "static") == ([], [])
    assert _entry_flags("rdzv_backend", "c10d")[1][0][0] == "convert.file-ignored"


def test_entry_tpu_only_keys_on_tpu() -> None:
    assert _entry_flags("main_training_function", "main", mode="tpu") == (["--main_training_function", "main"], [])
    assert _entry_flags("main_training_function", "main", mode="torchrun") == ([], [])
    assert _entry_flags("tpu_use_cluster", True, mode="simple") == ([], [])


def test_sections_by_launch_path() -> None:
    def sections(mode: str, ns: dict) -> tuple[set[str], bool, list[str], list[Finding]]:
        out: list[str] = []
        findings: list[Finding] = []
        got, dropped = C._flag_sections(mode, ns, out, findings)
        return got, dropped, out, findings

    assert sections("simple", {}) == ({"", "mpirun_config", "dynamo_config"}, False, [], [])
    assert sections("torchrun", {"use_fsdp": True, "use_megatron_lm": True})[0] == {
        "",
        "mpirun_config",
        "dynamo_config",
        "fsdp_config",
        "megatron_lm_config",
    }
    assert sections("deepspeed", {"use_fsdp": True, "use_megatron_lm": True})[0] == {
        "",
        "mpirun_config",
        "deepspeed_config",
    }
    assert sections("simple", {"use_fsdp": True, "use_megatron_lm": True})[0] == {"", "mpirun_config", "dynamo_config"}
    assert sections("tpu", {"mixed_precision": "fp8"})[0] == {"", "mpirun_config", "fp8_config"}
    assert sections("torchrun", {"use_parallelism_config": True, "use_fsdp": True}) == (
        {"", "mpirun_config", "dynamo_config", "fsdp_config", "parallelism_config"},
        False,
        ["--use_parallelism_config"],
        [],
    )
    got, dropped, out, findings = sections("torchrun", {"use_parallelism_config": True})
    assert (got, dropped, out) == ({"", "mpirun_config", "dynamo_config"}, True, [])
    assert findings == [
        Finding(
            "convert.lossy",
            "warning",
            "parallelism_config without FSDP cannot be given as flags "
            "(--use_parallelism_config requires --use_fsdp); dropped",
            "parallelism_config",
        )
    ]


# -- launcher-only flags, self-check, write ---------------------------------------------------------


def test_launcher_only_flags_are_written_back() -> None:
    cfg = Config()
    cfg.unknown.update(
        {
            "--max_restarts": _launcher("max_restarts", 3),
            "--module": _launcher("module", True),
            "--no_python": _launcher("no_python", False),
            "--tee": _launcher("tee", "3"),
            "--quiet": _launcher("quiet", True),
            "fsdp_config.x": _launcher("x", 1),
            "--not_a_launcher_flag": _launcher("not_a_launcher_flag", 1),
        }
    )
    assert C._launcher_only_flags(cfg, ["--tee", "1"]) == ["--max_restarts", "3", "--module", "--quiet"]
    assert C._launcher_only_flags(cfg, []) == ["--max_restarts", "3", "--module", "--tee", "3", "--quiet"]


def test_self_check_reports_flags_that_do_not_launch() -> None:
    base = launch_env(formats.read("distributed_type: 'NO'\nnum_processes: 1\n", "yaml"), version="1.15")
    findings: list[Finding] = []
    C._self_check(["--num_processes", "x"], base, "1.15", findings)
    assert findings == [
        Finding(
            "convert.lossy",
            "error",
            "these flags do not launch: <text>:1:1: --num_processes: invalid literal for int() with base 10: 'x'",
            "distributed_type",
        )
    ]
    findings = []
    C._self_check(["--num_processes", "1"], base, "1.15", findings)
    assert findings == []
    findings = []
    C._self_check(["--num_processes", "1", "--mixed_precision", "bf16", "--gpu_ids", "0"], base, "1.15", findings)
    assert findings == [
        Finding(
            "convert.lossy",
            "warning",
            "ACCELERATE_MIXED_PRECISION differs without the config file: 'no' from the file, 'bf16' from the flags",
            "mixed_precision",
        ),
        Finding(
            "convert.lossy",
            "warning",
            "CUDA_VISIBLE_DEVICES differs without the config file: None from the file, '0' from the flags",
            "gpu_ids",
        ),
    ]


def test_why() -> None:
    assert C._why("ACCELERATE_FP8_BACKEND", "te") == (
        " (the flag only accepts lowercase; before 1.9 Accelerator() does not "
        "read it, only MS-AMP under DeepSpeed does)"
    )
    assert C._why("ACCELERATE_FP8_BACKEND", None) == ""
    assert C._why("OTHER", "x") == ""
    assert C._why("ACCELERATE_CONFIG_DS_FIELDS", None).startswith(" (accelerate lists the file's deepspeed_config keys")
    assert C._why("FSDP_SHARDING_STRATEGY", "1").startswith(
        " (before accelerate 0.26 the flag takes only the strategy's number"
    )


def test_fp8_backend_before_1_9_explains_the_difference() -> None:
    """1.4-1.8: the lowercase flag value differs from the file's (and the first fp8 releases crash on the file)."""
    findings: list[Finding] = []
    base = launch_env(formats.read("distributed_type: 'NO'\nnum_processes: 1\n", "yaml"), version="1.15")
    base.env["ACCELERATE_FP8_BACKEND"] = "TE"
    C._self_check(["--num_processes", "1", "--mixed_precision", "fp8", "--fp8_backend", "te"], base, "1.15", findings)
    assert (
        Finding(
            "convert.lossy",
            "warning",
            "ACCELERATE_FP8_BACKEND differs without the config file: 'TE' from the file, "
            "'te' from the flags (the flag only accepts lowercase; before 1.9 Accelerator() does not read it, only "
            "MS-AMP under DeepSpeed does)",
            "fp8_config.backend",
        )
        in findings
    )


def test_write_a_file_as_flags() -> None:
    text, findings = C.write(
        formats.read("distributed_type: FSDP\nnum_processes: 2\nfsdp_config:\n  fsdp_version: 2\n", "yaml")
    )
    assert (
        text == "accelerate launch \\\n    --use_fsdp \\\n    --num_processes 2 \\\n    --fsdp_version 2\n"
        and findings == []
    )
    text, _ = C.write(
        formats.read(
            "distributed_type: MULTI_GPU\nnum_processes: 4\nnum_machines: 2\nmain_process_ip: h\n"
            "main_process_port: 1\n",
            "yaml",
        ),
        machine_rank=1,
        version="1.15",
    )
    assert text.endswith("--machine_rank 1\n")


def test_write_a_command_line_back_as_it_was_read() -> None:
    cfg = C.read(
        "accelerate launch --multi_gpu --num_processes 2 --mixed_precision bf16 --dynamo_use_fullgraph --debug "
        "--fp8_override_linear_precision 1,0,1 --megatron_lm_sequence_parallelism '' --max_restarts 2 --module "
        "--zero_stage 3 train.py"
    )
    text, findings = C.write(cfg)
    assert text == (
        "accelerate launch --multi_gpu --num_processes 2 --mixed_precision bf16 --dynamo_use_fullgraph --debug "
        "--fp8_override_linear_precision true,false,true --megatron_lm_sequence_parallelism '' "
        "--zero_stage 3 --max_restarts 2 --module\n"
    )
    assert findings == []


def test_tokens_of_skips_what_has_no_flag() -> None:
    cfg = Config(format="cli")
    cfg.set("distributed_type", "NO")
    cfg.set("tpu_name", "x")
    cfg.set("debug", False)
    cfg.set("fsdp_config.fsdp_version", 2)
    cfg.unknown["--module"] = _launcher("module", True)
    cfg.unknown["--quiet"] = _launcher("quiet", False)
    cfg.unknown["x"] = _launcher("x", 1)
    assert C._tokens_of(cfg) == ["--fsdp_version", "2", "--module", "--quiet", "False"]


def test_top_level_flags_come_first_in_file_order() -> None:
    fl, found = flags(
        "fsdp_config:\n  fsdp_version: 2\n  fsdp_offload_params: true\ndistributed_type: FSDP\ngpu_ids: '0,1'\n"
        "num_processes: 2\nmixed_precision: bf16\n"
    )
    assert fl == [
        "--use_fsdp",
        "--num_processes",
        "2",
        "--gpu_ids",
        "0,1",
        "--mixed_precision",
        "bf16",
        "--fsdp_version",
        "2",
        "--fsdp_offload_params",
        "True",
    ]
    assert found == []


def test_read_a_value_ending_a_continued_line() -> None:
    cfg = C.read("accelerate launch --main_process_ip HOSTX \\\n  --tee X\\\n")
    assert cfg.get("main_process_ip") == "HOSTX" and cfg.unknown["--tee"].value == "X"


@pytest.mark.parametrize(
    ("path", "value", "accepts"),
    [
        ("dynamo_config.dynamo_mode", "fast", "default, reduce-overhead, max-autotune"),
        ("fsdp_config.fsdp_version", 3, "1, 2"),
        ("mixed_precision", "fp32", "no, fp16, bf16, fp8"),
        ("fp8_config.amax_compute_algo", "mean", "max, most_recent"),
        ("fp8_config.opt_level", "O3", "O1, O2"),
        ("parallelism_config.parallelism_config_cp_comm_strategy", "ring", "allgather, alltoall"),
    ],
)
def test_entry_outside_the_flag_choices(path: str, value: object, accepts: str) -> None:
    flag = _setting(*path.rpartition(".")[::2]).flag
    assert _entry_flags(path, value) == (
        [],
        [
            L(
                "warning",
                f"`{path}: {value}` cannot be given as --{flag} (the flag accepts {accepts}); not written",
                path,
                7,
                3,
            )
        ],
    )


def test_write_uses_the_version() -> None:
    cfg = formats.read("distributed_type: FSDP\nnum_processes: 2\nfsdp_config:\n  fsdp_version: 2\n", "yaml")
    text, findings = C.write(cfg, version="1.5")
    assert text == "accelerate launch \\\n    --use_fsdp \\\n    --num_processes 2\n"
    assert [f.key for f in findings] == ["fsdp_config.fsdp_version"]


def test_cli_string_of_a_list_for_a_text_flag_is_its_repr() -> None:
    """A YAML list for the class names is exported as a Python repr by accelerate too (registry doc)."""
    assert C._cli_string(_setting("fsdp_config", "fsdp_transformer_layer_cls_to_wrap"), ["A", "B"]) == "['A', 'B']"


def test_use_cpu_under_torchrun_is_a_warning() -> None:
    fl, found = flags("distributed_type: MULTI_GPU\nnum_processes: 2\nuse_cpu: true\n")
    assert fl == ["--multi_gpu", "--num_processes", "2"]
    assert found[0] == L(
        "warning",
        "use_cpu is not written as --cpu on the torchrun path (which would switch to the simple "
        "launcher), but in the file it sets OMP_NUM_THREADS from the physical cores of the machine that "
        "launches (per process from 0.34): add --num_cpu_threads_per_process N for that machine",
        "use_cpu",
        3,
        1,
    )
