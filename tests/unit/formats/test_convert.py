"""Conversions without accelerate: formats, readers, writers, the launcher model, and the CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from accelconf import formats
from accelconf.accelerate import registry
from accelconf.accelerate.launch import LaunchError, launch_env
from accelconf.cli import main
from accelconf.diff import diff
from accelconf.errors import InputError

DATA = Path(__file__).resolve().parents[2] / "data" / "convert"
FSDP2 = DATA / "fsdp2_multinode.yaml"
ZERO3 = DATA / "zero3.yaml"
SINGLE = DATA / "single.yaml"


def read(path: Path, version: str = "1.15"):
    return formats.read(path.read_text(), None, str(path), version)


# -- format detection and readers -----------------------------------------------------------------


@pytest.mark.parametrize(
    "text,path,fmt",
    [
        ("a: 1\n", "x.yaml", "yaml"),
        ("{}", "x.json", "json"),
        ("A=1\n", "x.env", "env"),
        ("x = 1\n", "t.py", "kwargs"),
        ("accelerate launch --multi_gpu train.py\n", "-", "cli"),
        ("--num_processes 2\n", "", "cli"),
        ("export FSDP_VERSION=2\n# c\nA='b c'\n", "", "env"),
        ('{"distributed_type": "NO"}', "", "json"),
        ("from accelerate import Accelerator\nAccelerator()\n", "", "kwargs"),
        ("distributed_type: 'NO'\n", "", "yaml"),
    ],
)
def test_detect_format(text: str, path: str, fmt: str) -> None:
    assert formats.detect_format(text, path) == fmt


def test_env_reader_accepts_export_quotes_comments() -> None:
    text = (
        "# launched env\nexport ACCELERATE_MIXED_PRECISION=bf16\nFSDP_VERSION='2'\n"
        'FSDP_TRANSFORMER_CLS_TO_WRAP="LlamaDecoderLayer"  \nACCELERATE_USE_FSDP=true # inline\n'
        "ACCELERATE_NUM_PROCESSES=8\n"
    )
    cfg = formats.read(text, "env")
    assert cfg.get("mixed_precision") == "bf16"
    assert cfg.get("fsdp_config.fsdp_version") == 2
    assert cfg.get("fsdp_config.fsdp_transformer_layer_cls_to_wrap") == "LlamaDecoderLayer"
    assert cfg.get("distributed_type") == "FSDP"
    assert "ACCELERATE_NUM_PROCESSES" in cfg.unknown
    assert cfg.entries["fsdp_config.fsdp_version"].line == 3


def test_env_reader_rejects_garbage() -> None:
    with pytest.raises(InputError):
        formats.read("this is not env\n", "env")


def test_cli_reader_spellings() -> None:
    cfg = formats.read(
        "accelerate launch --use-fsdp --num-processes=4 --fsdp_version 2 "
        "--fsdp-offload-params true --dynamo_use_fullgraph train.py --lr 1e-4",
        "cli",
    )
    assert cfg.get("distributed_type") == "FSDP"
    assert cfg.get("num_processes") == 4
    assert cfg.get("fsdp_config.fsdp_version") == "2"  # a string flag, as accelerate parses it
    assert cfg.get("fsdp_config.fsdp_offload_params") == "true"
    assert cfg.get("dynamo_config.dynamo_use_fullgraph") is True
    assert "--lr" not in str(cfg.as_dict())


def test_cli_reader_type_bool_quirk() -> None:
    """``type=bool`` flags: any non-empty string, even False, is true (accelerate's parser)."""
    cfg = formats.read("--use_megatron_lm --megatron_lm_no_load_optim False --num_processes 2", "cli")
    assert cfg.get("megatron_lm_config.megatron_lm_no_load_optim") is True


def test_cli_reader_unknown_flag() -> None:
    with pytest.raises(InputError):
        formats.read("accelerate launch --fsdp_cpu_offload true train.py", "cli")


def test_kwargs_reader_never_executes(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    src = (
        f"open({str(marker)!r}, 'w').write('x')\nfrom accelerate import Accelerator\n"
        "from accelerate.utils import FullyShardedDataParallelPlugin, TorchDynamoPlugin\n"
        "p = FullyShardedDataParallelPlugin(fsdp_version=2, cpu_offload=True, transformer_cls_names_to_wrap=['A', 'B'],"
        " auto_wrap_policy='TRANSFORMER_BASED_WRAP', state_dict_type=compute())\n"
        "acc = Accelerator(mixed_precision='bf16', fsdp_plugin=p, "
        "dynamo_plugin=TorchDynamoPlugin(backend='INDUCTOR'))\n"
    )
    cfg = formats.read(src, "kwargs", "train.py")
    assert not marker.exists()
    assert cfg.get("distributed_type") == "FSDP"
    assert cfg.get("fsdp_config.fsdp_offload_params") is True
    assert cfg.get("fsdp_config.fsdp_transformer_layer_cls_to_wrap") == "A,B"
    assert cfg.get("dynamo_config.dynamo_backend") == "INDUCTOR"
    assert "FullyShardedDataParallelPlugin.state_dict_type" in cfg.unknown  # not a literal
    assert cfg.entries["mixed_precision"].line == 5


# -- writers --------------------------------------------------------------------------------------


def test_yaml_writer_quotes_yaml11_words() -> None:
    text, _ = formats.write(read(SINGLE), "yaml")
    assert "distributed_type: 'NO'" in text and "mixed_precision: 'no'" in text
    import yaml  # PyYAML, as accelerate reads it

    assert yaml.safe_load(text)["mixed_precision"] == "no"


def test_json_writer_sorted() -> None:
    text, _ = formats.write(read(ZERO3), "json")
    data = json.loads(text)
    assert data["deepspeed_config"]["zero_stage"] == 3 and list(data) == sorted(data)


def test_to_env_is_the_launcher_env_and_reports_losses() -> None:
    text, findings = formats.write(read(ZERO3), "env", cwd="/work")
    env = dict(line.split("=", 1) for line in text.splitlines() if not line.startswith("#"))
    assert env["ACCELERATE_USE_DEEPSPEED"] == "true"
    assert env["ACCELERATE_DEEPSPEED_ZERO_STAGE"] == "3"
    assert env["ACCELERATE_GRADIENT_ACCUMULATION_STEPS"] == "4"
    assert (
        env["ACCELERATE_CONFIG_DS_FIELDS"] == "zero_stage,gradient_accumulation_steps,offload_param_device,"
        "offload_param_nvme_path,zero3_init_flag,mixed_precision"
    )
    assert env["PYTHONPATH"] == "/work"
    assert "ACCELERATE_NUM_PROCESSES" not in env and not any(k.startswith("ACCELERATE_DYNAMO") for k in env)
    rules = {(f.rule, f.key) for f in findings}
    assert ("launch.lost", "deepspeed_config.offload_param_nvme_path") in rules
    assert ("launch.dropped", "dynamo_config.dynamo_backend") in rules
    assert any(f.rule == "launch.not-env" and "--nproc_per_node=8" in f.message for f in findings)


def test_to_env_flag_defaults_exported() -> None:
    env = launch_env(read(FSDP2), version="1.15").env
    assert env["FSDP_SHARDING_STRATEGY"] == "FULL_SHARD"  # flag default, exported even for FSDP2
    assert env["FSDP_MIN_NUM_PARAMS"] == "100000000"
    assert launch_env(read(FSDP2, "1.12"), version="1.12").env["FSDP_MIN_NUM_PARAMS"] == "100000000.0"
    assert "FSDP_ACTIVATION_CHECKPOINTING_OFFLOAD" not in launch_env(read(FSDP2, "1.14"), version="1.14").env


def test_multinode_same_network_is_ignored_in_the_file() -> None:
    r = launch_env(read(FSDP2), version="1.15", machine_rank=1)
    assert r.torchrun["rdzv_endpoint"] == "10.0.0.1:29400" and r.torchrun["node_rank"] == 1
    assert "master_addr" not in r.torchrun
    assert any(f.rule == "launch.file-ignored" and f.key == "same_network" for f in r.findings)


def test_precedence_changed_in_1_5() -> None:
    cli = formats.read("--fsdp_state_dict_type FULL_STATE_DICT", "cli")
    assert (
        launch_env(read(FSDP2, "1.4"), version="1.4", cli_overrides=cli).env["FSDP_STATE_DICT_TYPE"]
        == "SHARDED_STATE_DICT"
    )
    assert launch_env(read(FSDP2), version="1.15", cli_overrides=cli).env["FSDP_STATE_DICT_TYPE"] == "FULL_STATE_DICT"


def test_launch_refusals() -> None:
    with pytest.raises(LaunchError, match="num_processes"):
        launch_env(formats.read("distributed_type: MULTI_GPU\n", "yaml"), version="1.15")
    with pytest.raises(LaunchError, match="unknown keys"):
        launch_env(formats.read("distributed_type: 'NO'\nipex_config: {ipex: true}\n", "yaml"), version="1.15")
    with pytest.raises(LaunchError, match="lower"):
        launch_env(formats.read("distributed_type: 'NO'\nmixed_precision: no\n", "yaml"), version="1.15")
    with pytest.raises(LaunchError, match="sync_module_states"):
        launch_env(
            formats.read(
                "distributed_type: FSDP\nnum_processes: 2\nfsdp_config: {fsdp_sync_module_states: false}\n", "yaml"
            ),
            version="1.15",
        )


def test_to_cli_launches_like_the_file() -> None:
    for path in (FSDP2, ZERO3, SINGLE):
        cfg = read(path)
        text, findings = formats.write(cfg, "cli")
        assert text.startswith("accelerate launch")
        again = launch_env(formats.read(text, "cli"), version="1.15")
        lossy = " ".join(f.message for f in findings if f.rule == "convert.lossy")
        base = launch_env(cfg, version="1.15")
        for var in set(base.env) | set(again.env):
            if base.env.get(var) != again.env.get(var):
                assert var in lossy, (path, var)
    fsdp = formats.write(read(FSDP2), "cli")[0]
    assert "--same_network" not in fsdp and "--machine_rank 0" in fsdp


def test_to_kwargs_is_python_with_real_names() -> None:
    text, findings = formats.write(read(FSDP2), "kwargs")
    compile(text, "<kwargs>", "exec")
    assert "FullyShardedDataParallelPlugin(" in text and "cpu_offload=False" in text
    assert "transformer_cls_names_to_wrap=['LlamaDecoderLayer']" in text
    assert "sharding_strategy" not in text  # FSDP1 only: the FSDP2 plugin does not read it
    assert "FSDPPlugin" not in text.replace("FullyShardedDataParallelPlugin", "")
    back = formats.read(text, "kwargs")
    assert back.get("fsdp_config.fsdp_version") == 2 and back.get("distributed_type") == "FSDP"


# -- property: yaml round trip keeps the launch ----------------------------------------------------

FSDP_KEYS = [s for s in registry.settings_in("fsdp_config", "1.15") if s.flag and s.type in ("bool", "enum")]


@settings(max_examples=40, deadline=None)
@given(
    st.dictionaries(st.sampled_from([s.key for s in FSDP_KEYS]), st.none(), max_size=5).flatmap(
        lambda keys: st.fixed_dictionaries(
            {
                k: st.sampled_from(registry.get("fsdp_config", k).choices or (True, False))  # type: ignore[union-attr]
                for k in keys
            }
        )
    )
)
def test_yaml_round_trip_keeps_the_launch(fsdp: dict) -> None:
    from accelconf.formats.yamljson import dump_yaml

    data = {"distributed_type": "FSDP", "num_processes": 2, "fsdp_config": fsdp}
    cfg = formats.read(dump_yaml(data), "yaml")
    try:
        before: dict[str, str] | None = launch_env(cfg, version="1.15").env
    except LaunchError:
        before = None
    assume(before is not None)  # accelerate refuses this draw: no launch to keep (not counted as a pass)
    again = formats.read(formats.write(cfg, "yaml")[0], "yaml")
    assert launch_env(again, version="1.15").env == before
    env_again = formats.read(formats.write(cfg, "env")[0], "env")
    assert formats.write(env_again, "env")[0] == formats.write(cfg, "env")[0]


# -- the command line -----------------------------------------------------------------------------


def test_cli_to_env(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["to-env", str(ZERO3)]) == 0
    out, err = capsys.readouterr()
    assert "ACCELERATE_DEEPSPEED_ZERO_STAGE=3" in out
    assert f"{ZERO3}:9:3: warning:" in err and "[launch.lost]" in err


def test_cli_strict_and_quiet(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["convert", str(ZERO3), "--to", "env", "--strict", "-q"]) == 1
    _, err = capsys.readouterr()
    assert "info:" not in err


def test_cli_all_ranks(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["to-cli", str(FSDP2), "--all-ranks"]) == 0
    out = capsys.readouterr().out
    blocks = out.split("\n# machine_rank ")
    assert len(blocks) == 2
    a, b = (blk.splitlines()[1:] for blk in blocks)
    diff = [(x, y) for x, y in zip(a, b) if x != y]
    assert diff == [("    --machine_rank 0", "    --machine_rank 1")]


def test_cli_stdin_and_from(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    monkeypatch.setattr(
        sys, "stdin", io.StringIO("FSDP_VERSION=2\nACCELERATE_USE_FSDP=true\nACCELERATE_NUM_PROCESSES=4\n")
    )
    assert main(["to-yaml", "-", "--from", "env"]) == 0
    out, err = capsys.readouterr()
    assert "distributed_type: FSDP" in out and "fsdp_version: 2" in out
    assert "<stdin>:3:1: warning: ACCELERATE_NUM_PROCESSES is read by nothing" in err


def test_cli_bad_input_exit_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("distributed_type: MULTI_GPU\n")
    assert main(["to-env", str(bad)]) == 2
    assert "num_processes" in capsys.readouterr().err
    assert main(["to-env", str(tmp_path / "missing.yaml")]) == 2
    assert main(["to-kwargs", str(tmp_path / "x.py"), "--from", "yaml"]) == 2


def test_cli_to_kwargs_and_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["to-kwargs", str(FSDP2)]) == 0
    assert "Accelerator(" in capsys.readouterr().out
    assert main(["to-json", str(FSDP2)]) == 0
    assert json.loads(capsys.readouterr().out)["fsdp_config"]["fsdp_version"] == 2


def test_explain_json(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    shell = tmp_path / "shell.env"
    shell.write_text("ACCELERATE_GRADIENT_ACCUMULATION_STEPS=2\nACCELERATE_NUM_PROCESSES=8\n")
    script = tmp_path / "train.py"
    script.write_text(
        "from accelerate import Accelerator\nAccelerator(mixed_precision='fp16', gradient_accumulation_steps=8)\n"
    )
    assert (
        main(
            [
                "explain",
                str(ZERO3),
                "--launch-args",
                "--zero_stage 2",
                "--env-file",
                str(shell),
                "--kwargs",
                str(script),
                "--format",
                "json",
            ]
        )
        == 0
    )
    rows = {r["setting"]: r for r in json.loads(capsys.readouterr().out)["settings"]}
    assert (
        rows["deepspeed_config.zero_stage"]["value"] == "2" and rows["deepspeed_config.zero_stage"]["source"] == "cli"
    )
    assert rows["mixed_precision"]["source"] == "kwarg"
    assert (
        rows["deepspeed_config.gradient_accumulation_steps"]["source"] == "config"
    )  # the launcher overwrites the shell
    assert (
        rows["ACCELERATE_NUM_PROCESSES"]["note"]
        == "read by nothing; use torchrun --nproc_per_node / accelerate launch --num_processes"
    )
    assert "replaces" in rows["Accelerator.gradient_accumulation_steps"]["note"]


def test_explain_launch_args_that_is_one_flag(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """`--launch-args --use_fsdp` (a lone value starting with "-", which argparse alone refuses): the
    paradigm comes from the flag, and explain says so."""
    cfg = tmp_path / "c.yaml"
    cfg.write_text("compute_environment: LOCAL_MACHINE\ndistributed_type: MULTI_GPU\nnum_processes: 2\n")
    assert main(["explain", str(cfg), "--launch-args", "--use_fsdp", "--format", "json"]) == 0
    rows = {r["setting"]: r for r in json.loads(capsys.readouterr().out)["settings"]}
    assert (
        rows["ACCELERATE_USE_FSDP"]["value"],
        rows["ACCELERATE_USE_FSDP"]["source"],
        rows["ACCELERATE_USE_FSDP"]["where"],
    ) == ("true", "cli", "--use_fsdp")
    assert main(["explain", str(cfg), "--launch-args"]) == 2  # no value: argparse's usage error, not a traceback
    assert "expected one argument" in capsys.readouterr().err


def test_explain_layout_rows_say_which_come_from_the_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    cfg = tmp_path / "c.yaml"
    cfg.write_text(
        "compute_environment: LOCAL_MACHINE\ndistributed_type: MULTI_GPU\nnum_processes: 2\nmachine_rank: 0\n"
    )
    assert main(["explain", str(cfg), "--format", "json"]) == 0
    rows = {
        r["setting"]: (r["value"], r["source"], r["where"]) for r in json.loads(capsys.readouterr().out)["settings"]
    }
    assert rows["num_processes"] == (2, "config", f"{cfg}:3") and rows["machine_rank"] == (0, "config", f"{cfg}:4")
    assert rows["num_machines"] == (1, "default", "flag default of --num_machines")


def test_explain_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", str(FSDP2)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("SETTING") and "fsdp_config.fsdp_version" in out


def test_library_never_imports_torch_or_accelerate() -> None:
    code = (
        "import sys, accelconf.accelerate.launch, accelconf.formats, accelconf.formats.env, accelconf.formats.cli, "
        "accelconf.formats.kwargs, accelconf.formats.yamljson, accelconf.commands.convert, accelconf.commands.explain\n"
        "from accelconf.cli import main\n"
        f"main(['to-kwargs', {str(FSDP2)!r}])\n"
        "assert 'torch' not in sys.modules and 'accelerate' not in sys.modules, 'heavy import'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)


# -- round trips over the corpus: what a format cannot carry is reported, nothing else changes ---------

CORPUS = Path(__file__).resolve().parents[4] / "shared" / "corpus" / "accelerate"
CORPUS_FILES = sorted(p for p in CORPUS.iterdir() if p.suffix in (".yaml", ".yml", ".json")) if CORPUS.is_dir() else []
XPU = CORPUS / "huggingface__accelerate__examples__config_yaml_templates__multi_xpu.yaml"
FP8 = CORPUS / "huggingface__accelerate__examples__config_yaml_templates__fp8.yaml"
VALIDATE = CORPUS / "huggingface__accelerate__tests__test_configs__validate_launch_cmd.yaml"
ULYSSES = CORPUS / "huggingface__trl__examples__accelerate_configs__alst_ulysses_4gpu.yaml"
BLOCKRANK_DS = CORPUS / "nilesh2797__BlockRank__configs__accelerate_config_deepspeed.yaml"
needs_corpus = pytest.mark.skipif(not CORPUS_FILES, reason=f"no corpus at {CORPUS}")


def _round_trip(path: Path, fmt: str):
    original = read(path)
    try:
        text, findings = formats.write(original, fmt, "1.15")
    except LaunchError:
        return None  # accelerate refuses to launch it: there is no environment or command line to compare
    return original, formats.read(text, fmt, f"<{fmt}>", "1.15"), findings


@needs_corpus
@pytest.mark.parametrize("fmt", ["env", "cli", "kwargs"])
@pytest.mark.parametrize("path", CORPUS_FILES, ids=lambda p: p.name[:70])
def test_corpus_round_trip_loses_only_what_the_writer_reports(path: Path, fmt: str) -> None:
    trip = _round_trip(path, fmt)
    if trip is None:
        return
    original, back, findings = trip
    reported = {f.key for f in findings}
    result = diff(original, back, version="1.15")
    assert [c for c in result.differences if c.key not in reported] == []
    # a key the file sets that the other format drops (even where it has no effect) is reported too
    dropped = [c.key for c in result.ignored if c.kind == "removed" and c.key not in reported]
    assert dropped == []


@needs_corpus
def test_multi_xpu_as_flags_is_reported_and_read_back_as_hardware_dependent() -> None:
    text, findings = formats.write(read(XPU), "cli", "1.15")
    assert "--multi_gpu" in text
    assert any(f.key == "distributed_type" and f.severity == "warning" and "MULTI_XPU" in f.message for f in findings)
    back = formats.read(text, "cli")
    assert back.get("distributed_type") == "MULTI_GPU"
    assert "hardware" in back.entries["distributed_type"].where
    assert any("MULTI_XPU" in note.message for note in back.notes)
    _, same = formats.write(formats.read("distributed_type: MULTI_GPU\nnum_processes: 2\n", "yaml"), "cli", "1.15")
    assert not any(f.key == "distributed_type" for f in same)


def test_cli_reads_zero_one_flags_as_booleans_and_launches_them_as_accelerate_parses() -> None:
    cfg = formats.read(
        "--mixed_precision fp8 --fp8_backend te --fp8_override_linear_precision false,true,0 "
        "--fp8_pad_inner_dim 0 --num_processes 1",
        "cli",
    )
    assert cfg.get("fp8_config.override_linear_precision") == (False, True, False)
    assert cfg.get("fp8_config.pad_inner_dim") is False
    env = launch_env(cfg, version="1.15").env
    assert [env[f"ACCELERATE_FP8_OVERRIDE_{p}"] for p in ("FPROP", "DGRAD", "WGRAD")] == ["0", "1", "0"]  # parser: 0/1
    assert env["ACCELERATE_FP8_PAD_INNER_DIM"] == "0"
    again = formats.read(formats.write(cfg, "cli", "1.15")[0], "cli")
    assert again.get("fp8_config.override_linear_precision") == (False, True, False)


@needs_corpus
def test_fp8_override_round_trips_through_flags() -> None:
    text, _ = formats.write(read(FP8), "cli", "1.15")
    assert "--fp8_override_linear_precision false,false,false" in " ".join(text.split())
    assert formats.read(text, "cli").get("fp8_config.override_linear_precision") == (False, False, False)


def test_fp8_override_written_as_a_string_cannot_be_a_flag() -> None:
    cfg = formats.read(
        "distributed_type: 'NO'\nmixed_precision: fp8\nfp8_config:\n  backend: TE\n"
        "  override_linear_precision: (false, false, false)\n",
        "yaml",
    )
    text, findings = formats.write(cfg, "cli", "1.15")
    assert "override_linear_precision" not in text
    assert any(f.key == "fp8_config.override_linear_precision" and f.severity == "warning" for f in findings)
    formats.read(text, "cli")  # the flags stay readable


@needs_corpus
@pytest.mark.parametrize(
    "path,keys",
    [
        (VALIDATE, ["fsdp_config.fsdp_sync_module_states", "deepspeed_config.deepspeed_config_file"]),
        (BLOCKRANK_DS, ["deepspeed_config.gradient_accumulation_steps", "deepspeed_config.gradient_clipping"]),
    ],
)
def test_sections_the_launch_path_ignores_are_reported_not_rewritten(path: Path, keys: list[str]) -> None:
    """accelerate exports nothing for these (distributed_type is not FSDP/DEEPSPEED): neither do env and cli."""
    for fmt in ("env", "cli"):
        text, findings = formats.write(read(path), fmt, "1.15")
        assert set(keys) <= {f.key for f in findings}, fmt
        assert "auto" not in text and "GRADIENT_ACCUMULATION" not in text and "SYNC_MODULE_STATES" not in text
        back = formats.read(text, fmt)
        assert not set(keys) & set(back.entries), fmt


@needs_corpus
def test_parallelism_without_fsdp_is_reported_key_by_key() -> None:
    cfg = read(ULYSSES)
    text, findings = formats.write(cfg, "cli", "1.15")
    assert "--use_parallelism_config" not in text
    for path in (
        "parallelism_config.parallelism_config_sp_size",
        "parallelism_config.parallelism_config_dp_shard_size",
    ):
        assert any(f.key == path and f.severity == "warning" and "--use_fsdp" in f.message for f in findings), path
    env_text, _ = formats.write(cfg, "env", "1.15")  # env carries them
    assert "PARALLELISM_CONFIG_SP_SIZE=2" in env_text and "PARALLELISM_CONFIG_DP_SHARD_SIZE=2" in env_text


def test_omp_num_threads_is_the_launch_flag_not_an_unknown_name() -> None:
    from accelconf.formats.env import reader_findings

    default = formats.read("ACCELERATE_MIXED_PRECISION=bf16\nOMP_NUM_THREADS=1\n", "env")
    assert not default.unknown  # 1 is what accelerate launch writes without the flag
    cfg = formats.read("ACCELERATE_MIXED_PRECISION=bf16\nOMP_NUM_THREADS=4\n", "env")
    assert cfg.unknown["--num_cpu_threads_per_process"].value == 4
    assert [(f.rule, f.line) for f in reader_findings(cfg)] == [("env.launcher-only", 2)]
    env_text, _ = formats.write(cfg, "env", "1.15")
    assert "OMP_NUM_THREADS=4" in env_text
    cli_text, findings = formats.write(cfg, "cli", "1.15")
    assert "--num_cpu_threads_per_process 4" in cli_text
    assert not any(f.rule == "convert.lossy" and "OMP_NUM_THREADS" in f.message for f in findings)
    _, to_yaml = formats.write(cfg, "yaml")
    assert any(f.key == "--num_cpu_threads_per_process" and f.rule == "convert.lossy" for f in to_yaml)


def test_python_only_arguments_never_reach_a_config_file(tmp_path, capsys):
    """A kwarg with no config-file key is reported and left out: the YAML must stay loadable."""
    from accelconf.accelerate.validate import validate_document
    from accelconf.cli import main
    from accelconf.text.document import load_text

    src = tmp_path / "train.py"
    src.write_text(
        "from accelerate import Accelerator\n"
        "from accelerate.utils import DataLoaderConfiguration, FullyShardedDataParallelPlugin\n"
        "acc = Accelerator(mixed_precision='bf16', dataloader_config=DataLoaderConfiguration(split_batches=True),\n"
        "                  fsdp_plugin=FullyShardedDataParallelPlugin(cpu_offload=True, fsdp_version=2))\n"
    )
    assert main(["to-yaml", str(src)]) == 0
    cap = capsys.readouterr()
    assert "Accelerator" not in cap.out and "fsdp_offload_params: true" in cap.out
    assert not [f for f in validate_document(load_text(cap.out)) if f.rule == "unknown-key"]
    assert f"{src}:3:" in cap.err and "dataloader_config" in cap.err and "no config-file key holds it" in cap.err
    assert f"{src}:0:0: warning: {src}" not in cap.err  # positions are not printed twice


# -- exit codes and output, one rule for every command -----------------------------------


def test_an_error_finding_exits_1_in_every_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # a value the FSDP plugin refuses is an error finding: exit 1, whatever the command
    path = tmp_path / "odd.yaml"
    path.write_text("distributed_type: FSDP\nnum_processes: 2\nfsdp_config:\n  fsdp_sharding_strategy: HALF_SHARD\n")
    code = main(["to-env", str(path)])
    err = capsys.readouterr().err
    assert "error:" in err and code == 1
    code = main(["to-yaml", str(path)])
    assert "error:" in capsys.readouterr().err and code == 1
    clean = tmp_path / "clean.yaml"
    clean.write_text("distributed_type: MULTI_GPU\nnum_processes: 2\nmixed_precision: bf16\n")
    for command in ("to-env", "to-cli", "to-kwargs", "to-yaml", "to-json", "validate"):
        assert main([command, str(clean)]) == 0, command
        capsys.readouterr()
    from accelconf.findings import Finding
    from accelconf.report import FileResult, exit_code

    assert exit_code([FileResult("x", [Finding("r", "error", "m")])]) == 1
    assert exit_code([FileResult("x", [Finding("r", "warning", "m")])]) == 0
    assert exit_code([FileResult("x", [Finding("r", "warning", "m")])], strict=True) == 1


def test_whole_file_findings_have_no_position() -> None:
    from accelconf.findings import Finding
    from accelconf.report import FileResult, render

    res = [
        FileResult(
            "c.yaml",
            [Finding("convert.lossy", "info", "whole file"), Finding("x", "warning", "here", line=3, column=5)],
        )
    ]
    text = render(res, "text")
    assert "c.yaml: info: whole file [convert.lossy]" in text and "c.yaml:3:5: warning: here [x]" in text
    assert ":0:0" not in text
    js = json.loads(render(res, "json"))["files"][0]["findings"]
    whole = next(f for f in js if f["rule"] == "convert.lossy")
    assert whole["line"] is None and whole["column"] is None
    assert next(f for f in js if f["rule"] == "x")["line"] == 3
    gh = render(res, "github").splitlines()
    assert (
        gh[0] == "::warning file=c.yaml,line=3,col=5,title=x::here"
        or gh[1] == "::warning file=c.yaml,line=3,col=5,title=x::here"
    )
    assert "::notice file=c.yaml,title=convert.lossy::whole file" in gh


def test_convert_prints_whole_file_findings_without_0_0(capsys: pytest.CaptureFixture[str]) -> None:
    main(["to-kwargs", str(FSDP2)])
    err = capsys.readouterr().err
    assert ":0:0:" not in err and f"{FSDP2}: info:" in err


def test_a_finding_is_printed_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "sn.yaml"
    path.write_text(
        "distributed_type: MULTI_GPU\nnum_processes: 16\nnum_machines: 2\nmain_process_ip: 10.0.0.1\n"
        "same_network: true\n"
    )
    # (to-kwargs has no --all-ranks: Accelerator arguments are the same on every node)
    for argv in (["to-kwargs", str(path)], ["to-env", "--all-ranks", str(path)], ["to-cli", "--all-ranks", str(path)]):
        main(argv)
        lines = [ln for ln in capsys.readouterr().err.splitlines() if ln]
        assert len(lines) == len(set(lines)), lines
        assert sum("same_network" in ln for ln in lines) == 1, (argv, lines)


@pytest.mark.parametrize(
    "source,fmt",
    [
        ("accelerate launch --use_fsdp --num_processes 2 --fsdp_sharding_strategy HALF_SHARD train.py\n", "cli"),
        ("ACCELERATE_USE_FSDP=true\nFSDP_SHARDING_STRATEGY=HALF_SHARD\n", "env"),
        (
            "from accelerate.utils import FullyShardedDataParallelPlugin\n"
            "FullyShardedDataParallelPlugin(sharding_strategy='HALF_SHARD')\n",
            "kwargs",
        ),
        ("distributed_type: FSDP\nnum_processes: 2\nfsdp_config:\n  fsdp_sharding_strategy: HALF_SHARD\n", "yaml"),
    ],
)
@pytest.mark.parametrize("target", ["env", "cli", "yaml"])
def test_converters_check_values_as_validate_does(source: str, fmt: str, target: str) -> None:
    from accelconf.commands.convert import convert_text

    _, findings = convert_text(source, "in", target, fmt, "1.15")
    bad = [f for f in findings if f.rule == "invalid-value"]
    assert len(bad) == 1 and bad[0].severity == "error" and "HALF_SHARD" in bad[0].message, findings
    assert bad[0].line >= 1  # at the flag, variable, keyword or key that carries it


# -- everything accelconf writes validates clean --------------------------------


def _errors(text: str, fmt: str, version: str = "1.15") -> list:
    from accelconf.accelerate.validate import validate_document
    from accelconf.text.document import load_text

    return [
        f
        for f in validate_document(load_text(text, "<written>", fmt), accelerate_version=version)
        if f.severity == "error"
    ]


def _outputs(text: str, path: str, version: str = "1.15") -> dict[str, tuple[str, str, set[str]]]:
    """Every text accelconf writes as a config file from one config: name -> (text, format, allowed error rules)."""
    from accelconf.accelerate.fmt import format_document
    from accelconf.accelerate.migrate import migrate_text
    from accelconf.commands.convert import convert_text
    from accelconf.text.document import load_text

    fmt = "json" if path.endswith(".json") else "yaml"
    out = {
        "fmt": (format_document(load_text(text, path)).text, fmt, set()),
        "migrate": (migrate_text(text, path)[0], fmt, set()),
    }
    for target in ("yaml", "json"):
        out[f"to-{target}"] = (convert_text(text, path, target, fmt, version)[0], target, set())
    for via in ("env", "cli", "kwargs"):
        try:
            middle = convert_text(text, path, via, fmt, version)[0]
        except InputError:
            continue  # a config accelerate refuses to launch has no env/flags/kwargs
        back, found = convert_text(middle, f"x.{via}", "yaml", via, version)
        # env and kwargs do not carry the process count: the converter says so, the file lacks it;
        # an input the converter itself reports as an error (flags spelling a value Accelerator() refuses) stays one
        allowed = {"missing-key"} if any(f.rule == "convert.incomplete" for f in found) else set()
        allowed |= {f.rule for f in found if f.severity == "error"}
        out[f"{via}->yaml"] = (back, "yaml", allowed)
    return out


def _clean_corpus() -> list[Path]:
    from accelconf.accelerate.validate import validate_document
    from accelconf.text.document import load_file
    from tests.conftest import corpus_files

    out = []
    for p in corpus_files("accelerate"):
        try:
            if not [f for f in validate_document(load_file(p)) if f.severity == "error"]:
                out.append(p)
        except InputError:
            pass
    return out


CLEAN_CORPUS = _clean_corpus()


@pytest.mark.parametrize("path", CLEAN_CORPUS, ids=lambda p: p.name[:70])
def test_everything_written_from_the_corpus_validates_clean(path: Path) -> None:
    for name, (text, fmt, allowed) in _outputs(path.read_text(encoding="utf-8-sig"), str(path)).items():
        bad = [f for f in _errors(text, fmt) if f.rule not in allowed]
        assert not bad, f"{name}:\n{text}\n{bad}"


def test_env_to_yaml_leaves_out_mixed_precision_beside_a_deepspeed_file() -> None:
    from accelconf.commands.convert import convert_text

    env = "ACCELERATE_USE_DEEPSPEED=true\nACCELERATE_DEEPSPEED_CONFIG_FILE=ds.json\nACCELERATE_MIXED_PRECISION=no\n"
    text, found = convert_text(env, "x.env", "yaml", "env", "1.15")
    assert "mixed_precision" not in text and "deepspeed_config_file: ds.json" in text
    assert not [f for f in _errors(text, "yaml") if f.rule != "missing-key"]
    assert any(f.key == "mixed_precision" and f.rule == "convert.lossy" for f in found)
    # the user's own file keeps what it says (validate reports the conflict there)
    own = (
        "distributed_type: DEEPSPEED\nnum_processes: 2\nmixed_precision: bf16\ndeepspeed_config:\n"
        "  deepspeed_config_file: ds.json\n"
    )
    assert "mixed_precision: bf16" in convert_text(own, "x.yaml", "yaml", "yaml", "1.15")[0]


def _clean_generated() -> st.SearchStrategy[str]:
    """Generated configs accelerate launches: a paradigm, a process layout and valid values of its section."""

    def section(name: str) -> st.SearchStrategy[dict]:
        settings_ = [
            s
            for s in registry.settings_in(name, "1.15")
            if s.type in ("enum", "bool") and s.choices is not None or s.type == "bool"
        ]
        values = {s.key: (st.sampled_from(s.choices) if s.choices else st.booleans()) for s in settings_ if not s.lost}
        return st.fixed_dictionaries({}, optional=values)

    @st.composite
    def build(draw: st.DrawFn) -> str:
        from accelconf.formats.yamljson import dump_yaml

        dt = draw(st.sampled_from(["MULTI_GPU", "FSDP", "DEEPSPEED", "NO"]))
        data: dict = {"distributed_type": dt, "mixed_precision": draw(st.sampled_from(["no", "fp16", "bf16"]))}
        if dt != "NO":
            machines = draw(st.sampled_from([1, 2]))
            data.update(
                num_machines=machines,
                num_processes=machines * draw(st.sampled_from([2, 4, 8])),
                main_process_ip="10.0.0.1",
            )
        if dt == "FSDP":
            data["fsdp_config"] = draw(section("fsdp_config"))
        if dt == "DEEPSPEED":
            data["deepspeed_config"] = draw(section("deepspeed_config"))
        return dump_yaml(data)

    return build()


@settings(max_examples=40, deadline=None)
@given(_clean_generated())
def test_everything_written_from_generated_configs_validates_clean(text: str) -> None:
    from hypothesis import assume

    assume(not _errors(text, "yaml"))  # the property is about configs accelerate accepts
    for name, (out, fmt, allowed) in _outputs(text, "gen.yaml").items():
        bad = [f for f in _errors(out, fmt) if f.rule not in allowed]
        assert not bad, f"{name}:\n{text}\n->\n{out}\n{bad}"


# -- Python names accelerate lacks are errors with a ranked did-you-mean ----------


def test_python_names_accelerate_lacks_are_errors_with_ranked_did_you_mean() -> None:
    src = (
        "from accelerate import Accelerator, FSDPPlugin\n"
        "from accelerate.utils import FullyShardedDataParallelPlugin as FSDP\n"
        "plugin = FSDPPlugin(sharding_strategy='FULL_SHARD')\n"
        "p2 = FSDP(cpu_offload=True)\n"
        "acc = Accelerator(mixed_precison='bf16', fsdp_plugin=p2)\n"
    )
    cfg = formats.read(src, "kwargs", "train.py")
    errors = [(f.line, f.message) for f in cfg.notes if f.severity == "error"]
    assert len(errors) == 3, cfg.notes
    assert (
        errors[0][0] == 1
        and "ImportError" in errors[0][1]
        and "did you mean FullyShardedDataParallelPlugin" in errors[0][1]
    )
    assert errors[1][0] == 3 and "FSDPPlugin(...)" in errors[1][1]
    assert errors[2][0] == 5 and "TypeError" in errors[2][1] and "did you mean mixed_precision" in errors[2][1]
    assert cfg.get("fsdp_config.fsdp_offload_params") is True  # an aliased import is still read
    assert "Accelerator.mixed_precison" not in cfg.unknown  # reported once, as the error
    from accelconf.text import suggest

    ranked = suggest.ranked(
        "FSDPPlugin",
        ["DeepSpeedPlugin", "FullyShardedDataParallelPlugin", "TorchDynamoPlugin"],
        fold_case=True,
        abbreviations=True,
    )
    assert ranked[0] == "FullyShardedDataParallelPlugin"
    assert suggest.ranked("mixed_precison", ["mixed_precision", "cpu", "split_batches"]) == ["mixed_precision"]


# -- explain shows the shell values the launcher replaces --------------------------


def test_explain_shows_replaced_shell_values_and_variables_nothing_reads(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cfg = tmp_path / "c.yaml"
    cfg.write_text(
        "distributed_type: FSDP\nnum_processes: 2\nmixed_precision: bf16\nfsdp_config:\n"
        "  fsdp_sharding_strategy: FULL_SHARD\n"
    )
    env = tmp_path / "shell.env"
    env.write_text(
        "ACCELERATE_MIXED_PRECISION=fp16\nFSDP_SHARDING_STRATEGY=NO_SHARD\nACCELERATE_FSDP_SHARDING_STRATEGY=NO_SHARD\n"
    )
    assert main(["explain", str(cfg), "--env-file", str(env), "--format", "json"]) == 0
    rows = {r["env"]: r for r in json.loads(capsys.readouterr().out)["settings"]}
    mp = rows["ACCELERATE_MIXED_PRECISION"]
    assert mp["value"] == "bf16" and f"replaces ACCELERATE_MIXED_PRECISION=fp16 from {env}:1" in mp["note"]
    assert f"replaces FSDP_SHARDING_STRATEGY=NO_SHARD from {env}:2" in rows["FSDP_SHARDING_STRATEGY"]["note"]
    unknown = [r for r in rows.values() if r["setting"] == "ACCELERATE_FSDP_SHARDING_STRATEGY"]
    assert len(unknown) == 1 and unknown[0]["note"] == "read by nothing; did you mean FSDP_SHARDING_STRATEGY?"
    # converting the same env file: one finding per variable, not two
    assert main(["to-yaml", str(env)]) in (0, 1)
    err = [ln for ln in capsys.readouterr().err.splitlines() if "ACCELERATE_FSDP_SHARDING_STRATEGY" in ln]
    assert len(err) == 1 and "did you mean FSDP_SHARDING_STRATEGY" in err[0]


# -- every command over the corpus --------------------------------------------
