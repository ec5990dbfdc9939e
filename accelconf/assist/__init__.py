"""Editor help without editor types: what is at a position, completion candidates, hover text, symbols.

This module owns the questions an editor asks about a config while it is being typed: which
section, key and value the cursor is in (:func:`context_at`), what may be typed there
(:func:`complete`), what a key means (:func:`hover`), the outline (:func:`symbols`), and whether a
file is an accelerate config or a DeepSpeed JSON at all (:func:`document_kind`). Everything is
derived from the settings registry (:mod:`accelconf.accelerate.registry`) and DeepSpeed's key table
(:mod:`accelconf.deepspeed`); no rule lives here. The language server (``accelconf_lsp``) only
converts these values to protocol types.

Positions: every ``line`` and ``col`` here is 0-based and counts characters (code points), as
:class:`accelconf.text.document.Node` does; converting to the protocol's UTF-16 or UTF-8 units is the
server's job. Half-typed YAML is the normal case, so :func:`context_at` never needs a parse: it reads
indentation line by line (JSON: a tolerant token scan), and uses a parse only when one succeeds.
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
from dataclasses import dataclass, field
from typing import Any, Literal

from accelconf.accelerate import registry
from accelconf.text.document import Document, Node, load_text, resolve_yaml11, sniff_format
from accelconf.text.scalars import json_scalar, yaml_scalar
from accelconf.errors import InputError
from accelconf.findings import Finding
from accelconf.accelerate.registry import Setting

Kind = Literal["accelerate", "deepspeed"]
Part = Literal["key", "value", "none"]

__all__ = [
    "Candidate", "Symbol", "Where", "complete", "context_at", "document_kind", "fix_title", "hover",
    "symbols", "yaml_scalar",
]

# -- which documents are ours ---------------------------------------------------------------------

ACCELERATE_MARKERS = ("compute_environment", "distributed_type", "fsdp_config", "deepspeed_config",
                      "megatron_lm_config", "dynamo_config", "fp8_config", "parallelism_config")
NAME_PATTERNS = ("default_config.yaml", "default_config.yml", "*accelerate*.yaml", "*accelerate*.yml",
                 "*accelerate*.json")
_MODELINE = re.compile(r"^\s*(?:#|//)\s*accelconf:\s*(enable|disable)\b", re.M)
_YAML_MARKER = re.compile(r"^(?:%s)\s*:" % "|".join(ACCELERATE_MARKERS), re.M)
_JSON_MARKER = re.compile(r'"(?:%s)"\s*:' % "|".join(ACCELERATE_MARKERS))
_DS_STRONG = re.compile(r'"(?:zero_optimization|train_batch_size|train_micro_batch_size_per_gpu)"\s*:')


def document_kind(path: str, text: str, doc: Document | None = None) -> Kind | None:
    """``accelerate``, ``deepspeed`` or ``None`` (not a config accelconf knows).

    In order: a modeline ``# accelconf: enable`` / ``disable`` in the first 10 lines; a DeepSpeed
    JSON by content; an accelerate config by content (a top-level ``distributed_type``,
    ``compute_environment``, ``fsdp_config``...) or by name (``default_config.yaml``,
    ``*accelerate*.yaml``). Works on text that does not parse.
    """
    head = "\n".join(text.splitlines()[:10])
    mode = _MODELINE.search(head)
    if mode is not None and mode.group(1) == "disable":
        return None
    fmt = sniff_format(text, path)
    if fmt == "json":
        if _is_deepspeed_json(path, text, doc):
            return "deepspeed"
        if _JSON_MARKER.search(text):
            return "accelerate"
    elif _YAML_MARKER.search(text):
        return "accelerate"
    if mode is not None:
        return "accelerate"
    name = os.path.basename(path).lower()
    if any(fnmatch.fnmatch(name, pat) for pat in NAME_PATTERNS):
        return "accelerate"
    return None


def _is_deepspeed_json(path: str, text: str, doc: Document | None) -> bool:
    try:
        from accelconf import deepspeed as dsmod
    except ImportError:  # pragma: no cover - the module is part of the package
        return False
    if doc is None:
        try:
            doc = load_text(text, path, "json")
        except InputError:
            doc = None
    if doc is not None and doc.root is not None:
        return bool(dsmod.is_deepspeed(doc))
    return bool(_DS_STRONG.search(text)) and not _JSON_MARKER.search(text)


# -- where is the cursor --------------------------------------------------------------------------

@dataclass(frozen=True)
class Where:
    """What the cursor is in.

    ``path`` is the chain of mapping keys enclosing the cursor's mapping (``()`` at top level,
    ``("fsdp_config",)`` inside it). ``part`` is ``key`` where a key is (being) typed, ``value``
    after ``key:``, ``none`` in a comment or somewhere nothing can be typed. ``key`` is the key of
    the cursor's line. ``prefix`` is the part of the token typed before the cursor, and
    ``start``..``end`` the columns on ``line`` of the token a completion replaces. ``present``
    holds the keys already in the cursor's mapping (the cursor's own line excluded).
    """

    format: Literal["yaml", "json"]
    line: int
    path: tuple[str, ...]
    part: Part
    key: str | None = None
    prefix: str = ""
    start: int = 0
    end: int = 0
    present: frozenset[str] = frozenset()
    indent: int = 0
    quote: str = ""  # the quote the token starts with (JSON keys and strings, quoted YAML values)
    has_colon: bool = False  # key part: a ':' already follows the token
    value_text: str = ""  # value part: the value as written (comment stripped)
    spaced: bool = True  # value part: a blank separates ':' and the value (YAML needs one)

    @property
    def section(self) -> str | None:
        """The registry section of the cursor's mapping, or ``None`` below any known section."""
        if not self.path:
            return ""
        if len(self.path) == 1:
            return self.path[0]
        return None


_KEY_LINE = re.compile(
    r"""^(?P<indent>[ ]*)(?P<q>['"]?)(?P<key>[^\s:'"#{}\[\],&*!|>%@`-][^:'"#{}\[\],]*?|-[^\s:'"#{}\[\],][^:'"#{}\[\],]*?)(?P=q)[ \t]*:(?=[ \t]|$)(?P<rest>.*)$"""
)
_WORD = re.compile(r"[A-Za-z0-9_.\-]*$")
_WORD_AHEAD = re.compile(r"^[A-Za-z0-9_.\-]*")


def _lines(text: str) -> list[str]:
    return [ln[:-1] if ln.endswith("\r") else ln for ln in text.split("\n")]


def _strip_comment(rest: str) -> str:
    """The value part of ``rest`` (after ``key:``) without a trailing ``# comment``."""
    quote = ""
    for i, c in enumerate(rest):
        if quote:
            if c == quote:
                quote = ""
        elif c in "'\"" and (i == 0 or rest[:i].strip() == ""):
            quote = c
        elif c == "#" and (i == 0 or rest[i - 1] in " \t"):
            return rest[:i].rstrip()
    return rest.rstrip()


def _indent(s: str) -> int:
    return len(s) - len(s.lstrip(" "))


def _is_blank(s: str) -> bool:
    t = s.strip()
    return not t or t.startswith("#")


def _yaml_parents(lines: list[str], line: int, indent: int) -> tuple[tuple[str, ...], int]:
    """(enclosing keys, the line of the innermost one or -1)."""
    path: list[str] = []
    want = indent
    block_line = -1
    for i in range(min(line, len(lines)) - 1, -1, -1):
        s = lines[i]
        if _is_blank(s) or s.lstrip().startswith("- "):
            continue
        ind = _indent(s)
        if ind >= want:
            continue
        m = _KEY_LINE.match(s)
        if m is not None and not _strip_comment(m.group("rest")).strip():
            path.append(m.group("key"))
            if block_line < 0:
                block_line = i
        # A less-indented line that is not a block start: keep looking from its level.
        want = ind
        if want == 0:
            break
    return tuple(reversed(path)), block_line


def _yaml_siblings(lines: list[str], block_line: int, level: int, skip: int) -> frozenset[str]:
    parent_indent = _indent(lines[block_line]) if block_line >= 0 else -1
    keys: set[str] = set()
    for i in range(block_line + 1, len(lines)):
        s = lines[i]
        if _is_blank(s):
            continue
        ind = _indent(s)
        if ind <= parent_indent:
            break
        if i == skip or ind != level:
            continue
        m = _KEY_LINE.match(s)
        if m is not None:
            keys.add(m.group("key"))
    return frozenset(keys)


def _yaml_where(text: str, line: int, col: int) -> Where:
    lines = _lines(text)
    cur = lines[line] if 0 <= line < len(lines) else ""
    col = max(0, min(col, len(cur)))
    before = cur[:col]
    if before.lstrip().startswith("#") or cur.lstrip().startswith("%") or cur.startswith("---"):
        return Where("yaml", line, (), "none")
    m = _KEY_LINE.match(cur)
    colon = cur.index(":", m.end("key")) if m is not None else -1
    if m is not None and col > colon:
        level = len(m.group("indent"))
        path, block = _yaml_parents(lines, line, level)
        rest = m.group("rest")
        value = _strip_comment(rest)
        vstart = colon + 1 + (len(rest) - len(rest.lstrip(" \t")))
        vend = max(vstart, colon + 1 + len(value))
        if col < vstart:  # cursor in the blank between ':' and the value
            vstart = col if not value.strip() else vstart
        quote = cur[vstart] if vstart < len(cur) and cur[vstart] in "'\"" else ""
        if "#" in before[colon + 1:] and col > colon + 1 + len(value):
            return Where("yaml", line, path, "none", key=m.group("key"))
        return Where("yaml", line, path, "value", key=m.group("key"), prefix=cur[vstart:col] if col >= vstart else "",
                     start=vstart, end=vend, present=_yaml_siblings(lines, block, level, line), indent=level,
                     quote=quote, value_text=value.strip(), spaced=vstart > colon + 1)
    if cur.strip():
        level = _indent(cur)
    else:
        level = len(before) - len(before.lstrip(" ")) if not before.strip() else _indent(cur)
    path, block = _yaml_parents(lines, line, level)
    word = _WORD.search(before)
    start = word.start() if word else col
    ahead = _WORD_AHEAD.match(cur[col:])
    end = col + (ahead.end() if ahead else 0)
    tail = cur[end:].lstrip(" \t")
    if before[level:start].strip() not in ("", "-"):
        return Where("yaml", line, path, "none")
    return Where("yaml", line, path, "key", key=m.group("key") if m else None, prefix=before[start:col], start=start,
                 end=end, present=_yaml_siblings(lines, block, level, line), indent=level,
                 has_colon=tail.startswith(":"))


@dataclass
class _Frame:
    kind: Literal["obj", "arr"]
    key: str | None = None  # the last key read in this object
    expect: Literal["key", "colon", "value", "after"] = "key"
    keys: list[str] = field(default_factory=list)


def _json_where(text: str, line: int, col: int) -> Where:
    lines = _lines(text)
    cur = lines[line] if 0 <= line < len(lines) else ""
    col = max(0, min(col, len(cur)))
    offset = sum(len(x) + 1 for x in text.split("\n")[:line]) + col if line < len(lines) else len(text)
    line_start = offset - col
    stack: list[_Frame] = []
    snap: tuple[list[_Frame], _Frame | None, str, int, int, str, str | None] | None = None  # frames, frame, part, start, end, quote, key
    i, n = 0, len(text)

    def take(part: str, start: int, end: int, quote: str) -> None:
        nonlocal snap
        frames = [_Frame(f.kind, f.key, f.expect, f.keys) for f in stack]
        snap = (frames, stack[-1] if stack else None, part, start, end, quote, stack[-1].key if stack else None)

    while i < n:
        if snap is None and i >= offset:
            top = stack[-1] if stack else None
            part = "none"
            if top is not None and top.kind == "obj" and top.expect == "key":
                part = "key"
            elif top is not None and (top.expect == "value" or top.kind == "arr"):
                part = "value"
            take(part, offset, offset, "")
        c = text[i]
        if c in " \t\r\n":
            i += 1
            continue
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
            continue
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            i = n if j < 0 else j + 2
            continue
        top = stack[-1] if stack else None
        if c == '"':
            j = i + 1
            while j < n and text[j] != '"' and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            closed = j < n and text[j] == '"'
            end = j + 1 if closed else j
            if snap is None and i < offset <= (end - 1 if closed else end):
                is_key = top is not None and top.kind == "obj" and top.expect in ("key",)
                take("key" if is_key else "value", i, end, '"')
            try:
                s = json.loads(text[i:end]) if closed else text[i + 1:end]
            except ValueError:
                s = text[i + 1:end]
            if top is not None and top.kind == "obj" and top.expect == "key":
                top.key = str(s)
                top.keys.append(str(s))
                top.expect = "colon"
            elif top is not None:
                top.expect = "after"
            i = end
            continue
        if c in "{[":
            if top is not None:
                top.expect = "after"
            stack.append(_Frame("obj" if c == "{" else "arr", expect="key" if c == "{" else "value"))
            i += 1
            continue
        if c in "}]":
            if stack:
                stack.pop()
            i += 1
            continue
        if c == ":":
            if top is not None and top.kind == "obj":
                top.expect = "value"
            i += 1
            continue
        if c == ",":
            if top is not None:
                top.expect = "key" if top.kind == "obj" else "value"
            i += 1
            continue
        j = i
        while j < n and text[j] not in ' \t\r\n,:{}[]"/':
            j += 1
        j = max(j, i + 1)
        if snap is None and i < offset <= j:
            is_key = top is not None and top.kind == "obj" and top.expect == "key"
            take("key" if is_key else "value", i, j, "")
        if top is not None:
            if top.kind == "obj" and top.expect == "key":
                top.key = text[i:j]
                top.keys.append(text[i:j])
                top.expect = "colon"
            else:
                top.expect = "after"
        i = j
    if snap is None:
        top = stack[-1] if stack else None
        part = "key" if top is not None and top.kind == "obj" and top.expect == "key" else (
            "value" if top is not None and top.expect == "value" else "none")
        take(part, offset, offset, "")
    assert snap is not None
    frames, frame, part, start, end, quote, key = snap
    if frames and any(f.kind == "arr" for f in frames):
        return Where("json", line, (), "none")
    path = tuple(f.key or "" for f in frames[:-1])
    present = frozenset(frame.keys) - {""} if frame is not None else frozenset()
    scol = max(0, start - line_start)
    ecol = min(len(cur), max(scol, end - line_start))
    token = text[start:offset]
    prefix = token[1:] if quote else token
    if part == "key":
        own = text[start:end]
        try:
            own_key = json.loads(own) if own.startswith('"') and own.endswith('"') and len(own) > 1 else own
        except ValueError:
            own_key = own
        present = present - {str(own_key)} if str(own_key) in present and list(frame.keys if frame else []).count(str(own_key)) == 1 else present
        after = cur[ecol:].lstrip()
        return Where("json", line, path, "key", key=None, prefix=prefix, start=scol, end=ecol, present=present,
                     quote=quote, has_colon=after.startswith(":"))
    if part == "value":
        return Where("json", line, path, "value", key=key, prefix=prefix, start=scol, end=ecol, present=present,
                     quote=quote, value_text=text[start:end])
    return Where("json", line, path, "none")


def context_at(text: str, line: int, col: int, fmt: Literal["yaml", "json"] | None = None, path: str = "") -> Where:
    """What the cursor at 0-based (line, col) is in. Never raises, whatever the text."""
    fmt = fmt or sniff_format(text, path)
    try:
        if fmt == "json":
            return _json_where(text, line, col)
        return _yaml_where(text, line, col)
    except Exception:  # noqa: BLE001 - editor help must never fail on odd text
        return Where(fmt, line, (), "none")


# -- completion -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Candidate:
    """One completion. ``insert`` is plain text; ``snippet`` (when set) is the same in LSP snippet
    syntax (``${1:...}``), for clients that support it. It replaces columns ``start``..``end`` of
    the cursor's line. ``kind`` is ``key``, ``section``, ``value`` or ``snippet``."""

    label: str
    kind: Literal["key", "section", "value", "snippet"]
    insert: str
    start: int
    end: int
    detail: str = ""
    doc: str = ""
    snippet: str | None = None
    sort: str = ""
    filter: str | None = None
    deprecated: bool = False


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
        rows.append(f"- **Default:** {_fmt_default(ld, fmt)} (launcher, key absent); {_fmt_default(pd, fmt)} (plugin, env var unset)")
    elif ld is not None or pd is not None:
        rows.append(f"- **Default:** {_fmt_default(ld if ld is not None else pd, fmt)}")
    values = _values_of(s, None) if s.type not in ("bool", "boolish") else []
    if values:
        rows.append("- **Allowed:** " + ", ".join(f"`{json_scalar(v) if fmt == 'json' else yaml_scalar(v)}`" for v in values))
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
    try:
        from accelconf import deepspeed as dsmod
    except ImportError:  # pragma: no cover
        return None
    return dsmod.TOP if not path else dsmod.lookup(path)


def _ds_unset() -> Any:
    try:
        from accelconf import deepspeed as dsmod
    except ImportError:  # pragma: no cover
        return None
    return getattr(dsmod, "_UNSET", None)


def _ds_markdown(name: str, k: Any, effective: str | None = None) -> str:
    t = k.type if isinstance(k.type, str) else " | ".join(k.type)
    out = [f"**{name}** · DeepSpeed · {t}", "", k.doc or ""]
    if getattr(k, "deprecated", ""):
        out += ["", f"⚠ {k.deprecated}"]
    rows = []
    default = getattr(k, "default", None)
    if default is not None and default is not _ds_unset():
        rows.append(f"- **Default:** `{json.dumps(default, default=str)}`")
    if k.enum:
        rows.append("- **Allowed:** " + ", ".join(f"`{json.dumps(v)}`" for v in k.enum))
    if k.since:
        rows.append(f"- **Since:** DeepSpeed {k.since}")
    if k.removed:
        rows.append(f"- **Removed:** DeepSpeed {k.removed}" + (f" ({k.removed_message})" if k.removed_message else ""))
    if k.auto:
        rows.append("- **`\"auto\"` filled by:** " + "; ".join(f"{who}: {what}" for who, what in k.auto))
    if effective is not None:
        rows.append(f"- **Effective value:** {effective}")
    if rows:
        out += [""] + rows
    return "\n".join(out)


def _snippets(where: Where, version: str | None) -> list[Candidate]:
    """Whole new blocks for the top level of a YAML accelerate config."""
    out: list[Candidate] = []
    if where.format != "yaml" or where.path:
        return out
    if "fsdp_config" not in where.present:
        plain = ("fsdp_config:\n  fsdp_version: 2\n  fsdp_reshard_after_forward: true\n  fsdp_offload_params: false\n"
                 "  fsdp_auto_wrap_policy: TRANSFORMER_BASED_WRAP\n  fsdp_state_dict_type: SHARDED_STATE_DICT\n"
                 "  fsdp_cpu_ram_efficient_loading: true\n  fsdp_activation_checkpointing: false")
        snip = ("fsdp_config:\n  fsdp_version: ${1|2,1|}\n  fsdp_reshard_after_forward: ${2|true,false|}\n"
                "  fsdp_offload_params: ${3|false,true|}\n  fsdp_auto_wrap_policy: ${4|TRANSFORMER_BASED_WRAP,SIZE_BASED_WRAP,NO_WRAP|}\n"
                "  fsdp_state_dict_type: ${5|SHARDED_STATE_DICT,FULL_STATE_DICT|}\n  fsdp_cpu_ram_efficient_loading: ${6|true,false|}\n"
                "  fsdp_activation_checkpointing: ${7|false,true|}$0")
        if version is not None and not registry.version_in(version, "1.6", None):
            plain = plain.replace("  fsdp_version: 2\n  fsdp_reshard_after_forward: true\n", "  fsdp_sharding_strategy: FULL_SHARD\n")
            snip = snip.replace("  fsdp_version: ${1|2,1|}\n  fsdp_reshard_after_forward: ${2|true,false|}\n",
                                "  fsdp_sharding_strategy: ${1|FULL_SHARD,SHARD_GRAD_OP,HYBRID_SHARD,NO_SHARD|}\n${2:}")
        out.append(Candidate("fsdp_config block", "snippet", plain, where.start, where.end, "new FSDP section",
                             "A new `fsdp_config` section (FSDP2 where the accelerate version has it).\n\n```yaml\n" + plain + "\n```",
                             snippet=snip, sort="2", filter="fsdp_config"))
    if "deepspeed_config" not in where.present:
        plain = ("deepspeed_config:\n  zero_stage: 2\n  offload_optimizer_device: none\n  offload_param_device: none\n"
                 "  gradient_accumulation_steps: 1\n  zero3_init_flag: false")
        snip = ("deepspeed_config:\n  zero_stage: ${1|2,3,1,0|}\n  offload_optimizer_device: ${2|none,cpu,nvme|}\n"
                "  offload_param_device: ${3|none,cpu,nvme|}\n  gradient_accumulation_steps: ${4:1}\n  zero3_init_flag: ${5|false,true|}$0")
        out.append(Candidate("deepspeed_config block", "snippet", plain, where.start, where.end, "new DeepSpeed section",
                             "A new `deepspeed_config` section.\n\n```yaml\n" + plain + "\n```",
                             snippet=snip, sort="2", filter="deepspeed_config"))
    return out


def _key_insert(where: Where, name: str, is_section: bool) -> str:
    if where.format == "json":
        return json.dumps(name) + ("" if where.has_colon else (": {}" if is_section else ": "))
    if where.has_colon:
        return name
    if is_section:
        return f"{name}:\n{' ' * (where.indent + 2)}"
    return f"{name}: "


def _complete_keys(where: Where, kind: Kind, version: str | None) -> list[Candidate]:
    out: list[Candidate] = []
    if kind == "deepspeed":
        section = _ds_section(where.path)
        if section is None or not section.children:
            return out
        for name, k in section.children.items():
            if name in where.present or k.removed:
                continue
            detail = k.type if isinstance(k.type, str) else " | ".join(k.type)
            out.append(Candidate(name, "section" if k.children is not None else "key", _key_insert(where, name, k.children is not None),
                                 where.start, where.end, detail, _ds_markdown(name, k), sort="1" + name,
                                 deprecated=bool(k.deprecated)))
        return out
    section = where.section
    if section is None or (section and section not in registry.SECTIONS):
        return out
    for index, s in enumerate(registry.settings_in(section, version)):
        if s.key in where.present or s.deprecated or s.lost:
            continue
        if section == "" and s.key in registry.SAGEMAKER_KEYS - registry.CLUSTER_ONLY_KEYS:
            continue
        is_section = s.type == "section"
        detail = s.type + (f" = {yaml_scalar(s.launcher_default)}" if s.launcher_default is not None else "")
        out.append(Candidate(s.key, "section" if is_section else "key", _key_insert(where, s.key, is_section),
                             where.start, where.end, detail, setting_markdown(s, where.format), sort=f"1{index:03d}"))
    if section == "" and where.format == "yaml" and not where.has_colon:
        out.extend(_snippets(where, version))
    return out


def _complete_values(where: Where, kind: Kind, version: str | None) -> list[Candidate]:
    out: list[Candidate] = []
    if where.key is None:
        return out
    values: list[Any] = []
    docs: dict[str, str] = {}
    if kind == "deepspeed":
        k = _ds_section(where.path + (where.key,))
        if k is None or k.children is not None:
            return out
        if k.enum:
            values = list(k.enum)
            docs = {str(v): d for v, d in zip(k.enum, k.enum_docs)}
        elif k.type == "boolean" or (isinstance(k.type, tuple) and "boolean" in k.type):
            values = [True, False]
        if k.auto and "auto" not in values:
            values.append("auto")
    else:
        section = where.section
        if section is None:
            return out
        s, _ = registry.lookup(section, where.key, version)
        if s is None:
            return out
        values = _values_of(s, registry.resolve_version(version) if version else None)
    for i, v in enumerate(values):
        text = json_scalar(v) if where.format == "json" else yaml_scalar(v)
        plain = str(v).lower() if isinstance(v, bool) else str(v)
        filt = text if where.quote else plain
        doc = docs.get(str(v)) or registry.ENUM_DOCS.get(str(v), "")
        if where.format == "yaml" and text != plain and not isinstance(v, bool):
            doc = (doc + "\n\n" if doc else "") + f"Quoted: a bare `{plain}` is read as `{resolve_yaml11(plain)!r}` by accelerate (YAML 1.1)."
        insert = text if where.spaced or where.format == "json" else " " + text
        out.append(Candidate(text, "value", insert, where.start, where.end, "", doc, sort=f"0{i:03d}", filter=filt))
    return out


def complete(text: str, line: int, col: int, version: str | None = None, path: str = "",
             kind: Kind | None = None) -> list[Candidate]:
    """Completion candidates at 0-based (line, col): keys allowed in the cursor's section and not
    yet present (with docs), enum values after ``key: `` written so accelerate reads them right
    (``'no'``), and snippets for new ``fsdp_config`` / ``deepspeed_config`` blocks."""
    kind = kind or document_kind(path, text) or "accelerate"
    where = context_at(text, line, col, path=path)
    if where.part == "key":
        return _complete_keys(where, kind, version)
    if where.part == "value":
        return _complete_values(where, kind, version)
    return []


# -- hover ----------------------------------------------------------------------------------------

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


def _default_effective(s: Setting) -> str | None:
    if s.launcher_default is None and s.plugin_default is None:
        return None
    v = s.launcher_default if s.launcher_default is not None else s.plugin_default
    return f"`{yaml_scalar(v)}` (default: the key is absent)"


def hover(text: str, line: int, col: int, version: str | None = None, path: str = "",
          kind: Kind | None = None, doc: Document | None = None) -> str | None:
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
    if where.part == "key":
        lines = _lines(text)
        cur = lines[line] if line < len(lines) else ""
        name = (where.key or cur[where.start:where.end]) if where.format == "yaml" else cur[where.start:where.end].strip('"')
        where = Where(where.format, line, where.path, "key", key=name, start=where.start, end=where.end)
        raw: str = ""
        if where.format == "yaml":
            m = _KEY_LINE.match(cur)
            raw = _strip_comment(m.group("rest")).strip() if m else ""
    else:
        raw = where.value_text or ""
    name = where.key or ""
    if not name:
        return None
    if kind == "deepspeed":
        k = _ds_section(where.path + (name,))
        if k is None:
            return None
        md = _ds_markdown(".".join(where.path + (name,)), k, _effective(doc, where, None, raw) if k.children is None else None)
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
    if eff is None and s.type != "section":
        eff = _default_effective(s)
    md = setting_markdown(s, where.format, eff)
    if how == "alias":
        md = f"`{name}` is accepted for **{s.key}**.\n\n" + md
    if s.type == "section" and name in registry.SECTIONS:
        md += "\n\n" + registry.SECTIONS[name].doc
    as_string = where.format == "json" or raw[:1] in "'\"" or isinstance(resolve_yaml11(raw), str)
    if where.part == "value" and as_string:
        value = raw.strip("'\"")
        meaning = registry.ENUM_DOCS.get(str(s.canonical_value(value)))
        if meaning:
            md = f"`{s.canonical_value(value)}`: {meaning}\n\n---\n\n" + md
    return md


# -- symbols --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Symbol:
    """One outline entry: a key with its whole entry span and the key's own span (0-based)."""

    name: str
    detail: str
    kind: Literal["section", "key", "list", "item"]
    line: int
    col: int
    end_line: int
    end_col: int
    sel_line: int
    sel_col: int
    sel_end_line: int
    sel_end_col: int
    children: tuple["Symbol", ...] = ()


def _node_symbols(node: Node, depth: int) -> tuple[Symbol, ...]:
    out: list[Symbol] = []
    if depth > 20:
        return ()
    if node.kind == "map":
        for k, v in node.pairs:
            kind: Literal["section", "key", "list", "item"] = (
                "section" if v.kind == "map" else "list" if v.kind == "seq" else "key")
            detail = "" if v.kind != "scalar" else (v.raw if v.style is None else f"{v.style}{v.raw}{v.style}")[:80]
            if v.kind == "scalar" and v.style in ("|", ">"):
                detail = v.raw.splitlines()[0][:80] if v.raw else ""
            end_line, end_col = (v.end_line, v.end_col) if (v.end_line, v.end_col) >= (k.end_line, k.end_col) else (k.end_line, k.end_col)
            out.append(Symbol(str(k.value if k.kind == "scalar" else k.raw), detail, kind, k.line, k.col, end_line, end_col,
                              k.line, k.col, k.end_line, k.end_col, _node_symbols(v, depth + 1)))
    elif node.kind == "seq":
        for i, item in enumerate(node.items):
            detail = item.raw[:80] if item.kind == "scalar" else ""
            out.append(Symbol(f"[{i}]", detail, "item", item.line, item.col, item.end_line, item.end_col,
                              item.line, item.col, item.line, item.col, _node_symbols(item, depth + 1)))
    return tuple(out)


def symbols(doc: Document) -> list[Symbol]:
    """The outline of a parsed document: every key, nested."""
    if doc.root is None:
        return []
    return list(_node_symbols(doc.root, 0))


# -- quick-fix titles -----------------------------------------------------------------------------

def fix_title(finding: Finding, text: str) -> str:
    """A short title for the repair a finding carries (``Finding.fix``)."""
    edits = finding.fix
    if not edits:
        return ""
    if len(edits) == 1:
        start, end, new = edits[0]
        old = text[start:end]
        if new == "":
            name = finding.key.rsplit(".", 1)[-1] if finding.key else old.strip().split(":", 1)[0]
            return f"Remove `{name}`"
        if new.strip("'\"") == old.strip("'\"") and new != old:
            return f"Quote as {new}"
        if "\n" not in old and "\n" not in new and len(old) <= 60 and len(new) <= 60:
            what = "key" if "key" in finding.rule else "value"
            return f"Change {what} `{old}` to `{new}`" if finding.rule not in ("unknown-key", "unknown-nested-key") else \
                f"Did you mean `{new}`? Rename `{old}`"
    if finding.suggestion:
        return f"Fix: {finding.suggestion}"
    return f"Fix {finding.rule}"

