"""``accelconf preflight CONFIG --machine-rank N``: start one node's ranks the way the config does.

Node 0 hosts a ``torch.distributed.TCPStore`` at ``main_process_ip:port`` (the agent store of
torchrun's contract: the ranks join it through ``env://`` with ``TORCHELASTIC_USE_AGENT_STORE``);
every node registers its node rank there, then waits for the others until ``--timeout``. A node
that arrived and waited in vain names the node ranks that never did, with the address it waited
on. Then each node starts ``num_processes // num_machines`` ranks (``python -m
accelconf.preflight``, with torchrun's variables), waits for them within a deadline, and kills
them if it passes. Node 0 keeps the store up until every node has finished.

The ranks are plain subprocesses rather than torch's elastic ``start_processes``: that closes
every sibling as soon as one rank exits non-zero, and a rank that reports findings exits 1.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import time
from datetime import timedelta
from typing import Any

from accelconf.accelerate.launch import refuse_machine_rank
from accelconf.preflight.layout import Layout, read_layout, require_torch
from accelconf.preflight.rank import PARENT
from accelconf.preflight.report import missing_report

KEY = "accelconf-preflight"
POLL_S = 0.1


def _reachable(layout: Layout, deadline: float) -> bool:
    """Whether the port accepts a connection before ``deadline`` (monotonic), trying every POLL_S.

    TCPStore's own client retries with a random backoff that can reach half its timeout, so it would
    miss a node 0 that comes up just after the first try; a plain socket keeps the deadline."""
    while True:
        try:
            with socket.create_connection((layout.main_ip, layout.main_port), timeout=1.0):
                return True
        except OSError:
            if time.monotonic() >= deadline:
                return False
            time.sleep(POLL_S)


def _connect(layout: Layout, node: int, timeout: float) -> Any:
    """The store: hosted here on node 0, reached as a client elsewhere; None when nobody answered."""
    from torch.distributed import TCPStore

    if node != 0 and not _reachable(layout, time.monotonic() + timeout):
        return None
    return TCPStore(
        layout.main_ip, layout.main_port, None, node == 0, timedelta(seconds=timeout), wait_for_workers=False
    )


def _wait_for(store: Any, keys: list[str], deadline: float) -> list[str]:
    """The keys still missing when ``deadline`` (monotonic) passes; [] as soon as all are there."""
    missing = keys
    while True:
        missing = [k for k in missing if not store.check([k])]
        if not missing or time.monotonic() >= deadline:
            return missing
        time.sleep(POLL_S)


def _rank_env(layout: Layout, node: int, local: int) -> dict[str, str]:
    rank = node * layout.per_node + local
    return {
        "RANK": str(rank),
        "LOCAL_RANK": str(local),
        "WORLD_SIZE": str(layout.per_node * layout.num_machines),
        "LOCAL_WORLD_SIZE": str(layout.per_node),
        "GROUP_RANK": str(node),
        "ROLE_RANK": str(rank),
        "MASTER_ADDR": layout.main_ip,
        "MASTER_PORT": str(layout.main_port),
        "TORCHELASTIC_USE_AGENT_STORE": "True",
        "TORCHELASTIC_RESTART_COUNT": "0",
        PARENT: str(os.getpid()),
    }


def _rank_args(args: argparse.Namespace) -> list[str]:
    out = [
        sys.executable,
        "-m",
        "accelconf.preflight",
        args.config,
        "--timeout",
        str(args.timeout),
        "--step-timeout",
        str(args.step_timeout),
        "--size",
        str(args.size),
        "--format",
        args.format,
    ]
    return out + (["--disk", args.disk] if args.disk else [])


def _run_ranks(args: argparse.Namespace, layout: Layout, node: int) -> int:
    procs = [
        subprocess.Popen(_rank_args(args), env={**os.environ, **_rank_env(layout, node, local)})
        for local in range(layout.per_node)
    ]
    # the rendezvous, each step (gather, all_reduce, leaving) and a margin for starting Python and torch
    deadline = time.monotonic() + args.timeout + 3 * args.step_timeout + 30
    try:
        while any(p.poll() is None for p in procs) and time.monotonic() < deadline:
            time.sleep(POLL_S)
    finally:
        late = [p for p in procs if p.poll() is None]
        for p in late:
            p.kill()
        for p in procs:
            p.wait()
    if late:
        print(
            f"accelconf preflight: node {node}: {len(late)} rank(s) did not finish in time and were stopped "
            "[preflight.hang]",
            file=sys.stderr,
        )
        return 1
    codes = [p.returncode for p in procs]
    return 0 if all(c == 0 for c in codes) else 1 if all(c in (0, 1) for c in codes) else max(codes)


def _arrive(args: argparse.Namespace, layout: Layout, node: int) -> tuple[Any, int | None]:
    """Register and wait for every node: the store, and an exit code when the job cannot start."""
    import torch.distributed  # noqa: F401  (before the clock starts: importing torch takes seconds)

    started = time.monotonic()
    error: Exception | None = None
    try:
        store = _connect(layout, node, args.timeout)
    except Exception as exc:  # torch raises DistNetworkError, DistStoreError or RuntimeError
        store, error = None, exc
    if store is None:
        if node == 0:
            first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
            print(
                f"accelconf preflight: node 0 cannot host the rendezvous at {layout.endpoint}: {first} "
                "[preflight.rendezvous]",
                file=sys.stderr,
            )
            return None, 1
        reason = "nobody answered there: node 0 never arrived, or the address or port is not reachable from here"
        sys.stdout.write(missing_report(layout, node, [0], time.monotonic() - started, args.format, reason))
        return None, 1
    if store.add(f"{KEY}/claim/{node}", 1) > 1:
        store.set(f"{KEY}/twice/{node}", socket.gethostname())
        print(
            f"accelconf preflight: node {node}: machine_rank {node} is used by another node already "
            "[preflight.machine-rank]",
            file=sys.stderr,
        )
        return None, 1
    store.set(f"{KEY}/node/{node}", json.dumps({"host": socket.gethostname(), "pid": os.getpid()}))
    keys = [f"{KEY}/node/{n}" for n in range(layout.num_machines)]
    missing = _wait_for(store, keys, started + args.timeout)
    if missing:
        ranks = [int(k.rsplit("/", 1)[1]) for k in missing]
        sys.stdout.write(missing_report(layout, node, ranks, time.monotonic() - started, args.format))
        return store, 1
    return store, None


def run(args: argparse.Namespace) -> int:
    layout = read_layout(args.config, args.machine_rank)
    require_torch()
    node = layout.machine_rank

    refuse_machine_rank(node, layout.num_machines, layout.path)
    store, code = _arrive(args, layout, node)
    if code is not None:
        return code
    try:
        code = _run_ranks(args, layout, node)
    finally:
        store.add(f"{KEY}/done", 1)
        if node == 0:  # the other nodes' ranks still talk to the store hosted here
            _wait_for_done(store, layout, args.step_timeout)
    if node == 0 and _report_twice(store, layout):
        return 1
    return code


def _report_twice(store: Any, layout: Layout) -> bool:
    """Say which machine ranks a second node claimed (it stopped; one node of that rank ran)."""
    twice = [n for n in range(layout.num_machines) if store.check([f"{KEY}/twice/{n}"])]
    for n in twice:
        host = store.get(f"{KEY}/twice/{n}").decode(errors="replace")
        print(
            f"node {n}: machine_rank {n} was used by two nodes ({host} came second and stopped) "
            "[preflight.machine-rank]",
            file=sys.stderr,
        )
    return bool(twice)


def _wait_for_done(store: Any, layout: Layout, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while int(store.add(f"{KEY}/done", 0)) < layout.num_machines and time.monotonic() < deadline:
        time.sleep(POLL_S)
