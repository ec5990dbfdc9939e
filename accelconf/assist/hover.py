"""What a key or value means: hover markdown for accelerate settings and DeepSpeed keys.

Everything is derived from the settings registry (:mod:`accelconf.accelerate.registry`) and
DeepSpeed's key table (:mod:`accelconf.deepspeed`). The markdown of a setting is shared with
completion (:mod:`accelconf.assist.complete`), which shows it as a candidate's documentation.
Positions are 0-based and count characters.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from accelconf import deepspeed as dsmod
from accelconf.accelerate import registry
from accelconf.accelerate.registry import Setting
from accelconf.accelerate.validate import validate_document
from accelconf.assist.cursor import _KEY_LINE, Where, _lines, _strip_comment, context_at
from accelconf.assist.detect import Kind, document_kind
from accelconf.errors import InputError
from accelconf.text.document import Document, load_text, resolve_yaml11
from accelconf.text.scalars import json_scalar, yaml_scalar


def _range_text(s: Setting) -> str:
    if s.since and s.until:
        return f"accelerate {s.since} to {_before(s.until)}"
    if s.since:
        return f"accelerate {s.since}+"
    if s.until:
        return f"accelerate up to {_before(s.until)}"
    return ""


def _before(until: str) -> str:
    versions = registry.KNOWN_VERSIONS
    if until in versions and versions.index(until) > 0:
        return versions[versions.index(until) - 1]
    return f"before {until}"


def _values_of(s: Setting, version: str | None) -> list[Any]:
    if s.type in ("bool", "boolish"):
        return [True, False]
    if s.choices:
        return [c for c in s.choices if version is None or registry.enum_exists(s, c, version)]
    return []


def _fmt_default(v: Any, fmt: str) -> str:
    return f"`{json_scalar(v) if fmt == 'json' else yaml_scalar(v)}`"


def setting_markdown(s: Setting, fmt: str = "yaml", effective: str | None = None) -> str:
    """The hover text of a setting (markdown)."""
    head = f"**{s.key}**" + (f" · `{s.section}`" if s.section else "") + f" · {s.type}"
    out = [head, "", s.doc]
    if s.deprecated:
        out += ["", f"⚠ {s.deprecated}"]
    rows: list[str] = []
    ld, pd = s.launcher_default, s.plugin_default
    if ld is not None and pd is not None and ld != pd:
        rows.append(
            f"- **Default:** {_fmt_default(ld, fmt)} (launcher, key absent); {_fmt_default(pd, fmt)} (plugin, env var "
            "unset)"
        )
    elif ld is not None or pd is not None:
        rows.append(f"- **Default:** {_fmt_default(ld if ld is not None else pd, fmt)}")
    values = _values_of(s, None) if s.type not in ("bool", "boolish") else []
    if values:
        rows.append(
            "- **Allowed:** " + ", ".join(f"`{json_scalar(v) if fmt == 'json' else yaml_scalar(v)}`" for v in values)
        )
    rng = _range_text(s)
    if rng:
        rows.append(f"- **Versions:** {rng}")
    if s.fsdp_versions != (1, 2) and s.section == "fsdp_config":
        rows.append("- **FSDP:** " + " and ".join(f"FSDP{v}" for v in s.fsdp_versions) + " only")
    if s.env:
        rows.append(f"- **Env var:** `{s.env}`")
    if s.cli_flag:
        rows.append(f"- **Launch flag:** `{s.cli_flag}`")
    if s.plugin:
        rows.append(f"- **Read by:** `{s.plugin}`")
    if s.file_ignored:
        rows.append("- **Ignored in a config file:** pass the launch flag instead")
    if s.versions_note:
        rows.append(f"- **Note:** {s.versions_note}")
    if effective is not None:
        rows.append(f"- **Effective value:** {effective}")
    if rows:
        out += [""] + rows
    return "\n".join(out)


def _ds_section(path: tuple[str, ...]) -> Any:
    return dsmod.TOP if not path else dsmod.lookup(path)


def _ds_markdown(name: str, k: Any, effective: str | None = None) -> str:
    t = k.type if isinstance(k.type, str) else " | ".join(k.type)
    out = [f"**{name}** · DeepSpeed · {t}", "", k.doc or ""]
    if getattr(k, "deprecated", ""):
        out += ["", f"⚠ {k.deprecated}"]
    rows = []
    default = k.default if k.has_default else None
    if default is not None:
        rows.append(f"- **Default:** `{json.dumps(default, default=str)}`")
    if k.enum:
        rows.append("- **Allowed:** " + ", ".join(f"`{json.dumps(v)}`" for v in k.enum))
    if k.since:
        rows.append(f"- **Since:** DeepSpeed {k.since}")
    if k.removed:
        rows.append(f"- **Removed:** DeepSpeed {k.removed}" + (f" ({k.removed_message})" if k.removed_message else ""))
    if k.auto:
        rows.append('- **`"auto"` filled by:** ' + "; ".join(f"{who}: {what}" for who, what in k.auto))
    if effective is not None:
        rows.append(f"- **Effective value:** {effective}")
    if rows:
        out += [""] + rows
    return "\n".join(out)


def _effective(doc: Document | None, where: Where, s: Setting | None, raw: str) -> str | None:
    node = None
    if doc is not None and where.key is not None:
        node = doc.node(where.path + (where.key,))
    if node is not None and node.kind != "scalar":
        return None
    if node is None:
        if not raw:
            return None
        value: Any = resolve_yaml11(raw) if where.format == "yaml" and raw[:1] not in "'\"" else raw.strip("'\"")
        written = raw
        quoted = raw[:1] in "'\""
    else:
        value, written, quoted = node.value, node.raw, node.style is not None
    canon = s.canonical_value(value) if s is not None else value
    shown = f"`{json_scalar(canon) if where.format == 'json' else yaml_scalar(canon)}`"
    notes = []
    if where.format == "yaml" and not quoted and isinstance(value, bool) and written.lower() not in ("true", "false"):
        notes.append(f"unquoted `{written}` is the YAML 1.1 boolean `{value}` to accelerate")
    elif canon != value:
        notes.append(f"written `{written}`")
    return shown + (f" ({'; '.join(notes)})" if notes else "")


def _refusal(doc: Document | None, where: Where, version: str | None) -> str | None:
    """validate's error about the written value, if there is one: a spelling accelerate refuses
    (``multi_gpu``, a bare ``no``) has no effective value, whatever its canonical form would be."""
    node = doc.node(where.path + (where.key,)) if doc is not None and where.key is not None else None
    if doc is None or node is None or node.kind != "scalar":
        return None

    dotted = ".".join(where.path + (where.key,))  # type: ignore[operator]
    for f in validate_document(doc, accelerate_version=version):
        if f.severity == "error" and f.key == dotted and (f.line, f.column) == (node.line + 1, node.col + 1):
            return f.message
    return None


def _ignored(doc: Document | None, where: Where, version: str | None) -> str | None:
    """validate's word on a spelling this release does not read yet (``dynamo_config.backend``
    before 1.14): accelerate ignores the key, so its value has no effect."""
    if doc is None:
        return None
    for f in validate_document(doc, accelerate_version=version):
        if f.rule == "alias-too-new" and f.line == where.line + 1:
            return f.message
    return None


def _default_effective(s: Setting, why: str = "the key is absent") -> str | None:
    if s.launcher_default is None and s.plugin_default is None:
        return None
    v = s.launcher_default if s.launcher_default is not None else s.plugin_default
    return f"`{yaml_scalar(v)}` (default: {why})"


def named_at(text: str, line: int, where: Where) -> tuple[Where, str]:
    """The cursor's place with the key it names filled in (a key's own name where the cursor is on a
    key), and the value written after that key (comment stripped; ``""`` for a JSON key)."""
    if where.part != "key":
        return where, where.value_text or ""
    lines = _lines(text)
    cur = lines[line] if line < len(lines) else ""
    name = (where.key or cur[where.start : where.end]) if where.format == "yaml" else cur[where.start : where.end]
    name = name if where.format == "yaml" else name.strip('"')
    raw = ""
    if where.format == "yaml":
        m = _KEY_LINE.match(cur)
        raw = _strip_comment(m.group("rest")).strip() if m else ""
    return replace(where, key=name), raw


def hover(
    text: str,
    line: int,
    col: int,
    version: str | None = None,
    path: str = "",
    kind: Kind | None = None,
    doc: Document | None = None,
) -> str | None:
    """Markdown for the key or value at 0-based (line, col): doc, type, defaults (launcher and plugin
    when they differ), allowed values, version range, env var, launch flag, effective value. For an
    enum value, its meaning comes first. ``None`` where there is nothing to say."""
    kind = kind or document_kind(path, text) or "accelerate"
    where = context_at(text, line, col, path=path)
    if where.part == "none":
        return None
    if doc is None:
        try:
            doc = load_text(text, path or "<text>", where.format)
        except InputError:
            doc = None
    where, raw = named_at(text, line, where)
    name = where.key or ""
    if not name:
        return None
    if kind == "deepspeed":
        k = _ds_section(where.path + (name,))
        if k is None:
            return None
        md = _ds_markdown(
            ".".join(where.path + (name,)), k, _effective(doc, where, None, raw) if k.children is None else None
        )
        if where.part == "value" and k.enum_docs:
            for v, d in zip(k.enum, k.enum_docs):
                if json.dumps(v) == raw or str(v) == raw.strip('"'):
                    md = f"`{v}`: {d}\n\n---\n\n" + md
        return md
    section = where.section
    if section is None:
        return None
    s, how = registry.lookup(section, name, version)
    if s is None:
        if section == "" and name in registry.SECTIONS:
            sec = registry.SECTIONS[name]
            return f"**{name}**\n\n{sec.doc}"
        return None
    eff = _effective(doc, where, s, raw) if s.type != "section" else None
    ignored = _ignored(doc, where, version) if how == "alias-too-new" else None
    if ignored is not None:  # the release does not read this spelling: the default applies
        eff = None
    refused = _refusal(doc, where, version) if eff is not None else None
    if refused is not None:
        eff = f"none: {refused}"
    if eff is None and s.type != "section":
        eff = _default_effective(s, "this release ignores the key" if ignored is not None else "the key is absent")
    md = setting_markdown(s, where.format, eff)
    if how == "alias":
        md = f"`{name}` is accepted for **{s.key}**.\n\n" + md
    if ignored is not None:
        md = f"⚠ {ignored}\n\n" + md
    if s.type == "section" and name in registry.SECTIONS:
        md += "\n\n" + registry.SECTIONS[name].doc
    as_string = where.format == "json" or raw[:1] in "'\"" or isinstance(resolve_yaml11(raw), str)
    if where.part == "value" and as_string and refused is None:
        value = raw.strip("'\"")
        meaning = registry.ENUM_DOCS.get(str(s.canonical_value(value)))
        if meaning:
            md = f"`{s.canonical_value(value)}`: {meaning}\n\n---\n\n" + md
    return md
