"""The bundled table of well-known models (``--model NAME``) against transformers: every entry is
built by transformers 5.x from its config.json fields on the meta device (no memory, no download)
and its parameter count must equal accelconf's count from the same fields."""

from __future__ import annotations

import pytest

from accelconf.environment import modelsize

pytestmark = pytest.mark.oracle

NAMES = sorted(modelsize.known_models())


def _build(config: dict):
    transformers = pytest.importorskip("transformers", reason="transformers is in the test extras: it is the oracle")
    torch = pytest.importorskip("torch", reason="transformers builds the model with torch")
    fields = {k: v for k, v in config.items() if k not in ("model_type", "torch_dtype")}
    cfg = transformers.AutoConfig.for_model(config["model_type"], **fields)
    transformers.logging.set_verbosity_error()
    with torch.device("meta"):
        return transformers.AutoModelForCausalLM.from_config(cfg)


@pytest.mark.parametrize("name", NAMES)
def test_each_bundled_model_counts_as_transformers_builds_it(name: str) -> None:
    config = modelsize.known_models()[name]["config"]
    model = _build(config)
    size = modelsize.from_name(name)
    assert size.params == model.num_parameters(), name
    # FSDP wraps each decoder layer; the embeddings, the final norm and the head stay in the root
    units = [sum(p.numel() for p in layer.parameters()) for layer in model.model.layers]
    assert size.largest_unit == max(units + [model.num_parameters() - sum(units)]), name
