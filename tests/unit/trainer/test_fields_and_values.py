"""The rules' questions to the table of TrainingArguments and TRL fields, release by release, and the
values arguments give as HfArgumentParser types them."""

from __future__ import annotations

import pytest

from accelconf.trainer import fields
from accelconf.trainer.args import Arg, TrainerArgs
from accelconf.trainer.argvalues import ArgValues, _cli_value, from_trainer_args

OLD = "4.46"  # the oldest transformers release the table holds
OLD_TRL = "1.10"


def test_version_is_the_minor_asked_for_else_the_newest():
    assert fields.version("4.47.1") == "4.47"
    assert fields.version(None) == fields.version(fields.version(None))
    assert fields.version(None) != OLD


def test_types_and_choices_are_those_of_the_release():
    assert fields.types(OLD)["fsdp_min_num_params"] == "int"
    assert "fsdp_min_num_params" not in fields.types()
    assert fields.choices("fp16_backend", OLD) == ("auto", "apex", "cpu_amp")
    assert fields.choices("fp16_backend") is None
    assert fields.choices("fp16") is None  # a field without choices


def test_fsdp_keys_are_those_of_the_release():
    assert "reshard_after_forward" in fields.fsdp_keys()
    assert "reshard_after_forward" not in fields.fsdp_keys(OLD)


def test_class_fields_of_each_class_and_release():
    assert "predict_with_generate" in fields.class_fields("Seq2SeqTrainingArguments")
    assert "predict_with_generate" not in fields.class_fields("TrainingArguments")
    assert "evaluation_strategy" in fields.class_fields("TrainingArguments", OLD)
    assert "evaluation_strategy" not in fields.class_fields("TrainingArguments")
    assert "max_tool_calling_iterations" in fields.class_fields("DistillationConfig")
    assert "max_tool_calling_iterations" not in fields.class_fields("DistillationConfig", trl_version=OLD_TRL)
    assert fields.class_fields("NoSuchConfig") is None


def test_trl_classes_for_keys_of_that_trl_release():
    assert fields.trl_classes_for(["max_tool_calling_iterations"]) == ("DistillationConfig", "GRPOConfig")
    assert fields.trl_classes_for(["max_tool_calling_iterations"], trl_version=OLD_TRL) == ("GRPOConfig",)
    assert fields.trl_classes_for(["max_length", "beta"]) == ("DPOConfig", "KTOConfig")


def test_trl_classes_for_reads_the_transformers_release_asked_for():
    # activation_checkpointing is a TrainingArguments field of the newest release only: in an
    # older release's file it is a key only TRL's classes (built on the newest) take
    assert fields.trl_classes_for(["activation_checkpointing"]) == ()
    assert "SFTConfig" in fields.trl_classes_for(["activation_checkpointing"], OLD)


@pytest.mark.parametrize("word", ["", "yes", "YES", "true", "True", "t", "T", "y", "Y", "1"])
def test_a_bool_word_hf_argparser_takes_as_true(word):
    assert _cli_value(word, "bool") is True


@pytest.mark.parametrize("word", ["no", "false", "0", "f", "n", "off"])
def test_any_other_bool_word_is_false(word):
    assert _cli_value(word, "bool") is False


@pytest.mark.parametrize(
    ("raw", "type_", "value"),
    [
        ("8", "int", 8),
        ("8", "optional-int", 8),
        ("8x", "int", "8x"),  # refused by the parser: shown as written
        ("1e-4", "float", 1e-4),
        ('  {"a": 1}', "dict", {"a": 1}),
        ('{"a": 1}', "optional-dict", {"a": 1}),
        ("full_shard", "dict", "full_shard"),
        ('{"a": 1}', "str", '{"a": 1}'),
        (3, "str", 3),  # a typed value is kept
    ],
    ids=[
        "int",
        "optional_int",
        "bad_int",
        "float",
        "dict_after_spaces",
        "optional_dict",
        "dict_word",
        "str_braces",
        "typed",
    ],
)
def test_a_command_line_word_is_typed_by_its_field(raw, type_, value):
    assert _cli_value(raw, type_) == value


def test_from_trainer_args_types_by_the_release_and_keeps_the_source():
    group = TrainerArgs(
        "run.sh",
        "launch",
        [Arg("fsdp_min_num_params", "100", 3, 5, 3, 30, "--fsdp_min_num_params 100", "cli", typed=False)],
    )
    old = from_trainer_args(group, OLD)
    assert old.get("fsdp_min_num_params") == 100
    assert old.source == "run.sh" and old.version == OLD
    assert old.origin("fsdp_min_num_params") == ("argument", "run.sh:3:5")
    # the newest release has no such field: the word stays a string
    assert from_trainer_args(group).get("fsdp_min_num_params") == "100"


def test_origin_of_a_given_value_and_of_a_default():
    values = ArgValues({"fp16": True})
    assert values.given("fp16") and not values.given("bf16")
    assert values.origin("fp16") == ("argument", "arguments: fp16")
    assert values.origin("bf16") == ("argument default", "TrainingArguments.bf16")
    assert ArgValues({"fp16": True}, source="a.yaml").origin("fp16") == ("argument", "a.yaml: fp16")
    assert values.source == ""


def test_an_arg_defaults_to_a_typed_value_at_its_name():
    a = Arg("fp16", True, 2, 3, 2, 12, "fp16: true", "yaml")
    assert (a.value_line, a.value_column, a.typed, a.children) == (0, 0, True, ())
    assert a.value_position == (2, 3)
    assert Arg("fp16", True, 2, 3, 2, 12, "fp16: true", "yaml", 2, 9).value_position == (2, 9)


def test_trainer_args_keep_what_they_are_given_and_default_to_empty():
    bare = TrainerArgs("a.yaml", "trainer-args")
    assert (bare.args, bare.references, bare.launcher, bare.env, bare.ignored, bare.notes) == ([], [], {}, {}, [], [])
    assert (bare.group, bare.cls, bare.line, bare.column) == ("", "", 1, 1)
    a = Arg("fp16", True, 2, 3, 2, 12, "fp16: true", "yaml")
    full = TrainerArgs(
        "a.yaml", "launch", [a], ["ds.json"], "l1", "SFTConfig", {"config_file": a}, {"X": a}, [a], ["n"], 4, 2
    )
    got = (
        full.args,
        full.references,
        full.launcher,
        full.env,
        full.ignored,
        full.notes,
        full.group,
        full.cls,
        full.line,
        full.column,
    )
    assert got == ([a], ["ds.json"], {"config_file": a}, {"X": a}, [a], ["n"], "l1", "SFTConfig", 4, 2)
