"""DeepSpeed's dynamic loss scaler refuses a non-positive window or minimum: each key on its own.

With ``fp16.enabled`` and ``loss_scale: 0`` (dynamic), DeepSpeed's ``DynamicLossScaler`` needs
``loss_scale_window`` and ``min_loss_scale`` above 0. Each key is tried alone at 0, below 0 and at
1, and with a static scale (where neither is read): a rule that checks only one of the two keys,
or reports the other key's name, fails for the key concerned.
"""

from __future__ import annotations

import json

import pytest
from packaging.version import Version

from accelconf import releases
from accelconf.api import validate_any
from accelconf.text.document import load_text

KEYS = ("loss_scale_window", "min_loss_scale")
# a release where DeepSpeed checks both keys (not whatever DeepSpeed is installed)
CHECKED = max(
    (releases.DEEPSPEED_SINCE[r] for r in ("ds-dynamic-scaling-checked", "ds-loss-scale-window-refused")), key=Version
)


def _found(fp16: dict) -> list[tuple[str, str]]:
    text = json.dumps({"train_micro_batch_size_per_gpu": 1, "fp16": {"enabled": True, **fp16}}, indent=2)
    doc = load_text(text, "ds_config.json")
    return [
        (f.rule, f.key)
        for f in validate_any(doc, runtime="deepspeed", deepspeed_version=CHECKED)
        if f.rule == "ds-fp16-scaling"
    ]


@pytest.mark.parametrize("key", KEYS)
@pytest.mark.parametrize("value", [0, -1, -0.5])
def test_a_non_positive_value_is_reported_at_its_key(key: str, value: float) -> None:
    assert _found({"loss_scale": 0, key: value}) == [("ds-fp16-scaling", f"fp16.{key}")]


@pytest.mark.parametrize("key", KEYS)
def test_a_positive_value_or_a_static_scale_is_fine(key: str) -> None:
    assert _found({"loss_scale": 0, key: 1}) == []
    assert _found({"loss_scale": 128, key: 0}) == []


def test_both_keys_wrong_give_two_findings() -> None:
    assert sorted(_found({"loss_scale": 0, "loss_scale_window": 0, "min_loss_scale": 0})) == [
        ("ds-fp16-scaling", "fp16.loss_scale_window"),
        ("ds-fp16-scaling", "fp16.min_loss_scale"),
    ]
