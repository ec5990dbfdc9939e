"""The text area: the node module imports nothing, the loaders do not import each other in a circle,
format sniffing has one home, and the one YAML scalar writer is read back unchanged by accelerate's
reader (PyYAML, YAML 1.1) and by a YAML 1.2 reader."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from accelconf import formats
from accelconf.errors import InputError
from accelconf.text import document, nodes, scalars
from accelconf.text.scalars import resolve_yaml12, yaml_scalar

TEXT = Path(document.__file__).resolve().parent


def _accelconf_imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("accelconf"):
            out.add(node.module)
        elif isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.startswith("accelconf")}
    return out


def test_nodes_imports_nothing_from_accelconf_but_the_records_base() -> None:
    assert _accelconf_imports(TEXT / "nodes.py") == {"accelconf.records"}


def test_no_import_circle_between_the_loaders() -> None:
    assert "accelconf.text.document" not in _accelconf_imports(TEXT / "jsonpos.py")
    assert _accelconf_imports(TEXT / "scalars.py") == set()
    # each loads alone in a fresh interpreter
    for mod in ("accelconf.text.jsonpos", "accelconf.text.document", "accelconf.text.scalars"):
        subprocess.run([sys.executable, "-c", f"import {mod}"], check=True)


def test_document_reexports_the_node_tree() -> None:
    assert document.Node is nodes.Node and document.Quirk is nodes.Quirk
    assert document.resolve_yaml11 is scalars.resolve_yaml11


@pytest.mark.parametrize(
    ("path", "text", "want"),
    [
        ("a.json", "x: 1", "json"),
        ("a.yml", "{}", "yaml"),
        ("a.yaml", "{}", "yaml"),
        ("", '\ufeff  {"a": 1}', "json"),
        ("", "[1]", "json"),
        ("", "a: 1", "yaml"),
        ("x.txt", "a: 1", "yaml"),
    ],
)
def test_sniffing_yaml_and_json_is_one_fact(path: str, text: str, want: str) -> None:
    assert document.sniff_format(text, path) == want
    # the five-format detector agrees wherever the text is YAML or JSON
    assert formats.detect_format(text, path) == want


@pytest.mark.parametrize(
    ("value", "written"),
    [
        ("no", "'no'"),
        ("FULL_SHARD", "FULL_SHARD"),
        ("a: b", "'a: b'"),
        ("1.0", "'1.0'"),
        ("", "''"),
        ("-x", "'-x'"),
        ("null", "'null'"),
        ("0o7", "'0o7'"),
        ("x #y", "'x #y'"),
        ("it's", "it's"),
        ("a b", "a b"),
        (True, "true"),
        (None, "null"),
        (2, "2"),
        (0.5, "0.5"),
        (float("inf"), ".inf"),
        (1e-05, "1.0e-05"),
        (1e20, "1.0e+20"),
    ],
)
def test_yaml_scalar(value: object, written: str) -> None:
    assert yaml_scalar(value) == written


def test_yaml_scalar_keeps_a_quote_style_and_flow_context() -> None:
    assert yaml_scalar("FULL_SHARD", quote='"') == '"FULL_SHARD"'
    assert yaml_scalar("a,b") == "a,b" and yaml_scalar("a,b", flow=True) == "'a,b'"


@settings(max_examples=300, deadline=None)
@given(
    st.one_of(
        st.text(st.characters(blacklist_categories=("Cs", "Cc"))),
        st.integers(),
        st.booleans(),
        st.none(),
        st.floats(allow_nan=False),
    )
)
def test_yaml_scalar_reads_back_the_same_in_yaml_11_and_12(value: object) -> None:
    written = yaml_scalar(value)
    assert yaml.safe_load(f"k: {written}\n")["k"] == value  # accelerate's reader
    flow = yaml_scalar(value, flow=True)
    assert yaml.safe_load(f"k: [{flow}]\n")["k"] == [value]
    if isinstance(value, str) and written == value:  # plain: a YAML 1.2 reader sees the same string
        assert resolve_yaml12(written) == value


def test_span_is_the_one_at_this_path_else_at_its_parent_rule() -> None:
    doc = document.load_text("a: 1\nsec:\n  k: v\n  blk:\n    x: 1\n")
    assert doc.span("a") == (1, 1, 1, 2)  # the key
    assert doc.span("a", value=True) == (1, 4, 1, 5)  # its value
    assert doc.span("sec.missing") == doc.span("sec") == (2, 1, 2, 4)  # the parent key
    assert doc.span("sec.k.deeper", value=True) == doc.span("sec.k")
    assert doc.span("sec.blk", value=True) == (5, 5, 5, 6)  # a block: its first character
    assert doc.span("nowhere") == doc.span("") == (1, 1, 1, 1)
    from accelconf.environment.checks import finding_at

    f = finding_at(doc, "r", "info", "m", "sec.missing")
    assert (f.line, f.column, f.end_line, f.end_column) == (2, 1, 2, 4)


# -- a byte-order mark is no column ------------------------------------------------------------------

BOM = "\ufeff"


def _positions(findings: list) -> list[tuple[str, int, int, int, int]]:
    return [(f.rule, f.line, f.column, f.end_line, f.end_column) for f in findings]


@pytest.mark.parametrize(
    "text",
    [
        "distributed_type: BOGUS\nmixed_precision: fp17\n",
        '{"distributed_type": "BOGUS", "mixed_precision": "fp17"}',
        '{"zero_optimization": {"stage": 7}, "train_batch_size": "x"}',
        '{\n  "zero_optimization": {"stage": 1}\n}\n',  # no batch size: a finding on the root, at 1:1
    ],
)
def test_a_bom_shifts_no_column_on_line_one(text: str) -> None:
    """Text given with a BOM (the API, an editor buffer) reports the columns of the same file
    without one, as a file read from bytes does (YAML's reader never counted it; JSON's did)."""
    from accelconf.api import validate_config

    plain = _positions(validate_config(document.load_text(text, "x")))
    assert plain and any(line == 1 for _, line, *_ in plain)
    assert _positions(validate_config(document.load_text(BOM + text, "x"))) == plain
    assert _positions(validate_config(document.load_bytes((BOM + text).encode("utf-8"), "x"))) == plain


@pytest.mark.parametrize("text", ['{"a": 1,, }', '{"a" 1}', "a: b: c\n"])
def test_a_bom_shifts_no_syntax_error_column(text: str) -> None:
    def where(t: str) -> tuple[int | None, int | None]:
        with pytest.raises(InputError) as info:
            document.load_text(t, "x")
        return info.value.line, info.value.column

    assert where(BOM + text) == where(text)


def test_with_a_bom_offsets_still_index_the_text() -> None:
    text = BOM + '{"zero_optimization": {"stage": 7}} // done'
    doc = document.load_text(text, "x")
    node = doc.node(("zero_optimization", "stage"))
    assert node is not None and text[node.start : node.end] == "7"
    assert (node.line, node.col) == (0, text.index("7") - 1)
    (quirk,) = doc.quirks
    assert text[quirk.offset :].startswith("//") and quirk.col == quirk.offset - 1
