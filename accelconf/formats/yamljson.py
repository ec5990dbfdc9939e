"""The accelerate config file (YAML or JSON): reader through the position-keeping loader, writer in
canonical spelling.

The reader applies accelerate's load-time normalization (:func:`accelconf.accelerate.model.from_document`).
The writer emits a clean file as ``accelerate config`` would: canonical keys, sorted, nested dicts
under their section, every string that YAML 1.1 would read as something else (``'no'``, ``'NO'``, ``'0,1'`` is fine,
``'1'`` is quoted) single-quoted, because accelerate reads files with PyYAML ``safe_load``. Keys accelerate would reject
or ignore are still written (they
are the user's) but reported.
"""

from __future__ import annotations

from typing import Any

from accelconf.accelerate import registry
from accelconf.accelerate.launch import accelerator_env_entries, resolve
from accelconf.accelerate.model import Config, Entry, from_data, from_document
from accelconf.findings import Finding
from accelconf.kinds import is_deepspeed
from accelconf.text.document import load_text
from accelconf.text.scalars import yaml_scalar


def read(text: str, *, path: str = "<text>", version: str | None = None, fmt: str = "yaml") -> Config:
    doc = load_text(text, path, "json" if fmt == "json" else ("yaml" if fmt == "yaml" else None))
    if doc.format == "json" and isinstance(doc.data, dict):
        if is_deepspeed(doc):
            return _from_deepspeed(doc, version)
    return from_document(doc, resolve(version))


def _from_deepspeed(doc: Any, version: str | None) -> Config:
    """A DeepSpeed JSON read as the accelerate ``deepspeed_config`` section it corresponds to; what
    has no accelerate key is a note (reported by ``convert``), never silently dropped."""
    # the DeepSpeed key mapping loads only when the text read is a DeepSpeed JSON
    from accelconf.accelerate.deepspeed_file import to_accelerate_section

    section, notes = to_accelerate_section(doc.data)
    data: dict[str, Any] = {"distributed_type": "DEEPSPEED"}
    mp = section.pop("mixed_precision", None)
    if mp is not None:
        data["mixed_precision"] = mp
    data["deepspeed_config"] = section
    cfg = from_data(data, None, resolve(version), source=doc.path)
    cfg.notes.extend(notes)
    return cfg


def _plain(value: Any) -> Any:
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    return value


def to_data(cfg: Config) -> tuple[dict[str, Any], list[Finding]]:
    findings: list[Finding] = []
    data: dict[str, Any] = {}
    conflicts = _file_conflicts(cfg)
    for e, arg in accelerator_env_entries(cfg):  # a file would hold it where it has no effect
        conflicts[e.path] = accelerator_env_lost(e, arg, "a config file")
    for path, e in cfg.items():
        if path.startswith("--"):
            continue
        if path in conflicts:
            findings.append(conflicts[path])
            continue
        if "." in path:
            sec, key = path.split(".", 1)
            data.setdefault(sec, {})[key] = _plain(e.value)
        else:
            data[path] = _plain(e.value)
    reported = {f.key for f in cfg.notes if f.severity != "info"}
    for path, e in cfg.unknown.items():
        if path.startswith("--") or e.origin in ("env", "cli", "kwargs"):
            # Only a file's own unknown keys are kept (they are the user's); anything else would
            # make accelerate refuse the file it is written into. A name the reader already
            # reported (a variable nothing reads) gets no second finding.
            if path in reported:
                continue
            findings.append(
                Finding("convert.lossy", "warning", f"`{path}` has no config-file key; dropped", path, e.line, e.column)
            )
            continue
        if "." in path:
            sec, key = path.split(".", 1)
            if isinstance(data.get(sec, {}), dict):
                data.setdefault(sec, {})[key] = _plain(e.value)
        else:
            data[path] = _plain(e.value)
        findings.append(
            Finding(
                "convert.unknown",
                "warning",
                f"`{path}` is not a setting accelerate knows; kept as written",
                path,
                e.line,
                e.column,
            )
        )
    if "distributed_type" not in data:
        data["distributed_type"] = "NO"
        findings.append(
            Finding("convert.default", "info", "no distributed_type in the input: written as 'NO'", "distributed_type")
        )
    data.setdefault("compute_environment", "LOCAL_MACHINE")
    if "num_processes" not in data and data.get("distributed_type") not in ("NO", None):
        findings.append(
            Finding(
                "convert.incomplete",
                "info",
                "the input does not say how many processes: add num_processes to the file or pass --num_processes at "
                "launch",
                "num_processes",
            )
        )
    return data, findings


def _file_conflicts(cfg: Config) -> dict[str, Finding]:
    """Settings that did not come from a config file and cannot be written beside
    ``deepspeed_config_file``: in a file, accelerate raises ValueError at training time when the
    JSON file and the file's own DeepSpeed keys or top-level ``mixed_precision`` are both given
    (``DeepSpeedPlugin._deepspeed_config_checks``; the launcher lists the file's keys in
    ``ACCELERATE_CONFIG_DS_FIELDS``). From an environment, flags or kwargs they are not such keys: they
    are left out of the file, with a finding (what accelconf writes must validate clean)."""
    if cfg.get("distributed_type") != "DEEPSPEED" or not cfg.get("deepspeed_config.deepspeed_config_file"):
        return {}
    out: dict[str, Finding] = {}
    paths = ["mixed_precision"] + [f"deepspeed_config.{k}" for k in registry.deepspeed_json_keys()]
    for path in paths:
        e = cfg.entries.get(path)
        if e is None or e.origin == "file":
            continue  # a file's own keys are the user's: validate reports a conflict there
        default = path == "mixed_precision" and str(e.value).lower() == "no"
        why = ("the launcher writes ACCELERATE_MIXED_PRECISION=no for every launch; " if default else "") + (
            f"`{path}` beside `deepspeed_config_file` in a config file makes accelerate raise ValueError at "
            "training time"
        )
        out[path] = Finding(
            "convert.lossy",
            "info" if default else "warning",
            f"{why}; not written (set it in the DeepSpeed JSON file)",
            path,
            e.line,
            e.column,
        )
    return out


def accelerator_env_lost(e: Entry, arg: str, holder: str) -> Finding:
    """The finding of a writer that cannot carry an :func:`~accelconf.accelerate.launch.accelerator_env_entries`
    entry: what is lost and the two places that can hold it. ``holder``: what the writer writes
    ("a config file", "a launch flag")."""
    var = e.setting.env if e.setting is not None and e.setting.env else e.written_key
    return Finding(
        "convert.lossy",
        "warning",
        f"{var}={e.value} is read by the training process under every distributed type, but {holder} holds "
        f"`{e.path}` only for DeepSpeed; not written: keep {var}={e.value} in the environment accelerate "
        f"launch runs in, or pass Accelerator({arg}={e.value})",
        e.path,
        e.line,
        e.column,
    )


def write(cfg: Config, *, version: str | None = None, fmt: str = "yaml", **_: Any) -> tuple[str, list[Finding]]:
    data, findings = to_data(cfg)
    if fmt == "json":
        import json  # json loads when a command writes or parses JSON, not on `to-env` of a YAML config

        return json.dumps(data, indent=2, sort_keys=True) + "\n", findings
    return dump_yaml(data), findings


def dump_yaml(data: dict[str, Any], indent: int = 0) -> str:
    """Block-style YAML, keys sorted, readable identically by PyYAML (YAML 1.1) and YAML 1.2 readers.
    A list or mapping inside a list (only in keys accelconf does not know) is written in flow style."""
    out: list[str] = []
    pad = " " * indent
    for key in sorted(data):
        value, name = data[key], yaml_scalar(key)
        if isinstance(value, dict):
            if not value:
                out.append(f"{pad}{name}: {{}}")
                continue
            out.append(f"{pad}{name}:")
            out.append(dump_yaml(value, indent + 2).rstrip("\n"))
        elif isinstance(value, list):
            if not value:
                out.append(f"{pad}{name}: []")
                continue
            out.append(f"{pad}{name}:")
            out.extend(f"{pad}- {_flow(v)}" for v in value)
        else:
            out.append(f"{pad}{name}: {yaml_scalar(value)}")
    return "\n".join(out) + "\n"


def _flow(value: Any) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(_flow(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{yaml_scalar(k, flow=True)}: {_flow(v)}" for k, v in sorted(value.items())) + "}"
    return yaml_scalar(value, flow=True)
