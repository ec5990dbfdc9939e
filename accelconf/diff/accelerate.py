"""The accelerate diff: what two :class:`~accelconf.accelerate.model.Config` values mean differently
for one accelerate version (see :mod:`accelconf.diff` for what "the same meaning" is).

This module owns one side's view of a setting (:class:`_Side`: set, default, inactive, ignored,
not expressible) and comparing two sides; notes on consequences come from
:mod:`accelconf.diff.consequences`, defaults and spellings from the registry and
:func:`accelconf.accelerate.model.canonical`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from accelconf.accelerate import registry
from accelconf.accelerate.model import Config, Entry, canonical
from accelconf.accelerate.registry import Setting
from accelconf.diff.consequences import Factors, batch_factors, consequences
from accelconf.diff.result import Change, ChangeKind, DiffResult, Note, SideRef, matches, same

FILE_FORMATS = ("", "yaml", "json")

# accelerate to-fsdp2: FSDP1 sharding strategy -> FSDP2 reshard_after_forward.
TO_FSDP2: dict[str, bool] = registry.FSDP2_RESHARD_OF_STRATEGY
_EXACT_FSDP2 = ("FULL_SHARD", "SHARD_GRAD_OP")  # the pairs that mean the same thing
_STRATEGY = "fsdp_config.fsdp_sharding_strategy"
_RESHARD = "fsdp_config.fsdp_reshard_after_forward"
_DS_FILE = "deepspeed_config.deepspeed_config_file"


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
    if path == "main_process_ip" and cfg is not None and _single_machine(cfg):
        # one machine: the rendezvous is local whatever the file says; the launcher fills
        # MASTER_ADDR=127.0.0.1 (accelerate/utils/launch.py, prepare_simple_launcher_cmd_env), as
        # torchrun's --master_addr default does
        return "127.0.0.1"
    if path == "fsdp_config.fsdp_state_dict_type":
        return "SHARDED_STATE_DICT" if cfg is not None and _fsdp_version(cfg, version) == 2 else "FULL_STATE_DICT"
    if path == "deepspeed_config.zero3_init_flag":
        return (
            cfg is not None
            and canonical(registry.get("deepspeed_config", "zero_stage"), cfg.get("deepspeed_config.zero_stage", 2))
            == 3
        )
    if setting.launcher_default is not None:
        return (
            setting.canonical_value(setting.launcher_default)
            if not isinstance(setting.launcher_default, tuple)
            else list(setting.launcher_default)
        )
    if setting.plugin_default is not None:  # (the one tuple default, fp8's, is a launcher default too)
        return canonical(setting, setting.plugin_default)
    return None


def _single_machine(cfg: Config) -> bool:
    return cfg.get("num_machines") in (None, 1, "1")  # "1": a YAML string that accelerate's int() reads


# distributed types accelerate launch starts through torchrun or DeepSpeed (launch_command)
_LAUNCHER_DROPS_USE_CPU = frozenset(registry.MULTI_GPU_TYPES) | {"FSDP", "DEEPSPEED", "MEGATRON_LM"}

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
    return cfg.fsdp_version()


def _can_express(setting: Setting, fmt: str) -> bool:
    """Whether a format has a spelling for a setting (files have one for every setting)."""
    spelling = {"env": setting.env, "cli": setting.flag, "kwargs": setting.plugin}
    return fmt not in spelling or spelling[fmt] is not None


@dataclass
class _Value:
    state: Literal["set", "default", "na", "inactive", "ignored"]
    value: Any = None  # canonical
    raw: Any = None
    entry: Entry | None = None
    why: str = ""  # why a value has no effect, or cannot be expressed
    reason: str = ""  # the kind of why: version, lost, file, launcher, fsdp, fsdp1-reshard, format
    loc: str = ""  # where a set value comes from: ``file:line`` (and the env var or flag)


class _Side:
    def __init__(
        self, cfg: Config, version: str, defaults: dict[str, Any] | None = None, expresses: frozenset[str] | None = None
    ) -> None:
        self.cfg = cfg
        self.version = version
        self.fmt = cfg.format or ""
        self.fsdp = _fsdp_version(cfg, version)
        self.defaults = defaults or {}  # path -> default, where this side's defaults are not accelerate's
        self.expresses = expresses  # the paths this side can express, when not every path
        self.ds: dict[str, Any] | None = None  # the flattened DeepSpeed JSON this side came from
        # The DeepSpeed JSON in effect: the side itself, or the file its deepspeed_config_file names
        # (then ``file_cfg`` holds the settings that file fixes, which replace the config's own).
        self.ds_doc: Any = None
        self.file_cfg: Config | None = None
        self.file_paths: frozenset[str] = frozenset()
        self.file_missing = ""  # why the named file could not be read
        self.file_name_compared = False  # whether deepspeed_config_file counts as written (a file is unread)

    def _entry(self, path: str) -> tuple[Entry | None, Config]:
        """The entry for a path and the Config it comes from (the named DeepSpeed file's, for the
        settings that file fixes)."""
        if self.file_cfg is not None and path in self.file_paths:
            return self.file_cfg.entries.get(path), self.file_cfg
        arg = self.accelerator_arg(path)
        if arg is not None:
            return self.cfg.unknown[arg], self.cfg
        return self.cfg.entries.get(path), self.cfg

    def accelerator_arg(self, path: str) -> str | None:
        """The kwargs reader's ``Accelerator.ARG`` entry that sets a :data:`registry.ACCELERATOR_ENV_ARGS`
        setting on a side whose section is not in use (the Accelerator reads the argument there), or None."""
        setting = _setting(path) if path in registry.ACCELERATOR_ENV_ARGS else None
        if self.fmt != "kwargs" or setting is None or not self._accelerator_wide(setting):
            return None
        name = f"Accelerator.{registry.ACCELERATOR_ENV_ARGS[path][0]}"  # kept by class and argument name
        return name if name in self.cfg.unknown else None

    def default(self, setting: Setting) -> Any:
        if setting.path in self.defaults:
            return self.defaults[setting.path]
        if self._accelerator_wide(setting):
            return registry.ACCELERATOR_ENV_ARGS[setting.path][1]  # the Accelerator argument's default
        return effective_default(setting, self.version, self.cfg)

    def _accelerator_wide(self, setting: Setting) -> bool:
        """Whether a setting is one the training process reads outside its section
        (:data:`registry.ACCELERATOR_ENV_ARGS`) and its section is not in use on this side."""
        if (
            setting.path not in registry.ACCELERATOR_ENV_ARGS or self.fmt == "deepspeed"
        ):  # a DeepSpeed JSON is DeepSpeed's
            return False
        return not registry.section_active(setting.section, self.cfg)

    def can_express(self, setting: Setting) -> bool:
        if self.expresses is not None:
            return setting.path in self.expresses
        return _can_express(setting, self.fmt)

    def batch_factors(self) -> Factors:
        return batch_factors(self.cfg, self.ds)

    def is_file(self) -> bool:
        return self.fmt in FILE_FORMATS

    def value(self, setting: Setting) -> _Value:
        path = setting.path
        entry, cfg = self._entry(path)
        raw = entry.value if entry is not None else None
        if isinstance(raw, str) and raw in ("None", "none") and setting.type in ("int", "float"):
            raw = None  # how the launcher writes an unset number into the environment
        reason, why = self._no_effect(setting)
        if reason:
            state: Literal["inactive", "ignored"] = "inactive" if reason.startswith("fsdp") else "ignored"
            return _Value(state, _canon(setting, raw), raw, entry, why, reason)  # raw is None without an entry
        if (
            entry is None
            or raw is None
            or (raw in ([], "") and effective_default(setting, self.version, self.cfg) is None)
        ):
            if entry is None and not self.can_express(setting):
                return _Value("na", None, None, None, f"{self.fmt} cannot express it", "format")  # files express all
            return _Value("default", self.default(setting), None, entry)
        return _Value("set", _canon(setting, raw), raw, entry, loc=self.where(entry, cfg))

    def where(self, entry: Entry, cfg: Config | None = None) -> str:
        """``file:line`` of an entry, with the env var or flag name when that is how it was written."""
        src = (cfg or self.cfg).source
        if not entry.line or not src or (entry.where and entry.where.startswith(f"{src}:")):
            return entry.where or entry.origin
        loc = f"{src}:{entry.line}"
        return f"{loc} {entry.where}" if entry.where and entry.where != src else loc

    def _distributed_type(self) -> Any:
        return canonical(registry.get("", "distributed_type"), self.cfg.get("distributed_type"))

    def _no_effect(self, setting: Setting) -> tuple[str, str]:
        """(reason, why) a setting has no effect on this side; ``("", "")`` when it has one."""
        if not setting.exists_in(self.version):
            return "version", f"not read by accelerate {self.version}"
        if self._accelerator_wide(setting):
            entry = self._entry(setting.path)[0]
            # an environment's variable and an Accelerator argument are read, a key is not
            if entry is not None and entry.origin != "env" and entry.setting is not None:
                holder = {"cli": "the launcher exports it", "kwargs": "the DeepSpeed plugin reads it"}.get(
                    self.fmt, "a config file holds it"
                )
                return "section", f"{holder} only for DeepSpeed"
        if setting.path == _DS_FILE and self.file_cfg is not None and not self.file_name_compared:
            return "dsfile", "the DeepSpeed settings in the file it names are compared, not its name"
        if setting.lost:
            return "lost", "never reaches the training process"
        if setting.file_ignored and self.is_file():
            return "file", "ignored in a config file (only the launch flag applies)"
        if setting.path == "use_cpu" and self.is_file() and self._distributed_type() in _LAUNCHER_DROPS_USE_CPU:
            # accelerate/commands/launch.py: a file's use_cpu becomes args.use_cpu, not args.cpu, so
            # these types still take the torchrun/DeepSpeed launcher, which exports no ACCELERATE_USE_CPU
            return "launcher", f"distributed_type {self._distributed_type()} launches without it"
        if setting.section == "fsdp_config":
            if self.fsdp not in setting.fsdp_versions:
                return "fsdp", f"FSDP{self.fsdp} does not read it"
            if setting.key == "fsdp_reshard_after_forward" and self.fsdp == 1:
                return "fsdp1-reshard", "FSDP1 does not read it (it reads fsdp_sharding_strategy)"
        return "", ""


def _order() -> dict[str, int]:
    return {s.path: i for i, s in enumerate(registry.SETTINGS)}


def _line(v: _Value) -> int:
    return v.entry.line if v.entry is not None and v.state == "set" else 0


def _where(v: _Value) -> str:
    if v.entry is not None and v.state == "set":
        return v.loc or v.entry.where or v.entry.origin
    if v.state == "default":
        return "default"
    return v.why


def _diff(
    sa: _Side,
    sb: _Side,
    ver: str,
    ignore: tuple[str, ...],
    only: frozenset[str] | None = None,
    mode: str = "accelerate",
    factors: tuple[Factors, Factors] | None = None,
) -> DiffResult:
    """The changes between two sides; ``only`` limits the paths compared, ``factors`` replaces the
    batch-size factors read from the sides (a DeepSpeed JSON does not say how many processes)."""
    a, b = sa.cfg, sb.cfg
    result = DiffResult(a_source=a.source, b_source=b.source, version=ver, mode=mode)
    order = _order()
    paths = set(a.entries) | set(b.entries)
    for side in (sa, sb):
        if side.file_cfg is not None:
            paths |= set(side.file_cfg.entries)
        paths |= {p for p in registry.ACCELERATOR_ENV_ARGS if side.accelerator_arg(p)}
    if sa.fsdp != sb.fsdp:
        paths.add("fsdp_config.fsdp_state_dict_type")  # its default follows the FSDP version
    if only is not None:
        paths &= only
    paired = sa.fsdp != sb.fsdp
    if paired:
        paths -= {_STRATEGY, _RESHARD}
    for path in sorted(paths, key=lambda p: (order.get(p, len(order)), p)):
        if matches(path, ignore):
            continue
        entry = a.entries.get(path) or b.entries.get(path)
        setting = entry.setting if entry is not None and entry.setting is not None else _setting(path)
        if setting is None:
            continue
        change, ignored = _compare(path, setting, sa.value(setting), sb.value(setting), sa, sb)
        if change is not None and (sa._accelerator_wide(setting) or sb._accelerator_wide(setting)):
            change = change.noted(
                f"{setting.env} reaches Accelerator({registry.ACCELERATOR_ENV_ARGS[path][0]}=) under every "
                "distributed type; a config file or launch flag holds it only for DeepSpeed"
            )
        if change is not None:
            _add(result, change, a, b)
        if ignored is not None:
            result.ignored.append(ignored)
    if paired and not matches(_STRATEGY, ignore) and not matches(_RESHARD, ignore):
        change = _fsdp_sharding(sa, sb)
        if change is not None:
            _add(result, change, a, b)
        else:
            _note_same_sharding(result, sa, sb)
        for path in (_STRATEGY, _RESHARD):  # the spelling the other FSDP version would read
            setting = _setting(path)
            assert setting is not None
            va, vb = sa.value(setting), sb.value(setting)
            ignored = _ignored_record(path, setting, va, vb, sa, sb)
            if ignored is not None and _dead(va, vb)[0].reason == "fsdp1-reshard":
                result.ignored.append(ignored)
    if only is None:
        read = {arg for side in (sa, sb) for arg in map(side.accelerator_arg, registry.ACCELERATOR_ENV_ARGS) if arg}
        result.changes.extend(_unknown(a, b, ignore, frozenset(read)))
    fa, fb = factors if factors is not None else (sa.batch_factors(), sb.batch_factors())
    result.notes = consequences(result, fa, fb)
    return result


def _setting(path: str) -> Setting | None:
    section, _, key = path.rpartition(".")
    return registry.get(section, key)


def _compare(
    path: str, setting: Setting, va: _Value, vb: _Value, sa: _Side, sb: _Side
) -> tuple[Change | None, Change | None]:
    """(the change in meaning or None, the written difference without effect or None)."""
    ignored = _ignored_record(path, setting, va, vb, sa, sb)
    # A key with no effect behaves as if it were absent.
    va, vb = (
        _Value("default", side.default(setting)) if v.state == "ignored" else v for v, side in ((va, sa), (vb, sb))
    )
    states = {va.state, vb.state}
    if states <= {"inactive", "na"}:
        return None, ignored
    if "inactive" in states:  # one side's FSDP version has no such setting
        live, dead = (vb, va) if va.state == "inactive" else (va, vb)
        # A value equal to its default means what an absent key means, as everywhere else: the
        # launcher exports every FSDP variable, so an env side "sets" keys a file leaves out.
        if live.state != "set" or same(live.value, (sb if live is vb else sa).default(setting)):
            return None, ignored
        version = (sa if dead is va else sb).fsdp
        kind: ChangeKind = "added" if dead is va else "removed"
        return Change(
            path,
            va.value if va is live else None,
            vb.value if vb is live else None,
            kind,
            _line(va),
            _line(vb),
            _where(va),
            _where(vb),
            Note.of(f"FSDP{version} has no {setting.key}"),
        ), ignored
    if "na" in states:
        live, side = (vb, sb) if va.state == "na" else (va, sa)
        if live.state != "set" or same(live.value, side.default(setting)):
            return None, ignored
        mute = sa if va.state == "na" else sb
        who = SideRef.A if va.state == "na" else SideRef.B
        return Change(
            path,
            va.value,
            vb.value,
            "not_comparable",
            _line(va),
            _line(vb),
            _where(va),
            _where(vb),
            Note.of(who, f" ({mute.fmt}) cannot express this setting"),
        ), ignored
    if same(va.value, vb.value):
        return None, ignored
    note = ""
    if va.state == "set" and vb.state == "set":
        kind = "changed"
    elif va.state == "default" and vb.state == "default":
        kind, note = "changed", "neither side sets it; the default differs"
    else:
        kind = "added" if va.state == "default" else "removed"
    return Change(path, va.value, vb.value, kind, _line(va), _line(vb), _where(va), _where(vb), Note.of(note)), ignored


def _dead(va: _Value, vb: _Value) -> list[_Value]:
    """The written values that have no effect."""
    return [v for v in (va, vb) if v.state in ("ignored", "inactive") and v.entry is not None and v.raw is not None]


def _ignored_record(path: str, setting: Setting, va: _Value, vb: _Value, sa: _Side, sb: _Side) -> Change | None:
    """A written difference that has no effect (on at least one side), or None."""
    dead = _dead(va, vb)
    if not dead:
        return None
    ra = va.raw if va.entry is not None else None
    rb = vb.raw if vb.entry is not None else None
    as_written_a = va.value if va.entry is not None and va.raw is not None else sa.default(setting)
    as_written_b = vb.value if vb.entry is not None and vb.raw is not None else sb.default(setting)
    if same(as_written_a, as_written_b):
        return None
    kind: ChangeKind = (
        "changed" if va.entry is not None and vb.entry is not None else ("added" if vb.entry is not None else "removed")
    )
    la = va.entry.line if va.entry is not None else 0
    lb = vb.entry.line if vb.entry is not None else 0
    return Change(
        path,
        ra,
        rb,
        kind,
        la,
        lb,
        va.entry.where if va.entry else "",
        vb.entry.where if vb.entry else "",
        Note.of(dead[0].why),
    )


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
        note = (
            f"FSDP1 {v1} corresponds to fsdp_reshard_after_forward: {str(TO_FSDP2.get(v1)).lower()}"
            if v1 in TO_FSDP2
            else ""
        )
        if isinstance(v2, bool):
            inverse = "FULL_SHARD" if v2 else "SHARD_GRAD_OP"
            note += (
                f"{'; ' if note else ''}fsdp_reshard_after_forward: {str(v2).lower()} corresponds to FSDP1 {inverse}"
            )
    kind: ChangeKind = "changed"
    if ea is None and eb is not None:
        kind = "added"
    elif ea is not None and eb is None:
        kind = "removed"
    return Change(
        _STRATEGY,
        va,
        vb,
        kind,  # one key whichever side is FSDP1, so that A/B mirror
        ea.line if ea else 0,
        eb.line if eb else 0,
        (ea.where or ea.origin) if ea else "default",
        (eb.where or eb.origin) if eb else "default",
        Note.of(note),
        a_key=f"fsdp_config.{ka}",
        b_key=f"fsdp_config.{kb}",
    )


def _note_same_sharding(result: DiffResult, sa: _Side, sb: _Side) -> None:
    """Say on the fsdp_version change that the sharding did not change with it."""
    _, va, _ = _sharding_value(sa)
    _, vb, _ = _sharding_value(sb)
    v1, v2 = (va, vb) if sa.fsdp == 1 else (vb, va)
    note = f"sharding unchanged: FSDP1 {v1} is FSDP2 fsdp_reshard_after_forward: {str(v2).lower()}"
    for i, c in enumerate(result.changes):
        if c.key == "fsdp_config.fsdp_version":
            result.changes[i] = c.noted(note)


def _section_inactive(change: Change, a: Config, b: Config) -> str:
    """Why a change in a section has no effect on either side (``""`` when it has one); when a
    section takes effect is the registry's ``Section.active_when``."""
    section = change.key.split(".", 1)[0] if "." in change.key else ""
    sec = registry.SECTIONS.get(section)
    if sec is None or sec.active_when is None or change.key in registry.ACCELERATOR_ENV_ARGS:
        return ""  # (the sides say where such a setting has no effect: _Side._no_effect)
    key, value = sec.active_when
    if not any(registry.section_active(section, c) for c in (a, b)):
        return f"no effect on either side ({key} is not {value})"
    return ""


def _add(result: DiffResult, change: Change, a: Config, b: Config) -> None:
    """A change in a section neither side uses goes to ``ignored``; other changes are changes."""
    why = _section_inactive(change, a, b) if change.kind != "not_comparable" else ""
    if why:
        result.ignored.append(change.noted(why))
    else:
        result.changes.append(change)


def _unknown(a: Config, b: Config, ignore: tuple[str, ...], compared: frozenset[str] = frozenset()) -> list[Change]:
    """The keys no setting has; ``compared``: those compared as a setting already (an Accelerator argument)."""
    out: list[Change] = []
    for path in sorted(set(a.unknown) | set(b.unknown)):
        if matches(path, ignore) or path in compared:
            continue
        ea, eb = a.unknown.get(path), b.unknown.get(path)
        if ea is not None and eb is not None and same(ea.value, eb.value):
            continue
        top = "." not in path
        if path.startswith("--"):
            note = Note.of(f"launch flag {path} (no config-file key)")
        else:
            note = Note.of(
                "unknown key: accelerate refuses to load the file" if top else "unknown key: accelerate ignores it"
            )
        kind: ChangeKind = "changed" if ea and eb else ("added" if eb else "removed")
        if (a.format or "yaml") != (b.format or "yaml") and not (ea and eb):
            # Something only one format has (an env var, a kwarg): the other cannot say it.
            kind = "not_comparable"
            has, lacks = (SideRef.A, SideRef.B) if ea else (SideRef.B, SideRef.A)
            note = Note.of(
                has, f" ({(a if ea else b).format}) has it; ", lacks, f" ({(b if ea else a).format}) cannot express it"
            )
        out.append(
            Change(
                path,
                ea.value if ea else None,
                eb.value if eb else None,
                kind,
                ea.line if ea else 0,
                eb.line if eb else 0,
                _entry_where(ea, a),
                _entry_where(eb, b),
                note,
            )
        )
    return out


def _entry_where(e: Entry | None, cfg: Config) -> str:
    if e is None:
        return ""
    if e.where:
        return e.where
    return f"{cfg.source}:{e.line}" if e.line else cfg.source
