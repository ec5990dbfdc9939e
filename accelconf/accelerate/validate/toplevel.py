"""Rules about distributed_type, compute_environment and mixed_precision."""

from __future__ import annotations

from accelconf import releases
from accelconf.accelerate import registry
from accelconf.accelerate.launch import changed
from accelconf.accelerate.registry import Setting
from accelconf.accelerate.validate.context import Context, _is_sagemaker, rule, scalar_text
from accelconf.findings import Severity
from accelconf.text import suggest


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
    if _is_sagemaker(ctx):
        if value not in registry.SAGEMAKER_DISTRIBUTED_TYPES:
            ctx.finding(
                "invalid-value",
                "error",
                f"`distributed_type: {value}` is not a SageMaker distributed type "
                f"({', '.join(registry.SAGEMAKER_DISTRIBUTED_TYPES)})",
                ("distributed_type",),
                on_value=True,
            )
        return
    if isinstance(value, bool):
        _boolean_distributed_type(ctx, value)
        return
    setting = registry.get("", "distributed_type")
    assert setting is not None
    if not isinstance(value, str):
        ctx.finding(
            "invalid-type",
            "error",
            f"`distributed_type` must be a string, not {type(value).__name__}",
            ("distributed_type",),
            on_value=True,
        )
    elif value in ("TPU", "TP") and value not in registry.DISTRIBUTED_TYPES:
        _legacy_distributed_type(ctx, setting, value)
    elif value not in registry.DISTRIBUTED_TYPES:
        _unknown_distributed_type(ctx, value)
    elif not registry.enum_exists(setting, value, ctx.version):
        ctx.finding(
            "value-too-new",
            "error",
            f"`distributed_type: {value}` does not exist in accelerate {ctx.version}",
            ("distributed_type",),
            on_value=True,
        )


def _boolean_distributed_type(ctx: Context, value: bool) -> None:
    """A bare NO (or another YAML 1.1 boolean): fatal unless num_processes makes launch skip it."""
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


def _legacy_distributed_type(ctx: Context, setting: Setting, value: str) -> None:
    """TPU (renamed XLA in 0.28) and TP, where this release does not have them."""
    if registry.enum_exists(setting, value, ctx.version):
        return
    repl = "XLA" if value == "TPU" else "MULTI_GPU"
    ctx.finding(
        "legacy-value",
        "error",
        f"`distributed_type: {value}` does not exist in accelerate {ctx.version} (ValueError at "
        f"load){'; it was renamed XLA in 0.28' if value == 'TPU' else ''}",
        ("distributed_type",),
        on_value=True,
        suggestion=repl,
        fix=ctx.replace_value(("distributed_type",), repl) if value == "TPU" else (),
    )


def _unknown_distributed_type(ctx: Context, value: str) -> None:
    """Not a DistributedType: wrong case (with the fix) or another word (with a guess)."""
    upper = value.upper()
    if upper in registry.DISTRIBUTED_TYPES:
        node = ctx.value_node("distributed_type")
        ctx.finding(
            "enum-case",
            "error",
            f"`distributed_type: {value}` must be upper case: accelerate raises ValueError ('{value}' is not a "
            "valid DistributedType)",
            ("distributed_type",),
            on_value=True,
            suggestion=upper,
            fix=ctx.replace_value(("distributed_type",), scalar_text(ctx.doc, upper, node)),
        )
    else:
        guess = suggest.ranked(upper, registry.DISTRIBUTED_TYPES, 1)
        ctx.finding(
            "invalid-value",
            "error",
            f"`distributed_type: {value}` is not one of {', '.join(registry.DISTRIBUTED_TYPES)}",
            ("distributed_type",),
            on_value=True,
            suggestion=guess[0] if guess else None,
        )


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
    if value is None:
        return
    if not isinstance(value, str):
        ctx.finding(
            "invalid-type",
            "error",
            f"`mixed_precision` must be one of {', '.join(registry.PRECISIONS)}",
            ("mixed_precision",),
            on_value=True,
        )
        return
    if value.lower() not in registry.PRECISIONS:
        guess = suggest.ranked(value.lower(), registry.PRECISIONS, 1)
        ctx.finding(
            "invalid-value",
            "error",
            f"`mixed_precision: {value}` is not one of {', '.join(registry.PRECISIONS)} (ValueError at launch)",
            ("mixed_precision",),
            on_value=True,
            suggestion=guess[0] if guess else None,
        )
    elif value != value.lower():
        ctx.finding(
            "enum-case",
            "info",
            f"`mixed_precision: {value}` works (the launcher lowercases it); accelerate writes `{value.lower()}`",
            ("mixed_precision",),
            on_value=True,
            suggestion=value.lower(),
            fix=ctx.replace_value(("mixed_precision",), scalar_text(ctx.doc, value.lower(), node)),
        )
