"""Which documents are accelconf's: an accelerate config, a DeepSpeed JSON, or neither.

Editors send every YAML and JSON document to the language server; :func:`document_kind` decides by
content, never by file name, so a GitHub workflow named ``accelerate-tests.yml`` or a results file
named ``zero_shot_results.json`` is left alone while a ``train.yaml`` holding an accelerate config
is checked. A comment ``# accelconf: enable`` / ``# accelconf: disable`` (``//`` in JSONC) in the
first :data:`MODELINE_LINES` lines overrides the decision; the editor clients in ``editors/`` do
not look at it, the server alone does.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from accelconf.accelerate import registry
from accelconf.errors import InputError
from accelconf.text.document import Document, load_text, sniff_format

Kind = Literal["accelerate", "deepspeed"]

# The one number of lines in which the modeline counts (server and documentation use this).
MODELINE_LINES = 5
# Top-level keys only an accelerate config has (ClusterConfig in accelerate/commands/config/
# config_args.py): the identity of the file, or one of its sections.
ACCELERATE_MARKERS = ("compute_environment", "distributed_type", "fsdp_config", "deepspeed_config",
                      "megatron_lm_config", "dynamo_config", "fp8_config", "parallelism_config")
_MODELINE = re.compile(r"^\s*(?:#|//)\s*accelconf:\s*(enable|disable)\b")
_YAML_TOP_KEY = re.compile(r"""^(['"]?)([A-Za-z_][\w.-]*)\1\s*:(?=\s|$)""", re.M)
_JSON_MARKER = re.compile(r'"(?:%s)"\s*:' % "|".join(ACCELERATE_MARKERS))


def modeline(text: str) -> Literal["enable", "disable"] | None:
    """The ``accelconf: enable|disable`` comment in the first :data:`MODELINE_LINES` lines, if any."""
    for line in text.lstrip("\ufeff").splitlines()[:MODELINE_LINES]:
        m = _MODELINE.match(line)
        if m is not None:
            return "enable" if m.group(1) == "enable" else "disable"
    return None


def document_kind(path: str, text: str, doc: Document | None = None) -> Kind | None:
    """``accelerate``, ``deepspeed`` or ``None`` (not a config accelconf knows), by content.

    The modeline decides first; then a DeepSpeed JSON (DeepSpeed's detector); then an accelerate
    config: a top-level mapping with at least one of :data:`ACCELERATE_MARKERS` whose top-level
    keys are mostly accelerate's. ``path`` only tells YAML from JSON. Works on text that does
    not parse (from the top-level key lines).
    """
    mode = modeline(text)
    if mode == "disable":
        return None
    fmt = sniff_format(text, path)
    if doc is None:
        try:
            doc = load_text(text, path or "<text>", fmt)
        except InputError:
            doc = None
    if fmt == "json" and _is_deepspeed_json(text, doc):
        return "deepspeed"
    if _is_accelerate(fmt, text, doc):
        return "accelerate"
    return "accelerate" if mode == "enable" else None


def _is_deepspeed_json(text: str, doc: Document | None) -> bool:
    from accelconf.deepspeed import is_deepspeed

    if doc is not None:
        return bool(is_deepspeed(doc))
    # Text that does not parse (half-typed, or a template with placeholders).
    from accelconf.deepspeed import is_deepspeed_text

    return is_deepspeed_text(text)


def _top_keys(fmt: str, text: str, doc: Document | None) -> list[str] | None:
    if doc is not None:
        data: Any = doc.data
        return [str(k) for k in data] if isinstance(data, dict) else None
    if fmt == "yaml":
        return [m.group(2) for m in _YAML_TOP_KEY.finditer(text)]
    # Unparsable JSON: a marker key anywhere stands for the top level.
    return [m.group(0).split('"')[1] for m in _JSON_MARKER.finditer(text)]


def _is_accelerate(fmt: str, text: str, doc: Document | None) -> bool:
    keys = _top_keys(fmt, text, doc)
    if not keys or not any(k in ACCELERATE_MARKERS for k in keys):
        return False
    known = sum(1 for k in keys if k in registry.SECTIONS or registry.lookup("", k)[0] is not None)
    return known * 2 >= len(keys)
