"""The position-keeping JSON reader: its error messages and positions, the quirks it records (what
DeepSpeed's hjson reader takes and json.load refuses), the nodes it builds, and its limits at the edge."""

from __future__ import annotations

import pytest

from accelconf.errors import InputError
from accelconf.text import jsonpos
from accelconf.text.jsonpos import parse_json


def _error(text: str, path: str = "f.json") -> str:
    with pytest.raises(InputError) as e:
        parse_json(text, path)
    return str(e.value)


@pytest.mark.parametrize(
    ("text", "where", "message"),
    [
        ('{"a": 1} x', "1:10", "extra data after the top-level value"),
        ("[1 2]", "1:4", "expected ',' or ']'"),
        ("[1", "1:3", "expected ',' or ']'"),
        ("[", "1:2", "unexpected end of input"),
        ("[1,", "1:4", "unexpected end of input"),
        ('{"a": 1 "b": 2}', "1:9", "expected ',' or '}'"),
        ('{"a": 1', "1:8", "expected ',' or '}'"),
        ("{", "1:2", "expected a double-quoted key"),
        ('{"a": 1,', "1:9", "expected a double-quoted key"),
        ("{a: 1}", "1:2", "expected a double-quoted key"),
        ('{"a" 1}', "1:6", "expected ':' after key"),
        ('{"a"', "1:5", "expected ':' after key"),
        ('"abc', "1:1", "unterminated or invalid string"),
        ("nul", "1:1", "unexpected 'nul'"),
        ("[tru]", "1:2", "unexpected 'tru'"),
        ("[}", "1:2", "unexpected '}'"),
        ("/* open", "1:1", "unterminated /* comment"),
        ('{\n  "a": 1,\n  "b" 2\n}', "3:7", "expected ':' after key"),
        ("\ufeffx", "1:1", "unexpected 'x'"),
    ],
    ids=lambda v: v if isinstance(v, str) and v.isidentifier() else None,
)
def test_an_error_says_what_and_where(text: str, where: str, message: str) -> None:
    assert _error(text) == f"f.json:{where}: invalid JSON: {message}"


def test_the_default_path_is_text() -> None:
    with pytest.raises(InputError) as e:
        parse_json("[")
    assert (e.value.path, e.value.line, e.value.column) == ("<text>", 1, 2)


@pytest.mark.parametrize(
    "text", ["", "  \n\t", "// only a comment\n", "\ufeff"], ids=["empty", "blank", "comment", "bom"]
)
def test_no_value_is_no_root(text: str) -> None:
    root, _ = parse_json(text)
    assert root is None


def _quirks(text: str) -> list[tuple]:
    return [(q.kind, q.message, q.line, q.col, q.offset) for q in parse_json(text)[1]]


def test_trailing_commas_are_quirks_at_the_comma() -> None:
    assert _quirks('{"a": [1, 2,\n],\n}') == [
        ("trailing-comma", "trailing comma in JSON", 0, 11, 11),
        ("trailing-comma", "trailing comma in JSON", 1, 1, 14),
    ]


def test_a_duplicate_key_names_the_first_line() -> None:
    assert _quirks('{"a": 1,\n\n "a": 2}') == [
        ("duplicate-key", "duplicate key 'a' (first at line 1); the last one wins", 2, 1, 11)
    ]


def test_every_comment_style_is_a_quirk_and_is_skipped() -> None:
    text = '// one\n{"a": 1, # two\n "b": /* three */ 2}'
    root, quirks = parse_json(text)
    assert [(q.kind, q.message, q.line, q.col, q.offset) for q in quirks] == [
        ("comment", "comment in JSON", 0, 0, 0),
        ("comment", "comment in JSON", 1, 9, 16),
        ("comment", "comment in JSON", 2, 6, 28),
    ]
    assert [(k.value, v.value) for k, v in root.pairs] == [("a", 1), ("b", 2)]


@pytest.mark.parametrize(
    ("text", "items"),
    [
        ("[/*/ 1 */ 2]", [2]),  # the comment's own "/*/" does not close it
        ("[/* a */ 1, /* b */ 2]", [1, 2]),
        ("[/**/1]", [1]),
        ("[1 // to the end\n]", [1]),
    ],
    ids=["slash_star_slash", "two_comments", "empty_comment", "line_comment"],
)
def test_a_comment_ends_where_it_ends(text: str, items: list) -> None:
    root, _ = parse_json(text)
    assert [n.value for n in root.items] == items


def test_scalar_nodes_keep_value_raw_and_style() -> None:
    root, _ = parse_json('{"s": "x\\n", "i": -3, "f": 1.5e3, "E": 2E2, "t": true, "n": null}')
    got = {k.value: (v.value, v.value12, v.raw, v.style, v.start, v.end) for k, v in root.pairs}
    assert got == {
        "s": ("x\n", "x\n", "x\n", '"', 6, 11),
        "i": (-3, -3, "-3", None, 18, 20),
        "f": (1500.0, 1500.0, "1.5e3", None, 27, 32),
        "E": (200.0, 200.0, "2E2", None, 39, 42),
        "t": (True, True, "true", None, 49, 53),
        "n": (None, None, "null", None, 60, 64),
    }
    assert type(got["i"][0]) is int and type(got["E"][0]) is float
    assert root.pairs[0][0].style == '"' and root.pairs[0][0].raw == "s"


def test_collection_nodes_span_their_brackets() -> None:
    root, _ = parse_json('{"a": [1,\n 2]}')
    seq = root.pairs[0][1]
    assert (root.kind, root.start, root.end, root.line, root.col, root.end_line, root.end_col) == (
        "map",
        0,
        14,
        0,
        0,
        1,
        4,
    )
    assert (seq.kind, seq.start, seq.end, seq.line, seq.col, seq.end_line, seq.end_col) == ("seq", 6, 13, 0, 6, 1, 3)


def test_a_byte_order_mark_is_no_column() -> None:
    root, _ = parse_json('\ufeff{"a": 1}')
    key = root.pairs[0][0]
    assert (root.start, root.col, key.start, key.col) == (1, 0, 2, 1)


def test_nesting_up_to_the_limit_is_read_and_one_more_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jsonpos, "MAX_DEPTH", 3)
    assert parse_json("[[[[]]]]")[0] is not None
    assert parse_json('{"a": {"a": {"a": 1}}}')[0] is not None
    assert _error("[[[[[]]]]]") == "f.json:1:5: invalid JSON: nesting deeper than 3 levels"
    # a key is as deep as its value, and is read first: the error points at the key
    assert _error('{"a": {"a": {"a": {"a": 1}}}}') == "f.json:1:20: invalid JSON: nesting deeper than 3 levels"


def test_values_up_to_the_limit_are_read_and_one_more_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jsonpos, "MAX_NODES", 3)
    assert len(parse_json("[1, 2]")[0].items) == 2
    # the error points at the start of the value over the limit
    assert _error("[1, 2, 33]") == "f.json:1:8: invalid JSON: more than 3 values; refused"
