"""Full mutation runs of whole modules outside the core, module by module, recorded with their commit.

The uniform sample (tools/mutants_sample.py) estimates every module outside the core; a full run
checks every mutant of one module. All of them at once takes 6-11 hours of one worker, so they are
run a few modules at a time: each ``run`` is one ``mutmut run`` per module (mutmut's own name
glob, ``accelconf.report.*``), against one test selection (the fast tests of those modules, nothing
marked slow or oracle), and after each module its figures are copied out of mutmut's result files
into bench/mutants-full.json with the commit and the date (a later run with another selection
resets mutmut's cache, the record stays). ``report`` writes the full-run section of
bench/MUTANTS.md, between the core's table and the sample's; the sample's rows of a module with a
full run say so.

    nice -n 19 python tools/mutants_full.py run --tests "tests/unit/text/test_suggest.py ..." \\
        accelconf/text/suggest.py accelconf/report.py
    python tools/mutants_full.py record accelconf/report.py   # again, after tools/mutants_rerun.py
    python tools/mutants_full.py report

Survivors killed later by new tests are re-run with tools/mutants_rerun.py (it writes mutmut's
result file); ``record`` then counts them killed and keeps the run's commit, adding the rerun's.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RECORD = ROOT / "bench" / "mutants-full.json"
OUT = ROOT / "bench" / "MUTANTS.md"
SECTION = "## Outside the core: full runs, module by module"
sys.path.insert(0, str(ROOT / "tools"))

from mutants_import_time import RESULTS as IMPORT_TIME_RESULTS  # noqa: E402
from mutants_import_time import module_of  # noqa: E402
from mutants_report import GOAL, equivalents  # noqa: E402
from mutants_sample import FAST  # noqa: E402
from mutants_sample import SECTION as SAMPLE_SECTION  # noqa: E402


def _load() -> dict:
    return json.loads(RECORD.read_text(encoding="utf-8")) if RECORD.exists() else {}


def _save(data: dict) -> None:
    RECORD.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def _import_time() -> dict[str, int]:
    return json.loads(IMPORT_TIME_RESULTS.read_text()) if IMPORT_TIME_RESULTS.exists() else {}


def _head() -> str:
    return subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()


def counts(results: dict[str, int | None], eq: dict[str, str]) -> dict[str, int]:
    """One module's figures from mutmut's exit codes: equivalent survivors counted apart."""
    from mutmut.stats import status_by_exit_code

    status = {n: status_by_exit_code[c] for n, c in results.items()}
    c = Counter(status.values())
    equivalent = sum(1 for n, s in status.items() if s == "survived" and n in eq)
    return {
        "mutants": len(results),
        "checked": len(results) - c["not checked"],
        "killed": c["killed"] + c["caught by type check"],
        "timeout": c["timeout"],
        "survived": c["survived"] - equivalent,
        "equivalent": equivalent,
        "no_tests": c["no tests"],
        "other": sum(v for k, v in c.items() if k in ("suspicious", "segfault", "skipped")),
    }


def rate(row: dict[str, int]) -> float:
    """Killed (timeouts included) over everything checked but the equivalent mutants."""
    denominator = row["checked"] - row["equivalent"]
    return 100.0 * (row["killed"] + row["timeout"]) / denominator if denominator else 0.0


def record(paths: list[str], tests: str | None = None, commit: str | None = None) -> None:
    """Copy ``paths``' results out of mutants/<path>.meta into the record: all of them after a run
    (``commit`` given), else the ones mutmut's file holds over the recorded ones (a re-count after
    tools/mutants_rerun.py, whose verdicts land there even when a later run has reset the rest)."""
    data, eq = _load(), equivalents()
    for path in paths:
        results = json.loads((ROOT / "mutants" / f"{path}.meta").read_text())["exit_code_by_key"]
        # mutants of functions that run only at import time: mutmut never tries them (its "survived"
        # is untried); tools/mutants_import_time.py runs each in a fresh interpreter (1 killed, 0 survived)
        results.update({n: c for n, c in _import_time().items() if n in results})
        entry = data.get(path, {})
        if commit or "commit" not in entry:
            entry = {"commit": commit or _head(), "date": f"{datetime.now(timezone.utc):%Y-%m-%d}"}
            entry["tests"] = tests or ""
            codes = results
        else:
            entry["recounted"] = f"{_head()[:7]} {datetime.now(timezone.utc):%Y-%m-%d}"
            codes = {**entry["codes"], **{n: c for n, c in results.items() if c is not None}}
        entry.update(counts(codes, eq))
        entry["codes"] = codes
        data[path] = entry
        print(f"{path}: {entry['checked']}/{entry['mutants']} checked, {rate(entry):.1f}%")
    _save(data)


def run(paths: list[str], tests: str, workers: int = 1) -> None:
    """One ``mutmut run`` per module, each recorded as soon as it ends (``workers`` mutants at a time)."""
    env = dict(os.environ)
    # the modules run before stay mutated, so that tools/mutants_rerun.py can still run their survivors
    env.update(
        ACCELCONF_MUTANTS_ONLY=" ".join(sorted({*paths, *_load()})),
        ACCELCONF_MUTANTS_SOURCES="accelconf/",
        ACCELCONF_MUTANTS_TESTS=f"{tests} {FAST}",
    )
    for path in paths:
        # a package's own mutants are named after the package (accelconf.catalogue.x_name__mutmut_1):
        # "accelconf.catalogue.*" would take in its submodules' as well
        glob = module_of(path) + (".x*" if path.endswith("__init__.py") else ".*")
        commit = _head()
        print(f"[{datetime.now(timezone.utc):%H:%M:%S}] {path} at {commit[:7]}", flush=True)
        cmd = [sys.executable, "tools/mutmut_run.py", "run", "--max-children", str(workers), glob]
        proc = subprocess.run(cmd, cwd=ROOT, env=env)
        if proc.returncode != 0:
            sys.exit(f"tools/mutants_full.py: mutmut exited {proc.returncode} on {path}")
        record([path], f"{tests} {FAST}", commit)


def report(note: str = "") -> None:
    """The full-run section of bench/MUTANTS.md (replaced in place; the other sections are kept)."""
    data, eq = _load(), equivalents()
    rows, lost = [], []
    for path, e in sorted(data.items()):
        e.update(counts(e["codes"], eq))  # the equivalents listed since the run are left out too
        lost += [f"- `{n}`" for n, c in sorted(e["codes"].items()) if c in (0, 5, 33) and n not in eq]
        partial = "" if e["checked"] == e["mutants"] else " (partial)"
        r = rate(e)
        rows.append(
            f"| `{path}` | {e['mutants']} | {e['checked']}{partial} | {e['killed']} | {e['timeout']} | {e['survived']}"
            f" | {e['equivalent']} | {e['no_tests']} | {r:.1f}%{' ✓' if r >= GOAL else ''}"
            f" | `{e['commit'][:7]}` {e['date']}{' (rerun ' + e['recounted'] + ')' if 'recounted' in e else ''} |"
        )
    text = [
        SECTION,
        "",
        "Every mutant of each module below was run (tools/mutants_full.py: one `mutmut run` per module,"
        " one worker, against the fast tests of these modules, nothing marked slow or oracle;"
        " the exact selection is in bench/mutants-full.json). *commit* is the one the run started on;"
        " *rerun* is when survivors were re-run against tests written from them (tools/mutants_rerun.py)."
        " Timeouts count as killed. Every other module outside the core has only the uniform sample below.",
        "",
        *([note, ""] if note else []),
        "| module | mutants | checked | killed | timeout | survived | equivalent | no tests | kill rate | commit, date"
        " |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
        *rows,
        "",
        "Not killed and not marked equivalent (`mutmut show NAME` after a run):",
        "",
        *(lost or ["- none"]),
        "",
    ]
    body = OUT.read_text(encoding="utf-8")
    if SECTION in body:
        head, rest = body.split(SECTION, 1)
        tail = SAMPLE_SECTION + rest.split(SAMPLE_SECTION, 1)[1] if SAMPLE_SECTION in rest else ""
    else:
        head, sep, rest = body.partition(SAMPLE_SECTION)
        tail = sep + rest
    OUT.write_text(head.rstrip("\n") + "\n\n" + "\n".join(text) + ("\n" + tail if tail else ""), encoding="utf-8")


def full_runs() -> dict[str, dict]:
    """The modules that have a full run (tools/mutants_sample.py marks their sample rows)."""
    return _load()


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--tests", required=True, help="pytest arguments (shell-quoted): the selection for every module")
    r.add_argument("--workers", type=int, default=1, help="mutants run at once (mutmut's --max-children)")
    r.add_argument("paths", nargs="+", help="source files, e.g. accelconf/report.py")
    c = sub.add_parser("record")
    c.add_argument("--commit", help="the commit a run started on (a fresh record; else a re-count of the last run)")
    c.add_argument("--tests", help="the selection that run used")
    c.add_argument("paths", nargs="+")
    rep = sub.add_parser("report")
    rep.add_argument("--note", default="", help="a paragraph on how the runs went, put above the table")
    args = parser.parse_args(argv)
    if args.cmd == "run":
        shlex.split(args.tests)  # refuse a selection that does not parse before hours of running
        run(args.paths, args.tests, args.workers)
    elif args.cmd == "record":
        record(args.paths, args.tests, args.commit)
    else:
        report(args.note)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
