"""DeepSpeed JSON: the table, the schema, the rules, the accelerate cross-check and the conversion.

Case files live in tests/data/deepspeed: every ``invalid/NAME.json`` has ``NAME.expected`` with
the exact set of ``rule-id severity`` lines reported as error or warning (``# world_size: N``, ``# runtime: R`` and
``# version: V`` lines set the options); every ``valid/NAME.json`` gives no error or warning
(options in an optional ``NAME.options``). The public corpus in ../shared/corpus/deepspeed is
used when it is there.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from accelconf.accelerate.deepspeed_file import crosscheck, to_accelerate_section
from accelconf.deepspeed import RULES, SCHEMA_ID, TOP, iter_keys, lookup
from accelconf.deepspeed.schema import deepspeed_schema, write_schema
from accelconf.deepspeed.validate import validate_deepspeed
from accelconf.errors import InputError, UsageError
from accelconf.findings import Finding
from accelconf.kinds import is_deepspeed
from accelconf.text.document import load_file, load_text

ROOT = Path(__file__).parents[3]
DATA = Path(__file__).parents[2] / "data" / "deepspeed"
SCHEMA_FILE = ROOT / "schemas" / "deepspeed-config.schema.json"
CORPUS = Path(__file__).parents[4] / "shared/corpus/deepspeed"
TEMPLATES = {
    "deepspeedai__DeepSpeedExamples__compression__bert__config__ds_config_TEMPLATE.json": (3, 39),
    "deepspeedai__DeepSpeedExamples__training__tensor_parallel__hf_integration__configs__ds_config_temp.json": (24, 16),
}
# Corpus files with real errors: DeepSpeed itself rejects them (tests/oracle/test_deepspeed_oracle.py checks
# that), so accelconf must report them. Everything else in the corpus gives no error.
TRUE_ERRORS = {
    # typo "persitence": extra_forbidden in zero_optimization in every version
    "deepspeedai__DeepSpeedExamples__Megatron-LM-v1.1.5-ZeRO3__examples__ds_zero_stage_infinity_config.json": {
        "ds-unknown-key"
    },
    # "cpu_offload_params" is not the deprecated "cpu_offload_param": extra_forbidden
    "deepspeedai__DeepSpeedExamples__megatron__Megatron-LM-v1.1.5-ZeRO3__examples__"
    "ds_zero_stage_3_config_release.json": {"ds-unknown-key"},
    # an autotuner template without batch keys: DeepSpeedConfig asserts when it is used alone
    "deepspeedai__DeepSpeed__deepspeed__autotuning__config_templates__template_zero3.json": {"ds-batch"},
    # reduce_bucket_size 0 (rejected from 0.19.6, a division by zero before) and no batch keys
    "huggingface__transformers__tests__deepspeed__ds_config_zero3.json": {"ds-range", "ds-batch"},
    # WarmupLR with warmup_num_steps 0: ValueError in deepspeed.initialize from 0.19.3 (before, 2 steps)
    "jzhang38__EasyContext__accelerate_configs__zero3_offload.json": {"ds-range"},
}


def _options(lines: list[str]) -> dict[str, Any]:
    opts: dict[str, Any] = {}
    for line in lines:
        if line.startswith("#") and ":" in line:
            name, value = (s.strip() for s in line[1:].split(":", 1))
            if name == "world_size":
                opts["world_size"] = int(value)
            elif name == "runtime":
                opts["runtime"] = value
            elif name == "version":
                opts["deepspeed_version"] = value
    return opts


def _reported(findings: list[Finding]) -> set[str]:
    return {f.rule for f in findings if f.severity in ("error", "warning")}


def _cases(kind: str) -> list[Path]:
    return sorted((DATA / kind).glob("*.json"))


def _expected(path: Path) -> set[tuple[str, str]]:
    """The ``rule-id severity`` lines of a case's ``.expected`` file."""
    out = set()
    for line in path.with_suffix(".expected").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            rule, severity = line.split()
            assert severity in ("error", "warning"), line
            out.add((rule, severity))
    return out


@pytest.mark.parametrize("path", _cases("invalid"), ids=lambda p: p.stem)
def test_invalid_case(path: Path) -> None:
    lines = path.with_suffix(".expected").read_text().splitlines()
    doc = load_file(path)
    findings = validate_deepspeed(doc, **_options(lines))
    reported = {(f.rule, f.severity) for f in findings if f.severity in ("error", "warning")}
    assert reported == _expected(path), [f"{f.rule} {f.severity} {f.message}" for f in findings]
    for f in findings:
        assert f.line >= 1 and f.column >= 1, f


@pytest.mark.parametrize("path", _cases("valid"), ids=lambda p: p.stem)
def test_valid_case(path: Path) -> None:
    options = path.with_suffix(".options")
    opts = _options(options.read_text().splitlines()) if options.exists() else {}
    findings = validate_deepspeed(load_file(path), **opts)
    assert not _reported(findings), [f"{f.rule} {f.message}" for f in findings]


def test_every_rule_has_a_case() -> None:
    covered: set[str] = set()
    for path in _cases("invalid"):
        covered |= {rule for rule, _ in _expected(path)}
    # the two accelerate cross-check rules need two documents: see test_crosscheck_* below
    assert set(RULES) - covered == {"ds-accelerate-conflict", "ds-accelerate-auto"}


# -- positions and suggestions -------------------------------------------------------------------


def _check(text: str, **kw: Any) -> list[Finding]:
    return validate_deepspeed(load_text(text, "ds.json", "json"), **kw)


def test_unknown_key_has_exact_range_and_ranked_suggestion() -> None:
    text = (
        '{\n  "train_micro_batch_size_per_gpu": 4,\n  "zero_optimization": {\n    "stage": 2,\n'
        '    "reduce_bucket_sise": 5\n  }\n}\n'
    )
    [f] = [f for f in _check(text) if f.rule == "ds-unknown-key"]
    assert (f.line, f.column, f.end_line, f.end_column) == (5, 5, 5, 25)
    assert f.key == "zero_optimization.reduce_bucket_sise"
    assert f.suggestion == "reduce_bucket_size"
    assert f.severity == "error"  # zero_optimization is a pydantic model with extra="forbid"


def test_unknown_top_level_key_is_a_warning_because_deepspeed_ignores_it() -> None:
    [f] = [
        f
        for f in _check('{"train_micro_batch_size_per_gpu": 4, "zero_optimization": {}, "gradient_clipp1ng": 1}')
        if f.rule == "ds-unknown-key"
    ]
    assert f.severity == "warning" and f.suggestion == "gradient_clipping" and "silently ignores" in f.message


def test_key_at_the_wrong_level_names_its_section() -> None:
    [f] = [
        f
        for f in _check('{"train_micro_batch_size_per_gpu": 4, "zero_optimization": {"stage": 3, "aio": {}}}')
        if f.rule == "ds-unknown-key"
    ]
    assert "belongs in" in f.message and f.suggestion == "aio"


def test_value_findings_point_at_the_value() -> None:
    text = '{"train_micro_batch_size_per_gpu": 4, "zero_optimization": {"stage": 7}}'
    [f] = [f for f in _check(text) if f.rule == "ds-zero-stage"]
    start = text.index("7") + 1
    assert (f.line, f.column, f.end_column) == (1, start, start + 1)


def test_lax_coercions_are_warnings_not_errors() -> None:
    findings = _check(
        '{"train_micro_batch_size_per_gpu": 4, "zero_optimization": {"stage": "3", "reduce_bucket_size": 5e8,'
        ' "offload_param": {"device": "cpu", "pin_memory": "yes"}}}'
    )
    assert not [f for f in findings if f.severity == "error"]
    assert {f.key for f in findings if f.rule == "ds-type"} == {
        "zero_optimization.stage",
        "zero_optimization.offload_param.pin_memory",
    }


def test_fp16_section_strictness_depends_on_the_version() -> None:
    text = (
        '{"train_micro_batch_size_per_gpu": 4, "zero_optimization": '
        '{}, "fp16": {"enabled": true, "loss_scale_windw": 10}}'
    )
    assert {f.severity for f in _check(text) if f.rule == "ds-unknown-key"} == {"warning"}
    assert {f.severity for f in _check(text, deepspeed_version="0.19.8") if f.rule == "ds-unknown-key"} == {"error"}
    assert {f.severity for f in _check(text, deepspeed_version="0.16.9") if f.rule == "ds-unknown-key"} == {"warning"}


def test_removed_blocks_warn_without_a_version_and_fail_with_one() -> None:
    text = '{"train_micro_batch_size_per_gpu": 4, "zero_optimization": {}, "elasticity": {"enabled": false}}'
    [f] = [f for f in _check(text) if f.rule == "ds-removed"]
    assert f.severity == "warning" and "0.19.8" in f.message
    assert [f.severity for f in _check(text, deepspeed_version="0.19.8") if f.rule == "ds-removed"] == ["error"]
    assert not [f for f in _check(text, deepspeed_version="0.19.7") if f.rule == "ds-removed"]


def test_auto_depends_on_the_runtime() -> None:
    text = (
        '{"train_micro_batch_size_per_gpu": "auto", "zero_optimization": {"stage": "auto"},'
        ' "optimizer": {"type": "AdamW", "params": {"betas": "auto"}}}'
    )
    by_runtime = {
        rt: {(f.key, f.severity) for f in _check(text, runtime=rt) if f.rule == "ds-auto"}
        for rt in ("deepspeed", "accelerate", "transformers")
    }
    assert by_runtime["transformers"] == set()
    assert by_runtime["accelerate"] == {("optimizer.params.betas", "error")}
    assert by_runtime["deepspeed"] == {
        ("train_micro_batch_size_per_gpu", "error"),
        ("zero_optimization.stage", "warning"),
        ("optimizer.params.betas", "error"),
    }


def test_deepspeed_native_auto_is_never_flagged() -> None:
    text = (
        '{"train_micro_batch_size_per_gpu": 1, "zero_optimization": {}, "pipeline": '
        '{"stages": "auto"}, "data_types": {"keep_in_fp32_modules": "auto"}}'
    )
    assert not [f for f in _check(text, runtime="deepspeed") if f.rule == "ds-auto"]


def test_autotuner_fills_batch_auto() -> None:
    text = '{"train_micro_batch_size_per_gpu": "auto", "autotuning": {"enabled": true}, "zero_optimization": {}}'
    assert not [f for f in _check(text, runtime="deepspeed") if f.rule == "ds-auto"]


def test_batch_arithmetic() -> None:
    ok = (
        '{"train_batch_size": 64, "train_micro_batch_size_per_gpu": '
        '4, "gradient_accumulation_steps": 2, "zero_optimization": {}}'
    )
    assert not [f for f in _check(ok, world_size=8) if f.rule == "ds-batch"]
    [f] = [f for f in _check(ok, world_size=4) if f.rule == "ds-batch"]
    assert "64 != " in f.message and f.suggestion == "32" and f.key == "train_batch_size"
    auto = (
        '{"train_batch_size": 64, "train_micro_batch_size_per_gpu": '
        '"auto", "gradient_accumulation_steps": 3, "zero_optimization": {}}'
    )
    assert [f.rule for f in _check(auto, world_size=2) if f.rule == "ds-batch"] == ["ds-batch"]  # 64 % (3*2)
    # without a world size: 64 is not a multiple of 3, so no micro batch and no world size can satisfy it
    assert [f.rule for f in _check(auto) if f.rule == "ds-batch"] == ["ds-batch"]
    derived = '{"train_batch_size": 64, "train_micro_batch_size_per_gpu": 4, "zero_optimization": {}}'
    assert not [f for f in _check(derived, world_size=8) if f.rule == "ds-batch"]
    assert [f.rule for f in _check(derived, world_size=3) if f.rule == "ds-batch"] == ["ds-batch"]


def test_invalid_runtime_and_version_are_usage_errors() -> None:
    doc = load_text("{}", "x.json", "json")
    with pytest.raises(UsageError):
        validate_deepspeed(doc, runtime="trainer")
    with pytest.raises(UsageError):
        validate_deepspeed(doc, deepspeed_version="latest")


# -- recognition ----------------------------------------------------------------------------------


def test_is_deepspeed() -> None:
    assert is_deepspeed(load_text('{"zero_optimization": {"stage": 2}}', "a.json", "json"))
    assert is_deepspeed(load_text('{"fp16": {"enabled": true}}', "a.json", "json"))
    assert not is_deepspeed(
        load_text("compute_environment: LOCAL_MACHINE\ndistributed_type: DEEPSPEED\n", "a.yaml", "yaml")
    )
    assert not is_deepspeed(load_text('{"name": "x", "version": "1"}', "package.json", "json"))
    assert not is_deepspeed(load_text("[1, 2]", "a.json", "json"))


# -- schema ---------------------------------------------------------------------------------------


def test_schema_file_is_current(tmp_path: Path) -> None:
    expected = json.dumps(deepspeed_schema(), indent=2, sort_keys=False) + "\n"
    assert SCHEMA_FILE.read_text(encoding="utf-8") == expected, (
        "schemas/deepspeed-config.schema.json is stale: run python -c "
        "'from accelconf.deepspeed.schema import write_schema; "
        'write_schema("schemas/deepspeed-config.schema.json")\''
    )
    out = tmp_path / "s.json"
    write_schema(str(out))
    assert out.read_text(encoding="utf-8") == expected


def test_schema_shape() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    schema = deepspeed_schema()
    jsonschema.Draft7Validator.check_schema(schema)
    assert schema["$id"] == SCHEMA_ID
    zero = schema["properties"]["zero_optimization"]["properties"]
    assert zero["stage"]["anyOf"][0]["enum"] == [0, 1, 2, 3]
    assert "markdownEnumDescriptions" in zero["stage"]["anyOf"][0]
    assert "deprecationMessage" in zero["stage3_gather_fp16_weights_on_model_save"]
    assert "prefetch_bucket_size" in zero  # the field name DeepSpeed accepts next to the stage3_ alias
    assert "deprecationMessage" in schema["properties"]["amp"]
    assert zero["offload_param"]["properties"]["pin_memory"]["default"] is True
    assert "0.19.5" in zero["offload_param"]["properties"]["pin_memory"]["markdownDescription"]
    for path, key in iter_keys():
        assert key.doc, path


def test_table_lookup_follows_aliases() -> None:
    assert lookup("zero_optimization.prefetch_bucket_size") is lookup("zero_optimization.stage3_prefetch_bucket_size")
    assert lookup("zero_optimization.nope") is None
    assert TOP.children is not None and "zero_optimization" in TOP.children


# -- corpus ---------------------------------------------------------------------------------------


def _corpus() -> list[Path]:
    if not CORPUS.is_dir():
        return []
    return sorted(
        p for p in CORPUS.iterdir() if p.is_file() and p.name not in TEMPLATES and p.suffix in (".json", ".conf")
    )


def test_corpus_is_present() -> None:
    if not CORPUS.is_dir():
        print(f"skipping the corpus tests: {CORPUS} is absent")
        pytest.skip(f"corpus folder {CORPUS} is absent (it lives next to the repository, in ../shared)")
    assert len(_corpus()) == 58


@pytest.mark.parametrize("path", _corpus(), ids=lambda p: p.name[:70])
def test_corpus_file_has_no_false_error(path: Path) -> None:
    doc = load_file(path, "json")
    assert is_deepspeed(doc)
    # a file is written for one runtime: it must be clean under at least one of them
    best = min(
        (
            sorted({f.rule for f in validate_deepspeed(doc, runtime=rt) if f.severity == "error"})
            for rt in ("deepspeed", "accelerate", "transformers")
        ),
        key=len,
    )
    assert set(best) == TRUE_ERRORS.get(path.name, set())


@pytest.mark.parametrize("name", sorted(TEMPLATES))
def test_corpus_templates_are_clean_parse_errors(name: str) -> None:
    path = CORPUS / name
    if not path.exists():
        pytest.skip(f"{path} is absent")
    with pytest.raises(InputError) as info:
        load_file(path)
    assert (info.value.line, info.value.column) == TEMPLATES[name]
    assert "invalid JSON" in info.value.message


@pytest.mark.parametrize("path", _corpus(), ids=lambda p: p.name[:70])
def test_schema_agrees_with_validation_on_corpus(path: Path) -> None:
    """Every schema error on a corpus file is a place where accelconf also reports something."""
    jsonschema = pytest.importorskip("jsonschema")
    doc = load_file(path, "json")
    validator = jsonschema.Draft7Validator(deepspeed_schema())
    reported = {
        f.key for rt in ("deepspeed", "accelerate", "transformers") for f in validate_deepspeed(doc, runtime=rt)
    }
    for error in validator.iter_errors(doc.data):
        where = ".".join(str(p) for p in error.absolute_path)
        if error.validator == "additionalProperties":
            extra = [k for k in error.instance if k not in error.schema.get("properties", {})]
            keys = {f"{where}.{k}" if where else k for k in extra}
        else:
            keys = {where}
        assert keys <= reported, f"schema error without a finding at {keys}: {error.message}"


# -- accelerate -----------------------------------------------------------------------------------

ACCEL_YAML = """compute_environment: LOCAL_MACHINE
distributed_type: DEEPSPEED
deepspeed_config:
  deepspeed_config_file: ds.json
  zero_stage: 2
  gradient_clipping: 1.0
  zero3_init_flag: true
mixed_precision: bf16
num_processes: 8
"""
DS_JSON = """{
  "train_micro_batch_size_per_gpu": "auto",
  "train_batch_size": "auto",
  "gradient_clipping": "auto",
  "fp16": {"enabled": true},
  "zero_optimization": {"stage": 3, "reduce_bucket_size": "auto"}
}
"""


def test_crosscheck_reports_what_accelerate_raises_on() -> None:
    accel = load_text(ACCEL_YAML, "accel.yaml", "yaml")
    ds = load_text(DS_JSON, "ds.json", "json")
    findings = crosscheck(accel.data, accel, ds)
    conflicts = {(f.key, f.severity) for f in findings if f.rule == "ds-accelerate-conflict"}
    assert ("deepspeed_config.zero_stage", "error") in conflicts
    assert ("deepspeed_config.gradient_clipping", "error") in conflicts
    assert ("mixed_precision", "error") in conflicts
    assert ("deepspeed_config.zero3_init_flag", "warning") not in conflicts  # the file uses stage 3
    zs = next(f for f in findings if f.key == "deepspeed_config.zero_stage")
    assert (zs.line, zs.column, zs.path) == (5, 3, "accel.yaml") and "`zero_optimization.stage` = 3" in zs.message
    bf = [f for f in findings if f.key == "mixed_precision" and "fp16.enabled" in f.message]
    assert bf, "bf16 with fp16 enabled in the file raises in set_mixed_precision"
    infos = {f.key: f for f in findings if f.rule == "ds-accelerate-auto"}
    assert set(infos) >= {
        "train_micro_batch_size_per_gpu",
        "train_batch_size",
        "gradient_clipping",
        "zero_optimization.reduce_bucket_size",
    }
    assert (
        infos["train_micro_batch_size_per_gpu"].path == "ds.json"
        and "dataloader" in infos["train_micro_batch_size_per_gpu"].message
    )
    assert all(f.severity == "info" for f in infos.values())


def test_crosscheck_clean_pair() -> None:
    accel_text = (
        "distributed_type: DEEPSPEED\ndeepspeed_config:\n  deepspeed_config_file: ds.json\n  zero3_init_flag: false\n"
    )
    accel = load_text(accel_text, "a.yaml", "yaml")
    ds = load_text(
        '{"train_micro_batch_size_per_gpu": 2, "gradient_accumulation_steps": 1, "zero_optimization": {"stage": 2}}',
        "ds.json",
        "json",
    )
    assert [f for f in crosscheck(accel.data, accel, ds) if f.severity != "info"] == []


def test_crosscheck_zero3_init_flag_with_stage_2() -> None:
    accel_text = "deepspeed_config:\n  deepspeed_config_file: ds.json\n  zero3_init_flag: true\n"
    accel = load_text(accel_text, "a.yaml", "yaml")
    ds = load_text('{"train_micro_batch_size_per_gpu": 2, "zero_optimization": {"stage": 2}}', "ds.json", "json")
    [f] = [f for f in crosscheck(accel.data, accel, ds) if f.rule == "ds-accelerate-conflict"]
    assert f.severity == "warning" and f.key == "deepspeed_config.zero3_init_flag"


def test_to_accelerate_section() -> None:
    data = json.loads("""{
      "train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 4, "gradient_clipping": 1.0,
      "bf16": {"enabled": true},
      "zero_optimization": {"stage": 3, "offload_optimizer": {"device": "cpu", "pin_memory": true},
                            "offload_param": {"device": "nvme", "nvme_path": "/nvme"},
                            "stage3_gather_16bit_weights_on_model_save": true, "overlap_comm": true},
      "optimizer": {"type": "AdamW", "params": {"lr": 1e-4}}
    }""")
    section, notes = to_accelerate_section(data)
    assert section == {
        "zero_stage": 3,
        "offload_optimizer_device": "cpu",
        "offload_param_device": "nvme",
        "offload_param_nvme_path": "/nvme",
        "gradient_accumulation_steps": 4,
        "gradient_clipping": 1.0,
        "zero3_save_16bit_model": True,
        "zero3_init_flag": True,
        "mixed_precision": "bf16",
    }
    text = "\n".join(n.message for n in notes)
    for word in ("optimizer", "overlap_comm", "train_micro_batch_size_per_gpu", "pin_memory", "nvme_path"):
        assert word in text
    assert {n.rule for n in notes} == {"convert.ds-unmapped", "convert.ds-not-exported"}


def test_to_accelerate_section_leaves_auto_to_the_plugin() -> None:
    section, notes = to_accelerate_section(
        {"gradient_accumulation_steps": "auto", "fp16": {"enabled": "auto"}, "zero_optimization": {"stage": "auto"}}
    )
    assert (
        "zero_stage" not in section
        and "gradient_accumulation_steps" not in section
        and "mixed_precision" not in section
    )
    assert any("stage" in n.message for n in notes) and any("mixed_precision" in n.message for n in notes)
    assert {n.rule for n in notes} == {"convert.ds-auto"}


def test_json_quirks_are_portability_warnings_and_duplicates_depend_on_the_loader() -> None:
    text = (
        '{\n  // comment\n  "train_micro_batch_size_per_gpu": 4,\n  "zero_optimization": {"stage": 1,},\n'
        '  "zero_optimization": {"stage": 2}\n}'
    )
    findings = _check(text)
    assert {(f.rule, f.severity, f.line) for f in findings} == {
        ("ds-json-portability", "warning", 2),
        ("ds-json-portability", "warning", 4),
        ("ds-duplicate-key", "warning", 5),
    }
    assert [f.severity for f in _check(text, runtime="deepspeed") if f.rule == "ds-duplicate-key"] == ["error"]


def test_bfloat16_is_the_old_name_of_bf16() -> None:
    findings = _check(
        '{"train_micro_batch_size_per_gpu": 4, "zero_optimization": '
        '{}, "bfloat16": {"enabled": true}, "bf16": {"enabled": false}}'
    )
    assert {(f.rule, f.key) for f in findings} == {("ds-deprecated", "bfloat16"), ("ds-alias-conflict", "bfloat16")}


def test_accelerate_world_size() -> None:
    from accelconf.accelerate.deepspeed_file import accelerate_world_size

    assert accelerate_world_size({"num_processes": 16, "num_machines": 2}) == 16
    assert accelerate_world_size({"num_processes": True}) is None
    assert accelerate_world_size({}) is None


def test_legacy_compile_block_is_fine_for_0_15_and_rejected_later() -> None:
    text = (
        '{"train_micro_batch_size_per_gpu": 1, "zero_optimization": '
        '{}, "compile": {"disable": false, "backend": "inductor"}}'
    )
    assert not [f for f in _check(text, deepspeed_version="0.15.4", runtime="deepspeed") if f.severity != "info"]
    assert {(f.rule, f.severity) for f in _check(text, deepspeed_version="0.19.8")} == {("ds-removed", "error")}
    # DeepSpeedConfig 0.15.4 does not read `compile` at all (CompileConfig arrived in 0.16): the
    # release matrix (test_deepspeed_releases.py) shows it accepting any key there
    new = '{"train_micro_batch_size_per_gpu": 1, "zero_optimization": {}, "compile": {"deepcompile": true}}'
    assert {(f.rule, f.severity) for f in _check(new, deepspeed_version="0.15.4")} == {("ds-version", "warning")}
    assert not [f for f in _check(new, deepspeed_version="0.16.9") if f.severity != "info"]


def test_nvme_offload_conversion_notes_the_launcher_gap() -> None:
    section, notes = to_accelerate_section(
        {"zero_optimization": {"stage": 3, "offload_optimizer": {"device": "nvme", "nvme_path": "/nvme"}}}
    )
    assert section["offload_optimizer_nvme_path"] == "/nvme" and section["offload_param_device"] == "none"
    assert [n.rule for n in notes if "does not export" in n.message] == ["convert.ds-not-exported"]


# -- one home for each fact ----------------------------------------------------------


def test_diff_and_assist_use_the_one_detector_and_mapping():
    import accelconf.accelerate.deepspeed_file as ds
    from accelconf import diff as semdiff

    assert semdiff.DS_TO_ACCELERATE is ds.DS_TO_ACCELERATE
    assert semdiff.DS_TO_ACCELERATE["zero_optimization.stage"] == "deepspeed_config.zero_stage"
    assert semdiff.is_deepspeed_data({"elasticity": {"enabled": True}, "zero_optimization": {}}) is True
    assert semdiff.is_deepspeed_data({"distributed_type": "DEEPSPEED", "zero_optimization": {}}) is False
    # an editor buffer that does not parse yet is judged by the same module
    from accelconf.assist import document_kind

    assert document_kind("x.json", '{"zero_optimization": {"stage": ') == "deepspeed"
    assert document_kind("x.json", '{"distributed_type": "X", "zero_optimization": {') == "accelerate"


@pytest.mark.parametrize(
    "alias, canon",
    [
        ("zero_optimization.module_granularity_threshold", "zero_optimization.stage3_module_granularity_threshold"),
        ("zero_optimization.prefetch_bucket_size", "zero_optimization.stage3_prefetch_bucket_size"),
        (
            "zero_optimization.stage3_gather_fp16_weights_on_model_save",
            "zero_optimization.stage3_gather_16bit_weights_on_model_save",
        ),
        ("tensor_parallel.tp.tp_size", "tensor_parallel.tensor_parallel.tp_size"),
        ("zero_optimization.cpu_offload", "zero_optimization.cpu_offload"),  # bool vs a section: not one setting
        ("no_such.key", "no_such.key"),
    ],
)
def test_canonical_path(alias, canon):
    from accelconf.deepspeed import canonical_path

    assert canonical_path(alias) == canon


def test_diff_reads_every_alias_of_the_key_table():
    from accelconf import diff as semdiff

    a = load_text('{"train_batch_size": 8, "zero_optimization": {"module_granularity_threshold": 5}}', "a.json", "json")
    b = load_text(
        '{"train_batch_size": 8, "zero_optimization": {"stage3_module_granularity_threshold": 5}}', "b.json", "json"
    )
    assert semdiff.diff_deepspeed(a, b).equivalent


# -- DeepSpeed optimizer, scheduler and key-table details ----------------------------------------


def test_deepspeed_version_defaults_to_installed(cli, tmp_path, monkeypatch):
    """Without --deepspeed-version, the installed DeepSpeed (0.19.8 in the test extras) is the
    target, so a key it rejects is an error; with no DeepSpeed installed it stays a warning."""
    import accelconf.deepspeed as ds

    p = tmp_path / "ds.json"
    p.write_text('{"train_micro_batch_size_per_gpu": 1, "zero_optimization": {"stage": 3, "mics_shard_size": 8}}')
    monkeypatch.setattr(ds, "installed_version", lambda: "0.19.8")
    r = cli("validate", "--format", "json", str(p))
    (f,) = [f for f in json.loads(r.out)["files"][0]["findings"] if f["rule"] == "ds-removed"]
    assert f["severity"] == "error" and r.code == 1
    monkeypatch.setattr(ds, "installed_version", lambda: None)
    r = cli("validate", "--format", "json", str(p))
    (f,) = [f for f in json.loads(r.out)["files"][0]["findings"] if f["rule"] == "ds-removed"]
    assert f["severity"] == "warning" and r.code == 0


def test_installed_version_comes_from_metadata_without_importing_deepspeed(tmp_path):
    import subprocess
    import sys

    code = (
        "import sys; from accelconf.api import validate_config; from accelconf.text.document import load_text; "
        "fs = validate_config(load_text("
        '\'{"train_micro_batch_size_per_gpu": 1, "zero_optimization": {"mics_shard_size": 8}}\', '
        "'x.json', 'json')); "
        "import accelconf.deepspeed as ds; print(ds.installed_version()); "
        "print([f.severity for f in fs if f.rule == 'ds-removed']); "
        "print('deepspeed' in sys.modules, 'torch' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).parents[3])] + sys.path)},
    ).stdout.split("\n")
    try:
        from importlib.metadata import version

        installed = version("deepspeed").split("+")[0]
    except Exception:  # noqa: BLE001
        installed = "None"
    assert out[0] == installed
    assert out[2] == "False False"
    if installed != "None":
        assert out[1] == "['error']"


@pytest.mark.parametrize(
    "text, flags, kind",
    [
        ('{"elasticity": {"enabled": true, "max_train_batch_size": 8}}', (), "deepspeed"),
        ('{"steps_per_print": 10}', (), "deepspeed"),
        ('{"elasticity": {}, "my_note": 1}', (), "accelerate"),
        ('{"elasticity": {}, "my_note": 1}', ("--runtime", "deepspeed"), "deepspeed"),
        ('{"elasticity": {}, "my_note": 1}', ("--deepspeed-version", "0.18.0"), "deepspeed"),
        ('{"distributed_type": "DEEPSPEED", "fp16": true}', ("--runtime", "deepspeed"), "accelerate"),
    ],
)
def test_a_file_of_only_deepspeed_blocks_is_deepspeed_json(cli, tmp_path, text, flags, kind):
    """No accelerate key and only DeepSpeed blocks, or --runtime deepspeed / --deepspeed-version."""
    p = tmp_path / "x.json"
    p.write_text(text)
    r = cli("validate", "--format", "json", *flags, str(p))
    rules = {f["rule"] for f in json.loads(r.out)["files"][0]["findings"]}
    if kind == "deepspeed":
        assert all(r.startswith("ds-") for r in rules), rules
    else:
        assert not any(r.startswith("ds-") for r in rules), rules


def test_json_comments_are_one_finding_per_file() -> None:
    """DeepSpeed reads `//` comments (hjson); a commented file gets one finding, not one per line."""
    text = (
        '{\n  // batch\n  // more\n  "train_micro_batch_size_per_gpu": 4, // per GPU\n'
        '  "zero_optimization": {"stage": 1}\n}'
    )
    (f,) = [f for f in _check(text) if f.rule == "ds-json-portability"]
    assert (f.line, f.severity) == (2, "warning") and "3 in this file, on lines 2, 3, 4" in f.message


def test_leaf_module_string_is_one_name() -> None:
    """DeepSpeedZeroLeafModuleConfig wraps a string in a list, without a warning; null is {}."""
    z3 = '"stage": 3, "stage3_gather_16bit_weights_on_model_save": true'
    text = (
        '{"train_micro_batch_size_per_gpu": 1, "zero_optimization": {' + z3 + ', "leaf_module": '
        '{"classes": "my.Block", "names": "layers.0", "name_suffixes": ["mlp"]}}}'
    )
    assert _check(text, runtime="deepspeed", deepspeed_version="0.19.8") == []
    assert (
        _check(
            '{"train_micro_batch_size_per_gpu": 1, "zero_optimization": {' + z3 + ', "leaf_module": null}}',
            runtime="deepspeed",
            deepspeed_version="0.19.8",
        )
        == []
    )
    (f,) = _check(
        '{"train_micro_batch_size_per_gpu": 1, "zero_optimization": {"leaf_module": {"classes": 3}}}',
        runtime="deepspeed",
        deepspeed_version="0.19.8",
    )
    assert f.severity == "error" and f.rule == "ds-type"


@pytest.mark.parametrize(
    "data, expected",
    [
        ({"train_batch_size": 8}, True),
        ({"train_micro_batch_size_per_gpu": 2, "gradient_accumulation_steps": 4, "my_note": "x"}, True),
        ({"zero_optimization": {"stage": 2}, "a": 1, "b": 2, "c": 3}, True),
        # Hugging Face Trainer's trainer_state.json: one batch key among a dozen of its own
        (
            {
                "train_batch_size": 8,
                "best_metric": None,
                "epoch": 3.0,
                "global_step": 300,
                "log_history": [],
                "max_steps": 300,
                "num_train_epochs": 3,
                "total_flos": 1.0,
                "trial_name": None,
            },
            False,
        ),
    ],
)
def test_detector_needs_mostly_deepspeed_keys_beside_a_batch_key(data, expected):
    from accelconf.kinds import is_deepspeed_data

    assert is_deepspeed_data(data) is expected


@pytest.mark.parametrize("runtime", ["deepspeed", "accelerate", "transformers"])
def test_zero3_without_16bit_gathering_warns_that_saving_writes_no_weights(runtime: str) -> None:
    """ZeRO-3 shards the weights: without stage3_gather_16bit_weights_on_model_save (default false)
    Trainer.save_model() falls back to a DeepSpeed checkpoint, accelerator.get_state_dict() raises,
    engine.save_16bit_model() saves nothing. A warning naming the key to set, at the key or the stage."""

    def found(zero: str) -> list[tuple[str, str, str | None]]:
        text = '{"train_micro_batch_size_per_gpu": 1, "zero_optimization": {' + zero + "}}"
        return [
            (f.severity, f.key, f.suggestion)
            for f in _check(text, runtime=runtime, deepspeed_version="0.19.8")
            if f.rule == "ds-zero3-save"
        ]

    key = "zero_optimization.stage3_gather_16bit_weights_on_model_save"
    assert found('"stage": 3') == [("warning", "zero_optimization.stage", "stage3_gather_16bit_weights_on_model_save")]
    assert found('"stage": 3, "stage3_gather_16bit_weights_on_model_save": false') == [("warning", key, "true")]
    assert found('"stage": 3, "stage3_gather_16bit_weights_on_model_save": "auto"') == [("warning", key, "true")]
    for on in (
        '"stage3_gather_16bit_weights_on_model_save": true',
        '"gather_16bit_weights_on_model_save": true',
        '"stage3_gather_fp16_weights_on_model_save": true',
    ):
        assert found('"stage": 3, ' + on) == [], on
    assert found('"stage": 2') == found('"stage": "auto"') == []
    (message,) = [
        f.message
        for f in _check('{"train_micro_batch_size_per_gpu": 1, "zero_optimization": {"stage": 3}}', runtime=runtime)
        if f.rule == "ds-zero3-save"
    ]
    assert "stage3_gather_16bit_weights_on_model_save: true" in message
    assert {
        "transformers": "Trainer.save_model()",
        "accelerate": "get_state_dict()",
        "deepspeed": "save_16bit_model()",
    }[runtime] in message


@pytest.mark.parametrize(
    ("bf16", "errors"),
    [
        ("{}", []),  # DeepSpeed reads `bf16` and never the old block: its null is harmless
        ("null", ["ds-type"]),  # `bf16: null` falls back to `bfloat16` (get_bfloat16_config): null raises
    ],
)
def test_the_old_bfloat16_block_is_judged_only_when_deepspeed_reads_it(bf16: str, errors: list[str]) -> None:
    doc = load_text(f'{{"train_batch_size": 8, "bf16": {bf16}, "bfloat16": null}}\n', "ds.json")
    found = validate_deepspeed(doc, deepspeed_version="0.19.8", runtime="deepspeed")
    assert [f.rule for f in found if f.severity == "error" and f.key == "bfloat16"] == errors
