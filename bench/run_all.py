"""Run every benchmark in bench/ and write bench/RESULTS.md with the machine's details.

``make bench`` runs this. The benchmarks are scripts, not tests: each prints a Markdown table of
medians and ratios (against ``python -c pass``, ``accelerate env --config_file`` and
yaml-language-server where it applies); this file only runs them side by side in one go.
"""

from __future__ import annotations

import datetime
import os
import platform
import subprocess
import sys
from importlib import metadata
from pathlib import Path

HERE = Path(__file__).resolve().parent
BENCHES = [
    ("validate and fmt", "bench_validate.py", []),
    ("conversions (to-env)", "bench_convert.py", []),
    ("diff", "bench_diff.py", []),
    ("check and env", "bench_check.py", []),
    ("fit: the strategy table", "bench_fit.py", []),
    ("language server vs yaml-language-server", "bench_lsp.py", []),
    ("two-node preflight on localhost", "bench_preflight.py", ["--runs", "1"]),
]


def machine() -> list[str]:
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = ""
    try:
        kb = int(Path("/proc/meminfo").read_text().split()[1])
        mem = f"{kb / 1024 / 1024:.0f} GiB"
    except (OSError, ValueError, IndexError):
        pass

    def ver(name: str) -> str:
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            return "not installed"

    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return [
        f"- date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC",
        f"- CPU: {cpu} ({os.cpu_count()} logical cores), memory {mem}, load average {load:.1f} at start",
        f"- {platform.system()} {platform.release()}, Python {platform.python_version()}",
        f"- accelconf {ver('accelconf')}, accelerate {ver('accelerate')}, torch {ver('torch')}, deepspeed "
        f"{ver('deepspeed')}, pygls {ver('pygls')}",
        f"- PYTHONDONTWRITEBYTECODE={os.environ.get('PYTHONDONTWRITEBYTECODE', '')!r} (each benchmark says how it "
        "treats bytecode)",
    ]


def main() -> int:
    out = [
        "# Benchmark results",
        "",
        "Written by `make bench` (`bench/run_all.py`). Medians of fresh processes; ratios are",
        "against `python -c pass` unless a column says otherwise.",
        "",
        "## Machine",
        "",
        *machine(),
        "",
    ]
    for title, script, extra in BENCHES:
        print(f"== {title} ({script})", file=sys.stderr, flush=True)
        proc = subprocess.run(
            [sys.executable, str(HERE / script), *extra], capture_output=True, text=True, cwd=HERE.parent
        )
        out += [f"## {title}", "", f"`python bench/{script}`", ""]
        text = proc.stdout.strip() or "(no output)"
        out += [text if text.startswith("|") else f"```\n{text}\n```", ""]
        if proc.returncode != 0:
            out += ["```", proc.stderr.strip()[-2000:], "```", ""]
        print(text, file=sys.stderr)
    (HERE / "RESULTS.md").write_text("\n".join(out) + "\n", encoding="utf-8")
    print("wrote bench/RESULTS.md", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
