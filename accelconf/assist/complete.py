"""What may be typed at a position: keys, values and whole new sections, as completion candidates.

Keys allowed in the cursor's section and not yet present, enum values written so accelerate
(PyYAML, YAML 1.1) reads them back right (``'no'``), and snippets for new ``fsdp_config`` /
``deepspeed_config`` blocks. Candidates carry plain text and, where it helps, LSP snippet syntax;
turning them into protocol items is the server's job. Columns are 0-based code points.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

from accelconf.accelerate import registry
from accelconf.assist.cursor import Where, context_at
from accelconf.assist.detect import Kind, document_kind
from accelconf.assist.hover import _ds_markdown, _ds_section, _values_of, setting_markdown
from accelconf.text.document import resolve_yaml11
from accelconf.text.scalars import json_scalar, yaml_scalar

_FSDP_VERSION = registry.get("fsdp_config", "fsdp_version")  # FSDP2 arrives with this key


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


def _snippets(where: Where, version: str | None) -> list[Candidate]:
    """Whole new blocks for the top level of a YAML accelerate config."""
    out: list[Candidate] = []
    if where.format != "yaml" or where.path:
        return out
    if "fsdp_config" not in where.present:
        plain = (
            "fsdp_config:\n  fsdp_version: 2\n  fsdp_reshard_after_forward: true\n  fsdp_offload_params: false\n"
            "  fsdp_auto_wrap_policy: TRANSFORMER_BASED_WRAP\n  fsdp_state_dict_type: SHARDED_STATE_DICT\n"
            "  fsdp_cpu_ram_efficient_loading: true\n  fsdp_activation_checkpointing: false"
        )
        snip = (
            "fsdp_config:\n  fsdp_version: ${1|2,1|}\n  fsdp_reshard_after_forward: ${2|true,false|}\n"
            "  fsdp_offload_params: ${3|false,true|}\n  fsdp_auto_wrap_policy: "
            "${4|TRANSFORMER_BASED_WRAP,SIZE_BASED_WRAP,NO_WRAP|}\n"
            "  fsdp_state_dict_type: ${5|SHARDED_STATE_DICT,FULL_STATE_DICT|}\n  fsdp_cpu_ram_efficient_loading: "
            "${6|true,false|}\n"
            "  fsdp_activation_checkpointing: ${7|false,true|}$0"
        )
        if version is not None and _FSDP_VERSION is not None and not _FSDP_VERSION.exists_in(version):
            plain = plain.replace(
                "  fsdp_version: 2\n  fsdp_reshard_after_forward: true\n", "  fsdp_sharding_strategy: FULL_SHARD\n"
            )
            snip = snip.replace(
                "  fsdp_version: ${1|2,1|}\n  fsdp_reshard_after_forward: ${2|true,false|}\n",
                "  fsdp_sharding_strategy: ${1|FULL_SHARD,SHARD_GRAD_OP,HYBRID_SHARD,NO_SHARD|}\n${2:}",
            )
        out.append(
            Candidate(
                "fsdp_config block",
                "snippet",
                plain,
                where.start,
                where.end,
                "new FSDP section",
                "A new `fsdp_config` section (FSDP2 where the accelerate version has it).\n\n```yaml\n"
                + plain
                + "\n```",
                snippet=snip,
                sort="2",
                filter="fsdp_config",
            )
        )
    if "deepspeed_config" not in where.present:
        plain = (
            "deepspeed_config:\n  zero_stage: 2\n  offload_optimizer_device: none\n  offload_param_device: none\n"
            "  gradient_accumulation_steps: 1\n  zero3_init_flag: false"
        )
        snip = (
            "deepspeed_config:\n  zero_stage: ${1|2,3,1,0|}\n  offload_optimizer_device: ${2|none,cpu,nvme|}\n"
            "  offload_param_device: ${3|none,cpu,nvme|}\n  gradient_accumulation_steps: ${4:1}\n  zero3_init_flag: "
            "${5|false,true|}$0"
        )
        out.append(
            Candidate(
                "deepspeed_config block",
                "snippet",
                plain,
                where.start,
                where.end,
                "new DeepSpeed section",
                "A new `deepspeed_config` section.\n\n```yaml\n" + plain + "\n```",
                snippet=snip,
                sort="2",
                filter="deepspeed_config",
            )
        )
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
            out.append(
                Candidate(
                    name,
                    "section" if k.children is not None else "key",
                    _key_insert(where, name, k.children is not None),
                    where.start,
                    where.end,
                    detail,
                    _ds_markdown(name, k),
                    sort="1" + name,
                    deprecated=bool(k.deprecated),
                )
            )
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
        out.append(
            Candidate(
                s.key,
                "section" if is_section else "key",
                _key_insert(where, s.key, is_section),
                where.start,
                where.end,
                detail,
                setting_markdown(s, where.format),
                sort=f"1{index:03d}",
            )
        )
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
            doc = (
                doc + "\n\n" if doc else ""
            ) + f"Quoted: a bare `{plain}` is read as `{resolve_yaml11(plain)!r}` by accelerate (YAML 1.1)."
        insert = text if where.spaced or where.format == "json" else " " + text
        out.append(Candidate(text, "value", insert, where.start, where.end, "", doc, sort=f"0{i:03d}", filter=filt))
    return out


def complete(
    text: str, line: int, col: int, version: str | None = None, path: str = "", kind: Kind | None = None
) -> list[Candidate]:
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
