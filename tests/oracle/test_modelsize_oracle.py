"""The model size read from a saved model folder, checked against transformers' own count: a small
model saved by ``save_pretrained`` in several dtypes, sharded (so it has an index file), read back
whole, as the index and config alone (the shards not downloaded: the dtype that divides
``total_size`` then comes from ``config.json``), and with a tied head."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from accelconf.environment.modelsize import from_model_dir

pytestmark = pytest.mark.oracle


def _save(tmp_path: Path, dtype_name: str, tie: bool) -> tuple[Path, int]:
    transformers = pytest.importorskip("transformers", reason="transformers is in the test extras: it is the oracle")
    torch = pytest.importorskip("torch", reason="transformers builds the model with torch")
    cfg = transformers.LlamaConfig(
        hidden_size=64,
        intermediate_size=160,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        vocab_size=1000,
        tie_word_embeddings=tie,
    )
    torch.manual_seed(0)
    model = transformers.LlamaForCausalLM(cfg).to(getattr(torch, dtype_name))
    out = tmp_path / f"{dtype_name}-{tie}"
    model.save_pretrained(out, max_shard_size="100KB")
    assert (out / "model.safetensors.index.json").is_file(), "the model was meant to be saved sharded"
    return out, model.num_parameters()


@pytest.mark.parametrize("dtype_name", ["bfloat16", "float16", "float32"])
@pytest.mark.parametrize("tie", [False, True])
def test_a_saved_model_reads_as_transformers_counts_it(tmp_path: Path, dtype_name: str, tie: bool) -> None:
    folder, expected = _save(tmp_path, dtype_name, tie)
    assert from_model_dir(str(folder)).params == expected


@pytest.mark.parametrize("dtype_name", ["bfloat16", "float32"])
def test_index_total_size_is_divided_by_the_dtype_of_config_json_when_the_shards_are_absent(
    tmp_path: Path, dtype_name: str
) -> None:
    folder, expected = _save(tmp_path, dtype_name, tie=False)
    for shard in folder.glob("*.safetensors"):
        shard.unlink()
    index = folder / "model.safetensors.index.json"
    data = json.loads(index.read_text(encoding="utf-8"))
    data["metadata"].pop("total_parameters", None)  # older saves carry only total_size
    index.write_text(json.dumps(data), encoding="utf-8")
    size = from_model_dir(str(folder))
    assert size.params == expected
    assert "total_size" in size.source and dtype_name in size.source
