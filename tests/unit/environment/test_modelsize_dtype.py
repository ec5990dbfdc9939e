"""Which dtype divides an index's ``total_size`` into a parameter count.

``model.safetensors.index.json`` gives the checkpoint's bytes; the bytes per parameter are the
dtype the tensors were saved in (the safetensors headers), which can differ from the dtype
config.json asks transformers to load in (``torch_dtype``, or ``dtype`` from transformers 4.56).
Each case pairs a saved dtype with a config dtype and names the count that must come out: a reader
that prefers the config's dtype over the headers', or ignores one of the config's two keys, fails.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

from accelconf.environment.modelsize import from_model_dir

SIZES = {"BF16": 2, "F16": 2, "F32": 4}
TOTAL = 8_000_000  # bytes in the index


def _shard(path: Path, dtype: str) -> None:
    shape = [4, 4]
    n = SIZES[dtype] * 16
    raw = json.dumps({"model.embed_tokens.weight": {"dtype": dtype, "shape": shape, "data_offsets": [0, n]}})
    path.write_bytes(struct.pack("<Q", len(raw)) + raw.encode() + b"\0" * n)


def _folder(tmp: Path, saved: str | None, config_dtype: dict[str, str]) -> Path:
    (tmp / "model.safetensors.index.json").write_text(
        json.dumps({"metadata": {"total_size": TOTAL}, "weight_map": {"model.embed_tokens.weight": "a.safetensors"}})
    )
    config = {"model_type": "llama", "hidden_size": 4, "intermediate_size": 8, "num_hidden_layers": 1}
    config.update(num_attention_heads=1, num_key_value_heads=1, vocab_size=4, **config_dtype)  # type: ignore[arg-type]
    (tmp / "config.json").write_text(json.dumps(config))
    if saved is not None:
        _shard(tmp / "a.safetensors", saved)
    return tmp


@pytest.mark.parametrize(
    "saved, config_dtype, bytes_per",
    [
        ("BF16", {"torch_dtype": "float32"}, 2),  # saved in bf16, loaded in fp32: the headers count
        ("F32", {"torch_dtype": "bfloat16"}, 4),
        ("BF16", {"dtype": "float32"}, 2),
        ("F16", {}, 2),
        (None, {"torch_dtype": "float32"}, 4),  # no shard to read: the config's dtype
        (None, {"dtype": "bfloat16"}, 2),  # the newer key alone
        (None, {"torch_dtype": "float32", "dtype": "float32"}, 4),
    ],
)
def test_index_total_size_is_divided_by_the_saved_dtype(
    tmp_path: Path, saved: str | None, config_dtype: dict[str, str], bytes_per: int
) -> None:
    size = from_model_dir(str(_folder(tmp_path, saved, config_dtype)))
    assert size.params == TOTAL // bytes_per, size.source
    assert f"total_size / {bytes_per} bytes" in size.source
