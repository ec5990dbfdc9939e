"""A uniform sample of the mutants of the modules outside the mutation-tested core, run pass by pass.

The core (``only_mutate`` in ``[tool.mutmut]``) is measured in full by ``make mutants``. Every
other module of accelconf/ and lsp/accelconf_lsp/ is measured here on a deterministic uniform
sample: the mutant names of each module, sorted, every K-th from OFFSET (``names``). Each pass
runs one group of modules' sampled mutants against that group's fast tests only (no editors, no
release matrices, nothing marked slow or oracle): mutmut then runs, per mutant, the tests of that
selection that reach the mutated function. Results are copied out of mutmut's own files after each
pass into bench/mutants-sample.json (a later pass with another selection resets mutmut's cache).

    python tools/mutants_sample.py names --every 16      # generate, sample, write the plan
    nice -n 19 python tools/mutants_sample.py run [--until HH:MM]   # the passes, one worker
    python tools/mutants_sample.py report                # the sample section of bench/MUTANTS.md
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import time
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PLAN = ROOT / "bench" / "mutants-sample.json"
SOURCES = "accelconf/ lsp/"
FAST = "-m 'not slow and not oracle'"

# group -> (the modules it mutates, the fast tests that exercise them). Left out: tests/e2e/test_preflight.py
# (it runs torchrun), the editors, the release matrices, and everything marked slow or oracle.
PASSES: dict[str, tuple[list[str], str]] = {
    "environment": (
        ["accelconf/environment/*", "accelconf/preflight/*"],
        "tests/unit/environment/test_memory.py tests/unit/environment/test_check_boundaries.py"
        " tests/unit/environment/test_activations.py tests/unit/environment/test_lora.py"
        " tests/unit/environment/test_probe.py tests/unit/environment/test_wrapclass.py",
    ),
    "assist-lsp-text": (
        ["accelconf/assist/*", "lsp/accelconf_lsp/*", "accelconf/text/*", "accelconf/kinds/*"],
        "tests/unit/assist/test_assist.py tests/unit/text/test_suggest.py tests/unit/text/test_text.py"
        " tests/unit/text/test_document.py tests/unit/kinds/test_kinds.py"
        " tests/lsp/test_lsp_protocol.py"
        # mutmut's trampolines add frames: a test that nests to just under the recursion limit overflows
        " -k 'not test_deep_nesting_is_refused'",
    ),
    "deepspeed-trainer": (
        [
            "accelconf/deepspeed/*",
            "accelconf/trainer/*",
            "accelconf/accelerate/deepspeed_file.py",
            "accelconf/accelerate/migrate.py",
            "accelconf/accelerate/model.py",
            "accelconf/accelerate/schema.py",
        ],
        "tests/unit/deepspeed/test_deepspeed.py tests/unit/deepspeed/test_deepspeed_constraints.py"
        " tests/unit/trainer/test_trainer_args.py"
        " tests/unit/trainer/test_trainer_rules.py tests/unit/accelerate/test_migrate.py"
        " tests/unit/accelerate/test_model.py",
    ),
    "api-commands": (
        [
            "accelconf/api.py",
            "accelconf/report.py",
            "accelconf/commands/*",
            "accelconf/cli.py",
            "accelconf/sarif.py",
            "accelconf/catalogue/*",
            "accelconf/precedence.py",
            "accelconf/releases.py",
            "accelconf/atomic.py",
            "accelconf/errors.py",
            "accelconf/findings.py",
            "accelconf/schemas.py",
            "accelconf/versions.py",
        ],
        "tests/unit/api/test_api.py tests/unit/environment/test_check.py tests/cli/test_cli.py"
        " tests/unit/api/test_explain_api.py tests/cli/test_sarif.py"
        " tests/unit/catalogue/test_catalogue.py",
    ),
}
ALL = [glob for globs, _ in PASSES.values() for glob in globs]


def _env(globs: list[str], tests: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = os.pathsep.join(p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p)
    env.update(
        ACCELCONF_MUTANTS_ONLY=" ".join(globs),
        ACCELCONF_MUTANTS_SOURCES=SOURCES,
        ACCELCONF_MUTANTS_TESTS=f"{tests} {FAST}",
    )
    return env


def _metas() -> dict[str, dict[str, int | None]]:
    """Source path -> mutant name -> mutmut exit code (None: not run yet)."""
    out = {}
    for meta in sorted((ROOT / "mutants").rglob("*.py.meta")):
        path = str(meta.relative_to(ROOT / "mutants")).removesuffix(".meta")
        out[path] = json.loads(meta.read_text())["exit_code_by_key"]
    return out


def _group_of(path: str) -> str | None:
    from fnmatch import fnmatch

    return next((g for g, (globs, _) in PASSES.items() if any(fnmatch(path, p) for p in globs)), None)


def names(every: int, offset: int, generate: bool = True) -> None:
    env = _env(ALL, "tests/unit/text/test_text.py")
    code = "import sys; sys.path.insert(0, 'tools'); import mutmut_run; mm = mutmut_run.configure();"
    code += " mm.copy_src_dir(); mm.copy_also_copy_files(); mm.create_mutants(1)"
    if generate:
        subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, check=True, stdout=subprocess.DEVNULL)
    sample: dict[str, list[str]] = {}
    total: dict[str, int] = {}
    for path, results in _metas().items():
        if _group_of(path) is None:
            continue
        ordered = sorted(results)
        total[path] = len(ordered)
        sample[path] = ordered[offset::every]
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    plan = {"commit": commit, "every": every, "offset": offset, "total": total, "sample": sample, "results": {}}
    PLAN.write_text(json.dumps(plan, indent=1, sort_keys=True) + "\n")
    print(f"{sum(total.values())} mutants in {len(total)} modules; sample {sum(map(len, sample.values()))}")


def _harvest(plan: dict) -> None:
    for path, results in _metas().items():
        for name in plan["sample"].get(path, []):
            code = results.get(name)
            if code is not None:
                plan["results"][name] = code
    PLAN.write_text(json.dumps(plan, indent=1, sort_keys=True) + "\n")


def run(only: list[str], until: str | None) -> None:
    plan = json.loads(PLAN.read_text())
    for group, (_, tests) in PASSES.items():
        if only and group not in only:
            continue
        todo = [n for p, ns in plan["sample"].items() if _group_of(p) == group for n in ns if n not in plan["results"]]
        if not todo:
            continue
        start = time.time()
        log = (ROOT / "mutants" / f"sample-{group}.log").open("ab")
        cmd = [sys.executable, "tools/mutmut_run.py", "run", "--max-children", "1", *todo]
        print(f"[{datetime.now(timezone.utc):%H:%M:%S}] pass {group}: {len(todo)} mutants", flush=True)
        # every group stays mutated (a file left out would be copied back plain and regenerated in its
        # own pass); the names given limit the run to this group's sample
        proc = subprocess.Popen(cmd, cwd=ROOT, env=_env(ALL, tests), stdout=log, stderr=subprocess.STDOUT)
        while proc.poll() is None:
            time.sleep(20)
            _harvest(plan)
            if until and datetime.now(timezone.utc).strftime("%H:%M") >= until:
                proc.terminate()
                proc.wait()
        _harvest(plan)
        plan.setdefault("seconds", {})[group] = plan.get("seconds", {}).get(group, 0) + time.time() - start
        PLAN.write_text(json.dumps(plan, indent=1, sort_keys=True) + "\n")
        print(f"  done in {time.time() - start:.0f} s (exit {proc.returncode})", flush=True)
        if until and datetime.now(timezone.utc).strftime("%H:%M") >= until:
            return


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="cmd", required=True)
    n = sub.add_parser("names")
    n.add_argument("--every", type=int, required=True)
    n.add_argument("--offset", type=int, default=0)
    n.add_argument("--no-generate", action="store_true", help="sample the mutants already generated")
    r = sub.add_parser("run")
    r.add_argument("--only", nargs="*", default=[])
    r.add_argument("--until", help="HH:MM UTC: stop the pass running then (its finished mutants are kept)")
    rep = sub.add_parser("report")
    rep.add_argument("--note", default="", help="a paragraph on how the run went, put above the table")
    args = parser.parse_args(argv)
    if args.cmd == "names":
        names(args.every, args.offset, not args.no_generate)
    elif args.cmd == "run":
        run(args.only, args.until)
    else:
        report(args.note)
    return 0


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The 95% Wilson score interval of a binomial proportion k/n."""
    if n == 0:
        return 0.0, 1.0
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def _status(code: int) -> str:
    from mutmut.stats import status_by_exit_code

    return str(status_by_exit_code[code])


def _equivalents() -> dict[str, str]:
    sys.path.insert(0, str(ROOT / "tools"))
    from mutants_report import equivalents

    return equivalents()


def _row(path: str, plan: dict, eq: dict[str, str]) -> tuple[str, list[str]]:
    names = plan["sample"][path]
    status = {n: _status(plan["results"][n]) for n in names if n in plan["results"]}
    count = Counter(status.values())
    killed = count["killed"] + count["timeout"] + count["caught by type check"]
    equiv = sum(1 for n, s in status.items() if s == "survived" and n in eq)
    survived = count["survived"] - equiv
    no_tests = count["no tests"]
    n = killed + survived + no_tests
    lo, hi = wilson(killed, n)
    rate = f"{100 * killed / n:.1f}% [{100 * lo:.0f}-{100 * hi:.0f}]" if n else "-"
    row = (
        f"| `{path}` | {plan['total'][path]} | {len(names)} | {len(status)} | {killed} | {survived} | {equiv}"
        f" | {no_tests} | {rate} |"
    )
    lost = [n for n, s in status.items() if s in ("survived", "no tests") and n not in eq]
    return row, lost


def report(note: str = "") -> None:
    """The sample's section of bench/MUTANTS.md (replaced in place; the core's part is untouched)."""
    plan = json.loads(PLAN.read_text())
    eq = _equivalents()
    sys.path.insert(0, str(ROOT / "tools"))
    from mutants_full import full_runs

    with_full_run = full_runs()
    rows, lost, totals = [], [], Counter()
    for path in sorted(plan["sample"]):
        if not plan["sample"][path]:
            continue
        row, survivors = _row(path, plan, eq)
        # the sample's figures stay (they are this pass's); the full run is the one that counts
        if path in with_full_run:
            row = row.replace(f"| `{path}` |", f"| `{path}` (full run above) |", 1)
        rows.append(row)
        lost += survivors
    for name, code in plan["results"].items():
        st = _status(code)
        key = "killed" if st in ("killed", "timeout", "caught by type check") else st
        totals["equivalent" if st == "survived" and name in eq else key] += 1
    n = totals["killed"] + totals["survived"] + totals["no tests"]
    lo, hi = wilson(totals["killed"], n)
    secs = sum(plan.get("seconds", {}).values())
    done = len(plan["results"])
    full = sum(plan["total"].values())
    text = [
        SECTION,
        "",
        f"**Uniform sample, first pass** of commit `{plan['commit'][:7]}`: every {plan['every']}th mutant name"
        f" (from {plan['offset']}) of each module, sorted, of the {full} mutants of the modules outside the core"
        " (tools/mutants_sample.py: one pass per group of modules against that group's fast tests, nothing marked"
        " slow or oracle, one worker, `nice -n 19`). The interval is the 95% Wilson interval of the kill rate"
        " (equivalent mutants left out). *No tests*: no selected test reaches the function (counted as not killed).",
        "",
        f"Overall: {done} checked, {totals['killed']} killed, {totals['survived']} survived,"
        f" {totals['equivalent']} equivalent, {totals['no tests']} no tests:"
        f" {100 * totals['killed'] / max(n, 1):.1f}% [{100 * lo:.1f}-{100 * hi:.1f}]."
        f" Wall time {secs / 60:.0f} min on the shared 2 cores, {secs / max(done, 1):.1f} s a mutant;"
        f" every mutant of these modules ({full}) at that pace: about {full * secs / max(done, 1) / 3600:.0f} h.",
        "",
        *([note, ""] if note else []),
        "| module | mutants | sample | checked | killed | survived | equivalent | no tests | kill rate [95%] |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
        *rows,
        "",
        "Sampled mutants that survived or reached no test, not marked equivalent (`mutmut show NAME` after `names`):",
        "",
        *(f"- `{name}`" for name in sorted(lost)),
        "",
    ]
    out = ROOT / "bench" / "MUTANTS.md"
    body = out.read_text(encoding="utf-8")
    head = body.split(SECTION)[0].rstrip("\n")
    out.write_text(head + "\n\n" + "\n".join(text), encoding="utf-8")


SECTION = "## Outside the core: uniform sample, first pass"


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
