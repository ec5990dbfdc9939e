"""Re-run, each in a fresh interpreter, the mutants of functions that run while a module is imported.

mutmut 3 forks every mutant from a process that has already imported accelconf, so a function
that only runs at import time (the registry's table builders ``_s``, ``_meg``, ``_par``,
``_index``; validate's ``@rule`` decorator) is never re-run with the mutant active: every such
mutant "survives" without having been tried. Here each one runs the same fast test selection as
``[tool.mutmut]`` in a new ``python -m pytest`` inside ./mutants with ``MUTANT_UNDER_TEST`` set, so
the table is built by the mutant (ACCELCONF_MUTANTS_TESTS, when set, is the selection instead: a full
run's, tools/mutants_full.py). The verdicts go to mutants/import-time-results.json (not into
mutmut's own files, which a running ``mutmut run`` rewrites), where tools/mutants_report.py reads
them in place of mutmut's untried "survived".

Usage (from the repository root, after ``mutmut run``): python tools/mutants_import_time.py [PATH ...]
(PATH: some of the source files below, e.g. accelconf/accelerate/validate/context.py; default: all of them)
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parents[1]
MUTANTS = ROOT / "mutants"

# (source file, function names that run at import time). Found by importing the modules under
# sys.setprofile; functions also called later (registry.get, Setting.path) are left to mutmut.
IMPORT_TIME = {
    "accelconf/accelerate/registry.py": ("_s", "_meg", "_par", "_index"),
    "accelconf/accelerate/validate/context.py": ("rule",),
    # the rule catalogue: each module's tuple of rules is built by these helpers when it is imported
    "accelconf/catalogue/__init__.py": ("register",),
    "accelconf/catalogue/accelerate.py": ("R",),
    "accelconf/catalogue/conversion.py": ("C", "L"),
    "accelconf/catalogue/deepspeed.py": ("X", "R"),
    "accelconf/catalogue/environment.py": ("E", "M"),
    "accelconf/catalogue/preflight.py": ("P",),
    "accelconf/catalogue/trainer.py": ("T",),
    # DeepSpeed's key table: each section and key is built by these when deepspeed/keys.py is imported
    "accelconf/deepspeed/keys.py": ("_section", "_b", "_i", "_n", "_s", "_lax", "_removed_block"),
    # the GPU table's rows and the releases table's source markers
    "accelconf/environment/gpus.py": ("_nv",),
    "accelconf/releases.py": ("_lit",),
}


def _config() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mutmut"]


def selection_files() -> list[str]:
    return [] if os.environ.get("ACCELCONF_MUTANTS_TESTS") else _config()["pytest_add_cli_args_test_selection"]


def selection() -> list[str]:
    # the same override as tools/mutmut_run.py: the selection a full run (tools/mutants_full.py) used
    override = os.environ.get("ACCELCONF_MUTANTS_TESTS")
    if override:
        return selection_files() + shlex.split(override)
    return selection_files() + _config()["pytest_add_cli_args"]


RESULTS = MUTANTS / "import-time-results.json"


def module_of(path: str) -> str:
    """A source file's module as mutmut names its mutants (a package's ``__init__`` by the package)."""
    return path.removesuffix(".py").removesuffix("/__init__").replace("/", ".")


def import_time_mutants(meta: dict, path: str) -> list[str]:
    module = module_of(path)
    return [
        n
        for n in meta["exit_code_by_key"]
        if any(n.startswith(f"{module}.x_{f}__mutmut_") for f in IMPORT_TIME.get(path, ()))
    ]


def main(paths: list[str]) -> int:
    unknown = [p for p in paths if p not in IMPORT_TIME]
    if unknown:
        sys.exit(f"no import-time functions listed for {', '.join(unknown)} (known: {', '.join(IMPORT_TIME)})")
    args = selection()
    extra = args[len(selection_files()) :]  # read once: the file may be edited while this runs
    results = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(MUTANTS), *sys.path[1:]]), "PYTHONDONTWRITEBYTECODE": "1"}
    for path in paths or IMPORT_TIME:
        meta = json.loads((MUTANTS / (path + ".meta")).read_text())
        names = [n for n in import_time_mutants(meta, path) if n not in results]
        for i, name in enumerate(names, 1):
            # the committed schemas are generated from the table: most table mutants fail there first
            schema = ["tests/unit/accelerate/test_schema.py", *extra]
            first = [] if os.environ.get("ACCELCONF_MUTANTS_TESTS") else [schema]
            for attempt in (*first, args):
                proc = subprocess.run(
                    [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:randomly", *attempt],
                    cwd=MUTANTS,
                    env={**env, "MUTANT_UNDER_TEST": name},
                    capture_output=True,
                    timeout=900,
                )
                if proc.returncode != 0:
                    break
            if proc.returncode == 4:  # pytest usage error: the selection itself is wrong
                sys.exit(f"pytest could not run the selection:\n{proc.stdout.decode()[-2000:]}")
            code = 0 if proc.returncode == 0 else 1  # 1 failed, 2 import broke, 3 internal error
            results[name] = code
            print(f"[{i}/{len(names)}] {name}: {'killed' if code else 'survived'}", flush=True)
            RESULTS.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
