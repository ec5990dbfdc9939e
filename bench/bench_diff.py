"""How long ``accelconf diff A B`` takes, against ``python -c pass``.

Not a test: run it by hand, ``python bench/bench_diff.py [--runs N] [A B]``. Each command runs in a
fresh interpreter, as a user (or git, as a diff driver) starts it; the table gives the median and
best wall time and the ratio of the median to ``python -c pass`` (the goal is within about 20x).
Without files it diffs the pairs under ``tests/data/diff``: FSDP1 vs FSDP2 YAML, two DeepSpeed
JSON files, and a YAML against a DeepSpeed JSON.
"""

from __future__ import annotations

import argparse
import os
import sys

from common import bench_env, print_ratios, startup_rows  # noqa: E402  (bench/ is on sys.path when run as a script)

HERE = os.path.dirname(os.path.abspath(__file__))
CASES = os.path.join(HERE, "..", "tests", "data", "diff")
PAIRS = (
    ("fsdp1-to-fsdp2", "a.yaml", "b.yaml"),
    ("deepspeed-json-auto", "a.json", "b.json"),
    ("yaml-vs-deepspeed-json", "a.yaml", "b.json"),
)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", metavar="FILE", help="A and B (default: the pairs under tests/data/diff)")
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument(
        "--no-bytecode",
        action="store_true",
        help="keep PYTHONDONTWRITEBYTECODE: every run compiles accelconf from source",
    )
    args = parser.parse_args()
    import tempfile

    env = bench_env(tempfile.mkdtemp(prefix="accelconf-bench-"), args.no_bytecode)
    if len(args.files) not in (0, 2):
        parser.error("give two files, or none")
    py = sys.executable
    cases = [("python -c pass", [py, "-c", "pass"])]
    if args.files:
        cases.append(
            (
                f"accelconf diff {' '.join(os.path.basename(f) for f in args.files)}",
                [py, "-m", "accelconf", "diff", *args.files],
            )
        )
    else:
        for folder, a, b in PAIRS:
            pa, pb = os.path.join(CASES, folder, a), os.path.join(CASES, folder, b)
            cases.append((f"accelconf diff ({folder})", [py, "-m", "accelconf", "diff", pa, pb]))
        folder, a, b = PAIRS[0]
        cases.append(
            (
                "accelconf diff --format json (fsdp)",
                [
                    py,
                    "-m",
                    "accelconf",
                    "diff",
                    "--format",
                    "json",
                    os.path.join(CASES, folder, a),
                    os.path.join(CASES, folder, b),
                ],
            )
        )
    rows = startup_rows(cases, args.runs, env)
    print_ratios(rows, 44)
    mode = "compiled from source each run" if env.get("PYTHONDONTWRITEBYTECODE") else "with .pyc files"
    print(f"({args.runs} runs each, Python {sys.version.split()[0]}, {os.cpu_count()} CPUs, {mode})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
