"""The dotenv reader's names read by nothing, against the installed accelerate's own source."""

from __future__ import annotations

import pytest

from accelconf.formats import env


@pytest.mark.oracle
def test_names_said_to_be_read_by_nothing_are_not_in_accelerates_source() -> None:
    """Every name of ``NEVER_READ`` appears in no string literal of the installed accelerate (1.15), so
    no code looks it up; every name the launcher writes does (the search would find them). accelerate's
    own test scripts (``test_utils/``) do not count: ``test_notebook.py`` reads ACCELERATE_NUM_PROCESSES
    for itself."""
    import re
    from pathlib import Path

    accelerate = pytest.importorskip("accelerate", reason="accelerate is in the test extras")
    root = Path(accelerate.__file__).parent
    source = "\n".join(p.read_text(encoding="utf-8") for p in root.rglob("*.py") if "test_utils" not in p.parts)
    literal = lambda name: re.search(rf"[\"']{name}[\"']", source) is not None  # noqa: E731
    assert [n for n in env.NEVER_READ if literal(n)] == []
    assert all(literal(n) for n in ("ACCELERATE_MIXED_PRECISION", "ACCELERATE_DEBUG_MODE", "FSDP_VERSION"))
