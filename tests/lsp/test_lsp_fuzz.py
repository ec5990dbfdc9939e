"""The server survives any edit sequence, and ends where a fresh look would: hypothesis drives the
real ``accelconf lsp`` process.

Random incremental edits (YAML-ish fragments, binary junk, huge lines, ranges past the end of the
text) are sent as ``didChange``; after each sequence the server must still answer hover,
completion and formatting, and the diagnostics it publishes for the latest version must equal
those it publishes for the same final text opened fresh under another URI (the final text is
rebuilt here with pygls' own document, the code the server applies edits with).
"""

from __future__ import annotations

import asyncio
import sys

import pytest
import pytest_lsp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lsprotocol import types
from pygls.workspace import PositionCodec, TextDocument
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from accelconf.assist import document_kind

pytestmark = pytest.mark.asyncio(loop_scope="module")

START = """\
compute_environment: LOCAL_MACHINE
distributed_type: FSDP
mixed_precision: no
fsdp_config:
  fsdp_version: 2
  fsdp_cpu_offload: true  # typo
"""

# Every sequence starts from a config, so the server publishes for it from version 1 on.
STARTS = {
    "default_config.yaml": START,
    "accelerate.json": '{"distributed_type": "FSDP", "mixed_precision": "no",\n'
    ' "fsdp_config": {"fsdp_cpu_offload": true}}\n',
    "ds_config.json": '{\n  "train_batch_size": 8,\n  "zero_optimization": {"stage": 4}\n}\n',
}

FRAGMENTS = st.sampled_from(
    [
        "fsdp_config:\n",
        "  fsdp_offload_params: true\n",
        "mixed_precision: ",
        "'no'",
        "NO",
        ":",
        "- ",
        "{",
        "}",
        "[",
        "]",
        '"',
        "'",
        "#",
        "\n",
        "\r\n",
        "\t",
        "  ",
        "&a ",
        "*a",
        "<<: *a\n",
        "!!python/object:os.system ",
        "---\n",
        "...\n",
        "deepspeed_config:\n  zero_stage: 3\n",
        '{"train_batch_size": 8, "zero_optimization": {',
        "é",
        "😀",
        "\ufeff",
        "distributed_type: ",
        "fsdp_",
        "%YAML 1.1\n",
        "? ",
        "|\n  x\n",
        ">-\n",
    ]
)
JUNK = st.binary(max_size=64).map(lambda b: b.decode("latin-1"))
HUGE = st.integers(1_000, 200_000).map(lambda n: "x" * n)
TEXT = st.one_of(FRAGMENTS, FRAGMENTS, FRAGMENTS, st.text(max_size=20), JUNK, HUGE, st.just(""))
POS = st.builds(types.Position, st.integers(0, 40), st.integers(0, 300))
EDIT = st.one_of(
    st.builds(
        lambda a, b, t: types.TextDocumentContentChangePartial(
            range=types.Range(*sorted([a, b], key=lambda p: (p.line, p.character))), text=t
        ),
        POS,
        POS,
        TEXT,
    ),
    st.builds(lambda t: types.TextDocumentContentChangeWholeDocument(text=t), st.lists(TEXT, max_size=8).map("".join)),
)


@pytest_lsp.fixture(
    config=ClientServerConfig(server_command=[sys.executable, "-m", "accelconf", "lsp"]),
    params=["visual-studio-code", "neovim"],
    scope="module",
)
async def client(request: pytest.FixtureRequest, lsp_client: LanguageClient, tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("fuzz")
    init = await lsp_client.initialize_session(
        types.InitializeParams(capabilities=client_capabilities(request.param), root_uri=root.as_uri())
    )
    lsp_client.root = root  # type: ignore[attr-defined]
    # Every publication, kept: pytest-lsp's wait_for_notification holds one future per method, so a
    # publication arriving between two waits (two in one read) would be lost.
    published: dict[str, list[types.PublishDiagnosticsParams]] = {}
    features = lsp_client.protocol.fm.features
    keep = features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS]

    def record(params: types.PublishDiagnosticsParams) -> object:
        published.setdefault(params.uri, []).append(params)
        return keep(params)

    features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = record
    lsp_client.published = published  # type: ignore[attr-defined]
    lsp_client.encoding = init.capabilities.position_encoding or "utf-16"  # type: ignore[attr-defined]
    yield
    await lsp_client.shutdown_session()


_count = [0]


def _key(diags: list[types.Diagnostic]) -> list[tuple[object, ...]]:
    return sorted(
        (
            d.range.start.line,
            d.range.start.character,
            d.range.end.line,
            d.range.end.character,
            str(d.code),
            d.severity,
            d.message,
        )
        for d in diags
    )


async def _published(client: LanguageClient, uri: str, version: int) -> list[types.Diagnostic]:
    """The diagnostics first published for ``version`` of ``uri`` (the caller's timeout bounds the wait)."""
    while True:
        for params in client.published.get(uri, []):  # type: ignore[attr-defined]
            if params.version == version:
                return list(params.diagnostics)
        await asyncio.sleep(0.01)


@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    edits=st.lists(st.lists(EDIT, min_size=1, max_size=4), min_size=1, max_size=12),
    where=POS,
    name=st.sampled_from(sorted(STARTS)),
)
async def test_server_survives_edit_sequences(
    client: LanguageClient, edits: list[list[types.TextDocumentContentChangeEvent]], where: types.Position, name: str
) -> None:
    _count[0] += 1
    uri = (client.root / f"{_count[0]}-{name}").as_uri()  # type: ignore[attr-defined]
    start = STARTS[name]
    assert document_kind(name, start) is not None
    mirror = TextDocument(uri, start, position_codec=PositionCodec(types.PositionEncodingKind(client.encoding)))  # type: ignore[attr-defined]
    client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(uri, "yaml", 1, start)))
    # The config is published first: later versions are then always published (an edit burst that
    # turns it into something else clears it); a document never published stays unspoken of.
    await asyncio.wait_for(_published(client, uri, 1), 60)
    last = 1
    for version, changes in enumerate(edits, start=2):
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                types.VersionedTextDocumentIdentifier(uri=uri, version=version), list(changes)
            )
        )
        for change in changes:
            mirror.apply_change(change)
        last = version
    final = await asyncio.wait_for(_published(client, uri, last), 60)
    # The same text, opened fresh: the server publishes only for a config (else it says nothing).
    fresh_uri = (client.root / f"{_count[0]}-fresh" / name).as_uri()  # type: ignore[attr-defined]
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(types.TextDocumentItem(fresh_uri, "yaml", 1, mirror.source))
    )
    if document_kind(name, mirror.source) is not None:
        fresh = await asyncio.wait_for(_published(client, fresh_uri, 1), 60)
        client.text_document_did_close(types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(fresh_uri)))
        assert _key(final) == _key(fresh)
    else:
        client.text_document_did_close(types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(fresh_uri)))
        # Not a config: nothing, or (text that no longer parses, once a config) its parse error.
        assert [d.code for d in final] in ([], ["parse-error"]), final
    doc = types.TextDocumentIdentifier(uri)
    await asyncio.wait_for(client.text_document_hover_async(types.HoverParams(doc, where)), 60)
    await asyncio.wait_for(client.text_document_completion_async(types.CompletionParams(doc, where)), 60)
    await asyncio.wait_for(client.text_document_document_symbol_async(types.DocumentSymbolParams(doc)), 60)
    await asyncio.wait_for(
        client.text_document_formatting_async(
            types.DocumentFormattingParams(doc, types.FormattingOptions(tab_size=2, insert_spaces=True))
        ),
        60,
    )
    client.text_document_did_close(types.DidCloseTextDocumentParams(doc))


async def test_still_alive_after_fuzzing(client: LanguageClient) -> None:
    uri = (client.root / "final" / "default_config.yaml").as_uri()  # type: ignore[attr-defined]
    client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(uri, "yaml", 1, START)))
    diagnostics = await asyncio.wait_for(_published(client, uri, 1), 60)
    assert "unknown-nested-key" in [d.code for d in diagnostics]
    hover = await asyncio.wait_for(
        client.text_document_hover_async(types.HoverParams(types.TextDocumentIdentifier(uri), types.Position(4, 4))), 60
    )
    assert hover is not None and "FSDP version" in hover.contents.value  # type: ignore[union-attr]
