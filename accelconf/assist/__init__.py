"""Editor help without editor types: which documents are configs, where the cursor is, what may be
typed there, what a key means, the outline, quick-fix titles.

One module per question: :mod:`.detect` (:func:`document_kind`, by content), :mod:`.cursor`
(:func:`context_at`), :mod:`.complete`, :mod:`.hover`, :mod:`.symbols`, :mod:`.fixes`, and
:mod:`.trainer` (completion and hover for Trainer / TRL arguments and ``fsdp_config``). Everything
is derived from the settings registry (:mod:`accelconf.accelerate.registry`), DeepSpeed's key
table (:mod:`accelconf.deepspeed`) and the transformers releases data (:mod:`accelconf.trainer`);
no rule lives here. The language server (``accelconf_lsp``)
only converts these values to protocol types.

Positions: every ``line`` and ``col`` here is 0-based and counts characters (code points), as
:class:`accelconf.text.document.Node` does; converting to the protocol's UTF-16 or UTF-8 units is the
server's job.
"""

from __future__ import annotations

from accelconf.assist.complete import Candidate, complete
from accelconf.assist.cursor import Part, Where, context_at
from accelconf.assist.detect import MODELINE_LINES, Kind, document_kind, modeline
from accelconf.assist.fixes import fix_title
from accelconf.assist.hover import hover, setting_markdown, yaml_scalar
from accelconf.assist.symbols import Symbol, symbols

__all__ = [
    "MODELINE_LINES",
    "Candidate",
    "Kind",
    "Part",
    "Symbol",
    "Where",
    "complete",
    "context_at",
    "document_kind",
    "fix_title",
    "hover",
    "modeline",
    "setting_markdown",
    "symbols",
    "yaml_scalar",
]
