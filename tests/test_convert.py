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
from accelconf.cli import main
from accelconf.diff import diff
from accelconf.errors import InputError
from accelconf.accelerate.launch import LaunchError, launch_env

DATA = Path(__file__).resolve().parent / "data" / "convert"
FSDP2 = DATA / "fsdp2_multinode.yaml"
ZERO3 = DATA / "zero3.yaml"
SINGLE = DATA / "single.yaml"


def read(path: Path, version: str = "1.15"):
    return formats.read(path.read_text(), None, str(path), version)


# -- format detection and readers -----------------------------------------------------------------

@pytest.mark.parametrize("text,path,fmt", [
    ("a: 1\n", "x.yaml", "yaml"), ("{}", "x.json", "json"), ("A=1\n", "x.env", "env"), ("x = 1\n", "t.py", "kwargs"),
    ("accelerate launch --multi_gpu train.py\n", "-", "cli"), ("--num_processes 2\n", "", "cli"),
    ("export FSDP_VERSION=2\n# c\nA='b c'\n", "", "env"), ('{"distributed_type": "NO"}', "", "json"),
    ("from accelerate import Accelerator\nAccelerator()\n", "", "kwargs"), ("distributed_type: 'NO'\n", "", "yaml"),
])
def test_detect_format(text: str, path: str, fmt: str) -> None:
    assert formats.detect_format(text, path) == fmt


def test_env_reader_accepts_export_quotes_comments() -> None:
    text = ("# launched env\nexport ACCELERATE_MIXED_PRECISION=bf16\nFSDP_VERSION='2'\n"
            'FSDP_TRANSFORMER_CLS_TO_WRAP="LlamaDecoderLayer"  \nACCELERATE_USE_FSDP=true # inline\nACCELERATE_NUM_PROCESSES=8\n')
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
    cfg = formats.read("accelerate launch --use-fsdp --num-processes=4 --fsdp_version 2 "
                       "--fsdp-offload-params true --dynamo_use_fullgraph train.py --lr 1e-4", "cli")
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
    src = (f"open({str(marker)!r}, 'w').write('x')\nfrom accelerate import Accelerator\n"
           "from accelerate.utils import FullyShardedDataParallelPlugin, TorchDynamoPlugin\n"
           "p = FullyShardedDataParallelPlugin(fsdp_version=2, cpu_offload=True, transformer_cls_names_to_wrap=['A', 'B'],"
           " auto_wrap_policy='TRANSFORMER_BASED_WRAP', state_dict_type=compute())\n"
           "acc = Accelerator(mixed_precision='bf16', fsdp_plugin=p, dynamo_plugin=TorchDynamoPlugin(backend='INDUCTOR'))\n")
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
    assert env["ACCELERATE_CONFIG_DS_FIELDS"] == "zero_stage,gradient_accumulation_steps,offload_param_device,offload_param_nvme_path,zero3_init_flag,mixed_precision"
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
    assert launch_env(read(FSDP2, "1.4"), version="1.4", cli_overrides=cli).env["FSDP_STATE_DICT_TYPE"] == "SHARDED_STATE_DICT"
    assert launch_env(read(FSDP2), version="1.15", cli_overrides=cli).env["FSDP_STATE_DICT_TYPE"] == "FULL_STATE_DICT"


def test_launch_refusals() -> None:
    with pytest.raises(LaunchError, match="num_processes"):
        launch_env(formats.read("distributed_type: MULTI_GPU\n", "yaml"), version="1.15")
    with pytest.raises(LaunchError, match="unknown keys"):
        launch_env(formats.read("distributed_type: 'NO'\nipex_config: {ipex: true}\n", "yaml"), version="1.15")
    with pytest.raises(LaunchError, match="lower"):
        launch_env(formats.read("distributed_type: 'NO'\nmixed_precision: no\n", "yaml"), version="1.15")
    with pytest.raises(LaunchError, match="sync_module_states"):
        launch_env(formats.read("distributed_type: FSDP\nnum_processes: 2\nfsdp_config: {fsdp_sync_module_states: false}\n", "yaml"),
                   version="1.15")


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
@given(st.dictionaries(st.sampled_from([s.key for s in FSDP_KEYS]), st.none(), max_size=5).flatmap(
    lambda keys: st.fixed_dictionaries({k: st.sampled_from(registry.get("fsdp_config", k).choices or (True, False))  # type: ignore[union-attr]
                                        for k in keys})))
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

    monkeypatch.setattr(sys, "stdin", io.StringIO("FSDP_VERSION=2\nACCELERATE_USE_FSDP=true\nACCELERATE_NUM_PROCESSES=4\n"))
    assert main(["to-yaml", "-", "--from", "env"]) == 0
    out, err = capsys.readouterr()
    assert "distributed_type: FSDP" in out and "fsdp_version: 2" in out
    assert "<stdin>:3:1: warning: accelerate never reads ACCELERATE_NUM_PROCESSES" in err


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
    script.write_text("from accelerate import Accelerator\nAccelerator(mixed_precision='fp16', gradient_accumulation_steps=8)\n")
    assert main(["explain", str(ZERO3), "--launch-args", "--zero_stage 2", "--env-file", str(shell), "--kwargs", str(script),
                 "--format", "json"]) == 0
    rows = {r["setting"]: r for r in json.loads(capsys.readouterr().out)["settings"]}
    assert rows["deepspeed_config.zero_stage"]["value"] == "2" and rows["deepspeed_config.zero_stage"]["source"] == "cli"
    assert rows["mixed_precision"]["source"] == "kwarg"
    assert rows["deepspeed_config.gradient_accumulation_steps"]["source"] == "config"  # the launcher overwrites the shell
    assert rows["ACCELERATE_NUM_PROCESSES"]["note"] == "read by nothing"
    assert "replaces" in rows["Accelerator.gradient_accumulation_steps"]["note"]


def test_explain_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", str(FSDP2)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("SETTING") and "fsdp_config.fsdp_version" in out


def test_library_never_imports_torch_or_accelerate() -> None:
    code = ("import sys, accelconf.accelerate.launch, accelconf.formats, accelconf.formats.env, accelconf.formats.cli, "
            "accelconf.formats.kwargs, accelconf.formats.yamljson, accelconf.commands.convert, accelconf.commands.explain\n"
            "from accelconf.cli import main\n"
            f"main(['to-kwargs', {str(FSDP2)!r}])\n"
            "assert 'torch' not in sys.modules and 'accelerate' not in sys.modules, 'heavy import'\n")
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)


# -- round trips over the corpus: what a format cannot carry is reported, nothing else changes ---------

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "accelerate"
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
    assert any("MULTI_XPU" in note for note in back.notes)
    _, same = formats.write(formats.read("distributed_type: MULTI_GPU\nnum_processes: 2\n", "yaml"), "cli", "1.15")
    assert not any(f.key == "distributed_type" for f in same)


def test_cli_reads_zero_one_flags_as_booleans_and_launches_them_as_accelerate_parses() -> None:
    cfg = formats.read("--mixed_precision fp8 --fp8_backend te --fp8_override_linear_precision false,true,0 "
                       "--fp8_pad_inner_dim 0 --num_processes 1", "cli")
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
    cfg = formats.read("distributed_type: 'NO'\nmixed_precision: fp8\nfp8_config:\n  backend: TE\n"
                       "  override_linear_precision: (false, false, false)\n", "yaml")
    text, findings = formats.write(cfg, "cli", "1.15")
    assert "override_linear_precision" not in text
    assert any(f.key == "fp8_config.override_linear_precision" and f.severity == "warning" for f in findings)
    formats.read(text, "cli")  # the flags stay readable


@needs_corpus
@pytest.mark.parametrize("path,keys", [
    (VALIDATE, ["fsdp_config.fsdp_sync_module_states", "deepspeed_config.deepspeed_config_file"]),
    (BLOCKRANK_DS, ["deepspeed_config.gradient_accumulation_steps", "deepspeed_config.gradient_clipping"]),
])
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
    for path in ("parallelism_config.parallelism_config_sp_size", "parallelism_config.parallelism_config_dp_shard_size"):
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
    from accelconf.cli import main
    from accelconf.text.document import load_text
    from accelconf.accelerate.validate import validate_document

    src = tmp_path / "train.py"
    src.write_text(
        "from accelerate import Accelerator\n"
        "from accelerate.utils import DataLoaderConfiguration, FullyShardedDataParallelPlugin\n"
        "acc = Accelerator(mixed_precision='bf16', dataloader_config=DataLoaderConfiguration(split_batches=True),\n"
        "                  fsdp_plugin=FullyShardedDataParallelPlugin(cpu_offload=True, fsdp_version=2))\n")
    assert main(["to-yaml", str(src)]) == 0
    cap = capsys.readouterr()
    assert "Accelerator" not in cap.out and "fsdp_offload_params: true" in cap.out
    assert not [f for f in validate_document(load_text(cap.out)) if f.rule == "unknown-key"]
    assert f"{src}:3:" in cap.err and "dataloader_config" in cap.err and "dropped" in cap.err
    assert f"{src}:0:0: warning: {src}" not in cap.err  # positions are not printed twice
