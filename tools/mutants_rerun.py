"""Run named survivors of a finished ``mutmut run`` again, against tests written since.

mutmut starts over when a test file changes, which on two cores means hours for validate and
launch. Tests are only ever added after a run (none is weakened), so a mutant the run killed stays
killed; only the survivors that new tests aim at need to run again. This copies ``tests/`` into
``mutants/``, checks that the given tests pass with no mutant active, runs them once per named
mutant (``MUTANT_UNDER_TEST``, as mutmut's own workers do) and records each mutant the tests now
kill in mutmut's result file (``mutants/<path>.meta``), so that tools/mutants_report.py counts it.
A mutant the tests still do not kill keeps its result.

Usage (from the repository root, after ``mutmut run``):
    python tools/mutants_rerun.py --tests "tests/test_validate_rules.py -k deepspeed" NAME [NAME ...]
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MUTANTS = ROOT / "mutants"


def meta_path(name: str) -> Path:
    """``accelconf.accelerate.validate.x_f__mutmut_3`` -> mutants/accelconf/accelerate/validate.py.meta"""
    module = name.rsplit(".", 1)[0]
    return MUTANTS / (module.replace(".", "/") + ".py.meta")


def pytest(tests: list[str], mutant: str | None) -> int:
    env = {k: v for k, v in os.environ.items() if k != "MUTANT_UNDER_TEST"}
    if mutant:
        env["MUTANT_UNDER_TEST"] = mutant
    cmd = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "-p", "no:randomly", *tests]
    return subprocess.run(cmd, cwd=MUTANTS, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode


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
    if pytest(tests, None) != 0:
        print(f"tools/mutants_rerun.py: {args.tests} fails with no mutant active; fix the tests first", file=sys.stderr)
        return 1
    killed = 0
    with ThreadPoolExecutor(args.jobs) as pool:
        futures = {pool.submit(pytest, tests, name): name for name in args.names}
        for i, future in enumerate(as_completed(futures), 1):
            name, code = futures[future], future.result()
            if code == 1:  # recorded at once: an interrupted run keeps what it found
                killed += 1
                path = meta_path(name)
                data = json.loads(path.read_text(encoding="utf-8"))
                data["exit_code_by_key"][name] = 1
                path.write_text(json.dumps(data, indent=4), encoding="utf-8")
            verdict = "killed" if code == 1 else "survived" if code == 0 else f"exit {code}"
            print(f"[{i}/{len(futures)}] {verdict}\t{name}", flush=True)
    print(f"{killed} of {len(args.names)} now killed")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
