"""The language server's document lifecycle, asserted: what it publishes on open, change, save and
close, for every transition between a config with errors, a clean config and a file that is not a
config. At each step the published list equals a fresh analysis of the same text by the library
(``api.check_document`` through the server's own protocol conversion), and close publishes an
empty list. The real server in a subprocess, driven by pytest-lsp.
"""

from __future__ import annotations

import asyncio
import sys

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from accelconf import api
from accelconf.text.document import load_text
from accelconf_lsp import protocol

pytestmark = pytest.mark.asyncio(loop_scope="module")

DIRTY = "distributed_type: FSDP\nmixed_precision: no\nnum_processes: 8\nfsdp_config:\n  fsdp_cpu_offload: true\n"
CLEAN = "distributed_type: FSDP\nmixed_precision: 'no'\nnum_processes: 8\nfsdp_config:\n  fsdp_offload_params: true\n"
OTHER_DIRTY = "distributed_type: multi_gpu\nnum_processes: 2\ngpu_ids: all\n"
NOT_A_CONFIG = "name: tests\non:\n  push:\njobs:\n  test:\n    runs-on: ubuntu-latest\n"
DS_DIRTY = '{\n  "train_batch_size": 16,\n  "zero_optimization": {"stage": 4}\n}\n'
DS_CLEAN = '{\n  "train_batch_size": 16,\n  "zero_optimization": {"stage": 3}\n}\n'
VERSION = "1.15"


@pytest_lsp.fixture(
    config=ClientServerConfig(server_command=[sys.executable, "-m", "accelconf", "lsp"]),
    params=["visual-studio-code", "neovim"],
    scope="module",
)
async def client(request: pytest.FixtureRequest, lsp_client: LanguageClient, tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("ws")
    init = await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities(request.param),
            root_uri=root.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name="ws")],
            initialization_options={"accelerateVersion": VERSION},
        )
    )
    lsp_client.root = root  # type: ignore[attr-defined]
    lsp_client.encoding = init.capabilities.position_encoding or "utf-16"  # type: ignore[attr-defined]
    yield
    await lsp_client.shutdown_session()


def _fresh(text: str, path: str, encoding: str) -> list[tuple]:
    """What a fresh analysis of ``text`` gives, as comparable tuples."""
    findings = api.check_document(load_text(text, path), None, accelerate_version=VERSION)
    return _key(protocol.lsp_diagnostics(findings, text, encoding))


def _key(diags: list[types.Diagnostic]) -> list[tuple]:
    return sorted(
        (
            d.code,
            d.severity,
            d.message,
            d.range.start.line,
            d.range.start.character,
            d.range.end.line,
            d.range.end.character,
        )
        for d in diags
    )


_n = [0]


def _uri(client: LanguageClient, name: str) -> tuple[str, str]:
    _n[0] += 1
    folder = client.root / f"l{_n[0]}"  # type: ignore[attr-defined]
    folder.mkdir()
    return (folder / name).as_uri(), str(folder / name)


async def _next_for(client: LanguageClient, uri: str) -> types.PublishDiagnosticsParams:
    while True:
        params = await asyncio.wait_for(client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS), 10)
        if params.uri == uri:
            return params


def _open(client: LanguageClient, uri: str, text: str, version: int = 1) -> None:
    lang = "json" if uri.endswith(".json") else "yaml"
    client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(uri, lang, version, text)))


def _change(client: LanguageClient, uri: str, version: int, text: str) -> None:
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            [types.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )


async def _expect(client: LanguageClient, uri: str, path: str, text: str, version: int | None) -> None:
    params = await _next_for(client, uri)
    assert params.version == version
    assert _key(list(params.diagnostics)) == _fresh(text, path, client.encoding)  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "name, texts",
    [
        ("train.yaml", [DIRTY, CLEAN, OTHER_DIRTY, DIRTY]),
        ("ds_config.json", [DS_DIRTY, DS_CLEAN, DS_DIRTY]),
    ],
)
async def test_open_change_save_close_publish_what_a_fresh_analysis_gives(
    client: LanguageClient, name: str, texts: list[str]
) -> None:
    uri, path = _uri(client, name)
    _open(client, uri, texts[0])
    await _expect(client, uri, path, texts[0], 1)
    for version, text in enumerate(texts[1:], start=2):
        _change(client, uri, version, text)
        await _expect(client, uri, path, text, version)
    # saving publishes the current version again, unchanged
    client.text_document_did_save(types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(uri)))
    await _expect(client, uri, path, texts[-1], len(texts))
    client.text_document_did_close(types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri)))
    closed = await _next_for(client, uri)
    assert list(closed.diagnostics) == [] and closed.version is None
    # reopened, it is analysed afresh
    _open(client, uri, texts[0])
    await _expect(client, uri, path, texts[0], 1)
    assert _fresh(texts[0], path, client.encoding)  # type: ignore[attr-defined]  # the dirty texts do have findings


async def test_a_config_that_stops_being_one_is_cleared_and_a_file_that_never_was_gets_nothing(
    client: LanguageClient,
) -> None:
    uri, path = _uri(client, "train.yaml")
    _open(client, uri, DIRTY)
    await _expect(client, uri, path, DIRTY, 1)
    _change(client, uri, 2, NOT_A_CONFIG)
    cleared = await _next_for(client, uri)
    assert (cleared.version, list(cleared.diagnostics)) == (2, [])
    _change(client, uri, 3, CLEAN.replace("fsdp_offload_params", "fsdp_cpu_offload"))
    await _expect(client, uri, path, CLEAN.replace("fsdp_offload_params", "fsdp_cpu_offload"), 3)

    never, _ = _uri(client, "ci.yaml")
    _open(client, never, NOT_A_CONFIG)
    _change(client, never, 2, NOT_A_CONFIG + "# edited\n")
    client.text_document_did_close(types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(never)))
    # a config opened after those: its diagnostics arrive, and nothing ever came for the other file
    marker, mpath = _uri(client, "marker.yaml")
    _open(client, marker, DIRTY)
    await _expect(client, marker, mpath, DIRTY, 1)
    assert never not in client.diagnostics


async def test_a_parse_error_and_its_repair_publish_in_order(client: LanguageClient) -> None:
    uri, path = _uri(client, "train.yaml")
    _open(client, uri, CLEAN)
    await _expect(client, uri, path, CLEAN, 1)
    _change(client, uri, 2, CLEAN + "fsdp_config: [\n")
    broken = await _next_for(client, uri)
    assert broken.version == 2 and [d.code for d in broken.diagnostics] in (["parse-error"], ["duplicate-key"])
    _change(client, uri, 3, CLEAN)
    await _expect(client, uri, path, CLEAN, 3)
