"""The accelerate-file writer (``accelconf.formats.yamljson``): the exact text it writes, what it
leaves out and what it says about it. Written from the survivors of ``make mutants``."""

from __future__ import annotations

import pytest
import yaml

from accelconf import formats
from accelconf.formats.yamljson import dump_yaml

NESTED = {
    "b": {"z": [], "y": {"q": [1, "no", None, True]}, "x": {}},
    "a": ["x"],
    "c": "it's",
    "d": None,
    "e": False,
    "f": "1",
    "g": "a b ",
    "h": "k: v",
    "i": "it's: x",
}


def test_dump_yaml_is_block_style_sorted_and_quotes_what_yaml11_would_misread() -> None:
    text = dump_yaml(NESTED)
    assert (
        text
        == """\
a:
- x
b:
  x: {}
  y:
    q:
    - 1
    - 'no'
    - null
    - true
  z: []
c: it's
d: null
e: false
f: '1'
g: 'a b '
h: 'k: v'
i: 'it''s: x'
"""
    )
    assert yaml.safe_load(text) == NESTED


def test_dump_yaml_at_an_indent() -> None:
    assert dump_yaml({"k": {"j": [2]}}, 4) == "    k:\n      j:\n      - 2\n"


def test_flags_written_as_a_file_keep_tuples_as_lists_and_drop_launch_only_flags() -> None:
    cfg = formats.read(
        "--multi_gpu --num_processes 2 --num_cpu_threads_per_process 4 --mixed_precision fp8 "
        "--fp8_override_linear_precision true,false,true --fsdp_transformer_layer_cls_to_wrap A,B",
        "cli",
    )
    text, findings = formats.write(cfg, "yaml", "1.15")
    assert (
        text
        == """\
compute_environment: LOCAL_MACHINE
distributed_type: MULTI_GPU
fp8_config:
  override_linear_precision:
  - true
  - false
  - true
fsdp_config:
  fsdp_transformer_layer_cls_to_wrap: A,B
mixed_precision: fp8
num_processes: 2
"""
    )
    assert [(f.rule, f.severity, f.key) for f in findings] == [
        ("convert.lossy", "warning", "--num_cpu_threads_per_process")
    ]
    as_json, _ = formats.write(cfg, "json", "1.15")
    assert yaml.safe_load(as_json) == yaml.safe_load(text)


def test_a_files_own_unknown_keys_are_kept_and_reported_where_they_are() -> None:
    cfg = formats.read(
        "distributed_type: MULTI_GPU\nnum_processes: 2\nfsdp_config:\n  fsdp_bogus: 1\nbogus_top: x\n", "yaml"
    )
    text, findings = formats.write(cfg, "yaml", "1.15")
    assert text == (
        "bogus_top: x\ncompute_environment: LOCAL_MACHINE\ndistributed_type: MULTI_GPU\n"
        "fsdp_config:\n  fsdp_bogus: 1\nnum_processes: 2\n"
    )
    assert [(f.rule, f.key, f.line, f.column) for f in findings] == [
        ("convert.unknown", "fsdp_config.fsdp_bogus", 4, 3),
        ("convert.unknown", "bogus_top", 5, 1),
    ]


def test_an_input_without_a_paradigm_or_process_count_says_so() -> None:
    text, findings = formats.write(formats.read("ACCELERATE_MIXED_PRECISION=bf16\n", "env"), "yaml", "1.15")
    assert text == "compute_environment: LOCAL_MACHINE\ndistributed_type: 'NO'\nmixed_precision: bf16\n"
    assert [(f.rule, f.severity) for f in findings] == [("convert.default", "info")]
    _, multi = formats.write(formats.read("ACCELERATE_USE_FSDP=true\n", "env"), "yaml", "1.15")
    assert [(f.rule, f.key) for f in multi] == [("convert.incomplete", "num_processes")]


def test_settings_from_elsewhere_beside_a_deepspeed_file_are_left_out_with_their_reason() -> None:
    """accelerate raises ValueError at training time when a file sets DeepSpeed keys or mixed_precision
    beside deepspeed_config_file (DeepSpeedPlugin._deepspeed_config_checks)."""
    env = (
        "ACCELERATE_USE_DEEPSPEED=true\nACCELERATE_DEEPSPEED_CONFIG_FILE=ds.json\nACCELERATE_MIXED_PRECISION=no\n"
        "ACCELERATE_GRADIENT_ACCUMULATION_STEPS=4\nACCELERATE_DEEPSPEED_ZERO_STAGE=2\n"
    )
    text, findings = formats.write(formats.read(env, "env"), "yaml", "1.15")
    assert text == (
        "compute_environment: LOCAL_MACHINE\ndeepspeed_config:\n  deepspeed_config_file: ds.json\n"
        "distributed_type: DEEPSPEED\n"
    )
    tail = (
        "beside `deepspeed_config_file` in a config file makes accelerate raise ValueError at training time; "
        "not written (set it in the DeepSpeed JSON file)"
    )
    assert [(f.rule, f.severity, f.key, f.line, f.column, f.message) for f in findings] == [
        (
            "convert.lossy",
            "info",
            "mixed_precision",
            3,
            1,
            "the launcher writes ACCELERATE_MIXED_PRECISION=no for every launch; `mixed_precision` " + tail,
        ),
        (
            "convert.lossy",
            "warning",
            "deepspeed_config.gradient_accumulation_steps",
            4,
            1,
            "`deepspeed_config.gradient_accumulation_steps` " + tail,
        ),
        ("convert.lossy", "warning", "deepspeed_config.zero_stage", 5, 1, "`deepspeed_config.zero_stage` " + tail),
        (
            "convert.incomplete",
            "info",
            "num_processes",
            0,
            0,
            "the input does not say how many processes: add "
            "num_processes to the file or pass --num_processes at launch",
        ),
    ]
    # a precision other than the launcher's default is a warning
    _, bf16 = formats.write(formats.read(env.replace("=no", "=bf16"), "env"), "yaml", "1.15")
    assert ("mixed_precision", "warning") in [(f.key, f.severity) for f in bf16]
    # without the JSON file, or outside DeepSpeed, nothing is left out
    no_file = formats.write(formats.read(env.replace("ACCELERATE_DEEPSPEED_CONFIG_FILE=ds.json\n", ""), "env"), "yaml")[
        0
    ]
    assert "zero_stage: 2" in no_file and "gradient_accumulation_steps: 4" in no_file
    fsdp = env.replace("USE_DEEPSPEED", "USE_FSDP")
    assert "mixed_precision: 'no'" in formats.write(formats.read(fsdp, "env"), "yaml")[0]


def test_unknown_structures_are_written_back_as_the_file_had_them() -> None:
    text = (
        "distributed_type: MULTI_GPU\nnum_processes: 2\nfsdp_config:\n  x.y: 1\n  fsdp_activation_checkpointing: true\n"
        "bogus_top:\n  1: [a, [b, 2]]\n"
    )
    cfg = formats.read(text, "yaml")
    written, findings = formats.write(cfg, "yaml", "1.15")
    assert yaml.safe_load(written) == {
        "bogus_top": {"1": ["a", ["b", 2]]},
        "compute_environment": "LOCAL_MACHINE",
        "distributed_type": "MULTI_GPU",
        "fsdp_config": {"x.y": 1, "fsdp_activation_checkpointing": True},
        "num_processes": 2,
    }
    assert [(f.rule, f.severity, f.key, f.line, f.message) for f in findings] == [
        (
            "convert.unknown",
            "warning",
            "fsdp_config.x.y",
            4,
            "`fsdp_config.x.y` is not a setting accelerate knows; kept as written",
        ),
        (
            "convert.unknown",
            "warning",
            "bogus_top",
            6,
            "`bogus_top` is not a setting accelerate knows; kept as written",
        ),
    ]
    as_json, _ = formats.write(cfg, "json", "1.15")
    assert as_json.startswith('{\n  "bogus_top": {\n    "1": [\n      "a",\n') and as_json.endswith(
        '  "num_processes": 2\n}\n'
    )


def test_the_paradigm_written_when_the_input_has_none() -> None:
    _, findings = formats.write(formats.read("ACCELERATE_MIXED_PRECISION=bf16\n", "env"), "yaml", "1.15")
    assert [(f.rule, f.severity, f.key, f.message) for f in findings] == [
        ("convert.default", "info", "distributed_type", "no distributed_type in the input: written as 'NO'")
    ]


def test_keys_and_nested_list_items_read_back_as_written() -> None:
    data = {"no": 1, "1": "x", "k: v": [], "l": [["a", "no"], {"b": None, "c": [1, "x y"]}, "z"]}
    text = dump_yaml(data)
    assert text == "'1': x\n'k: v': []\nl:\n- [a, 'no']\n- {b: null, c: [1, x y]}\n- z\n'no': 1\n"
    assert yaml.safe_load(text) == data


def test_flow_items_quote_what_flow_style_would_split() -> None:
    data = {"l": [["a,b", "c]"], {"k,1": "{v}"}], "m": {"n": "X"}}
    text = dump_yaml(data)
    assert yaml.safe_load(text) == data
    assert text.endswith("m:\n  n: X\n")


def test_the_reader_takes_the_format_it_is_told() -> None:
    from accelconf.errors import InputError
    from accelconf.formats import yamljson

    ds = '{"train_batch_size": 8, "zero_optimization": {"stage": 2}}\n'
    as_yaml = yamljson.read(ds)  # the default is YAML: a mapping of unknown keys, no DeepSpeed conversion
    assert (as_yaml.as_dict(), list(as_yaml.unknown), as_yaml.source) == (
        {},
        ["train_batch_size", "zero_optimization"],
        "<text>",
    )
    assert yamljson.read(ds, fmt="yaml").as_dict() == {}
    for fmt in ("json", None):
        assert yamljson.read(ds, fmt=fmt).get("deepspeed_config.zero_stage") == 2
    commented = ds.rstrip() + " // DeepSpeed allows comments\n"
    assert yamljson.read(commented, fmt="json").get("deepspeed_config.zero_stage") == 2
    with pytest.raises(InputError):
        yamljson.read(commented, fmt="yaml")


def test_the_reader_knows_aliases_only_from_their_release() -> None:
    from accelconf.formats import yamljson

    text = "distributed_type: 'NO'\ndynamo_config:\n  backend: INDUCTOR\n"
    assert list(yamljson.read(text, version="1.13").unknown) == ["dynamo_config.backend"]  # read from 1.14 on
    assert yamljson.read(text, version="1.14").get("dynamo_config.dynamo_backend") == "INDUCTOR"


def test_names_from_env_or_flags_without_a_key_are_each_reported_once() -> None:
    env = "ACCELERATE_USE_FSDP=true\nACCELERATE_NUM_PROCESSES=4\nOMP_NUM_THREADS=8\nACCELERATE_SEED=1\n"
    _, findings = formats.write(formats.read(env, "env"), "yaml", "1.15")
    lossy = [(f.key, f.line, f.column) for f in findings if f.rule == "convert.lossy"]
    # ACCELERATE_NUM_PROCESSES and ACCELERATE_SEED were reported by the reader (read by nothing)
    assert lossy == [("--num_cpu_threads_per_process", 3, 1)]
    _, two = formats.write(
        formats.read("--num_processes 2 --num_cpu_threads_per_process 4 --module --multi_gpu", "cli"), "yaml", "1.15"
    )
    assert [f.key for f in two if f.rule == "convert.lossy"] == ["--num_cpu_threads_per_process", "--module"]
