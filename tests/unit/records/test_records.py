"""The value classes that replaced dataclasses on the start-up path keep what the dataclasses gave:
every field in ``__init__`` is a compared field (and back), equality and hashing as before, frozen
where they were frozen."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest

import accelconf
from accelconf.findings import Finding
from accelconf.records import FrozenRecord, Record
from accelconf.text.nodes import Node


def _record_classes() -> list[type[Record]]:
    for info in pkgutil.walk_packages(accelconf.__path__, "accelconf."):
        if not info.name.endswith(("__main__", "preflight.rank", "preflight.node")):
            importlib.import_module(info.name)
    seen: list[type[Record]] = []
    todo = list(Record.__subclasses__())
    while todo:
        cls = todo.pop()
        todo += cls.__subclasses__()
        if cls is not FrozenRecord and cls.__module__.startswith("accelconf."):
            seen.append(cls)
    return sorted(seen, key=lambda c: f"{c.__module__}.{c.__qualname__}")


RECORDS = _record_classes()


def test_the_scan_finds_the_records() -> None:
    names = {c.__qualname__ for c in RECORDS}
    assert {"Config", "Entry", "Document", "Node", "Arg", "Field", "Row"} <= names


@pytest.mark.parametrize("cls", RECORDS, ids=lambda c: f"{c.__module__}.{c.__qualname__}")
def test_a_records_fields_are_its_init_parameters_in_order(cls: type[Record]) -> None:
    params = list(inspect.signature(cls.__init__).parameters)[1:]
    assert list(cls._fields) == params


def test_records_compare_by_field_and_class_and_mutable_ones_are_unhashable() -> None:
    from accelconf.accelerate.model import Config, Entry

    assert Entry("a", 1) == Entry("a", 1) and Entry("a", 1) != Entry("a", 2)
    assert Config() == Config() and Config(source="x") != Config()
    assert Entry("a", 1) != Config()  # another class is never equal
    with pytest.raises(TypeError):
        hash(Entry("a", 1))
    assert repr(Entry("a", 1)).startswith("Entry(path='a', value=1, setting=None")


def test_nodes_compare_by_identity() -> None:
    a, b = Node("scalar", 0, 1, 0, 0, 0, 1), Node("scalar", 0, 1, 0, 0, 0, 1)
    assert a == a and a != b and len({a, b}) == 2


def test_a_frozen_record_is_hashed_by_value_refuses_assignment_and_replaces() -> None:
    from accelconf.trainer.args import Arg

    a = Arg("x", 1, 1, 1, 1, 2, "x: 1", "yaml")
    assert a == Arg("x", 1, 1, 1, 1, 2, "x: 1", "yaml") and len({a, Arg("x", 1, 1, 1, 1, 2, "x: 1", "yaml")}) == 1
    with pytest.raises(AttributeError):
        a.value = 2
    b = a.replace(value=2)
    assert (b.value, b.name, a.value) == (2, "x", 1)


def test_a_finding_compares_and_hashes_on_every_field_but_its_fix() -> None:
    f = Finding("r", "error", "m", "k", 1, 2, fix=((0, 1, "x"),))
    assert f == Finding("r", "error", "m", "k", 1, 2) and hash(f) == hash(Finding("r", "error", "m", "k", 1, 2))
    assert f != f.replace(line=3) and f.replace(path="p").path == "p" and f.replace(path="p").fix == f.fix
    with pytest.raises(AttributeError):
        f.line = 3
    assert f.to_json() == {
        "rule": "r", "severity": "error", "message": "m", "key": "k", "line": 1, "column": 2,
        "suggestion": None, "end_line": 0, "end_column": 0,
    }  # fmt: skip
    with pytest.raises(ValueError, match="severity"):
        Finding("r", "fatal", "m")  # type: ignore[arg-type]
