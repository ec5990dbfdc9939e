"""What runs on the Trainer path, from the CLI: ``explain`` of arguments files and launch scripts with an
accelerate config, the DeepSpeed mismatches at their JSON keys, and the pure functions behind them.
(The values themselves are proven against transformers in ``test_trainer_runs_oracle.py``.)"""

from __future__ import annotations

import json

import pytest

from accelconf.text.document import load_text
from accelconf.trainer.argvalues import ArgValues
from accelconf.trainer.runs import deepspeed_mismatches, hidden_size_of, what_runs

ARGS = """per_device_train_batch_size: 4
gradient_accumulation_steps: 8
bf16: true
fsdp: "full_shard auto_wrap"
fsdp_config:
  fsdp_transformer_layer_cls_to_wrap: LlamaDecoderLayer
  offload_params: true
output_dir: out
"""
ACCEL = """compute_environment: LOCAL_MACHINE
distributed_type: FSDP
mixed_precision: fp16
num_processes: 8
fsdp_config:
  fsdp_version: 2
  fsdp_offload_params: false
  fsdp_auto_wrap_policy: TRANSFORMER_BASED_WRAP
  fsdp_state_dict_type: SHARDED_STATE_DICT
"""
DS = """{
  "train_micro_batch_size_per_gpu": "4",
  "gradient_accumulation_steps": 4,
  "gradient_clipping": "auto",
  "bf16": {"enabled": "auto"},
  "optimizer": {"type": "AdamW", "params": {"lr": "auto", "betas": [0.9, 0.95]}},
  "zero_optimization": {"stage": 3, "reduce_bucket_size": "auto", "stage3_prefetch_bucket_size": "auto"}
}
"""


@pytest.fixture
def files(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "args.yaml").write_text(ARGS)
    (tmp_path / "accel.yaml").write_text(ACCEL)
    (tmp_path / "ds.json").write_text(DS)
    (tmp_path / "ds_args.yaml").write_text(
        "per_device_train_batch_size: 4\ngradient_accumulation_steps: 8\nbf16: true\n"
        "deepspeed: ds.json\noutput_dir: out\n"
    )
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text(
        json.dumps(
            {
                "model_type": "llama",
                "hidden_size": 64,
                "intermediate_size": 128,
                "num_hidden_layers": 2,
                "num_attention_heads": 4,
                "vocab_size": 128,
            }
        )
    )
    return tmp_path


def _rows(out: dict, prefix: str) -> dict:
    return {r["setting"]: r for r in out["trainer_settings"] if r["setting"].startswith(prefix)}


def test_explain_arguments_with_an_accelerate_config_shows_the_plugin_fields_and_what_they_override(files, cli):
    r = cli("explain", "args.yaml", "--config", "accel.yaml", "--format", "json")
    assert r.code == 0, r.err
    out = json.loads(r.out)
    fsdp = _rows(out, "fsdp_plugin.")
    # offload_params is accelerate's name: transformers never reads it, the accelerate config's false wins
    assert fsdp["fsdp_plugin.cpu_offload"]["value"] is False
    assert fsdp["fsdp_plugin.cpu_offload"]["source"] == "accelerate config"
    # the Trainer passes state_dict_type itself: the accelerate config's SHARDED_STATE_DICT is overridden
    sd = fsdp["fsdp_plugin.state_dict_type"]
    assert sd["value"] == "FULL_STATE_DICT" and "FSDP_STATE_DICT_TYPE=SHARDED_STATE_DICT" in sd["note"]
    assert fsdp["fsdp_plugin.transformer_cls_names_to_wrap"]["where"] == "args.yaml:6:3"
    mp = _rows(out, "Accelerator.mixed_precision")["Accelerator.mixed_precision"]
    assert (mp["value"], mp["where"]) == ("bf16", "args.yaml:3:1") and "ACCELERATE_MIXED_PRECISION=fp16" in mp["note"]
    ga = _rows(out, "Accelerator.gradient_accumulation_steps")["Accelerator.gradient_accumulation_steps"]
    assert ga["value"] == 1
    assert any(s["setting"] == "mixed_precision" for s in out["settings"])  # the launcher's own rows come first


def test_explain_text_table_holds_the_launcher_rows_then_the_trainer_rows(files, cli):
    r = cli("explain", "args.yaml", "--config", "accel.yaml")
    assert r.code == 0, r.err
    lines = r.out.splitlines()
    assert lines[0].split()[:3] == ["SETTING", "VALUE", "FROM"]
    names = [ln.split()[0] for ln in lines[1:]]
    assert (
        names.index("num_processes")
        < names.index("Accelerator.mixed_precision")
        < names.index("fsdp_plugin.cpu_offload")
    )


def test_explain_deepspeed_arguments_fills_auto_and_reports_each_mismatch_at_its_json_key(files, cli):
    r = cli("explain", "ds_args.yaml", "--model", "model", "--format", "json")
    assert r.code == 1
    out = json.loads(r.out)
    cfg = out["trainer"]["deepspeed_config"]
    assert cfg["zero_optimization"]["reduce_bucket_size"] == 64 * 64
    assert cfg["zero_optimization"]["stage3_prefetch_bucket_size"] == int(0.9 * 64 * 64)
    assert cfg["gradient_clipping"] == 1.0 and cfg["bf16"]["enabled"] is True
    found = {(f["key"], f["line"]) for f in out["findings"] if f["rule"] == "trainer-deepspeed-mismatch"}
    assert found == {
        ("train_micro_batch_size_per_gpu", 2),
        ("gradient_accumulation_steps", 3),
        ("optimizer.params.betas", 6),
    }
    assert "ds.json:2:37: error:" in r.err and "raises in train()" in r.err


def test_explain_without_a_model_says_the_model_size_entries_are_filled_at_train(files, cli):
    out = json.loads(cli("explain", "ds_args.yaml", "--format", "json").out)
    assert (
        out["trainer"]["deepspeed_config"]["zero_optimization"]["reduce_bucket_size"]
        == "filled from the model at train()"
    )


def test_explain_launch_script_types_command_line_words_and_finds_the_deepspeed_json(files, cli):
    (files / "run.sh").write_text(
        "torchrun --nproc_per_node 4 train.py \\\n  --deepspeed ds.json --bf16 True "
        "--per_device_train_batch_size 4 --gradient_accumulation_steps 4 --adam_beta2 0.95 --output_dir o\n"
    )
    out = json.loads(cli("explain", "run.sh", "--format", "json").out)
    keys = {f["key"] for f in out["findings"]}
    assert keys == {"train_micro_batch_size_per_gpu"}  # "4" in the JSON is not 4: the rest agree once typed


def test_a_deepspeed_json_not_found_is_a_warning_at_the_argument_and_the_rest_is_shown(files, cli):
    (files / "bad.yaml").write_text("bf16: true\ndeepspeed: nowhere.json\noutput_dir: o\n")
    r = cli("explain", "bad.yaml")
    assert r.code == 0 and "bad.yaml:2:12: warning: 'nowhere.json' is not found" in r.err, r.err
    assert "Accelerator.mixed_precision" in r.out and "DeepSpeed config was not read" in r.out


def test_a_fsdp_config_file_alone_is_explained_as_fsdp_true_with_it(files, cli):
    (files / "fsdp.json").write_text(
        '{\n  "fsdp_version": 1,\n  "backward_prefetch": "backward_pre",\n  "offload_params": true\n}\n'
    )
    out = json.loads(cli("explain", "fsdp.json", "--format", "json").out)
    fsdp = _rows(out, "fsdp_plugin.")
    assert fsdp["fsdp_plugin.backward_prefetch"]["value"] == "BACKWARD_PRE"
    assert fsdp["fsdp_plugin.backward_prefetch"]["where"] == "fsdp.json:3:3"
    assert fsdp["fsdp_plugin.cpu_offload"]["value"] is False  # offload_params: accelerate's name, not read


def test_model_options_need_trainer_arguments(files, cli):
    r = cli("explain", "accel.yaml", "--model", "model")
    assert r.code == 2 and "--model" in r.err


def test_string_and_number_differ_as_transformers_compares_them():
    doc = load_text(
        '{"train_micro_batch_size_per_gpu": "8", "gradient_clipping": 1, "zero_optimization": {}}', "ds.json"
    )
    found = deepspeed_mismatches(ArgValues({}), doc)
    # 1 == 1.0 in Python (no mismatch); "8" != 8 (a mismatch)
    assert [(f.key, f.line, f.column) for f in found] == [("train_micro_batch_size_per_gpu", 1, 36)]


def test_fp16_and_bf16_together_raise_at_construction():
    runs = what_runs(ArgValues({"fp16": True, "bf16": True}))
    assert [r.stage for r in runs.raises] == ["construction"]


def test_hidden_size_read_as_trainer_config_finalize_reads_it():
    assert hidden_size_of({"hidden_sizes": [32, 96, 64]}) == 96
    assert hidden_size_of({"text_config": {"hidden_size": 40}}) == 40
    assert hidden_size_of({"vocab_size": 3}) is None


def _validate_clean(cli, path) -> None:
    r = cli("validate", str(path))
    assert r.code == 0 and "error" not in r.out + r.err and "warning" not in r.out + r.err, r.out + r.err


def test_to_yaml_of_arguments_launches_the_same_fsdp_plugin_and_validates_clean(files, cli):
    r = cli("to-yaml", "args.yaml")
    assert r.code == 0, r.err
    (files / "back.yaml").write_text(r.out)
    _validate_clean(cli, files / "back.yaml")
    out = json.loads(cli("explain", "args.yaml", "--format", "json").out)
    plugin = {k.split(".", 1)[1]: v["value"] for k, v in _rows(out, "fsdp_plugin.").items()}
    import yaml

    written = yaml.safe_load(r.out)["fsdp_config"]
    assert written["fsdp_state_dict_type"] == plugin["state_dict_type"] == "FULL_STATE_DICT"
    assert written["fsdp_offload_params"] is plugin["cpu_offload"] is False  # offload_params was never read
    assert written["fsdp_transformer_layer_cls_to_wrap"] == "LlamaDecoderLayer"
    assert "num_processes" in r.err  # what the arguments cannot tell is said


def test_to_args_of_an_accelerate_config_builds_the_same_plugin_and_validates_clean(files, cli):
    r = cli("to-args", "accel.yaml")
    assert r.code == 0, r.err
    (files / "targs.yaml").write_text(r.out)
    _validate_clean(cli, files / "targs.yaml")
    from accelconf import formats
    from accelconf.accelerate.launch import launch_env

    cfg = formats.read(ACCEL, None, "accel.yaml")
    env = {k: (v, "launch", "") for k, v in launch_env(cfg).env.items()}
    import yaml

    runs_launch = what_runs(
        ArgValues({"fsdp": True}), env=env
    )  # the Trainer without fsdp_config, under accelerate launch
    runs_args = what_runs(ArgValues(yaml.safe_load(r.out)))  # the converted arguments, without accelerate launch
    keep = ("fsdp_version", "cpu_offload", "auto_wrap_policy", "state_dict_type", "reshard_after_forward")
    assert {k: runs_args.fsdp[k].value for k in keep}["state_dict_type"] == "SHARDED_STATE_DICT"
    assert runs_args.fsdp["cpu_offload"].value == runs_launch.fsdp["cpu_offload"].value is False
    assert runs_args.mixed_precision.value == "fp16"


def test_to_args_of_inline_deepspeed_writes_a_deepspeed_dict_with_auto_entries(files, cli):
    (files / "dsacc.yaml").write_text(
        "compute_environment: LOCAL_MACHINE\ndistributed_type: DEEPSPEED\nmixed_precision: bf16\n"
        "num_processes: 4\ndeepspeed_config:\n  zero_stage: 3\n  offload_optimizer_device: cpu\n"
        "  gradient_accumulation_steps: 4\n  zero3_save_16bit_model: true\n"
    )
    r = cli("to-args", "dsacc.yaml")
    import yaml

    out = yaml.safe_load(r.out)
    assert out["deepspeed"]["zero_optimization"] == {
        "stage": 3,
        "offload_optimizer": {"device": "cpu"},
        "stage3_gather_16bit_weights_on_model_save": True,
    }
    assert (out["bf16"], out["gradient_accumulation_steps"]) == (True, 4)
    (files / "dsargs_out.yaml").write_text(r.out)
    _validate_clean(cli, files / "dsargs_out.yaml")


def test_to_cli_of_arguments_is_a_torchrun_command_whose_words_read_back_as_the_same_arguments(files, cli):
    import shlex

    r = cli("to-cli", "args.yaml")
    words = shlex.split(r.out)
    assert words[:1] == ["torchrun"] and "accelerate" not in words
    (files / "run.sh").write_text(r.out)
    from accelconf.trainer.argvalues import from_trainer_args
    from accelconf.trainer.read import read_all

    group = next(g for g in read_all(r.out, "run.sh", "launch") if g.args)
    back = from_trainer_args(group)
    assert back.get("fsdp_config") == {
        "fsdp_transformer_layer_cls_to_wrap": "LlamaDecoderLayer",
        "offload_params": True,
    }
    assert (back.get("bf16"), back.get("gradient_accumulation_steps")) == (True, 8)


def test_diff_of_arguments_and_an_accelerate_config_compares_what_the_accelerator_is_built_with(files, cli):
    r = cli("diff", "args.yaml", "accel.yaml", "--format", "json")
    assert r.code == 1, r.err
    changes = {c["key"]: (c["a"], c["b"]) for c in json.loads(r.out)}
    assert changes["fsdp_plugin.state_dict_type"] == ("FULL_STATE_DICT", "SHARDED_STATE_DICT")
    assert changes["Accelerator.mixed_precision"] == ("bf16", "fp16")
    # neither offloads: the arguments' offload_params is never read, the config says false
    assert "fsdp_plugin.cpu_offload" not in changes


def test_diff_of_two_arguments_files_is_by_meaning(files, cli):
    (files / "same.yaml").write_text(
        "fsdp_config: {fsdp_transformer_layer_cls_to_wrap: [LlamaDecoderLayer]}\n"
        "fsdp: full_shard auto_wrap\nbf16: true\ngradient_accumulation_steps: 8\n"
        "per_device_train_batch_size: 4\noutput_dir: elsewhere\n"
    )
    r = cli("diff", "args.yaml", "same.yaml")
    assert r.code == 0, r.out + r.err
    (files / "other.yaml").write_text(ARGS.replace("full_shard auto_wrap", "shard_grad_op auto_wrap"))
    r = cli("diff", "args.yaml", "other.yaml", "--format", "json")
    assert r.code == 1
    assert {c["key"] for c in json.loads(r.out)} == {"fsdp_plugin.reshard_after_forward"}


def test_every_corpus_trainer_file_explains_without_a_traceback_and_its_conversions_validate_clean(
    cli, tmp_path, monkeypatch
):
    from tests.conftest import CORPUS

    folder = CORPUS / "trainer"
    if not folder.is_dir():
        pytest.skip(f"the shared corpus is not at {folder}")
    monkeypatch.chdir(folder)
    files = sorted(str(p.relative_to(folder)) for p in folder.glob("*/*") if not p.name.endswith(".tsv"))
    assert len(files) >= 60
    converted = 0
    for name in files:
        r = cli("explain", name, "--format", "json")
        assert r.code in (0, 1, 2) and "Traceback" not in r.err, (name, r.err)
        if r.code != 2:
            json.loads(r.out)
        if name.startswith("refs/"):
            continue  # DeepSpeed JSONs: explain needs the accelerate config that names them
        for target in ("to-yaml", "to-args"):
            r = cli(target, name)
            if r.code != 0:
                assert r.code == 2 and "Traceback" not in r.err, (target, name, r.err)
                continue
            out = tmp_path / f"{target}.yaml"
            out.write_text(r.out)
            v = cli("validate", str(out))
            assert v.code == 0 and "warning" not in v.out + v.err, (target, name, r.out, v.out + v.err)
            converted += 1
    assert converted >= 50


def test_deepspeed_mismatches_take_the_arguments_as_validate_reads_them():
    from accelconf.trainer.read import read_args

    group = read_args(
        "gradient_accumulation_steps: 8\nlearning_rate: 3.0e-5\ndeepspeed: ds.json\n", "a.yaml", "trainer-args"
    )
    doc = load_text(
        '{"gradient_accumulation_steps": 8, "optimizer": {"params": {"lr": 3e-5}}, "zero_optimization": {}}', "ds.json"
    )
    assert deepspeed_mismatches(group, doc) == []
    group = read_args("learning_rate: 3e-5\n", "a.yaml", "trainer-args")  # YAML 1.1: a string, as transformers gets it
    assert [f.key for f in deepspeed_mismatches(group, doc)] == ["gradient_accumulation_steps", "optimizer.params.lr"]


def test_explain_of_an_accelerate_launch_line_takes_its_config_file_and_flags(files, cli):
    (files / "al.sh").write_text(
        "accelerate launch --num_processes 2 --mixed_precision bf16 --config_file accel.yaml train.py \\\n"
        "  --deepspeed ds.json --per_device_train_batch_size 4 --output_dir o\n"
    )
    (files / "ds.json").write_text('{"train_batch_size": 8, "zero_optimization": {"stage": 2}}\n')
    out = json.loads(cli("explain", "al.sh", "--format", "json").out)
    launcher = {r["setting"]: r for r in out["settings"]}
    assert launcher["num_processes"]["value"] == 2 and launcher["num_processes"]["where"] == "--num_processes"
    mp = _rows(out, "Accelerator.mixed_precision")["Accelerator.mixed_precision"]
    # the flag reaches the Trainer as ACCELERATE_MIXED_PRECISION; DeepSpeed adds the bf16 section it enables
    assert mp["value"] == "bf16" and mp["where"] == "--mixed_precision"
    assert out["trainer"]["deepspeed_config"]["bf16"] == {"enabled": True}
    # train_batch_size = world size (2 processes) * 4 * 1: the JSON's 8 agrees
    assert not [f for f in out["findings"] if f["rule"] == "trainer-deepspeed-mismatch"]


def test_a_torchrun_line_gives_the_world_size_of_the_train_batch_size_check(files, cli):
    (files / "ds.json").write_text('{"train_batch_size": 32, "zero_optimization": {"stage": 2}}\n')
    (files / "tr.sh").write_text(
        "torchrun --nnodes=2 --nproc_per_node 4 train.py --deepspeed ds.json "
        "--per_device_train_batch_size 4 --output_dir o\n"
    )
    out = json.loads(cli("explain", "tr.sh", "--format", "json").out)
    assert not out["findings"]  # 2 nodes x 4 processes x 4 x 1 = 32
    (files / "tr.sh").write_text(
        "torchrun --nproc_per_node 4 train.py --deepspeed ds.json --per_device_train_batch_size 4 --output_dir o\n"
    )
    out = json.loads(cli("explain", "tr.sh", "--format", "json").out)
    assert [f["key"] for f in out["findings"]] == ["train_batch_size"]


def test_the_api_gives_what_runs_for_each_group_with_the_launchers_variables():
    import accelconf

    [(runs, findings)] = accelconf.trainer_runs(
        "fsdp: true\nbf16: true\ngradient_accumulation_steps: 2\n",
        "a.yaml",
        env={"FSDP_OFFLOAD_PARAMS": "true", "ACCELERATE_MIXED_PRECISION": "fp16"},
    )
    assert runs.fsdp["cpu_offload"].value is True and runs.fsdp["cpu_offload"].source == "accelerate config"
    assert runs.mixed_precision.value == "bf16" and "ACCELERATE_MIXED_PRECISION=fp16" in runs.mixed_precision.overrode
    assert findings == []


def test_explain_json_of_trainer_arguments_follows_the_published_output_schema(files, cli):
    import jsonschema

    from tests.conftest import ROOT

    schema = json.loads((ROOT / "schemas" / "accelconf-output.schema.json").read_text(encoding="utf-8"))
    schema.pop("oneOf")
    for argv in (["args.yaml", "--config", "accel.yaml"], ["ds_args.yaml"]):
        data = json.loads(cli("explain", "--format", "json", *argv).out)
        jsonschema.Draft7Validator({**schema, "$ref": "#/$defs/explain"}).validate(data)
        for row in data["trainer_settings"]:
            jsonschema.Draft7Validator({**schema, "$ref": "#/$defs/explain_row"}).validate(row)


def test_a_yaml_file_named_as_fsdp_config_raises_at_construction(files, cli):
    (files / "fsdp.yaml").write_text("version: 2\ncpu_offload: true\n")
    (files / "y.yaml").write_text("fsdp: true\nfsdp_config: fsdp.yaml\nbf16: true\n")
    r = cli("explain", "y.yaml")
    assert r.code == 1 and "y.yaml:2:1: error:" in r.err and "json.load" in r.err and "construction" in r.err, r.err


@pytest.mark.parametrize(
    ("values", "release", "steps"),
    [
        ({}, "4.46", 0),  # warmup_steps 0, warmup_ratio 0.0: ceil(120 * 0.0)
        ({}, "5.0", 0),
        ({}, "5.18", 1),  # trainer_config_finalize fills at least 1 from 5.18
        ({"warmup_ratio": 0.1}, "4.46", 12),
        ({"warmup_ratio": 0.1, "warmup_steps": 5}, "4.46", 5),  # 4.x: warmup_steps above 0 wins
        ({"warmup_ratio": 0.1, "warmup_steps": 5}, "5.0", 12),  # 5.0-5.14: a given ratio replaces it
        ({"warmup_steps": 0.1}, "5.24", 12),
        ({"warmup_steps": 30}, "5.24", 30),
    ],
)
def test_the_warmup_transformers_fills_follows_the_release(values, release, steps):
    from accelconf.trainer.ds_fill import warmup_steps

    assert warmup_steps(ArgValues(values, version=release), 120) == steps


def test_transformers_4_refuses_a_warmup_steps_that_is_not_an_integer_at_construction():
    (r,) = what_runs(ArgValues({"warmup_steps": 0.1}, version="4.57")).raises
    assert r.stage == "construction" and "must be of type int" in r.message
    assert not what_runs(ArgValues({"warmup_steps": 0.1}, version="5.0")).raises
    assert what_runs(ArgValues({"warmup_steps": -1}, version="5.0")).raises[0].stage == "construction"


def test_transformers_4_checks_fp16_through_its_backend_and_fills_amp():
    from accelconf.trainer import ds_fill

    ds = {
        "fp16": {"enabled": False},
        "amp": {"enabled": "auto", "opt_level": "auto"},
        "zero_optimization": {"stage": 2},
    }
    old = ds_fill.fill(ds, ArgValues({"fp16": True}, version="4.57"), through="construction")
    assert old.config["amp"] == {"enabled": False, "opt_level": "O1"}
    assert [(m.ds_key, m.hf_key) for m in old.mismatches] == [("fp16.enabled", "fp16|fp16_full_eval+fp16_backend(amp)")]
    new = ds_fill.fill(ds, ArgValues({"fp16": True}, version="5.0"), through="construction")
    assert new.config["amp"] == {"enabled": "auto", "opt_level": "auto"}  # 5.x leaves amp alone
    assert [m.hf_key for m in new.mismatches] == ["fp16|fp16_full_eval"]
