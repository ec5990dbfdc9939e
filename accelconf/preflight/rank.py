"""One rank of the preflight, started by a launcher: ``python -m accelconf.preflight CONFIG``.

Collects this rank's facts, joins the job's process group (``env://``: the variables torchrun,
``accelerate launch`` or ``accelconf preflight`` set), gathers every rank's facts over gloo, runs
an ``all_reduce`` on the job's backend (NCCL when the config trains on GPUs and this host has
them, else gloo), and prints the report on rank 0. Every step has a deadline kept by a watchdog
thread: a step that hangs is reported and the process exits, never waits for ever.
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from itertools import combinations
from typing import Any

from accelconf.preflight import report
from accelconf.preflight.compare import Issue, issues
from accelconf.preflight.facts import RankInfo, collect, rank_info
from accelconf.preflight.layout import Layout, read_layout, require_torch

PARENT = "ACCELCONF_PREFLIGHT_PARENT"  # set by `accelconf preflight`: a rank outliving it exits
HUNG = 1  # a hung step is a finding, not a crash


class Watchdog:
    """Ends the process when the current step passes its deadline, or when the parent is gone."""

    def __init__(self, info: RankInfo, parent: int | None) -> None:
        self.info, self.parent = info, parent
        self.step = ""
        self.deadline: float | None = None
        self.seconds = 0.0
        threading.Thread(target=self._watch, daemon=True).start()

    @contextmanager
    def during(self, step: str, seconds: float) -> Iterator[None]:
        self.step, self.seconds, self.deadline = step, seconds, time.monotonic() + seconds
        try:
            yield
        except Exception as exc:  # a peer gone mid-step: torch raises DistError or RuntimeError
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            self._stop(f"{step} failed: {first} [preflight.step-failed]")
        finally:
            self.deadline = None

    def _stop(self, message: str) -> None:
        i = self.info
        print(f"accelconf preflight: node {i.node_rank} rank {i.rank}: {message}", file=sys.stderr, flush=True)
        sys.stdout.flush()
        os._exit(HUNG)  # not sys.exit: torch's exit handlers could wait on the peer that is gone

    def _watch(self) -> None:
        while True:
            time.sleep(0.1)
            if self.parent is not None and os.getppid() != self.parent:
                os._exit(HUNG)
            if self.deadline is not None and time.monotonic() > self.deadline:
                self._stop(f"{self.step} did not finish within {self.seconds:g} s [preflight.hang]")


def _gpus(torch: Any) -> tuple[dict[str, Any], dict[str, str | None]]:
    build: dict[str, str | None] = {"cuda": torch.version.cuda, "nccl": None}
    if not torch.cuda.is_available():
        return {"count": 0, "models": [], "memory_gib": []}, build
    props = [torch.cuda.get_device_properties(i) for i in range(torch.cuda.device_count())]
    try:
        build["nccl"] = ".".join(map(str, torch.cuda.nccl.version()))
    except Exception:  # a build without NCCL
        pass
    return {
        "count": len(props),
        "models": [p.name for p in props],
        "memory_gib": [round(p.total_memory / 2**30, 1) for p in props],
    }, build


def _all_reduce(torch: Any, dist: Any, mib: float, device: str, group: Any, members: list[int]) -> dict[str, Any]:
    """Time an all_reduce of ``mib`` MiB float32 over ``group`` and check its sum."""
    n = max(int(mib * 2**20 / 4), 1)
    me = dist.get_rank()
    t = torch.full((n,), float(me + 1), dtype=torch.float32, device=device)
    dist.all_reduce(t, group=group)
    expected = float(sum(r + 1 for r in members))
    wrong = t.ne(expected)
    got = float(t[wrong.nonzero()[0]].item()) if bool(wrong.any()) else expected
    iters = 3
    dist.barrier(group=group)
    start = time.perf_counter()
    for _ in range(iters):
        dist.all_reduce(t, group=group)
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    secs = (time.perf_counter() - start) / iters
    k = len(members)
    busbw = n * 4 * 2 * (k - 1) / k / max(secs, 1e-9) / 1e9  # nccl-tests' bus bandwidth
    return {
        "mib": mib,
        "correct": got == expected,
        "got": got,
        "expected": expected,
        "seconds": secs,
        "busbw_gbps": busbw,
    }


def _bench(
    torch: Any, dist: Any, args: argparse.Namespace, device: str, everyone: list[dict[str, Any]]
) -> dict[str, Any]:
    world = list(range(dist.get_world_size()))
    bench = {**_all_reduce(torch, dist, args.size, device, None, world), "backend": dist.get_backend()}
    nodes = sorted({f["node"] for f in everyone})
    pairs = []
    if len(nodes) > 2:  # with two nodes the whole job is the one pair
        me = everyone[dist.get_rank()]["node"]
        for a, b in combinations(nodes, 2):
            members = [f["rank"] for f in everyone if f["node"] in (a, b)]
            group = dist.new_group(members)  # every rank creates every group, in the same order
            if me in (a, b):
                pairs.append({"nodes": [a, b], **_all_reduce(torch, dist, args.size, device, group, members)})
        gathered: list[Any] = [None] * len(world)
        dist.all_gather_object(gathered, pairs)
        seen = {tuple(p["nodes"]): p for ps in gathered for p in ps}
        pairs = [seen[k] for k in sorted(seen)]
    return {**bench, "pairs": pairs}


def _print(
    args: argparse.Namespace,
    layout: Layout,
    info: RankInfo,
    everyone: list[dict[str, Any]],
    found: list[Issue],
    bench: dict[str, Any] | None,
    started: float,
) -> None:
    seconds = time.monotonic() - started
    if info.rank == 0:
        write = report.as_json if args.format == "json" else report.text
        sys.stdout.write(write(layout, everyone, found, bench, seconds))
    elif info.local_rank == 0 and args.format == "text":
        host = everyone[info.rank]["host"]
        sys.stdout.write(
            f"accelconf preflight: node {info.node_rank} ({host}) joined; {len(found)} finding(s); "
            "the report is printed by rank 0 on node 0\n"
        )
    sys.stdout.flush()


def run(args: argparse.Namespace) -> int:
    started = time.monotonic()
    layout = read_layout(args.config)
    require_torch()
    info = rank_info()
    parent = os.environ.get(PARENT)
    dog = Watchdog(info, int(parent) if parent else None)
    from datetime import timedelta

    import torch
    import torch.distributed as dist

    gpus, build = _gpus(torch)
    facts = collect(info, layout, gpus, build, args.disk)
    use_cuda = layout.uses_gpus and gpus["count"] > 0
    everyone: list[dict[str, Any]] = [{**facts, "clock": time.time()}]
    bench: dict[str, Any] | None = None
    if info.world_size > 1:
        with dog.during(
            f"the rendezvous at {os.environ.get('MASTER_ADDR')}:{os.environ.get('MASTER_PORT')}", args.timeout
        ):
            if use_cuda:
                torch.cuda.set_device(info.local_rank)
            dist.init_process_group(
                "cpu:gloo,cuda:nccl" if use_cuda else "gloo",
                init_method="env://",
                rank=info.rank,
                world_size=info.world_size,
                timeout=timedelta(seconds=args.step_timeout),
            )
        with dog.during("gathering the facts (all_gather_object on gloo)", args.step_timeout):
            group = dist.new_group(backend="gloo") if use_cuda else None
            dist.barrier(group=group)
            facts["clock"] = time.time()
            everyone = [{} for _ in range(info.world_size)]
            dist.all_gather_object(everyone, facts, group=group)
        with dog.during(f"the all_reduce on {'nccl' if use_cuda else 'gloo'}", args.step_timeout):
            bench = _bench(torch, dist, args, f"cuda:{info.local_rank}" if use_cuda else "cpu", everyone)
    found = issues(layout, everyone)
    if bench and not bench["correct"]:
        found.append(Issue("preflight.allreduce", f"all_reduce returned {bench['got']}, expected {bench['expected']}"))
    _print(args, layout, info, everyone, found, bench, started)
    if info.world_size > 1:
        with dog.during("leaving the process group", args.step_timeout):
            dist.destroy_process_group()
    return 1 if found else 0
