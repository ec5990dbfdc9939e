"""One "validate, then check the environment" path: the API, the CLI and the language server give
the same findings for every corpus file with the same options (``accelconf.api.check_document``).

Options are the ones all three can express alike: a target machine profile and disabled rules.
The language server shows a finding about a referenced DeepSpeed JSON on the reference line
(``protocol.anchor_foreign``); the API's findings are compared after the same placement.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from lsprotocol import types
from pygls.workspace import Workspace

import accelconf
from accelconf.environment.targets import load_target
from accelconf.errors import InputError
from accelconf.text.document import decode, read_bytes
from accelconf_lsp import protocol
from accelconf_lsp.server import AccelconfLanguageServer
from tests.conftest import ROOT, corpus_files

FILES = corpus_files("accelerate") + corpus_files("deepspeed")
OPTIONS = {
    "v100": ("accelconf/environment/profiles/v100-node.yaml", (), None),
    "h100-some-off": (
        "accelconf/environment/profiles/h100-node.yaml",
        ("env-num-processes", "yaml-bool-value", "section-unused"),
        None,
    ),
    "v100-accelerate-1.6": ("accelconf/environment/profiles/v100-node.yaml", (), "1.6.0"),
}


def _row(f: accelconf.Finding) -> dict:
    return dict(f.to_json(), **({"file": f.path} if f.path else {}))


@pytest.fixture
def server():
    ls = AccelconfLanguageServer()
    ls.protocol._workspace = Workspace(None)  # what initialize sets up
    return ls


@pytest.mark.parametrize("option", sorted(OPTIONS))
def test_api_cli_and_language_server_agree_on_the_corpus(option, server, cli) -> None:
    if not FILES:
        pytest.skip("the shared corpus is not there")
    target, disabled, version = OPTIONS[option]
    target = str(ROOT / target)
    env = load_target(target)
    server.apply_settings({"target": target, "disabledRules": list(disabled), "accelerateVersion": version}, "test")
    compared = 0
    for path in FILES:
        if path.suffix not in (".yaml", ".yml", ".json"):
            continue
        # the CLI, from its JSON output (1-based positions, a "file" for a referenced file)
        argv = [
            "check",
            "--target",
            target,
            "--format",
            "json",
            *(a for r in disabled for a in ("--disable", r)),
            *(("--accelerate-version", version) if version else ()),
            str(path),
        ]
        got = cli(*argv)
        try:
            api = accelconf.check_config(str(path), env, disabled=disabled, accelerate_version=version)
        except InputError as exc:  # not JSON or YAML (a template): all refuse it, with a position
            assert got.code == 2 and json.loads(got.out)["files"][0]["error"]["line"] == exc.line, path
            continue
        assert got.code in (0, 1), (path, got.err)
        files = json.loads(got.out)["files"]
        cli_rows = files[0]["findings"]
        api_rows = [dict(_row(f), **({"file": f.path} if f.path and f.path != str(path) else {})) for f in api]
        for r in api_rows:
            if r.get("file") == str(path):
                r.pop("file")
        assert cli_rows == api_rows, path
        # the language server, through its own analysis of the open document
        text, _ = decode(read_bytes(str(path)), str(path))
        uri = path.as_uri()
        server.workspace.put_text_document(
            types.TextDocumentItem(uri, "yaml" if path.suffix != ".json" else "json", 1, text)
        )
        try:
            analysis = server.analyze(uri)
        finally:
            server.workspace.remove_text_document(uri)
        assert analysis is not None and analysis.doc is not None, path
        ref = analysis.doc.node(("deepspeed_config", "deepspeed_config_file"))
        anchor = (ref.line + 1, ref.col + 1, ref.end_line + 1, ref.end_col + 1) if ref is not None else None
        expected = protocol.anchor_foreign(api, server.path_of(uri), anchor)
        assert [_row(f) for f in analysis.findings] == [_row(f) for f in expected], path
        compared += 1
    assert compared >= 100


def test_check_config_and_cli_agree_on_a_two_machine_config_without_main_process_ip(tmp_path, cli) -> None:
    """A disagreement found once: check_config reported multi-node and env-rendezvous, the CLI
    only multi-node. Both now say it once, through validate's multi-node rule."""
    p = tmp_path / "two.yaml"
    p.write_text(
        "distributed_type: MULTI_GPU\nnum_machines: 2\nnum_processes: 16\nmachine_rank: 0\n"
        "main_process_port: 29500\nmixed_precision: fp16\n"
    )
    target = str(ROOT / "accelconf/environment/profiles/h100-node.yaml")
    env = load_target(target)
    api = accelconf.check_config(str(p), env)
    rules = [f.rule for f in api]
    assert "multi-node" in rules
    assert not any(f.rule == "env-rendezvous" and "main_process_ip" in f.message for f in api)
    got = cli("check", "--target", target, "--format", "json", str(p))
    assert [r["rule"] for r in json.loads(got.out)["files"][0]["findings"]] == rules


def test_convert_api_keeps_the_readers_findings() -> None:
    """accelconf.convert() used to drop env.never-read, which `accelconf convert` printed."""
    text = "ACCELERATE_MIXED_PRECISION=bf16\nACCELERATE_NUM_PROCESSES=2\n"
    _, findings = accelconf.convert(text, "yaml", fmt="env")
    assert [(f.rule, f.key, f.line) for f in findings if f.rule == "env.never-read"] == [
        ("env.never-read", "ACCELERATE_NUM_PROCESSES", 2)
    ]


def test_convert_cli_prints_the_same_findings(tmp_path, cli) -> None:
    p = tmp_path / "x.env"
    p.write_text("ACCELERATE_MIXED_PRECISION=bf16\nACCELERATE_NUM_PROCESSES=2\n")
    _, findings = accelconf.convert(str(p), "yaml")
    got = cli("to-yaml", str(p))
    printed = [ln for ln in got.err.splitlines() if ln]
    from accelconf.report import finding_line, unique

    assert printed == [finding_line(f, str(p)) for f in unique(findings)]  # FILE: ... for a whole-file finding
    assert any("[env.never-read]" in ln for ln in printed)
    assert os.path.basename(str(p)) in printed[0]


def test_no_target_means_validate_only(tmp_path) -> None:
    p = tmp_path / "c.yaml"
    p.write_text("distributed_type: multi_gpu\nnum_processes: 2\n")
    doc = accelconf.load(str(p))
    from accelconf.api import check_document

    assert check_document(doc) == accelconf.validate_config(doc)
    assert [f.rule for f in check_document(doc)] == ["enum-case"]
    assert Path(p).exists()


@pytest.mark.parametrize("name", ["fsdp2.yaml", "zero3.yaml", "mistakes.yaml"])
def test_check_document_reads_the_config_model_once(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """validate, the ``env-*`` checks and the memory question judge one Config, read once (every
    reader of an accelerate YAML/JSON builds it through ``model.from_data``)."""
    from accelconf.accelerate import model
    from accelconf.api import check_document
    from accelconf.environment import modelsize
    from accelconf.environment.memory import Question
    from accelconf.text.document import load_file

    doc = load_file(ROOT / "examples" / name)
    env = load_target(str(ROOT / "accelconf/environment/profiles/h100-node.yaml"))
    question = Question(modelsize.from_count("1B"))  # fits: no suggestion to place
    expected = check_document(doc, env, memory=question)
    built = []
    real = model.from_data
    monkeypatch.setattr(model, "from_data", lambda *a, **k: built.append(a) or real(*a, **k))
    assert check_document(doc, env, memory=question) == expected
    assert len(built) == 1
