"""The lax-mode table of tests/unit/deepspeed/test_values.py is what pydantic v2 does (the pydantic
DeepSpeed's config models run on: ``DeepSpeedConfigModel`` sets no strict mode)."""

from __future__ import annotations

import math
from typing import Any

import pytest

from tests.unit.deepspeed.test_values import TABLE, X


def _pydantic(kind: type, value: Any) -> Any:
    pydantic = pytest.importorskip("pydantic", reason="pydantic comes with DeepSpeed (the test extras)")
    try:
        return pydantic.TypeAdapter(kind).validate_python(value)
    except pydantic.ValidationError:
        return X


@pytest.mark.oracle
@pytest.mark.parametrize("row", TABLE, ids=[f"row{i}-{type(r[0]).__name__}" for i, r in enumerate(TABLE)])
def test_the_table_is_what_pydantic_makes_of_each_value(row: tuple[Any, Any, Any, Any]) -> None:
    value, *expected = row
    got = [_pydantic(kind, value) for kind in (bool, int, float)]
    for want, have in zip(expected, got):
        if isinstance(want, float) and math.isnan(want):
            assert isinstance(have, float) and math.isnan(have)
        else:
            assert (want, type(want)) == (have, type(have)), (value, expected, got)


@pytest.mark.oracle
def test_deepspeed_config_models_are_lax() -> None:
    """DeepSpeed's own base model, on a bool and an int field: the same lax mode."""
    pytest.importorskip("deepspeed", reason="DeepSpeed is in the test extras")
    from deepspeed.runtime.zero.config import DeepSpeedZeroConfig

    z = DeepSpeedZeroConfig(stage="3", contiguous_gradients="YES", reduce_bucket_size="1_0.0")
    assert (z.stage, z.contiguous_gradients, z.reduce_bucket_size) == (3, True, 10)
    for bad in ({"contiguous_gradients": " yes"}, {"reduce_bucket_size": "1e3"}, {"stage": "\u0663"}):
        with pytest.raises(Exception, match="validation error"):
            DeepSpeedZeroConfig(**bad)
