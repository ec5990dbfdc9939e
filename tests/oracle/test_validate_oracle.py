"""Validation rules proven against accelerate's launcher."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.accelerate.test_validate import NULL_COUNTS, _found


@pytest.mark.oracle
@pytest.mark.parametrize("case", sorted(NULL_COUNTS))
def test_null_process_counts_are_errors(case: str, tmp_path: Path) -> None:
    text, keys = NULL_COUNTS[case]
    got = [f for f in _found(text) if f.rule == "null-count"]
    assert [(f.key, f.severity) for f in got] == [(k, "error") for k in keys]
    # the oracle: accelerate's launcher refuses the first (TypeError); torchrun gets nproc_per_node "None"
    from tests.oracle.run import oracle

    path = tmp_path / f"{case}.yaml"
    path.write_text(text)
    verdict = oracle([path])[str(path)]
    if "num_machines" in keys:
        assert not verdict["ok"] and "TypeError" in verdict["error"]
    elif keys:
        assert verdict["torchrun"]["nproc_per_node"] == "None"
    else:
        assert verdict["ok"] and verdict["mode"] == "simple"
