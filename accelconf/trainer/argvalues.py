"""The values of ``TrainingArguments`` fields as what runs reads them: given in the arguments (typed
as ``HfArgumentParser`` types a command-line word), else the dataclass default of the transformers
release (from :mod:`accelconf.trainer.releases`, the one table of fields)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from accelconf.records import Record
from accelconf.trainer import releases
from accelconf.trainer.args import TrainerArgs

# The fields the Accelerator, the FSDP plugin and the DeepSpeed fill read.
READ = (
    "per_device_train_batch_size",
    "gradient_accumulation_steps",
    "max_grad_norm",
    "learning_rate",
    "adam_beta1",
    "adam_beta2",
    "adam_epsilon",
    "weight_decay",
    "fp16",
    "bf16",
    "fp16_full_eval",
    "bf16_full_eval",
    "warmup_steps",
    "warmup_ratio",
    "fp16_backend",
    "fp16_opt_level",
    "save_on_each_node",
    "fsdp",
    "fsdp_config",
    "deepspeed",
    "accelerator_config",
    "activation_checkpointing",
    "gradient_checkpointing",
    "auto_find_batch_size",
    "max_steps",
    "num_train_epochs",
)


def defaults(version: str | None = None) -> dict[str, Any]:
    """The release's defaults of the fields what runs reads."""
    fields = releases.fields(version)
    return {name: fields[name].default for name in READ if name in fields}


def _cli_value(raw: Any, type_: str) -> Any:
    """A command-line word as ``HfArgumentParser`` types it (a bare flag of a bool field is ``True``)."""
    if not isinstance(raw, str):
        return raw
    base = type_.removeprefix("optional-")
    try:
        if base == "bool":
            return raw.lower() in ("", "yes", "true", "t", "y", "1")
        if base == "int":
            return int(raw)
        if base == "float":
            return float(raw)
        if base == "dict" and raw.lstrip().startswith("{"):
            return json.loads(raw)
    except ValueError:
        return raw  # a value the parser refuses is validate's finding; shown as written
    return raw


class ArgValues(Record):
    """Field name -> value as the arguments give them, with where each was written (``file:line:col``)."""

    _fields = ("values", "where", "source", "version")

    def __init__(
        self,
        values: Mapping[str, Any],
        where: Mapping[str, str] | None = None,
        source: str = "",
        version: str | None = None,
    ) -> None:
        self.values = values
        self.where: Mapping[str, str] = {} if where is None else where
        self.source = source  # the arguments file, for rows of defaults
        self.version = version  # transformers release (default: the installed one, else the newest known)
        self._defaults = defaults(self.version)

    def get(self, name: str) -> Any:
        return self.values[name] if name in self.values else self._defaults.get(name)

    def given(self, name: str) -> bool:
        return name in self.values

    def origin(self, name: str) -> tuple[str, str]:
        """(source, where) of a field: ``argument`` at its line, or ``argument default``."""
        if name in self.values:
            return "argument", self.where.get(name) or f"{self.source or 'arguments'}: {name}"
        return "argument default", f"TrainingArguments.{name}"


def from_trainer_args(group: TrainerArgs, version: str | None = None) -> ArgValues:
    """The values of a group of read arguments (the last of a repeated name wins, as the parser keeps it)."""
    types = {n: f.type for n, f in releases.fields(version).items()}
    values: dict[str, Any] = {}
    where: dict[str, str] = {}
    for a in group.args:
        values[a.name] = a.value if a.typed else _cli_value(a.value, types.get(a.name, "str"))
        where[a.name] = f"{group.path}:{a.line}:{a.column}"
    return ArgValues(values, where, group.path, version)
