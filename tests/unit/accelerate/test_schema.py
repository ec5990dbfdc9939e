"""Generated schemas: committed files are fresh, and the schema finds no false error in the corpus."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from accelconf.accelerate.schema import accelerate_schema
from accelconf.accelerate.validate import validate_document
from accelconf.schemas import generated_files
from accelconf.text.document import load_file
from tests.conftest import corpus_files

SCHEMAS = Path(__file__).resolve().parents[3] / "schemas"


@pytest.mark.parametrize("name", sorted(generated_files()))
def test_committed_schema_is_fresh(name):
    committed = (SCHEMAS / name).read_text(encoding="utf-8")
    assert committed == generated_files()[name], f"schemas/{name} is stale: run `make schemas`"


def test_schema_is_valid_draft7_with_editor_annotations():
    schema = accelerate_schema()
    jsonschema.Draft7Validator.check_schema(schema)
    mp = schema["properties"]["mixed_precision"]
    assert (
        mp["default"] == "no" and "markdownDescription" in mp and len(mp["enum"]) == len(mp["markdownEnumDescriptions"])
    )
    assert (
        "Ignored by `accelerate launch` when set in a file"
        in schema["properties"]["rdzv_backend"]["markdownDescription"]
    )
    assert (
        "deprecationMessage" not in schema["properties"]["rdzv_backend"]
        and "Legacy" in schema["properties"]["fp16"]["markdownDescription"]
    )
    assert "deprecationMessage" in schema["properties"]["fp8_config"]["properties"]["amax_history_length"]
    fsdp = schema["properties"]["fsdp_config"]["properties"]
    assert "FSDP_OFFLOAD_PARAMS" in fsdp["fsdp_offload_params"]["markdownDescription"]
    assert schema["$id"] == "urn:accelconf:schema:accelerate-config:1.15"  # a name, not an invented address


def test_schema_follows_the_version():
    old = accelerate_schema("1.10")
    assert (
        "parallelism_config" in old["properties"]
        and "fsdp_activation_checkpointing_offload" not in old["properties"]["fsdp_config"]["properties"]
    )
    older = accelerate_schema("0.30")
    assert "parallelism_config" not in older["properties"] and "fp8_config" not in older["properties"]
    assert accelerate_schema("1.12")["properties"].get("ipex_config") is not None


def _yaml12(node):
    if node.kind == "scalar":
        return node.value12
    if node.kind == "seq":
        return [_yaml12(i) for i in node.items]
    return {_yaml12(k): _yaml12(v) for k, v in node.pairs}


def test_schema_flags_only_files_that_validate_also_flags():
    files = corpus_files("accelerate")
    if not files:
        pytest.skip("shared corpus not found")
    validator = jsonschema.Draft7Validator(json.loads((SCHEMAS / "accelerate-config.schema.json").read_text()))
    for path in files:
        doc = load_file(path)
        for data in (doc.data, _yaml12(doc.root)):  # as accelerate reads it, and as a YAML 1.2 editor does
            errors = list(validator.iter_errors(data))
            if errors:
                serious = [f for f in validate_document(doc) if f.severity in ("error", "warning")]
                assert serious, f"{path.name}: schema says {errors[0].message}, validate finds nothing"
