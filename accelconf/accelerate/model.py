"""The one model every format reads into and writes from: :class:`Config`.

A ``Config`` maps canonical setting paths (``"mixed_precision"``,
``"fsdp_config.fsdp_offload_params"``) to :class:`Entry` values that remember where each value
came from (a file line, an env var, a CLI flag, a Python kwarg). Building one from a YAML/JSON
document applies accelerate's own load-time normalization (``process_config``: legacy ``fp16``,
top-level ``dynamo_backend``) and resolves accepted alternative spellings (unprefixed
``fsdp_config`` keys, ``fp8_`` prefixes) to the registry's canonical key. Values are kept as
accelerate would read them; :func:`canonical` gives the comparable spelling.

Unknown keys are kept in ``Config.unknown`` so that nothing is dropped silently.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from accelconf.accelerate import registry
from accelconf.accelerate.registry import Setting
from accelconf.findings import Finding, Severity
from accelconf.records import Record
from accelconf.text.document import Document


class Entry(Record):
    """One setting's value and its origin.

    ``line``/``column`` are 1-based positions of the key in the source document (0 when the value
    did not come from a document). ``origin`` is a short human label: ``file``, ``env``, ``cli``,
    ``kwargs`` or ``default``; ``where`` says more (``config.yaml:12``, ``FSDP_VERSION``,
    ``--fsdp_version``).
    """

    _fields = ("path", "value", "setting", "written_key", "line", "column", "origin", "where")

    def __init__(
        self,
        path: str,
        value: Any,
        setting: Setting | None = None,
        written_key: str = "",
        line: int = 0,
        column: int = 0,
        origin: str = "file",
        where: str = "",
    ) -> None:
        self.path, self.value, self.setting, self.written_key = path, value, setting, written_key
        self.line, self.column, self.origin, self.where = line, column, origin, where


class Config(Record):
    """Canonical path -> :class:`Entry`, plus what could not be placed."""

    _fields = ("entries", "unknown", "notes", "sections", "source", "format")

    def __init__(
        self,
        entries: dict[str, Entry] | None = None,
        unknown: dict[str, Entry] | None = None,
        notes: list[Finding] | None = None,
        sections: set[str] | None = None,
        source: str = "",
        format: str = "",
    ) -> None:
        self.entries: dict[str, Entry] = {} if entries is None else entries
        self.unknown: dict[str, Entry] = {} if unknown is None else unknown  # written key path -> entry
        self.notes: list[Finding] = [] if notes is None else notes  # lossy or odd steps found while reading
        # nested sections written in the file, empty ones too
        self.sections: set[str] = set() if sections is None else sections
        self.source, self.format = source, format

    def note(
        self,
        message: str,
        severity: Severity = "info",
        *,
        rule: str = "convert.input",
        key: str = "",
        line: int = 0,
        column: int = 0,
    ) -> Finding:
        """Record what reading found about the input (1-based position; 0 when none) and return it."""
        f = Finding(rule, severity, message, key, line, column)
        self.notes.append(f)
        return f

    def __contains__(self, path: str) -> bool:
        return path in self.entries

    def get(self, path: str, default: Any = None) -> Any:
        e = self.entries.get(path)
        return default if e is None else e.value

    def set(self, path: str, value: Any, **kw: Any) -> Entry:
        section, _, key = path.rpartition(".")
        setting = registry.get(section, key)
        entry = Entry(path, value, setting, written_key=kw.pop("written_key", key), **kw)
        self.entries[path] = entry
        return entry

    def items(self) -> Iterator[tuple[str, Entry]]:
        return iter(self.entries.items())

    def section(self, name: str) -> dict[str, Any]:
        prefix = name + "."
        return {p[len(prefix) :]: e.value for p, e in self.entries.items() if p.startswith(prefix)}

    def as_dict(self) -> dict[str, Any]:
        """Nested plain dict in canonical spelling (top-level keys first, then sections)."""
        out: dict[str, Any] = {}
        for path, e in self.entries.items():
            if "." in path:
                sec, key = path.split(".", 1)
                out.setdefault(sec, {})[key] = e.value
            else:
                out[path] = e.value
        return out

    @property
    def distributed_type(self) -> Any:
        return self.get("distributed_type")

    def fsdp_version(self) -> int:
        v = self.get("fsdp_config.fsdp_version", 1)
        try:
            return int(v)
        except (TypeError, ValueError):
            return 1


def canonical(setting: Setting | None, value: Any) -> Any:
    """A comparable spelling of a value: enum case, legacy integers, bool-ish strings."""
    if setting is None:
        return value
    if setting.type in ("bool", "boolish") and isinstance(value, str):
        low = value.strip().lower()
        if low in registry.TRUE_WORDS:
            return True
        if low in registry.FALSE_WORDS:
            return False
    if setting.type == "int" and isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value)
    if setting.type == "float" and isinstance(value, (str, int)) and not isinstance(value, bool):
        try:
            return float(value)
        except ValueError:
            return value
    if setting.type == "classlist" and isinstance(value, str):
        return ",".join(p.strip() for p in value.split(",") if p.strip())
    return setting.canonical_value(value)


def _position(doc: Document | None, keypath: tuple[str, ...]) -> tuple[int, int]:
    if doc is None:
        return 0, 0
    return doc.position(keypath)


def from_data(data: Any, doc: Document | None = None, version: str | None = None, source: str = "") -> Config:
    """Build a Config from a loaded accelerate config (plain dict as accelerate reads it)."""
    cfg = Config(source=source or (doc.path if doc else ""), format=doc.format if doc else "")
    if not isinstance(data, dict):
        return cfg
    where = cfg.source

    def add(path: str, value: Any, setting: Setting | None, written: str, keypath: tuple[str, ...]) -> None:
        line, col = _position(doc, keypath)
        cfg.entries[path] = Entry(
            path, value, setting, written, line, col, "file", f"{where}:{line}" if line else where
        )

    # process_config: legacy fp16 and top-level dynamo_backend.
    for key, value in data.items():
        if not isinstance(key, str):
            line, col = _position(doc, (str(key),))
            cfg.unknown[str(key)] = Entry(str(key), value, None, str(key), line, col)
            continue
        if key == "fp16":
            if "mixed_precision" not in data and value:
                add("mixed_precision", "fp16", registry.get("", "mixed_precision"), key, (key,))
            continue
        if key == "dynamo_backend":
            if isinstance(value, str) and value.upper() != "NO":
                add("dynamo_config.dynamo_backend", value, registry.get("dynamo_config", "dynamo_backend"), key, (key,))
            continue
        setting = registry.get("", key)
        if setting is not None and setting.type == "section":
            if key == "dynamo_config" and "dynamo_backend" in data:
                continue  # replaced by the legacy key, as process_config does
            if isinstance(value, dict):
                cfg.sections.add(key)  # an empty section still counts as a key when accelerate loads the file
                for sub, subval in value.items():
                    subkey = str(sub)
                    s, how = registry.lookup(key, subkey, version)
                    if s is None or how == "alias-too-new":
                        line, col = _position(doc, (key, subkey))
                        cfg.unknown[f"{key}.{subkey}"] = Entry(f"{key}.{subkey}", subval, s, subkey, line, col)
                        continue
                    path = s.path
                    if path in cfg.entries:  # two spellings of one setting: the later one wins at launch
                        cfg.note(f"{key}.{subkey} repeats {path}", key=path)
                    add(path, subval, s, subkey, (key, subkey))
            elif value is None:
                continue
            else:
                line, col = _position(doc, (key,))
                cfg.unknown[key] = Entry(key, value, setting, key, line, col)
            continue
        if setting is None:
            line, col = _position(doc, (key,))
            cfg.unknown[key] = Entry(key, value, None, key, line, col)
            continue
        add(key, value, setting, key, (key,))
    return cfg


def from_document(doc: Document, version: str | None = None) -> Config:
    return from_data(doc.data, doc, version)


def config_of(data: dict[str, Any] | Config, accelerate_version: str | None = None) -> Config:
    """The one config model of a loaded accelerate config (a Config is returned as it is)."""
    if isinstance(data, Config):
        return data
    return from_data(data, version=registry.resolve_version(accelerate_version))


def value_reader(cfg: Config, accelerate_version: str | None) -> Callable[..., Any]:
    """``read(path, default)``: a value as accelerate reads it at that release (the registry's
    reading), ``default`` where it is unset or refused (validate reports a refused value)."""

    def read(path: str, default: Any = None) -> Any:
        e = cfg.entries.get(path)
        if e is None or e.setting is None:
            return default
        v = registry.read_value(e.setting, e.value, accelerate_version)
        return default if v is None or v is registry.REFUSED else v

    return read
