"""How long ``accelconf validate`` and ``fmt --check`` take, against ``python -c pass`` and ``accelerate env``.

Not a test: ``python bench/bench_validate.py [--runs N]``. Each command runs in a fresh interpreter,
as a user (or a pre-commit hook) starts it. Goals: validate on one file within about 15x
``python -c pass``; the whole accelerate corpus in one call faster than one
``accelerate env --config_file`` (which imports torch).
"""

from __future__ import annotations

import argparse
import glob
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus" / "accelerate"


def timed(argv: list[str], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False, cwd=ROOT)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=11)
    args = ap.parse_args()
    py = sys.executable
    one = str(ROOT / "examples" / "fsdp2.yaml")
    corpus = sorted(glob.glob(str(CORPUS / "*")))
    base = timed([py, "-c", "pass"], args.runs)
    rows = [("python -c pass", base)]
    rows.append(("accelconf validate (1 file)", timed([py, "-m", "accelconf", "validate", one], args.runs)))
    rows.append(("accelconf fmt --check (1 file)", timed([py, "-m", "accelconf", "fmt", "--check", one], args.runs)))
    if corpus:
        rows.append((f"accelconf validate ({len(corpus)} corpus files, one call)", timed([py, "-m", "accelconf", "validate", *corpus], max(3, args.runs // 3))))
    accelerate = shutil.which("accelerate", path=os.path.dirname(py)) or shutil.which("accelerate")
    if accelerate:
        rows.append(("accelerate env --config_file (1 file)", timed([accelerate, "env", "--config_file", one], max(3, args.runs // 3))))
    print(f"| command | median (ms) | x python -c pass |\n|---|---:|---:|")
    for name, t in rows:
        print(f"| {name} | {t * 1000:.0f} | {t / base:.1f} |")
    if accelerate and corpus:
        acc = rows[-1][1]
        whole = rows[3][1]
        print(f"\ncorpus in one call vs one `accelerate env`: {acc / whole:.1f}x faster" if whole < acc else
              f"\ncorpus in one call vs one `accelerate env`: {whole / acc:.1f}x SLOWER")
    return 0


if __name__ == "__main__":
    sys.exit(main())
