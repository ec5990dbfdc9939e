"""Trainer-argument rules at the edge of their numeric conditions, against what transformers does.

``Trainer.create_accelerator_and_postprocess`` raises ValueError when
``accelerator_config.gradient_accumulation_kwargs`` has ``num_steps`` and
``gradient_accumulation_steps`` is above 1: 1 is accepted, 2 is refused. A rule whose comparison
is off by one (refusing 1, or accepting 2) fails here.
"""

from __future__ import annotations

import pytest

from accelconf.api import validate_source

RULE = "trainer-accumulation-twice"


def _script(gas: int) -> str:
    return (
        "from transformers import TrainingArguments\n"
        "args = TrainingArguments(\n"
        '    output_dir="o",\n'
        f"    gradient_accumulation_steps={gas},\n"
        '    accelerator_config={"gradient_accumulation_kwargs": {"num_steps": 4}},\n'
        ")\n"
    )


@pytest.mark.parametrize("gas, refused", [(1, False), (2, True), (8, True)])
def test_num_steps_with_accumulation_above_one_is_refused_and_one_is_not(gas: int, refused: bool) -> None:
    found = [f for f in validate_source(_script(gas), "train.py") if f.rule == RULE]
    if refused:
        (f,) = found
        assert f.severity == "error" and "ValueError" in f.message
    else:
        assert found == []
