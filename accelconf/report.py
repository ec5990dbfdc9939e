"""Rendering findings for people and machines: ``text``, ``json``, ``github`` and ``sarif``.

Owns the output formats shared by ``validate``, ``check`` and the DeepSpeed validator, and the
exit-code policy. Colors are used only when the stream is a TTY and ``NO_COLOR`` is unset.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from typing import IO, Any

from accelconf import __version__
from accelconf.errors import InputError
from accelconf.findings import Finding, sort_findings
from accelconf.records import Record

FORMATS = ("text", "json", "github", "sarif")

_COLORS = {"error": "\033[31m", "warning": "\033[33m", "info": "\033[36m"}
_RESET = "\033[0m"
_BOLD = "\033[1m"


class FileResult(Record):
    _fields = ("path", "findings", "error", "document")
    _unshown = frozenset({"document"})

    def __init__(
        self, path: str, findings: list[Finding] | None = None, error: InputError | None = None, document: Any = None
    ) -> None:
        self.path = path
        self.findings: list[Finding] = [] if findings is None else findings
        self.error = error
        self.document = document  # the Document read (standard input is read once)

    @property
    def errors(self) -> int:
        return sum(1 for f in self.findings if f.severity == "error")

    @property
    def warnings(self) -> int:
        return sum(1 for f in self.findings if f.severity == "warning")


def use_color(stream: IO[str], choice: str = "auto") -> bool:
    if choice == "always":
        return True
    if choice == "never" or os.environ.get("NO_COLOR"):
        return False
    return bool(getattr(stream, "isatty", lambda: False)())


def exit_code(results: Iterable[FileResult], strict: bool = False) -> int:
    """The one exit-code rule of every command: 2 unreadable input, 1 an error finding (or a warning
    with ``--strict``), else 0."""
    code = 0
    for r in results:
        if r.error is not None:
            return 2
        if r.errors or (strict and r.warnings):
            code = 1
    return code


def location(path: str, line: int, column: int) -> str:
    """``FILE:LINE:COL``, or just ``FILE`` for a finding about the whole file (line 0: no position)."""
    return f"{path}:{line}:{column}" if line else path


def finding_line(f: Finding, path: str, color: bool = False) -> str:
    """One finding as ``FILE:LINE:COL: severity: message [rule]`` (``FILE: ...`` without a position)."""
    sev = f"{_COLORS[f.severity]}{f.severity}{_RESET}" if color else f.severity
    loc = location(f.path or path, f.line, f.column)
    if color:
        loc = f"{_BOLD}{loc}{_RESET}"
    return f"{loc}: {sev}: {f.message} [{f.rule}]"


def unique(findings: Iterable[Finding]) -> list[Finding]:
    """Sorted, each finding once (two steps reporting the same thing at the same place print one line)."""
    seen: set[tuple[str, str, str, int, int, str]] = set()
    out = []
    for f in sort_findings(findings):
        k = (f.path, f.rule, f.severity, f.line, f.column, f.message)
        if k not in seen:
            seen.add(k)
            out.append(f)
    return out


def finding_json(f: Finding) -> dict:
    """A finding for JSON output: a whole-file finding has null line and column."""
    d = f.to_json()
    if not f.line:
        d.update(line=None, column=None, end_line=None, end_column=None)
    return d


def render_text(results: list[FileResult], color: bool = False, summary: bool = True) -> str:
    lines: list[str] = []
    nerr = nwarn = ninfo = nbad = 0
    for r in results:
        if r.error is not None:
            nbad += 1
            e = r.error
            loc = location(r.path, e.line, e.column)
            sev = f"{_COLORS['error']}error{_RESET}" if color else "error"
            lines.append(f"{loc}: {sev}: {e.message} [parse]")
            continue
        for f in unique(r.findings):
            nerr += f.severity == "error"
            nwarn += f.severity == "warning"
            ninfo += f.severity == "info"
            text = finding_line(f, r.path, color)
            if f.suggestion:
                text += f"\n    suggestion: {f.suggestion}"
            lines.append(text)
    if summary and (len(results) > 1 or lines):
        parts = [
            f"{len(results)} file{'s' if len(results) != 1 else ''} checked",
            f"{nerr} error{'s' if nerr != 1 else ''}",
            f"{nwarn} warning{'s' if nwarn != 1 else ''}",
        ]
        if ninfo:
            parts.append(f"{ninfo} info")
        if nbad:
            parts.append(f"{nbad} unreadable")
        lines.append(", ".join(parts))
    return "\n".join(lines) + ("\n" if lines else "")


def findings_json(findings: Iterable[Finding], path: str) -> list[dict]:
    """Findings about ``path`` for JSON output, each once; one about another file names it (``file``)."""
    return [dict(finding_json(f), **({"file": f.path} if f.path and f.path != path else {})) for f in unique(findings)]


def render_json(results: list[FileResult], extra: dict | None = None) -> str:
    files = []
    for r in results:
        entry: dict = {"path": r.path, "findings": findings_json(r.findings, r.path)}
        if r.error is not None:
            entry["error"] = {
                "message": r.error.message,
                "line": r.error.line or None,
                "column": r.error.column or None,
            }
        files.append(entry)
    import json  # json loads when a command writes or parses JSON, not on `to-env` of a YAML config

    return json.dumps({"files": files, **(extra or {})}, indent=2, default=str) + "\n"


def _gh_escape(s: str) -> str:
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def render_github(results: list[FileResult]) -> str:
    out = []
    level = {"error": "error", "warning": "warning", "info": "notice"}
    for r in results:
        if r.error is not None:
            e = r.error
            pos = f",line={e.line},col={e.column or 1}" if e.line else ""
            out.append(f"::error file={r.path}{pos},title=parse::{_gh_escape(e.message)}")
            continue
        for f in unique(r.findings):
            msg = f.message + (f" (suggestion: {f.suggestion})" if f.suggestion else "")
            pos = f",line={f.line},col={f.column or 1}" if f.line else ""  # a whole-file finding: no position
            out.append(f"::{level[f.severity]} file={f.path or r.path}{pos},title={f.rule}::{_gh_escape(msg)}")
    return "\n".join(out) + ("\n" if out else "")


def render(
    results: list[FileResult],
    fmt: str = "text",
    stream: IO[str] | None = None,
    color: str = "auto",
    extra: dict | None = None,
) -> str:
    """Findings in a format; ``extra`` adds top-level members to the JSON form (e.g. the environment)."""
    stream = stream or sys.stdout
    if fmt == "json":
        return render_json(results, extra)
    if fmt == "github":
        return render_github(results)
    if fmt == "sarif":
        # the SARIF writer and the rule catalogue it describes load only for --format sarif
        from accelconf.sarif import render_sarif

        return render_sarif(((r.path, unique(r.findings), r.error) for r in results), __version__)
    return render_text(results, use_color(stream, color))


def add_output_options(parser) -> None:  # type: ignore[no-untyped-def]
    parser.add_argument("--format", choices=FORMATS, default="text", help="output format (default: text)")
    parser.add_argument(
        "--color", choices=("auto", "always", "never"), default="auto", help="colors (default: only on a TTY)"
    )
    parser.add_argument("--strict", action="store_true", help="exit 1 on warnings too")


# -- the JSON output contract -----------------------------------------------------------------------


def _obj(required: dict, optional: dict | None = None, closed: bool = True) -> dict:
    props = {**required, **(optional or {})}
    out: dict = {"type": "object", "required": sorted(required), "properties": props}
    if closed:
        out["additionalProperties"] = False
    return out


_NULL_INT = {"type": ["integer", "null"]}
_STR = {"type": "string"}


def output_schema(schema_id: str) -> dict:
    """The JSON Schema of every command's ``--format json`` output (``schemas/accelconf-output.schema.json``).

    ``$defs`` has one entry per output shape: ``report`` (validate, check: files with their findings or
    their error), ``diff``, ``explain``, ``env`` and ``fit`` (the strategy table). Finding and file objects
    are closed: a field is added here first, so scripts reading the output see every change in one place.
    ``--format sarif`` follows the SARIF 2.1.0 schema instead (:mod:`accelconf.sarif`)."""
    return {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "$id": schema_id,
        "title": "accelconf --format json output",
        "description": "What `accelconf validate|check|diff|explain|env|fit --format json` print. Pick the "
        "definition by command: report (validate, check), diff, explain, env, fit.",
        "oneOf": [{"$ref": f"#/$defs/{name}"} for name in ("report", "diff", "explain", "env", "fit")],
        "$defs": {
            **_report_defs(),
            "diff": {"type": "array", "items": {"$ref": "#/$defs/change"}},
            "change": _change_def(),
            **_explain_defs(),
            "env": _env_def(),
            **_fit_defs(),
        },
    }


def _report_defs() -> dict[str, Any]:
    """validate and check: files with their findings or their error."""
    finding = _obj(
        {
            "rule": _STR,
            "severity": {"enum": ["error", "warning", "info"]},
            "message": _STR,
            "key": _STR,
            "line": _NULL_INT,
            "column": _NULL_INT,
            "end_line": _NULL_INT,
            "end_column": _NULL_INT,
            "suggestion": {"type": ["string", "null"]},
        },
        {"file": {"type": "string", "description": "the file the finding is about, when not the one checked"}},
    )
    error = _obj({"message": _STR, "line": _NULL_INT, "column": _NULL_INT})
    file = _obj(
        {"path": _STR, "findings": {"type": "array", "items": {"$ref": "#/$defs/finding"}}},
        {"error": {"$ref": "#/$defs/error"}},
    )
    report = _obj(
        {"files": {"type": "array", "items": {"$ref": "#/$defs/file"}}},
        {"environment": {"$ref": "#/$defs/env"}, "memory": {"type": "array", "items": {"type": "object"}}},
        closed=False,
    )
    return {"finding": finding, "error": error, "file": file, "report": report}


def _change_def() -> dict[str, Any]:
    """One change of diff."""
    return _obj(
        {"key": _STR, "a": {}, "b": {}, "kind": _STR, "a_line": {"type": "integer"}, "b_line": {"type": "integer"}},
        {"note": _STR, "a_key": {"type": ["string", "null"]}, "b_key": {"type": ["string", "null"]}},
    )


def _explain_defs() -> dict[str, Any]:
    """explain: the settings a launch reads, per launch of a script."""
    row = _obj({"setting": _STR, "value": {}, "source": _STR, "where": _STR, "env": _STR, "note": _STR})
    settings = {"type": "array", "items": {"$ref": "#/$defs/explain_row"}}
    # a launch script with several launches: the first at the top, every one (with its line) in `launches`
    launch = _obj(
        {"line": {"type": "integer"}, "mode": _STR, "settings": settings, "torchrun": {"type": ["object", "null"]}}
    )
    explain = _obj(
        {
            "accelerate_version": _STR,
            "mode": _STR,
            "settings": settings,
            "torchrun": {"type": ["object", "null"]},
            "findings": {"type": "array", "items": {"$ref": "#/$defs/finding"}},
        },
        {"launches": {"type": "array", "items": launch}},
        closed=False,
    )
    return {"explain": explain, "explain_row": row}


def _env_def() -> dict[str, Any]:
    """env: the machine and its versions."""
    return _obj(
        {
            "python_version": _STR,
            "platform": _STR,
            "gpus": {"type": "array", "items": {"type": "object"}},
            "torch_version": {"type": ["string", "null"]},
            "accelerate_version": {"type": ["string", "null"]},
            "problems": {"type": "array"},
            "notes": {"type": "array"},
            "unknown": {"type": "array", "items": _STR},
        },
        closed=False,
    )


def _fit_defs() -> dict[str, Any]:
    """fit: the strategy table."""
    fit_row = _obj(
        {
            "strategy": _STR,
            "kind": _STR,
            "activation_checkpointing": {"type": "boolean"},
            "offload": {"type": "boolean"},
            "per_gpu_bytes": {"type": "integer"},
            "host_ram_per_node_bytes": {"type": "integer"},
            "gpu_fraction": {"type": ["number", "null"]},
            "host_fraction": {"type": ["number", "null"]},
            "verdict": {"enum": ["fits", "tight", "does not fit", "unknown"]},
            "comm_cost": {"type": "number"},
            "estimate": {"type": "object"},
        }
    )
    fit = _obj(
        {
            "model": {"type": "object"},
            "gpu": {"type": ["string", "null"]},
            "gpu_memory_bytes": _NULL_INT,
            "host_ram_bytes": _NULL_INT,
            "gpus_per_node": {"type": "integer"},
            "nodes": {"type": "integer"},
            "seq_len": _NULL_INT,
            "micro_batch": _NULL_INT,
            "comm_cost_model": _STR,
            "rows": {"type": "array", "items": {"$ref": "#/$defs/fit_row"}},
            "cheapest_that_fits": {"type": ["string", "null"]},
            "notes": {"type": "array", "items": _STR},
        },
        {"written": {"type": ["string", "null"]}},
    )
    return {"fit": fit, "fit_row": fit_row}
