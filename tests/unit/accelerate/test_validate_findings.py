"""Every field of every finding, as a reviewed record (so a mutation of ``validate.py`` shows).

``test_validate.py`` and ``test_severities.py`` pin each rule's id, severity and position. This file
pins the rest of what a user reads and what an editor applies: the message, the span, the key, the
suggestion and the fix, over three sets of inputs:

- the hand-written cases of ``tests/data/validate`` at the release each names and at three others;
- every row of the severity table (``tests/unit/accelerate/test_severities.py``) at its release;
- every real accelerate config of the shared corpus at five releases.

The records live in ``tests/data/validate/findings.golden``. After a deliberate change, rewrite them
with ``ACCELCONF_UPDATE_EXPECTED=1`` and read the diff before committing it: that diff is exactly
what users will see change. (CI refuses to run with the variable set: ``test_packaging.py``.)

Beside the records, each fix is checked for what it promises: applied to the text, the finding it
repairs is gone.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from accelconf.accelerate.fmt import apply_edits
from accelconf.accelerate.validate import validate_document
from accelconf.findings import Finding
from accelconf.text.document import Document, load_file, load_text
from tests import golden
from tests.conftest import CORPUS, corpus_files
from tests.unit.accelerate.test_severities import TABLE, reads_a_file_beside

DATA = Path(__file__).parents[2] / "data" / "validate"
GOLDEN = DATA / "findings.golden"
CASE_RELEASES = ("0.20.0", "0.28.0", "1.8.0", "1.15.0")
CORPUS_RELEASES = ("0.20.0", "0.28.0", "0.34.0", "1.8.0", "1.15.0")


def _where(doc: Document, offset: int) -> str:
    line, col = doc.offset_to_position(offset)
    return f"{line + 1}:{col + 1}"


def render(findings: list[Finding], doc: Document) -> list[str]:
    text = doc.text
    out = []
    for f in findings:
        out.append(f"{f.rule} {f.severity} {f.line}:{f.column}-{f.end_line}:{f.end_column} key={f.key!r}")
        out.append(f"  message: {f.message}")
        if f.suggestion is not None:
            out.append(f"  suggestion: {f.suggestion!r}")
        for start, end, repl in f.fix:
            out.append(f"  fix: {_where(doc, start)}-{_where(doc, end)} {text[start:end]!r} -> {repl!r}")
    return out


def _inputs() -> list[tuple[str, str, str, str]]:
    """(title, text, file name, release) for every input."""
    rows = []
    for path in sorted(DATA.glob("*.yaml")):
        text = path.read_text(encoding="utf-8")
        for v in CASE_RELEASES:
            rows.append((f"data/validate/{path.name}", text, str(path), v))
    for rule, case, text, version, _key, _sev in TABLE:
        if not reads_a_file_beside(rule, case):  # test_catalogue checks such a row with its file
            rows.append((f"severity table: {rule}: {case}", text, "c.yaml", version))
    for path in corpus_files("accelerate"):
        text = path.read_bytes().decode("utf-8", errors="replace")
        for v in CORPUS_RELEASES:
            rows.append((f"corpus/accelerate/{path.name}", text, str(path), v))
    return rows


def _section(title: str, text: str, name: str, version: str) -> list[str]:
    doc = load_file(Path(name)) if Path(name).is_file() else load_text(text, name)
    lines = [f"== {title} @ {version}"] + render(validate_document(doc, accelerate_version=version), doc)
    # a message may name the file it read: the records name it relative to the repository
    return [
        ln.replace(str(DATA.resolve()), "tests/data/validate").replace(str(DATA), "tests/data/validate") for ln in lines
    ]


if golden.update_requested():  # rewrite the records once, before the tests read them
    golden.write(GOLDEN, (_section(*row) for row in _inputs()))

TITLES = sorted({row[0] for row in _inputs()})


@pytest.mark.parametrize("title", TITLES)
def test_every_field_of_every_finding_matches_the_reviewed_records(title: str) -> None:
    got = [ln for row in _inputs() if row[0] == title for ln in _section(*row)]
    golden.check(GOLDEN, title, got, "findings")


def test_the_records_hold_every_input() -> None:
    if not corpus_files("accelerate"):
        pytest.skip(f"the shared corpus is not at {CORPUS / 'accelerate'}: the records include it")
    assert sorted(golden.sections(GOLDEN)) == TITLES


def test_the_records_cover_every_rule_id() -> None:
    from tests.unit.accelerate.test_severities import _rule_ids_in_validate

    text = GOLDEN.read_text(encoding="utf-8")
    present = {line.split(" ", 1)[0] for line in text.splitlines() if line and not line.startswith((" ", "=="))}
    assert _rule_ids_in_validate() - present == set()


def test_each_fix_removes_the_finding_it_repairs() -> None:
    checked = 0
    for title, text, name, version in _inputs():
        doc = load_text(text, name)
        for f in validate_document(doc, accelerate_version=version):
            if not f.fix or f.severity == "info":
                continue
            fixed = apply_edits(doc.text, list(f.fix))
            assert fixed != doc.text, (title, f)
            after = validate_document(load_text(fixed, name), accelerate_version=version)
            same = [g for g in after if g.rule == f.rule and g.key == f.key and g.message == f.message]
            assert not same, f"{title} @ {version}: the fix of {f.rule} at {f.key} did not remove it:\n{fixed}"
            checked += 1
    assert checked > 20
