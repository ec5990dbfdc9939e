"""``accelconf lsp`` with ``accelconf.model`` set: ``model-wrap-class`` is a diagnostic with a quick
fix naming the model's layer class. The real server runs in a subprocess (pytest-lsp)."""

from __future__ import annotations

import asyncio
import json
import sys

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from tests.unit.environment.test_wrapclass import QWEN2, fsdp

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_lsp.fixture(
    config=ClientServerConfig(server_command=[sys.executable, "-m", "accelconf", "lsp"]), scope="module"
)
async def client(lsp_client: LanguageClient, tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("ws")
    (root / "qwen").mkdir()
    (root / "qwen" / "config.json").write_text(json.dumps(QWEN2))
    await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities("visual-studio-code"),
            root_uri=root.as_uri(),
            initialization_options={"model": str(root / "qwen")},
        )
    )
    lsp_client.root = root  # type: ignore[attr-defined]
    yield
    await lsp_client.shutdown_session()


async def test_server_with_the_model_setting_reports_the_wrap_class_and_fixes_it(client: LanguageClient) -> None:
    uri = (client.root / "train.yaml").as_uri()  # type: ignore[attr-defined]
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            types.TextDocumentItem(uri=uri, language_id="yaml", version=1, text=fsdp("LlamaDecoderLayer"))
        )
    )
    await asyncio.wait_for(client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS), 10)
    diag = next(d for d in client.diagnostics[uri] if d.code == "model-wrap-class")
    assert diag.severity == types.DiagnosticSeverity.Error and diag.range.start.line == 5
    assert "Could not find the transformer layer class LlamaDecoderLayer in the model." in diag.message
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            types.TextDocumentIdentifier(uri), diag.range, types.CodeActionContext(diagnostics=[diag])
        )
    )
    fix = next(a for a in actions or [] if isinstance(a, types.CodeAction) and a.kind == types.CodeActionKind.QuickFix)
    assert fix.edit is not None and fix.edit.changes is not None
    (edit,) = fix.edit.changes[uri]
    assert "Qwen2DecoderLayer" in edit.new_text
