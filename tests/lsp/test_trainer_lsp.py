"""The language server on Trainer / TRL arguments files: validate's findings as diagnostics at
their ranges, through the one dispatch; a broken or half-typed file never stops the server."""

from __future__ import annotations

import asyncio
import sys

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

pytestmark = pytest.mark.asyncio(loop_scope="module")

ARGS = """\
output_dir: out
learning_rat: 1.0e-5
fsdp: true
fsdp_config:
  fsdp_offload_params: true
"""


@pytest_lsp.fixture(
    config=ClientServerConfig(server_command=[sys.executable, "-m", "accelconf", "lsp"]), scope="module"
)
async def client(lsp_client: LanguageClient, tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("ws")
    await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities("visual-studio-code"),
            root_uri=root.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name="ws")],
        )
    )
    lsp_client.root = root  # type: ignore[attr-defined]
    yield
    await lsp_client.shutdown_session()


async def _open(client: LanguageClient, name: str, text: str) -> str:
    uri = (client.root / name).as_uri()  # type: ignore[attr-defined]
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            types.TextDocumentItem(
                uri=uri, language_id="json" if name.endswith("json") else "yaml", version=1, text=text
            )
        )
    )
    await asyncio.wait_for(client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS), 10)
    return uri


async def test_arguments_file_diagnostics_at_their_ranges(client: LanguageClient) -> None:
    uri = await _open(client, "sft.yaml", ARGS)
    diags = {d.code: d for d in client.diagnostics[uri]}
    unknown = diags["trainer-unknown-field"]
    assert unknown.severity == types.DiagnosticSeverity.Error
    assert (unknown.range.start.line, unknown.range.start.character) == (1, 0)
    offload = diags["trainer-fsdp-accelerate-name"]
    assert (offload.range.start.line, offload.range.start.character) == (4, 2)


async def test_fsdp_config_json_and_a_broken_edit_keep_the_server_alive(client: LanguageClient) -> None:
    text = '{\n  "fsdp_offload_params": true,\n  "use_orig_params": true\n}\n'
    uri = await _open(client, "fsdp_config.json", text)
    assert {d.code for d in client.diagnostics[uri]} == {"trainer-fsdp-accelerate-name", "trainer-fsdp-version-key"}
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            [types.TextDocumentContentChangeWholeDocument(text='{\n  "fsdp_offload_params": tr')],
        )
    )
    await asyncio.wait_for(client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS), 10)
    again = await _open(client, "args2.yaml", ARGS)  # still answering
    assert client.diagnostics[again]
