"""``--model NAME``: a well-known model's bundled config.json fields stand in for a local folder,
in ``check``, the API and the language server's settings; a folder of that name wins; an unknown
name is a usage error naming the nearest known ones."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from accelconf import api
from accelconf.cli import main
from accelconf.environment import modelsize
from accelconf.errors import UsageError

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "memory"
CONFIG = str(EXAMPLES / "fsdp-2x8.yaml")


def test_a_name_reads_as_its_folder_would():
    folder = modelsize.from_model_dir(str(EXAMPLES / "qwen2-7b"))
    named = modelsize.resolve("Qwen2.5-7B")  # Qwen2-7B and Qwen2.5-7B share their shape fields
    assert named.params == folder.params == 7_615_616_512
    assert named.structure == folder.structure


@pytest.mark.parametrize("spelling", ["meta-llama/Llama-3.1-8B", "llama-3.1-8b", "LLAMA-3.1-8B"])
def test_names_match_the_repository_id_or_its_last_part_in_any_case(spelling):
    assert modelsize.resolve(spelling).source == "bundled config.json of meta-llama/Llama-3.1-8B, llama"


def test_a_local_folder_wins_over_a_name(tmp_path, monkeypatch):
    folder = tmp_path / "Llama-3.1-8B"
    folder.mkdir()
    cfg = dict(modelsize.known_models()["meta-llama/Llama-3.2-1B"]["config"])
    (folder / "config.json").write_text(json.dumps(cfg), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    size = modelsize.resolve("Llama-3.1-8B")
    assert size.params == modelsize.from_name("Llama-3.2-1B").params
    assert size.source.startswith("config.json")


def test_an_unknown_name_is_a_usage_error_naming_the_nearest(capsys):
    with pytest.raises(UsageError, match="nearest known: meta-llama/Llama-3.1-8B"):
        modelsize.resolve("Llama-3.1-9B")
    assert main(["check", "--model", "Llama-3.1-9B", CONFIG]) == 2
    err = capsys.readouterr().err
    assert "Llama-3.1-9B" in err and "meta-llama/Llama-3.1-8B" in err and "Traceback" not in err


def test_check_takes_a_name(capsys):
    main(
        [
            "check",
            "--model",
            "Qwen3-8B",
            "--gpus",
            "8",
            "--gpu",
            "H100",
            "--seq-len",
            "2048",
            "--micro-batch",
            "1",
            "--format",
            "json",
            CONFIG,
        ]
    )
    out = json.loads(capsys.readouterr().out)
    memory = out["memory"][0] if isinstance(out, dict) and "memory" in out else None
    text = json.dumps(out)
    assert "bundled config.json of Qwen/Qwen3-8B" in text and "8190735360" in text, memory


def test_the_api_takes_a_name():
    report = api.estimate_memory(CONFIG, model="Mixtral-8x7B-v0.1", seq_len=1024, micro_batch=1)
    assert report.estimate.model.params == 46_702_792_704
    assert report.estimate.activations is not None


def test_the_server_settings_take_a_name():
    from accelconf.assist.memhint import from_settings

    mem, problems = from_settings({"accelconf": {"model": "gemma-2-9b", "seqLen": 1024, "microBatch": 1}})
    assert problems == [] and mem is not None and mem.model.params == 9_241_705_984
    assert mem.classes is not None and "Gemma2DecoderLayer" in mem.classes.layers


def test_the_server_settings_take_lora():
    from accelconf.api import check_document
    from accelconf.assist.memhint import from_settings, hover_markdown
    from accelconf.text.document import load_file

    mem, problems = from_settings({"accelconf": {"model": "Llama-3.1-8B", "loraRank": 16, "quant": "4bit"}})
    assert problems == [] and mem is not None and mem.lora.rank == 16 and mem.lora.quant == "4bit"
    doc = load_file(CONFIG, "yaml")
    md = hover_markdown(doc, "fsdp_sharding_strategy", mem, None)
    full, _ = from_settings({"accelconf": {"model": "Llama-3.1-8B"}})
    assert md is not None and md != hover_markdown(doc, "fsdp_sharding_strategy", full, None)
    # no GPU known: figures only, no mem-* finding (the server's diagnostics go through check_document)
    assert not [f for f in check_document(doc, None, memory=mem) if f.rule.startswith("mem-")]
    assert mem.lora is not None  # the question carries the adapter into the estimate
    _, problems = from_settings({"accelconf": {"model": "Llama-3.1-8B", "loraRank": 8, "loraTargets": "query"}})
    assert problems and "match no linear layer" in problems[0]
