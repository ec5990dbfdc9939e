"""Titles for the repairs findings carry (``Finding.fix``), as an editor shows them in a menu.

Offsets in ``Finding.fix`` are character offsets into ``text``.
"""

from __future__ import annotations

from accelconf.findings import Finding


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
            return (
                f"Change {what} `{old}` to `{new}`"
                if finding.rule not in ("unknown-key", "unknown-nested-key")
                else f"Did you mean `{new}`? Rename `{old}`"
            )
    if finding.suggestion:
        return f"Fix: {finding.suggestion}"
    return f"Fix {finding.rule}"
