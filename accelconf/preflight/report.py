"""The preflight report: a table per node, the all_reduce, then each issue with its node and ranks.

``text`` for people, ``json`` (the same content) for tools. :func:`missing_report` is what a node
prints when the rendezvous deadline passed without every node.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from accelconf.preflight.compare import Issue, by_node
from accelconf.preflight.layout import Layout


def _short(sha: str | None) -> str:
    return "none" if sha is None else sha if sha == "missing" else sha[:12]


def _gpus(g: dict[str, Any]) -> str:
    if not g.get("count"):
        return "none"
    models = sorted(set(g.get("models") or []))
    return f"{g['count']} x {', '.join(models)}"


def _node_table(node: int, ranks: list[dict[str, Any]]) -> list[str]:
    first = ranks[0]
    v = first["versions"]
    lines = [f"node {node} ({first['host']}): ranks {', '.join(str(f['rank']) for f in ranks)}"]
    rows = [
        ("local world size", ", ".join(sorted({str(f["local_world_size"]) for f in ranks}))),
        (
            "GPUs",
            _gpus(first["gpus"])
            + (
                f" (CUDA_VISIBLE_DEVICES={first['gpus']['cuda_visible_devices']})"
                if first["gpus"].get("cuda_visible_devices") is not None
                else ""
            ),
        ),
        (
            "versions",
            ", ".join(f"{k} {v[k]}" for k in ("python", "torch", "accelerate", "deepspeed", "transformers") if v.get(k))
            + "".join(f", {k} {v[k]}" for k in ("cuda", "nccl") if v.get(k)),
        ),
        ("config", f"{first['config']['path']} sha256 {_short(first['config']['sha256'])}"),
        ("default config", f"{first['default_config']['path']} ({_short(first['default_config']['sha256'])})"),
        ("rendezvous", first["rendezvous"]),
    ]
    if first["deepspeed_file"]["path"]:
        rows.insert(
            4,
            ("DeepSpeed file", f"{first['deepspeed_file']['path']} sha256 {_short(first['deepspeed_file']['sha256'])}"),
        )
    if first.get("disk"):
        d = first["disk"]
        rows.append(
            ("disk", f"{d['path']}: " + (f"{d['free_gib']} GiB free" if "free_gib" in d else d.get("error", "")))
        )
    width = max(len(k) for k, _ in rows)
    return lines + [f"  {k.ljust(width)}  {val}" for k, val in rows]


def _bench_line(bench: dict[str, Any]) -> str:
    ok = "sum correct" if bench["correct"] else f"WRONG SUM (got {bench['got']}, expected {bench['expected']})"
    pairs = "".join(
        f"; nodes {p['nodes'][0]}-{p['nodes'][1]}: {p['busbw_gbps']:.2f} GB/s" for p in bench.get("pairs", [])
    )
    return (
        f"all_reduce of {bench['mib']:g} MiB on {bench['backend']}: {ok}, "
        f"{bench['seconds'] * 1000:.1f} ms, bus bandwidth {bench['busbw_gbps']:.2f} GB/s{pairs}"
    )


def text(
    layout: Layout,
    facts: Sequence[dict[str, Any]],
    found: Sequence[Issue],
    bench: dict[str, Any] | None,
    seconds: float,
) -> str:
    nodes = by_node(facts)
    head = (
        f"accelconf preflight: {layout.path}: {len(nodes)} node(s), {len(facts)} rank(s), "
        f"rendezvous {layout.endpoint}, {seconds:.1f} s"
    )
    lines = [head]
    for node, ranks in nodes.items():
        lines += _node_table(node, ranks)
    if bench:
        lines.append(_bench_line(bench))
    for issue in found:
        lines.append(f"{issue.where()}: {issue.message} [{issue.rule}]")
    lines.append(
        f"{len(found)} finding(s)" if found else "clean: every rank agrees with the config and with each other"
    )
    return "\n".join(lines) + "\n"


def as_json(
    layout: Layout,
    facts: Sequence[dict[str, Any]],
    found: Sequence[Issue],
    bench: dict[str, Any] | None,
    seconds: float,
) -> str:
    return (
        json.dumps(
            {
                "config": layout.path,
                "rendezvous": layout.endpoint,
                "seconds": round(seconds, 2),
                "ranks": list(facts),
                "allreduce": bench,
                "findings": [i.to_json() for i in found],
            },
            indent=2,
            default=str,
        )
        + "\n"
    )


def missing_report(layout: Layout, node: int, missing: Sequence[int], waited: float, fmt: str, reason: str = "") -> str:
    """What a node that arrived says about the nodes that did not."""
    issue = Issue(
        "preflight.missing-nodes",
        f"node rank(s) {', '.join(map(str, missing))} never arrived: waited {waited:.0f} s at "
        f"{layout.endpoint} (main_process_ip:port of {layout.path})" + (f"; {reason}" if reason else ""),
        node,
    )
    if fmt == "json":
        return (
            json.dumps(
                {
                    "config": layout.path,
                    "rendezvous": layout.endpoint,
                    "missing": list(missing),
                    "findings": [issue.to_json()],
                },
                indent=2,
            )
            + "\n"
        )
    return f"accelconf preflight: {layout.path}: node {node}\n{issue.where()}: {issue.message} [{issue.rule}]\n"
