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

from typing import Any

from accelconf.records import FrozenRecord, Record

# Where an argument's value came from: a file format, a command line, a Python call or a framework.
Source = str  # "yaml" | "json" | "cli" | "python" | "llama-factory" | "axolotl"


class Arg(FrozenRecord):
    """One given argument: ``name`` as written (a command-line flag without its dashes, ``no_x``
    resolved to ``x``), ``value`` as the parser receives it, the 1-based start of the name
    (``line``/``column``) and the exclusive end of the value (``end_line``/``end_column``),
    the text as written and the source kind. ``value_line``/``value_column`` locate the value."""

    _fields = (
        "name", "value", "line", "column", "end_line", "end_column", "raw_text", "source",
        "value_line", "value_column", "typed", "children",
    )  # fmt: skip
    name: str
    value: Any
    line: int
    column: int
    end_line: int
    end_column: int
    raw_text: str
    source: Source
    value_line: int
    value_column: int
    typed: bool
    children: tuple[Arg, ...]

    def __init__(
        self,
        name: str,
        value: Any,
        line: int,
        column: int,
        end_line: int,
        end_column: int,
        raw_text: str,
        source: Source,
        value_line: int = 0,
        value_column: int = 0,
        typed: bool = True,
        children: tuple[Arg, ...] = (),
    ) -> None:
        self._set(name=name, value=value, line=line, column=column, end_line=end_line, end_column=end_column)
        self._set(raw_text=raw_text, source=source, value_line=value_line, value_column=value_column)
        # A command-line word is a string until HfArgumentParser types it; a file's value is typed.
        # ``children``: the keys of a mapping value (an inline ``fsdp_config``), each with its position.
        self._set(typed=typed, children=children)

    def child(self, name: str) -> Arg | None:
        for c in reversed(self.children):
            if c.name == name:
                return c
        return None

    @property
    def value_position(self) -> tuple[int, int]:
        return (self.value_line or self.line, self.value_column or self.column)


class TrainerArgs(Record):
    """The arguments one file (or one launch line, or one call) gives, in order.

    ``kind`` is the recogniser's kind (``trainer-args``, ``llama-factory``, ``axolotl``,
    ``fsdp-config``, ``other-launch``, ``launch``, ``python``, ``other-python``); ``group`` says which
    launch or call of the file they belong to (``""`` for a file of arguments); ``cls`` is the
    arguments class when the file names it (``SFTConfig``); ``references`` are the files they name
    (DeepSpeed JSON, ``fsdp_config``, accelerate config); ``launcher`` is what a launch line gives
    the launcher (``accelerate launch --config_file X``: ``{"config_file": "X"}``) and ``env`` the
    environment variables the script sets for it; ``ignored`` are keys of a framework YAML that are
    the framework's own (not TrainingArguments fields)."""

    _fields = (
        "path", "kind", "args", "references", "group", "cls", "launcher", "env", "ignored", "notes", "line", "column",
    )  # fmt: skip

    def __init__(
        self,
        path: str,
        kind: str,
        args: list[Arg] | None = None,
        references: list[Any] | None = None,
        group: str = "",
        cls: str = "",
        launcher: dict[str, Arg] | None = None,
        env: dict[str, Arg] | None = None,
        ignored: list[Arg] | None = None,
        notes: list[Any] | None = None,
        line: int = 1,
        column: int = 1,
    ) -> None:
        self.path, self.kind, self.group, self.cls, self.line, self.column = path, kind, group, cls, line, column
        self.args: list[Arg] = [] if args is None else args
        self.references: list[Any] = [] if references is None else references
        self.launcher: dict[str, Arg] = {} if launcher is None else launcher
        self.env: dict[str, Arg] = {} if env is None else env
        self.ignored: list[Arg] = [] if ignored is None else ignored
        self.notes: list[Any] = [] if notes is None else notes

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
