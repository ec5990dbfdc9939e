"""``accelconf lsp`` with ``accelconf.params`` set: the fit finding is a diagnostic, and hovering
zero_stage / fsdp_sharding_strategy / fsdp_offload_params / num_processes shows the per-GPU figure.
The real server runs in a subprocess (pytest-lsp); the hook itself is tested without one."""

from __future__ import annotations

import asyncio
import sys

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

pytestmark = pytest.mark.asyncio(loop_scope="module")

DDP = "distributed_type: MULTI_GPU\nmixed_precision: bf16\nnum_machines: 1\nnum_processes: 8\n"
ZERO2 = (
    "distributed_type: DEEPSPEED\nmixed_precision: bf16\nnum_machines: 1\nnum_processes: 8\n"
    "deepspeed_config:\n  zero_stage: 2\n"
)
FSDP = (
    "distributed_type: FSDP\nmixed_precision: bf16\nnum_processes: 8\nfsdp_config:\n"
    "  fsdp_sharding_strategy: FULL_SHARD\n  fsdp_offload_params: false\n"
)


@pytest_lsp.fixture(
    config=ClientServerConfig(server_command=[sys.executable, "-m", "accelconf", "lsp"]), scope="module"
)
async def client(lsp_client: LanguageClient, tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("ws")
    profile = root / "a100-node.yaml"
    profile.write_text("gpu: A100-80GB\ngpus_per_node: 8\nnum_machines: 1\n")
    await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities("visual-studio-code"),
            root_uri=root.as_uri(),
            initialization_options={"params": "8B", "target": str(profile)},
        )
    )
    lsp_client.root = root  # type: ignore[attr-defined]
    yield
    await lsp_client.shutdown_session()


async def _open(client: LanguageClient, name: str, text: str) -> str:
    folder = client.root / name.split(".")[0]  # type: ignore[attr-defined]
    folder.mkdir()
    uri = (folder / "train.yaml").as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(types.TextDocumentItem(uri=uri, language_id="yaml", version=1, text=text))
    )
    await asyncio.wait_for(client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS), 10)
    return uri


async def _hover(client: LanguageClient, uri: str, line: int) -> str:
    hover = await client.text_document_hover_async(
        types.HoverParams(types.TextDocumentIdentifier(uri), types.Position(line, 4))
    )
    assert hover is not None and isinstance(hover.contents, types.MarkupContent)
    return hover.contents.value


async def test_ddp_does_not_fit_is_a_diagnostic_and_hover_on_num_processes(client: LanguageClient) -> None:
    uri = await _open(client, "ddp.yaml", DDP)
    diag = next(d for d in client.diagnostics[uri] if d.code == "mem-gpu")
    assert diag.severity == types.DiagnosticSeverity.Error
    assert "179.6 GiB per GPU with DDP, bf16 on 8 GPUs; A100-80GB has 80.0 GiB" in diag.message
    md = await _hover(client, uri, 3)
    assert "**Memory per GPU** (8B parameters, DDP, bf16, 8 GPUs): **179.6 GiB** of A100-80GB" in md
    assert "does not fit" in md and "- `16 GPUs`: 179.6 GiB" in md  # DDP replicates: more GPUs do not help
    # the strategy table's rows that fit, cheapest first, as accelconf fit ranks them
    assert (
        "Strategies that fit here, cheapest first (`accelconf fit`):\n- FSDP1 SHARD_GRAD_OP: 31.0 GiB (39%), comm 1.0x"
        in md
    )


async def test_hover_on_zero_stage_lists_the_stages(client: LanguageClient) -> None:
    uri = await _open(client, "zero2.yaml", ZERO2)
    assert "mem-gpu" not in {d.code for d in client.diagnostics[uri]}
    md = await _hover(client, uri, 5)
    assert "**33.4 GiB** of A100-80GB 80.0 GiB (42%, fits)" in md and "CUDA context 0.6 GiB" in md
    assert "- `zero_stage: 0`: 150.7 GiB (188%)" in md and "- `zero_stage: 3`: 19.5 GiB (24%)" in md
    assert "Strategies that fit here" not in md  # only under a config that does not fit
    assert "ZeRO stage" in md  # the key's own documentation is still there


async def test_hover_on_fsdp_keys(client: LanguageClient) -> None:
    uri = await _open(client, "fsdp.yaml", FSDP)
    md = await _hover(client, uri, 4)
    assert "FSDP1 FULL_SHARD, bf16" in md and "- `NO_SHARD`:" in md and "- `HYBRID_SHARD_ZERO2`:" in md
    md = await _hover(client, uri, 5)
    assert "- `fsdp_offload_params: true`:" in md
    md = await _hover(client, uri, 1)  # mixed_precision: not a memory key
    assert "Memory per GPU" not in md
