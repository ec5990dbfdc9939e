"""The scalar writer and the YAML 1.1 reader against PyYAML itself (the reader accelerate uses).

Every token PyYAML's implicit resolvers turn into a bool, an int, a float or null is listed in
every spelling those resolvers accept; a string with that text must come back a string after
``yaml_scalar`` writes it, and ``resolve_yaml11`` must read the bare token as PyYAML does. A
resolver table that misses one spelling (``On``, ``0o17``, ``1_000``) fails here, not in a user's
launch.
"""

from __future__ import annotations

import math

import pytest
import yaml

from accelconf.text.scalars import resolve_yaml11, yaml_scalar

BOOLS = [w for base in ("yes", "no", "true", "false", "on", "off") for w in (base, base.capitalize(), base.upper())]
NULLS = ["~", "null", "Null", "NULL", ""]
INTS = ["0", "7", "-3", "+4", "1_000", "0b101", "017", "0x1F", "-0x1f", "1:30", "-1:30", "190:20:30"]
FLOATS = [
    "1.5",
    "-2.",
    "6.8523015e+5",
    ".5",
    "1_000.5",
    ".inf",
    "-.Inf",
    "+.INF",
    ".nan",
    ".NaN",
    "1:30.5",
    "-1:30.5",
    "+1:30.5",
    "1__0.5",
]
STRINGS = ["y", "n", "Y", "N", "1e3", "0o17", "true1", "onoff", "FSDP", "bf16", "no_shard", "1.2.3"]
TOKENS = BOOLS + NULLS + INTS + FLOATS + STRINGS


def _same(a: object, b: object) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a):
        return math.isnan(b)
    return type(a) is type(b) and a == b


@pytest.mark.parametrize("token", TOKENS, ids=lambda t: repr(t))
def test_yaml11_reader_reads_a_bare_token_as_pyyaml_does(token: str) -> None:
    want = yaml.safe_load(f"k: {token}\n")["k"]
    assert _same(resolve_yaml11(token), want), (token, resolve_yaml11(token), want)


@pytest.mark.parametrize("token", TOKENS, ids=lambda t: repr(t))
def test_a_string_with_a_token_text_stays_a_string_for_pyyaml(token: str) -> None:
    assert yaml.safe_load(f"k: {yaml_scalar(token)}\n")["k"] == token


@pytest.mark.parametrize("value", [True, False, None, 0, 8, -1, 1.5, 1e-05, "FSDP", "no", "On"], ids=repr)
def test_a_written_value_reads_back_unchanged(value: object) -> None:
    assert _same(yaml.safe_load(f"k: {yaml_scalar(value)}\n")["k"], value)


@pytest.mark.parametrize(
    ("value", "written"),
    [(True, "true"), (False, "false"), (None, "null"), (math.nan, ".nan"), (math.inf, ".inf"), (-math.inf, "-.inf")],
    ids=["true", "false", "null", "nan", "inf", "minus_inf"],
)
def test_the_spelling_written_for_a_constant(value: object, written: str) -> None:
    # PyYAML reads FALSE or .NAN as well, so a round trip alone does not pin the spelling written
    assert yaml_scalar(value) == written


def test_a_comma_is_plain_in_a_block_and_quoted_in_a_flow() -> None:
    assert yaml_scalar("a, b") == "a, b"
    assert yaml_scalar("a, b", flow=True) == "'a, b'"


def test_a_trailing_space_is_quoted() -> None:
    assert yaml_scalar("abc ") == "'abc '"
    assert yaml.safe_load(f"k: {yaml_scalar('abc ')}\n")["k"] == "abc "
