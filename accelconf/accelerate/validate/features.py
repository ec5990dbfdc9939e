"""Rules about fp8_config and dynamo."""

from __future__ import annotations

from accelconf.accelerate import registry
from accelconf.accelerate.validate.context import Context, rule


@rule("section-unused")
def _fp8(ctx: Context) -> None:
    data = ctx.doc.data
    fp8 = data.get("fp8_config")
    if isinstance(fp8, dict) and fp8 and not registry.section_active("fp8_config", data):
        ctx.finding(
            "section-unused", "info", "`fp8_config` has an effect only with `mixed_precision: fp8`", ("fp8_config",)
        )


@rule("invalid-value", "legacy-key", "no-effect")
def _dynamo(ctx: Context) -> None:
    data = ctx.doc.data
    if isinstance(data.get("dynamo_config"), dict) and data.get("distributed_type") == "DEEPSPEED":
        backend = data["dynamo_config"].get("dynamo_backend", data["dynamo_config"].get("backend"))
        if backend and str(backend).upper() != "NO":
            ctx.finding(
                "no-effect",
                "warning",
                "`dynamo_config` is not exported by the DeepSpeed launcher: torch.compile stays off",
                ("dynamo_config",),
            )
    if "dynamo_backend" in data:
        v = data["dynamo_backend"]
        if "dynamo_config" in data:
            ctx.finding(
                "legacy-key",
                "warning",
                "top-level `dynamo_backend` replaces the whole `dynamo_config` when the file is loaded",
                ("dynamo_backend",),
            )
        else:
            ctx.finding(
                "legacy-key",
                "info",
                f"legacy top-level `dynamo_backend: {v}` is read as `dynamo_config: {{dynamo_backend: {v}}}`",
                ("dynamo_backend",),
            )
        s = registry.get("", "dynamo_backend")
        if s is not None and isinstance(v, str) and v.upper() not in registry.DYNAMO_BACKENDS:
            ctx.finding(
                "invalid-value",
                "error",
                f"`dynamo_backend: {v}` is not a dynamo backend",
                ("dynamo_backend",),
                on_value=True,
            )
