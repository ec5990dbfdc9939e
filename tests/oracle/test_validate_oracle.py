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


@pytest.mark.oracle
@pytest.mark.parametrize("minor", ["0.20", "1.7", "1.8", "1.15"])
def test_quoted_counts_are_errors_where_the_launcher_fails(minor: str, tmp_path: Path) -> None:
    """Each quoted-count case through that release's own launcher (the harness frees every port,
    so a quoted port alone launches there; the port check itself is the next test)."""
    from tests.oracle.matrix import run_harness
    from tests.unit.accelerate.test_validate import QUOTED_COUNTS

    paths = {}
    for case, (text, *_) in sorted(QUOTED_COUNTS.items()):
        paths[case] = tmp_path / f"{case}.yaml"
        paths[case].write_text(text)
    _, answers = run_harness(minor, [{"argv": ["--config_file", str(p), "train.py"]} for p in paths.values()])
    for (case, path), answer in zip(paths.items(), answers):
        ours = {f.key for f in _found(path.read_text(), minor) if f.rule == "quoted-count"}
        fails = "TypeError" in answer.get("error", "") and "'str'" in answer["error"]
        assert (bool(ours - {"main_process_port"}), case) == (fails, case), answer.get("error")
        if not fails:
            assert "error" not in answer, (case, answer["error"])  # the rest launches


@pytest.mark.oracle
def test_the_port_check_refuses_a_quoted_port() -> None:
    """What the harness patches away: accelerate's own port check, given the file's string."""
    import subprocess
    import sys

    from tests.oracle.run import have_accelerate

    if not have_accelerate():
        pytest.skip("accelerate and torch are not installed (pip install -e '.[test]')")
    code = "from accelerate.utils.other import is_port_in_use\nis_port_in_use(29500)\nis_port_in_use('29500')\n"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1
    assert "TypeError: 'str' object cannot be interpreted as an integer" in proc.stderr
