"""The JSON Schema (draft-07) of a DeepSpeed config, generated from the key table.

The committed ``schemas/deepspeed-config.schema.json`` is :func:`write_schema`'s output; a test fails
when it is stale.
"""

from __future__ import annotations

import json
import math
from typing import Any

from accelconf.deepspeed.keys import _FILLER_LABEL, _UNSET, NEWEST, OLDEST, SCHEMA_ID, TOP, ZERO, Key


def _json_default(v: Any) -> Any:
    if isinstance(v, float) and (math.isinf(v) or math.isnan(v)):
        return None
    return v


def _version_notes(k: Key) -> list[str]:
    notes = []
    if k.since:
        notes.append(f"Since DeepSpeed {k.since}.")
    for version, old in k.default_changes:
        notes.append(f"Default before {version}: `{json.dumps(old)}`.")
    if k.removed:
        notes.append(f"Removed in DeepSpeed {k.removed}: {k.removed_message or 'no longer read'}.")
    if k.aliases:
        notes.append("Also accepted as " + ", ".join(f"`{a}`" for a in k.aliases) + ".")
    fill = k.fillers()
    if fill:
        for who in ("native", "autotuner", "transformers", "accelerate"):
            if who in fill:
                label = _FILLER_LABEL[who]
                notes.append(f'`"auto"`: {label} fills it from {fill[who]}.')
    return notes


def _schema_for(k: Key, strict_parent: bool) -> dict[str, Any]:
    s: dict[str, Any] = {}
    types = [k.type] if isinstance(k.type, str) else list(k.type)
    if k.nullable and "null" not in types:
        types.append("null")
    notes = _version_notes(k)
    text = k.doc + ("\n\n" + " ".join(notes) if notes else "")
    s["description"] = text.replace("`", "")
    s["markdownDescription"] = text
    if k.default is not _UNSET:
        s["default"] = _json_default(k.default)
    if k.removed or k.deprecated:
        s["deprecationMessage"] = (k.deprecated or f"Removed in DeepSpeed {k.removed}: {k.removed_message}").replace(
            "`", ""
        )
    if k.children is not None:
        props = {}
        for name, child in k.children.items():
            props[name] = _schema_for(child, k.strict_since is not None)
            for alias in child.aliases:
                alias_schema = dict(props[name])
                alias_schema["description"] = f"Alternative spelling of {name}."
                alias_schema["markdownDescription"] = f"Alternative spelling of `{name}`."
                props[alias] = alias_schema
        s["type"] = ["object", "null"] if k.nullable else "object"
        if k is ZERO:
            s["type"] = ["object", "boolean"]
        s["properties"] = props
        if not k.open and k.strict_since is not None:
            s["additionalProperties"] = False  # a pydantic model with extra="forbid": DeepSpeed raises
        elif not k.open:
            # a hand-parsed section (the top level, ...): DeepSpeed reads the keys it knows and ignores the
            # rest (deepspeed/runtime/config.py get_* helpers), so a file with one still runs and must pass;
            # editors still flag the key through deprecationMessage, like validate's warning
            s["additionalProperties"] = {"deprecationMessage": "DeepSpeed does not read this key here: it is ignored"}
        return s
    body: dict[str, Any] = {"type": types[0] if len(types) == 1 else types}
    if k.enum:
        body["enum"] = list(k.enum) + ([None] if k.nullable else [])
        if k.enum_docs:
            body["markdownEnumDescriptions"] = list(k.enum_docs) + (["Not set."] if k.nullable else [])
    if k.items and "array" in types:
        body["items"] = {"type": k.items}
    for attr, name in (
        ("minimum", "minimum"),
        ("exclusive_minimum", "exclusiveMinimum"),
        ("maximum", "maximum"),
        ("exclusive_maximum", "exclusiveMaximum"),
    ):
        value = getattr(k, attr)
        if value is not None:
            body[name] = value
    if k.fillers():
        s["anyOf"] = [
            body,
            {"const": "auto", "description": "Filled in by " + ", ".join(_FILLER_LABEL[w] for w in k.fillers())},
        ]
    else:
        s.update(body)
    return s


def deepspeed_schema() -> dict[str, Any]:
    """The JSON Schema (draft-07) of a DeepSpeed config, generated from :data:`TOP`."""
    schema: dict[str, Any] = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "$id": SCHEMA_ID,
        "title": f"DeepSpeed configuration (ds_config.json), DeepSpeed {OLDEST} to {NEWEST}",
    }
    schema.update(_schema_for(TOP, False))
    return schema


def write_schema(path: str) -> None:
    """Write the generated schema to ``path`` (the committed ``schemas/deepspeed-config.schema.json``)."""
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(json.dumps(deepspeed_schema(), indent=2, sort_keys=False) + "\n")
