"""Value completion in a DeepSpeed JSON offers every value the key tree allows, for every key.

Each leaf of the DeepSpeed key tree (accelconf.deepspeed) is completed after ``"key": `` at its
place in a JSON document: its enum values, ``true``/``false`` for a boolean, and ``"auto"`` when a
filler replaces ``"auto"`` there, and nothing else. A completion list that drops one of them (or
offers ``"auto"`` where nothing fills it) fails for the key concerned.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from accelconf import assist
from accelconf import deepspeed as dsmod


def _leaves(node: Any, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], Any]]:
    out = []
    for name, k in (node.children or {}).items():
        if k.removed:
            continue
        if k.children is not None:
            out += _leaves(k, path + (name,))
        else:
            out.append((path + (name,), k))
    return out


LEAVES = _leaves(dsmod.TOP)


def _expected(k: Any) -> set[str]:
    want: set[str] = set()
    if k.enum:
        want |= {json.dumps(v) for v in k.enum}
    elif k.type == "boolean" or (isinstance(k.type, tuple) and "boolean" in k.type):
        want |= {"true", "false"}
    if k.auto:
        want.add('"auto"')
    return want


def _complete_at(path: tuple[str, ...]) -> set[str]:
    text = '{"train_batch_size": 8, ' + "".join(f'"{p}": {{' for p in path[:-1]) + f'"{path[-1]}": '
    line, col = 0, len(text)
    text += "}" * len(path) + "}"
    return {c.label for c in assist.complete(text, line, col, path="ds_config.json", kind="deepspeed")}


def test_the_tree_has_auto_enum_and_boolean_leaves() -> None:
    assert any(k.auto for _, k in LEAVES) and any(k.enum for _, k in LEAVES)
    assert any(_expected(k) == {"true", "false"} for _, k in LEAVES)


WITH_VALUES = [p for p in LEAVES if _expected(p[1])]


@pytest.mark.parametrize("path, k", WITH_VALUES, ids=[".".join(p) for p, _ in WITH_VALUES])
def test_value_completion_offers_exactly_the_allowed_values(path: tuple[str, ...], k: Any) -> None:
    assert _complete_at(path) == _expected(k), ".".join(path)
