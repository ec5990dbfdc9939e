"""JSON Schema for accelerate config files, generated from the settings registry.

The schema targets editors (yaml-language-server, VS Code) and schema catalogs: ``default``,
``markdownDescription``, ``enum`` with ``markdownEnumDescriptions``, ``deprecationMessage`` and a
stable ``$id``. It is generated, never edited: ``schemas/accelerate-config.schema.json`` is the
output of :func:`accelerate_schema` for the newest known version, and a test fails when the
committed file is stale (regenerate with ``make schemas``). Cross-field rules (FSDP versions,
DeepSpeed file conflicts, multi-node) are left to :mod:`accelconf.accelerate.validate`.
"""

from __future__ import annotations

import json
from typing import Any

from accelconf import catalogue
from accelconf.accelerate import registry
from accelconf.accelerate.registry import Setting

# A schema names itself with a URN: an identifier, not an address, so nothing points at a server
# that does not exist. Editors load the files themselves (a path, `accelconf schema --write DIR`).
SCHEMA_URN = "urn:accelconf:schema"
# The planned public address of schemas/ (NOT LIVE YET, catalogue.SITE): used only by catalog.json,
# the one place a SchemaStore-style catalog needs absolute URLs; the catalog says so in its "$comment".
FUTURE_BASE_URL = catalogue.SITE + "/schemas"
# accelerate's truth words (registry.TRUE_WORDS/FALSE_WORDS); words of two letters or more also
# capitalized and in upper case, as YAML writes them
BOOL_STRINGS = {
    w
    for base in registry.TRUE_WORDS | registry.FALSE_WORDS
    for w in ({base, base.capitalize(), base.upper()} if len(base) > 1 else {base})
}


def _describe(s: Setting) -> str:
    parts = [s.doc]
    facts = []
    if s.cli_flag:
        facts.append(f"flag `{s.cli_flag}`")
    if s.env:
        facts.append(f"env `{s.env}`")
    if s.plugin:
        facts.append(f"`{s.plugin}`")
    if facts:
        parts.append("Maps to " + ", ".join(facts) + ".")
    if s.launcher_default is not None and s.plugin_default is not None and s.launcher_default != s.plugin_default:
        parts.append(
            f"Default: `{_json(s.launcher_default)}` via `accelerate launch`, `{_json(s.plugin_default)}` in the "
            "plugin."
        )
    elif s.launcher_default is not None:
        parts.append(f"Default: `{_json(s.launcher_default)}`.")
    if s.since or s.until:
        rng = f"accelerate {s.since or registry.OLDEST}" + (f" to {s.until} (exclusive)" if s.until else "+")
        parts.append(f"Versions: {rng}.")
    if s.file_ignored:
        parts.append("Ignored by `accelerate launch` when set in a file.")
    return " ".join(parts)


def _json(v: Any) -> str:
    return json.dumps(list(v) if isinstance(v, tuple) else v)


def _property(s: Setting) -> dict[str, Any]:
    p: dict[str, Any] = {}
    t = s.type
    if s.key == "fsdp_reshard_after_forward":
        # FSDP2 takes a boolean; the FSDP1 wizard writes a strategy name here (see validate)
        p["type"] = ["boolean", "string", "null"]
        p["pattern"] = "^(" + "|".join(sorted(BOOL_STRINGS) + list(registry.SHARDING_STRATEGIES)) + ")$"
    elif t in ("bool", "boolish"):
        p["type"] = ["boolean", "string", "null"]
        p["pattern"] = "^(" + "|".join(sorted(BOOL_STRINGS)) + ")$"
    elif t == "int":
        p["type"] = ["integer", "null"]
    elif t == "float":
        p["type"] = ["number", "null"]
    elif t in ("str", "path", "classlist"):
        p["type"] = ["string", "null"]
    elif t == "list" and s.key == "override_linear_precision":
        # accelerate's own fp8 test config writes the tuple as text, "(false, false, false)", and launches
        # (accelerate/tests/test_configs/0_34_0_fp8.yaml): the launcher passes it on as a string
        p["type"] = ["array", "string", "null"]
    elif t == "list":
        p["type"] = ["array", "null"]
    elif t == "dict":
        p["type"] = ["object", "null"]
    elif t == "enum" and s.choices:
        kinds = {type(c) for c in s.choices}
        values: list[Any] = list(s.choices)
        if s.case_insensitive:
            values += [c.lower() for c in s.choices if isinstance(c, str) and c.lower() != c]
            values += [c.upper() for c in s.choices if isinstance(c, str) and c.upper() != c]
        values += [
            legacy for legacy, _ in s.legacy_values if legacy not in values and s.key not in ("distributed_type",)
        ]
        if s.key == "distributed_type":
            values += [v for v in registry.SAGEMAKER_DISTRIBUTED_TYPES if v not in values]
            # an unquoted NO is the YAML 1.1 boolean false for accelerate (PyYAML safe_load); it launches
            # when num_processes is set (the schema's if/then below), as validate's yaml-bool-value rule says
            values.append(False)
        descriptions = []
        for v in values:
            if v in s.choices:
                descriptions.append(registry.ENUM_DOCS.get(str(v), ""))
            elif s.key == "distributed_type" and v is False:
                descriptions.append(
                    "An unquoted `NO` read as YAML 1.1: launches only with `num_processes` set. Quote it: `'NO'`."
                )
            elif s.key == "distributed_type":
                descriptions.append("SageMaker only (`compute_environment: AMAZON_SAGEMAKER`).")
            else:
                descriptions.append(f"Legacy or alternative spelling of `{s.canonical_value(v)}`.")
        p["enum"] = values + [None]
        p["markdownEnumDescriptions"] = descriptions + ["Unset: the default applies."]
        if kinds == {int}:
            p["type"] = "integer"
    if s.minimum is not None:
        p["minimum"] = s.minimum
    if s.launcher_default is not None and s.type != "section":
        p["default"] = list(s.launcher_default) if isinstance(s.launcher_default, tuple) else s.launcher_default
    text = _describe(s)
    p["description"] = text.replace("`", "")
    p["markdownDescription"] = text
    # yaml-language-server shows deprecationMessage as an error: only where accelconf warns too
    # (removed keys, lost values); legacy spellings that still work are described instead.
    if s.deprecated and (s.lost or s.until is not None):
        p["deprecationMessage"] = s.deprecated
    elif s.deprecated:
        p["markdownDescription"] += f" Legacy: {s.deprecated}."
    elif s.lost:
        p["deprecationMessage"] = "Has no effect: this value never reaches the training process."
    return p


def _section_schema(name: str, version: str) -> dict[str, Any]:
    sec = registry.SECTIONS[name]
    props: dict[str, Any] = {}
    for s in registry.settings_in(name, version, include_removed=True):
        if not s.exists_in(version) and not s.deprecated:
            continue
        props[s.key] = _property(s)
        for alias, since in s.aliases:
            if since is None or registry.version_in(version, since, None):
                alias_prop = dict(props[s.key])
                alias_prop["markdownDescription"] = (
                    f"Alternative spelling of `{s.key}`. " + alias_prop["markdownDescription"]
                )
                props[alias] = alias_prop
    schema: dict[str, Any] = {
        "type": ["object", "null"],
        "description": sec.doc.replace("`", ""),
        "markdownDescription": sec.doc,
        "properties": props,
    }
    if sec.prefix:
        # unprefixed spellings are accepted (fsdp_config always, dynamo_config from 1.14)
        if sec.prefix_optional_since is None or registry.version_in(version, sec.prefix_optional_since, None):
            for s in registry.settings_in(name, version):
                if s.key.startswith(sec.prefix) and s.key[len(sec.prefix) :] not in props and name != "fp8_config":
                    short = dict(props[s.key])
                    short["markdownDescription"] = f"Unprefixed spelling of `{s.key}`. " + short["markdownDescription"]
                    props[s.key[len(sec.prefix) :]] = short
    # accelerate ignores unknown nested keys (ClusterConfig keeps the section as a dict and reads the
    # keys it knows: accelerate/commands/config/config_args.py), so a file with one still launches and
    # must pass the schema. Editors still flag them: yaml-language-server and VS Code show
    # deprecationMessage as a diagnostic, like accelconf's `unknown-key` warning.
    schema["additionalProperties"] = {
        "deprecationMessage": f"accelerate {version} does not read this key in {name}: it is ignored",
    }
    return schema


def accelerate_schema(version: str | None = None) -> dict[str, Any]:
    """The JSON Schema (draft-07) for accelerate config files as accelerate ``version`` reads them."""
    version = registry.resolve_version(version) if version else registry.NEWEST
    props: dict[str, Any] = {}
    for s in registry.settings_in("", version, include_removed=True):
        if not s.exists_in(version):
            continue
        if s.type == "section":
            props[s.key] = _section_schema(s.key, version)
            props[s.key]["markdownDescription"] = s.doc
        else:
            props[s.key] = _property(s)
    for s in registry.SETTINGS:
        if s.section == "" and s.key in registry.SAGEMAKER_KEYS and s.key not in props:
            props[s.key] = _property(s)
    schema_id = f"{SCHEMA_URN}:accelerate-config:{version}"
    return {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "$id": schema_id,
        "title": f"Hugging Face Accelerate config (accelerate {version})",
        "description": (
            "Config file read by `accelerate launch --config_file` (generated by accelconf from its settings registry)."
        ),
        "type": "object",
        "required": ["distributed_type"],
        "properties": props,
        "additionalProperties": False,
        # accelerate fills num_processes from distributed_type only when it is a string; the boolean
        # (unquoted NO) launches only with num_processes given (validate's yaml-bool-value rule)
        "if": {"properties": {"distributed_type": {"const": False}}, "required": ["distributed_type"]},
        "then": {"required": ["num_processes"]},
    }


def dumps(schema: dict[str, Any]) -> str:
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


GENERATED = {
    "accelerate-config.schema.json": lambda: accelerate_schema(),
}


# Names and folders that hold these configs in real repositories: measured on the corpus's original paths
# (tests/e2e/test_ecosystem.py), they match 46 of the 83 accelerate configs and 49 of the 60 DeepSpeed JSONs and
# none of the Trainer-path files. Most of the rest are named only `fsdp.yaml`, `multi_gpu.yaml`: a glob that
# caught them would put the schema on unrelated YAML, so those are left to the editor's content recogniser.
FILE_MATCH = [
    "**/accelerate/default_config.yaml",
    "**/*accelerate*config*.yaml",
    "**/*accelerate*config*.yml",
    "**/accelerate_configs/*.yaml",
    "**/accelerate_configs/*.yml",
    "**/accelerate*/**/*.yaml",
    "**/accelerate*/**/*.yml",
    "**/*accelerate*.yaml",
    "**/*accelerate*.yml",
]
DEEPSPEED_FILE_MATCH = [
    "**/ds_config*.json",
    "**/*deepspeed*config*.json",
    "**/zero*_config*.json",
    "**/zero*.json",
    "**/ds_*.json",
    "**/deepspeed*/**/*.json",
    "**/ds_configs/**/*.json",
    "**/deepspeed_configs/**/*.json",
]


def catalog() -> dict[str, Any]:
    """A SchemaStore-style catalog entry per schema, with a ``versions`` map per accelerate release."""
    versions = {v: f"{FUTURE_BASE_URL}/versions/accelerate-config-{v}.schema.json" for v in registry.KNOWN_VERSIONS}
    versions[registry.NEWEST] = f"{FUTURE_BASE_URL}/accelerate-config.schema.json"
    return {
        "$schema": "https://json.schemastore.org/schema-catalog.json",
        "$comment": "The url values are the planned public address of this directory and are NOT LIVE YET. "
        "Until they are, point editors at these files (or at `accelconf schema --write DIR`).",
        "version": 1,
        "schemas": [
            {
                "name": "Hugging Face Accelerate config",
                "description": (
                    "accelerate launch --config_file configuration (FSDP, DeepSpeed, dynamo, fp8, parallelism)"
                ),
                "fileMatch": FILE_MATCH,
                "url": f"{FUTURE_BASE_URL}/accelerate-config.schema.json",
                "versions": versions,
            },
            {
                "name": "DeepSpeed config",
                "description": "DeepSpeed JSON configuration (ds_config.json), DeepSpeed 0.15 to 0.19.8",
                "fileMatch": DEEPSPEED_FILE_MATCH,
                "url": f"{FUTURE_BASE_URL}/deepspeed-config.schema.json",
            },
        ],
    }
