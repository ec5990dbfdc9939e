"""``fsdp_transformer_layer_cls_to_wrap`` against the model: ``check --model DIR`` and the language
server's ``accelconf.model`` (:mod:`accelconf.environment.wrapclass`), with the generated layer data
compared with the installed transformers and the verdicts with accelerate's own lookup."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from accelconf.accelerate.fmt import apply_edits
from accelconf.api import check_document
from accelconf.assist import memhint
from accelconf.cli import main
from accelconf.environment.wrapclass import ModelClasses, model_classes, wrap_findings
from accelconf.text.document import load_text
from tests.unit.environment.test_check import INSTALLED

QWEN2 = {
    "architectures": ["Qwen2ForCausalLM"],
    "model_type": "qwen2",
    "hidden_size": 896,
    "intermediate_size": 4864,
    "num_attention_heads": 14,
    "num_hidden_layers": 24,
    "num_key_value_heads": 2,
    "vocab_size": 151936,
    "tie_word_embeddings": True,
    "torch_dtype": "bfloat16",
}
LLAVA = {
    "model_type": "llava",
    "text_config": {"model_type": "qwen2"},
    "vision_config": {"model_type": "clip_vision_model"},
}


def fsdp(classes: str, policy: str = "TRANSFORMER_BASED_WRAP") -> str:
    return (
        f"distributed_type: FSDP\nnum_processes: 2\nmixed_precision: bf16\nfsdp_config:\n"
        f"  fsdp_auto_wrap_policy: {policy}\n  fsdp_transformer_layer_cls_to_wrap: '{classes}'\n"
        "  fsdp_sharding_strategy: FULL_SHARD\n"
    )


def verdict(
    classes: str, config: dict | None = None, policy: str = "TRANSFORMER_BASED_WRAP"
) -> list[tuple[str, str | None]]:
    found = wrap_findings(load_text(fsdp(classes, policy), "c.yaml"), ModelClasses(config or QWEN2))
    return [(f.severity, f.suggestion) for f in found]


def test_check_model_errors_on_a_wrap_class_the_model_lacks_and_suggests_its_layer(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = tmp_path / "qwen"
    model.mkdir()
    (model / "config.json").write_text(json.dumps(QWEN2))
    cfg = tmp_path / "c.yaml"
    cfg.write_text(fsdp("LlamaDecoderLayer"))
    assert main(["check", "--model", str(model), "--gpus", "2", "--gpu", "H100", "--format", "json", str(cfg)]) == 1
    [f] = [f for f in json.loads(capsys.readouterr().out)["files"][0]["findings"] if f["rule"] == "model-wrap-class"]
    assert (f["severity"], f["line"], f["suggestion"]) == ("error", 6, "Qwen2DecoderLayer")
    assert "Could not find the transformer layer class LlamaDecoderLayer in the model." in f["message"]
    cfg.write_text(fsdp("Qwen2DecoderLayer"))
    assert main(["check", "--model", str(model), "--gpus", "2", "--gpu", "H100", str(cfg)]) == 0


def test_the_wrap_list_is_split_on_commas_without_trimming_as_accelerate_does() -> None:
    assert verdict("Qwen2DecoderLayer,Qwen2MLP") == []  # any module class of the model, not only the layer
    assert verdict("Qwen2DecoderLayer, Qwen2MLP") == [("error", "Qwen2DecoderLayer,Qwen2MLP")]
    assert verdict("Qwen2MLP,LlamaDecoderLayer") == [("error", "Qwen2MLP,Qwen2DecoderLayer")]


def test_wrap_classes_of_a_composite_model_come_from_its_sub_configs() -> None:
    assert verdict("Qwen2DecoderLayer,CLIPEncoderLayer", LLAVA) == []
    [(severity, suggestion)] = verdict("LlamaDecoderLayer", LLAVA)
    assert (
        severity == "error" and "Qwen2DecoderLayer" in (suggestion or "") and "CLIPEncoderLayer" in (suggestion or "")
    )


def test_a_model_with_code_accelconf_does_not_know_gets_a_warning_not_an_error() -> None:
    assert verdict("LlamaDecoderLayer", {**QWEN2, "auto_map": {"AutoModel": "modeling_x.XModel"}})[0][0] == "warning"
    untyped = {"model_type": "llava", "text_config": {"model_type": "qwen2"}, "vision_config": {"hidden_size": 8}}
    assert verdict("LlamaDecoderLayer", untyped)[0][0] == "warning"
    assert verdict("LlamaDecoderLayer", {"model_type": "a-model-type-nobody-has"}) == []
    assert verdict("Linear")[0][0] == "warning"  # torch's: a module of any model, not in the data
    quantized = {**QWEN2, "quantization_config": {"quant_method": "awq", "bits": 4}}
    assert verdict("LlamaDecoderLayer", quantized)[0][0] == "error"  # not a sub-model: still sure


def test_the_wrap_class_is_only_checked_under_transformer_based_wrap() -> None:
    assert verdict("LlamaDecoderLayer", policy="SIZE_BASED_WRAP") == []
    assert verdict("LlamaDecoderLayer", policy="transformer_based_wrap")[0][0] == "error"
    assert wrap_findings(load_text(fsdp("LlamaDecoderLayer"), "c.yaml"), None) == []


def test_the_wrap_class_fix_validates_clean_and_removes_the_finding() -> None:
    from accelconf.api import check_document

    classes = ModelClasses(QWEN2)
    for bad in ("LlamaDecoderLayer", "Qwen2DecoderLayer, Qwen2MLP"):
        doc = load_text(fsdp(bad), "c.yaml")
        [f] = wrap_findings(doc, classes)
        fixed = load_text(apply_edits(doc.text, list(f.fix)), "c.yaml")
        assert wrap_findings(fixed, classes) == []
        assert [g for g in check_document(fixed, INSTALLED) if g.severity == "error"] == []


def test_language_server_model_setting_adds_the_wrap_class_finding(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text(json.dumps(QWEN2))
    mem, problems = memhint.from_settings({"accelconf": {"model": str(tmp_path)}})
    assert mem is not None and not problems
    doc = load_text(fsdp("LlamaDecoderLayer"), "train.yaml")
    assert [f.rule for f in check_document(doc, None, memory=mem) if f.rule == "model-wrap-class"] == [
        "model-wrap-class"
    ]
    assert [
        f for f in check_document(doc, None, memory=mem, disabled=("model-wrap-class",)) if f.rule == "model-wrap-class"
    ] == []
    assert model_classes(str(tmp_path / "nowhere")) is None
