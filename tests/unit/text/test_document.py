"""The loader: positions, YAML 1.1 meaning, and refusal of hostile input with a position."""

from __future__ import annotations

import pytest

from accelconf.errors import InputError
from accelconf.text.document import load_bytes, load_text, resolve_yaml11, resolve_yaml12


@pytest.mark.parametrize(
    "raw, v11, v12",
    [
        ("no", False, "no"),
        ("NO", False, "NO"),
        ("off", False, "off"),
        ("yes", True, "yes"),
        ("on", True, "on"),
        ("true", True, True),
        ("010", 8, 10),
        ("0x1F", 31, 31),
        ("0o17", "0o17", 15),
        ("-0x1f", -31, "-0x1f"),
        ("1_000", 1000, "1_000"),
        ("1:30", 90, "1:30"),
        ("1e-5", "1e-5", 1e-5),
        ("1.0e-5", 1e-5, 1e-5),
        ("1.5", 1.5, 1.5),
        ("~", None, None),
        ("", None, None),
        ("bf16", "bf16", "bf16"),
        ("y", "y", "y"),
    ],
)
def test_scalar_resolution_matches_pyyaml_and_yaml12(raw, v11, v12):
    assert resolve_yaml11(raw) == v11
    assert resolve_yaml12(raw) == v12


def test_yaml11_resolution_agrees_with_pyyaml_safe_load():
    yaml = pytest.importorskip("yaml")
    for raw in [
        "no",
        "NO",
        "off",
        "Yes",
        "010",
        "0b101",
        "1_000",
        "1:30",
        "1e-5",
        "1.0e-5",
        ".inf",
        "-.inf",
        "0o7",
        "+12",
        "0.",
        "._5",
    ]:
        expected = yaml.safe_load(f"k: {raw}\n")["k"]
        got = load_text(f"k: {raw}\n").data["k"]
        assert got == expected and type(got) is type(expected), raw


def test_positions_are_kept_for_keys_and_values():
    doc = load_text("a: 1\nfsdp_config:\n  fsdp_version: 2\n")
    assert doc.position("fsdp_config.fsdp_version") == (3, 3)
    assert doc.position("fsdp_config.fsdp_version", value=True) == (3, 17)
    assert doc.position("missing.key") == (1, 1)
    node = doc.node("fsdp_config.fsdp_version")
    assert doc.text[node.start : node.end] == "2"


def test_json_positions_comments_and_trailing_commas_are_quirks():
    doc = load_text('{\n  // hi\n  "a": {"b": [1, 2,],},\n}\n', "x.json")
    assert doc.data == {"a": {"b": [1, 2]}}
    assert doc.position("a.b", value=True) == (3, 14)
    assert sorted(q.kind for q in doc.quirks) == ["comment", "trailing-comma", "trailing-comma", "trailing-comma"]


@pytest.mark.parametrize(
    "text, where",
    [
        ("a: [1, 2\n", (2, 1)),
        ("a: b: c\n", (1, 5)),
        ("key: 'unterminated\n", (2, 1)),
    ],
)
def test_malformed_yaml_reports_a_position(text, where):
    with pytest.raises(InputError) as exc:
        load_text(text, "bad.yaml")
    assert (exc.value.line, exc.value.column) == where
    assert str(exc.value).startswith(f"bad.yaml:{where[0]}:{where[1]}: invalid YAML")


def test_malformed_json_reports_a_position():
    with pytest.raises(InputError) as exc:
        load_text('{"a": 1,\n "b": }', "bad.json")
    assert (exc.value.line, exc.value.column) == (2, 7)


def test_python_tags_are_never_constructed(tmp_path):
    marker = tmp_path / "pwned"
    text = f"a: !!python/object/apply:os.system ['touch {marker}']\n"
    with pytest.raises(InputError) as exc:
        load_text(text, "evil.yaml")
    assert "!!python/object/apply:os.system" in exc.value.message and exc.value.line == 1
    assert not marker.exists()


def test_billion_laughs_is_refused_fast():
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    prev = "a"
    for name in "bcdefghi":
        lines.append(f"{name}: &{name} [" + ",".join([f"*{prev}"] * 9) + "]")
        prev = name
    with pytest.raises(InputError) as exc:  # how fast: bench/bench_validate.py (goal: under 1 s)
        load_text("\n".join(lines) + "\n")
    assert "alias" in exc.value.message


def test_deep_nesting_is_refused():
    with pytest.raises(InputError):
        load_text("[" * 5000 + "]" * 5000)
    with pytest.raises(InputError):
        load_text("{}".join(['{"a": '] * 3000), "x.json")


@pytest.mark.parametrize(
    "raw, needle",
    [
        (b"\x00\x01binary", "binary"),
        (b"a: \xff\xfe\n", "not UTF-8"),
        (b"a: \x07bell\n", "binary"),
    ],
)
def test_binary_and_non_utf8_input_is_refused(raw, needle):
    with pytest.raises(InputError) as exc:
        load_bytes(raw, "x.yaml")
    assert needle in exc.value.message and exc.value.line >= 1


def test_huge_input_is_refused():
    with pytest.raises(InputError) as exc:
        load_bytes(b"a: 1\n" * 2_000_000, "huge.yaml")
    assert "too large" in exc.value.message


def test_empty_document_has_no_data():
    doc = load_text("# only a comment\n")
    assert doc.root is None and doc.data is None


def test_duplicate_keys_last_wins_and_are_recorded():
    doc = load_text("a: 1\na: 2\n")
    assert doc.data == {"a": 2}
    assert doc.quirks[0].kind == "duplicate-key" and doc.quirks[0].line == 1


def test_merge_keys_follow_pyyaml():
    doc = load_text("base: &b {x: 1, y: 2}\nd:\n  <<: *b\n  y: 3\n")
    assert doc.data["d"] == {"x": 1, "y": 3}


def test_bom_and_crlf_are_kept():
    doc = load_bytes(b"\xef\xbb\xbfa: 1\r\nb: no\r\n", "x.yaml")
    assert doc.bom and doc.data == {"a": 1, "b": False} and doc.newline == "\r\n"


# Property: for any plain scalar, the loader reads what PyYAML safe_load (accelerate's reader) reads.
from hypothesis import assume, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_SCALAR_ALPHABET = "0123456789abcdefnotrueyslAEFINOTRUYS+-._:x "


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=_SCALAR_ALPHABET, min_size=1, max_size=8))
def test_yaml11_reading_matches_pyyaml(raw):
    yaml = pytest.importorskip("yaml")
    text = f"k: {raw}\n"
    try:
        expected = yaml.safe_load(text)
    except yaml.YAMLError:
        assume(False)
    assume(isinstance(expected, dict) and "k" in expected)
    expected = expected["k"]
    got = load_text(text).data["k"]
    if isinstance(expected, float) and expected != expected:
        assert got != got
    else:
        assert got == expected and type(got) is type(expected), (raw, got, expected)


@settings(max_examples=100, deadline=None)
@given(
    st.recursive(
        st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=10)),
        lambda inner: st.one_of(
            st.lists(inner, max_size=4), st.dictionaries(st.text(min_size=1, max_size=6), inner, max_size=4)
        ),
        max_leaves=20,
    )
)
def test_json_reader_matches_json_module(value):
    import json

    text = json.dumps({"root": value}, indent=1)
    assert load_text(text, "x.json").data == {"root": value}
