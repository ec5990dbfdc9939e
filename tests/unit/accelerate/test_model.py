"""accelconf.accelerate.model: the one Config every format reads into, as accelerate reads a file."""

from __future__ import annotations

import pytest

from accelconf.accelerate import registry
from accelconf.accelerate.model import Config, canonical, from_data, from_document
from accelconf.findings import Finding
from accelconf.text.document import load_text

TEXT = """distributed_type: multi_gpu
fsdp_config:
  sharding_strategy: 1
  fsdp_sharding_strategy: FULL_SHARD
mixed_precision: no
bogus: 1
"""


def test_entries_keep_spelling_and_1_based_positions() -> None:
    cfg = from_document(load_text(TEXT, "x.yaml"), "1.15")
    e = cfg.entries["fsdp_config.fsdp_sharding_strategy"]
    assert (e.value, e.written_key, e.line, e.column) == ("FULL_SHARD", "fsdp_sharding_strategy", 4, 3)
    assert cfg.get("distributed_type") == "multi_gpu"  # as written; canonical() gives accelerate's spelling
    assert cfg.get("mixed_precision") is False  # YAML 1.1: a bare no is a boolean to accelerate
    assert list(cfg.unknown) == ["bogus"] and "bogus" not in cfg


def test_two_spellings_of_one_setting_are_a_note_finding() -> None:
    cfg = from_document(load_text(TEXT, "x.yaml"), "1.15")
    assert cfg.notes == [
        Finding(
            "convert.input",
            "info",
            "fsdp_config.fsdp_sharding_strategy repeats fsdp_config.fsdp_sharding_strategy",
            "fsdp_config.fsdp_sharding_strategy",
        )
    ]


def test_note_records_a_finding() -> None:
    cfg = Config()
    f = cfg.note("lossy", "warning", rule="x.y", key="k", line=3, column=4)
    assert cfg.notes == [f] and (f.rule, f.severity, f.line, f.column) == ("x.y", "warning", 3, 4)


@pytest.mark.parametrize(
    ("section", "key", "value", "want"),
    [
        ("", "distributed_type", "multi_gpu", "MULTI_GPU"),
        ("fsdp_config", "fsdp_sharding_strategy", 1, "FULL_SHARD"),  # accelerate's legacy integer
        ("fsdp_config", "fsdp_sharding_strategy", 2, "SHARD_GRAD_OP"),
        ("", "use_cpu", "Yes", True),
        ("", "use_cpu", "off", False),
        ("", "num_processes", "8", 8),
        ("", "use_cpu", "maybe", "maybe"),  # not a truth word: left for validate to report
    ],
)
def test_canonical(section: str, key: str, value: object, want: object) -> None:
    assert canonical(registry.get(section, key), value) == want


def test_canonical_truth_words_are_accelerates() -> None:
    use_cpu = registry.get("", "use_cpu")
    assert {w: canonical(use_cpu, w) for w in registry.TRUE_WORDS} == dict.fromkeys(registry.TRUE_WORDS, True)
    assert {w: canonical(use_cpu, w) for w in registry.FALSE_WORDS} == dict.fromkeys(registry.FALSE_WORDS, False)


def test_from_data_without_a_document_has_no_positions() -> None:
    cfg = from_data({"distributed_type": "FSDP", "fsdp_config": {"fsdp_version": 2}}, None, "1.15", source="mem")
    assert cfg.fsdp_version() == 2 and cfg.source == "mem"
    assert cfg.entries["fsdp_config.fsdp_version"].line == 0


def test_section_activity_is_registry_data() -> None:
    assert registry.SECTIONS["fsdp_config"].active_when == ("distributed_type", "FSDP")
    assert registry.section_active("fsdp_config", {"distributed_type": "FSDP"})
    assert not registry.section_active("fsdp_config", {"distributed_type": "MULTI_GPU"})
    assert registry.section_active("fp8_config", {"mixed_precision": "FP8"})  # accelerate lower-cases it
    assert registry.section_active("dynamo_config", {})  # always read
    active = {name for name, sec in registry.SECTIONS.items() if sec.active_when is not None}
    assert active == {"fsdp_config", "deepspeed_config", "megatron_lm_config", "mpirun_config", "fp8_config"}
