"""fsdp_transformer_layer_cls_to_wrap against the installed transformers and accelerate: the generated layer
data, and accelerate's own lookup of the classes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from accelconf.environment.wrapclass import DATA, ModelClasses, wrap_findings
from accelconf.text.document import load_text
from tests.unit.environment.test_wrapclass import QWEN2, fsdp

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.oracle
@pytest.mark.slow
def test_the_layer_data_matches_the_installed_transformers() -> None:
    pytest.importorskip("transformers", reason="the drift check compares with the installed transformers")
    pytest.importorskip("torch", reason="transformers' modeling files need torch")
    fresh = subprocess.run(
        [sys.executable, str(ROOT / "tests" / "oracle" / "layerclasses_gen.py")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    ).stdout
    assert fresh == Path(DATA).read_text(encoding="utf-8"), (
        "accelconf/data/transformers_layers.json is stale: "
        "python tests/oracle/layerclasses_gen.py > accelconf/data/transformers_layers.json"
    )


ACCELERATE_LOOKUP = """
import json, sys, warnings
warnings.simplefilter("ignore")
from transformers import AutoModelForCausalLM, Qwen2Config
from accelerate.utils import FullyShardedDataParallelPlugin
model = AutoModelForCausalLM.from_config(Qwen2Config(hidden_size=32, intermediate_size=64, num_attention_heads=2,
                                                     num_key_value_heads=1, num_hidden_layers=1, vocab_size=64))
out = {}
for names in json.loads(sys.argv[1]):
    plugin = FullyShardedDataParallelPlugin(auto_wrap_policy="TRANSFORMER_BASED_WRAP", \
transformer_cls_names_to_wrap=names)
    try:
        plugin.set_auto_wrap_policy(model)
        out[names] = None
    except ValueError as exc:
        out[names] = str(exc)
print(json.dumps(out))
"""


@pytest.mark.oracle
@pytest.mark.slow
def test_accelconf_errors_exactly_where_accelerates_lookup_raises() -> None:
    for name in ("accelerate", "transformers", "torch"):
        pytest.importorskip(name, reason="the oracle builds a small Qwen2 model and asks accelerate's FSDP plugin")
    cases = [
        "Qwen2DecoderLayer",
        "Qwen2MLP,Qwen2RMSNorm",
        "LlamaDecoderLayer",
        "Qwen2DecoderLayer, Qwen2MLP",
        "GPT2Block,Qwen2DecoderLayer",
    ]
    run = subprocess.run(
        [sys.executable, "-c", ACCELERATE_LOOKUP, json.dumps(cases)],
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    raised = json.loads(run.stdout.strip().splitlines()[-1])
    for names in cases:
        [f] = wrap_findings(load_text(fsdp(names), "c.yaml"), ModelClasses(QWEN2)) or [None]
        assert (f is not None) == (raised[names] is not None), (names, raised[names])
        if f is not None:  # the same message, naming the first class accelerate does not find
            assert f.severity == "error" and raised[names] in f.message, (names, raised[names], f.message)
