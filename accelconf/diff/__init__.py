"""Semantic diff: what two configs mean differently for one accelerate version.

This module owns comparing two :class:`~accelconf.accelerate.model.Config` values (:func:`diff`), two
DeepSpeed JSON documents (:func:`diff_deepspeed`) and an accelerate config against a DeepSpeed
JSON file on the settings they share (:func:`diff_accelerate_deepspeed`). Reading files is left to
:mod:`accelconf.formats` (or :mod:`accelconf.text.document` when that is not installed), spellings to
:func:`accelconf.accelerate.model.canonical`, and printing to :mod:`accelconf.commands.diff`.

What "the same meaning" is here, for the version asked (``--accelerate-version``, else the
installed accelerate, else the newest known):

* key order, quoting and comments never matter; legacy spellings (``fp16: true``, top-level
  ``dynamo_backend``, unprefixed ``fsdp_config`` keys, ``fsdp_sharding_strategy: 1``, enum case)
  are compared in their canonical spelling;
* an absent key takes the value ``accelerate launch`` gives it: the launch flag default, or,
  where the launcher exports nothing, the plugin default (registry ``launcher_default``, then
  ``plugin_default``). This models the path a config file takes through ``accelerate launch``,
  not a bare ``python train.py``, where several FSDP defaults differ;
* a key that has no effect in that version (unknown to it, never exported, ignored in a file, not
  read by the FSDP version in use, or in a section neither side uses, such as ``fsdp_config``
  under ``distributed_type: MULTI_GPU``) is listed in ``DiffResult.ignored``, not as a change;
* FSDP1 ``fsdp_sharding_strategy`` and FSDP2 ``fsdp_reshard_after_forward`` are one setting seen
  through two versions: FULL_SHARD corresponds to ``true``, SHARD_GRAD_OP to ``false``
  (``accelerate to-fsdp2``); other pairs are one change that shows both spellings;
* a setting one side's format cannot express (an env set has no ``num_processes``) is a
  ``not_comparable`` entry, which does not make the configs different.

Line numbers in :class:`Change` are 1-based; 0 means the value did not come from a line
(a default, an env var, a flag).
"""

from __future__ import annotations

import fnmatch
import functools
import math
import os
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any, Iterable, Literal

from accelconf.accelerate import registry
from accelconf.accelerate.model import Config, Entry, canonical
from accelconf.accelerate.registry import Setting
from accelconf.deepspeed import accelerate as _ds_accelerate
from accelconf.deepspeed import keys as _ds_keys

Kind = Literal["changed", "added", "removed", "not_comparable"]
KINDS: tuple[str, ...] = ("changed", "added", "removed", "not_comparable")

__all__ = [
    "Change",
    "DiffResult",
    "SHARED_WITH_DEEPSPEED",
    "Side",
    "deepspeed_config",
    "diff",
    "diff_accelerate_deepspeed",
    "diff_deepspeed",
    "diff_files",
    "diff_sides",
    "effective_default",
    "is_deepspeed_data",
    "read_side",
]


@dataclass(frozen=True)
class Change:
    """One difference in meaning.

    ``a``/``b`` are the values in canonical spelling (the effective default where a side does not
    set the key, ``None`` where there is none). ``kind``: ``changed`` (both sides set it),
    ``added`` (only B sets it), ``removed`` (only A sets it), ``not_comparable`` (one side's
    format cannot express it). ``a_key``/``b_key`` are set when the two sides spell one setting
    with different keys (FSDP1 vs FSDP2).
    """

    key: str
    a: Any
    b: Any
    kind: Kind
    a_line: int = 0
    b_line: int = 0
    a_where: str = ""
    b_where: str = ""
    note: str = ""
    a_key: str = ""
    b_key: str = ""

    @property
    def section(self) -> str:
        """The part of the key before the first dot (``""`` for top-level keys)."""
        return self.key.split(".", 1)[0] if "." in self.key else ""

    def mirrored(self) -> "Change":
        """The same change seen from the other side (A and B swapped)."""
        kind: Kind = {"added": "removed", "removed": "added"}.get(self.kind, self.kind)  # type: ignore[assignment]
        return Change(self.key, self.b, self.a, kind, self.b_line, self.a_line, self.b_where, self.a_where,
                      _mirror_note(self.note), self.b_key, self.a_key)

    def to_json(self) -> dict[str, Any]:
        out = {"key": self.key, "a": _jsonable(self.a), "b": _jsonable(self.b), "kind": self.kind,
               "a_line": self.a_line, "b_line": self.b_line}
        if self.note:
            out["note"] = self.note
        if self.a_key or self.b_key:
            out["a_key"], out["b_key"] = self.a_key, self.b_key
        return out


@dataclass
class DiffResult:
    """Every change, the settings that differ without effect, and notes on consequences."""

    changes: list[Change] = field(default_factory=list)
    ignored: list[Change] = field(default_factory=list)  # differ as written, no effect in this version
    notes: list[str] = field(default_factory=list)  # batch size, sharding, precision
    a_source: str = ""
    b_source: str = ""
    version: str = ""
    mode: str = "accelerate"  # accelerate | deepspeed | accelerate-deepspeed

    @property
    def differences(self) -> list[Change]:
        """The changes that make the configs different (everything but ``not_comparable``)."""
        return [c for c in self.changes if c.kind != "not_comparable"]

    @property
    def not_comparable(self) -> list[Change]:
        return [c for c in self.changes if c.kind == "not_comparable"]

    @property
    def equivalent(self) -> bool:
        return not self.differences

    def to_json(self) -> list[dict[str, Any]]:
        return [c.to_json() for c in self.changes]


# -- sides --------------------------------------------------------------------------------------

FILE_FORMATS = ("", "yaml", "json")

# Sections that act only with a distributed type (or precision); a change in an inactive section
# is still listed, with a note that it has no effect on either side.
_SECTION_NEEDS: dict[str, tuple[str, str]] = {
    "fsdp_config": ("distributed_type", "FSDP"),
    "deepspeed_config": ("distributed_type", "DEEPSPEED"),
    "megatron_lm_config": ("distributed_type", "MEGATRON_LM"),
    "mpirun_config": ("distributed_type", "MULTI_CPU"),
    "fp8_config": ("mixed_precision", "fp8"),
}

# accelerate to-fsdp2: FSDP1 sharding strategy -> FSDP2 reshard_after_forward.
TO_FSDP2: dict[str, bool] = registry.FSDP2_RESHARD_OF_STRATEGY
_EXACT_FSDP2 = ("FULL_SHARD", "SHARD_GRAD_OP")  # the pairs that mean the same thing
_STRATEGY = "fsdp_config.fsdp_sharding_strategy"
_RESHARD = "fsdp_config.fsdp_reshard_after_forward"


def effective_default(setting: Setting, version: str, cfg: Config | None = None) -> Any:
    """The value ``accelerate launch`` (that version) gives a setting the config does not set.

    The launch flag default when the launcher exports one, else the plugin default (what the
    training process uses when no env var arrives). ``num_processes`` is 1 for
    ``distributed_type: 'NO'`` (``process_config``); ``fsdp_state_dict_type`` is FULL_STATE_DICT
    under FSDP1 and SHARDED_STATE_DICT under FSDP2.
    """
    path = setting.path
    if setting.older_launcher_defaults:
        return canonical(setting, setting.launcher_default_for(version))
    if path == "num_processes":
        return 1 if cfg is not None and cfg.get("distributed_type") == "NO" else None
    if path == "fsdp_config.fsdp_state_dict_type":
        return "SHARDED_STATE_DICT" if cfg is not None and _fsdp_version(cfg, version) == 2 else "FULL_STATE_DICT"
    if path == "deepspeed_config.zero3_init_flag":
        return cfg is not None and canonical(registry.get("deepspeed_config", "zero_stage"), cfg.get("deepspeed_config.zero_stage", 2)) == 3
    if setting.launcher_default is not None:
        return setting.canonical_value(setting.launcher_default) if not isinstance(setting.launcher_default, tuple) else list(setting.launcher_default)
    if setting.plugin_default is not None:
        value = setting.plugin_default
        return list(value) if isinstance(value, tuple) else canonical(setting, value)
    return None


_BOOL = Setting("", "", "bool", "")  # to canonicalize the items of a list of booleans


def _canon(setting: Setting | None, value: Any) -> Any:
    """:func:`accelconf.accelerate.model.canonical`, plus what the env and flag spellings add: digit strings
    for enums with legacy integers (``FSDP_BACKWARD_PREFETCH=1``) and lists of booleans written as
    a tuple or its text (``(false, false, false)``)."""
    if setting is None:
        return value
    if isinstance(value, str) and value.strip().isdigit() and any(isinstance(k, int) for k, _ in setting.legacy_values):
        value = int(value.strip())
    if setting.type == "list" and isinstance(setting.launcher_default, tuple):
        if isinstance(value, str) and value.strip()[:1] in "([":
            value = [p.strip() for p in value.strip()[1:-1].split(",") if p.strip()]
        if isinstance(value, (list, tuple)):
            return [canonical(_BOOL, v) for v in value]
    return canonical(setting, value)


def _fsdp_version(cfg: Config, version: str | None = None) -> int:
    """The FSDP version a config runs: 1 when absent, and always 1 before accelerate 1.6."""
    setting = registry.get("fsdp_config", "fsdp_version")
    if version is not None and setting is not None and not setting.exists_in(version):
        return 1
    return cfg.fsdp_version() if cfg.get("fsdp_config.fsdp_version") is not None else 1


@lru_cache(maxsize=None)
def _formats_can_express() -> Any:
    try:  # the formats package knows best, when it has an opinion
        from accelconf.formats import can_express  # type: ignore[attr-defined]
    except ImportError:
        return None
    return can_express


def _can_express(setting: Setting, fmt: str) -> bool:
    """Whether a format has a spelling for a setting (files have one for every setting)."""
    can_express = _formats_can_express()
    if can_express is not None:
        try:
            return bool(can_express(setting, fmt))
        except Exception:  # noqa: BLE001 - fall back to the registry's own columns
            pass
    if fmt in FILE_FORMATS or fmt == "yaml":
        return True
    if fmt == "env":
        return setting.env is not None
    if fmt == "cli":
        return setting.flag is not None
    if fmt == "kwargs":
        return setting.plugin is not None
    return True


@dataclass
class _Value:
    state: Literal["set", "default", "na", "inactive", "ignored"]
    value: Any = None  # canonical
    raw: Any = None
    entry: Entry | None = None
    why: str = ""  # why a value has no effect, or cannot be expressed
    loc: str = ""  # where a set value comes from: ``file:line`` (and the env var or flag)


class _Side:
    def __init__(self, cfg: Config, version: str, defaults: dict[str, Any] | None = None,
                 expresses: frozenset[str] | None = None) -> None:
        self.cfg = cfg
        self.version = version
        self.fmt = cfg.format or ""
        self.fsdp = _fsdp_version(cfg, version)
        self.defaults = defaults or {}  # path -> default, where this side's defaults are not accelerate's
        self.expresses = expresses  # the paths this side can express, when not every path
        self.ds: dict[str, Any] | None = None  # the flattened DeepSpeed JSON this side came from

    def default(self, setting: Setting) -> Any:
        if setting.path in self.defaults:
            return self.defaults[setting.path]
        return effective_default(setting, self.version, self.cfg)

    def can_express(self, setting: Setting) -> bool:
        if self.expresses is not None:
            return setting.path in self.expresses
        return _can_express(setting, self.fmt)

    def is_file(self) -> bool:
        return self.fmt in FILE_FORMATS

    def value(self, setting: Setting) -> _Value:
        path = setting.path
        entry = self.cfg.entries.get(path)
        raw = entry.value if entry is not None else None
        if isinstance(raw, str) and raw in ("None", "none") and setting.type in ("int", "float"):
            raw = None  # how the launcher writes an unset number into the environment
        why = self._no_effect(setting)
        if why:
            state = "inactive" if why.startswith("FSDP") else "ignored"
            return _Value(state, _canon(setting, raw) if entry is not None else None, raw, entry, why)  # type: ignore[arg-type]
        if entry is None or raw is None or (raw in ([], "") and effective_default(setting, self.version, self.cfg) is None):
            if entry is None and not self.can_express(setting):
                return _Value("na", None, None, None, f"{self.fmt or 'this format'} cannot express it")
            return _Value("default", self.default(setting), None, entry)
        return _Value("set", _canon(setting, raw), raw, entry, loc=self.where(entry))

    def where(self, entry: Entry) -> str:
        """``file:line`` of an entry, with the env var or flag name when that is how it was written."""
        src = self.cfg.source
        if not entry.line or not src or (entry.where and entry.where.startswith(f"{src}:")):
            return entry.where or entry.origin
        loc = f"{src}:{entry.line}"
        return f"{loc} {entry.where}" if entry.where and entry.where != src else loc

    def _no_effect(self, setting: Setting) -> str:
        if not setting.exists_in(self.version):
            return f"not read by accelerate {self.version}"
        if setting.lost:
            return "never reaches the training process"
        if setting.file_ignored and self.is_file():
            return "ignored in a config file (only the launch flag applies)"
        if setting.section == "fsdp_config":
            if self.fsdp not in setting.fsdp_versions:
                return f"FSDP{self.fsdp} does not read it"
            if setting.key == "fsdp_reshard_after_forward" and self.fsdp == 1:
                return "FSDP1 does not read it (it reads fsdp_sharding_strategy)"
        return ""


# -- the accelerate diff ------------------------------------------------------------------------

def _order() -> dict[str, int]:
    return {s.path: i for i, s in enumerate(registry.SETTINGS)}


def _matches(path: str, patterns: Iterable[str]) -> bool:
    key = path.rsplit(".", 1)[-1]
    section = path.split(".", 1)[0] if "." in path else ""
    for p in patterns:
        if p in (path, key, section) or fnmatch.fnmatchcase(path, p) or fnmatch.fnmatchcase(key, p):
            return True
    return False


def _line(v: _Value) -> int:
    return v.entry.line if v.entry is not None and v.state == "set" else 0


def _where(v: _Value) -> str:
    if v.entry is not None and v.state == "set":
        return v.loc or v.entry.where or v.entry.origin
    if v.state == "default":
        return "default"
    return v.why


def _same(x: Any, y: Any) -> bool:
    if isinstance(x, bool) or isinstance(y, bool):
        return x is y if isinstance(x, bool) and isinstance(y, bool) else x == y and type(x) is type(y)
    if isinstance(x, (int, float)) and isinstance(y, (int, float)):
        return x == y  # 5e8 and 500000000 are one value
    if isinstance(x, (list, tuple)) and isinstance(y, (list, tuple)):
        return len(x) == len(y) and all(_same(p, q) for p, q in zip(x, y))
    return bool(x == y)


def diff(a: Config, b: Config, *, version: str | None = None, ignore: Iterable[str] = ()) -> DiffResult:
    """What A and B mean differently for accelerate ``version`` (see the module docstring)."""
    ver = registry.resolve_version(version)
    return _diff(_Side(a, ver), _Side(b, ver), ver, tuple(ignore))


def _diff(sa: _Side, sb: _Side, ver: str, ignore: tuple[str, ...], only: frozenset[str] | None = None,
          mode: str = "accelerate") -> DiffResult:
    a, b = sa.cfg, sb.cfg
    result = DiffResult(a_source=a.source, b_source=b.source, version=ver, mode=mode)
    order = _order()
    paths = set(a.entries) | set(b.entries)
    if "FSDP" in (a.get("distributed_type"), b.get("distributed_type")) or sa.fsdp != sb.fsdp:
        paths.add("fsdp_config.fsdp_state_dict_type")  # its default follows the FSDP version
    if only is not None:
        paths &= only
    paired = sa.fsdp != sb.fsdp
    if paired:
        paths -= {_STRATEGY, _RESHARD}
    for path in sorted(paths, key=lambda p: (order.get(p, len(order)), p)):
        if _matches(path, ignore):
            continue
        entry = a.entries.get(path) or b.entries.get(path)
        setting = entry.setting if entry is not None and entry.setting is not None else _setting(path)
        if setting is None:
            continue
        change, ignored = _compare(path, setting, sa.value(setting), sb.value(setting), sa, sb)
        if change is not None:
            _add(result, change, a, b)
        if ignored is not None:
            result.ignored.append(ignored)
    if paired and not _matches(_STRATEGY, ignore) and not _matches(_RESHARD, ignore):
        change = _fsdp_sharding(sa, sb)
        if change is not None:
            _add(result, change, a, b)
        else:
            _note_same_sharding(result, sa, sb)
        for path in (_STRATEGY, _RESHARD):  # the spelling the other FSDP version would read
            setting = _setting(path)
            assert setting is not None
            ignored = _ignored_record(path, setting, sa.value(setting), sb.value(setting), sa, sb)
            if ignored is not None and ignored.note.startswith("FSDP1 does not read"):
                result.ignored.append(ignored)
    if only is None:
        result.changes.extend(_unknown(a, b, ignore))
    result.notes = consequences(result, _batch_factors(sa), _batch_factors(sb))
    return result


def _setting(path: str) -> Setting | None:
    section, _, key = path.rpartition(".")
    return registry.get(section, key)


def _compare(path: str, setting: Setting, va: _Value, vb: _Value, sa: _Side, sb: _Side) -> tuple[Change | None, Change | None]:
    """(the change in meaning or None, the written difference without effect or None)."""
    ignored = _ignored_record(path, setting, va, vb, sa, sb)
    # A key with no effect behaves as if it were absent.
    va, vb = (_Value("default", side.default(setting)) if v.state == "ignored" else v for v, side in ((va, sa), (vb, sb)))
    states = {va.state, vb.state}
    if states <= {"inactive", "na"}:
        return None, ignored
    if "inactive" in states:  # one side's FSDP version has no such setting
        live, dead = (vb, va) if va.state == "inactive" else (va, vb)
        if live.state != "set":
            return None, ignored
        version = (sa if dead is va else sb).fsdp
        kind: Kind = "added" if dead is va else "removed"
        return Change(path, va.value if va is live else None, vb.value if vb is live else None, kind,
                      _line(va), _line(vb), _where(va), _where(vb), f"FSDP{version} has no {setting.key}"), ignored
    if "na" in states:
        live, side = (vb, sb) if va.state == "na" else (va, sa)
        if live.state != "set" or _same(live.value, side.default(setting)):
            return None, ignored
        mute = sa if va.state == "na" else sb
        who = "A" if va.state == "na" else "B"
        return Change(path, va.value, vb.value, "not_comparable", _line(va), _line(vb), _where(va), _where(vb),
                      f"{who} ({mute.fmt}) cannot express this setting"), ignored
    if _same(va.value, vb.value):
        return None, ignored
    note = ""
    if va.state == "set" and vb.state == "set":
        kind = "changed"
    elif va.state == "default" and vb.state == "default":
        kind, note = "changed", "neither side sets it; the default differs"
    else:
        kind = "added" if va.state == "default" else "removed"
    return Change(path, va.value, vb.value, kind, _line(va), _line(vb), _where(va), _where(vb), note), ignored


def _ignored_record(path: str, setting: Setting, va: _Value, vb: _Value, sa: _Side, sb: _Side) -> Change | None:
    """A written difference that has no effect (on at least one side), or None."""
    dead = [v for v in (va, vb) if v.state in ("ignored", "inactive") and v.entry is not None and v.raw is not None]
    if not dead:
        return None
    ra = va.raw if va.entry is not None else None
    rb = vb.raw if vb.entry is not None else None
    as_written_a = va.value if va.entry is not None and va.raw is not None else sa.default(setting)
    as_written_b = vb.value if vb.entry is not None and vb.raw is not None else sb.default(setting)
    if _same(as_written_a, as_written_b):
        return None
    kind: Kind = "changed" if va.entry is not None and vb.entry is not None else ("added" if vb.entry is not None else "removed")
    la = va.entry.line if va.entry is not None else 0
    lb = vb.entry.line if vb.entry is not None else 0
    return Change(path, ra, rb, kind, la, lb, va.entry.where if va.entry else "", vb.entry.where if vb.entry else "", dead[0].why)


def _sharding_value(side: _Side) -> tuple[str, Any, Entry | None]:
    if side.fsdp == 1:
        s = registry.get("fsdp_config", "fsdp_sharding_strategy")
    else:
        s = registry.get("fsdp_config", "fsdp_reshard_after_forward")
    assert s is not None
    e = side.cfg.entries.get(s.path)
    if e is None or e.value is None:
        return s.key, effective_default(s, side.version, side.cfg), None
    return s.key, _canon(s, e.value), e


def _fsdp_sharding(sa: _Side, sb: _Side) -> Change | None:
    """FSDP1 strategy vs FSDP2 reshard_after_forward: one change with both spellings, or none."""
    ka, va, ea = _sharding_value(sa)
    kb, vb, eb = _sharding_value(sb)
    v1, v2 = (va, vb) if sa.fsdp == 1 else (vb, va)
    if v1 in _EXACT_FSDP2 and TO_FSDP2.get(v1) is v2:
        return None
    if v1 in TO_FSDP2 and TO_FSDP2[v1] is v2:
        note = f"accelerate to-fsdp2 maps {v1} to reshard_after_forward: {str(v2).lower()}, but FSDP2 has no {v1}"
    else:
        note = f"FSDP1 {v1} corresponds to fsdp_reshard_after_forward: {str(TO_FSDP2.get(v1)).lower()}" if v1 in TO_FSDP2 else ""
        if isinstance(v2, bool):
            inverse = "FULL_SHARD" if v2 else "SHARD_GRAD_OP"
            note += f"{'; ' if note else ''}fsdp_reshard_after_forward: {str(v2).lower()} corresponds to FSDP1 {inverse}"
    kind: Kind = "changed"
    if ea is None and eb is not None:
        kind = "added"
    elif ea is not None and eb is None:
        kind = "removed"
    return Change(_STRATEGY, va, vb, kind,  # one key whichever side is FSDP1, so that A/B mirror
                  ea.line if ea else 0, eb.line if eb else 0,
                  (ea.where or ea.origin) if ea else "default", (eb.where or eb.origin) if eb else "default",
                  note, a_key=f"fsdp_config.{ka}", b_key=f"fsdp_config.{kb}")


def _note_same_sharding(result: DiffResult, sa: _Side, sb: _Side) -> None:
    """Say on the fsdp_version change that the sharding did not change with it."""
    _, va, _ = _sharding_value(sa)
    _, vb, _ = _sharding_value(sb)
    v1, v2 = (va, vb) if sa.fsdp == 1 else (vb, va)
    note = f"sharding unchanged: FSDP1 {v1} is FSDP2 fsdp_reshard_after_forward: {str(v2).lower()}"
    for i, c in enumerate(result.changes):
        if c.key == "fsdp_config.fsdp_version":
            result.changes[i] = replace(c, note=f"{c.note}; {note}" if c.note else note)


def _section_inactive(change: Change, a: Config, b: Config) -> str:
    """Why a change in a section has no effect on either side (``""`` when it has one)."""
    section = change.key.split(".", 1)[0] if "." in change.key else ""
    need = _SECTION_NEEDS.get(section)
    if need is None:
        return ""
    key, value = need
    if all(canonical(registry.get("", key), c.get(key)) != value for c in (a, b)):
        return f"no effect on either side ({key} is not {value})"
    return ""


def _add(result: DiffResult, change: Change, a: Config, b: Config) -> None:
    """A change in a section neither side uses goes to ``ignored``; other changes are changes."""
    why = _section_inactive(change, a, b) if change.kind != "not_comparable" else ""
    if why:
        result.ignored.append(replace(change, note=f"{change.note}; {why}" if change.note else why))
    else:
        result.changes.append(change)


def _unknown(a: Config, b: Config, ignore: tuple[str, ...]) -> list[Change]:
    out: list[Change] = []
    for path in sorted(set(a.unknown) | set(b.unknown)):
        if _matches(path, ignore):
            continue
        ea, eb = a.unknown.get(path), b.unknown.get(path)
        if ea is not None and eb is not None and _same(ea.value, eb.value):
            continue
        top = "." not in path
        if path.startswith("--"):
            note = f"launch flag {path} (no config-file key)"
        else:
            note = "unknown key: accelerate refuses to load the file" if top else "unknown key: accelerate ignores it"
        kind: Kind = "changed" if ea and eb else ("added" if eb else "removed")
        if (a.format or "yaml") != (b.format or "yaml") and not (ea and eb):
            # Something only one format has (an env var, a kwarg): the other cannot say it.
            kind = "not_comparable"
            note = f"{'A' if ea else 'B'} ({(a if ea else b).format}) has it; {'B' if ea else 'A'} ({(b if ea else a).format}) cannot express it"
        out.append(Change(path, ea.value if ea else None, eb.value if eb else None, kind,
                          ea.line if ea else 0, eb.line if eb else 0,
                          _entry_where(ea, a), _entry_where(eb, b), note))
    return out


def _entry_where(e: Entry | None, cfg: Config) -> str:
    if e is None:
        return ""
    if e.where:
        return e.where
    return f"{cfg.source}:{e.line}" if e.line else cfg.source


def _mirror_note(note: str) -> str:
    return note.replace("only A", "\0").replace("only B", "only A").replace("\0", "only B") \
        .replace("A (", "\1").replace("B (", "A (").replace("\1", "B (")


def _jsonable(v: Any) -> Any:
    if isinstance(v, tuple):
        return [_jsonable(x) for x in v]
    if isinstance(v, float) and not math.isfinite(v):
        return str(v)
    if isinstance(v, (str, int, float, bool, type(None), list, dict)):
        return v
    return str(v)


# -- consequences -------------------------------------------------------------------------------

_SHARD_LEVEL: dict[Any, int] = {"NO_SHARD": 0, "SHARD_GRAD_OP": 2, "HYBRID_SHARD_ZERO2": 2, "FULL_SHARD": 3, "HYBRID_SHARD": 3,
                                False: 2, True: 3}
_PRECISION_NOTE = {
    "no": "full fp32: about twice the activation memory of 16-bit, slower matmuls",
    "fp16": "fp16 autocast with a dynamic loss scaler (overflowing steps are skipped)",
    "bf16": "bf16 autocast, fp32's range without a loss scaler (needs compute capability 8.0+ on NVIDIA)",
    "fp8": "fp8 through TransformerEngine, MS-AMP or torchao (needs compute capability 8.9+ and fp8_config)",
}


def _num(v: Any) -> float | None:
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, str):
        try:
            return float(v)
        except ValueError:
            return None
    return None


def _fmt_num(v: float | None) -> str:
    if v is None:
        return "?"
    return str(int(v)) if v == int(v) else f"{v:g}"


Factors = tuple[float | None, float | None, float | None]


def _batch_factors(side: "_Side | Config | None", ds: dict[str, Any] | None = None) -> Factors:
    """(data-parallel processes, gradient accumulation, micro batch) where a side says them.

    ``ds`` is a flattened DeepSpeed JSON config (it has the accumulation and the micro batch)."""
    cfg = side.cfg if isinstance(side, _Side) else (side or Config())
    if ds is None and isinstance(side, _Side):
        ds = side.ds
    procs = _num(cfg.get("num_processes"))
    if procs is None and cfg.get("distributed_type") == "NO":
        procs = 1.0
    model_parallel = 1.0
    for path in ("parallelism_config.parallelism_config_tp_size", "parallelism_config.parallelism_config_cp_size",
                 "parallelism_config.parallelism_config_sp_size", "megatron_lm_config.megatron_lm_tp_degree",
                 "megatron_lm_config.megatron_lm_pp_degree"):
        n = _num(cfg.get(path))
        if n and n > 1:
            model_parallel *= n
    if procs is not None and model_parallel > 1 and procs % model_parallel == 0:
        procs /= model_parallel
    gas = _num(cfg.get("deepspeed_config.gradient_accumulation_steps"))
    mbs = None
    if ds:
        gas = _num(ds.get("gradient_accumulation_steps")) or gas
        mbs = _num(ds.get("train_micro_batch_size_per_gpu"))
    return procs, gas, mbs


def batch_note(fa: Factors, fb: Factors) -> str:
    """The effective global batch size on each side, when a factor of it changed.

    Factors that only one side knows are shown as ``?`` and left out of the ratio."""
    if all(_same(x, y) for x, y in zip(fa, fb)):
        return ""
    names = ("processes", "accumulation", "micro batch")
    known = [i for i in range(3) if fa[i] is not None and fb[i] is not None]
    if not any(not _same(fa[i], fb[i]) for i in known):
        return ""

    def product(f: Factors) -> str:
        text = " x ".join(_fmt_num(x) for x in f)
        if all(x is not None for x in f):
            text += f" = {_fmt_num(math.prod(x for x in f if x is not None))}"
        return text

    ratio = 1.0
    for i in known:
        ratio *= (fb[i] or 0.0) / (fa[i] or 1.0)
    unknown = [names[i] for i in range(3) if i not in known]
    tail = f" for the same {' and '.join(unknown)}" if unknown else ""
    return (f"effective global batch size (processes x gradient accumulation x micro batch): "
            f"{product(fa)} -> {product(fb)}, x{_fmt_num(round(ratio, 4))}{tail}")


def _sharding_note(key: str, a: Any, b: Any) -> str:
    la: float | None = _SHARD_LEVEL.get(a)
    lb: float | None = _SHARD_LEVEL.get(b)
    if key.endswith("zero_stage") or key.endswith("zero_optimization.stage"):
        la, lb = _num(a), _num(b)
    if la is None or lb is None or la == lb:
        extra = ""
        if la == lb and {a, b} & {"HYBRID_SHARD", "HYBRID_SHARD_ZERO2"}:
            extra = "hybrid sharding shards within a node and replicates across nodes: less inter-node traffic, more memory per GPU on several nodes"
        return extra
    what = f"{_short(key)} {_show(a)} -> {_show(b)}"
    if lb > la:
        return f"{what}: more sharding, less memory per GPU and more communication"
    return f"{what}: less sharding, more memory per GPU and less communication"


def _short(key: str) -> str:
    """A key without its accelerate section (DeepSpeed paths stay whole)."""
    section, _, rest = key.partition(".")
    return rest if rest and section in registry.SECTIONS else key


def _offload_note(key: str, a: Any, b: Any) -> str:
    off_a = a not in (None, "none", False)
    off_b = b not in (None, "none", False)
    if off_a == off_b:
        return ""
    name = _short(key)
    if off_b:
        return f"{name} {_show(a)} -> {_show(b)}: less GPU memory, slower steps (host transfers)"
    return f"{name} {_show(a)} -> {_show(b)}: more GPU memory, faster steps"


def _precision_note(a: Any, b: Any) -> str:
    if a == b:
        return ""
    tail = _PRECISION_NOTE.get(b, "")
    return f"precision {_show(a)} -> {_show(b)}: numerics change, losses are not directly comparable" + (f"; {tail}" if tail else "")


def _show(v: Any) -> str:
    if isinstance(v, bool):
        return str(v).lower()
    if v is None:
        return "(unset)"
    return str(v)


_SHARD_KEYS = ("fsdp_config.fsdp_sharding_strategy", "fsdp_config.fsdp_reshard_after_forward", "deepspeed_config.zero_stage",
               "zero_optimization.stage")
_OFFLOAD_KEYS = ("fsdp_config.fsdp_offload_params", "deepspeed_config.offload_optimizer_device", "deepspeed_config.offload_param_device",
                 "zero_optimization.offload_optimizer.device", "zero_optimization.offload_param.device")


def consequences(result: DiffResult, fa: Factors = (None, None, None), fb: Factors = (None, None, None)) -> list[str]:
    """Notes on what the differences do: sharding, offload, precision, global batch size."""
    notes: list[str] = []
    for c in result.differences:
        n = ""
        if c.key in _SHARD_KEYS and c.a_key and c.b_key:  # FSDP1 strategy vs FSDP2 reshard_after_forward
            n = _sharding_note(c.key, c.a, c.b).replace(f"{_short(c.key)} ", f"{_short(c.a_key)} ", 1).replace(
                f"-> {_show(c.b)}", f"-> {_short(c.b_key)} {_show(c.b)}", 1)
        elif c.key in _SHARD_KEYS:
            n = _sharding_note(c.key, c.a, c.b)
        elif c.key in _OFFLOAD_KEYS:
            n = _offload_note(c.key, c.a, c.b)
        elif c.key == "mixed_precision":
            n = _precision_note(c.a, c.b)
        if n:
            notes.append(n)
    n = batch_note(fa, fb)
    if n:
        notes.append(n)
    return notes


# -- DeepSpeed JSON -----------------------------------------------------------------------------

@functools.lru_cache(maxsize=1)
def ds_defaults() -> dict[str, Any]:
    """DeepSpeed's own defaults, from accelconf's DeepSpeed key table, for the keys whose default no
    version changed: there an explicit default and an absent key are the same. "auto" is never a
    default: it is a value of its own."""
    from accelconf import deepspeed as dsmod

    return {path: k.default for path, k in dsmod.iter_keys()
            if k.children is None and k.default is not dsmod._UNSET and not k.default_changes}


# The DeepSpeed keys an accelerate ``deepspeed_config`` also has: the one mapping, in accelconf.deepspeed.
DS_TO_ACCELERATE: dict[str, str] = _ds_accelerate.DS_TO_ACCELERATE


def is_deepspeed_data(data: Any, doc: Any = None) -> bool:
    """Whether loaded data is a DeepSpeed JSON config rather than an accelerate config: the one
    detector, :func:`accelconf.deepspeed.is_deepspeed_data` (``doc`` is accepted and unused)."""
    return _ds_keys.is_deepspeed_data(data)


def flatten_deepspeed(data: Any) -> dict[str, tuple[Any, tuple[str, ...]]]:
    """Dotted path -> (value, key path as written). ``bfloat16`` is read as ``bf16`` (its alias)
    unless ``bf16`` is present; lists are leaves; ``"zero_optimization": true`` is stage 1."""
    out: dict[str, tuple[Any, tuple[str, ...]]] = {}
    if not isinstance(data, dict):
        return out

    def walk(node: Any, path: tuple[str, ...], written: tuple[str, ...]) -> None:
        if isinstance(node, dict) and node:
            for k, v in node.items():
                walk(v, path + (str(k),), written + (str(k),))
        else:
            out[".".join(path)] = (node, written)

    for key, value in data.items():
        name = str(key)
        if name == "bfloat16" and "bf16" in data:
            continue
        canon = "bf16" if name == "bfloat16" else name
        if canon == "zero_optimization" and value is True:
            out["zero_optimization.stage"] = (1, (name,))
            continue
        walk(value, (canon,), (name,))
    for path in list(out):
        target = _ds_keys.canonical_path(path)
        if target != path and target not in out:
            out[target] = out.pop(path)
    return out


def _ds_canon(path: str, v: Any) -> Any:
    if isinstance(v, str) and path.endswith(".device"):
        return v.lower()
    return v


def diff_deepspeed(a: Any, b: Any, *, ignore: Iterable[str] = ()) -> DiffResult:
    """Diff two DeepSpeed JSON documents (:class:`~accelconf.text.document.Document`) key by key.

    ``"auto"`` is a value of its own (it differs from a number and from absence); an absent key
    equals its DeepSpeed default only for the keys of :func:`ds_defaults`.
    """
    ignore = tuple(ignore)
    fa, fb = flatten_deepspeed(a.data), flatten_deepspeed(b.data)
    result = DiffResult(a_source=a.path, b_source=b.path, mode="deepspeed")
    for path in _ds_order(fa, fb):
        if _matches(path, ignore):
            continue
        ia, ib = fa.get(path), fb.get(path)
        va = _ds_canon(path, ia[0]) if ia else ds_defaults().get(path)
        vb = _ds_canon(path, ib[0]) if ib else ds_defaults().get(path)
        if _same(va, vb):
            continue
        la = a.position(ia[1])[0] if ia else 0
        lb = b.position(ib[1])[0] if ib else 0
        kind: Kind = "changed" if ia and ib else ("added" if ib else "removed")
        note = '"auto" is filled by the HF Trainer or accelerate at prepare time' if "auto" in (va, vb) else ""
        result.changes.append(Change(path, va, vb, kind, la, lb, f"{a.path}:{la}" if la else "default",
                                     f"{b.path}:{lb}" if lb else "default", note))
    ds_a = {k: _ds_canon(k, v[0]) for k, v in fa.items()}
    ds_b = {k: _ds_canon(k, v[0]) for k, v in fb.items()}
    result.notes = consequences(result, _batch_factors(None, ds_a), _batch_factors(None, ds_b))
    pa, pb = _ds_precision_of(ds_a), _ds_precision_of(ds_b)
    if pa != pb and "auto" not in (pa, pb):
        result.notes.append(_precision_note(pa, pb))
    return result


def _ds_order(fa: dict[str, Any], fb: dict[str, Any]) -> list[str]:
    seen: dict[str, None] = {}
    for k in list(fa) + list(fb):
        seen.setdefault(k, None)
    return list(seen)


def _ds_precision_of(flat: dict[str, Any]) -> Any:
    fp16, bf16 = flat.get("fp16.enabled"), flat.get("bf16.enabled")
    if "auto" in (fp16, bf16):
        return "auto"
    if fp16 is True:
        return "fp16"
    if bf16 is True:
        return "bf16"
    return "no"


def deepspeed_to_accelerate(data: Any) -> tuple[dict[str, Any], list[str]]:
    """The accelerate settings a DeepSpeed JSON config fixes: canonical path -> value, plus notes.

    ``"auto"`` stays ``"auto"`` (a value of its own); ``mixed_precision`` comes from
    ``fp16.enabled``/``bf16.enabled``. The notes on what has no accelerate key come from
    :func:`accelconf.deepspeed.to_accelerate_section` when that module is installed (its values
    are for writing a config, where "auto" is dropped, so they are not used here).
    """
    flat = {k: v[0] for k, v in flatten_deepspeed(data).items()}
    out: dict[str, Any] = {}
    for ds_key, acc in DS_TO_ACCELERATE.items():
        if ds_key in flat:
            out[acc] = _ds_canon(ds_key, flat[ds_key])
    if "fp16.enabled" in flat or "bf16.enabled" in flat:
        out["mixed_precision"] = _ds_precision_of(flat)
    notes: list[str] = []
    try:
        from accelconf.deepspeed import to_accelerate_section
    except ImportError:
        pass
    else:
        try:
            _, extra = to_accelerate_section(data)
        except Exception:  # noqa: BLE001 - notes only; the diff does not depend on them
            extra = []
        notes = [n for n in extra if "no accelerate key" in n or "does not export" in n]
    return out, notes


SHARED_WITH_DEEPSPEED = frozenset(DS_TO_ACCELERATE.values()) | {"mixed_precision"}


def deepspeed_config(doc: Any) -> Config:
    """The accelerate settings a DeepSpeed JSON document fixes, as a Config with positions
    (format ``deepspeed``; its ``notes`` say what the mapping could not carry)."""
    mapped, notes = deepspeed_to_accelerate(doc.data)
    flat = flatten_deepspeed(doc.data)
    where_of = {acc: ds for ds, acc in DS_TO_ACCELERATE.items()}
    cfg = Config(source=doc.path, format="deepspeed", notes=list(notes))
    for path, value in mapped.items():
        if path == "mixed_precision":
            if "fp16.enabled" not in flat and "bf16.enabled" not in flat:
                continue
            ds_key = "bf16.enabled" if flat.get("bf16.enabled", (None,))[0] in (True, "auto") else "fp16.enabled"
        else:
            ds_key = where_of.get(path, "")
        line = doc.position(flat[ds_key][1])[0] if ds_key in flat else 0
        cfg.set(path, value, line=line, origin="file", where=f"{doc.path}:{line}" if line else doc.path,
                written_key=ds_key)
    return cfg


# What an absent key means in a DeepSpeed JSON (DeepSpeed's defaults, not accelerate's).
def _ds_side_defaults() -> dict[str, Any]:
    """Defaults of the accelerate side of a DeepSpeed JSON: its own defaults, and no mixed precision."""
    return {**{acc: ds_defaults().get(ds) for ds, acc in DS_TO_ACCELERATE.items()}, "mixed_precision": "no"}


def diff_accelerate_deepspeed(a: Any, b: Any, *, version: str | None = None, ignore: Iterable[str] = ()) -> DiffResult:
    """An accelerate config against a DeepSpeed JSON document, on the settings they share: ZeRO
    stage, offload devices, gradient accumulation, clipping, 16-bit save, precision.

    Either side may be the DeepSpeed one (a :class:`~accelconf.text.document.Document`); the other is a
    :class:`Config`. Other ``deepspeed_config`` keys the accelerate side sets are ``not_comparable``.
    """
    ver = registry.resolve_version(version)
    sides = []
    for x in (a, b):
        if isinstance(x, Config):
            sides.append(_Side(x, ver))
        else:
            side = _Side(deepspeed_config(x), ver, defaults=_ds_side_defaults(), expresses=SHARED_WITH_DEEPSPEED)
            side.ds = {k: v[0] for k, v in flatten_deepspeed(x.data).items()}
            sides.append(side)
    sa, sb = sides
    only = set(SHARED_WITH_DEEPSPEED)
    for side in sides:
        if side.expresses is None:
            only |= {p for p in side.cfg.entries if p.startswith("deepspeed_config.")}
    result = _diff(sa, sb, ver, tuple(ignore), frozenset(only), mode="accelerate-deepspeed")
    # A DeepSpeed JSON does not say how many processes run it: take the accelerate side's.
    fa, fb = _batch_factors(sa), _batch_factors(sb)
    procs = fa[0] if fa[0] is not None else fb[0]
    fa, fb = (procs, fa[1], fa[2]), (procs, fb[1], fb[2])
    result.notes = [n for n in result.notes if not n.startswith("effective global batch")]
    n = batch_note(fa, fb)
    if n:
        result.notes.append(n)
    for side in sides:
        result.notes.extend(side.cfg.notes if side.expresses is not None else [])
    result.changes = [_auto_note(c) for c in result.changes]
    return result


def _auto_note(c: Change) -> Change:
    if "auto" not in (c.a, c.b):
        return c
    extra = '"auto" is filled from the accelerate side at prepare time'
    return replace(c, note=f"{c.note}; {extra}" if c.note else extra)


# -- reading files ------------------------------------------------------------------------------

@dataclass
class Side:
    """One input of a diff: an accelerate :class:`Config`, or a DeepSpeed JSON document."""

    path: str
    config: Config | None = None
    document: Any = None  # accelconf.text.document.Document for DeepSpeed JSON

    @property
    def is_deepspeed(self) -> bool:
        return self.config is None


def read_side(path: str | os.PathLike[str], version: str | None = None, text: str | None = None) -> Side:
    """Read one input in any format: yaml, json, env, cli, kwargs, or DeepSpeed JSON.

    Raises :class:`accelconf.errors.InputError` for unreadable input.
    """
    from accelconf.text.document import load_file, load_text

    p = os.fspath(path)
    doc = None
    try:
        doc = load_file(p) if text is None else load_text(text, p)
    except Exception:  # noqa: BLE001 - maybe an env, cli or kwargs text: the formats reader decides
        doc = None
    if doc is not None and is_deepspeed_data(doc.data, doc):
        return Side(p, None, doc)
    if doc is not None and doc.format in ("yaml", "json") and _yaml_or_json_name(p) and not isinstance(doc.data, dict):
        from accelconf.errors import InputError

        what = "empty" if doc.data is None else f"a {type(doc.data).__name__}, not a mapping of settings"
        raise InputError(f"the document is {what}", p)
    return Side(p, _read(p, version, text), None)


def _yaml_or_json_name(path: str) -> bool:
    return os.path.splitext(path)[1].lower() in (".yaml", ".yml", ".json")


def _read(path: str, version: str | None = None, text: str | None = None) -> Config:
    """A Config from a file in any readable format; prefers :func:`accelconf.formats.read`."""

    read: Any
    try:
        from accelconf.formats import read
    except ImportError:
        read = None
    if text is None:
        from accelconf.text.document import decode, read_bytes

        text, _ = decode(read_bytes(path), path)
    if read is not None:
        cfg = read(text, path=path, version=version)
    else:
        from accelconf.text.document import load_text
        from accelconf.accelerate.model import from_document

        cfg = from_document(load_text(text, path), version)
    if not cfg.source:
        cfg.source = path
    return cfg


def diff_files(a: str | os.PathLike[str], b: str | os.PathLike[str], *, version: str | None = None,
               ignore: Iterable[str] = ()) -> DiffResult:
    """Read two files (any formats, DeepSpeed JSON too) and diff them."""
    sa, sb = read_side(a, version), read_side(b, version)
    return diff_sides(sa, sb, version=version, ignore=ignore)


def diff_sides(sa: Side, sb: Side, *, version: str | None = None, ignore: Iterable[str] = ()) -> DiffResult:
    """Diff two inputs read by :func:`read_side`, picking the right kind of comparison."""
    if sa.is_deepspeed and sb.is_deepspeed:
        return diff_deepspeed(sa.document, sb.document, ignore=ignore)
    if sa.is_deepspeed or sb.is_deepspeed:
        return diff_accelerate_deepspeed(sa.config if sa.config is not None else sa.document,
                                         sb.config if sb.config is not None else sb.document, version=version, ignore=ignore)
    assert sa.config is not None and sb.config is not None
    return diff(sa.config, sb.config, version=version, ignore=ignore)
