"""The values a Python script gives that can be read without running it: literals, accelerate and
torch enum members, torch dtypes, ``dict(...)`` and calls of torch FSDP policy classes.

The kwargs reader (:mod:`accelconf.formats.kwargs`) and the Trainer arguments reader
(:mod:`accelconf.trainer.read`) both evaluate a keyword's value here; it needs only the names table
(:mod:`accelconf.formats.pynames`), not the accelerate launcher the kwargs writer uses.
"""

from __future__ import annotations

import ast
from typing import Any

from accelconf.formats import pynames
from accelconf.records import FrozenRecord


def _call_name(node: ast.Call) -> str:
    f = node.func
    if isinstance(f, ast.Name):
        return f.id
    if isinstance(f, ast.Attribute):
        return f.attr
    return ""


class _Member(FrozenRecord):
    """A torch enum member: ``ShardingStrategy.FULL_SHARD`` (any dotted prefix)."""

    _fields = ("enum", "name", "number")
    enum: str
    name: str
    number: int

    def __init__(self, enum: str, name: str, number: int) -> None:
        self._set(enum=enum, name=name, number=number)


class _Dtype(FrozenRecord):
    """``torch.bfloat16`` and friends, by the dtype they name (``torch.half`` is ``float16``)."""

    _fields = ("name",)
    name: str

    def __init__(self, name: str) -> None:
        self._set(name=name)


class _Call(FrozenRecord):
    """A call of a torch FSDP policy class with readable keyword arguments: ``MixedPrecision(...)``."""

    _fields = ("cls", "kwargs")
    cls: str
    kwargs: tuple[tuple[str, Any], ...]

    def __init__(self, cls: str, kwargs: tuple[tuple[str, Any], ...]) -> None:
        self._set(cls=cls, kwargs=kwargs)

    def get(self, name: str) -> Any:
        return dict(self.kwargs).get(name, pynames.TORCH_CALLS[self.cls].get(name))


class _NotRead(Exception):
    """A value the reader cannot know without running the script."""


def _dotted(node: ast.AST) -> list[str]:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.insert(0, node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        raise _NotRead
    return [node.id, *parts]


def _evaluate(node: ast.AST) -> Any:
    """A literal, an accelerate or torch enum member, a torch dtype, ``dict(...)``/``{...}`` of those, or a call of a
    torch FSDP policy class; raises :class:`_NotRead` for anything else (the script is never run)."""
    try:
        return ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError):
        pass
    if isinstance(node, ast.Attribute):
        parts = _dotted(node)
        members = pynames.TORCH_ENUMS.get(parts[-2], {}) if len(parts) >= 2 else {}
        if parts[-1] in members:
            return _Member(parts[-2], parts[-1], members[parts[-1]])
        values = pynames.ACCELERATE_ENUMS.get(parts[-2], {}) if len(parts) >= 2 else {}
        if parts[-1] in values:
            return values[parts[-1]]  # a str enum: accelerate reads the member as its string
        if parts[:-1] == ["torch"] and parts[-1] in pynames.TORCH_DTYPES:
            return _Dtype(pynames.TORCH_DTYPES[parts[-1]])
    elif isinstance(node, ast.Dict) and all(isinstance(k, ast.Constant) for k in node.keys):
        return {k.value: _evaluate(v) for k, v in zip(node.keys, node.values) if isinstance(k, ast.Constant)}
    elif isinstance(node, ast.Call) and not node.args:
        name = _call_name(node)
        values = {k.arg: _evaluate(k.value) for k in node.keywords if k.arg is not None}
        if len(values) < len(node.keywords):
            raise _NotRead  # `**options`
        if name == "dict":
            return values
        if name in pynames.TORCH_CALLS and set(values) <= set(pynames.TORCH_CALLS[name]):
            return _Call(name, tuple(values.items()))
    raise _NotRead
