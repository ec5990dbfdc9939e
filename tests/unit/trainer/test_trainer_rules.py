"""validate's rules for Trainer / TRL arguments, through the one dispatch (validate_source)."""

from __future__ import annotations

import pytest

from accelconf.api import validate_source


def _rules(text: str, path: str, **opts) -> dict[str, list]:
    out: dict[str, list] = {}
    for f in validate_source(text, path, **opts):
        out.setdefault(f.rule, []).append(f)
    return out


def test_unknown_field_in_a_call_of_training_arguments_is_an_error_at_its_position():
    text = (
        "from transformers import TrainingArguments\n"
        "args = TrainingArguments(output_dir='o', evaluation_strategy='no')\n"
    )
    (f,) = _rules(text, "train.py")["trainer-removed-field"]
    assert (f.severity, f.line, f.column) == ("error", 2, 42)
    assert "removed in transformers 4.51" in f.message and "TypeError" in f.message
    (f,) = _rules(text.replace("evaluation_strategy", "evaluation_strateg"), "train.py")["trainer-unknown-field"]
    assert (f.severity, f.line, f.column) == ("error", 2, 42) and "TypeError" in f.message


def test_misspelled_field_in_an_arguments_file_is_an_error_with_did_you_mean():
    (f,) = _rules("output_dir: o\nlearning_rat: 1.0e-5\nper_device_train_batch_size: 2\n", "args.yaml")[
        "trainer-unknown-field"
    ]
    assert (f.severity, f.line, f.column, f.suggestion) == ("error", 2, 1, "learning_rate")
    assert "HfArgumentParser refuses it" in f.message


def test_another_dataclass_field_is_only_named():
    got = _rules("model_name_or_path: m\nlearning_rate: 1.0e-5\nper_device_train_batch_size: 2\n", "args.yaml")
    assert "trainer-unknown-field" not in got
    assert got["trainer-other-fields"][0].severity == "info"


def test_llama_factory_yaml_gets_no_unknown_key_errors():
    text = (
        "model_name_or_path: q\nstage: sft\nfinetuning_type: full\ntemplate: qwen\ncutoff_len: 2048\n"
        "per_device_train_batch_size: 1\ngradient_accumulation_steps: 2\nlearning_rate: 1.0e-5\nbf16: true\n"
    )
    found = validate_source(text, "sft.yaml")
    assert not [f for f in found if f.severity == "error"]
    assert [f.rule for f in found] == ["trainer-framework-keys"]


def test_fsdp_unknown_option_and_fsdp1_only_strategy_raise_at_construction():
    got = _rules('fsdp: "full_shard auto_wrapp"\noutput_dir: o\nlearning_rate: 1.0e-5\n', "a.yaml")
    (f,) = got["trainer-fsdp-option"]
    assert (f.severity, f.line, f.column) == ("error", 1, 7) and "auto_wrap" in f.message
    (h,) = _rules("fsdp: hybrid_shard\noutput_dir: o\nlearning_rate: 1.0e-5\n", "a.yaml")["trainer-fsdp-option"]
    assert "only available with FSDP1" in h.message
    assert "trainer-fsdp-option" not in _rules(
        "fsdp: hybrid_shard\nfsdp_config: {version: 1}\noutput_dir: o\nlearning_rate: 1.0e-5\n", "a.yaml"
    )


def test_two_sharding_strategies_keep_the_first():
    (f,) = _rules('fsdp: "full_shard shard_grad_op"\noutput_dir: o\nlearning_rate: 1.0e-5\n', "a.yaml")[
        "trainer-fsdp-option-conflict"
    ]
    assert "keeps the first (full_shard)" in f.message


def test_fsdp_config_file_accelerate_names_fsdp1_keys_and_prefix_collision():
    text = (
        '{\n  "fsdp_offload_params": true,\n  "use_orig_params": true,\n  "fsdp_cpu_offload": true,\n'
        '  "cpu_offload": false,\n  "fsdp_transformer_layer_cls_to_wrap": ["LlamaDecoderLayer"]\n}\n'
    )
    got = _rules(text, "fsdp_config.json")
    (off,) = got["trainer-fsdp-accelerate-name"]
    assert (off.line, off.column) == (2, 3) and "offload is silently off" in off.message
    (v1,) = got["trainer-fsdp-version-key"]
    assert v1.line == 3 and "defaults to 2" in v1.message
    (col,) = got["trainer-fsdp-prefix-collision"]
    assert col.line == 4 and "True wins" in col.message


def test_nested_accelerate_config_as_fsdp_config_configures_nothing():
    got = _rules(
        'fsdp: full_shard\nfsdp_config: {"fsdp_config": {"fsdp_offload_params": true}}\noutput_dir: o\n'
        "learning_rate: 1.0e-5\n",
        "a.yaml",
    )
    (f,) = got["trainer-fsdp-accelerate-config"]
    assert f.line == 2 and "configures nothing" in f.message


def test_inline_json_string_fsdp_config_on_a_launch_line():
    text = "torchrun train.py --fsdp full_shard --fsdp_config '{\"offload_params\": true}' --output_dir o\n"
    (f,) = _rules(text, "run.sh")["trainer-fsdp-accelerate-name"]
    assert f.line == 1 and "cpu_offload" in f.message


def test_fsdp_config_without_fsdp_is_ignored():
    (f,) = _rules("fsdp_config: {cpu_offload: true}\noutput_dir: o\nlearning_rate: 1.0e-5\n", "a.yaml")[
        "trainer-fsdp-config-unused"
    ]
    assert f.severity == "warning"


def test_invalid_wrap_policy_and_state_dict_type():
    got = _rules(
        "fsdp: true\nfsdp_config: {auto_wrap_policy: transformer_based_wrap, state_dict_type: full}\n"
        "output_dir: o\nlearning_rate: 1.0e-5\n",
        "a.yaml",
    )
    policy, state = sorted(got["trainer-fsdp-invalid-value"], key=lambda f: f.message)
    assert "at construction" in policy.message and "auto_wrap_policy" in policy.message
    assert "(Trainer init)" in state.message and "state_dict_type" in state.message


def test_fsdp_activation_checkpointing_with_gradient_checkpointing_raises_at_trainer_init():
    (f,) = _rules(
        "fsdp: true\nfsdp_config: {activation_checkpointing: true}\ngradient_checkpointing: true\n"
        "output_dir: o\nlearning_rate: 1.0e-5\n",
        "a.yaml",
    )["trainer-fsdp-checkpointing"]
    assert (f.severity, f.line) == ("error", 3) and "Trainer init" in f.message


def test_save_only_model_with_sharded_state_dict_and_with_load_best():
    got = _rules(
        "fsdp: true\nfsdp_config: {state_dict_type: SHARDED_STATE_DICT}\nsave_only_model: true\n"
        "load_best_model_at_end: true\noutput_dir: o\nlearning_rate: 1.0e-5\n",
        "a.yaml",
    )
    assert len(got["trainer-save-only-model"]) == 2


def test_zero3_with_auto_find_batch_size(tmp_path):
    (tmp_path / "ds.json").write_text('{"zero_optimization": {"stage": 3}, "train_micro_batch_size_per_gpu": "auto"}')
    path = tmp_path / "args.yaml"
    text = "deepspeed: ds.json\nauto_find_batch_size: true\noutput_dir: o\nlearning_rate: 1.0e-5\n"
    (f,) = _rules(text, str(path))["trainer-zero3-auto-batch"]
    assert (f.severity, f.line) == ("error", 2)


def test_accumulation_in_the_arguments_and_in_the_accelerate_config(tmp_path):
    (tmp_path / "accel.yaml").write_text(
        "distributed_type: DEEPSPEED\ndeepspeed_config:\n  gradient_accumulation_steps: 4\n"
        "  zero_stage: 2\nmixed_precision: fp16\nnum_processes: 8\n"
    )
    text = "accelerate launch --config_file accel.yaml train.py --gradient_accumulation_steps 8 --bf16 True\n"
    got = _rules(text, str(tmp_path / "run.sh"))
    (f,) = got["trainer-accumulation-twice"]
    assert (f.severity, f.line) == ("error", 1) and "in train()" in f.message
    (p,) = got["trainer-mixed-precision"]
    assert "'fp16'" in p.message and "bf16" in p.message


def test_accumulation_env_without_deepspeed_loses_to_the_trainer():
    text = "export ACCELERATE_GRADIENT_ACCUMULATION_STEPS=2\ntorchrun train.py --gradient_accumulation_steps 8\n"
    (f,) = _rules(text, "run.sh")["trainer-accumulation-twice"]
    assert f.severity == "warning" and "Trainer's wins" in f.message


def test_accelerate_mixed_precision_env_against_bf16():
    text = "export ACCELERATE_MIXED_PRECISION=fp16\ntorchrun train.py --bf16 True --output_dir o\n"
    (f,) = _rules(text, "run.sh")["trainer-mixed-precision"]
    assert (f.severity, f.line) == ("warning", 2)


def test_wrong_types_in_a_file_and_on_a_command_line():
    got = _rules("learning_rate: 5e-5\nbf16: auto\noutput_dir: o\nper_device_train_batch_size: 2\n", "a.yaml")
    lr, bf = got["trainer-wrong-type"]
    assert (lr.severity, lr.line, lr.column) == ("warning", 1, 16) and "write 5.0e-5" in lr.message
    assert (bf.severity, bf.line) == ("error", 2) and "silently on" in bf.message
    (cli,) = _rules("torchrun train.py --bf16 auto --learning_rate 5e-5\n", "run.sh")["trainer-wrong-type"]
    assert "argparse refuses it" in cli.message  # 5e-5 is a fine float for argparse


@pytest.mark.parametrize("name", ["fsdp_config.json", "args.yaml"])
def test_input_that_does_not_parse_is_an_input_error(name):
    from accelconf.errors import InputError

    with pytest.raises(InputError):
        validate_source('{"fsdp_offload_params": tru' if name.endswith("json") else "learning_rate: [\n", name)


def test_an_enum_value_outside_its_choices():
    (f,) = _rules("eval_strategy: step\noutput_dir: o\nlearning_rate: 1.0e-5\n", "a.yaml")["trainer-wrong-type"]
    assert (f.line, f.column) == (1, 16) and "steps" in f.message and "at construction" in f.message


def test_a_trl_config_call_knows_its_own_fields():
    text = "from trl import SFTConfig\nSFTConfig(output_dir='o', max_length=1024, max_lenght=3)\n"
    (f,) = _rules(text, "train.py")["trainer-unknown-field"]
    assert f.column == 44 and "SFTConfig" in f.message and f.suggestion == "max_length"


def test_axolotl_types_are_its_own():
    text = "base_model: m\ndatasets: []\nsequence_len: 2048\nlearning_rate: 2e-5\nbf16: auto\n"
    assert [f.rule for f in validate_source(text, "axolotl.yaml")] == ["trainer-framework-keys"]


def test_an_arguments_file_handed_to_the_script_meets_the_launchs_accelerate_config(tmp_path):
    (tmp_path / "accel.yaml").write_text(
        "distributed_type: DEEPSPEED\ndeepspeed_config:\n  gradient_accumulation_steps: 2\n"
        "  zero_stage: 3\nmixed_precision: bf16\nnum_processes: 2\n"
    )
    (tmp_path / "sft.yaml").write_text(
        "stage: sft\nfinetuning_type: lora\ntemplate: llama3\ngradient_accumulation_steps: 8\nlearning_rate: 1.0e-4\n"
    )
    text = "accelerate launch --config_file accel.yaml src/train.py sft.yaml\n"
    found = [f for f in validate_source(text, str(tmp_path / "train.sh")) if f.rule == "trainer-accumulation-twice"]
    (f,) = found
    assert f.path.endswith("sft.yaml") and (f.line, f.column) == (4, 1) and f.severity == "error"


def test_a_referenced_fsdp_config_file_is_checked_in_place_and_joins_the_rules(tmp_path):
    (tmp_path / "fsdp.json").write_text('{\n  "fsdp_offload_params": true,\n  "activation_checkpointing": true\n}\n')
    text = "fsdp: full_shard\nfsdp_config: fsdp.json\ngradient_checkpointing: true\noutput_dir: o\n"
    found = validate_source(text, str(tmp_path / "args.yaml"))
    (off,) = [f for f in found if f.rule == "trainer-fsdp-accelerate-name"]
    assert off.path.endswith("fsdp.json") and (off.line, off.column) == (2, 3)
    (ac,) = [f for f in found if f.rule == "trainer-fsdp-checkpointing"]
    assert not ac.path and ac.line == 3


def test_a_dict_argument_given_as_broken_json_raises_at_construction():
    text = "torchrun train.py --fsdp full_shard --fsdp_config '{\"cpu_offload\": true,}' --output_dir o\n"
    (f,) = _rules(text, "run.sh")["trainer-wrong-type"]
    assert f.severity == "error" and "JSONDecodeError" in f.message


def test_a_python_script_with_clean_training_arguments_is_not_called_argument_free():
    text = "from transformers import TrainingArguments\nTrainingArguments(output_dir='o', bf16=True)\n"
    assert validate_source(text, "train.py") == []


def test_launch_flag_mixed_precision_against_fp16():
    text = "accelerate launch --mixed_precision bf16 train.py --fp16 True --output_dir o\n"
    (f,) = _rules(text, "run.sh")["trainer-mixed-precision"]
    assert "--mixed_precision" in f.message and "'fp16' over it" in f.message


@pytest.mark.parametrize("value, severity", [('"true"', "warning"), ('"false"', "error"), ("auto", "error")])
def test_a_boolean_written_as_a_string(value, severity):
    (f,) = _rules(f"bf16: {value}\noutput_dir: o\nlearning_rate: 1.0e-5\n", "a.yaml")["trainer-wrong-type"]
    assert f.severity == severity and "silently on" in f.message


def test_trl_accelerate_config_preset_is_the_file_the_installed_trl_ships(tmp_path, monkeypatch):
    pkg = tmp_path / "site" / "trl"
    (pkg / "accelerate_configs").mkdir(parents=True)
    (pkg / "__init__.py").write_text("raise ImportError('never imported')\n")
    (pkg / "accelerate_configs" / "zero3.yaml").write_text(
        "distributed_type: DEEPSPEED\ndeepspeed_config:\n  zero_stage: 3\nmixed_precision: bf16\nnum_processes: 8\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    text = "trl sft --accelerate_config zero3 --auto_find_batch_size --fp16 True --output_dir o\n"
    got = _rules(text, "run.sh")
    assert got["trainer-zero3-auto-batch"][0].severity == "error"
    assert "the accelerate config" in got["trainer-mixed-precision"][0].message


def test_trl_accelerate_config_preset_without_trl_is_named_not_guessed(monkeypatch):
    import importlib.util

    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None)
    (f,) = _rules("trl sft --accelerate_config zero3 --output_dir o\n", "run.sh")["file-reference"]
    assert f.severity == "info" and "not installed" in f.message


def test_a_field_a_release_removed_is_named_with_that_release(monkeypatch):
    from accelconf.trainer import releases

    monkeypatch.setattr(releases, "removed", lambda name: ("5.20", "5.21") if name == "old_knob" else None)
    (f,) = _rules("old_knob: 1\noutput_dir: o\nlearning_rate: 1.0e-5\n", "a.yaml")["trainer-removed-field"]
    assert (
        f.severity == "error"
        and "removed in transformers 5.21" in f.message
        and "HfArgumentParser refuses it" in f.message
    )


def test_a_removed_field_names_the_field_its_deprecation_message_says_to_use():
    # renames read from the releases' own deprecation messages (the releases data), not a fuzzy guess
    text = "output_dir: o\nevaluation_strategy: steps\nno_cuda: true\nadafactor: true\nuse_ipex: true\n"
    got = {f.key: f for f in _rules(text, "a.yaml", transformers_version="5.0")["trainer-removed-field"]}
    assert got["evaluation_strategy"].suggestion == "eval_strategy"
    assert "did you mean `eval_strategy`?" in got["evaluation_strategy"].message
    assert got["no_cuda"].suggestion == "use_cpu"
    # a replacement that takes another form: the message says which (--optim adafactor)
    assert got["adafactor"].suggestion == "optim" and "`--optim adafactor`" in got["adafactor"].message
    # use_ipex's message names nothing to write instead ("You only need PyTorch")
    assert got["use_ipex"].suggestion is None and "did you mean" not in got["use_ipex"].message


def test_validate_reports_deepspeed_json_values_that_contradict_the_arguments_at_the_json_key(tmp_path):
    """The referenced DeepSpeed JSON compared as transformers compares it: a fixed value that differs from
    the arguments is an error at its key in the JSON; "auto" and equal values are not."""
    (tmp_path / "ds.json").write_text(
        '{"train_micro_batch_size_per_gpu": 4,\n "gradient_accumulation_steps": "auto",\n'
        ' "zero_optimization": {"stage": 2}}\n'
    )
    args = tmp_path / "train_args.yaml"
    args.write_text("per_device_train_batch_size: 2\ngradient_accumulation_steps: 4\ndeepspeed: ds.json\nbf16: true\n")
    found = [f for f in validate_source(args.read_text(), str(args)) if f.rule == "trainer-deepspeed-mismatch"]
    assert [(f.path, f.line, f.severity, f.key) for f in found] == [
        (str(tmp_path / "ds.json"), 1, "error", "train_micro_batch_size_per_gpu")
    ], found
    assert "per_device_train_batch_size=2" in found[0].message
    args.write_text("per_device_train_batch_size: 4\ngradient_accumulation_steps: 4\ndeepspeed: ds.json\nbf16: true\n")
    assert not [f for f in validate_source(args.read_text(), str(args)) if f.rule == "trainer-deepspeed-mismatch"]
