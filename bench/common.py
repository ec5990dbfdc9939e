"""What every benchmark in bench/ shares: timing fresh processes, and the bytecode setting.

An installed package has its ``.pyc`` files; this environment may set ``PYTHONDONTWRITEBYTECODE``,
which would make every run compile accelconf from source. ``bench_env(no_bytecode=False)`` caches
bytecode in a temporary ``PYTHONPYCACHEPREFIX`` instead, as an installed package would.
"""

from __future__ import annotations

import os
import subprocess
import time


def timed(argv: list[str], runs: int, env: dict[str, str] | None = None, cwd: str | None = None) -> list[float]:
    """Wall times (seconds) of ``runs`` fresh runs of a command, output discarded."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False, env=env, cwd=cwd)
        times.append(time.perf_counter() - start)
    return times


def bench_env(tmp: str, no_bytecode: bool = False, **extra: str) -> dict[str, str]:
    """The environment to run commands in: bytecode cached under ``tmp`` unless ``no_bytecode``."""
    env = dict(os.environ, **extra)
    if no_bytecode:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    else:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = os.path.join(tmp, "pycache")
    return env


def startup_rows(cases: list[tuple[str, list[str]]], runs: int, env: dict[str, str]) -> list[tuple[str, list[float]]]:
    """(name, wall times) of each command, after one run of each warms the file and bytecode caches."""
    for _, argv in cases:
        timed(argv, 1, env)
    return [(name, timed(argv, runs, env)) for name, argv in cases]


def print_ratios(rows: list[tuple[str, list[float]]], width: int) -> None:
    """The table every start-up benchmark prints: median and best ms, and the median as a multiple of
    the first row's (``python -c pass``)."""
    import statistics

    base = statistics.median(rows[0][1])
    print(f"{'command':<{width}} {'median ms':>9} {'best ms':>8} {'x pass':>7}")
    for name, times in rows:
        med = statistics.median(times)
        print(f"{name:<{width}} {med * 1000:>9.0f} {min(times) * 1000:>8.0f} {med / base:>7.1f}")


REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def shown(path: str | os.PathLike[str]) -> str:
    """A path as reports name it: relative to the repository (``examples/fsdp2.yaml``,
    ``../shared/corpus/...``), never an absolute path of the machine that ran the benchmark."""
    return os.path.relpath(os.fspath(path), REPO).replace(os.sep, "/")
