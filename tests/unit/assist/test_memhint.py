"""accelconf.assist.memhint without a server: the language server's memory settings read or refused with
a message, and their findings joined with check_document's (tests/lsp/test_memory_lsp.py runs the server)."""

from __future__ import annotations

from accelconf.assist import memhint
from accelconf.environment.targets import target_from_args
from accelconf.text.document import load_text

DDP = "distributed_type: MULTI_GPU\nmixed_precision: bf16\nnum_machines: 1\nnum_processes: 8\n"


def test_settings_refused_with_a_message():
    assert memhint.from_settings({"accelerateVersion": "1.15"}) == (None, [])
    mem, problems = memhint.from_settings({"accelconf": {"params": "8B", "seqLen": 2048}})
    assert mem is not None and mem.seq_len is None and "go together" in problems[0]
    mem, problems = memhint.from_settings({"model": "/nonexistent/model"})
    assert mem is None and "not a folder" in problems[0]


def test_memory_findings_join_check_document_and_respect_disabled_rules():
    from accelconf.api import check_document

    mem, _ = memhint.from_settings({"params": "8B"})
    doc = load_text(DDP, "train.yaml")
    env = target_from_args(8, "A100-80GB")
    mem_rules = lambda found: [f.rule for f in found if f.rule.startswith("mem-")]  # noqa: E731
    assert mem_rules(check_document(doc, env, memory=mem)) == ["mem-gpu"]
    assert mem_rules(check_document(doc, env, memory=mem, disabled=("mem-gpu",))) == []
    assert mem_rules(check_document(doc, env)) == []
