"""Severity rows proven against accelerate's launcher."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.mark.oracle
def test_unquoted_no_error_is_where_the_launcher_fails(tmp_path: Path) -> None:
    """The two yaml-bool-value rows for ``distributed_type: NO``, against accelerate's launcher."""
    from tests.oracle.run import oracle

    fails, runs = tmp_path / "fails.yaml", tmp_path / "runs.yaml"
    fails.write_text("distributed_type: NO\n")
    runs.write_text("distributed_type: NO\nnum_processes: 1\n")
    verdict = oracle([fails, runs])
    assert not verdict[str(fails)]["ok"] and "num_processes" in verdict[str(fails)]["error"]
    assert verdict[str(runs)]["ok"]
