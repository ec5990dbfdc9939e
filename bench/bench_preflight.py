"""How long a clean two-node ``accelconf preflight`` takes on localhost (two nodes, two ranks each).

Not a test: run it by hand, ``python bench/bench_preflight.py [--runs N]``. Each run starts
``accelconf preflight CONFIG --machine-rank 0`` and ``--machine-rank 1`` at once (a MULTI_CPU
config, rendezvous on 127.0.0.1 at a free port) and times until both have exited; six Python
processes import torch (two nodes, four ranks), which is most of the time, so the table also gives
the CPU seconds of all of them (the wall time on an idle machine is about that over the cores).
The goal is under 15 s on 2 cores. The installed packages' own bytecode is used (a
``PYTHONPYCACHEPREFIX`` would make every run compile torch from source).
"""

from __future__ import annotations

import argparse
import os
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import time

from common import REPO  # noqa: E402  (bench/ is on sys.path when run as a script)

CONFIG = """\
compute_environment: LOCAL_MACHINE
distributed_type: MULTI_CPU
num_machines: 2
num_processes: 4
machine_rank: 0
main_process_ip: 127.0.0.1
main_process_port: {port}
mixed_precision: 'no'
use_cpu: true
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _cpu() -> float:
    use = resource.getrusage(resource.RUSAGE_CHILDREN)
    return use.ru_utime + use.ru_stime


def one_run(tmp: str) -> tuple[float, float, list[int]]:
    path = os.path.join(tmp, "multinode.yaml")
    with open(path, "w") as fh:
        fh.write(CONFIG.format(port=_free_port()))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = os.pathsep.join([REPO, os.path.join(REPO, "lsp")])
    cpu, start = _cpu(), time.perf_counter()
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "accelconf", "preflight", path, "--machine-rank", str(n), "--size", "1"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        for n in (0, 1)
    ]
    codes = [p.wait(timeout=600) for p in procs]
    return time.perf_counter() - start, _cpu() - cpu, codes


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        one_run(tmp)  # warm the bytecode cache
        results = [one_run(tmp) for _ in range(args.runs)]
    times = [t for t, _, _ in results]
    cpu = statistics.median(c for _, c, _ in results)
    ok = all(codes == [0, 0] for _, _, codes in results)
    load = os.getloadavg()[0]
    print("| what | median | best | CPU s, all processes | runs | exit codes 0 | load average |")
    print("|---|---|---|---|---|---|---|")
    print(
        f"| clean two-node preflight, 2 x 2 ranks on localhost | {statistics.median(times):.1f} s | {min(times):.1f} s "
        f"| {cpu:.1f} s | {len(times)} | {'yes' if ok else 'no'} | {load:.1f} |"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
