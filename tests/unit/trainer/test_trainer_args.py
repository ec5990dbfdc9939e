"""Readers of Trainer / TRL arguments: values as transformers receives them, positions 1-based."""

from __future__ import annotations

from accelconf.trainer.read import read_all, read_args

YAML = """\
# recipe
learning_rate: 5e-5
bf16: true
fsdp_config:
  fsdp_cpu_offload: true
  version: 2
"""


def test_yaml_values_are_what_pyyaml_safe_load_gives():
    g = read_args(YAML, "recipe.yaml", "trainer-args")
    assert g.value("learning_rate") == "5e-5"  # YAML 1.1: no dot, a string
    assert g.value("bf16") is True
    assert g.value("fsdp_config") == {"fsdp_cpu_offload": True, "version": 2}


def test_yaml_positions_are_one_based_for_keys_values_and_nested_keys():
    g = read_args(YAML, "recipe.yaml", "trainer-args")
    lr = g.get("learning_rate")
    assert (lr.line, lr.column, lr.value_line, lr.value_column, lr.end_line, lr.end_column) == (2, 1, 2, 16, 2, 20)
    assert lr.raw_text == "learning_rate: 5e-5" and lr.source == "yaml"
    off = g.get("fsdp_config").child("fsdp_cpu_offload")
    assert (off.line, off.column, off.value) == (5, 3, True)


def test_json_arguments_file_has_positions():
    text = '{\n  "per_device_train_batch_size": 4,\n  "deepspeed": "ds.json"\n}\n'
    g = read_args(text, "args.json", "trainer-args")
    a = g.get("per_device_train_batch_size")
    assert (a.line, a.column, a.value, a.source) == (2, 3, 4, "json")
    assert [(r.key, r.value, r.role) for r in g.references] == [("deepspeed", "ds.json", "deepspeed")]


SCRIPT = """\
export ACCELERATE_MIXED_PRECISION=fp16
LR=2e-5
torchrun --nproc_per_node 8 train.py \\
    --fsdp "full_shard auto_wrap" \\
    --learning_rate $LR \\
    --bf16 \\
    --no_remove_unused_columns \\
    --gradient_accumulation_steps=4
"""


def test_launch_line_arguments_after_the_training_script():
    (g,) = read_all(SCRIPT, "run.sh", "other-launch")
    assert g.group == "torchrun train.py"
    assert g.value("fsdp") == "full_shard auto_wrap"
    assert g.value("learning_rate") == "2e-5" and not g.get("learning_rate").typed
    assert g.value("bf16") is True  # bare flag: the const of nargs="?"
    assert g.value("remove_unused_columns") is False  # --no_x is store_false
    assert g.value("gradient_accumulation_steps") == "4"
    assert "nproc_per_node" not in g.names()  # the launcher's own flag
    assert g.env["ACCELERATE_MIXED_PRECISION"].value == "fp16"
    f = g.get("fsdp")
    assert (f.line, f.column, f.value_line, f.value_column) == (4, 5, 4, 12)


def test_accelerate_launch_keeps_its_config_file_for_the_rules():
    text = "accelerate launch --config_file fsdp.yaml train.py --gradient_accumulation_steps 8\n"
    (g,) = read_all(text, "run.sh", "launch")
    assert g.launcher["config_file"].value == "fsdp.yaml"
    assert g.names() == ["gradient_accumulation_steps"]


def test_deepspeed_launcher_arguments():
    (g,) = read_all("deepspeed --num_gpus 8 train.py --deepspeed ds.json --bf16 True\n", "run.sh", "other-launch")
    assert g.value("deepspeed") == "ds.json" and g.value("bf16") == "True"
    assert [r.role for r in g.references] == ["deepspeed"]


PY = """\
from trl import SFTConfig
from transformers import TrainingArguments

args = TrainingArguments(
    output_dir="out",
    learning_rate=2e-5,
    fsdp_config={"cpu_offload": True},
    report_to=compute(),
)
cfg = SFTConfig(max_length=1024)
"""


def test_python_calls_with_literal_keywords():
    ta, sft = read_all(PY, "train.py", "other-python")
    assert (ta.cls, sft.cls) == ("TrainingArguments", "SFTConfig")
    assert ta.value("learning_rate") == 2e-5
    lr = ta.get("learning_rate")
    assert (lr.line, lr.column, lr.value_line, lr.value_column) == (6, 5, 6, 19)
    assert ta.get("fsdp_config").child("cpu_offload").value is True
    assert ta.get("report_to").value is None and not ta.get("report_to").typed  # not a literal: not read
    assert sft.value("max_length") == 1024


def test_framework_yaml_keeps_its_own_keys_apart():
    text = "stage: sft\nfinetuning_type: full\ntemplate: qwen\nlearning_rate: 1.0e-5\ngradient_accumulation_steps: 2\n"
    g = read_args(text, "llama.yaml", "llama-factory")
    assert g.names() == ["learning_rate", "gradient_accumulation_steps"]
    assert [a.name for a in g.ignored] == ["stage", "finetuning_type", "template"]
    assert g.get("learning_rate").source == "llama-factory"


def test_trl_command_line_and_its_config_file():
    text = (
        "accelerate launch --config_file z3.yaml sft.py --config recipe.yaml --gradient_accumulation_steps 2\n"
        "trl sft --config r2.yaml --bf16\n"
    )
    first, second = read_all(text, "run.sh", "launch")
    assert first.names() == ["gradient_accumulation_steps"]
    assert [(r.value, r.role) for r in first.references] == [("recipe.yaml", "arguments")]
    assert second.group == "trl sft" and second.value("bf16") is True
    assert [(r.value, r.role) for r in second.references] == [("r2.yaml", "arguments")]
