"""Rules about distributed_type, compute_environment and mixed_precision."""

from __future__ import annotations

from accelconf import releases
from accelconf.accelerate import registry
from accelconf.accelerate.launch import changed
from accelconf.accelerate.validate import valuerules
from accelconf.accelerate.validate.context import Context, _is_sagemaker, rule, scalar_text
from accelconf.accelerate.validate.values import place
from accelconf.findings import Severity


@rule(
    "enum-case",
    "invalid-type",
    "invalid-value",
    "legacy-value",
    "missing-distributed-type",
    "value-too-new",
    "yaml-bool-value",
)
def _distributed_type(ctx: Context) -> None:
    data = ctx.doc.data
    if "distributed_type" not in data:
        ctx.finding(
            "missing-distributed-type",
            "error",
            "`distributed_type` is missing: accelerate refuses the file (ValueError: A `distributed_type` must be "
            "specified)",
            (),
        )
        return
    value = data["distributed_type"]
    if isinstance(value, bool) and not _is_sagemaker(ctx):
        _distributed_type_bool(ctx, value)
        return
    for problem in valuerules.distributed_type_problems(value, ctx.version, _is_sagemaker(ctx)):
        place(ctx, ("distributed_type",), problem)


def _distributed_type_bool(ctx: Context, value: bool) -> None:
    """An unquoted YAML boolean (``NO`` is False in YAML 1.1): launched only where num_processes
    is written."""
    node = ctx.value_node("distributed_type")
    raw = node.raw if node else str(value)
    if "num_processes" in ctx.doc.data:
        sev: Severity = "warning"
        msg = (
            f"unquoted `{raw}` is the YAML boolean {value} for accelerate, not the string 'NO'; it launches only "
            "because num_processes is set. Quote it: 'NO'"
        )
    else:
        sev = "error"
        msg = (
            f"unquoted `{raw}` is the YAML boolean {value} for accelerate: num_processes is not filled and launch "
            "fails. Quote it: 'NO'"
        )
    fix = ctx.replace_value(("distributed_type",), "'NO'") if raw.upper() == "NO" else ()
    ctx.finding("yaml-bool-value", sev, msg, ("distributed_type",), on_value=True, suggestion="'NO'", fix=fix)


@rule("enum-case", "invalid-value", "missing-key", "sagemaker-broken", "unknown-key")
def _compute_environment(ctx: Context) -> None:
    data = ctx.doc.data
    ce = data.get("compute_environment")
    if ce is None or ce in ("LOCAL_MACHINE", "AMAZON_SAGEMAKER"):
        if ce == "AMAZON_SAGEMAKER":
            if releases.has(ctx.version, "sagemaker-parallelism-attribute"):
                ctx.finding(
                    "sagemaker-broken",
                    "error",
                    f"SageMaker configs crash `accelerate launch` in accelerate {ctx.version} (AttributeError: "
                    "'SageMakerConfig' object has no attribute 'parallelism_config', 1.10+)",
                    ("compute_environment",),
                    on_value=True,
                )
            elif releases.has(ctx.version, "num-processes-injected") and data.get("distributed_type") == "NO":
                ctx.finding(
                    "sagemaker-broken",
                    "error",
                    "SageMaker configs with distributed_type 'NO' fail to load in accelerate 0.34+ (num_processes is "
                    "injected and then unknown)",
                    ("distributed_type",),
                    on_value=True,
                )
            for req in ("ec2_instance_type", "iam_role_name"):
                if req not in data:
                    ctx.finding("missing-key", "error", f"SageMaker configs need `{req}`", ("compute_environment",))
            for key in data:  # (a key no config has is the unknown-key rule's, with its did-you-mean)
                if (
                    str(key) not in registry.SAGEMAKER_KEYS | {"fp16", "dynamo_backend"}
                    and registry.get("", str(key)) is not None
                ):
                    ctx.finding(
                        "unknown-key",
                        "error",
                        f"`{key}` is not a SageMaker config key: accelerate refuses to load the file",
                        (str(key),),
                    )
        return
    if isinstance(ce, str) and ce.upper() in ("LOCAL_MACHINE", "AMAZON_SAGEMAKER"):
        ctx.finding(
            "enum-case",
            "error",
            f"`compute_environment: {ce}` is not exactly LOCAL_MACHINE, so accelerate loads it as a SageMaker config "
            "and fails with a misleading error",
            ("compute_environment",),
            on_value=True,
            suggestion=ce.upper(),
            fix=ctx.replace_value(("compute_environment",), ce.upper()),
        )
    else:
        ctx.finding(
            "invalid-value",
            "error",
            f"`compute_environment: {ce}` must be LOCAL_MACHINE or AMAZON_SAGEMAKER",
            ("compute_environment",),
            on_value=True,
        )


@rule("enum-case", "invalid-type", "invalid-value", "legacy-key", "yaml-bool-value")
def _mixed_precision(ctx: Context) -> None:
    data = ctx.doc.data
    if "mixed_precision" not in data:
        if data.get("fp16"):
            ctx.finding(
                "legacy-key",
                "info",
                "legacy `fp16: true` is read as `mixed_precision: fp16`",
                ("fp16",),
                suggestion="mixed_precision: fp16",
            )
        return
    if "fp16" in data:
        ctx.finding(
            "legacy-key",
            "warning",
            "`fp16` is dropped when `mixed_precision` is set; remove it",
            ("fp16",),
            fix=ctx.delete_key(("fp16",)),
        )
    value = data["mixed_precision"]
    node = ctx.value_node("mixed_precision")
    if isinstance(value, bool):
        raw = node.raw if node else str(value)
        # only false, and only in a YAML file, is read as 'no' (before 0.34); anything else reaches .lower()
        converted = value is False and ctx.doc.format == "yaml" and changed(ctx.version, "yaml-false-precision-no")
        what = f"unquoted `{raw}` is the YAML boolean {value}" if ctx.doc.format == "yaml" else f"`{raw}` is a boolean"
        quoted = scalar_text(ctx.doc, "no")
        ctx.finding(
            "yaml-bool-value",
            "info" if converted else "error",
            f"{what}: accelerate {ctx.version} "
            + (
                "converts it to 'no'; quote it for newer versions"
                if converted
                else "crashes at launch (AttributeError: 'bool' object has no attribute 'lower'). "
                + ("Quote it: " if ctx.doc.format == "yaml" else "Write ")
                + quoted
            ),
            ("mixed_precision",),
            on_value=True,
            suggestion=quoted,
            fix=ctx.replace_value(("mixed_precision",), quoted) if value is False else (),
        )
        return
    for problem in valuerules.mixed_precision_problems(value):
        place(ctx, ("mixed_precision",), problem)
