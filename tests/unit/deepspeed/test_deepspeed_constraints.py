"""Every constraint the DeepSpeed key table documents is enforced by a rule.

Two kinds: the structured ones (``minimum``/``maximum`` and their exclusive forms, ``enum``), each
violated once by a generated config, and the ones stated in a key's doc text (``> 0``, ``needs``,
``must``...), each of which needs a case in :data:`STATED` that triggers its rule. Documenting a
constraint without a rule that enforces it, or without a case here, fails a test.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from accelconf.deepspeed import keys, signatures
from accelconf.deepspeed.keys import Key, iter_keys
from accelconf.deepspeed.validate import validate_deepspeed
from accelconf.text.document import load_text

RANGE_RULES = {"ds-range", "ds-enum", "ds-batch", "ds-zero-stage"}
# a constraint stated in words (the parenthesis of "(> 0 from DeepSpeed 0.19.3)", "needs ZeRO stage 3")
_STATED = re.compile(
    r"(?:> ?0|>= ?\d|< ?\d|\bmust\b|\bneeds?\b|\brequires?\b|\bpositive\b|\bnon-negative\b|"
    r"\bonly (?:with|works)\b|\bstages? \d only\b)"
)

ZERO0 = {"zero_optimization": {"stage": 0}}
# dotted key -> (a config breaking what its doc states, the rule that reports it at that key)
STATED: dict[str, tuple[dict[str, Any], str]] = {
    "fp16.loss_scale_window": ({"fp16": {"enabled": True, "loss_scale_window": 0}}, "ds-fp16-scaling"),
    "fp16.min_loss_scale": ({"fp16": {"enabled": True, "min_loss_scale": 0}}, "ds-fp16-scaling"),
    "fp16.fp16_master_weights_and_grads": (
        {**ZERO0, "fp16": {"enabled": True, "fp16_master_weights_and_grads": True}},
        "ds-stage-requirement",
    ),
    "bf16.bf16_master_weights_and_grads": (
        {**ZERO0, "bf16": {"enabled": True, "bf16_master_weights_and_grads": True}},
        "ds-stage-requirement",
    ),
    "bf16.bf16_optimizer_states": (
        {"zero_optimization": {"stage": 2}, "bf16": {"enabled": True, "bf16_optimizer_states": True}},
        "ds-stage-requirement",
    ),
    "bfloat16.bf16_master_weights_and_grads": (
        {**ZERO0, "bfloat16": {"enabled": True, "bf16_master_weights_and_grads": True}},
        "ds-stage-requirement",
    ),
    "bfloat16.bf16_optimizer_states": (
        {"zero_optimization": {"stage": 2}, "bfloat16": {"enabled": True, "bf16_optimizer_states": True}},
        "ds-stage-requirement",
    ),
    "data_types.param_dtype": ({"data_types": {"param_dtype": "bf16"}}, "ds-data-types"),
    "zero_optimization.offload_param": (
        {"zero_optimization": {"stage": 2, "offload_param": {"device": "cpu"}}},
        "ds-offload-stage",
    ),
    "zero_optimization.offload_optimizer": (
        {"zero_optimization": {"stage": 2, "offload_optimizer": {"device": "nvme", "nvme_path": "/nvme"}}},
        "ds-offload-stage",
    ),
    "zero_optimization.offload_optimizer.device": (
        {"zero_optimization": {"stage": 3, "offload_optimizer": {"device": "nvme"}}},
        "ds-nvme-path",
    ),
    "zero_optimization.offload_param.device": (
        {"zero_optimization": {"stage": 3, "offload_param": {"device": "nvme"}}},
        "ds-nvme-path",
    ),
    "zero_optimization.offload_optimizer.ratio": (
        {"zero_optimization": {"stage": 2, "offload_optimizer": {"device": "cpu", "ratio": 0.5}}},
        "ds-offload-stage",
    ),
    "checkpoint.parallel_write.pipeline_stage": (
        {"checkpoint": {"parallel_write": {"pipeline_stage": "yes"}}},
        "ds-type",
    ),
}


def _live(path: str, k: Key) -> bool:
    return k.removed is None and not k.is_section or path in STATED


def _doc_texts(k: Key) -> str:
    return " ".join((k.doc,) + k.enum_docs)


def _nest(dotted: str, value: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    here = out
    parts = dotted.split(".")
    for p in parts[:-1]:
        here = here.setdefault(p, {})
    here[parts[-1]] = value
    return out


def _validate(cfg: dict[str, Any]) -> list[Any]:
    base = {"train_micro_batch_size_per_gpu": 1, "zero_optimization": {"stage": 1}}
    merged = {**base, **cfg}
    return validate_deepspeed(
        load_text(json.dumps(merged, indent=1), "ds.json", "json"), runtime="deepspeed", deepspeed_version=keys.NEWEST
    )


def _violations(k: Key) -> list[Any]:
    """One value breaking each structured bound of ``k``."""
    step = 1 if k.type == "integer" else 0.5
    out: list[Any] = []
    if k.minimum is not None:
        out.append(k.minimum - step)
    if k.exclusive_minimum is not None:
        out.append(k.exclusive_minimum)
    if k.maximum is not None:
        out.append(k.maximum + step)
    if k.exclusive_maximum is not None:
        out.append(k.exclusive_maximum)
    if k.enum and k.type == "string":
        out.append("no-such-choice")
    elif k.enum and all(isinstance(e, int) for e in k.enum):
        out.append(max(k.enum) + 7)
    return [int(v) if k.type == "integer" and float(v).is_integer() else v for v in out]


def _scheduler_for(dotted: str) -> dict[str, Any]:
    """A scheduler.params key comes with a DeepSpeed scheduler that takes it."""
    if not dotted.startswith("scheduler.params."):
        return {}
    name = dotted.rsplit(".", 1)[1]
    classes = signatures.load()["classes"]
    t = next(
        t
        for t in signatures.load()["deepspeed_schedulers"]
        if name in classes[f"deepspeed.runtime.lr_schedules.{t}"]["params"]
    )
    return {"type": t}


STRUCTURED = [(p, k) for p, k in iter_keys() if _live(p, k) and _violations(k) and p != "compile.passes"]


@pytest.mark.parametrize(("dotted", "key"), STRUCTURED, ids=[p for p, _ in STRUCTURED])
def test_every_documented_range_and_choice_has_a_rule_that_reports_it(dotted: str, key: Key) -> None:
    for value in _violations(key):
        cfg = _nest(dotted, value)
        if dotted.startswith("scheduler.params."):
            cfg["scheduler"].update(_scheduler_for(dotted))
        got = [
            f
            for f in _validate(cfg)
            if f.key == dotted and f.rule in RANGE_RULES and f.severity in ("error", "warning")
        ]
        assert got, f"{dotted}: {value!r} breaks what the key table documents, and no rule says so"


STATED_IN_DOCS = [p for p, k in iter_keys() if _live(p, k) and not _violations(k) and _STATED.search(_doc_texts(k))]


def test_every_constraint_stated_in_a_doc_has_a_case() -> None:
    """A doc that states a constraint the table cannot hold as a bound names a case in STATED."""
    assert set(STATED_IN_DOCS) <= set(STATED), sorted(set(STATED_IN_DOCS) - set(STATED))
    assert STATED_IN_DOCS, "the pattern finds the stated constraints"


@pytest.mark.parametrize("dotted", sorted(STATED))
def test_every_constraint_stated_in_a_doc_has_a_rule_that_reports_it(dotted: str) -> None:
    cfg, rule = STATED[dotted]
    got = [
        f for f in _validate(cfg) if f.rule == rule and f.key.startswith(dotted) and f.severity in ("error", "warning")
    ]
    assert got, f"{dotted}: {cfg} breaks what its doc says, and {rule} does not report it"


@pytest.mark.parametrize("scheduler", ["WarmupLR", "WarmupDecayLR", "WarmupCosineLR"])
def test_warmup_num_steps_0_is_an_error_from_deepspeed_0_19_3(scheduler: str) -> None:
    """WarmupLR and its kin raise "warmup_num_steps must be a positive integer" in deepspeed.initialize
    from DeepSpeed 0.19.3; 0.19.2 warmed up over max(2, warmup_num_steps) steps."""
    params: dict[str, Any] = {"warmup_num_steps": 0}
    if scheduler != "WarmupLR":
        params["total_num_steps"] = 100
    text = json.dumps({"train_micro_batch_size_per_gpu": 1, "scheduler": {"type": scheduler, "params": params}})

    def found(version: str) -> list[tuple[str, str]]:
        doc = load_text(text, "ds.json", "json")
        return [
            (f.rule, f.severity)
            for f in validate_deepspeed(doc, runtime="deepspeed", deepspeed_version=version)
            if f.key == "scheduler.params.warmup_num_steps"
        ]

    assert found("0.19.3") == found("0.19.8") == [("ds-range", "error")]
    assert found("0.19.2") == [("ds-range", "warning")]
