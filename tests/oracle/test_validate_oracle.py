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
    # the oracle: accelerate's launcher refuses the first (TypeError); torchrun gets nproc_per_node "None";
    # the simple launcher refuses its own ACCELERATE_USE_CPU=None (torchrun's path does not export it)
    from tests.oracle.run import oracle

    path = tmp_path / f"{case}.yaml"
    path.write_text(text)
    verdict = oracle([path])[str(path)]
    if "num_machines" in keys:
        assert not verdict["ok"] and "TypeError" in verdict["error"]
    elif keys == ["use_cpu"]:
        assert not verdict["ok"] and "ValueError: invalid truth value none" in verdict["error"]
    elif "use_cpu" in text:
        assert verdict["ok"] and "ACCELERATE_USE_CPU" not in verdict["env"]
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


@pytest.mark.oracle
@pytest.mark.parametrize("minor", ["0.20", "1.14"])
def test_a_null_use_cpu_reaches_the_script_as_none_before_the_launcher_refused_it(minor: str, tmp_path: Path) -> None:
    """Before 1.15 the simple launcher exports ACCELERATE_USE_CPU=None without looking at it, and
    AcceleratorState's parse_flag_from_env is what refuses it: the run fails either way."""
    from tests.oracle.matrix import run_harness

    path = tmp_path / "c.yaml"
    path.write_text(NULL_COUNTS["cpu-null-no"][0])
    _, [answer] = run_harness(minor, [{"argv": ["--config_file", str(path), "train.py"]}])
    assert answer["mode"] == "simple" and answer["env"]["ACCELERATE_USE_CPU"] == "None"
    assert [f.key for f in _found(path.read_text(), minor) if f.rule == "null-count"] == ["use_cpu"]
    # and that release's own flag reader, which AcceleratorState calls on it, refuses the word
    import os
    import subprocess
    import sys

    from tests.oracle import releases

    code = (
        f"import os, sys\nsys.path.insert(0, {str(releases.ensure(minor))!r})\n"
        "os.environ['ACCELERATE_USE_CPU'] = 'None'\n"
        "from accelerate.utils.environment import parse_flag_from_env\nparse_flag_from_env('ACCELERATE_USE_CPU')\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 1 and "invalid truth value" in proc.stderr and "none" in proc.stderr, proc.stderr[-500:]
