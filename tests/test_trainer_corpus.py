"""The real Trainer / TRL files of the shared corpus: each reads without a traceback and gives no
false error; the files with a true error are named with the reason."""

from __future__ import annotations

from pathlib import Path

import pytest

from accelconf.api import validate_config
from tests.conftest import corpus_files

TRAINER = [p for p in corpus_files("trainer") if p.name != "MANIFEST.tsv"] + [
    p for sub in ("args", "frameworks", "fsdp_config", "python", "refs", "scripts") for p in corpus_files(f"trainer/{sub}")]

# file name -> the error rules it truly has (transformers 5.x), with the reason.
TRUE_ERRORS: dict[str, tuple[set[str], str]] = {
    "Ryukijano__Gemma-Grook__scripts__gr00t_finetune.py": (
        {"trainer-unknown-field"}, "TrainingArguments(warmup_ratio=...): no such field in transformers 5 (TypeError)"),
    "safr-ai-lab__pandora-llm__experiments__train__run_train.py": (
        {"trainer-unknown-field"}, "TrainingArguments(evaluation_strategy=...): renamed eval_strategy (TypeError)"),
    "vijayvraman__eur-lex-globalization-model__scripts__train_sft.py": (
        {"trainer-unknown-field"}, "TrainingArguments(warmup_ratio=..., logging_dir=...): no such fields (TypeError)"),
    "Coldog2333__BioMed-LLaMA__pretrain__train_multi_nodes.sh": (
        {"trainer-fsdp-option"}, "--fsdp '_hybrid_shard_zero2 auto_wrap': not an fsdp option (ValueError)"),
    "vijayvraman__eur-lex-globalization-model__configs__ds_config_zero3_sft.json": (
        {"ds-optimizer"}, "WarmupCosineLR takes no warmup_min_lr/warmup_max_lr (DeepSpeed raises TypeError)"),
}


def test_the_trainer_corpus_is_there():
    if not TRAINER:
        pytest.skip("the shared corpus has no trainer/ folder here")
    assert {p.parent.name for p in TRAINER} >= {"args", "frameworks", "fsdp_config", "python", "scripts"}


@pytest.mark.parametrize("path", TRAINER, ids=lambda p: f"{p.parent.name}/{p.name[:60]}")
def test_reads_without_traceback_and_without_false_error(path: Path):
    errors = {f.rule for f in validate_config(str(path)) if f.severity == "error" and not f.path}
    expected, why = TRUE_ERRORS.get(path.name, (set(), ""))
    assert errors == expected, why or f"false errors: {errors}"


@pytest.mark.parametrize("path", [p for p in TRAINER if p.parent.name == "frameworks" and "LLaMA-Factory" in p.name],
                         ids=lambda p: p.name[:60])
def test_llama_factory_yaml_is_recognised_and_its_keys_left_alone(path: Path):
    found = validate_config(str(path))
    assert not [f for f in found if f.rule in ("unknown-key", "unknown-top-level-key")]
    assert any(f.rule == "trainer-framework-keys" and "LLaMA-Factory" in f.message for f in found)
