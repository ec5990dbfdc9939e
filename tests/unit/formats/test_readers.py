"""The readers behind every format: the dotenv reader (``accelconf.formats.env.read``) entry by entry
and the accelerate-file reader given a DeepSpeed JSON.

The round-trip tests compare meanings; these pin what the reader records beside the value (the
variable it came from, its line and column, ``origin``/``where``), which hover, explain and
diagnostics print. Written from the survivors of ``make mutants`` (bench/MUTANTS.md).
"""

from __future__ import annotations

import pytest

from accelconf.accelerate import registry
from accelconf.accelerate.model import Entry
from accelconf.errors import InputError
from accelconf.formats import env

TEXT = """\
# comment
export ACCELERATE_USE_FSDP=true
FSDP_SHARDING_STRATEGY="FULL_SHARD"
  ACCELERATE_FP8_OVERRIDE_DGRAD=1
MASTER_ADDR=10.0.0.1
MASTER_PORT=29500
OMP_NUM_THREADS=8
ACCELERATE_NUM_PROCESSES=4
ACCELERATE_FSDP_OFFLOAD_PARAMS=true
ACCELERATE_USE_CPU=false
ACCELERATE_DEBUG_MODE=yes
PARALLELISM_CONFIG_SP_SEQ_LENGTH=None
"""


def _entry(path: str, value, var: str, line: int, column: int = 1) -> Entry:
    section, _, key = path.rpartition(".")
    return Entry(path, value, registry.get(section, key), var, line, column, "env", var)


def _unknown(path: str, value, var: str, line: int) -> Entry:
    return Entry(path, value, None, var, line, 1, "env", var)


def test_every_entry_keeps_its_variable_line_and_column() -> None:
    cfg = env.read(TEXT, path="x.env")
    assert (cfg.source, cfg.format) == ("x.env", "env")
    assert cfg.entries == {
        "distributed_type": _entry("distributed_type", "FSDP", "ACCELERATE_USE_FSDP", 2, 8),
        "fsdp_config.fsdp_sharding_strategy": _entry(
            "fsdp_config.fsdp_sharding_strategy", "FULL_SHARD", "FSDP_SHARDING_STRATEGY", 3
        ),
        "fp8_config.override_linear_precision": _entry(
            "fp8_config.override_linear_precision", (False, True, False), "ACCELERATE_FP8_OVERRIDE_DGRAD", 4, 3
        ),
        "main_process_ip": _entry("main_process_ip", "10.0.0.1", "MASTER_ADDR", 5),
        "main_process_port": _entry("main_process_port", 29500, "MASTER_PORT", 6),
        "debug": _entry("debug", True, "ACCELERATE_DEBUG_MODE", 11),
    }
    assert cfg.unknown == {
        env.LAUNCHER_THREADS: _unknown(env.LAUNCHER_THREADS, 8, "OMP_NUM_THREADS", 7),
        "ACCELERATE_NUM_PROCESSES": _unknown("ACCELERATE_NUM_PROCESSES", "4", "ACCELERATE_NUM_PROCESSES", 8),
        "ACCELERATE_FSDP_OFFLOAD_PARAMS": _unknown(
            "ACCELERATE_FSDP_OFFLOAD_PARAMS", "true", "ACCELERATE_FSDP_OFFLOAD_PARAMS", 9
        ),
    }
    assert [(n.rule, n.severity, n.key, n.line, n.column, n.message) for n in cfg.notes] == [
        (
            "env.launcher-only",
            "info",
            env.LAUNCHER_THREADS,
            7,
            1,
            "OMP_NUM_THREADS=8 is what accelerate launch --num_cpu_threads_per_process sets (a launch flag with no "
            "config-file key)",
        ),
        (
            "env.never-read",
            "warning",
            "ACCELERATE_NUM_PROCESSES",
            8,
            1,
            "ACCELERATE_NUM_PROCESSES is read by nothing; use torchrun "
            "--nproc_per_node / accelerate launch --num_processes",
        ),
        (
            "env.never-read",
            "warning",
            "ACCELERATE_FSDP_OFFLOAD_PARAMS",
            9,
            1,
            "ACCELERATE_FSDP_OFFLOAD_PARAMS is read by nothing; did you mean FSDP_OFFLOAD_PARAMS?",
        ),
    ]
    assert env.reader_findings(cfg) == cfg.notes


def test_fp8_overrides_fill_one_triple_in_fprop_dgrad_wgrad_order() -> None:
    cfg = env.read(
        "ACCELERATE_FP8_OVERRIDE_WGRAD=true\nACCELERATE_FP8_OVERRIDE_FPROP=True\nACCELERATE_FP8_OVERRIDE_DGRAD=0\n"
    )
    entry = cfg.entries["fp8_config.override_linear_precision"]
    assert entry.value == (True, False, True)
    assert (entry.written_key, entry.line) == ("ACCELERATE_FP8_OVERRIDE_WGRAD", 1)  # the first variable places it
    assert list(cfg.entries) == ["fp8_config.override_linear_precision"] and not cfg.unknown
    # any other suffix is not an override: an unknown name, kept and warned about
    other = env.read("ACCELERATE_FP8_OVERRIDE_XGRAD=1\n")
    assert not other.entries and list(other.unknown) == ["ACCELERATE_FP8_OVERRIDE_XGRAD"]


def test_launcher_defaults_and_false_flags_read_as_nothing_set() -> None:
    cfg = env.read(
        "OMP_NUM_THREADS=1\nACCELERATE_USE_CPU=false\nACCELERATE_USE_DEEPSPEED=false\n"
        "PARALLELISM_CONFIG_SP_SEQ_LENGTH=None\nKMP_AFFINITY=granularity=fine\n"
    )
    assert cfg.entries == {} and cfg.unknown == {} and cfg.notes == []
    assert env.read("ACCELERATE_USE_CPU=true\n").entries["use_cpu"].value is True
    assert env.read("ACCELERATE_DEBUG_MODE=0\n").entries["debug"].value is False
    odd = env.read("OMP_NUM_THREADS=x2\n").unknown[env.LAUNCHER_THREADS]
    assert odd.value == "x2"  # not a number: kept as written
    # what follows a variable read as nothing is still read
    after = env.read("PARALLELISM_CONFIG_SP_SEQ_LENGTH=None\nACCELERATE_MIXED_PRECISION=bf16\n")
    assert after.as_dict() == {"mixed_precision": "bf16"}
    # a debug flag accelerate cannot parse (str_to_bool raises) is kept as written, for validate to report
    assert env.read("ACCELERATE_DEBUG_MODE=maybe\n").get("debug") == "maybe"


def test_rendezvous_variables_are_the_main_process_keys() -> None:
    cfg = env.read("MASTER_PORT=abc\nMASTER_ADDR=node-0\n")
    assert cfg.get("main_process_port") == "abc" and cfg.get("main_process_ip") == "node-0"
    assert [e.written_key for e in cfg.entries.values()] == ["MASTER_PORT", "MASTER_ADDR"]


@pytest.mark.parametrize(
    "name, expected",
    [
        (
            "ACCELERATE_NUM_PROCESSES",
            "read by nothing; use torchrun --nproc_per_node / accelerate launch --num_processes",
        ),
        ("ACCELERATE_FSDP_OFFLOAD_PARAMS", "read by nothing; did you mean FSDP_OFFLOAD_PARAMS?"),  # prefix stripped
        (
            "ACCELERATE_FSDP_VERSION",
            "read by nothing; did you mean FSDP_VERSION?",
        ),  # the closest spelling is another name
        ("FSDP_OFFLOAD_PARAMZ", "read by nothing; did you mean FSDP_OFFLOAD_PARAMS?"),  # closest name
        ("ACCELERATE_QQQQQQQQQQQQQQQQQQQQ", "read by nothing"),  # nothing close
        ("ACCELERATE_MIXED_PRECISION", ""),  # read by accelerate
        ("HOME", ""),  # not accelerate's
        ("accelerate_mixed_precision", ""),  # names are case-sensitive: not an accelerate prefix
    ],
)
def test_never_read(name: str, expected: str) -> None:
    assert env.never_read(name) == expected


def test_a_line_that_is_not_an_assignment_names_its_place() -> None:
    with pytest.raises(InputError) as err:
        env.read("A=1\noops\n")
    assert str(err.value) == "<text>:2:1: not a KEY=VALUE line: 'oops'"
    with pytest.raises(InputError) as err:
        env.read("A='open\n", path="x.env")
    assert str(err.value).startswith("x.env:1:1: unterminated quote")


# -- the accelerate-file reader given a DeepSpeed JSON (formats/yamljson._from_deepspeed) ----------------


def test_a_deepspeed_json_reads_as_the_deepspeed_section_it_corresponds_to() -> None:
    from accelconf import formats

    text = (
        '{"train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 2, "bf16": {"enabled": true}, '
        '"zero_optimization": {"stage": 3, "offload_param": {"device": "cpu"}}, "wall_clock_breakdown": false}'
    )
    for fmt in ("json", None):  # said or detected
        cfg = formats.read(text, fmt, "ds.json", "1.15")
        assert (cfg.format, cfg.source) == ("json", "ds.json")
        assert {p: e.value for p, e in cfg.entries.items()} == {
            "distributed_type": "DEEPSPEED",
            "mixed_precision": "bf16",
            "deepspeed_config.zero_stage": 3,
            "deepspeed_config.offload_optimizer_device": "none",
            "deepspeed_config.offload_param_device": "cpu",
            "deepspeed_config.gradient_accumulation_steps": 2,
            "deepspeed_config.zero3_init_flag": True,
        }
        assert "mixed_precision" not in cfg.section("deepspeed_config")  # moved to the top level
        # what has no accelerate key is a note, never dropped silently
        assert [(n.rule, n.message.split(":")[0]) for n in cfg.notes] == [
            ("convert.ds-unmapped", "train_micro_batch_size_per_gpu"),
            ("convert.ds-unmapped", "wall_clock_breakdown"),
        ]
    plain = formats.read('{"zero_optimization": {"stage": 1}}', "json", "ds.json", "1.15")
    assert plain.get("mixed_precision") == "no" and plain.notes == []
    # an accelerate config written as JSON stays one
    acc = formats.read('{"distributed_type": "DEEPSPEED", "deepspeed_config": {"zero_stage": 1}}', "json", "a.json")
    assert acc.get("deepspeed_config.zero_stage") == 1 and "mixed_precision" not in acc


# -- the dotenv line reader and value decoding ------------------------------------------------------------


def test_assignments_unquote_and_place_every_value() -> None:
    text = 'export A=1\n  B = "x \\" y" # c\nC=\'q # r\'\nD=v # note\nE=a#b\n\n# x\nF=""\n'
    assert list(env.assignments(text)) == [
        ("A", "1", 1, 8),
        ("B", 'x " y', 2, 3),
        ("C", "q # r", 3, 1),
        ("D", "v", 4, 1),
        ("E", "a#b", 5, 1),
        ("F", "", 8, 1),
    ]
    quoted = 'A="a" "b"\nB="\\""\nC=\'x\\"y\'\nA2=A2\n'
    assert list(env.assignments(quoted)) == [
        ("A", "a", 1, 1),
        ("B", '"', 2, 1),
        ("C", 'x\\"y', 3, 1),
        ("A2", "A2", 4, 1),
    ]
    assert list(env.assignments('A="a\\"b" "c"\n')) == [("A", 'a"b', 1, 1)]  # the first unescaped quote closes
    with pytest.raises(InputError):
        list(env.assignments('A="abc\\"\n'))  # the only closing quote is escaped
    with pytest.raises(InputError) as err:
        list(env.assignments("oops"))
    assert str(err.value) == "<text>:1:1: not a KEY=VALUE line: 'oops'"
    with pytest.raises(InputError) as err:
        list(env.assignments('A=1\nB="open\n', "x.env"))
    assert str(err.value) == "x.env:2:1: unterminated quote in '\"open'"


@pytest.mark.parametrize(
    "path, raw, value",
    [
        ("deepspeed_config.zero_stage", "3", 3),
        ("deepspeed_config.zero_stage", "x", "x"),  # not a number: kept for validate to report
        ("deepspeed_config.zero_stage", "None", "None"),  # an enum: only numbers read "None" as unset
        ("parallelism_config.parallelism_config_sp_seq_length", "None", None),  # str(None) of an unset number
        ("fsdp_config.fsdp_min_num_params", "100", 100),
        ("fsdp_config.fsdp_min_num_params", "1e3", "1e3"),
        ("deepspeed_config.gradient_clipping", "1.5", 1.5),
        ("deepspeed_config.gradient_clipping", "None", None),
        ("deepspeed_config.gradient_clipping", "abc", "abc"),
        ("fsdp_config.fsdp_offload_params", "TRUE", True),
        ("fsdp_config.fsdp_offload_params", " no", False),
        ("fsdp_config.fsdp_offload_params", "maybe", "maybe"),
        ("mixed_precision", "bf16", "bf16"),
        ("mixed_precision", "1", "1"),  # a string enum: digits stay a string
    ],
)
def test_decode_reads_a_value_as_the_plugin_does(path: str, raw: str, value) -> None:
    section, _, key = path.rpartition(".")
    got = env.decode(registry.get(section, key), raw)
    assert got == value and type(got) is type(value)


def test_format_env_sorts_and_quotes_only_what_a_shell_needs() -> None:
    assert (
        env.format_env({"B": "a b", "A": "x/y:z,w=1+2@3-4", "C": "", "D": "it's"})
        == "A=x/y:z,w=1+2@3-4\nB='a b'\nC=''\nD='it'\"'\"'s'\n"
    )
    assert env.format_env({"A": "1"}, export=True) == "export A=1\n"
    assert env.format_env({}) == ""


def test_the_env_writer_says_what_env_cannot_carry() -> None:
    from accelconf import formats

    multi = (
        "distributed_type: MULTI_GPU\nnum_processes: 4\nnum_machines: 2\nmain_process_ip: 10.0.0.1\n"
        "main_process_port: 29500\nmachine_rank: 0\n"
    )
    text, findings = formats.write(formats.read(multi, "yaml"), "env", "1.15")
    layout = "--nproc_per_node=2 --nnodes=2 --node_rank=0 --rdzv_endpoint=10.0.0.1:29500 --rdzv_backend=static"
    assert text.splitlines()[0] == f"# not in env: accelerate launch runs torchrun {layout}"
    assert "ACCELERATE_MIXED_PRECISION=no" in text.splitlines()
    assert [(f.rule, f.message) for f in findings] == [
        (
            "launch.not-env",
            f"env does not carry the process layout; accelerate passes it to torchrun: torchrun {layout}",
        )
    ]
    # a pdsh launch runs the deepspeed command (no torchrun), from the directory given as cwd
    pdsh = (
        multi.replace("MULTI_GPU", "DEEPSPEED")
        + "deepspeed_config:\n  zero_stage: 2\n  deepspeed_multinode_launcher: pdsh\n"
    )
    text, findings = formats.write(formats.read(pdsh, "yaml"), "env", "1.15", cwd="/proj")
    cmd = (
        "deepspeed --hostfile None --no_local_rank --launcher pdsh "
        "--num_gpus 2 --master_addr 10.0.0.1 --master_port 29500"
    )
    assert text.splitlines()[0] == f"# not in env: accelerate launch runs {cmd}"
    assert "PYTHONPATH=/proj" in text.splitlines()
    assert [(f.rule, f.severity, f.key, f.message) for f in findings] == [
        ("launch.not-env", "info", "num_processes", f"env does not carry the process layout; accelerate runs: {cmd}"),
        (
            "launch.cwd",
            "info",
            "distributed_type",
            "PYTHONPATH is the directory accelerate launch runs in (written as "
            "the current directory; accelerate appends it to any PYTHONPATH the shell has)",
        ),
    ]
    # the node this environment is for, and the release that launches it
    node1 = formats.write(formats.read(multi, "yaml"), "env", "1.15", machine_rank=1)[0]
    assert (
        node1.splitlines()[0]
        == f"# not in env: accelerate launch runs torchrun {layout.replace('node_rank=0', 'node_rank=1')}"
    )
    fsdp = formats.read(
        "distributed_type: FSDP\nnum_processes: 2\nfsdp_config:\n  fsdp_backward_prefetch_policy: BACKWARD_PRE\n",
        "yaml",
    )
    assert (
        "FSDP_BACKWARD_PREFETCH=BACKWARD_PRE" in formats.write(fsdp, "env", "0.25")[0].splitlines()
    )  # the legacy key, read up to 0.34
    assert "FSDP_BACKWARD_PREFETCH=BACKWARD_PRE" not in formats.write(fsdp, "env", "1.15")[0].splitlines()
    single = formats.write(
        formats.read("distributed_type: 'NO'\nnum_processes: 1\n", "yaml"), "env", "1.15", export=True
    )
    assert single == (
        "export ACCELERATE_DYNAMO_BACKEND=NO\nexport ACCELERATE_DYNAMO_MODE=default\n"
        "export ACCELERATE_DYNAMO_USE_DYNAMIC=False\nexport ACCELERATE_DYNAMO_USE_FULLGRAPH=False\n"
        "export ACCELERATE_DYNAMO_USE_REGIONAL_COMPILATION=False\nexport ACCELERATE_MIXED_PRECISION=no\n"
        "export ACCELERATE_USE_CPU=False\nexport OMP_NUM_THREADS=1\n",
        [],
    )


def test_env_value_of_a_variable_the_file_assigned_once_is_substituted_any_other_is_not_read() -> None:
    text = (
        "export BASE=FULL_SHARD\nFSDP_SHARDING_STRATEGY=$BASE\nFSDP_STATE_DICT_TYPE=${UNSET}\n"
        "ACCELERATE_MIXED_PRECISION=\"$(cat x)\"\nFSDP_OFFLOAD_PARAMS='$lit'\nACCELERATE_USE_FSDP=true\n"
    )
    cfg = env.read(text, path="x.env")
    assert cfg.get("fsdp_config.fsdp_sharding_strategy") == "FULL_SHARD"
    assert "fsdp_config.fsdp_state_dict_type" not in cfg and "mixed_precision" not in cfg
    assert cfg.get("fsdp_config.fsdp_offload_params") == "$lit"  # single quotes: no expansion
    assert [(n.rule, n.severity, n.key, n.line) for n in env.reader_findings(cfg)] == [
        ("env.not-read", "info", "FSDP_STATE_DICT_TYPE", 3),
        ("env.not-read", "info", "ACCELERATE_MIXED_PRECISION", 4),
    ]


def test_env_variable_assigned_twice_is_not_known() -> None:
    cfg = env.read("S=FULL_SHARD\nS=NO_SHARD\nFSDP_SHARDING_STRATEGY=${S}\n")
    assert "fsdp_config.fsdp_sharding_strategy" not in cfg and cfg.notes[0].rule == "env.not-read"


def test_formats_dispatch_through_one_table_of_specs() -> None:
    from accelconf import formats
    from accelconf.errors import UsageError

    assert formats.FORMATS == tuple(formats.SPECS) == ("yaml", "json", "env", "cli", "kwargs")
    assert formats.LAUNCH_FORMATS == ("env", "cli", "kwargs")
    assert formats.SPECS["yaml"].suffixes == (".yaml", ".yml") and formats.SPECS["cli"].suffixes[0] == ".bash"
    for name, spec in formats.SPECS.items():
        for suffix in spec.suffixes:
            assert formats.detect_format("", f"config{suffix}") == name  # the recogniser agrees with the table
    try:
        formats.spec("toml")
    except UsageError as exc:
        assert "yaml, json, env, cli, kwargs" in str(exc)
    else:
        raise AssertionError("an unknown format must be refused")
