"""The real-world corpus: byte-identical round trip, validation agrees with accelerate's launcher,
and fmt never changes what accelerate launches."""

from __future__ import annotations

from pathlib import Path

import pytest

from accelconf.accelerate.fmt import apply_edits, format_document
from accelconf.accelerate.validate import validate_document
from accelconf.errors import InputError
from accelconf.text.document import load_file
from tests.conftest import corpus_files, need_corpus
from tests.oracle.run import oracle

ACCEL = corpus_files("accelerate")
# Corpus files that are templates with placeholders (``BATCH_SIZE_PER_GPU``, ``${zero_stage}``), not
# JSON: the only files allowed not to parse. Named one by one.
PLACEHOLDER_TEMPLATES = frozenset(
    {
        "deepspeedai__DeepSpeedExamples__compression__bert__config__ds_config_TEMPLATE.json",
        "deepspeedai__DeepSpeedExamples__training__tensor_parallel__hf_integration__configs__ds_config_temp.json",
    }
)
DEEPSPEED = corpus_files("deepspeed")


def _encode(doc) -> bytes:
    return (b"\xef\xbb\xbf" if doc.bom else b"") + doc.text.encode("utf-8")


@pytest.mark.parametrize("path", ACCEL + DEEPSPEED, ids=lambda p: p.name[:80])
def test_round_trip_is_byte_identical(path: Path):
    raw = path.read_bytes()
    try:
        doc = load_file(path)
    except InputError:
        assert path.name in PLACEHOLDER_TEMPLATES, f"{path.name} does not parse"
        return
    assert _encode(doc) == raw
    assert apply_edits(doc.text, []).encode("utf-8") == raw.removeprefix(b"\xef\xbb\xbf")


@pytest.mark.parametrize("path", ACCEL, ids=lambda p: p.name[:80])
def test_fmt_is_idempotent_and_keeps_comments(path: Path):
    doc = load_file(path)
    once = format_document(doc).text
    from accelconf.text.document import load_text

    twice = format_document(load_text(once, str(path))).text
    assert twice == once
    comments = [line.split("#", 1)[1].strip() for line in doc.text.splitlines() if line.lstrip().startswith("#")]
    for c in comments:
        assert c in once


def test_validation_agrees_with_accelerates_launcher():
    files = need_corpus("accelerate")
    verdicts = oracle(files)
    disagreements = []
    for path in files:
        errors = [f for f in validate_document(load_file(path)) if f.severity == "error"]
        ok = verdicts[str(path)]["ok"]
        if ok and errors:
            disagreements.append(f"{path.name}: accelerate launches it, accelconf says {errors[0].message}")
        if not ok and not errors:
            disagreements.append(
                f"{path.name}: accelerate fails ({verdicts[str(path)]['error'][:120]}), accelconf reports no error"
            )
    assert not disagreements, "\n".join(disagreements)
    assert sum(1 for v in verdicts.values() if not v["ok"]) >= 1  # the corpus has rejected files: the test can fail


def test_fmt_never_changes_what_accelerate_launches(tmp_path):
    files = need_corpus("accelerate")
    pairs = []
    for path in files:
        doc = load_file(path)
        res = format_document(doc)
        if res.changed:
            out = tmp_path / path.name
            out.write_text(res.text, encoding="utf-8")
            pairs.append((path, out))
    assert pairs, "fmt changes nothing in the corpus: the property is vacuous"
    verdicts = oracle([p for pair in pairs for p in pair])
    for before, after in pairs:
        a, b = verdicts[str(before)], verdicts[str(after)]
        if not a["ok"]:
            continue  # fmt may repair a config accelerate rejects
        assert b["ok"], f"{before.name}: fmt broke it: {b.get('error')}"
        assert _meaning(a["env"]) == _meaning(b["env"]), before.name


def _meaning(env: dict[str, str]) -> dict[str, object]:
    """Env values as the plugins read them: FSDP_SHARDING_STRATEGY=1 is FULL_SHARD."""
    from accelconf.accelerate import registry
    from accelconf.accelerate.model import canonical

    out: dict[str, object] = {}
    for k, v in env.items():
        s = registry.by_env(k)
        out[k] = canonical(s, v) if s is not None else v
    return out
