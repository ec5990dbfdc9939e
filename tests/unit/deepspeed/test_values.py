"""How DeepSpeed's pydantic models read a JSON value in lax mode, value by value.

``TABLE`` is what pydantic v2 makes of each value as a ``bool``, an ``int`` and a ``float`` (``X``: it
refuses the value): the edges of its lax mode that a hand-written reading gets wrong (words matched in
any case but not stripped, integer text with underscores and a fraction of zeros but no exponent,
ASCII digits only, integers of any length). tests/oracle/test_pydantic_lax_oracle.py checks the table
against pydantic itself; here :mod:`accelconf.deepspeed.values` is checked against the table.
"""

from __future__ import annotations

import math
from typing import Any

import pytest

from accelconf.deepspeed import values as V

X = "refused"
INF, NAN = float("inf"), float("nan")

# value, as bool, as int, as float
TABLE: list[tuple[Any, Any, Any, Any]] = [
    (True, True, 1, 1.0),
    (False, False, 0, 0.0),
    (0, False, 0, 0.0),
    (1, True, 1, 1.0),
    (2, X, 2, 2.0),
    (-1, X, -1, -1.0),
    (0.0, False, 0, 0.0),
    (1.0, True, 1, 1.0),
    (1.5, X, X, 1.5),
    (2.0**62, X, 2**62, 2.0**62),
    (2.0**63, X, X, 2.0**63),  # pydantic's int from a float stops below 2**63
    (INF, X, X, INF),
    ("1", True, 1, 1.0),
    ("0", False, 0, 0.0),
    ("YES", True, X, X),
    (" yes", X, X, X),  # the words are not stripped
    ("yes ", X, X, X),
    ("on", True, X, X),
    ("OFF", False, X, X),
    ("t", True, X, X),
    ("F", False, X, X),
    ("y", True, X, X),
    ("n", False, X, X),
    ("True", True, X, X),
    ("2", X, 2, 2.0),
    ("1.0", X, 1, 1.0),
    (" 3 ", X, 3, 3.0),  # numbers are
    ("3.", X, X, 3.0),
    (".0", X, X, 0.0),
    ("3.00", X, 3, 3.0),
    ("1_0.0", X, 10, 10.0),
    ("1__0", X, X, X),
    ("+5", X, 5, 5.0),
    ("-0", X, 0, -0.0),
    ("1e3", X, X, 1000.0),  # no exponent in an integer's text
    ("Infinity", X, X, INF),
    ("nan", X, X, NAN),
    ("abc", X, X, X),
    ("", X, X, X),
    ("\u0663", X, X, X),  # an Arabic-Indic 3: Python's int() and float() take it, pydantic does not
    ("99999999999999999999", X, 99999999999999999999, 1e20),  # exact, beyond 2**63
    (None, X, X, X),
    ([], X, X, X),
    ({}, X, X, X),
]


def same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a):
        return math.isnan(b)
    return a == b and type(a) is not bool or a is b


@pytest.mark.parametrize(
    "value, as_bool, as_int, as_float", TABLE, ids=[f"row{i}-{type(r[0]).__name__}" for i, r in enumerate(TABLE)]
)
def test_lax_mode_reads_each_value_as_pydantic_does(value: Any, as_bool: Any, as_int: Any, as_float: Any) -> None:
    assert V.lax_bool(value) is (None if as_bool is X else as_bool)
    assert V._lax_ok(value, "boolean") is (as_bool is not X)
    assert V._lax_ok(value, "integer") is (as_int is not X)
    assert V._lax_ok(value, "number") is (as_float is not X)
    if as_int is not X:
        assert same(V._coerce(value, "integer"), as_int), V._coerce(value, "integer")
    if as_float is not X:
        assert same(V._coerce(value, "number"), as_float), V._coerce(value, "number")  # a number, never a bool
        assert same(V._lax_num(value), as_float)
    elif not isinstance(value, (int, float)):
        assert V._lax_num(value) is None and V._coerce(value, "number") is value


def test_what_lax_mode_refuses_is_kept_as_written() -> None:
    assert V._coerce("1e3", "integer") == "1e3" and V._coerce("abc", "number") == "abc"
    assert V._coerce(True, "integer") == 1 and V._coerce(["x"], "integer") == ["x"]
    assert V._coerce("7", "string") == "7" and V._coerce(False, "boolean") is False


@pytest.mark.parametrize(
    "value, strict",
    [
        ((3, "integer"), True),
        ((3.0, "integer"), True),
        ((3.5, "integer"), False),
        ((2.0**63, "integer"), False),
        ((INF, "integer"), False),
        ((True, "integer"), False),  # a JSON boolean is not a JSON integer
        ((3, "number"), True),
        ((True, "number"), False),
        (("3", "integer"), False),
        (("x", "string"), True),
        ((None, "null"), True),
        (([1], "array"), True),
        (({}, "object"), True),
        (({}, "array"), False),
    ],
)
def test_the_strict_json_types(value: tuple[Any, str], strict: bool) -> None:
    assert V._strict_ok(*value) is strict
    assert not strict or V._lax_ok(*value)  # what the JSON type takes, lax mode takes too


@pytest.mark.parametrize(
    "zero, stage",
    [
        (None, 0),  # no section: ZeRO off
        (True, 1),  # the legacy boolean
        (False, 0),
        ({}, 0),
        ({"stage": 3}, 3),
        ({"stage": 2.0}, 2),
        ({"stage": 2.5}, None),
        ({"stage": True}, 1),
        ({"stage": " 2 "}, 2),
        ({"stage": "auto"}, None),  # accelerate fills it
        ({"stage": "two"}, None),
        ({"stage": None}, None),
    ],
)
def test_the_zero_stage_deepspeed_uses(zero: Any, stage: int | None) -> None:
    data = {} if zero is None else {"zero_optimization": zero}
    assert V._stage(data) == stage and (stage is None or type(V._stage(data)) is int)


@pytest.mark.parametrize(
    "block, enabled",
    [({"enabled": True}, True), ({"enabled": "yes"}, True), ({"enabled": 0}, False), ({}, False), (True, False)],
)
def test_a_block_is_enabled_as_lax_mode_reads_its_flag(block: Any, enabled: bool) -> None:
    assert V._enabled(block) is enabled


def test_values_are_shown_as_json() -> None:
    assert [V._fmt(v) for v in ("a", True, None, 1.5, INF, -INF, NAN)] == [
        '"a"',
        "true",
        "null",
        "1.5",
        "inf",
        "-inf",
        "nan",
    ]
    assert [V._int_or_none(v) for v in (3, 3.0, 3.5, True, "3")] == [3, 3, None, None, None]
