"""The ``lsp_*`` conversions, without a server: positions in UTF-16/UTF-8 units, ranges, edits."""

from __future__ import annotations

from lsprotocol import types

from accelconf.assist import Candidate, Symbol
from accelconf.errors import InputError
from accelconf.findings import Finding
from accelconf_lsp import protocol

TEXT = "a: 😀x\r\nkey: value\nlast"


def test_positions_in_each_encoding() -> None:
    lines = protocol.lines_of(TEXT)
    assert lines == ["a: 😀x", "key: value", "last"]
    assert protocol.to_client(lines, 0, 4, "utf-16") == types.Position(0, 5)
    assert protocol.to_client(lines, 0, 4, "utf-8") == types.Position(0, 7)
    assert protocol.to_client(lines, 0, 4, "utf-32") == types.Position(0, 4)
    assert protocol.from_client(lines, types.Position(0, 5), "utf-16") == (0, 4)
    assert protocol.from_client(lines, types.Position(0, 7), "utf-8") == (0, 4)
    assert protocol.from_client(lines, types.Position(9, 99), "utf-16") == (2, 4)  # clamped
    assert protocol.to_client(lines, 7, 0) == types.Position(2, 4)


def test_diagnostic_from_finding() -> None:
    f = Finding("unknown-key", "error", "unknown key", "key", 2, 1, "keys", 2, 4)
    d = protocol.lsp_diagnostic(f, protocol.lines_of(TEXT))
    assert d.range == types.Range(types.Position(1, 0), types.Position(1, 3))
    assert d.code == "unknown-key" and d.source == "accelconf" and d.severity == types.DiagnosticSeverity.Error
    assert d.message == "unknown key (suggestion: keys)"
    # No end: the word at the position; no position at all: the first line.
    d = protocol.lsp_diagnostic(Finding("x", "warning", "m", "", 2, 6), protocol.lines_of(TEXT))
    assert d.range == types.Range(types.Position(1, 5), types.Position(1, 10))
    d = protocol.lsp_diagnostic(Finding("empty", "info", "m"), protocol.lines_of(TEXT))
    assert d.range.start == types.Position(0, 0) and d.severity == types.DiagnosticSeverity.Information


def test_input_error() -> None:
    d = protocol.lsp_input_error(InputError("invalid YAML: x", "f.yaml", 2, 3), TEXT)
    assert d.code == "parse-error" and d.range.start == types.Position(1, 2)


def test_text_edits_from_offsets() -> None:
    start = TEXT.index("value")
    (edit,) = protocol.lsp_text_edits(TEXT, [(start, start + 5, "v")])
    assert edit.range == types.Range(types.Position(1, 5), types.Position(1, 10)) and edit.new_text == "v"
    (edit,) = protocol.lsp_text_edits(TEXT, [(TEXT.index("x"), TEXT.index("x") + 1, "")], "utf-16")
    assert edit.range.start == types.Position(0, 5)


def test_whole_document_edit() -> None:
    assert protocol.lsp_whole_document_edit(TEXT, TEXT) == []
    (edit,) = protocol.lsp_whole_document_edit(TEXT, "new")
    assert edit.range == types.Range(types.Position(0, 0), types.Position(2, 4))


def test_quick_fix() -> None:
    start = TEXT.index("key")
    f = Finding("unknown-key", "error", "m", "key", 2, 1, "keys", 2, 4, fix=((start, start + 3, "keys"),))
    action = protocol.lsp_quick_fix(f, None, "file:///x.yaml", TEXT)
    assert action is not None and action.kind == types.CodeActionKind.QuickFix and action.is_preferred
    assert action.edit is not None and action.edit.changes is not None
    assert action.edit.changes["file:///x.yaml"][0].new_text == "keys"
    assert protocol.lsp_quick_fix(Finding("x", "info", "m"), None, "file:///x.yaml", TEXT) is None


def test_completion_item_snippet_and_plain() -> None:
    c = Candidate(
        "fsdp_config block",
        "snippet",
        "fsdp_config:\n  a: 1",
        0,
        2,
        "d",
        "**doc**",
        snippet="fsdp_config:\n  a: ${1:1}",
    )
    lines = ["fs"]
    item = protocol.lsp_completion_item(c, lines, 0)
    assert item.insert_text_format == types.InsertTextFormat.Snippet and item.text_edit is not None
    assert item.text_edit.new_text.endswith("${1:1}") and item.kind == types.CompletionItemKind.Snippet
    assert isinstance(item.documentation, types.MarkupContent) and item.documentation.kind == types.MarkupKind.Markdown
    plain = protocol.lsp_completion_item(c, lines, 0, snippets=False, markdown=False)
    assert (
        plain.insert_text_format == types.InsertTextFormat.PlainText
        and plain.text_edit.new_text == "fsdp_config:\n  a: 1"
    )  # type: ignore[union-attr]
    assert plain.documentation.kind == types.MarkupKind.PlainText  # type: ignore[union-attr]


def test_document_symbols() -> None:
    s = Symbol(
        "fsdp_config",
        "",
        "section",
        0,
        0,
        2,
        5,
        0,
        0,
        0,
        11,
        (Symbol("fsdp_version", "2", "key", 1, 2, 1, 17, 1, 2, 1, 14),),
    )
    (sym,) = protocol.lsp_document_symbols([s], "fsdp_config:\n  fsdp_version: 2\nx: 1\n")
    assert sym.kind == types.SymbolKind.Module and sym.children is not None and sym.children[0].detail == "2"
    assert sym.selection_range == types.Range(types.Position(0, 0), types.Position(0, 11))


def test_hover() -> None:
    assert protocol.lsp_hover(None) is None
    h = protocol.lsp_hover("**x**")
    assert h is not None and h.contents.kind == types.MarkupKind.Markdown  # type: ignore[union-attr]


def test_parse_settings() -> None:
    from accelconf_lsp.server import Settings, parse_settings

    assert parse_settings(None) == (Settings(), [])
    s, problems = parse_settings({"accelconf": {"accelerateVersion": "1.10", "disabledRules": ["unknown-key"]}})
    assert s == Settings("1.10", None, ("unknown-key",)) and problems == []
    s, problems = parse_settings({"accelerateVersion": 3, "disabledRules": "x", "target": 5, "colour": 1})
    assert s == Settings() and len(problems) == 4
    assert parse_settings("nonsense")[0] == Settings() and parse_settings("nonsense")[1]


def test_disabled_rules_with_an_unknown_id_name_the_nearest_and_keep_the_known_ones() -> None:
    from accelconf_lsp.server import parse_settings

    s, problems = parse_settings({"disabledRules": ["yaml-bool-vaule", "unknown-nested-key"]})
    assert s.disabled_rules == ("unknown-nested-key",)
    assert len(problems) == 1 and "'yaml-bool-vaule' (did you mean 'yaml-bool-value'?)" in problems[0]


def test_findings_about_a_referenced_file_are_anchored_on_the_reference() -> None:
    own = Finding("unknown-key", "error", "unknown", "x", 3, 1, path="conf/acc.yaml")
    other = Finding("ds-batch", "error", "train_batch_size 30 != 64", "train_batch_size", 2, 23, path="conf/ds.json")
    out = protocol.anchor_foreign([own, other], "conf/acc.yaml", (5, 26, 5, 33))
    assert out[0] == own
    assert (out[1].line, out[1].column, out[1].end_line, out[1].end_column) == (5, 26, 5, 33)
    assert out[1].message.startswith("ds.json:2:23: ")
    assert protocol.anchor_foreign([other], "conf/acc.yaml", None) == []
