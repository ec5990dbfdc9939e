"""Validation of accelerate config files: schema-level checks and accelerate's semantic rules.

Each rule is a small function ``(ctx) -> None`` registered in ``RULES`` with the ids it emits. They read
the parsed :class:`~accelconf.text.document.Document` (for positions and how values were written) and
the normalized :class:`~accelconf.accelerate.model.Config`, and know the accelerate version being targeted.

Severities: ``error`` means accelerate would fail, or silently do something other than what is
written; ``warning`` means the setting has no effect or is risky; ``info`` is a remark. Findings
carry text edits (``Finding.fix``) where a repair is mechanical; ``fmt`` and the language server's
quick fixes use them. DeepSpeed JSON is validated by :mod:`accelconf.deepspeed`.

The rules live in one module per topic (``parse``, ``keys``, ``toplevel``, ``values``, ``effects``,
``fsdp``, ``deepspeed``, ``features``, ``processes``, ``parallelism``, ``refused``); they register in
that order when this package is imported, and ``refused`` runs last. The value rules themselves are
functions of (setting, entry, release) in ``valuerules``, which the YAML rules and
:func:`accelconf.formats.value_findings` (env, flags, kwargs) share.
"""

from __future__ import annotations

from collections.abc import Iterable

from accelconf.accelerate import registry
from accelconf.accelerate.model import Config, from_document

# The rule modules, in the order their rules run (importing one registers its rules): the order is
# the point, so the import sorter leaves it alone.
# isort: off
from accelconf.accelerate.validate import (  # noqa: F401
    parse,
    keys,
    toplevel,
    values,
    effects,
    fsdp,
    deepspeed,
    features,
    processes,
    parallelism,
    refused,
)

# isort: on
from accelconf.accelerate.validate.context import (  # noqa: F401  (the package's public names)
    BOOL_WORDS,
    COMMON_MISTAKES,
    RULES,
    UNREAD_ON_FSDP2,
    Context,
    Rule,
    did_you_mean,
    has_no_effect,
    rule,
    scalar_text,
    section_unused,
)
from accelconf.accelerate.validate.processes import (  # noqa: F401
    TORCHRUN_TYPES,
    fitting_processes,
    machine_rank_outside,
    null_counts,
    quoted_counts,
)
from accelconf.findings import Finding, sort_findings
from accelconf.text.document import Document

# -- entry points --------------------------------------------------------------------------------


def validate_document(
    doc: Document,
    *,
    accelerate_version: str | None = None,
    disabled: Iterable[str] = (),
    cfg: Config | None = None,
) -> list[Finding]:
    """Every finding for one accelerate config document (already parsed). ``cfg``: the document's
    Config read at the resolved ``accelerate_version`` (:func:`accelconf.api.check_document` reads it
    once for validate and the environment checks); else it is read here."""
    version = registry.resolve_version(accelerate_version)
    data = doc.data
    if doc.root is None or data is None:
        return [
            Finding(
                "empty",
                "error",
                "the document is empty: accelerate fails to load it ('NoneType' object has no attribute 'get')",
                "",
                1,
                1,
            )
        ]
    if not isinstance(data, dict):
        return [
            Finding(
                "not-a-mapping",
                "error",
                f"an accelerate config must be a mapping of keys to values, not a {type(data).__name__}",
                "",
                1,
                1,
            )
        ]
    ctx = Context(doc, cfg if cfg is not None else from_document(doc, version), version)
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
