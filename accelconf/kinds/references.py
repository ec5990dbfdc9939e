"""The DeepSpeed JSON and accelerate config files a file names, and where they are.

A Trainer arguments file (``deepspeed: ds.json``, ``fsdp_config: fsdp.json``), a LLaMA-Factory or
axolotl YAML, TRL's ``accelerate_config:`` and a launch script (``--deepspeed ds.json``,
``--config_file accel.yaml``) point at files accelconf can check even when it cannot check the file
that names them. Only values that are plainly file names count: a shell variable (``$DS_CONFIG``),
a preset name (``zero3``) or an inline mapping is not judged.
"""

from __future__ import annotations

import os
import re

from accelconf.records import FrozenRecord
from accelconf.text.document import Document
from accelconf.text.paths import candidates

# The key (or flag, without its dashes) that names a file, and what that file is by being named so.
REFERENCE_KEYS: dict[str, str] = {
    "deepspeed": "deepspeed",
    "deepspeed_config": "deepspeed",
    "deepspeed_config_file": "deepspeed",
    "fsdp_config": "fsdp",
    "accelerate_config": "accelerate",
    "config_file": "accelerate",
}
_FILE_NAME = re.compile(r"^[^\s$`{}<>|]+\.(?:json|ya?ml)$", re.I)
_FLAG = re.compile(
    r"--({})(?:=|[ \t]+)(?:\\\n\s*)?(?!-)(\"[^\"\n]*\"|'[^'\n]*'|[^\s;&|]+)".format(
        "|".join(sorted(REFERENCE_KEYS, key=len, reverse=True))
    )
)
# A keyword argument of a Python call: TrainingArguments(deepspeed="ds.json"), SFTConfig(fsdp_config=...).
_KWARG = re.compile(
    r"\b({})\s*=\s*(\"[^\"\n]*\"|'[^'\n]*')".format("|".join(sorted(REFERENCE_KEYS, key=len, reverse=True)))
)


class Reference(FrozenRecord):
    """A file named by ``key`` as ``value`` (1-based ``line``/``column`` of the value); ``role`` is
    what a file named so is (``deepspeed``, ``fsdp`` or ``accelerate``)."""

    _fields = ("key", "value", "line", "column", "role")
    key: str
    value: str
    line: int
    column: int
    role: str

    def __init__(self, key: str, value: str, line: int, column: int, role: str) -> None:
        self._set(key=key, value=value, line=line, column=column, role=role)


def in_document(doc: Document) -> list[Reference]:
    """The file names a YAML/JSON document gives under :data:`REFERENCE_KEYS`, at any depth."""
    out = []
    for path, node, keynode in doc.scalars():
        key = path[-1] if path and keynode is not None else None
        if not isinstance(key, str) or key not in REFERENCE_KEYS or not isinstance(node.value, str):
            continue
        if _FILE_NAME.match(node.value.strip()):
            out.append(Reference(key, node.value.strip(), node.line + 1, node.col + 1, REFERENCE_KEYS[key]))
    return out


def in_script(text: str) -> list[Reference]:
    """The file names a launch script passes to ``--deepspeed``, ``--fsdp_config``, ``--config_file``...,
    or a Python script as a keyword argument (``TrainingArguments(deepspeed="ds.json")``)."""
    out = []
    for m in sorted([*_FLAG.finditer(text), *_KWARG.finditer(text)], key=lambda m: m.start()):
        value = m.group(2).strip("\"'")
        if not _FILE_NAME.match(value):
            continue
        at = m.start(2)
        line = text.count("\n", 0, at) + 1
        out.append(
            Reference(m.group(1), value, line, at - (text.rfind("\n", 0, at) + 1) + 1, REFERENCE_KEYS[m.group(1)])
        )
    return out


def locate(value: str, referrer: str) -> str | None:
    """Where a named file is (:func:`accelconf.text.paths.candidates`: beside the file that names it,
    then in the working directory, where the launcher and the Trainer open it); ``None`` when
    neither has it. Returned relative to the working directory when it is under it."""
    if os.path.isabs(value):
        return value if os.path.exists(value) else None
    for candidate in candidates(value, referrer):
        if os.path.exists(candidate):
            full = os.path.abspath(candidate)
            return os.path.relpath(full) if _under_cwd(full) else full
    return None


def _under_cwd(full: str) -> bool:
    return not os.path.relpath(full).startswith("..")


__all__ = ["REFERENCE_KEYS", "Reference", "in_document", "in_script", "locate"]
