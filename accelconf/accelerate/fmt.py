"""``fmt``: normalize spelling to what accelerate writes itself, touching nothing else.

Normalizations are text edits on the original document (character offsets), so comments, key
order, quoting style and line endings outside the edited spans are kept byte for byte, and a
canonical file comes back byte-identical. The edits come from validation findings that carry a
mechanical fix (:mod:`accelconf.accelerate.validate`), filtered to those that keep what accelerate launches
the same, or that repair a value accelerate would crash on; plus two structural migrations that
accelerate itself performs at load time (legacy ``fp16`` and top-level ``dynamo_backend``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from accelconf import catalogue, releases
from accelconf.accelerate import registry
from accelconf.accelerate.validate import validate_document
from accelconf.text.document import Document, load_text

Edit = tuple[int, int, str]


def _safe_rules() -> frozenset[str]:
    """Rules whose fixes keep the launch identical (or repair a crash): the catalogue's fmt_safe.
    yaml11-scalar is not one: quoting `on` changes the value accelerate reads."""
    return frozenset(r.id for r in catalogue.all_rules() if r.fmt_safe)


@dataclass
class FmtResult:
    text: str
    changes: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.changes)


def _value_exists(key: str, value: object, version: str) -> bool:
    """Whether the value a fix writes for the top-level ``key`` exists in that release (the registry's enum lives)."""
    setting = registry.get("", key)
    return setting is not None and registry.enum_exists(setting, value, version)


def fmt_edits(doc: Document, version: str | None = None) -> list[tuple[Edit, str]]:
    """The normalization edits for a parsed accelerate config, each with a one-line reason."""
    version = registry.resolve_version(version)
    if not isinstance(doc.data, dict):
        return []
    out: list[tuple[Edit, str]] = []
    safe_rules = _safe_rules()
    for f in validate_document(doc, accelerate_version=version):
        if not f.fix:
            continue
        safe = f.rule in safe_rules or (f.rule == "invalid-type" and f.key == "gpu_ids")
        if (
            f.rule == "legacy-value"
            and f.key.endswith("fsdp_sharding_strategy")
            and releases.has(version, "sharding-strategy-int")
        ):
            safe = False  # the release reads only integers
        if (
            f.rule == "legacy-value"
            and f.key == "distributed_type"
            and not _value_exists("distributed_type", f.suggestion, version)
        ):
            safe = False  # the new name (XLA for TPU) does not exist in that release yet
        if safe:
            for e in f.fix:
                out.append((e, f"{f.key}: {f.message}"))
    out.extend(_structural(doc))
    return _non_overlapping(out)


def _structural(doc: Document) -> list[tuple[Edit, str]]:
    data = doc.data
    out: list[tuple[Edit, str]] = []
    if doc.format != "yaml" or doc.root is None or doc.root.flow:
        return out
    nl = doc.newline
    k = doc.key(("fp16",))
    v = doc.node(("fp16",))
    if (
        k is not None
        and v is not None
        and "mixed_precision" not in data
        and data.get("fp16") is True
        and v.kind == "scalar"
    ):
        out.append(((k.start, v.end, "mixed_precision: fp16"), "fp16: legacy key, written as mixed_precision: fp16"))
    k = doc.key(("dynamo_backend",))
    v = doc.node(("dynamo_backend",))
    if (
        k is not None
        and v is not None
        and "dynamo_config" not in data
        and v.kind == "scalar"
        and isinstance(v.value, str)
    ):
        indent = " " * (k.col + 2)
        if v.value.upper() == "NO":
            new = "dynamo_config: {}"
        else:
            new = f"dynamo_config:{nl}{indent}dynamo_backend: {v.value.upper()}"
        out.append(((k.start, v.end, new), "dynamo_backend: legacy top-level key, moved into dynamo_config"))
    return out


def _non_overlapping(edits: list[tuple[Edit, str]]) -> list[tuple[Edit, str]]:
    edits = sorted(edits, key=lambda e: (e[0][0], e[0][1]))
    out: list[tuple[Edit, str]] = []
    last_end = -1
    for e in edits:
        if e[0][0] < last_end:
            continue
        if out and out[-1][0] == e[0]:
            continue
        out.append(e)
        last_end = e[0][1]
    return out


def apply_edits(text: str, edits: list[Edit]) -> str:
    """Apply non-overlapping edits. When an edit on one line is followed by an inline comment, the
    spaces before the ``#`` absorb the change in length, so aligned comments stay aligned."""
    for start, end, repl in sorted(edits, key=lambda e: e[0], reverse=True):
        delta = len(repl) - (end - start)
        if delta and "\n" not in repl and "\n" not in text[start:end]:
            i = end
            while i < len(text) and text[i] == " ":
                i += 1
            spaces = i - end
            if spaces and i < len(text) and text[i] == "#":
                keep = max(1, spaces - delta)
                text = text[:start] + repl + " " * keep + text[i:]
                continue
        text = text[:start] + repl + text[end:]
    return text


def format_document(doc: Document, version: str | None = None) -> FmtResult:
    edits = fmt_edits(doc, version)
    if not edits:
        return FmtResult(doc.text)
    text = apply_edits(doc.text, [e for e, _ in edits])
    return FmtResult(realign_comments(doc.text, text) if doc.format == "yaml" else text, [why for _, why in edits])


def _comment_column(line: str) -> int | None:
    """0-based column of the ``#`` of an inline comment after content (outside quotes), else None."""
    quote = ""
    for i, c in enumerate(line):
        if quote:
            if c == quote:
                quote = ""
        elif c in "'\"" and (i == 0 or line[i - 1] in " :[{,-"):
            quote = c
        elif c == "#" and i and line[i - 1] in " \t":
            return i if line[:i].strip() else None
    return None


def realign_comments(before: str, after: str) -> str:
    """Inline comments that were aligned in ``before`` (consecutive commented lines at one column)
    are aligned in ``after`` too: when an edit pushed one of them further right (a value that grew by
    more than the spaces before its ``#``), the others of its group move with it. Only spaces before
    ``#`` change, and only in a group an edit moved. Lines must correspond one to one."""
    old_lines, new_lines = before.split("\n"), after.split("\n")
    if len(old_lines) != len(new_lines):
        return after
    groups: list[list[int]] = []
    last_col: int | None = None
    for i, line in enumerate(old_lines):
        col = _comment_column(line)
        if col is None:
            if not line.strip():
                last_col = None  # a blank line ends a group
            continue
        if groups and col == last_col:
            groups[-1].append(i)
        else:
            groups.append([i])
        last_col = col
    for group in groups:
        if len(group) < 2:
            continue
        cols = [_comment_column(new_lines[i]) for i in group]
        if None in cols or len(set(cols)) == 1:
            continue
        target = max(c for c in cols if c is not None)
        for i, c in zip(group, cols):
            assert c is not None
            new_lines[i] = new_lines[i][:c] + " " * (target - c) + new_lines[i][c:]
    return "\n".join(new_lines)


def format_text(text: str, path: str = "<text>", version: str | None = None) -> str:
    """Normalized text (raises InputError on unparseable input). Idempotent."""
    doc = load_text(text, path)
    if doc.root is None:
        return text
    return format_document(doc, version).text
