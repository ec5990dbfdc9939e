"""Rules about the type and value of every registered setting."""

from __future__ import annotations

from typing import Any

from accelconf import releases
from accelconf.accelerate import registry
from accelconf.accelerate.launch import changed
from accelconf.accelerate.model import Entry, canonical
from accelconf.accelerate.registry import Setting
from accelconf.accelerate.validate.context import (
    Context,
    _expect_type,
    _is_bool_like,
    has_no_effect,
    rule,
    scalar_text,
    section_unused,
)
from accelconf.findings import Severity
from accelconf.text import suggest


def _sharding_is_int(version: str) -> bool:
    return changed(version, "sharding-strategy-int")


def _sharding_int(ctx: Context, v: Any, keypath: tuple[str, ...]) -> None:
    """Before 0.26 FullyShardedDataParallelPlugin reads ShardingStrategy(int(FSDP_SHARDING_STRATEGY)):
    integers 1-5 (as the release knows them) work, a name fails when the plugin is built."""
    count = len(registry.SHARDING_STRATEGIES) if releases.has(ctx.version, "hybrid-shard") else 3
    text = str(v).strip()
    if not isinstance(v, bool) and text.isdigit() and 1 <= int(text) <= count:
        return
    name = str(v).upper()
    number = registry.SHARDING_STRATEGIES.index(name) + 1 if name in registry.SHARDING_STRATEGIES else None
    ctx.finding(
        "sharding-strategy-int",
        "error",
        f"accelerate {ctx.version} reads the sharding strategy as an integer: "
        f"`{v}` makes FullyShardedDataParallelPlugin fail (int() of it) when training starts"
        + (f"; write {number} ({name})" if number else f"; write 1 to {count}"),
        keypath,
        on_value=True,
        suggestion=str(number) if number else None,
        fix=ctx.replace_value(keypath, str(number)) if number else (),
    )


def _entry_value(ctx: Context, path: str, e: Entry) -> None:
    """The type and value of one setting (enums in _enum_value)."""
    s = e.setting
    if s is None or path in ("mixed_precision", "distributed_type", "compute_environment"):
        return
    if has_no_effect(ctx, s):
        return  # reported once, as having no effect: a second finding on the same key would repeat it
    # where the key is written: in its section, at the top (legacy spellings such as `dynamo_backend`)
    written = [(s.section, e.written_key), (e.written_key,)] if s.section else [(e.written_key,)]
    keypath = next((k for k in written if ctx.doc.key(k)), tuple(path.split(".")))
    v = e.value
    if s.key == "gpu_ids":
        if v is not None and not isinstance(v, str):
            node = ctx.value_node("gpu_ids")
            raw = node.raw if node else str(v)
            ctx.finding(
                "invalid-type",
                "error",
                f"`gpu_ids: {raw}` is {type(v).__name__} for accelerate and crashes the launcher (no attribute "
                f"'split'); write a string such as '{raw}'",
                keypath,
                on_value=True,
                suggestion=f"'{raw}'",
                fix=ctx.replace_value(keypath, f"'{raw}'"),
            )
        return
    if s.key == "fsdp_transformer_layer_cls_to_wrap" and isinstance(v, list):
        joined = ",".join(str(x) for x in v)
        ctx.finding(
            "invalid-type",
            "error",
            "a YAML list here is exported as its Python repr (\"['A', 'B']\") and no class matches; write a "
            "comma-separated string",
            keypath,
            on_value=True,
            suggestion=joined,
        )
        return
    if s.key == "fsdp_reshard_after_forward":
        return  # depends on the FSDP version: see the fsdp rule
    if s.type == "section":
        return
    if s.key == "override_linear_precision" and isinstance(v, (list, tuple)):
        if len(v) != 3 or not all(_is_bool_like(x) for x in v):
            ctx.finding(
                "invalid-value",
                "error",
                "`override_linear_precision` takes three booleans (fprop, dgrad, wgrad)",
                keypath,
                on_value=True,
            )
        return
    if s.key == "override_linear_precision" and isinstance(v, str):
        ctx.finding(
            "invalid-type",
            "warning",
            f"`override_linear_precision: {v}` is a string: the launcher exports its first three characters, and "
            "TERecipeKwargs fails on them (invalid truth value); write a list [false, false, false]",
            keypath,
            on_value=True,
            suggestion="[false, false, false]",
        )
        return
    wrong = _expect_type(s, v)
    if s.type == "enum" and s.choices:
        _enum_value(ctx, s, e.written_key, v, keypath)
        return
    if wrong:
        vnode = ctx.doc.node(keypath)
        if (
            vnode is not None
            and vnode.kind == "scalar"
            and vnode.style is None
            and vnode.value != vnode.value12
            and _expect_type(s, vnode.value12) is None
        ):
            return  # a YAML 1.1 reading: reported once by yaml11-scalar
        ctx.finding(
            "invalid-type",
            "error" if s.type in ("int", "float") else "warning",
            f"`{e.written_key}` should be {wrong}, not {v!r}",
            keypath,
            on_value=True,
        )
        return
    if (
        s.minimum is not None
        and isinstance(canonical(s, v), (int, float))
        and not isinstance(v, bool)
        and canonical(s, v) < s.minimum
    ):
        ctx.finding("invalid-value", "error", f"`{e.written_key}` must be at least {s.minimum}", keypath, on_value=True)


def _enum_value(ctx: Context, s: Setting, written_key: str, v: Any, keypath: tuple[str, ...]) -> None:
    """An enum setting: one of its choices, a legacy value, a case variant, or a typo."""
    choices = s.choices or ()  # the caller checked s.choices
    if v is None:
        return
    ok = False
    if s.key == "fsdp_sharding_strategy" and _sharding_is_int(ctx.version):
        _sharding_int(ctx, v, keypath)
        return
    if any(v == c and type(v) is type(c) for c in choices):
        ok = True
    elif any(v == legacy and type(v) is type(legacy) for legacy, _ in s.legacy_values):
        # (integer sharding strategies of releases that read an integer went to _sharding_int above)
        canon = s.canonical_value(v)
        ok = True
        if s.key != "fsdp_version":
            ctx.finding(
                "legacy-value",
                "info",
                f"`{written_key}: {v}` means {canon}; accelerate writes the name",
                keypath,
                on_value=True,
                suggestion=str(canon),
                fix=ctx.replace_value(keypath, scalar_text(ctx.doc, canon)),
            )
    elif (
        isinstance(v, str)
        and s.case_insensitive
        and any(isinstance(c, str) and c.lower() == v.lower() for c in choices)
    ):
        ok = True
        canon = s.canonical_value(v)
        if (
            s.key == "fsdp_sharding_strategy"
            and not releases.has(ctx.version, "sharding-strategy-any-case")
            and v != canon
        ):
            ctx.finding(
                "enum-case",
                "error",
                f"`{v}` must be written `{canon}` for accelerate {ctx.version} (names are case-sensitive before 0.34)",
                keypath,
                on_value=True,
                suggestion=str(canon),
                fix=ctx.replace_value(keypath, scalar_text(ctx.doc, canon)),
            )
        elif v != canon:
            ctx.finding(
                "enum-case",
                "info",
                f"`{v}` works (any case); accelerate writes `{canon}`",
                keypath,
                on_value=True,
                suggestion=str(canon),
                fix=ctx.replace_value(keypath, scalar_text(ctx.doc, canon)),
            )
    elif (
        isinstance(v, str)
        and not s.case_insensitive
        and any(isinstance(c, str) and c.lower() == v.lower() for c in choices)
    ):
        canon = next(c for c in choices if isinstance(c, str) and c.lower() == v.lower())
        sev: Severity = "error"
        extra = ""
        if s.key == "backend" and s.section == "fp8_config":
            extra = " (`Accelerator()` raises ValueError on a lowercase FP8 backend since 1.9)"
            sev = "error" if releases.has(ctx.version, "fp8-backend-enum") else "warning"
        ctx.finding(
            "enum-case",
            sev,
            f"`{written_key}: {v}` must be `{canon}`{extra}",
            keypath,
            on_value=True,
            suggestion=str(canon),
            fix=ctx.replace_value(keypath, scalar_text(ctx.doc, canon)),
        )
        return
    elif s.key in ("zero_stage",) and isinstance(v, str) and v.isdigit() and int(v) in choices:
        ok = True
    if not ok:
        shown = ", ".join(str(c) for c in choices)
        guess = None
        if isinstance(v, str):
            m = suggest.ranked(v.upper(), [str(c).upper() for c in choices], 1)
            if m:
                guess = next(str(c) for c in choices if str(c).upper() == m[0])
        ctx.finding(
            "invalid-value",
            "error",
            f"`{written_key}: {v}` is not one of {shown}",
            keypath,
            on_value=True,
            suggestion=guess,
        )
        return
    if not registry.enum_exists(s, v, ctx.version):
        ctx.finding(
            "value-too-new",
            "error",
            f"`{written_key}: {v}` does not exist in accelerate {ctx.version}",
            keypath,
            on_value=True,
        )


def _non_mapping_sections(ctx: Context) -> None:
    """Sections that are not mappings: the launcher skips a non-mapping (``isinstance(attr, dict)`` in
    commands/launch.py _validate_launch_command), so a used section is silently replaced by its
    defaults (error), an unused one changes nothing (warning)."""
    for name in registry.SECTIONS:
        v = ctx.doc.data.get(name) if name else None
        if not name or v is None or isinstance(v, dict):
            continue
        node = ctx.value_node(name)
        shown = (
            f"`{name}: {node.raw}`"
            if node is not None and node.kind == "scalar"
            else f"`{name}` written as a {type(v).__name__}"
        )
        if section_unused(ctx.doc.data, name):
            ctx.finding(
                "section-unused",
                "warning",
                f"{shown} has no effect here (the launcher does not read `{name}` with this configuration); "
                f"where it is used it must be a mapping of `{name}` keys",
                (name,),
                on_value=True,
            )
        else:
            ctx.finding(
                "invalid-type",
                "error",
                f"`{name}` must be a mapping: accelerate skips {shown} without a word and uses the defaults of every "
                f"`{name}` key",
                (name,),
                on_value=True,
            )


@rule(
    "enum-case",
    "invalid-type",
    "invalid-value",
    "legacy-value",
    "section-unused",
    "sharding-strategy-int",
    "value-too-new",
)
def _values(ctx: Context) -> None:
    for path, e in ctx.cfg.entries.items():
        _entry_value(ctx, path, e)
    _non_mapping_sections(ctx)
