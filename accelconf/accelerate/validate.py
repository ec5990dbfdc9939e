"""Validation of accelerate config files: schema-level checks and accelerate's semantic rules.

Each rule is a small function ``(ctx) -> None`` registered in ``RULES`` with the ids it emits. They read
the parsed :class:`~accelconf.text.document.Document` (for positions and how values were written) and
the normalized :class:`~accelconf.accelerate.model.Config`, and know the accelerate version being targeted.

Severities: ``error`` means accelerate would fail, or silently do something other than what is
written; ``warning`` means the setting has no effect or is risky; ``info`` is a remark. Findings
carry text edits (``Finding.fix``) where a repair is mechanical; ``fmt`` and the language server's
quick fixes use them. DeepSpeed JSON is validated by :mod:`accelconf.deepspeed`.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

from accelconf import catalogue
from accelconf.accelerate import registry
from accelconf.text.document import Document, Node
from accelconf.text.scalars import json_scalar, yaml_scalar
from accelconf.findings import Finding, Severity
from accelconf.accelerate.model import Config, Entry, canonical, from_document
from accelconf.accelerate.registry import Setting, version_in

# Real-world misspellings with the key they meant (seen in published configs and docs).
COMMON_MISTAKES: dict[tuple[str, str], str] = {
    ("fsdp_config", "fsdp_cpu_offload"): "fsdp_offload_params",
    ("fsdp_config", "fsdp_transformer_cls_names_to_wrap"): "fsdp_transformer_layer_cls_to_wrap",
    ("fsdp_config", "fsdp_transformer_cls_to_wrap"): "fsdp_transformer_layer_cls_to_wrap",
    ("fsdp_config", "fsdp_limit_all_gathers"): "",
    ("fsdp_config", "fsdp_cpu_ram_efficient_loading_"): "fsdp_cpu_ram_efficient_loading",
    ("", "num_gpus"): "num_processes",
    ("", "gpus"): "num_processes",
    ("", "precision"): "mixed_precision",
    ("", "main_process_address"): "main_process_ip",
    ("", "node_rank"): "machine_rank",
    ("", "nnodes"): "num_machines",
    ("deepspeed_config", "stage"): "zero_stage",
    ("deepspeed_config", "gradient_accumulation"): "gradient_accumulation_steps",
}

BOOL_WORDS = registry.TRUE_WORDS | registry.FALSE_WORDS


@dataclass
class Context:
    doc: Document
    cfg: Config
    version: str
    findings: list[Finding] = field(default_factory=list)

    # -- helpers ----------------------------------------------------------------------------
    def value_node(self, *path: str) -> Node | None:
        return self.doc.node(tuple(path))

    def finding(self, rule: str, severity: Severity, message: str, path: tuple[str, ...], *,
                on_value: bool = False, suggestion: str | None = None,
                fix: tuple[tuple[int, int, str], ...] = ()) -> Finding:
        line, col, eline, ecol = self.doc.span(path, on_value)
        f = Finding(rule, severity, message, ".".join(str(p) for p in path), line, col, suggestion,
                    eline, ecol, fix=fix)
        self.findings.append(f)
        return f

    def replace_value(self, path: tuple[str, ...], text: str) -> tuple[tuple[int, int, str], ...]:
        node = self.doc.node(path)
        if node is None or node.kind != "scalar":
            return ()
        return ((node.start, node.end, text),)

    def rename_key(self, path: tuple[str, ...], new: str) -> tuple[tuple[int, int, str], ...]:
        node = self.doc.key(path)
        if node is None or node.kind != "scalar" or self.doc.key((*path[:-1], new)) is not None:
            return ()  # renamed onto a key the mapping has, the file would hold it twice (duplicate-key)
        return ((node.start, node.end, scalar_text(self.doc, new, like=node)),)

    def delete_key(self, path: tuple[str, ...]) -> tuple[tuple[int, int, str], ...]:
        """Delete a block-style ``key: value`` line (only simple one-line entries)."""
        k = self.doc.key(path)
        v = self.doc.node(path)
        if k is None or v is None or self.doc.format != "yaml" or v.end_line != k.line:
            return ()
        text = self.doc.text
        start = text.rfind("\n", 0, k.start) + 1
        if text[start:k.start].strip():
            return ()
        end = text.find("\n", v.end)
        end = len(text) if end < 0 else end + 1
        return ((start, end, ""),)


def scalar_text(doc: Document, value: Any, like: Node | None = None) -> str:
    """How to write a scalar in this document: a JSON literal, or YAML by :func:`accelconf.text.scalars.yaml_scalar`
    (quoted in the style of ``like`` when that is quoted; ``,[]{}`` quoted too, in case the value sits in a flow collection)."""
    if doc.format == "json":
        return json_scalar(value)
    return yaml_scalar(value, quote=like.style if like is not None else None, flow=True)


def _is_bool_like(v: Any) -> bool:
    return isinstance(v, bool) or (isinstance(v, str) and v.strip().lower() in BOOL_WORDS)


def _truthy_launch(v: Any) -> bool:
    """Python truthiness of a value as the launcher sees it (strings are truthy when non-empty)."""
    return bool(v)


# FSDP2 never reads these (accelerate/utils/dataclasses.py FullyShardedDataParallelPlugin.__post_init__
# parses sharding_strategy only under ``if self.fsdp_version == 1``); the other FSDP1-only fields are
# still parsed on FSDP2, so a bad value fails there too.
UNREAD_ON_FSDP2 = frozenset({"fsdp_sharding_strategy"})


def section_unused(data: dict, section: str) -> bool:
    """Whether the launcher ignores this whole section for this file."""
    if section not in registry.SECTIONS or data.get("distributed_type") not in registry.DISTRIBUTED_TYPES:
        return False  # a distributed_type accelerate refuses (reported): nothing is known to be unused
    return not registry.section_active(section, data)


def has_no_effect(ctx: "Context", s: Setting) -> bool:
    """A written setting that changes nothing: removed or too new for the version, never exported,
    ignored in a file, in a section the launcher does not use, or FSDP1-only and unread on FSDP2.
    Such a key gets one finding about that (from its own rule), never one about its value."""
    if not s.exists_in(ctx.version) or s.lost or s.file_ignored:
        return True
    if s.section and section_unused(ctx.doc.data, s.section):
        return True
    return s.section == "fsdp_config" and s.key in UNREAD_ON_FSDP2 and ctx.cfg.fsdp_version() == 2


def did_you_mean(section: str, key: str, version: str | None = None) -> str | None:
    mistake = COMMON_MISTAKES.get((section, key))
    if mistake is not None:
        return mistake or None
    candidates = [s.key for s in registry.settings_in(section, version)]
    if section == "fsdp_config" and "fsdp_" + key in candidates:
        return "fsdp_" + key  # the prefix left out (only a key this release has)
    lowered = {c.lower(): c for c in candidates}
    if key.lower() in lowered:
        return lowered[key.lower()]
    got = difflib.get_close_matches(key, candidates, n=1, cutoff=0.6)
    if not got and section:
        # try the key with the section prefix, or against unprefixed names
        stripped = {c.split("_", 1)[-1]: c for c in candidates}
        got2 = difflib.get_close_matches(key, list(stripped), n=1, cutoff=0.75)
        if got2:
            return stripped[got2[0]]
    return got[0] if got else None


Rule = Callable[[Context], None]
RULES: list[tuple[tuple[str, ...], Rule]] = []


def rule(*ids: str) -> Callable[[Rule], Rule]:
    """Register a rule function with the ids it emits, each of which must be in the catalogue
    (:mod:`accelconf.catalogue`): a new id fails at import until it is described there."""
    catalogue.require(*ids)

    def deco(fn: Rule) -> Rule:
        RULES.append((ids, fn))
        return fn
    return deco


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
            ctx.findings.append(Finding("duplicate-key", "error",
                                        f"duplicate key {name} at lines {first} and {q.line + 1}: accelerate ({loader}) silently "
                                        f"keeps line {q.line + 1}{others}; keep one", "", q.line + 1, q.col + 1))


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
        sev: Severity = "warning" if setting is not None and setting.type in ("str", "enum", "path", "classlist") else "info"
        fix = ((node.start, node.end, "'" + node.raw.replace("'", "''") + "'"),)
        ctx.finding(
            "yaml11-scalar", sev,
            f"`{node.raw}` is read as {node.value!r} by accelerate (PyYAML, YAML 1.1) but as {node.value12!r} by YAML 1.2 tools; quote it if you mean the string",
            spath, on_value=True, suggestion=f"'{node.raw}'", fix=fix,
        )


# -- top level -----------------------------------------------------------------------------------

def _is_sagemaker(ctx: Context) -> bool:
    return ctx.doc.data.get("compute_environment", "LOCAL_MACHINE") != "LOCAL_MACHINE"  # data: a mapping (validate_document)


@rule("key-too-new", "removed-key", "unknown-key")
def _unknown_keys(ctx: Context) -> None:
    data = ctx.doc.data
    sagemaker = _is_sagemaker(ctx)
    allowed_top = registry.SAGEMAKER_KEYS if sagemaker else registry.CLUSTER_ONLY_KEYS | {"fp16", "dynamo_backend"}
    for key in data:
        skey = str(key)
        setting = registry.get("", skey)
        if setting is not None and skey in allowed_top:
            if not setting.exists_in(ctx.version):
                removed = setting.until is not None and not version_in(ctx.version, None, setting.until)
                msg = (setting.deprecated or f"`{skey}` does not exist in accelerate {ctx.version}") if removed else \
                    f"`{skey}` needs accelerate {setting.since} or newer (checking against {ctx.version})"
                fix = ctx.delete_key((skey,)) if removed else ()
                ctx.finding("removed-key" if removed else "key-too-new", "error",
                            f"{msg.rstrip('.')}; accelerate refuses to load a config with unknown top-level keys", (skey,), fix=fix)
            continue
        if sagemaker and setting is not None:
            continue  # reported by the sagemaker rule
        if setting is not None:  # a SageMaker key in a cluster config: no other spelling to suggest
            ctx.finding("unknown-key", "error",
                        f"`{skey}` is a SageMaker config key: a LOCAL_MACHINE config may not have it, accelerate refuses to load the file (ValueError: unknown keys)",
                        (skey,))
            continue
        guess = did_you_mean("", skey, ctx.version)
        fix = ctx.rename_key((skey,), guess) if guess and _suits(registry.get("", guess), data[key]) else ()
        ctx.finding("unknown-key", "error",
                    f"unknown top-level key `{skey}`: accelerate refuses to load the file (ValueError: unknown keys)",
                    (skey,), suggestion=guess, fix=fix)


def _suits(setting: Setting | None, value: Any) -> bool:
    """Whether a value fits a setting's type and choices: a did-you-mean rename is a quick fix only
    then (renamed, a value that does not fit is a new error)."""
    if setting is None or setting.type == "section":
        return True
    if _expect_type(setting, value) is not None:
        return False
    return setting.type != "enum" or not setting.choices or setting.canonical_value(value) in setting.choices


@rule("alias-too-new", "unknown-nested-key")
def _unknown_nested(ctx: Context) -> None:
    for path, entry in ctx.cfg.unknown.items():
        if "." not in path:
            continue
        section, key = path.split(".", 1)
        setting, how = registry.lookup(section, key, ctx.version)
        if how == "alias-too-new" and setting is not None:
            sec = registry.SECTIONS[section]
            ctx.finding("alias-too-new", "warning",
                        f"`{key}` without the `{sec.prefix}` prefix is ignored before accelerate {sec.prefix_optional_since} (checking against {ctx.version})",
                        (section, key), suggestion=setting.key, fix=ctx.rename_key((section, key), setting.key))
            continue
        guess = did_you_mean(section, key, ctx.version)
        fix = ctx.rename_key((section, key), guess) if guess and _suits(registry.get(section, guess), entry.value) else ()
        extra = f"; did you mean `{guess}`?" if guess else ""
        ctx.finding("unknown-nested-key", "warning",
                    f"unknown key `{key}` in `{section}`: accelerate ignores it silently{extra}",
                    (section, key), suggestion=guess, fix=fix)


@rule("key-too-new", "removed-key")
def _versions(ctx: Context) -> None:
    for path, entry in list(ctx.cfg.entries.items()) + list(ctx.cfg.unknown.items()):
        s = entry.setting
        if s is None or not s.section or s.exists_in(ctx.version):
            continue
        sec = registry.SECTIONS.get(s.section)
        if sec is not None and not version_in(ctx.version, sec.since, sec.until):
            continue  # the whole section is reported at the top level
        keypath = (s.section, entry.written_key)
        if s.until is not None and not version_in(ctx.version, None, s.until):
            msg = s.deprecated or f"`{s.key}` was removed in accelerate {s.until}; it is ignored"
            ctx.finding("removed-key", "warning", msg, keypath, fix=ctx.delete_key(keypath))
        else:
            _too_new(ctx, s, entry, keypath)


def _too_new(ctx: Context, s: Setting, entry: Entry, keypath: tuple[str, ...]) -> None:
    """A key the target release does not know yet, judged per value: ignoring it matters only where the
    value differs from what that release does without it (Setting.before_since); then the registry says
    whether something else runs than written (Setting.too_new)."""
    head = f"`{s.key}` needs accelerate {s.since} or newer; accelerate {ctx.version} ignores it"
    value = canonical(s, entry.value)
    if s.runs_before_since(value):
        shown = "true" if value is True else "false" if value is False else value
        ctx.finding("key-too-new", "info", f"{head}, which changes nothing: `{s.key}: {shown}` is what it runs anyway", keypath)
        return
    changes = s.too_new == "error"
    ctx.finding("key-too-new", "error" if changes else "warning",
                head + (" and runs something else than written" if changes else ""), keypath)


@rule("enum-case", "invalid-type", "invalid-value", "legacy-value", "missing-distributed-type", "value-too-new",
      "yaml-bool-value")
def _distributed_type(ctx: Context) -> None:
    data = ctx.doc.data
    if "distributed_type" not in data:
        ctx.finding("missing-distributed-type", "error",
                    "`distributed_type` is missing: accelerate refuses the file (ValueError: A `distributed_type` must be specified)", ())
        return
    value = data["distributed_type"]
    node = ctx.value_node("distributed_type")
    if _is_sagemaker(ctx):
        if value not in registry.SAGEMAKER_DISTRIBUTED_TYPES:
            ctx.finding("invalid-value", "error", f"`distributed_type: {value}` is not a SageMaker distributed type ({', '.join(registry.SAGEMAKER_DISTRIBUTED_TYPES)})",
                        ("distributed_type",), on_value=True)
        return
    if isinstance(value, bool):
        raw = node.raw if node else str(value)
        if "num_processes" in data:
            sev: Severity = "warning"
            msg = f"unquoted `{raw}` is the YAML boolean {value} for accelerate, not the string 'NO'; it launches only because num_processes is set. Quote it: 'NO'"
        else:
            sev = "error"
            msg = f"unquoted `{raw}` is the YAML boolean {value} for accelerate: num_processes is not filled and launch fails. Quote it: 'NO'"
        fix = ctx.replace_value(("distributed_type",), "'NO'") if raw.upper() == "NO" else ()
        ctx.finding("yaml-bool-value", sev, msg, ("distributed_type",), on_value=True, suggestion="'NO'", fix=fix)
        return
    setting = registry.get("", "distributed_type")
    assert setting is not None
    if not isinstance(value, str):
        ctx.finding("invalid-type", "error", f"`distributed_type` must be a string, not {type(value).__name__}", ("distributed_type",), on_value=True)
        return
    if value in ("TPU", "TP") and value not in registry.DISTRIBUTED_TYPES:
        ok = registry.enum_exists(setting, value, ctx.version)
        if not ok:
            repl = "XLA" if value == "TPU" else "MULTI_GPU"
            ctx.finding("legacy-value", "error",
                        f"`distributed_type: {value}` does not exist in accelerate {ctx.version} (ValueError at load){'; it was renamed XLA in 0.28' if value == 'TPU' else ''}",
                        ("distributed_type",), on_value=True, suggestion=repl,
                        fix=ctx.replace_value(("distributed_type",), repl) if value == "TPU" else ())
        return
    if value not in registry.DISTRIBUTED_TYPES:
        upper = value.upper()
        if upper in registry.DISTRIBUTED_TYPES:
            ctx.finding("enum-case", "error",
                        f"`distributed_type: {value}` must be upper case: accelerate raises ValueError ('{value}' is not a valid DistributedType)",
                        ("distributed_type",), on_value=True, suggestion=upper,
                        fix=ctx.replace_value(("distributed_type",), scalar_text(ctx.doc, upper, node)))
        else:
            guess = difflib.get_close_matches(upper, registry.DISTRIBUTED_TYPES, n=1)
            ctx.finding("invalid-value", "error",
                        f"`distributed_type: {value}` is not one of {', '.join(registry.DISTRIBUTED_TYPES)}",
                        ("distributed_type",), on_value=True, suggestion=guess[0] if guess else None)
        return
    if not registry.enum_exists(setting, value, ctx.version):
        ctx.finding("value-too-new", "error", f"`distributed_type: {value}` does not exist in accelerate {ctx.version}",
                    ("distributed_type",), on_value=True)


@rule("enum-case", "invalid-value", "missing-key", "sagemaker-broken", "unknown-key")
def _compute_environment(ctx: Context) -> None:
    data = ctx.doc.data
    ce = data.get("compute_environment")
    if ce is None or ce in ("LOCAL_MACHINE", "AMAZON_SAGEMAKER"):
        if ce == "AMAZON_SAGEMAKER":
            if version_in(ctx.version, "1.10", None):
                ctx.finding("sagemaker-broken", "error",
                            f"SageMaker configs crash `accelerate launch` in accelerate {ctx.version} (AttributeError: 'SageMakerConfig' object has no attribute 'parallelism_config', 1.10+)",
                            ("compute_environment",), on_value=True)
            elif version_in(ctx.version, "0.34", None) and data.get("distributed_type") == "NO":
                ctx.finding("sagemaker-broken", "error",
                            "SageMaker configs with distributed_type 'NO' fail to load in accelerate 0.34+ (num_processes is injected and then unknown)",
                            ("distributed_type",), on_value=True)
            for req in ("ec2_instance_type", "iam_role_name"):
                if req not in data:
                    ctx.finding("missing-key", "error", f"SageMaker configs need `{req}`", ("compute_environment",))
            for key in data:  # (a key no config has is the unknown-key rule's, with its did-you-mean)
                if str(key) not in registry.SAGEMAKER_KEYS | {"fp16", "dynamo_backend"} and registry.get("", str(key)) is not None:
                    ctx.finding("unknown-key", "error", f"`{key}` is not a SageMaker config key: accelerate refuses to load the file", (str(key),))
        return
    if isinstance(ce, str) and ce.upper() in ("LOCAL_MACHINE", "AMAZON_SAGEMAKER"):
        ctx.finding("enum-case", "error",
                    f"`compute_environment: {ce}` is not exactly LOCAL_MACHINE, so accelerate loads it as a SageMaker config and fails with a misleading error",
                    ("compute_environment",), on_value=True, suggestion=ce.upper(),
                    fix=ctx.replace_value(("compute_environment",), ce.upper()))
    else:
        ctx.finding("invalid-value", "error", f"`compute_environment: {ce}` must be LOCAL_MACHINE or AMAZON_SAGEMAKER",
                    ("compute_environment",), on_value=True)


@rule("enum-case", "invalid-type", "invalid-value", "legacy-key", "yaml-bool-value")
def _mixed_precision(ctx: Context) -> None:
    data = ctx.doc.data
    if "mixed_precision" not in data:
        if data.get("fp16"):
            ctx.finding("legacy-key", "info", "legacy `fp16: true` is read as `mixed_precision: fp16`", ("fp16",), suggestion="mixed_precision: fp16")
        return
    if "fp16" in data:
        ctx.finding("legacy-key", "warning", "`fp16` is dropped when `mixed_precision` is set; remove it", ("fp16",), fix=ctx.delete_key(("fp16",)))
    value = data["mixed_precision"]
    node = ctx.value_node("mixed_precision")
    if isinstance(value, bool):
        from accelconf.accelerate.launch import changed

        raw = node.raw if node else str(value)
        # only false, and only in a YAML file, is read as 'no' (before 0.34); anything else reaches .lower()
        converted = value is False and ctx.doc.format == "yaml" and changed(ctx.version, "yaml-false-precision-no")
        what = f"unquoted `{raw}` is the YAML boolean {value}" if ctx.doc.format == "yaml" else f"`{raw}` is a boolean"
        quoted = scalar_text(ctx.doc, "no")
        ctx.finding("yaml-bool-value", "info" if converted else "error",
                    f"{what}: accelerate {ctx.version} " +
                    ("converts it to 'no'; quote it for newer versions" if converted
                     else "crashes at launch (AttributeError: 'bool' object has no attribute 'lower'). "
                     + ("Quote it: " if ctx.doc.format == "yaml" else "Write ") + quoted),
                    ("mixed_precision",), on_value=True, suggestion=quoted,
                    fix=ctx.replace_value(("mixed_precision",), quoted) if value is False else ())
        return
    if value is None:
        return
    if not isinstance(value, str):
        ctx.finding("invalid-type", "error", f"`mixed_precision` must be one of {', '.join(registry.PRECISIONS)}", ("mixed_precision",), on_value=True)
        return
    if value.lower() not in registry.PRECISIONS:
        guess = difflib.get_close_matches(value.lower(), registry.PRECISIONS, n=1)
        ctx.finding("invalid-value", "error", f"`mixed_precision: {value}` is not one of {', '.join(registry.PRECISIONS)} (ValueError at launch)",
                    ("mixed_precision",), on_value=True, suggestion=guess[0] if guess else None)
    elif value != value.lower():
        ctx.finding("enum-case", "info", f"`mixed_precision: {value}` works (the launcher lowercases it); accelerate writes `{value.lower()}`",
                    ("mixed_precision",), on_value=True, suggestion=value.lower(),
                    fix=ctx.replace_value(("mixed_precision",), scalar_text(ctx.doc, value.lower(), node)))


# -- values of every registered setting ---------------------------------------------------------

def _expect_type(s: Setting, v: Any) -> str | None:
    """A short description of what is wrong with the type, or None."""
    t = s.type
    if v is None:
        return None
    if t == "int":
        if isinstance(v, bool) or not isinstance(v, int):
            if isinstance(v, str) and v.strip().lstrip("-").isdigit():
                return None
            return "an integer"
    elif t == "float":
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            if isinstance(v, str):
                try:
                    float(v)
                    return None
                except ValueError:
                    pass
            return "a number"
    elif t == "bool":
        if not _is_bool_like(v):
            return "a boolean"
    elif t in ("str", "path", "classlist"):
        if not isinstance(v, str):
            return "a string"
    elif t == "list":
        if not isinstance(v, (list, tuple)):
            return "a list"
    elif t == "section":
        if not isinstance(v, dict):
            return "a mapping"
    return None


def _sharding_is_int(version: str) -> bool:
    from accelconf.accelerate.launch import changed

    return changed(version, "sharding-strategy-int")


def _sharding_int(ctx: Context, v: Any, keypath: tuple[str, ...]) -> None:
    """Before 0.26 FullyShardedDataParallelPlugin reads ShardingStrategy(int(FSDP_SHARDING_STRATEGY)):
    integers 1-5 (as the release knows them) work, a name fails when the plugin is built."""
    count = len(registry.SHARDING_STRATEGIES) if version_in(ctx.version, "0.21", None) else 3
    text = str(v).strip()
    if not isinstance(v, bool) and text.isdigit() and 1 <= int(text) <= count:
        return
    name = str(v).upper()
    number = registry.SHARDING_STRATEGIES.index(name) + 1 if name in registry.SHARDING_STRATEGIES else None
    ctx.finding("sharding-strategy-int", "error",
                f"accelerate {ctx.version} reads the sharding strategy as an integer: "
                f"`{v}` makes FullyShardedDataParallelPlugin fail (int() of it) when training starts"
                + (f"; write {number} ({name})" if number else f"; write 1 to {count}"),
                keypath, on_value=True, suggestion=str(number) if number else None,
                fix=ctx.replace_value(keypath, str(number)) if number else ())


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
            ctx.finding("invalid-type", "error",
                        f"`gpu_ids: {raw}` is {type(v).__name__} for accelerate and crashes the launcher (no attribute 'split'); write a string such as '{raw}'",
                        keypath, on_value=True, suggestion=f"'{raw}'", fix=ctx.replace_value(keypath, f"'{raw}'"))
        return
    if s.key == "fsdp_transformer_layer_cls_to_wrap" and isinstance(v, list):
        joined = ",".join(str(x) for x in v)
        ctx.finding("invalid-type", "error",
                    "a YAML list here is exported as its Python repr (\"['A', 'B']\") and no class matches; write a comma-separated string",
                    keypath, on_value=True, suggestion=joined)
        return
    if s.key == "fsdp_reshard_after_forward":
        return  # depends on the FSDP version: see the fsdp rule
    if s.type == "section":
        return
    if s.key == "override_linear_precision" and isinstance(v, (list, tuple)):
        if len(v) != 3 or not all(_is_bool_like(x) for x in v):
            ctx.finding("invalid-value", "error", "`override_linear_precision` takes three booleans (fprop, dgrad, wgrad)", keypath, on_value=True)
        return
    if s.key == "override_linear_precision" and isinstance(v, str):
        ctx.finding("invalid-type", "warning",
                    f"`override_linear_precision: {v}` is a string: the launcher exports its first three characters, and TERecipeKwargs fails on them (invalid truth value); write a list [false, false, false]",
                    keypath, on_value=True, suggestion="[false, false, false]")
        return
    wrong = _expect_type(s, v)
    if s.type == "enum" and s.choices:
        _enum_value(ctx, s, e.written_key, v, keypath)
        return
    if wrong:
        vnode = ctx.doc.node(keypath)
        if vnode is not None and vnode.kind == "scalar" and vnode.style is None and vnode.value != vnode.value12 \
                and _expect_type(s, vnode.value12) is None:
            return  # a YAML 1.1 reading: reported once by yaml11-scalar
        ctx.finding("invalid-type", "error" if s.type in ("int", "float") else "warning",
                    f"`{e.written_key}` should be {wrong}, not {v!r}", keypath, on_value=True)
        return
    if s.minimum is not None and isinstance(canonical(s, v), (int, float)) and not isinstance(v, bool) and canonical(s, v) < s.minimum:
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
            ctx.finding("legacy-value", "info",
                        f"`{written_key}: {v}` means {canon}; accelerate writes the name",
                        keypath, on_value=True, suggestion=str(canon),
                        fix=ctx.replace_value(keypath, scalar_text(ctx.doc, canon)))
    elif isinstance(v, str) and s.case_insensitive and any(isinstance(c, str) and c.lower() == v.lower() for c in choices):
        ok = True
        canon = s.canonical_value(v)
        if s.key == "fsdp_sharding_strategy" and not version_in(ctx.version, "0.34", None) and v != canon:
            ctx.finding("enum-case", "error", f"`{v}` must be written `{canon}` for accelerate {ctx.version} (names are case-sensitive before 0.34)",
                        keypath, on_value=True, suggestion=str(canon), fix=ctx.replace_value(keypath, scalar_text(ctx.doc, canon)))
        elif v != canon:
            ctx.finding("enum-case", "info", f"`{v}` works (any case); accelerate writes `{canon}`", keypath, on_value=True,
                        suggestion=str(canon), fix=ctx.replace_value(keypath, scalar_text(ctx.doc, canon)))
    elif isinstance(v, str) and not s.case_insensitive and any(isinstance(c, str) and c.lower() == v.lower() for c in choices):
        canon = next(c for c in choices if isinstance(c, str) and c.lower() == v.lower())
        sev: Severity = "error"
        extra = ""
        if s.key == "backend" and s.section == "fp8_config":
            extra = " (`Accelerator()` raises ValueError on a lowercase FP8 backend since 1.9)"
            sev = "error" if version_in(ctx.version, "1.9", None) else "warning"
        ctx.finding("enum-case", sev, f"`{written_key}: {v}` must be `{canon}`{extra}", keypath, on_value=True,
                    suggestion=str(canon), fix=ctx.replace_value(keypath, scalar_text(ctx.doc, canon)))
        return
    elif s.key in ("zero_stage",) and isinstance(v, str) and v.isdigit() and int(v) in choices:
        ok = True
    if not ok:
        shown = ", ".join(str(c) for c in choices)
        guess = None
        if isinstance(v, str):
            m = difflib.get_close_matches(v.upper(), [str(c).upper() for c in choices], n=1)
            if m:
                guess = next(str(c) for c in choices if str(c).upper() == m[0])
        ctx.finding("invalid-value", "error", f"`{written_key}: {v}` is not one of {shown}", keypath, on_value=True, suggestion=guess)
        return
    if not registry.enum_exists(s, v, ctx.version):
        ctx.finding("value-too-new", "error", f"`{written_key}: {v}` does not exist in accelerate {ctx.version}", keypath, on_value=True)


def _non_mapping_sections(ctx: Context) -> None:
    """Sections that are not mappings: the launcher skips a non-mapping (``isinstance(attr, dict)`` in
    commands/launch.py _validate_launch_command), so a used section is silently replaced by its
    defaults (error), an unused one changes nothing (warning)."""
    for name in registry.SECTIONS:
        v = ctx.doc.data.get(name) if name else None
        if not name or v is None or isinstance(v, dict):
            continue
        node = ctx.value_node(name)
        shown = f"`{name}: {node.raw}`" if node is not None and node.kind == "scalar" else f"`{name}` written as a {type(v).__name__}"
        if section_unused(ctx.doc.data, name):
            ctx.finding("section-unused", "warning",
                        f"{shown} has no effect here (the launcher does not read `{name}` with this configuration); "
                        f"where it is used it must be a mapping of `{name}` keys", (name,), on_value=True)
        else:
            ctx.finding("invalid-type", "error",
                        f"`{name}` must be a mapping: accelerate skips {shown} without a word and uses the defaults of every `{name}` key",
                        (name,), on_value=True)


@rule("enum-case", "invalid-type", "invalid-value", "legacy-value", "section-unused", "sharding-strategy-int",
      "value-too-new")
def _values(ctx: Context) -> None:
    for path, e in ctx.cfg.entries.items():
        _entry_value(ctx, path, e)
    _non_mapping_sections(ctx)


@rule("no-effect")
def _file_ignored(ctx: Context) -> None:
    for path, e in ctx.cfg.entries.items():
        s = e.setting
        if s is None or not s.file_ignored:
            continue
        same_as_default = canonical(s, e.value) == s.launcher_default
        node = ctx.value_node(e.written_key)
        shown = node.raw if node is not None and node.kind == "scalar" else repr(e.value)
        machines = ctx.doc.data.get("num_machines", 1)
        irrelevant = (s.key in ("same_network", "rdzv_backend") and not (isinstance(machines, int) and machines > 1)) or \
            (s.key in ("downcast_bf16", "tpu_use_sudo") and ctx.doc.data.get("distributed_type") != "XLA")
        if same_as_default or irrelevant:
            ctx.finding("no-effect", "info", f"`{s.key}` in a config file is never applied by `accelerate launch` (here it would make no difference)",
                        (e.written_key,))
        else:
            ctx.finding("no-effect", "warning",
                        f"`{s.key}: {shown}` is ignored: `accelerate launch` always uses its flag default ({s.launcher_default!r}); pass `{s.cli_flag}` on the command line",
                        (e.written_key,), suggestion=f"{s.cli_flag}")


@rule("no-effect")
def _lost(ctx: Context) -> None:
    for path, e in ctx.cfg.entries.items():
        s = e.setting
        if s is None or not s.lost:
            continue
        keypath = (s.section, e.written_key)
        if s.section == "deepspeed_config":
            ctx.finding("no-effect", "warning",
                        f"`{s.key}` never reaches the training process (the launcher does not export it; the plugin sees 'none'); set the NVMe path in a DeepSpeed JSON file",
                        keypath)
        else:
            target = {"amax_history_length": "amax_history_len", "amax_compute_algorithm": "amax_compute_algo", "optimization_level": "opt_level"}.get(s.key)
            ctx.finding("no-effect", "warning", f"`{s.key}` is exported under a name nothing reads; use `{target}`", keypath,
                        suggestion=target, fix=ctx.rename_key(keypath, target) if target else ())


@rule("fsdp-invalid-combination", "fsdp1-key-in-fsdp2", "fsdp1-strategy-ignored", "fsdp2-key-in-fsdp1",
      "fsdp2-local-state-dict", "fsdp2-reshard-bool", "section-unused", "unprefixed-key")
def _fsdp(ctx: Context) -> None:
    data = ctx.doc.data
    fsdp = data.get("fsdp_config")
    if not isinstance(fsdp, dict) or not fsdp:
        return
    cfg = ctx.cfg
    dt = data.get("distributed_type")
    if section_unused(data, "fsdp_config"):
        ctx.finding("section-unused", "info", f"`fsdp_config` has no effect with distributed_type {dt!r}", ("fsdp_config",))
        return  # nothing in it is read: findings about its keys would be noise
    version = cfg.get("fsdp_config.fsdp_version", 1)
    try:
        fv = int(version)
    except (TypeError, ValueError):
        fv = 1
    written = {e.setting.key: e for p, e in cfg.entries.items() if p.startswith("fsdp_config.") and e.setting}
    for key, e in written.items():
        s = e.setting
        assert s is not None
        if fv not in s.fsdp_versions and s.exists_in(ctx.version):
            kp = ("fsdp_config", e.written_key)
            if fv == 2:
                ctx.finding("fsdp1-key-in-fsdp2", "warning", f"`{key}` applies to FSDP1 only; FSDP2 ignores it (the plugin warns or drops it)", kp,
                            fix=ctx.delete_key(kp))
            elif canonical(s, e.value) != canonical(s, s.launcher_default):
                # the plugin raises only on a non-default value (dataclasses.py: ``if
                # self.activation_checkpointing_offload and self.fsdp_version != 2: raise``)
                ctx.finding("fsdp2-key-in-fsdp1", "error", f"`{key}` needs `fsdp_version: 2`", kp)
    raf = written.get("fsdp_reshard_after_forward")
    if raf is not None:
        kp = ("fsdp_config", raf.written_key)
        v = raf.value
        if fv == 2 and not _is_bool_like(v):
            as_bool = registry.FSDP2_RESHARD_OF_STRATEGY.get(str(v).upper())
            mapped = None if as_bool is None else str(as_bool).lower()
            ctx.finding("fsdp2-reshard-bool", "error",
                        f"FSDP2 needs a boolean `fsdp_reshard_after_forward`, not {v!r} (the plugin raises ValueError: invalid truth value)",
                        kp, on_value=True, suggestion=mapped, fix=ctx.replace_value(kp, mapped) if mapped else ())
        elif fv == 1 and isinstance(v, str) and v.upper() in registry.SHARDING_STRATEGIES and "fsdp_sharding_strategy" not in written:
            # before 0.26 the moved value must be the strategy's number (sharding-strategy-int)
            number = str(registry.SHARDING_STRATEGIES.index(v.upper()) + 1) if _sharding_is_int(ctx.version) else None
            ctx.finding("fsdp1-strategy-ignored", "info" if v.upper() == "FULL_SHARD" else "warning",
                        f"FSDP1 reads only `fsdp_sharding_strategy`; `fsdp_reshard_after_forward: {v}` is ignored and FULL_SHARD is used",
                        kp, suggestion=f"fsdp_sharding_strategy: {number or v.upper()}",
                        fix=ctx.rename_key(kp, "fsdp_sharding_strategy") + (ctx.replace_value(kp, number) if number else ()))
        elif fv == 1 and _is_bool_like(v):
            pass  # FSDP1 plugin never reads it from env: harmless
    sdt = written.get("fsdp_state_dict_type")
    if sdt is not None and fv == 2 and str(canonical(sdt.setting, sdt.value)).upper() == "LOCAL_STATE_DICT":
        ctx.finding("fsdp2-local-state-dict", "error", "FSDP2 does not support LOCAL_STATE_DICT (ValueError)", ("fsdp_config", sdt.written_key), on_value=True,
                    suggestion="SHARDED_STATE_DICT")
    aco = written.get("fsdp_activation_checkpointing_offload")
    if aco is not None and canonical(aco.setting, aco.value) is True:
        ac = written.get("fsdp_activation_checkpointing")
        if ac is None or canonical(ac.setting, ac.value) is not True:
            ctx.finding("fsdp-invalid-combination", "error", "`fsdp_activation_checkpointing_offload` needs `fsdp_activation_checkpointing: true`",
                        ("fsdp_config", aco.written_key))
    if dt == "FSDP" and version_in(ctx.version, "0.24", None):
        ram = written.get("fsdp_cpu_ram_efficient_loading")
        sync = written.get("fsdp_sync_module_states")
        ram_v = ram.value if ram is not None else "true"
        sync_v = sync.value if sync is not None else "true"
        if _truthy_launch(ram_v) and not _truthy_launch(sync_v):
            ctx.finding("fsdp-invalid-combination", "error",
                        "`fsdp_cpu_ram_efficient_loading` is on (it defaults to true) while `fsdp_sync_module_states` is false: `accelerate launch` raises ValueError",
                        ("fsdp_config", sync.written_key if sync else "fsdp_sync_module_states"), on_value=True,
                        suggestion="fsdp_sync_module_states: true")
    # the legacy key, ignored since 1.0
    for p, e in ctx.cfg.entries.items():
        if e.setting is not None and e.setting.key == "fsdp_backward_prefetch_policy" and not e.setting.exists_in(ctx.version):
            pass  # reported by the version rule with its deprecation message
    # unprefixed keys: fine, but accelerate writes the prefix
    for p, e in ctx.cfg.entries.items():
        if p.startswith("fsdp_config.") and e.setting and e.written_key != e.setting.key:
            ctx.finding("unprefixed-key", "info", f"`{e.written_key}` is read as `{e.setting.key}`; accelerate writes the prefix",
                        ("fsdp_config", e.written_key), suggestion=e.setting.key, fix=ctx.rename_key(("fsdp_config", e.written_key), e.setting.key))


@rule("deepspeed-config-file-conflict", "deepspeed-config-file-invalid", "deepspeed-config-file-missing",
      "deepspeed-offload-stage", "section-unused", "zero3-save-16bit")
def _deepspeed(ctx: Context) -> None:
    data = ctx.doc.data
    ds = data.get("deepspeed_config")
    if not isinstance(ds, dict) or not ds:
        return
    dt = data.get("distributed_type")
    if section_unused(data, "deepspeed_config"):
        ctx.finding("section-unused", "info", f"`deepspeed_config` has no effect with distributed_type {dt!r}", ("deepspeed_config",))
        return  # nothing in it is read: findings about its keys would be noise
    if ds.get("deepspeed_config_file"):
        conflicts = [k for k in registry.deepspeed_json_keys() if k in ds]
        for k in conflicts:
            ctx.finding("deepspeed-config-file-conflict", "error",
                        f"`{k}` together with `deepspeed_config_file`: accelerate raises ValueError at training time (set it in the JSON file instead)",
                        ("deepspeed_config", k), fix=ctx.delete_key(("deepspeed_config", k)))
        # process_config turns a truthy legacy fp16 into mixed_precision, which then counts too
        mp_key = "mixed_precision" if "mixed_precision" in data else ("fp16" if data.get("fp16") else None)
        if mp_key is not None and dt == "DEEPSPEED":
            ctx.finding("deepspeed-config-file-conflict", "error",
                        f"a top-level `{mp_key}` (even 'no') together with `deepspeed_config_file`: accelerate raises ValueError at training time; set fp16/bf16 in the JSON file",
                        (mp_key,), fix=ctx.delete_key((mp_key,)))
        _deepspeed_file(ctx, str(ds["deepspeed_config_file"]))
    stage = ds.get("zero_stage")
    for k in ("offload_param_device",):
        if k in ds and str(ds[k]).lower() not in ("none",) and stage is not None and str(stage).isdigit() and int(stage) < 3:
            ctx.finding("deepspeed-offload-stage", "warning", f"`{k}: {ds[k]}` has an effect only with ZeRO stage 3", ("deepspeed_config", k))
    if not ds.get("deepspeed_config_file"):  # with a file, the JSON's own setting counts (checked with it)
        _zero3_save(ctx)


def _zero3_save(ctx: Context) -> None:
    """ZeRO-3 shards the weights: without ``zero3_save_16bit_model`` (DeepSpeedPlugin writes it as
    ``stage3_gather_16bit_weights_on_model_save``) ``Accelerator.get_state_dict``/``save_model`` raise
    ValueError and the HF Trainer's ``save_model`` writes no weights, only a DeepSpeed checkpoint."""
    stage = ctx.cfg.entries.get("deepspeed_config.zero_stage")
    save = ctx.cfg.entries.get("deepspeed_config.zero3_save_16bit_model")
    if stage is None or canonical(stage.setting, stage.value) != 3:
        return
    value = canonical(save.setting, save.value) if save is not None else None
    if value is True:
        return
    path = ("deepspeed_config", save.written_key) if save is not None else ("deepspeed_config", "zero_stage")
    ctx.finding("zero3-save-16bit", "warning",
                f"ZeRO stage 3 with `zero3_save_16bit_model` {'false' if save is not None else 'not set (default false)'}: "
                "saving the model writes no consolidated weights (accelerator.get_state_dict() and save_model() raise "
                "ValueError, the HF Trainer's save_model() saves a DeepSpeed checkpoint to convert with zero_to_fp32.py); "
                "set `zero3_save_16bit_model: true`", path, on_value=save is not None,
                suggestion="zero3_save_16bit_model: true", fix=ctx.replace_value(path, "true") if save is not None else ())


def _deepspeed_file(ctx: Context, ref: str) -> None:
    """Open the referenced DeepSpeed JSON (found as :func:`accelconf.deepspeed.config_file_path` says) and cross-check it."""
    from accelconf import deepspeed as dsmod

    path = dsmod.config_file_path(ref, ctx.doc.path)
    if path is None:
        ctx.finding("deepspeed-config-file-missing", "info",
                    f"`deepspeed_config_file` {ref!r} was not found next to the config (it is resolved against the launch directory at run time)",
                    ("deepspeed_config", "deepspeed_config_file"), on_value=True)
        return
    from accelconf.text.document import load_file
    from accelconf.errors import InputError

    try:
        ds_doc = load_file(path, "json")
    except InputError as exc:
        ctx.finding("deepspeed-config-file-invalid", "error", f"the DeepSpeed config {ref!r} cannot be read: {exc}",
                    ("deepspeed_config", "deepspeed_config_file"), on_value=True)
        return
    # The key conflicts need only this file and are reported above (with quick fixes); the
    # cross-check adds what needs the JSON (a dtype it contradicts, the "auto" values accelerate fills).
    ctx.findings.extend(dsmod.crosscheck(ctx.doc.data, ctx.doc, ds_doc, key_conflicts=False))
    # The JSON itself, as accelerate will read it (its "auto" values are filled by accelerate).
    world = dsmod.accelerate_world_size(ctx.doc.data)
    for f in dsmod.validate_deepspeed(ds_doc, world_size=world, runtime="accelerate"):
        ctx.findings.append(f.with_path(ds_doc.path))


@rule("section-unused")
def _fp8(ctx: Context) -> None:
    data = ctx.doc.data
    fp8 = data.get("fp8_config")
    if isinstance(fp8, dict) and fp8 and not registry.section_active("fp8_config", data):
        ctx.finding("section-unused", "info", "`fp8_config` has an effect only with `mixed_precision: fp8`", ("fp8_config",))


@rule("invalid-value", "legacy-key", "no-effect")
def _dynamo(ctx: Context) -> None:
    data = ctx.doc.data
    if isinstance(data.get("dynamo_config"), dict) and data.get("distributed_type") == "DEEPSPEED":
        backend = data["dynamo_config"].get("dynamo_backend", data["dynamo_config"].get("backend"))
        if backend and str(backend).upper() != "NO":
            ctx.finding("no-effect", "warning", "`dynamo_config` is not exported by the DeepSpeed launcher: torch.compile stays off", ("dynamo_config",))
    if "dynamo_backend" in data:
        v = data["dynamo_backend"]
        if "dynamo_config" in data:
            ctx.finding("legacy-key", "warning", "top-level `dynamo_backend` replaces the whole `dynamo_config` when the file is loaded", ("dynamo_backend",))
        else:
            ctx.finding("legacy-key", "info", f"legacy top-level `dynamo_backend: {v}` is read as `dynamo_config: {{dynamo_backend: {v}}}`", ("dynamo_backend",))
        s = registry.get("", "dynamo_backend")
        if s is not None and isinstance(v, str) and v.upper() not in registry.DYNAMO_BACKENDS:
            ctx.finding("invalid-value", "error", f"`dynamo_backend: {v}` is not a dynamo backend", ("dynamo_backend",), on_value=True)


# distributed types whose processes torchrun (or the deepspeed launcher) starts: accelerate/utils/launch.py
# prepare_multi_gpu_env / prepare_deepspeed_cmd_env pass num_processes on as --nproc_per_node.
TORCHRUN_TYPES = frozenset(registry.MULTI_GPU_TYPES) | {"FSDP", "DEEPSPEED", "MEGATRON_LM"}


def null_counts(num_processes: Any, num_machines: Any, distributed_type: Any, written: Iterable[str]) -> list[tuple[str, str]]:
    """(key, what fails) for each process count written as null that stops `accelerate launch`.

    accelerate 1.15 copies a null from the file into the namespace unchanged
    (commands/launch.py ``_validate_launch_command``: only ``None`` attributes are filled, and null
    is ``None``). ``num_machines`` is then compared with 1 on every launch path (utils/launch.py
    ``num_machines > 1``): TypeError. ``num_processes`` reaches torchrun as ``--nproc_per_node None``
    (``prepare_multi_gpu_env``, ``prepare_deepspeed_cmd_env``), which torch.distributed.run refuses;
    the simple launcher only tests it for truth, so 'NO' and MULTI_CPU run one process.
    """
    keys = set(written)
    out = []
    if "num_machines" in keys and num_machines is None:
        out.append(("num_machines", "`num_machines: null`: accelerate launch raises TypeError ('>' not supported between "
                                    "instances of 'NoneType' and 'int'); write a number (1 for one machine) or delete the key"))
    if "num_processes" in keys and num_processes is None and distributed_type in TORCHRUN_TYPES:
        out.append(("num_processes", "`num_processes: null`: accelerate launch passes `--nproc_per_node None` to torchrun, which "
                                     "refuses it (ValueError: Unsupported nproc_per_node value: None); write the total number of processes"))
    return out


def machine_rank_outside(rank: Any, machines: Any, name: str = "`machine_rank`") -> str | None:
    """What is wrong with a machine rank that names no machine of ``num_machines`` (``None``: it
    names one, or either is not a whole number). ``name`` says how the rank was given (the key, or
    a command-line option): every place that judges a machine rank uses this bound."""
    whole = all(isinstance(v, int) and not isinstance(v, bool) for v in (rank, machines))
    if not whole or 0 <= rank < machines:
        return None
    return f"{name} {rank} is outside 0..{machines - 1}"


def fitting_processes(n: int, machines: int, gpus_per_machine: int | None = None) -> int:
    """The process count that lays out evenly: a multiple of num_machines (and, when known, one
    process per GPU of every machine)."""
    if gpus_per_machine:
        return machines * gpus_per_machine
    return max(machines, (n // machines) * machines)


@rule("gpu-ids", "missing-key", "multi-node", "null-count", "process-layout", "processes")
def _processes(ctx: Context) -> None:
    data = ctx.doc.data
    if _is_sagemaker(ctx):
        return
    dt = data.get("distributed_type")
    n = data.get("num_processes")
    machines = data.get("num_machines", 1)
    for key, message in null_counts(n, machines, dt, data):
        ctx.finding("null-count", "error", message, (key,), on_value=True)
    if "num_processes" not in data and dt not in ("NO", None) and not isinstance(dt, bool) and version_in(ctx.version, "0.34", None):
        ctx.finding("missing-key", "error",
                    "`num_processes` is missing: `accelerate launch` stops with \"You need to manually pass in --num_processes\" unless you pass it",
                    ("distributed_type",), suggestion="num_processes: <total processes across machines>")
    elif "num_processes" not in data and not version_in(ctx.version, "0.34", None) and dt != "NO":
        ctx.finding("missing-key", "error", f"accelerate {ctx.version} requires `num_processes` in the file", ())
    if not isinstance(n, int) or isinstance(n, bool) or not isinstance(machines, int) or isinstance(machines, bool):
        return
    if n == -1:
        ctx.finding("missing-key", "error", "`num_processes: -1` means \"not set\": `accelerate launch` asks for --num_processes", ("num_processes",), on_value=True)
    if machines > 1:
        # accelerate does not refuse these: torchrun starts n // machines per node (utils/launch.py
        # prepare_multi_gpu_env), so the job runs with fewer processes than written. A warning with
        # the count that fits.
        if n % machines and n > machines:
            fit = fitting_processes(n, machines)
            ctx.finding("process-layout", "warning",
                        f"`num_processes` is the total across machines: {n} is not a multiple of num_machines {machines}; torchrun starts {n // machines} per node ({n // machines * machines} in all)",
                        ("num_processes",), on_value=True, suggestion=str(fit), fix=ctx.replace_value(("num_processes",), str(fit)))
        elif n < machines:
            ctx.finding("process-layout", "error" if n // machines == 0 and dt in TORCHRUN_TYPES else "warning",
                        f"`num_processes` ({n}) is the total across machines and is smaller than num_machines ({machines}): torchrun would start {n // machines} processes per node",
                        ("num_processes",), on_value=True, suggestion=str(machines))
        if not data.get("main_process_ip") and dt != "DEEPSPEED":
            ctx.finding("multi-node", "warning", "multi-node training needs `main_process_ip` (the address of machine rank 0): pass --main_process_ip at launch or set it here", ("num_machines",))
        elif not data.get("main_process_ip"):
            ctx.finding("multi-node", "warning", "multi-node DeepSpeed without `main_process_ip`: only works with a hostfile launcher", ("num_machines",))
        outside = machine_rank_outside(data.get("machine_rank", 0), machines)
        if outside:
            ctx.finding("multi-node", "error", outside, ("machine_rank",), on_value=True)
        if data.get("same_network") and dt != "DEEPSPEED":
            pass  # file-ignored rule reports it
    gpu_ids = data.get("gpu_ids")
    if isinstance(gpu_ids, str) and gpu_ids != "all" and dt in registry.MULTI_GPU_TYPES and machines <= 1:
        ids = [x for x in gpu_ids.split(",") if x.strip()]
        if len(ids) < 2:
            ctx.finding("gpu-ids", "error", f"`gpu_ids: {gpu_ids}` lists fewer than two GPUs for {dt}: accelerate raises ValueError (Less than two GPU ids)",
                        ("gpu_ids",), on_value=True)
        elif n and n != len(ids) and n // max(machines, 1) != len(ids):
            idle = " (some of them stay idle)" if n < len(ids) else ""
            ctx.finding("gpu-ids", "warning", f"`num_processes: {n}` differs from the {len(ids)} GPUs in `gpu_ids`{idle}", ("gpu_ids",), on_value=True,
                        suggestion=f"num_processes: {fitting_processes(n, max(machines, 1), len(ids))}")
    if dt == "NO" and isinstance(n, int) and n > 1 and not data.get("use_cpu"):
        ctx.finding("processes", "info", f"`distributed_type: 'NO'` with num_processes {n}: only one process runs the script", ("num_processes",))


@rule("parallelism", "section-unused")
def _parallelism(ctx: Context) -> None:
    """What accelerate's ParallelismConfig refuses when the Accelerator starts (its ``__post_init__``
    and ``_validate_accelerator``), for a launch that passes the sizes on at all."""
    from accelconf.accelerate.launch import LaunchError, changed, launch_env

    pc = ctx.cfg.section("parallelism_config")
    if not pc or not changed(ctx.version, "parallelism-config"):
        return  # before 1.10 key-too-new reports each size

    try:
        exported = launch_env(ctx.cfg, version=ctx.version).env.get(registry.USE_PARALLELISM_CONFIG_ENV) == "true"
    except LaunchError:
        exported = True  # launch-refused says why the launch fails; the sizes are still checked
    if not exported:  # no ParallelismConfig is built
        dt = ctx.doc.data.get("distributed_type")
        ctx.finding("section-unused", "info", f"accelerate {ctx.version} does not pass `parallelism_config` on with "
                    f"distributed_type {dt!r}: the sizes have no effect", ("parallelism_config",))
        return

    def size(name: str) -> int:
        s = registry.get("parallelism_config", f"parallelism_config_{name}")
        if s is None or not version_in(ctx.version, s.since, s.until):
            return 1  # a size newer than the release is not read (key-too-new says so)
        try:
            return int(pc.get(s.key, 1))
        except (TypeError, ValueError):
            return 1

    dp_r, dp_s, tp, cp, sp = size("dp_replicate_size"), size("dp_shard_size"), size("tp_size"), size("cp_size"), size("sp_size")
    if cp > 1 and sp > 1 and changed(ctx.version, "parallelism-cp-sp-exclusive"):
        ctx.finding("parallelism", "error", "context parallelism and sequence parallelism cannot be combined", ("parallelism_config",))
    if (tp > 1 or cp > 1) and dp_r > 1 and dp_s == 1:
        ctx.finding("parallelism", "error", "tensor/context parallelism with pure replicated data parallelism (dp_shard_size 1) is rejected", ("parallelism_config",))
    n = ctx.doc.data.get("num_processes")
    dt = ctx.doc.data.get("distributed_type")
    product = dp_r * dp_s * tp * cp * sp  # ParallelismConfig.total_size; 1 means "replicate over every process"
    sp_free = sp > 1 and changed(ctx.version, "parallelism-sp-any-size")  # DeepSpeed forms its own SP groups
    if isinstance(n, int) and not isinstance(n, bool) and n > 0 and product not in (1, n) and not sp_free:
        ctx.finding("parallelism", "error",
                    f"the parallelism sizes multiply to {product} but num_processes is {n} (ParallelismConfig raises ValueError)", ("parallelism_config",))
    if dt == "FSDP" and ctx.cfg.fsdp_version() == 2 and dp_s == 1 and cp == 1:
        raises = changed(ctx.version, "parallelism-fsdp2-shard-dim")
        ctx.finding("parallelism", "error" if raises else "warning",
                    "FSDP2 with parallelism_config needs dp_shard_size or cp_size above 1 " +
                    ("(ParallelismConfig raises ValueError)" if raises else "(prepare fails with a KeyError from the device mesh)"),
                    ("parallelism_config",))


@rule("section-unused")
def _mpirun(ctx: Context) -> None:
    mc = ctx.doc.data.get("mpirun_config")
    if isinstance(mc, dict) and mc and not registry.section_active("mpirun_config", ctx.doc.data):
        ctx.finding("section-unused", "info", "`mpirun_config` has an effect only with distributed_type MULTI_CPU", ("mpirun_config",))


@rule("launch-refused")
def _launch_refused(ctx: Context) -> None:
    """What the release's own launcher refuses (accelconf.accelerate.launch, with its per-release
    table CHANGES), when no rule above has already said why the config fails."""
    if any(f.severity == "error" for f in ctx.findings):
        return
    from accelconf.accelerate.launch import LaunchError, launch_env

    try:
        launch_env(ctx.cfg, version=ctx.version)
    except LaunchError as exc:
        where: tuple[str, ...] = ("distributed_type",) if "distributed_type" in ctx.doc.data else ()
        ctx.finding("launch-refused", "error", f"`accelerate launch` {ctx.version} refuses this config: {exc.message}", where)


# -- entry points --------------------------------------------------------------------------------

def validate_document(doc: Document, *, accelerate_version: str | None = None, disabled: Iterable[str] = ()) -> list[Finding]:
    """Every finding for one accelerate config document (already parsed)."""
    from accelconf.findings import sort_findings

    version = registry.resolve_version(accelerate_version)
    data = doc.data
    if doc.root is None or data is None:
        return [Finding("empty", "error", "the document is empty: accelerate fails to load it ('NoneType' object has no attribute 'get')", "", 1, 1)]
    if not isinstance(data, dict):
        return [Finding("not-a-mapping", "error", f"an accelerate config must be a mapping of keys to values, not a {type(data).__name__}", "", 1, 1)]
    cfg = from_document(doc, version)
    ctx = Context(doc, cfg, version)
    off = set(disabled)
    for _ids, fn in RULES:
        fn(ctx)
    findings = [f for f in ctx.findings if f.rule not in off]
    return sort_findings(_dedupe(findings))


def _dedupe(findings: list[Finding]) -> list[Finding]:
    seen = set()
    out = []
    for f in findings:
        k = (f.rule, f.line, f.column, f.message)
        if k in seen:
            continue
        seen.add(k)
        out.append(f)
    return out


def validate_any(doc: Document, *, accelerate_version: str | None = None, deepspeed_version: str | None = None,
                 world_size: int | None = None, runtime: str | None = None, disabled: Iterable[str] = ()) -> list[Finding]:
    """Validate an accelerate config, or a DeepSpeed JSON recognized by its content."""
    if doc.format == "json" and doc.data is not None:
        from accelconf import deepspeed as dsmod
        from accelconf.kinds import is_deepspeed

        # --runtime deepspeed / --deepspeed-version say the file is DeepSpeed JSON unless it has accelerate keys
        if is_deepspeed(doc, assume=runtime == "deepspeed" or deepspeed_version is not None):
            off = set(disabled)
            if deepspeed_version is None:
                deepspeed_version = dsmod.installed_version()  # the installed DeepSpeed, from its metadata
            if runtime is None:
                # "auto" values only make sense for a Hugging Face runtime; a file without any is
                # read by DeepSpeed itself.
                runtime = "transformers" if '"auto"' in doc.text else "deepspeed"
            found = dsmod.validate_deepspeed(doc, world_size=world_size, runtime=runtime, deepspeed_version=deepspeed_version)
            return [f for f in found if f.rule not in off]
    return validate_document(doc, accelerate_version=accelerate_version, disabled=disabled)
