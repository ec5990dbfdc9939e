"""Rules about how the file is written: duplicate keys, YAML 1.1 scalars."""

from __future__ import annotations

import re

from accelconf.accelerate import registry
from accelconf.accelerate.validate.context import Context, has_no_effect, rule
from accelconf.findings import Finding, Severity

# -- parse-level ----------------------------------------------------------------------------------


@rule("duplicate-key")
def _duplicates(ctx: Context) -> None:
    """A key written twice: PyYAML's safe_load and json.load (what accelerate reads files with) keep
    the last one without a word, yamllint and ruamel.yaml refuse the file. Which one the writer meant
    is unknowable: an error naming both lines."""
    for q in ctx.doc.quirks:
        if q.kind == "duplicate-key":
            m = re.match(r"duplicate key (.*) \(first at line (\d+)\)", q.message)
            name, first = (m.group(1), m.group(2)) if m else ("", "?")
            others = "" if ctx.doc.format == "json" else "; yamllint and ruamel.yaml refuse the file"
            loader = "json.load" if ctx.doc.format == "json" else "PyYAML safe_load"
            ctx.findings.append(
                Finding(
                    "duplicate-key",
                    "error",
                    f"duplicate key {name} at lines {first} and {q.line + 1}: accelerate ({loader}) silently "
                    f"keeps line {q.line + 1}{others}; keep one",
                    "",
                    q.line + 1,
                    q.col + 1,
                )
            )


@rule("yaml11-scalar")
def _yaml11(ctx: Context) -> None:
    if ctx.doc.format != "yaml":
        return
    for path, node, _ in ctx.doc.scalars():
        if node.style is not None or node.value == node.value12:
            continue
        if isinstance(node.value, float) and isinstance(node.value12, float) and node.value != node.value:  # nan
            continue
        spath = tuple(str(p) for p in path)
        if spath in (("mixed_precision",), ("distributed_type",)):
            continue  # dedicated rules
        setting = None
        if len(spath) == 1:
            setting = registry.get("", spath[0])
        elif len(spath) == 2:
            setting, _ = registry.lookup(spath[0], spath[1], ctx.version)
        if setting is not None and setting.type in ("bool", "boolish") and isinstance(node.value, bool):
            continue  # a boolean where a boolean is expected: both readers agree enough
        if setting is not None and has_no_effect(ctx, setting):
            continue  # the key is reported once, as having no effect
        sev: Severity = (
            "warning" if setting is not None and setting.type in ("str", "enum", "path", "classlist") else "info"
        )
        fix = ((node.start, node.end, "'" + node.raw.replace("'", "''") + "'"),)
        ctx.finding(
            "yaml11-scalar",
            sev,
            f"`{node.raw}` is read as {node.value!r} by accelerate (PyYAML, YAML 1.1) but as {node.value12!r} by YAML "
            "1.2 tools; quote it if you mean the string",
            spath,
            on_value=True,
            suggestion=f"'{node.raw}'",
            fix=fix,
        )
