"""How long ``accelconf fit`` takes for the whole strategy table, against ``python -c pass``.

Not a test: run it by hand, ``python bench/bench_fit.py [--runs N] [--no-bytecode]``. Each command
runs in a fresh interpreter, as a user would start it; the table gives the median and best wall time
and the ratio of the median to ``python -c pass``. The goal: the whole table (34 strategies, with
activations from Qwen2-7B's ``config.json``) under 0.3 s, with no torch import on that path
(``tests/unit/environment/test_fit.py`` asserts the imports). Bytecode is cached as for an installed package.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile

from common import REPO, bench_env, print_ratios, startup_rows  # noqa: E402  (bench/ is on sys.path when run as a script)

QWEN = os.path.join(REPO, "examples", "memory", "qwen2-7b")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--no-bytecode", action="store_true", help="compile every module on every run")
    args = parser.parse_args()
    py = sys.executable
    fit = [py, "-m", "accelconf", "fit", "--gpus", "8", "--gpu", "H100-80GB"]
    cases = [
        ("python -c pass", [py, "-c", "pass"]),
        ("accelconf fit --params 70B", fit + ["--params", "70B"]),
        (
            "accelconf fit --model qwen2-7b (activations)",
            fit + ["--model", QWEN, "--seq-len", "4096", "--micro-batch", "2"],
        ),
        (
            "accelconf fit --model qwen2-7b --format json",
            fit + ["--model", QWEN, "--seq-len", "4096", "--micro-batch", "2", "--format", "json"],
        ),
    ]
    with tempfile.TemporaryDirectory() as tmp:
        env = bench_env(tmp, args.no_bytecode)
        rows = startup_rows(cases, args.runs, env)
    print_ratios(rows, 46)
    load = f", load {os.getloadavg()[0]:.1f}" if hasattr(os, "getloadavg") else ""
    cache = "no bytecode cache" if args.no_bytecode else "bytecode cached"
    print(f"({args.runs} runs each, Python {sys.version.split()[0]}, {os.cpu_count()} CPUs{load}, {cache})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
