"""Rules about the process layout: counts, machines, ranks, gpu_ids."""

from __future__ import annotations

from typing import Any

from accelconf import releases
from accelconf.accelerate import registry
from accelconf.accelerate.launch import machine_rank_outside
from accelconf.accelerate.validate.context import Context, _is_sagemaker, rule
from accelconf.accelerate.validate.valuerules import TORCHRUN_TYPES, null_counts, quoted_counts

# distributed types whose processes torchrun (or the deepspeed launcher) starts: accelerate/utils/launch.py
# prepare_multi_gpu_env / prepare_deepspeed_cmd_env pass num_processes on as --nproc_per_node.


def fitting_processes(n: int, machines: int, gpus_per_machine: int | None = None) -> int:
    """The process count that lays out evenly: a multiple of num_machines (and, when known, one
    process per GPU of every machine)."""
    if gpus_per_machine:
        return machines * gpus_per_machine
    return max(machines, (n // machines) * machines)


@rule("gpu-ids", "missing-key", "multi-node", "null-count", "process-layout", "processes", "quoted-count")
def _processes(ctx: Context) -> None:
    data = ctx.doc.data
    if _is_sagemaker(ctx):
        return
    dt = data.get("distributed_type")
    n = data.get("num_processes")
    machines = data.get("num_machines", 1)
    for key, message in null_counts(n, machines, dt, data, data.get("use_cpu", False)):
        ctx.finding("null-count", "error", message, (key,), on_value=True)
    for key, message, number in quoted_counts(data, ctx.version):
        ctx.finding(
            "quoted-count",
            "error",
            message,
            (key,),
            on_value=True,
            suggestion=f"{key}: {number}",
            fix=ctx.replace_value((key,), number),
        )
    _missing_num_processes(ctx, dt)
    if not isinstance(n, int) or isinstance(n, bool) or not isinstance(machines, int) or isinstance(machines, bool):
        return
    if n == -1:
        ctx.finding(
            "missing-key",
            "error",
            '`num_processes: -1` means "not set": `accelerate launch` asks for --num_processes',
            ("num_processes",),
            on_value=True,
        )
    if machines > 1:
        _process_layout(ctx, dt, n, machines)
        _multi_node(ctx, dt, machines)
    _gpu_ids(ctx, dt, n, machines)
    if dt == "NO" and n > 1 and not data.get("use_cpu"):
        ctx.finding(
            "processes",
            "info",
            f"`distributed_type: 'NO'` with num_processes {n}: only one process runs the script",
            ("num_processes",),
        )


def _missing_num_processes(ctx: Context, dt: Any) -> None:
    if "num_processes" in ctx.doc.data:
        return
    if dt not in ("NO", None) and not isinstance(dt, bool) and releases.has(ctx.version, "num-processes-default"):
        ctx.finding(
            "missing-key",
            "error",
            '`num_processes` is missing: `accelerate launch` stops with "You need to manually pass in '
            '--num_processes" unless you pass it',
            ("distributed_type",),
            suggestion="num_processes: <total processes across machines>",
        )
    elif not releases.has(ctx.version, "num-processes-default") and dt != "NO":
        ctx.finding("missing-key", "error", f"accelerate {ctx.version} requires `num_processes` in the file", ())


def _process_layout(ctx: Context, dt: Any, n: int, machines: int) -> None:
    """A total that machines do not divide.

    accelerate does not refuse these: torchrun starts n // machines per node (utils/launch.py
    prepare_multi_gpu_env), so the job runs with fewer processes than written. A warning with
    the count that fits.
    """
    if n % machines and n > machines:
        fit = fitting_processes(n, machines)
        ctx.finding(
            "process-layout",
            "warning",
            f"`num_processes` is the total across machines: {n} is not a multiple of num_machines {machines}; "
            f"torchrun starts {n // machines} per node ({n // machines * machines} in all)",
            ("num_processes",),
            on_value=True,
            suggestion=str(fit),
            fix=ctx.replace_value(("num_processes",), str(fit)),
        )
    elif n < machines:
        ctx.finding(
            "process-layout",
            "error" if n // machines == 0 and dt in TORCHRUN_TYPES else "warning",
            f"`num_processes` ({n}) is the total across machines and is smaller than num_machines ({machines}): "
            f"torchrun would start {n // machines} processes per node",
            ("num_processes",),
            on_value=True,
            suggestion=str(machines),
        )


def _multi_node(ctx: Context, dt: Any, machines: int) -> None:
    """The rendezvous address and this machine's rank, for more than one machine."""
    data = ctx.doc.data
    if not data.get("main_process_ip") and dt != "DEEPSPEED":
        ctx.finding(
            "multi-node",
            "warning",
            "multi-node training needs `main_process_ip` (the address of machine rank 0): pass --main_process_ip "
            "at launch or set it here",
            ("num_machines",),
        )
    elif not data.get("main_process_ip"):
        ctx.finding(
            "multi-node",
            "warning",
            "multi-node DeepSpeed without `main_process_ip`: only works with a hostfile launcher",
            ("num_machines",),
        )
    outside = machine_rank_outside(data.get("machine_rank", 0), machines)
    if outside:
        ctx.finding("multi-node", "error", outside, ("machine_rank",), on_value=True)
    # same_network outside DeepSpeed is the file-ignored rule's


def _gpu_ids(ctx: Context, dt: Any, n: int, machines: int) -> None:
    gpu_ids = ctx.doc.data.get("gpu_ids")
    if not (isinstance(gpu_ids, str) and gpu_ids != "all" and dt in registry.MULTI_GPU_TYPES and machines <= 1):
        return
    ids = [x for x in gpu_ids.split(",") if x.strip()]
    if len(ids) < 2:
        ctx.finding(
            "gpu-ids",
            "error",
            f"`gpu_ids: {gpu_ids}` lists fewer than two GPUs for {dt}: accelerate raises ValueError (Less than "
            "two GPU ids)",
            ("gpu_ids",),
            on_value=True,
        )
    elif n and n != len(ids) and n // max(machines, 1) != len(ids):
        idle = " (some of them stay idle)" if n < len(ids) else ""
        ctx.finding(
            "gpu-ids",
            "warning",
            f"`num_processes: {n}` differs from the {len(ids)} GPUs in `gpu_ids`{idle}",
            ("gpu_ids",),
            on_value=True,
            suggestion=f"num_processes: {fitting_processes(n, max(machines, 1), len(ids))}",
        )
