"""The model of Hugging Face Trainer / TRL arguments, wherever they are given.

A :class:`TrainerArgs` holds every argument a file gives (an arguments YAML/JSON, the arguments
after the training script on a launch line, a ``TrainingArguments(...)`` / ``SFTConfig(...)`` call,
the TrainingArguments-like fields of a LLaMA-Factory or axolotl YAML, a ``fsdp_config`` JSON), each
as an :class:`Arg` with its 1-based position, its value as transformers receives it (PyYAML
``safe_load`` for a file, the raw string for a command-line word, the literal for Python), and
where it came from. :func:`accelconf.trainer.read.read_args` is the one entry: it picks the reader by the file's kind.
Nothing here imports transformers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# Where an argument's value came from: a file format, a command line, a Python call or a framework.
Source = str  # "yaml" | "json" | "cli" | "python" | "llama-factory" | "axolotl"


@dataclass(frozen=True)
class Arg:
    """One given argument: ``name`` as written (a command-line flag without its dashes, ``no_x``
    resolved to ``x``), ``value`` as the parser receives it, the 1-based start of the name
    (``line``/``column``) and the exclusive end of the value (``end_line``/``end_column``),
    the text as written and the source kind. ``value_line``/``value_column`` locate the value."""

    name: str
    value: Any
    line: int
    column: int
    end_line: int
    end_column: int
    raw_text: str
    source: Source
    value_line: int = 0
    value_column: int = 0
    # A command-line word is a string until HfArgumentParser types it; a file's value is typed.
    typed: bool = True
    # The keys of a mapping value (an inline ``fsdp_config``), each with its own position.
    children: tuple[Arg, ...] = ()

    def child(self, name: str) -> Arg | None:
        for c in reversed(self.children):
            if c.name == name:
                return c
        return None

    @property
    def value_position(self) -> tuple[int, int]:
        return (self.value_line or self.line, self.value_column or self.column)


@dataclass
class TrainerArgs:
    """The arguments one file (or one launch line, or one call) gives, in order.

    ``kind`` is the recogniser's kind (``trainer-args``, ``llama-factory``, ``axolotl``,
    ``fsdp-config``, ``other-launch``, ``launch``, ``python``, ``other-python``); ``group`` says which
    launch or call of the file they belong to (``""`` for a file of arguments); ``cls`` is the
    arguments class when the file names it (``SFTConfig``); ``references`` are the files they name
    (DeepSpeed JSON, ``fsdp_config``, accelerate config); ``launcher`` is what a launch line gives
    the launcher (``accelerate launch --config_file X``: ``{"config_file": "X"}``) and ``env`` the
    environment variables the script sets for it; ``ignored`` are keys of a framework YAML that are
    the framework's own (not TrainingArguments fields)."""

    path: str
    kind: str
    args: list[Arg] = field(default_factory=list)
    references: list[Any] = field(default_factory=list)
    group: str = ""
    cls: str = ""
    launcher: dict[str, Arg] = field(default_factory=dict)
    env: dict[str, Arg] = field(default_factory=dict)
    ignored: list[Arg] = field(default_factory=list)
    notes: list[Any] = field(default_factory=list)
    line: int = 1
    column: int = 1

    def get(self, name: str) -> Arg | None:
        """The last argument given under ``name`` (the one the parser keeps)."""
        for a in reversed(self.args):
            if a.name == name:
                return a
        return None

    def value(self, name: str, default: Any = None) -> Any:
        a = self.get(name)
        return default if a is None else a.value

    def names(self) -> list[str]:
        return [a.name for a in self.args]


__all__ = ["Arg", "Source", "TrainerArgs"]
