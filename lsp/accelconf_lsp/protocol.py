"""Conversions from accelconf's values to Language Server Protocol types (``lsp_*`` functions).

accelconf counts positions in characters (code points): :class:`~accelconf.findings.Finding` is
1-based with an exclusive end, :mod:`accelconf.assist` and document nodes are 0-based. The protocol
counts 0-based lines and columns in the *negotiated* unit (UTF-16 by default, UTF-8 or UTF-32 when
the client offers them). Every function here takes the document text and that encoding, so the
server never does position arithmetic itself. Nothing here touches a server; all are unit-tested.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from lsprotocol import types

from accelconf.assist import Candidate, Symbol, fix_title
from accelconf.errors import InputError
from accelconf.findings import Finding

SOURCE = "accelconf"

# Findings about text that does nothing: editors fade it out.
UNNECESSARY = frozenset(
    {"no-effect", "section-unused", "fsdp1-key-in-fsdp2", "fsdp2-key-in-fsdp1", "fsdp1-strategy-ignored"}
)

_SEVERITY = {
    "error": types.DiagnosticSeverity.Error,
    "warning": types.DiagnosticSeverity.Warning,
    "info": types.DiagnosticSeverity.Information,
}


def lines_of(text: str) -> list[str]:
    return [ln[:-1] if ln.endswith("\r") else ln for ln in text.split("\n")]


def _units(s: str, encoding: str) -> int:
    if encoding == "utf-32":
        return len(s)
    if encoding == "utf-8":
        return len(s.encode("utf-8", "surrogatepass"))
    return len(s.encode("utf-16-le", "surrogatepass")) // 2


def to_client(lines: Sequence[str], line: int, col: int, encoding: str = "utf-16") -> types.Position:
    """0-based (line, character column) to a protocol position; clamped to the text."""
    if not lines:
        return types.Position(0, 0)
    if line < 0:
        return types.Position(0, 0)
    if line >= len(lines):
        last = len(lines) - 1
        return types.Position(last, _units(lines[last], encoding))
    text = lines[line]
    col = max(0, min(col, len(text)))
    return types.Position(line, _units(text[:col], encoding))


def from_client(lines: Sequence[str], pos: types.Position, encoding: str = "utf-16") -> tuple[int, int]:
    """A protocol position to 0-based (line, character column); clamped to the text."""
    if not lines:
        return 0, 0
    line = max(0, min(pos.line, len(lines) - 1))
    text = lines[line]
    if encoding == "utf-32":
        return line, max(0, min(pos.character, len(text)))
    units = 0
    for i, ch in enumerate(text):
        if units >= pos.character:
            return line, i
        units += _units(ch, encoding)
    return line, len(text)


def offset_to_client(text: str, lines: Sequence[str], offset: int, encoding: str = "utf-16") -> types.Position:
    offset = max(0, min(offset, len(text)))
    line = text.count("\n", 0, offset)
    col = offset - (text.rfind("\n", 0, offset) + 1)
    if line < len(lines) and col > len(lines[line]):  # inside a "\r\n"
        col = len(lines[line])
    return to_client(lines, line, col, encoding)


def lsp_range(
    lines: Sequence[str], line: int, col: int, end_line: int, end_col: int, encoding: str = "utf-16"
) -> types.Range:
    """A range from 0-based character positions (end exclusive)."""
    start = to_client(lines, line, col, encoding)
    end = to_client(lines, end_line, end_col, encoding)
    if (end.line, end.character) < (start.line, start.character):
        end = start
    return types.Range(start, end)


def lsp_diagnostic(finding: Finding, lines: Sequence[str], encoding: str = "utf-16") -> types.Diagnostic:
    """One finding as a diagnostic. A finding without a position marks the first line; one without
    an end marks the word that starts at its position."""
    line = max(finding.line - 1, 0)
    col = max(finding.column - 1, 0)
    if finding.end_line > 0 and finding.end_column > 0:
        end_line, end_col = finding.end_line - 1, finding.end_column - 1
    else:
        text = lines[line] if line < len(lines) else ""
        end = col
        while end < len(text) and not text[end].isspace() and text[end] not in ":,":
            end += 1
        if finding.line == 0:
            end = len(text)
        end_line, end_col = line, max(end, col + 1)
    if (end_line, end_col) <= (line, col):
        end_line, end_col = line, col + 1
    message = finding.message
    if finding.suggestion and finding.suggestion not in message:
        message += f" (suggestion: {finding.suggestion})"
    return types.Diagnostic(
        range=lsp_range(lines, line, col, end_line, end_col, encoding),
        message=message,
        severity=_SEVERITY.get(finding.severity, types.DiagnosticSeverity.Information),
        code=finding.rule,
        source=SOURCE,
        tags=[types.DiagnosticTag.Unnecessary] if finding.rule in UNNECESSARY else None,
    )


def anchor_foreign(
    findings: Iterable[Finding], doc_path: str, anchor: tuple[int, int, int, int] | None
) -> list[Finding]:
    """Findings about another file (a referenced DeepSpeed JSON) shown in this document: placed on
    ``anchor`` (1-based line, column, end line, end column of the reference) with the other file's
    ``name:line:col`` in the message, or left out when there is no anchor."""
    import os

    out = []
    here = os.path.normpath(doc_path) if doc_path else ""
    for f in findings:
        if not f.path or os.path.normpath(f.path) == here:
            out.append(f)
            continue
        if anchor is None:
            continue
        line, col, eline, ecol = anchor
        where = f"{os.path.basename(f.path)}:{f.line}:{f.column}"
        out.append(
            f.replace(
                message=f"{where}: {f.message}",
                line=line,
                column=col,
                end_line=eline,
                end_column=ecol,
                path="",
                fix=(),
            )
        )
    return out


def lsp_diagnostics(findings: Iterable[Finding], text: str, encoding: str = "utf-16") -> list[types.Diagnostic]:
    lines = lines_of(text)
    return [lsp_diagnostic(f, lines, encoding) for f in findings]


def lsp_input_error(exc: InputError, text: str, encoding: str = "utf-16") -> types.Diagnostic:
    """An unparseable document as one error at the parser's position (1-based in the exception)."""
    finding = Finding("parse-error", "error", exc.message, "", exc.line, exc.column)
    return lsp_diagnostic(finding, lines_of(text), encoding)


def lsp_text_edits(text: str, edits: Iterable[tuple[int, int, str]], encoding: str = "utf-16") -> list[types.TextEdit]:
    """Character-offset edits ``(start, end, replacement)`` as protocol text edits."""
    lines = lines_of(text)
    return [
        types.TextEdit(
            types.Range(offset_to_client(text, lines, s, encoding), offset_to_client(text, lines, e, encoding)), new
        )
        for s, e, new in edits
    ]


def lsp_whole_document_edit(old: str, new: str, encoding: str = "utf-16") -> list[types.TextEdit]:
    """Replace a whole document (formatting, migration): one edit, or none when nothing changes."""
    if old == new:
        return []
    lines = lines_of(old)
    end = to_client(lines, len(lines) - 1, len(lines[-1]) if lines else 0, encoding)
    return [types.TextEdit(types.Range(types.Position(0, 0), end), new)]


def lsp_quick_fix(
    finding: Finding,
    diagnostic: types.Diagnostic | None,
    uri: str,
    text: str,
    encoding: str = "utf-16",
    preferred: bool = True,
) -> types.CodeAction | None:
    """The repair a finding carries (``Finding.fix``) as a quick fix, or ``None``."""
    if not finding.fix:
        return None
    return types.CodeAction(
        title=fix_title(finding, text),
        kind=types.CodeActionKind.QuickFix,
        diagnostics=[diagnostic] if diagnostic is not None else None,
        is_preferred=preferred,
        edit=types.WorkspaceEdit(changes={uri: lsp_text_edits(text, finding.fix, encoding)}),
    )


def lsp_rewrite(
    title: str, kind: str, uri: str, old: str, new: str, encoding: str = "utf-16"
) -> types.CodeAction | None:
    edits = lsp_whole_document_edit(old, new, encoding)
    if not edits:
        return None
    return types.CodeAction(title=title, kind=kind, edit=types.WorkspaceEdit(changes={uri: edits}))


_ITEM_KIND = {
    "key": types.CompletionItemKind.Property,
    "section": types.CompletionItemKind.Module,
    "value": types.CompletionItemKind.EnumMember,
    "snippet": types.CompletionItemKind.Snippet,
}


def lsp_completion_item(
    c: Candidate,
    lines: Sequence[str],
    line: int,
    encoding: str = "utf-16",
    *,
    snippets: bool = True,
    markdown: bool = True,
    deprecated_tag: bool = True,
) -> types.CompletionItem:
    """A candidate as a completion item that replaces its token (columns ``start``..``end``)."""
    use_snippet = snippets and c.snippet is not None
    new_text = c.snippet if use_snippet and c.snippet is not None else c.insert
    rng = lsp_range(lines, line, c.start, line, c.end, encoding)
    doc: types.MarkupContent | None = None
    if c.doc:
        doc = types.MarkupContent(types.MarkupKind.Markdown if markdown else types.MarkupKind.PlainText, c.doc)
    return types.CompletionItem(
        label=c.label,
        kind=_ITEM_KIND[c.kind],
        detail=c.detail or None,
        documentation=doc,
        sort_text=c.sort or None,
        filter_text=c.filter,
        text_edit=types.TextEdit(rng, new_text),
        insert_text_format=types.InsertTextFormat.Snippet if use_snippet else types.InsertTextFormat.PlainText,
        tags=[types.CompletionItemTag.Deprecated] if c.deprecated and deprecated_tag else None,
    )


def lsp_completion_list(
    cands: Iterable[Candidate], text: str, line: int, encoding: str = "utf-16", **kw: bool
) -> types.CompletionList:
    lines = lines_of(text)
    return types.CompletionList(
        is_incomplete=False, items=[lsp_completion_item(c, lines, line, encoding, **kw) for c in cands]
    )


def lsp_hover(markdown: str | None, markdown_ok: bool = True, rng: types.Range | None = None) -> types.Hover | None:
    if not markdown:
        return None
    kind = types.MarkupKind.Markdown if markdown_ok else types.MarkupKind.PlainText
    return types.Hover(contents=types.MarkupContent(kind, markdown), range=rng)


_SYMBOL_KIND = {
    "section": types.SymbolKind.Module,
    "key": types.SymbolKind.Property,
    "list": types.SymbolKind.Array,
    "item": types.SymbolKind.Field,
}


def lsp_document_symbol(s: Symbol, lines: Sequence[str], encoding: str = "utf-16") -> types.DocumentSymbol:
    full = lsp_range(lines, s.line, s.col, s.end_line, s.end_col, encoding)
    sel = lsp_range(lines, s.sel_line, s.sel_col, s.sel_end_line, s.sel_end_col, encoding)
    # The selection range must be contained in the full range.
    if (sel.start.line, sel.start.character) < (full.start.line, full.start.character) or (
        sel.end.line,
        sel.end.character,
    ) > (full.end.line, full.end.character):
        sel = types.Range(full.start, full.start)
    return types.DocumentSymbol(
        name=s.name or '""',
        detail=s.detail or None,
        kind=_SYMBOL_KIND[s.kind],
        range=full,
        selection_range=sel,
        children=[lsp_document_symbol(c, lines, encoding) for c in s.children] or None,
    )


def lsp_document_symbols(syms: Iterable[Symbol], text: str, encoding: str = "utf-16") -> list[types.DocumentSymbol]:
    lines = lines_of(text)
    return [lsp_document_symbol(s, lines, encoding) for s in syms]
