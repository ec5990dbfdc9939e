"""The values of ``TrainingArguments`` fields as what runs reads them: given in the arguments, else the
dataclass default of the transformers release.

The defaults are transformers 5.24.0's ``TrainingArguments`` field defaults, only those the
Accelerator, the FSDP plugin and the DeepSpeed fill read; ``tests/test_trainer_runs_oracle.py``
compares them with the installed transformers.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

DEFAULTS: dict[str, Any] = {
    "per_device_train_batch_size": 8,
    "gradient_accumulation_steps": 1,
    "max_grad_norm": 1.0,
    "learning_rate": 5e-05,
    "adam_beta1": 0.9,
    "adam_beta2": 0.999,
    "adam_epsilon": 1e-08,
    "weight_decay": 0.0,
    "fp16": False,
    "bf16": False,
    "fp16_full_eval": False,
    "bf16_full_eval": False,
    "warmup_steps": 0,
    "save_on_each_node": False,
    "fsdp": None,
    "fsdp_config": None,
    "deepspeed": None,
    "accelerator_config": None,
    "activation_checkpointing": None,
    "gradient_checkpointing": None,
    "auto_find_batch_size": False,
    "max_steps": -1,
    "num_train_epochs": 3.0,
}


@dataclass
class ArgValues:
    """Field name -> value as the arguments give them, with where each was written (``file:line``)."""

    values: Mapping[str, Any]
    where: Mapping[str, str] = field(default_factory=dict)
    source: str = ""  # the arguments file, for rows of defaults

    def get(self, name: str) -> Any:
        return self.values[name] if name in self.values else DEFAULTS.get(name)

    def given(self, name: str) -> bool:
        return name in self.values

    def origin(self, name: str) -> tuple[str, str]:
        """(source, where) of a field: ``argument`` at its line, or ``argument default``."""
        if name in self.values:
            return "argument", self.where.get(name) or f"{self.source or 'arguments'}: {name}"
        return "argument default", f"TrainingArguments.{name}"
