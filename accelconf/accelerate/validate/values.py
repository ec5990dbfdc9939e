"""Rules about the type and value of every registered setting."""

from __future__ import annotations

from accelconf import releases
from accelconf.accelerate import registry
from accelconf.accelerate.model import Entry
from accelconf.accelerate.registry import Setting
from accelconf.accelerate.validate import valuerules
from accelconf.accelerate.validate.context import Context, rule, scalar_text, section_unused
from accelconf.accelerate.validate.valuerules import NO_FIX, Problem


def _sharding_is_int(version: str) -> bool:
    return releases.has(version, "sharding-strategy-int")


def place(ctx: Context, keypath: tuple[str, ...], problem: Problem) -> None:
    """A value rule's problem as a finding on the value node at ``keypath``, with its text edit
    (the repairing value in the document's spelling, quoted like the value where it asks)."""
    fix: tuple[tuple[int, int, str], ...] = ()
    if problem.fix_text is not None:
        fix = ctx.replace_value(keypath, problem.fix_text)
    elif problem.fix_value is not NO_FIX:
        like = ctx.doc.node(keypath) if problem.like else None
        fix = ctx.replace_value(keypath, scalar_text(ctx.doc, problem.fix_value, like))
    ctx.finding(
        problem.rule, problem.severity, problem.message, keypath, on_value=True, suggestion=problem.suggestion, fix=fix
    )


def _read_as_yaml11(ctx: Context, s: Setting, keypath: tuple[str, ...]) -> bool:
    """A plain scalar YAML 1.1 reads as another type than YAML 1.2, and that other reading would fit:
    yaml11-scalar reports it, once."""
    vnode = ctx.doc.node(keypath)
    return (
        vnode is not None
        and vnode.kind == "scalar"
        and vnode.style is None
        and vnode.value != vnode.value12
        and valuerules.expect_type(s, vnode.value12) is None
    )


def _entry_value(ctx: Context, path: str, e: Entry) -> None:
    """The type and value of one setting (the value rules of :mod:`.valuerules`), on the key as written:
    in its section, or at the top (legacy spellings such as `dynamo_backend`)."""
    s = e.setting
    if s is None:
        return
    written = [(s.section, e.written_key), (e.written_key,)] if s.section else [(e.written_key,)]
    keypath = next((k for k in written if ctx.doc.key(k)), tuple(path.split(".")))
    node = ctx.doc.node(keypath)
    raw = node.raw if node is not None else None
    for problem in valuerules.entry_problems(s, e, ctx.version, ctx.cfg, raw):
        if problem.scalar_type and _read_as_yaml11(ctx, s, keypath):
            continue
        place(ctx, keypath, problem)


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
