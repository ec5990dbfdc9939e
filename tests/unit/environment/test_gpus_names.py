"""The GPU table read from the names people and drivers write: nvidia-smi names, SKUs with memory,
NVL parts, AMD's doubled names, and the note when a name is ambiguous."""

from __future__ import annotations

import pytest

from accelconf.environment.gpus import describe, lookup, resolve


@pytest.mark.parametrize(
    ("name", "memory_gib", "key"),
    [
        ("NVIDIA A100-SXM4-40GB", None, "A100-40GB"),  # nvidia-smi's name: the memory picks the SKU
        ("A100", 79.2, "A100-80GB"),  # a probe's memory picks it when the name does not
        ("Tesla V100-SXM2-32GB", None, "V100-32GB"),
        ("H100", None, "H100-80GB"),  # a bare H100 is the common 80 GB part
        ("H100 NVL", None, "H100-NVL"),
        ("H100", 94, "H100-NVL"),
        ("NVIDIA_H100/80GB", None, "H100-80GB"),
        ("L40 S", None, "L40S"),  # the words joined name the family
        ("L40 S 48GB", None, "L40S"),
        ("Quadro RTX A6000", None, "RTX-A6000"),
        ("MI250X / MI250", None, "MI250"),
        ("AMD Instinct MI250X 128GB", None, "MI250"),
    ],
    ids=[
        "smi_a100_40",
        "probe_memory",
        "smi_v100_32",
        "bare_h100",
        "h100_nvl",
        "h100_by_memory",
        "underscore_slash",
        "l40_s",
        "l40_s_memory",
        "quadro",
        "mi250_pair",
        "mi250x",
    ],
)
def test_a_written_name_resolves_to_its_model(name, memory_gib, key):
    got = resolve(name, memory_gib)
    assert got is not None and got.model.key == key
    assert got.note is None


@pytest.mark.parametrize(
    "name", ["", "   ", "GeForce GT 710", "NVIDIA_H100X"], ids=["empty", "blank", "unknown", "unknown_family"]
)
def test_a_name_outside_the_table_is_none(name):
    assert resolve(name) is None
    assert lookup(name) is None


def test_an_ambiguous_name_says_which_variant_it_assumed():
    got = resolve("A100")
    assert got.model.key == "A100-80GB"
    assert (
        got.note
        == "'A100' could be A100-80GB or A100-40GB; assuming A100-80GB (the checks give the same answer for both)"
    )


@pytest.mark.parametrize(
    ("key", "line"),
    [
        ("H100-80GB", "H100-80GB (NVIDIA Hopper, CC 9.0, 80 GiB, bf16, fp8)"),
        ("A100-80GB", "A100-80GB (NVIDIA Ampere, CC 8.0, 80 GiB, bf16)"),
        ("L4", "L4 (NVIDIA Ada, CC 8.9, 24 GiB, bf16, fp8)"),
        ("V100-16GB", "V100-16GB (NVIDIA Volta, CC 7.0, 16 GiB)"),
        ("MI250", "MI250 (AMD gfx90a, 128 GiB, bf16)"),
    ],
    ids=["h100", "a100", "l4", "v100", "mi250"],
)
def test_describe_names_architecture_capability_memory_and_features(key, line):
    assert describe(lookup(key)) == line


def test_every_key_of_the_table_resolves_to_its_own_model():
    from accelconf.environment.gpus import known_models

    for key in known_models():
        got = resolve(key)
        assert (got.model.key, got.note) == (key, None)
        assert resolve(key.lower()).model.key == key
