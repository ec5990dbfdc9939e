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
from typing import Literal

from accelconf.kinds import recognise
from accelconf.text.document import Document

Kind = Literal["accelerate", "deepspeed"]

# The one number of lines in which the modeline counts (server and documentation use this).
MODELINE_LINES = 5
_MODELINE = re.compile(r"^\s*(?:#|//)\s*accelconf:\s*(enable|disable)\b")


def modeline(text: str) -> Literal["enable", "disable"] | None:
    """The ``accelconf: enable|disable`` comment in the first :data:`MODELINE_LINES` lines, if any."""
    for line in text.lstrip("\ufeff").splitlines()[:MODELINE_LINES]:
        m = _MODELINE.match(line)
        if m is not None:
            return "enable" if m.group(1) == "enable" else "disable"
    return None


def document_kind(path: str, text: str, doc: Document | None = None) -> Kind | None:
    """``accelerate``, ``deepspeed`` or ``None`` (not a config accelconf knows), by content.

    The modeline decides first; then the recogniser of file kinds (:func:`accelconf.kinds.recognise`,
    the one ``validate`` asks): a DeepSpeed JSON, or an accelerate config (a top-level mapping with
    one of its markers among mostly accelerate's keys). A Trainer arguments file, a LLaMA-Factory
    YAML or anything else is left alone. ``path`` only tells YAML from JSON. Works on text that does
    not parse (from the top-level key lines).
    """
    mode = modeline(text)
    if mode == "disable":
        return None
    # Editors send only YAML and JSON documents: the name's other suffixes do not count here.
    path = path if path.lower().endswith((".json", ".yaml", ".yml")) else ""
    kind = recognise(text, path, doc).kind
    if kind in ("accelerate", "deepspeed"):
        return kind  # type: ignore[return-value]
    return "accelerate" if mode == "enable" else None
