"""Run named survivors of a finished ``mutmut run`` again, against tests written since.

mutmut starts over when a test file changes, which on two cores means hours for validate and
launch. Tests are only ever added after a run (none is weakened), so a mutant the run killed stays
killed; only the survivors that new tests aim at need to run again. This copies ``tests/`` into
``mutants/``, checks that the given tests pass with no mutant active, runs them once per named
mutant (``MUTANT_UNDER_TEST``, as mutmut's own workers do) and records each mutant the tests now
kill in mutmut's result file (``mutants/<path>.meta``), so that tools/mutants_report.py counts it.
A mutant the tests still do not kill keeps its result.

Usage (from the repository root, after ``mutmut run``):
    python tools/mutants_rerun.py --tests "tests/unit/accelerate/test_validate_rules.py -k deepspeed" NAME [NAME ...]
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MUTANTS = ROOT / "mutants"


def meta_path(name: str) -> Path:
    """``accelconf.accelerate.validate.x_f__mutmut_3`` -> mutants/accelconf/accelerate/validate.py.meta"""
    module = name.rsplit(".", 1)[0]
    return MUTANTS / (module.replace(".", "/") + ".py.meta")


def _child(tests: list[str], mutant: str | None) -> None:
    """In a forked child: run the tests with ``mutant`` active, exit with pytest's code."""
    code = 3
    try:
        os.environ.pop("MUTANT_UNDER_TEST", None)
        if mutant:
            os.environ["MUTANT_UNDER_TEST"] = mutant
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        os.dup2(null, 2)
        import pytest

        code = int(pytest.main(["-x", "-q", "-p", "no:cacheprovider", "-p", "no:randomly", *tests]))
    finally:
        os._exit(code)


def run_all(tests: list[str], mutants: list[str | None], jobs: int):
    """Yield (mutant, pytest exit code), ``jobs`` at a time, each in a child forked from this warm
    process (test modules and accelconf imported once, as mutmut's own workers are)."""
    waiting, running = list(mutants), {}
    while waiting or running:
        while waiting and len(running) < jobs:
            mutant = waiting.pop(0)
            sys.stdout.flush()
            pid = os.fork()
            if pid == 0:
                _child(tests, mutant)
            running[pid] = mutant
        pid, status = os.wait()
        yield running.pop(pid), os.waitstatus_to_exitcode(status)


def warm_up(tests: list[str]) -> None:
    """Import the test modules (and, through them, the mutated accelconf) once, here."""
    os.chdir(MUTANTS)
    sys.path.insert(0, str(MUTANTS))
    import pytest

    saved = os.dup(1), os.dup(2)
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.dup2(null, 2)
    try:
        pytest.main(["--collect-only", "-q", "-p", "no:cacheprovider", "-p", "no:randomly", *tests])
    finally:
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tests", required=True, help="pytest arguments (shell-quoted): the tests to run per mutant")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("names", nargs="+", help="mutant names as mutmut prints them")
    args = ap.parse_args(argv)
    if not MUTANTS.is_dir():
        print("tools/mutants_rerun.py: no mutants/ here; run `make mutants` first", file=sys.stderr)
        return 2
    shutil.rmtree(MUTANTS / "tests")
    shutil.copytree(ROOT / "tests", MUTANTS / "tests", ignore=shutil.ignore_patterns("__pycache__"))
    tests = shlex.split(args.tests)
    warm_up(tests)
    [(_, clean)] = run_all(tests, [None], 1)
    if clean != 0:
        print(f"tools/mutants_rerun.py: {args.tests} fails with no mutant active; fix the tests first", file=sys.stderr)
        return 1
    killed = 0
    for i, (name, code) in enumerate(run_all(tests, list(args.names), args.jobs), 1):
        if code == 1:  # recorded at once: an interrupted run keeps what it found
            killed += 1
            path = meta_path(name)
            data = json.loads(path.read_text(encoding="utf-8"))
            data["exit_code_by_key"][name] = 1
            path.write_text(json.dumps(data, indent=4), encoding="utf-8")
        verdict = "killed" if code == 1 else "survived" if code == 0 else f"exit {code}"
        print(f"[{i}/{len(args.names)}] {verdict}\t{name}", flush=True)
    print(f"{killed} of {len(args.names)} now killed")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
