"""How long ``accelconf validate`` and ``fmt --check`` take, against ``python -c pass`` and ``accelerate env``.

Not a test: ``python bench/bench_validate.py [--runs N]``. Each command runs in a fresh interpreter,
as a user (or a pre-commit hook) starts it. Goals: validate on one file within about 15x
``python -c pass``; validate and explain of a Trainer/TRL arguments file within 4x; the whole
accelerate corpus in one call faster than one ``accelerate env --config_file`` (which imports torch).
"""

from __future__ import annotations

import argparse
import glob
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

from common import bench_env, timed  # noqa: E402  (bench/ is on sys.path when run as a script)

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus" / "accelerate"
# A Trainer/TRL arguments file (alignment-handbook's SFT recipe); a built-in one without the corpus.
ARGS_NAME = "huggingface__alignment-handbook__recipes__zephyr-7b-beta__sft__config_full.yaml"
ARGS = ROOT.parent / "shared" / "corpus" / "trainer" / "args" / ARGS_NAME
ARGS_FALLBACK = """\
model_name_or_path: Qwen/Qwen2.5-0.5B
bf16: true
per_device_train_batch_size: 4
gradient_accumulation_steps: 2
learning_rate: 2.0e-05
warmup_ratio: 0.1
output_dir: out
"""


def median_ms(argv: list[str], runs: int, env: dict[str, str]) -> float:  # seconds
    return statistics.median(timed(argv, runs, env, cwd=str(ROOT)))


def billion_laughs_ms() -> float:
    """How long refusing a billion-laughs YAML takes in-process (goal: under 1 s; it was a test's
    wall-clock limit, which a loaded machine broke)."""
    import time

    sys.path.insert(0, str(ROOT))
    from accelconf.errors import InputError
    from accelconf.text.document import load_text

    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    prev = "a"
    for name in "bcdefghi":
        lines.append(f"{name}: &{name} [" + ",".join([f"*{prev}"] * 9) + "]")
        prev = name
    start = time.perf_counter()
    try:
        load_text("\n".join(lines) + "\n")
    except InputError:
        pass
    return (time.perf_counter() - start) * 1000


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=11)
    ap.add_argument("--no-bytecode", action="store_true", help="compile accelconf from source on every run")
    args = ap.parse_args()
    env = bench_env(tempfile.mkdtemp(prefix="accelconf-bench-"), args.no_bytecode)
    py = sys.executable
    one = str(ROOT / "examples" / "fsdp2.yaml")
    corpus = sorted(glob.glob(str(CORPUS / "*")))
    base = median_ms([py, "-c", "pass"], args.runs, env)
    rows = [("python -c pass", base)]
    rows.append(("accelconf validate (1 file)", median_ms([py, "-m", "accelconf", "validate", one], args.runs, env)))
    rows.append(
        ("accelconf fmt --check (1 file)", median_ms([py, "-m", "accelconf", "fmt", "--check", one], args.runs, env))
    )
    tmp = tempfile.mkdtemp(prefix="accelconf-bench-args-")
    args_file = str(ARGS) if ARGS.exists() else os.path.join(tmp, "args.yaml")
    if not ARGS.exists():
        Path(args_file).write_text(ARGS_FALLBACK)
    for command in ("validate", "explain"):
        argv = [py, "-m", "accelconf", command, args_file]
        rows.append((f"accelconf {command} (Trainer arguments file)", median_ms(argv, args.runs, env)))
    shutil.rmtree(tmp, ignore_errors=True)
    if corpus:
        rows.append(
            (
                f"accelconf validate ({len(corpus)} corpus files, one call)",
                median_ms([py, "-m", "accelconf", "validate", *corpus], max(3, args.runs // 3), env),
            )
        )
    accelerate = shutil.which("accelerate", path=os.path.dirname(py)) or shutil.which("accelerate")
    if accelerate:
        rows.append(
            (
                "accelerate env --config_file (1 file)",
                median_ms([accelerate, "env", "--config_file", one], max(3, args.runs // 3), env),
            )
        )
    print("| command | median (ms) | x python -c pass |\n|---|---:|---:|")
    for name, t in rows:
        print(f"| {name} | {t * 1000:.0f} | {t / base:.1f} |")
    laughs = billion_laughs_ms()
    print(f"\nbillion-laughs YAML refused in {laughs:.0f} ms ({'within' if laughs < 1000 else 'OVER'} the 1 s goal)")
    if accelerate and corpus:
        acc = rows[-1][1]
        whole = next(t for name, t in rows if "corpus files" in name)
        print(
            f"\ncorpus in one call vs one `accelerate env`: {acc / whole:.1f}x faster"
            if whole < acc
            else f"\ncorpus in one call vs one `accelerate env`: {whole / acc:.1f}x SLOWER"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
