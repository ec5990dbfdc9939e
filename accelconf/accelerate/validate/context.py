"""The rule context (the document, its Config, the release) and the helpers the rules share."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from accelconf.accelerate import registry
from accelconf.accelerate.model import Config
from accelconf.accelerate.registry import Setting
from accelconf.accelerate.validate import valuerules
from accelconf.accelerate.validate.valuerules import UNREAD_ON_FSDP2, _is_bool_like  # noqa: F401  (shared names)
from accelconf.findings import Finding, Severity
from accelconf.records import Record
from accelconf.text import suggest
from accelconf.text.document import Document, Node
from accelconf.text.scalars import json_scalar, yaml_scalar

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


class Context(Record):
    _fields = ("doc", "cfg", "version", "findings")

    def __init__(self, doc: Document, cfg: Config, version: str, findings: list[Finding] | None = None) -> None:
        self.doc, self.cfg, self.version = doc, cfg, version
        self.findings: list[Finding] = [] if findings is None else findings

    # -- helpers ----------------------------------------------------------------------------
    def value_node(self, *path: str) -> Node | None:
        return self.doc.node(tuple(path))

    def finding(
        self,
        rule: str,
        severity: Severity,
        message: str,
        path: tuple[str, ...],
        *,
        on_value: bool = False,
        suggestion: str | None = None,
        fix: tuple[tuple[int, int, str], ...] = (),
    ) -> Finding:
        line, col, eline, ecol = self.doc.span(path, on_value)
        f = Finding(
            rule, severity, message, ".".join(str(p) for p in path), line, col, suggestion, eline, ecol, fix=fix
        )
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
        if text[start : k.start].strip():
            return ()
        end = text.find("\n", v.end)
        end = len(text) if end < 0 else end + 1
        return ((start, end, ""),)


def scalar_text(doc: Document, value: Any, like: Node | None = None) -> str:
    """How to write a scalar in this document: a JSON literal, or YAML by :func:`accelconf.text.scalars.yaml_scalar`
    (quoted in the style of ``like`` when that is quoted; ``,[]{}`` quoted too, in case the value
    sits in a flow collection)."""
    if doc.format == "json":
        return json_scalar(value)
    return yaml_scalar(value, quote=like.style if like is not None else None, flow=True)


def _truthy_launch(v: Any) -> bool:
    """Python truthiness of a value as the launcher sees it (strings are truthy when non-empty)."""
    return bool(v)


def section_unused(data: dict, section: str) -> bool:
    """Whether the launcher ignores this whole section for this file."""
    if section not in registry.SECTIONS or data.get("distributed_type") not in registry.DISTRIBUTED_TYPES:
        return False  # a distributed_type accelerate refuses (reported): nothing is known to be unused
    return not registry.section_active(section, data)


def has_no_effect(ctx: Context, s: Setting) -> bool:
    """A written setting that changes nothing (:func:`accelconf.accelerate.validate.valuerules.has_no_effect`):
    such a key gets one finding about that (from its own rule), never one about its value."""
    return valuerules.has_no_effect(ctx.cfg, s, ctx.version)


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
    got = suggest.closest(key, candidates)
    if got is None and section:
        # try the key with the section prefix, or against unprefixed names
        stripped = {c.split("_", 1)[-1]: c for c in candidates}
        got2 = suggest.closest(key, stripped, 0.75)
        if got2 is not None:
            return stripped[got2]
    return got


Rule = Callable[[Context], None]


RULES: list[tuple[tuple[str, ...], Rule]] = []


def rule(*ids: str) -> Callable[[Rule], Rule]:
    """Register a rule function with the ids it emits, each of which must be in the catalogue
    (:mod:`accelconf.catalogue`; tests/unit/catalogue/test_catalogue.py fails on one that is not). Not checked
    here: loading the catalogue would cost every command's start-up."""

    def deco(fn: Rule) -> Rule:
        RULES.append((ids, fn))
        return fn

    return deco


# -- top level -----------------------------------------------------------------------------------


def _is_sagemaker(ctx: Context) -> bool:
    # data: a mapping (validate_document)
    return bool(ctx.doc.data.get("compute_environment", "LOCAL_MACHINE") != "LOCAL_MACHINE")


def _suits(setting: Setting | None, value: Any) -> bool:
    """Whether a value fits a setting's type and choices: a did-you-mean rename is a quick fix only
    then (renamed, a value that does not fit is a new error)."""
    if setting is None or setting.type == "section":
        return True
    if _expect_type(setting, value) is not None:
        return False
    return setting.type != "enum" or not setting.choices or setting.canonical_value(value) in setting.choices


# -- values of every registered setting ---------------------------------------------------------


def _expect_type(s: Setting, v: Any) -> str | None:
    """A short description of what is wrong with the type, or None."""
    return valuerules.expect_type(s, v)
