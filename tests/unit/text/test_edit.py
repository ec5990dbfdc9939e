"""``text.edit.set_value``: a value set in a YAML or JSON document by one text edit, every other byte kept."""

from __future__ import annotations

from typing import Any

import pytest

from accelconf.accelerate.fmt import apply_edits
from accelconf.text.document import load_text
from accelconf.text.edit import set_value

YAML = (
    "# head\n"
    "distributed_type: MULTI_GPU  # the type\n"
    "mixed_precision: 'bf16'\n"
    "fsdp_config:\n"
    "  fsdp_version: 1\n"
    "  nested:\n"
    "    a: 1\n"
    "# tail comment\n"
    "num_processes: 8"
)
JSON = '{\n  "zero_optimization": {\n    "stage": 2\n  },\n  "bf16": {"enabled": true},\n}\n'


def set_(text: str, keypath: tuple[str, ...], value: Any, fmt: Any = None) -> str:
    doc = load_text(text, "x", fmt)
    out = apply_edits(doc.text, [set_value(doc, keypath, value)])
    load_text(out, "x", fmt)  # what is written loads again
    return out


@pytest.mark.parametrize(
    ("text", "keypath", "value", "expected"),
    [
        # a value that is there, in its quote style
        (YAML, ("mixed_precision",), "fp16", YAML.replace("'bf16'", "'fp16'")),
        # a new top-level key after the last line, which has no line break, likewise without one
        (YAML, ("num_machines",), 2, YAML + "\nnum_machines: 2"),
        # a new key of a section after its last entry (inside the nested block), before the comment after it
        (
            YAML,
            ("fsdp_config", "fsdp_offload_params"),
            True,
            YAML.replace("    a: 1\n", "    a: 1\n  fsdp_offload_params: true\n"),
        ),
        # a new section with its key
        (YAML, ("deepspeed_config", "zero_stage"), 3, YAML + "\ndeepspeed_config:\n  zero_stage: 3"),
        # a section written as null becomes a flow mapping, its comment kept
        ("a: 1\nfsdp_config:\nb: 2\n", ("fsdp_config", "x"), True, "a: 1\nfsdp_config: {x: true}\nb: 2\n"),
        ("a: 1\nfsdp_config: null # c\n", ("fsdp_config", "x"), True, "a: 1\nfsdp_config: {x: true} # c\n"),
        # into a YAML flow mapping, quoted where YAML 1.1 would read another value
        ("a: 1\nd: {}\n", ("d", "x"), "NO", "a: 1\nd: {x: 'NO'}\n"),
        ("a: 1\nd: {y: 1}\n", ("d", "x"), "no", "a: 1\nd: {y: 1, x: 'no'}\n"),
        ("a: 1\r\nb:\r\n  c: 2\r\n", ("b", "d"), 3, "a: 1\r\nb:\r\n  c: 2\r\n  d: 3\r\n"),
    ],
)
def test_set_value_in_yaml(text: str, keypath: tuple[str, ...], value: Any, expected: str) -> None:
    assert set_(text, keypath, value) == expected


@pytest.mark.parametrize(
    ("keypath", "value", "expected"),
    [
        (("zero_optimization", "stage"), 3, JSON.replace('"stage": 2', '"stage": 3')),
        # a new entry at the indentation of the one before it; the missing object inline
        (
            ("zero_optimization", "offload_optimizer", "device"),
            "cpu",
            JSON.replace('"stage": 2\n', '"stage": 2,\n    "offload_optimizer": {"device": "cpu"}\n'),
        ),
        # after the last entry, before DeepSpeed's trailing comma
        (("fp16", "enabled"), True, JSON.replace("true},\n}", 'true},\n  "fp16": {"enabled": true},\n}')),
        # an entry on the line of the brace goes after the one before it on that line
        (("bf16", "x"), True, JSON.replace('{"enabled": true}', '{"enabled": true, "x": true}')),
    ],
)
def test_set_value_in_json(keypath: tuple[str, ...], value: Any, expected: str) -> None:
    assert set_(JSON, keypath, value, "json") == expected


def test_set_value_in_an_empty_json_object() -> None:
    assert set_("{}", ("a", "b"), 1, "json") == '{"a": {"b": 1}}'


@pytest.mark.parametrize("keypath", [("a", "b"), ("l", "x"), ("m",)])
def test_a_path_through_a_value_that_is_not_a_mapping_is_refused(keypath: tuple[str, ...]) -> None:
    doc = load_text("a: text\nl: [1, 2]\nm: {k: 1}\n", "x")
    with pytest.raises(ValueError):
        set_value(doc, keypath, 1)
