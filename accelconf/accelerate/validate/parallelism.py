"""Rules about parallelism_config and mpirun_config."""

from __future__ import annotations

from accelconf.accelerate import registry
from accelconf.accelerate.launch import LaunchError, changed, launch_env
from accelconf.accelerate.registry import version_in
from accelconf.accelerate.validate.context import Context, rule


@rule("parallelism", "section-unused")
def _parallelism(ctx: Context) -> None:
    """What accelerate's ParallelismConfig refuses when the Accelerator starts (its ``__post_init__``
    and ``_validate_accelerator``), for a launch that passes the sizes on at all."""
    pc = ctx.cfg.section("parallelism_config")
    if not pc or not changed(ctx.version, "parallelism-config"):
        return  # before 1.10 key-too-new reports each size

    try:
        exported = launch_env(ctx.cfg, version=ctx.version).env.get(registry.USE_PARALLELISM_CONFIG_ENV) == "true"
    except LaunchError:
        exported = True  # launch-refused says why the launch fails; the sizes are still checked
    if not exported:  # no ParallelismConfig is built
        dt = ctx.doc.data.get("distributed_type")
        ctx.finding(
            "section-unused",
            "info",
            f"accelerate {ctx.version} does not pass `parallelism_config` on with "
            f"distributed_type {dt!r}: the sizes have no effect",
            ("parallelism_config",),
        )
        return

    def size(name: str) -> int:
        s = registry.get("parallelism_config", f"parallelism_config_{name}")
        if s is None or not version_in(ctx.version, s.since, s.until):
            return 1  # a size newer than the release is not read (key-too-new says so)
        try:
            return int(pc.get(s.key, 1))
        except (TypeError, ValueError):
            return 1

    dp_r, dp_s, tp, cp, sp = (
        size("dp_replicate_size"),
        size("dp_shard_size"),
        size("tp_size"),
        size("cp_size"),
        size("sp_size"),
    )
    if cp > 1 and sp > 1 and changed(ctx.version, "parallelism-cp-sp-exclusive"):
        ctx.finding(
            "parallelism",
            "error",
            "context parallelism and sequence parallelism cannot be combined",
            ("parallelism_config",),
        )
    if (tp > 1 or cp > 1) and dp_r > 1 and dp_s == 1:
        ctx.finding(
            "parallelism",
            "error",
            "tensor/context parallelism with pure replicated data parallelism (dp_shard_size 1) is rejected",
            ("parallelism_config",),
        )
    n = ctx.doc.data.get("num_processes")
    dt = ctx.doc.data.get("distributed_type")
    product = dp_r * dp_s * tp * cp * sp  # ParallelismConfig.total_size; 1 means "replicate over every process"
    sp_free = sp > 1 and changed(ctx.version, "parallelism-sp-any-size")  # DeepSpeed forms its own SP groups
    if isinstance(n, int) and not isinstance(n, bool) and n > 0 and product not in (1, n) and not sp_free:
        ctx.finding(
            "parallelism",
            "error",
            f"the parallelism sizes multiply to {product} but num_processes is {n} (ParallelismConfig raises "
            "ValueError)",
            ("parallelism_config",),
        )
    if dt == "FSDP" and ctx.cfg.fsdp_version() == 2 and dp_s == 1 and cp == 1:
        raises = changed(ctx.version, "parallelism-fsdp2-shard-dim")
        ctx.finding(
            "parallelism",
            "error" if raises else "warning",
            "FSDP2 with parallelism_config needs dp_shard_size or cp_size above 1 "
            + (
                "(ParallelismConfig raises ValueError)"
                if raises
                else "(prepare fails with a KeyError from the device mesh)"
            ),
            ("parallelism_config",),
        )


@rule("section-unused")
def _mpirun(ctx: Context) -> None:
    mc = ctx.doc.data.get("mpirun_config")
    if isinstance(mc, dict) and mc and not registry.section_active("mpirun_config", ctx.doc.data):
        ctx.finding(
            "section-unused",
            "info",
            "`mpirun_config` has an effect only with distributed_type MULTI_CPU",
            ("mpirun_config",),
        )
