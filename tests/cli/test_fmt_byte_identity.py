"""``fmt`` writes the same bytes whichever way it is asked: to standard output, ``--in-place`` on a
file, or ``--in-place`` on standard input. A byte-order mark, CRLF line endings, a missing final
newline and tabs inside comments survive every path exactly."""

from __future__ import annotations

import io
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from accelconf.accelerate.fmt import format_document
from accelconf.cli import main
from accelconf.text.document import load_bytes

BOM = b"\xef\xbb\xbf"


def _run(argv: list[str], stdin: bytes = b"") -> tuple[int, bytes]:
    """Run the CLI in-process with byte-level standard input and output."""
    out = io.BytesIO()
    old = sys.stdin, sys.stdout
    sys.stdin = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8")
    sys.stdout = io.TextIOWrapper(out, encoding="utf-8", newline="")
    try:
        code = main(argv)
        sys.stdout.flush()
        return code, out.getvalue()
    finally:
        sys.stdin, sys.stdout = old


def fmt_stdout(raw: bytes) -> bytes:
    with tempfile.TemporaryDirectory() as tmp:
        f = Path(tmp) / "c.yaml"
        f.write_bytes(raw)
        code, out = _run(["fmt", str(f)])
        assert code == 0 and f.read_bytes() == raw
        return out


def fmt_in_place(raw: bytes) -> bytes:
    with tempfile.TemporaryDirectory() as tmp:
        f = Path(tmp) / "c.yaml"
        f.write_bytes(raw)
        code, out = _run(["fmt", "--in-place", str(f)])
        assert code == 0 and out == b""
        assert [p.name for p in Path(tmp).iterdir()] == ["c.yaml"]  # no temporary file left
        return f.read_bytes()


def fmt_in_place_stdin(raw: bytes) -> bytes:
    code, out = _run(["fmt", "--in-place", "-"], stdin=raw)
    assert code == 0
    return out


def expected(raw: bytes) -> bytes:
    doc = load_bytes(raw, "c.yaml")
    return (BOM if doc.bom else b"") + format_document(doc).text.encode("utf-8")


# Each case changes (so --in-place really rewrites the file) and carries one byte-level trait.
CASES = {
    "bom": (
        BOM + b"distributed_type: multi_gpu\nnum_processes: 2\n",
        BOM + b"distributed_type: MULTI_GPU\nnum_processes: 2\n",
    ),
    "crlf": (
        b"distributed_type: multi_gpu\r\nnum_processes: 2\r\nmixed_precision: BF16\r\n",
        b"distributed_type: MULTI_GPU\r\nnum_processes: 2\r\nmixed_precision: bf16\r\n",
    ),
    "no-final-newline": (b"num_processes: 2\nmixed_precision: no", b"num_processes: 2\nmixed_precision: 'no'"),
    "tab-in-comment": (
        b"# a\tcomment\ndistributed_type: multi_gpu\t# why:\there\nnum_processes: 2  #\t\n",
        b"# a\tcomment\ndistributed_type: MULTI_GPU\t# why:\there\nnum_processes: 2  #\t\n",
    ),
    "all-at-once": (
        BOM + b"# top\t\r\ndistributed_type: fsdp  # \tx\r\nnum_processes: 2\r\nmixed_precision: no",
        BOM + b"# top\t\r\ndistributed_type: FSDP  # \tx\r\nnum_processes: 2\r\nmixed_precision: 'no'",
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_in_place_writes_exactly_what_stdout_shows(name):
    raw, want = CASES[name]
    assert fmt_stdout(raw) == want
    assert fmt_in_place(raw) == want
    assert fmt_in_place_stdin(raw) == want


def test_in_place_keeps_the_byte_order_mark():
    raw, want = CASES["bom"]
    out = fmt_in_place(raw)
    assert out.startswith(BOM) and out.count(BOM) == 1 and out == want


def test_in_place_on_a_canonical_file_leaves_it_untouched():
    raw = BOM + b"distributed_type: 'NO'\r\nmixed_precision: 'no'\t# off\r\nnum_processes: 1"
    with tempfile.TemporaryDirectory() as tmp:
        f = Path(tmp) / "c.yaml"
        f.write_bytes(raw)
        before = f.stat().st_mtime_ns
        code, _ = _run(["fmt", "--in-place", str(f)])
        assert code == 0 and f.read_bytes() == raw and f.stat().st_mtime_ns == before


_LINES = [
    ("distributed_type", ["multi_gpu", "MULTI_GPU", "fsdp", "'NO'"]),
    ("num_processes", ["2", "8"]),
    ("mixed_precision", ["no", "'no'", "BF16", "fp16"]),
    ("fp16", ["true"]),
    ("gpu_ids", ["0", "all"]),
]
_COMMENTS = st.sampled_from(["", "  # c", "\t# tab\tinside", "  #\t", " # ünïcode\t"])


@settings(max_examples=60, deadline=None)
@given(
    # at least one setting: a document of only comments is refused by every command (exit 2)
    values=st.fixed_dictionaries({}, optional={k: st.sampled_from(v) for k, v in _LINES}).filter(bool),
    comments=st.lists(_COMMENTS, min_size=len(_LINES), max_size=len(_LINES)),
    top_comment=st.sampled_from(["", "# header\t\n", "#\tonly tabs\t\n"]),
    newline=st.sampled_from(["\n", "\r\n"]),
    final_newline=st.booleans(),
    bom=st.booleans(),
)
def test_every_fmt_path_gives_the_same_bytes(values, comments, top_comment, newline, final_newline, bom):
    lines = [f"{k}: {v}{c}" for (k, v), c in zip(values.items(), comments)]
    text = top_comment.replace("\n", newline) + newline.join(lines) + (newline if final_newline and lines else "")
    raw = (BOM if bom else b"") + text.encode("utf-8")
    want = expected(raw)
    assert fmt_stdout(raw) == want
    assert fmt_in_place(raw) == want
    assert fmt_in_place_stdin(raw) == want
    # the traits themselves, stated directly rather than only through expected()
    assert want.startswith(BOM) == bom and want.count(BOM) == int(bom)
    body = want.removeprefix(BOM)
    assert body.endswith(newline.encode()) == text.endswith(newline)
    if newline == "\r\n":
        assert body.count(b"\n") == body.count(b"\r\n")
    for c in comments[: len(lines)]:
        if c:  # the comment itself, tabs included; the run of blanks before it may realign
            assert c[c.index("#") :].encode("utf-8") in body
