"""The gathered facts against the config and against each other: a list of :class:`Issue`.

Rank 0 is the reference for "each other": a rank whose value differs is reported with its node and
ranks, next to the value node 0 has. Pure functions of the facts; every rank can run them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from accelconf.preflight.layout import Layout

# Clocks further apart than this garble merged logs and checkpoint times; far above the jitter of
# leaving a barrier.
CLOCK_SKEW_S = 2.0


@dataclass(frozen=True)
class Issue:
    rule: str
    message: str
    node: int | None = None  # None: the job as a whole
    ranks: tuple[int, ...] = ()

    def where(self) -> str:
        if self.node is None:
            return "job"
        if not self.ranks:
            return f"node {self.node}"
        return f"node {self.node} " + ("rank " if len(self.ranks) == 1 else "ranks ") + ",".join(map(str, self.ranks))

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "ranks": list(self.ranks)}


def by_node(facts: Sequence[dict[str, Any]]) -> dict[int, list[dict[str, Any]]]:
    out: dict[int, list[dict[str, Any]]] = {}
    for f in sorted(facts, key=lambda f: f["rank"]):
        out.setdefault(f["node"], []).append(f)
    return dict(sorted(out.items()))


def _differ(
    facts: Sequence[dict[str, Any]], rule: str, label: str, get: Callable[[dict[str, Any]], Any]
) -> Iterable[Issue]:
    """One issue per (node, value) where a rank's value is not rank 0's."""
    ref = min(facts, key=lambda f: f["rank"])
    want = get(ref)
    groups: dict[tuple[int, str], list[int]] = {}
    for f in facts:
        got = get(f)
        if got != want:
            groups.setdefault((f["node"], repr(got)), []).append(f["rank"])
    for (node, got), ranks in sorted(groups.items()):
        yield Issue(
            rule,
            f"{label} is {got} here, {want!r} on node {ref['node']} rank {ref['rank']}",
            node,
            tuple(sorted(ranks)),
        )


def against_config(layout: Layout, facts: Sequence[dict[str, Any]]) -> Iterable[Issue]:
    cfg = layout.path
    if len(facts) != layout.num_processes:
        yield Issue(
            "preflight.world-size", f"{len(facts)} ranks joined; {cfg} says num_processes: {layout.num_processes}"
        )
    nodes = by_node(facts)
    if len(nodes) != layout.num_machines:
        yield Issue(
            "preflight.nodes",
            f"{len(nodes)} nodes joined ({', '.join(map(str, nodes))}); {cfg} says num_machines: {layout.num_machines}",
        )
    alone = [f["rank"] for f in facts if not f["from_launcher"]]
    if alone and layout.num_processes > 1:
        yield Issue(
            "preflight.no-launcher",
            "started without RANK/WORLD_SIZE (nor MPI's variables): this process runs "
            "as rank 0 of 1, on its own; start it with torchrun, accelerate launch (torchrun path) or "
            "`accelconf preflight --machine-rank N`",
            facts[0]["node"],
            tuple(alone),
        )
    for node, ranks in nodes.items():
        ids = tuple(f["rank"] for f in ranks)
        if len(ranks) != layout.per_node:
            yield Issue(
                "preflight.per-node",
                f"{len(ranks)} processes on this node; {cfg} gives "
                f"{layout.per_node} per node (num_processes {layout.num_processes} / num_machines "
                f"{layout.num_machines})",
                node,
                ids,
            )
        count = ranks[0]["gpus"].get("count", 0)
        if layout.uses_gpus and count != layout.per_node:
            yield Issue(
                "preflight.gpus",
                f"{count} GPUs visible for {layout.per_node} processes per node "
                f"(CUDA_VISIBLE_DEVICES={ranks[0]['gpus'].get('cuda_visible_devices')})",
                node,
                ids,
            )
        used = sorted({f["rendezvous"] for f in ranks})
        if used != [layout.endpoint]:
            yield Issue(
                "preflight.rendezvous",
                f"rendezvous at {', '.join(used)}; {cfg} says main_process_ip:port {layout.endpoint}",
                node,
                ids,
            )


def against_each_other(facts: Sequence[dict[str, Any]]) -> Iterable[Issue]:
    ref = min(facts, key=lambda f: f["rank"])

    def version(name: str) -> Callable[[dict[str, Any]], Any]:
        return lambda f: f["versions"].get(name)

    def variable(name: str) -> Callable[[dict[str, Any]], Any]:
        return lambda f: f["env"].get(name)

    for name in sorted({n for f in facts for n in f["versions"]}):
        yield from _differ(facts, "preflight.version", f"{name} version", version(name))
    yield from _differ(facts, "preflight.config", "the config file (sha256)", lambda f: f["config"]["sha256"])
    yield from _differ(
        facts, "preflight.deepspeed-file", "the DeepSpeed file (sha256)", lambda f: f["deepspeed_file"]["sha256"]
    )
    yield from _differ(
        facts,
        "preflight.default-config",
        "accelerate's default config (sha256, None: none)",
        lambda f: f["default_config"]["sha256"],
    )
    for var in sorted({k for f in facts for k in f["env"]}):
        yield from _differ(facts, "preflight.env", var, variable(var))
    yield from _differ(facts, "preflight.gpu-model", "the GPU models", lambda f: f["gpus"].get("models"))
    for f in facts:
        skew = f.get("clock", 0.0) - ref.get("clock", 0.0)
        if abs(skew) > CLOCK_SKEW_S:
            yield Issue(
                "preflight.clock",
                f"clock {skew:+.1f} s from node {ref['node']} rank {ref['rank']}",
                f["node"],
                (f["rank"],),
            )
        if f.get("disk") and "error" in f["disk"]:
            yield Issue("preflight.disk", f"{f['disk']['path']}: {f['disk']['error']}", f["node"], (f["rank"],))


def issues(layout: Layout, facts: Sequence[dict[str, Any]]) -> list[Issue]:
    return [*against_config(layout, facts), *against_each_other(facts)]
