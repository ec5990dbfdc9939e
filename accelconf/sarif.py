"""SARIF 2.1.0 output (``--format sarif``) for GitHub code scanning and other SARIF viewers.

One run; ``tool.driver.rules`` is the rule catalogue (:mod:`accelconf.catalogue`), each result names
its rule by id and index. Artifact URIs are relative to the working directory (what code scanning
resolves against the repository root when accelconf runs there); a file that cannot be read is a
``parse-error`` result at the position the reader stopped.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any
from urllib.parse import quote

from accelconf import catalogue
from accelconf.findings import Finding

SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
LEVELS = {"error": "error", "warning": "warning", "info": "note"}


def artifact_uri(path: str, cwd: str | None = None) -> str:
    """A relative URI for ``path`` from the working directory (forward slashes, percent-encoded)."""
    if path in ("-", "<stdin>"):
        return "stdin"
    try:
        rel = os.path.relpath(os.path.abspath(path), cwd or os.getcwd())
    except ValueError:  # another drive on Windows: no relative path exists
        return Path(os.path.abspath(path)).as_uri()
    return quote(Path(rel).as_posix())


def rule_descriptor(r: catalogue.Rule) -> dict[str, Any]:
    return {
        "id": r.id,
        "name": "".join(p.capitalize() for p in r.id.replace(".", "-").split("-")),
        "shortDescription": {"text": r.summary},
        "fullDescription": {"text": r.why or r.summary},
        "helpUri": r.help_uri,
        "help": {"text": f"{r.summary} {r.why}".strip()},
        "defaultConfiguration": {"level": LEVELS[r.severity]},
        "properties": {"tags": [r.area], "fmtSafe": r.fmt_safe},
    }


def _region(f: Finding) -> dict[str, int] | None:
    if not f.line:
        return None  # about the whole file
    region = {"startLine": f.line, "startColumn": max(f.column, 1)}
    if f.end_line >= f.line and (f.end_line > f.line or f.end_column > region["startColumn"]):
        region.update(endLine=f.end_line, endColumn=f.end_column)
    return region


def result(f: Finding, path: str, index: dict[str, int]) -> dict[str, Any]:
    physical: dict[str, Any] = {"artifactLocation": {"uri": artifact_uri(f.path or path)}}
    region = _region(f)
    if region is not None:
        physical["region"] = region
    message = f.message + (f" (suggestion: {f.suggestion})" if f.suggestion else "")
    out: dict[str, Any] = {
        "ruleId": f.rule,
        "level": LEVELS[f.severity],
        "message": {"text": message},
        "locations": [{"physicalLocation": physical}],
    }
    if f.rule in index:
        out["ruleIndex"] = index[f.rule]
    return out


def sarif_log(files: Iterable[tuple[str, list[Finding], Any]], version: str) -> dict[str, Any]:
    """The SARIF log of ``(path, findings, read error or None)`` for each file."""
    rules = catalogue.all_rules()
    index = {r.id: i for i, r in enumerate(rules)}
    results = []
    for path, findings, error in files:
        if error is not None:
            findings = [Finding("parse-error", "error", error.message, "", error.line, error.column)]
        results += [result(f, path, index) for f in findings]
    driver = {
        "name": "accelconf",
        "version": version,
        "informationUri": catalogue.SITE + "/",
        "rules": [rule_descriptor(r) for r in rules],
    }
    return {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [{"tool": {"driver": driver}, "results": results}]}


def render_sarif(files: Iterable[tuple[str, list[Finding], Any]], version: str) -> str:
    return json.dumps(sarif_log(files, version), indent=2) + "\n"
