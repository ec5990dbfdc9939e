"""The real framework YAMLs of the shared corpus (every trainer corpus file validating without a false
error is tests/unit/kinds/test_kinds.py's): LLaMA-Factory's keys are left alone, not reported as unknown."""

from __future__ import annotations

from pathlib import Path

import pytest

from accelconf.api import validate_config
from tests.conftest import corpus_files

LLAMA_FACTORY = [p for p in corpus_files("trainer/frameworks") if "LLaMA-Factory" in p.name]


def test_the_corpus_has_llama_factory_yamls():
    if not LLAMA_FACTORY:
        pytest.skip("the shared corpus has no trainer/frameworks folder here")
    assert len(LLAMA_FACTORY) >= 5


@pytest.mark.parametrize("path", LLAMA_FACTORY, ids=lambda p: p.name[:60])
def test_llama_factory_yaml_is_recognised_and_its_keys_left_alone(path: Path):
    found = validate_config(str(path))
    assert not [f for f in found if f.rule in ("unknown-key", "unknown-nested-key")]
    assert any(f.rule == "trainer-framework-keys" and "LLaMA-Factory" in f.message for f in found)
