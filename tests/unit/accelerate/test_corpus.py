"""The real-world corpus: byte-identical round trip, validation agrees with accelerate's launcher,
and fmt never changes what accelerate launches."""

from __future__ import annotations

from pathlib import Path

import pytest

from accelconf.accelerate.fmt import apply_edits, format_document
from accelconf.errors import InputError
from accelconf.text.document import load_file
from tests.conftest import corpus_files

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
