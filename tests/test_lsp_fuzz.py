"""The server survives any edit sequence: hypothesis drives the real ``accelconf lsp`` process.

Random incremental edits (YAML-ish fragments, binary junk, huge lines, ranges past the end of the
text) are sent as ``didChange``; after each sequence the server must still answer hover,
completion and formatting, and publish diagnostics for the latest version.
"""

from __future__ import annotations

import asyncio
import sys

import pytest
import pytest_lsp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

pytestmark = pytest.mark.asyncio(loop_scope="module")

START = """\
compute_environment: LOCAL_MACHINE
distributed_type: FSDP
mixed_precision: no
fsdp_config:
  fsdp_version: 2
  fsdp_cpu_offload: true  # typo
"""

FRAGMENTS = st.sampled_from([
    "fsdp_config:\n", "  fsdp_offload_params: true\n", "mixed_precision: ", "'no'", "NO", ":", "- ", "{", "}", "[", "]",
    '"', "'", "#", "\n", "\r\n", "\t", "  ", "&a ", "*a", "<<: *a\n", "!!python/object:os.system ", "---\n", "...\n",
    "deepspeed_config:\n  zero_stage: 3\n", '{"train_batch_size": 8, "zero_optimization": {', "é", "😀", "\ufeff",
    "distributed_type: ", "fsdp_", "%YAML 1.1\n", "? ", "|\n  x\n", ">-\n",
])
JUNK = st.binary(max_size=64).map(lambda b: b.decode("latin-1"))
HUGE = st.integers(1_000, 200_000).map(lambda n: "x" * n)
TEXT = st.one_of(FRAGMENTS, FRAGMENTS, FRAGMENTS, st.text(max_size=20), JUNK, HUGE, st.just(""))
POS = st.builds(types.Position, st.integers(0, 40), st.integers(0, 300))
EDIT = st.one_of(
    st.builds(lambda a, b, t: types.TextDocumentContentChangePartial(range=types.Range(*sorted([a, b], key=lambda p: (p.line, p.character))), text=t),
              POS, POS, TEXT),
    st.builds(lambda t: types.TextDocumentContentChangeWholeDocument(text=t), st.lists(TEXT, max_size=8).map("".join)),
)


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "accelconf", "lsp"]),
                    params=["visual-studio-code", "neovim"], scope="module")
async def client(request: pytest.FixtureRequest, lsp_client: LanguageClient, tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("fuzz")
    await lsp_client.initialize_session(types.InitializeParams(capabilities=client_capabilities(request.param), root_uri=root.as_uri()))
    lsp_client.root = root  # type: ignore[attr-defined]
    yield
    await lsp_client.shutdown_session()


_count = [0]


@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
@given(edits=st.lists(st.lists(EDIT, min_size=1, max_size=4), min_size=1, max_size=12), where=POS,
       name=st.sampled_from(["default_config.yaml", "accelerate.json", "ds_config.json"]))
async def test_server_survives_edit_sequences(client: LanguageClient, edits: list[list[types.TextDocumentContentChangeEvent]],
                                              where: types.Position, name: str) -> None:
    _count[0] += 1
    uri = (client.root / f"{_count[0]}-{name}").as_uri()  # type: ignore[attr-defined]
    client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(uri, "yaml", 1, START)))
    for version, changes in enumerate(edits, start=2):
        client.text_document_did_change(types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(uri=uri, version=version), list(changes)))
    doc = types.TextDocumentIdentifier(uri)
    await asyncio.wait_for(client.text_document_hover_async(types.HoverParams(doc, where)), 20)
    await asyncio.wait_for(client.text_document_completion_async(types.CompletionParams(doc, where)), 20)
    await asyncio.wait_for(client.text_document_document_symbol_async(types.DocumentSymbolParams(doc)), 20)
    await asyncio.wait_for(client.text_document_formatting_async(types.DocumentFormattingParams(
        doc, types.FormattingOptions(tab_size=2, insert_spaces=True))), 20)
    client.text_document_did_close(types.DidCloseTextDocumentParams(doc))


async def test_still_alive_after_fuzzing(client: LanguageClient) -> None:
    uri = (client.root / "final" / "default_config.yaml").as_uri()  # type: ignore[attr-defined]
    client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(uri, "yaml", 1, START)))
    while not any(d.code == "unknown-nested-key" for d in client.diagnostics.get(uri, ())):
        await asyncio.wait_for(client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS), 20)
    hover = await asyncio.wait_for(client.text_document_hover_async(types.HoverParams(
        types.TextDocumentIdentifier(uri), types.Position(4, 4))), 20)
    assert hover is not None and "FSDP version" in hover.contents.value  # type: ignore[union-attr]
