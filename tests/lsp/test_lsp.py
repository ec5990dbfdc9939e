"""End-to-end tests of ``accelconf lsp``: the real server in a subprocess, driven by pytest-lsp.

Each test runs under the captured client capabilities of both VS Code and Neovim, so completion
rendering (snippets, markdown) and position encodings (UTF-16 for VS Code, UTF-8 for Neovim 0.11)
are exercised as those editors would. The tests wait for notifications; none sleeps.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

CONFIG = """\
# training config
compute_environment: LOCAL_MACHINE
distributed_type: FSDP
mixed_precision: no
num_processes: 8
fsdp_config:
  fsdp_cpu_offload: true  # offload to the CPU
  fsdp_sharding_strategy: FULL_SHARD
"""

pytestmark = pytest.mark.asyncio(loop_scope="module")

CLIENTS = ["visual-studio-code", "neovim"]


def _cmd() -> list[str]:
    return [sys.executable, "-m", "accelconf", "lsp"]


# One server per client kind for the module: starting one costs seconds (lsprotocol's import).
@pytest_lsp.fixture(config=ClientServerConfig(server_command=_cmd()), params=CLIENTS, scope="module")
async def client(request: pytest.FixtureRequest, lsp_client: LanguageClient, tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("ws")
    init = await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities(request.param),
            root_uri=root.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name="ws")],
            initialization_options={"accelerateVersion": "1.15"},
        )
    )
    lsp_client.root = root  # type: ignore[attr-defined]
    lsp_client.encoding = init.capabilities.position_encoding or "utf-16"  # type: ignore[attr-defined]
    yield
    await lsp_client.shutdown_session()


_opened = [0]


async def _open(client: LanguageClient, name: str, text: str) -> str:
    """Open a new document (in a fresh folder, so tests sharing a server never share a URI)."""
    _opened[0] += 1
    folder = client.root / f"d{_opened[0]}"  # type: ignore[attr-defined]
    folder.mkdir()
    uri = (folder / name).as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            types.TextDocumentItem(
                uri=uri, language_id="yaml" if name.endswith(("yaml", "yml")) else "json", version=1, text=text
            )
        )
    )
    await asyncio.wait_for(client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS), 10)
    return uri


def _pos(text: str, needle: str, delta: int = 0) -> types.Position:
    before = text[: text.index(needle) + delta]
    return types.Position(before.count("\n"), len(before) - (before.rfind("\n") + 1))


async def test_diagnostics_have_exact_ranges(client: LanguageClient) -> None:
    uri = await _open(client, "train.yaml", CONFIG)
    diags = {d.code: d for d in client.diagnostics[uri]}
    assert diags["yaml-bool-value"].range == types.Range(types.Position(3, 17), types.Position(3, 19))
    assert diags["yaml-bool-value"].severity == types.DiagnosticSeverity.Error
    unknown = diags["unknown-nested-key"]
    assert unknown.range == types.Range(types.Position(6, 2), types.Position(6, 18))
    assert "fsdp_offload_params" in unknown.message
    assert all(d.source == "accelconf" for d in client.diagnostics[uri])


async def test_latest_version_only_after_a_burst(client: LanguageClient) -> None:
    uri = await _open(client, "train.yaml", CONFIG)
    text = CONFIG
    for version in range(2, 7):
        text = (
            text.replace("mixed_precision: no", "mixed_precision: 'no'")
            if version == 6
            else text + f"# edit {version}\n"
        )
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                [types.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )
    while True:
        await asyncio.wait_for(client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS), 10)
        if all(d.code != "yaml-bool-value" for d in client.diagnostics[uri]):
            break
    assert [d.code for d in client.diagnostics[uri]] == ["unknown-nested-key"]


async def test_completion_in_fsdp_config(client: LanguageClient) -> None:
    text = CONFIG + "  \n"
    uri = await _open(client, "train.yaml", text)
    result = await client.text_document_completion_async(
        types.CompletionParams(types.TextDocumentIdentifier(uri), types.Position(8, 2))
    )
    assert isinstance(result, types.CompletionList)
    items = {i.label: i for i in result.items}
    assert "fsdp_offload_params" in items
    assert "fsdp_sharding_strategy" not in items  # already present
    assert "mixed_precision" not in items  # another section's key
    item = items["fsdp_offload_params"]
    assert isinstance(item.documentation, types.MarkupContent)
    assert "Offload parameters" in item.documentation.value
    assert isinstance(item.text_edit, types.TextEdit) and item.text_edit.new_text == "fsdp_offload_params: "


async def test_enum_completion_quotes_no(client: LanguageClient) -> None:
    text = CONFIG.replace("mixed_precision: no", "mixed_precision: ")
    uri = await _open(client, "train.yaml", text)
    result = await client.text_document_completion_async(
        types.CompletionParams(
            types.TextDocumentIdentifier(uri),
            types.Position(3, 17),
            types.CompletionContext(types.CompletionTriggerKind.TriggerCharacter, " "),
        )
    )
    assert isinstance(result, types.CompletionList)
    new_texts = [i.text_edit.new_text for i in result.items if isinstance(i.text_edit, types.TextEdit)]
    assert new_texts[:4] == ["'no'", "fp16", "bf16", "fp8"]


async def test_snippet_for_new_fsdp_block(client: LanguageClient) -> None:
    text = "distributed_type: FSDP\nfs"
    uri = await _open(client, "default_config.yaml", text)
    result = await client.text_document_completion_async(
        types.CompletionParams(types.TextDocumentIdentifier(uri), types.Position(1, 2))
    )
    assert isinstance(result, types.CompletionList)
    snippet = next(i for i in result.items if i.label == "fsdp_config block")
    assert snippet.text_edit is not None and "fsdp_version" in snippet.text_edit.new_text


async def test_hover_shows_env_and_flag(client: LanguageClient) -> None:
    text = CONFIG.replace("fsdp_cpu_offload", "fsdp_offload_params")
    uri = await _open(client, "train.yaml", text)
    hover = await client.text_document_hover_async(
        types.HoverParams(types.TextDocumentIdentifier(uri), _pos(text, "fsdp_offload_params", 5))
    )
    assert hover is not None and isinstance(hover.contents, types.MarkupContent)
    md = hover.contents.value
    assert "`FSDP_OFFLOAD_PARAMS`" in md and "`--fsdp_offload_params`" in md
    assert "Effective value:** `true`" in md
    assert hover.range == types.Range(types.Position(6, 2), types.Position(6, 21))


async def test_code_action_fixes_unknown_key(client: LanguageClient) -> None:
    uri = await _open(client, "train.yaml", CONFIG)
    diag = next(d for d in client.diagnostics[uri] if d.code == "unknown-nested-key")
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            types.TextDocumentIdentifier(uri), diag.range, types.CodeActionContext(diagnostics=[diag])
        )
    )
    assert actions
    fix = next(a for a in actions if isinstance(a, types.CodeAction) and a.kind == types.CodeActionKind.QuickFix)
    assert "fsdp_offload_params" in fix.title
    assert fix.edit is not None and fix.edit.changes is not None
    (edit,) = fix.edit.changes[uri]
    assert edit.range == diag.range and edit.new_text == "fsdp_offload_params"


async def test_migrate_to_fsdp2_action(client: LanguageClient) -> None:
    uri = await _open(client, "train.yaml", CONFIG)
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            types.TextDocumentIdentifier(uri),
            types.Range(types.Position(0, 0), types.Position(0, 0)),
            types.CodeActionContext(diagnostics=[]),
        )
    )
    titles = [a.title for a in actions or []]
    assert "Migrate to FSDP2" in titles


async def test_formatting_keeps_comments(client: LanguageClient) -> None:
    text = CONFIG.replace("distributed_type: FSDP", "distributed_type: fsdp")
    uri = await _open(client, "train.yaml", text)
    edits = await client.text_document_formatting_async(
        types.DocumentFormattingParams(
            types.TextDocumentIdentifier(uri), types.FormattingOptions(tab_size=2, insert_spaces=True)
        )
    )
    assert edits and len(edits) == 1
    new = edits[0].new_text
    assert "# training config" in new and "# offload to the CPU" in new
    assert new != text


async def test_document_symbols(client: LanguageClient) -> None:
    uri = await _open(client, "train.yaml", CONFIG)
    syms = await client.text_document_document_symbol_async(
        types.DocumentSymbolParams(types.TextDocumentIdentifier(uri))
    )
    assert syms is not None
    names = [s.name for s in syms]
    assert names[:3] == ["compute_environment", "distributed_type", "mixed_precision"]
    fsdp = next(s for s in syms if s.name == "fsdp_config")
    assert isinstance(fsdp, types.DocumentSymbol) and [c.name for c in fsdp.children or []][0] == "fsdp_cpu_offload"


async def test_parse_error_is_one_diagnostic(client: LanguageClient) -> None:
    uri = await _open(client, "default_config.yaml", "distributed_type: [FSDP\nmixed_precision: fp16\n")
    (diag,) = client.diagnostics[uri]
    assert diag.code == "parse-error" and diag.severity == types.DiagnosticSeverity.Error


async def test_other_yaml_gets_nothing(client: LanguageClient) -> None:
    _opened[0] += 1
    folder = client.root / f"d{_opened[0]}"  # type: ignore[attr-defined]
    folder.mkdir()
    other = (folder / "compose.yaml").as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            types.TextDocumentItem(
                uri=other, language_id="yaml", version=1, text="services:\n  web:\n    image: nginx\n"
            )
        )
    )
    hover = await client.text_document_hover_async(
        types.HoverParams(types.TextDocumentIdentifier(other), types.Position(0, 2))
    )
    assert hover is None
    ours = await _open(client, "default_config.yaml", CONFIG)  # handled after the other document
    assert ours in client.diagnostics and other not in client.diagnostics


async def test_deepspeed_json(client: LanguageClient) -> None:
    text = '{\n  "train_batch_size": 16,\n  "zero_optimization": {"stage": 3, "overlap_com": true}\n}\n'
    uri = await _open(client, "ds_config.json", text)
    assert any("overlap_com" in d.message for d in client.diagnostics[uri])
    hover = await client.text_document_hover_async(
        types.HoverParams(types.TextDocumentIdentifier(uri), _pos(text, '"stage"', 2))
    )
    assert hover is not None and "ZeRO stage" in hover.contents.value  # type: ignore[union-attr]


@pytest_lsp.fixture(config=ClientServerConfig(server_command=_cmd()), params=CLIENTS, scope="module")
async def bad_client(
    request: pytest.FixtureRequest, lsp_client: LanguageClient, tmp_path_factory: pytest.TempPathFactory
):
    root = tmp_path_factory.mktemp("ws")
    await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities(request.param),
            root_uri=root.as_uri(),
            initialization_options={
                "accelerateVersion": 1.15,
                "disabledRules": "unknown-key",
                "target": str(root / "missing.yaml"),
            },
        )
    )
    lsp_client.root = root  # type: ignore[attr-defined]
    yield
    await lsp_client.shutdown_session()


async def test_invalid_settings_fall_back_with_a_message(bad_client: LanguageClient) -> None:
    uri = await _open(bad_client, "train.yaml", CONFIG)
    text = " ".join(m.message for m in bad_client.messages)
    assert "accelerateVersion" in text and "disabledRules" in text and "target" in text
    assert {d.code for d in bad_client.diagnostics[uri]} >= {"yaml-bool-value", "unknown-nested-key"}


@pytest_lsp.fixture(config=ClientServerConfig(server_command=_cmd()), scope="module")
async def typo_client(lsp_client: LanguageClient, tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("ws")
    await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities("visual-studio-code"),
            root_uri=root.as_uri(),
            initialization_options={"disabledRules": ["yaml-bool-vaule", "unknown-nested-key"]},
        )
    )
    lsp_client.root = root  # type: ignore[attr-defined]
    yield
    await lsp_client.shutdown_session()


async def test_an_unknown_disabled_rule_is_shown_with_the_nearest_id_and_the_server_keeps_working(
    typo_client: LanguageClient,
) -> None:
    uri = await _open(typo_client, "train.yaml", CONFIG)
    text = " ".join(m.message for m in typo_client.messages)
    assert "'yaml-bool-vaule' (did you mean 'yaml-bool-value'?)" in text
    codes = {d.code for d in typo_client.diagnostics[uri]}
    assert "yaml-bool-value" in codes and "unknown-nested-key" not in codes  # the known id is still disabled


@pytest_lsp.fixture(config=ClientServerConfig(server_command=_cmd()), scope="module")
async def target_client(lsp_client: LanguageClient, tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("ws")
    profile = root / "v100-node.yaml"
    profile.write_text('gpu: V100-32GB\ngpus_per_node: 4\nnum_machines: 1\ntorch_version: "2.6.0"\n')
    lsp_client.set_configuration(
        {"disabledRules": ["yaml-bool-value", "env-num-processes"], "target": str(profile)}, section="accelconf"
    )
    await lsp_client.initialize_session(
        types.InitializeParams(capabilities=client_capabilities("visual-studio-code"), root_uri=root.as_uri())
    )
    lsp_client.root = root  # type: ignore[attr-defined]
    yield
    await lsp_client.shutdown_session()


async def test_workspace_configuration_target_and_disabled_rules(target_client: LanguageClient) -> None:
    uri = await _open(target_client, "train.yaml", CONFIG.replace("mixed_precision: no", "mixed_precision: bf16"))
    for _ in range(3):
        if any(d.code == "env-bf16" for d in target_client.diagnostics[uri]):
            break
        await asyncio.wait_for(target_client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS), 10)
    bf16 = next(d for d in target_client.diagnostics[uri] if d.code == "env-bf16")
    assert "V100" in bf16.message and bf16.range.start == types.Position(3, 17)
    assert "env-num-processes" not in {d.code for d in target_client.diagnostics[uri]}


async def test_workspace_configuration_disables_rules(target_client: LanguageClient) -> None:
    uri = await _open(target_client, "train.yaml", CONFIG)
    for _ in range(3):
        if all(d.code != "yaml-bool-value" for d in target_client.diagnostics[uri]):
            break
        await asyncio.wait_for(target_client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS), 10)
    assert [d.code for d in target_client.diagnostics[uri]] == ["unknown-nested-key"]
    target_client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"accelconf": {"disabledRules": []}})
    )
    for _ in range(5):  # every open document is republished
        await asyncio.wait_for(target_client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS), 10)
        if "yaml-bool-value" in {d.code for d in target_client.diagnostics[uri]}:
            break
    assert "yaml-bool-value" in {d.code for d in target_client.diagnostics[uri]}
    # Put the fixture's settings back (target included): the tests sharing this server run in any order.
    profile = target_client.root / "v100-node.yaml"  # type: ignore[attr-defined]
    target_client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(
            settings={"accelconf": {"disabledRules": ["yaml-bool-value", "env-num-processes"], "target": str(profile)}}
        )
    )
    for _ in range(5):
        await asyncio.wait_for(target_client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS), 10)
        if "yaml-bool-value" not in {d.code for d in target_client.diagnostics[uri]}:
            break


# -- which documents the server speaks about ---------------------------------------------

RECOGNIZE = Path(__file__).resolve().parents[1] / "data" / "recognize"
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


async def _wait_version(client: LanguageClient, uri: str, version: int) -> list[types.Diagnostic]:
    """Wait for the diagnostics the server publishes for ``version`` of ``uri``."""
    while True:
        params = await asyncio.wait_for(client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS), 10)
        if params.uri == uri and params.version == version:
            return list(params.diagnostics)


def _change(client: LanguageClient, uri: str, version: int, text: str) -> None:
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            [types.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )


async def test_non_config_files_get_nothing(client: LanguageClient) -> None:
    others = sorted(p for p in (RECOGNIZE / "other").iterdir() if p.name != "trainer_state.json")
    uris = []
    for path in others:
        _opened[0] += 1
        folder = client.root / f"d{_opened[0]}"  # type: ignore[attr-defined]
        folder.mkdir()
        uri = (folder / path.name).as_uri()
        text = path.read_text(encoding="utf-8")
        client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                types.TextDocumentItem(
                    uri=uri, language_id="json" if path.suffix == ".json" else "yaml", version=1, text=text
                )
            )
        )
        doc = types.TextDocumentIdentifier(uri)
        # No completion noise, no hover, no actions, no formatting: the file is not ours.
        assert await client.text_document_completion_async(types.CompletionParams(doc, types.Position(1, 2))) is None
        assert await client.text_document_hover_async(types.HoverParams(doc, types.Position(1, 2))) is None
        assert (
            await client.text_document_formatting_async(
                types.DocumentFormattingParams(doc, types.FormattingOptions(tab_size=2, insert_spaces=True))
            )
            is None
        )
        uris.append(uri)
    ours = await _open(client, "train.yaml", (RECOGNIZE / "config" / "train.yaml").read_text(encoding="utf-8"))
    assert {d.code for d in client.diagnostics[ours]} >= {"yaml-bool-value", "unknown-nested-key"}
    assert not [u for u in uris if u in client.diagnostics]


@pytest.mark.parametrize("name", ["mistakes.yaml", "ds_zero3.json"])
async def test_examples_are_checked_whatever_their_name(client: LanguageClient, name: str) -> None:
    uri = await _open(client, "anything" + Path(name).suffix, (EXAMPLES / name).read_text(encoding="utf-8"))
    if name == "mistakes.yaml":
        assert len(client.diagnostics[uri]) >= 3
    else:
        assert list(client.diagnostics[uri]) == []  # a clean DeepSpeed file: published, and empty


async def test_diagnostics_cleared_when_the_document_becomes_clean(client: LanguageClient) -> None:
    uri = await _open(client, "train.yaml", CONFIG)
    assert client.diagnostics[uri]
    clean = CONFIG.replace("mixed_precision: no", "mixed_precision: 'no'").replace(
        "fsdp_cpu_offload", "fsdp_offload_params"
    )
    _change(client, uri, 2, clean)
    assert await _wait_version(client, uri, 2) == []
    assert list(client.diagnostics[uri]) == []
    _change(client, uri, 3, CONFIG)  # and back
    assert {d.code for d in await _wait_version(client, uri, 3)} >= {"yaml-bool-value"}


async def test_diagnostics_cleared_when_the_modeline_disables(client: LanguageClient) -> None:
    uri = await _open(client, "train.yaml", CONFIG)
    assert client.diagnostics[uri]
    _change(client, uri, 2, "# accelconf: disable\n" + CONFIG)
    assert await _wait_version(client, uri, 2) == []
    hover = await client.text_document_hover_async(
        types.HoverParams(types.TextDocumentIdentifier(uri), types.Position(2, 3))
    )
    assert hover is None


async def test_half_typed_config_keeps_being_checked(client: LanguageClient) -> None:
    uri = await _open(client, "train.yaml", CONFIG)
    _change(client, uri, 2, CONFIG + "fsdp_config: [\n")
    (diag,) = await _wait_version(client, uri, 2)
    assert diag.code in ("parse-error", "duplicate-key")


async def test_migrate_offered_only_where_fsdp_is_used(client: LanguageClient) -> None:
    multi_gpu = CONFIG.replace("distributed_type: FSDP", "distributed_type: MULTI_GPU")
    for text, offered in (
        (multi_gpu, False),
        (CONFIG, True),
        (CONFIG.replace("FSDP", "fsdp"), False),
        (CONFIG.replace("fsdp_config:\n", "fsdp_config:\n  fsdp_version: 2\n"), False),
    ):
        uri = await _open(client, "train.yaml", text)
        actions = await client.text_document_code_action_async(
            types.CodeActionParams(
                types.TextDocumentIdentifier(uri),
                types.Range(types.Position(0, 0), types.Position(0, 0)),
                types.CodeActionContext(diagnostics=[]),
            )
        )
        assert ("Migrate to FSDP2" in [a.title for a in actions or []]) is offered, text


def _apply(text: str, edits: list[types.TextEdit], encoding: str) -> str:
    """The text after the edits, applied as a client does (pygls' own document, same encoding)."""
    from pygls.workspace import PositionCodec, TextDocument

    doc = TextDocument("file:///x", text, position_codec=PositionCodec(types.PositionEncodingKind(encoding)))
    for e in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        doc.apply_change(types.TextDocumentContentChangePartial(range=e.range, text=e.new_text))
    return doc.source


@pytest.mark.parametrize(
    "text",
    [
        "\ufeffdistributed_type: fsdp\r\nmixed_precision: 'no'\r\n",
        "distributed_type: fsdp\r\nmixed_precision: 'no'",
        "\ufeffdistributed_type: fsdp\nnum_processes: 2  # two\tGPUs",
    ],
)
async def test_formatting_keeps_bom_crlf_and_missing_final_newline(client: LanguageClient, text: str) -> None:
    uri = await _open(client, "train.yaml", text)
    edits = await client.text_document_formatting_async(
        types.DocumentFormattingParams(
            types.TextDocumentIdentifier(uri), types.FormattingOptions(tab_size=2, insert_spaces=True)
        )
    )
    assert edits
    assert _apply(text, edits, client.encoding) == text.replace("fsdp", "FSDP")


async def test_no_cancel_chatter_on_stderr(tmp_path: Path) -> None:
    """A $/cancelRequest for an answered request (VS Code sends many) leaves stderr quiet."""
    uri = (tmp_path / "train.yaml").as_uri()
    messages = [
        {
            "id": 1,
            "method": "initialize",
            "params": {"processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {}},
        },
        {"method": "initialized", "params": {}},
        {
            "method": "textDocument/didOpen",
            "params": {"textDocument": {"uri": uri, "languageId": "yaml", "version": 1, "text": CONFIG}},
        },
        {
            "id": 2,
            "method": "textDocument/hover",
            "params": {"textDocument": {"uri": uri}, "position": {"line": 2, "character": 3}},
        },
        {"method": "$/cancelRequest", "params": {"id": 2}},
        {"method": "$/cancelRequest", "params": {"id": 99}},
        {"id": 3, "method": "shutdown"},
        {"method": "exit"},
    ]
    data = b"".join(
        b"Content-Length: %d\r\n\r\n%s" % (len(body), body)
        for body in (json.dumps({"jsonrpc": "2.0", **m}).encode() for m in messages)
    )
    proc = subprocess.run(_cmd(), input=data, capture_output=True, timeout=60)
    assert b'"id": 3' in proc.stdout or b'"id":3' in proc.stdout, proc.stderr
    assert b"Cancel notification" not in proc.stderr
