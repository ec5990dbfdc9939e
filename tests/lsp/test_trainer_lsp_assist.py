"""The language server's completion and hover on Trainer / TRL arguments files and ``fsdp_config``
JSON, through the real server: the lists the library gives, at the client's positions, in the
release the settings name (else the installed one, as the CLI's default)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

from accelconf.trainer import fields, releases

# the server and the way a file is opened are the diagnostics tests' (a fresh server for this module)
from tests.lsp.test_trainer_lsp import _open, client  # noqa: F401

pytestmark = pytest.mark.asyncio(loop_scope="module")


async def _until(done: Callable[[], bool], seconds: float = 20) -> None:
    for _ in range(int(seconds / 0.05)):
        if done():
            return
        await asyncio.sleep(0.05)
    raise AssertionError("the server did not publish in time")


async def _change(client: LanguageClient, uri: str, text: str, version: int = 2) -> None:
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            [types.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )


async def _labels(client: LanguageClient, uri: str, line: int, character: int) -> set[str]:
    got = await client.text_document_completion_async(
        types.CompletionParams(types.TextDocumentIdentifier(uri), types.Position(line, character))
    )
    items = got.items if isinstance(got, types.CompletionList) else (got or [])
    return {i.label for i in items}


async def test_completion_in_an_arguments_yaml_lists_the_installed_releases_fields(client: LanguageClient) -> None:
    uri = await _open(client, "train.yaml", "output_dir: out\nlearning_rate: 1.0e-5\n\nsave_strategy: \n")
    want = set(releases.fields(fields.version())) - {"output_dir", "learning_rate", "save_strategy"}
    assert await _labels(client, uri, 2, 0) == want
    assert await _labels(client, uri, 3, 15) == {"'no'", "steps", "epoch", "best"}


async def test_a_file_of_only_output_dir_is_an_arguments_file_that_completes(client: LanguageClient) -> None:
    # a new file being started: one field every release shares, no second one to tell the kind by
    uri = await _open(client, "start.yaml", "output_dir: out\n\n")
    assert await _labels(client, uri, 1, 0) == set(releases.fields(fields.version())) - {"output_dir"}


async def test_hover_on_a_field_gives_its_help_type_and_releases(client: LanguageClient) -> None:
    uri = await _open(client, "hover.yaml", "output_dir: out\nlearning_rate: 1.0e-5\n")
    got = await client.text_document_hover_async(
        types.HoverParams(types.TextDocumentIdentifier(uri), types.Position(1, 3))
    )
    assert got is not None and isinstance(got.contents, types.MarkupContent)
    md = got.contents.value
    assert md.startswith("**learning_rate** · TrainingArguments · float")
    assert (releases.field_help("learning_rate") or "") in md and "transformers " in md
    assert got.range is not None and (got.range.start.character, got.range.end.character) == (0, 13)


async def test_a_half_typed_arguments_file_keeps_its_completion(client: LanguageClient) -> None:
    uri = await _open(client, "typing.yaml", "output_dir: out\nbf16: true\n")
    await _change(client, uri, "output_dir: out\nbf16: true\nlr_sch")
    await _until(lambda: bool(client.diagnostics.get(uri)))  # the parse error is shown meanwhile
    assert "lr_scheduler_type" in await _labels(client, uri, 2, 6)


async def test_fsdp_config_json_completes_the_keys_transformers_reads(client: LanguageClient) -> None:
    uri = await _open(client, "fsdp_config.json", '{\n  "version": 2,\n  "cpu_offload": true\n}\n')
    await _change(client, uri, '{\n  "version": 2,\n  ""\n}\n')  # a key being typed: the text does not parse
    await _until(lambda: bool(client.diagnostics.get(uri)))
    got = await _labels(client, uri, 2, 3)
    read = {k for k in fields.fsdp_keys() if k not in fields.FSDP1_ONLY} - {"version"}
    assert got == read | {"fsdp_" + k for k in read}


async def test_the_transformers_version_setting_picks_the_release_completion_follows(client: LanguageClient) -> None:
    old = releases.RELEASES[0]
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"accelconf": {"transformersVersion": old}})
    )
    uri = await _open(client, "old.yaml", "output_dir: out\nlearning_rate: 1.0e-5\nbf16: true\n\n")
    gone = sorted(set(releases.fields(old)) - set(releases.fields()))[0]  # a field a later release removed
    old_field = await _open(client, "gone.yaml", f"output_dir: out\nlearning_rate: 1.0e-5\n{gone}: null\n")
    try:
        assert await _labels(client, uri, 3, 0) == set(releases.fields(old)) - {"output_dir", "learning_rate", "bf16"}
        await _until(lambda: old_field in client.diagnostics)
        assert "trainer-removed-field" not in {d.code for d in client.diagnostics[old_field]}  # that release has it
    finally:
        client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={"accelconf": {}}))
    # back to the default release: the same file's field is a removed one, and the server says so
    await _until(lambda: "trainer-removed-field" in {d.code for d in client.diagnostics[old_field]})
