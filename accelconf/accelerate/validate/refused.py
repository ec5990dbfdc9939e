"""What the release's own launcher refuses, when no other rule said why: runs last."""

from __future__ import annotations

from accelconf.accelerate.launch import LaunchError, launch_env
from accelconf.accelerate.validate.context import Context, rule


@rule("launch-refused")
def _launch_refused(ctx: Context) -> None:
    """What the release's own launcher refuses (accelconf.accelerate.launch, with its per-release
    table CHANGES), when no rule above has already said why the config fails."""
    if any(f.severity == "error" for f in ctx.findings):
        return

    try:
        launch_env(ctx.cfg, version=ctx.version)
    except LaunchError as exc:
        where: tuple[str, ...] = ("distributed_type",) if "distributed_type" in ctx.doc.data else ()
        ctx.finding(
            "launch-refused", "error", f"`accelerate launch` {ctx.version} refuses this config: {exc.message}", where
        )
