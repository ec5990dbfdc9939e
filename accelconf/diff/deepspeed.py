"""The DeepSpeed diffs: two DeepSpeed JSON documents key by key (:func:`diff_deepspeed`), and an
accelerate config against a DeepSpeed JSON on the settings they share (:func:`diff_accelerate_deepspeed`).

This module owns reading a DeepSpeed JSON as the accelerate settings it fixes for a diff; the
DeepSpeed key table, its defaults and the file detector are :mod:`accelconf.deepspeed`'s.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import Any

from accelconf import deepspeed as dsmod
from accelconf.accelerate import deepspeed_file as _ds_accelerate
from accelconf.accelerate import registry
from accelconf.accelerate.deepspeed_file import to_accelerate_section
from accelconf.accelerate.model import Config
from accelconf.deepspeed import config_file_path
from accelconf.deepspeed import keys as _ds_keys
from accelconf.deepspeed.keys import Paths
from accelconf.deepspeed.values import lax_bool
from accelconf.diff.accelerate import _diff, _Side
from accelconf.diff.consequences import batch_factors, consequences, precision_note
from accelconf.diff.result import Change, ChangeKind, DiffResult, Note, matches, same
from accelconf.errors import InputError
from accelconf.text.document import load_file


@functools.lru_cache(maxsize=1)
def ds_defaults() -> dict[str, Any]:
    """DeepSpeed's own defaults, from accelconf's DeepSpeed key table, for the keys whose default no
    version changed: there an explicit default and an absent key are the same. "auto" is never a
    default: it is a value of its own."""
    return {
        path: k.default
        for path, k in dsmod.iter_keys()
        if k.children is None and k.has_default and not k.default_changes
    }


# The DeepSpeed keys an accelerate ``deepspeed_config`` also has: the one mapping, in accelconf.deepspeed.
DS_TO_ACCELERATE: dict[str, str] = _ds_accelerate.DS_TO_ACCELERATE


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
        if canon == Paths.ZERO and value is True:
            out[Paths.STAGE] = (1, (name,))
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
        if matches(path, ignore):
            continue
        ia, ib = fa.get(path), fb.get(path)
        va = _ds_canon(path, ia[0]) if ia else ds_defaults().get(path)
        vb = _ds_canon(path, ib[0]) if ib else ds_defaults().get(path)
        if same(va, vb):
            continue
        la = a.position(ia[1])[0] if ia else 0
        lb = b.position(ib[1])[0] if ib else 0
        kind: ChangeKind = "changed" if ia and ib else ("added" if ib else "removed")
        note = '"auto" is filled by the HF Trainer or accelerate at prepare time' if "auto" in (va, vb) else ""
        result.changes.append(
            Change(
                path,
                va,
                vb,
                kind,
                la,
                lb,
                f"{a.path}:{la}" if la else "default",
                f"{b.path}:{lb}" if lb else "default",
                Note.of(note),
            )
        )
    ds_a = {k: _ds_canon(k, v[0]) for k, v in fa.items()}
    ds_b = {k: _ds_canon(k, v[0]) for k, v in fb.items()}
    result.notes = consequences(result, batch_factors(None, ds_a), batch_factors(None, ds_b))
    pa, pb = _ds_precision_of(ds_a), _ds_precision_of(ds_b)
    if pa != pb and "auto" not in (pa, pb):
        result.notes.append(precision_note(pa, pb))
    return result


def _ds_order(fa: dict[str, Any], fb: dict[str, Any]) -> list[str]:
    seen: dict[str, None] = {}
    for k in list(fa) + list(fb):
        seen.setdefault(k, None)
    return list(seen)


def _ds_precision_of(flat: dict[str, Any]) -> Any:
    """The precision a flat DeepSpeed config runs: "auto" when fp16 or bf16 ``enabled`` is "auto",
    else fp16, bf16 or "no" as DeepSpeed reads ``enabled``: a pydantic ``bool`` in lax mode
    (deepspeed/runtime/precision_config.py, ``DeepSpeedFP16Config.enabled``), so 1 and "true" are true."""
    fp16, bf16 = flat.get(Paths.FP16_ENABLED), flat.get(Paths.BF16_ENABLED)
    if "auto" in (fp16, bf16):
        return "auto"
    if lax_bool(fp16) is True:
        return "fp16"
    if lax_bool(bf16) is True:
        return "bf16"
    return "no"


def deepspeed_to_accelerate(data: Any) -> tuple[dict[str, Any], list[str]]:
    """The accelerate settings a DeepSpeed JSON config fixes: canonical path -> value, plus notes.

    ``"auto"`` stays ``"auto"`` (a value of its own); ``mixed_precision`` comes from
    ``fp16.enabled``/``bf16.enabled``. The notes on what has no accelerate key come from
    :func:`accelconf.accelerate.deepspeed_file.to_accelerate_section` (its values are for writing a config,
    where "auto" is dropped, so they are not used here).
    """
    flat = {k: v[0] for k, v in flatten_deepspeed(data).items()}
    out: dict[str, Any] = {}
    for ds_key, acc in DS_TO_ACCELERATE.items():
        if ds_key in flat:
            out[acc] = _ds_canon(ds_key, flat[ds_key])
    if Paths.FP16_ENABLED in flat or Paths.BF16_ENABLED in flat:
        out["mixed_precision"] = _ds_precision_of(flat)

    try:
        _, extra = to_accelerate_section(data)
    except Exception:  # noqa: BLE001 - notes only; the diff does not depend on them
        extra = []
    # what has no accelerate home; "auto" the diff shows itself
    notes = [n.message for n in extra if n.rule in ("convert.ds-unmapped", "convert.ds-not-exported")]
    return out, notes


SHARED_WITH_DEEPSPEED = frozenset(DS_TO_ACCELERATE.values()) | {"mixed_precision"}


def deepspeed_config(doc: Any) -> Config:
    """The accelerate settings a DeepSpeed JSON document fixes, as a Config with positions
    (format ``deepspeed``; its ``notes`` say what the mapping could not carry)."""
    mapped, notes = deepspeed_to_accelerate(doc.data)
    flat = flatten_deepspeed(doc.data)
    where_of = {acc: ds for ds, acc in DS_TO_ACCELERATE.items()}
    cfg = Config(source=doc.path, format="deepspeed")
    for note in notes:
        cfg.note(note)
    # every mapped path comes from a key of ``flat`` (mixed_precision from fp16/bf16 ``enabled``)
    for path, value in mapped.items():
        ds_key = _precision_key({k: v[0] for k, v in flat.items()}) if path == "mixed_precision" else where_of[path]
        line = doc.position(flat[ds_key][1])[0]
        cfg.set(path, value, line=line, origin="file", where=f"{doc.path}:{line}", written_key=ds_key)
    return cfg


def _precision_key(flat: dict[str, Any]) -> str:
    """The ``enabled`` key (one of the two is written) whose value :func:`_ds_precision_of` answers
    from: an "auto", else a true, fp16 before bf16 as there; else the one written, fp16 first."""
    if Paths.FP16_ENABLED not in flat:
        return Paths.BF16_ENABLED
    fp16, bf16 = flat[Paths.FP16_ENABLED], flat.get(Paths.BF16_ENABLED)
    if fp16 != "auto" and (bf16 == "auto" or (lax_bool(fp16) is not True and lax_bool(bf16) is True)):
        return Paths.BF16_ENABLED
    return Paths.FP16_ENABLED


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
            side.ds_doc = x
            sides.append(side)
    sa, sb = with_deepspeed_files(*sides)
    only = set(SHARED_WITH_DEEPSPEED)
    for side in sides:
        if side.expresses is None:
            only |= {p for p in side.cfg.entries if p.startswith("deepspeed_config.")}
    # A DeepSpeed JSON does not say how many processes run it: take the accelerate side's.
    fa, fb = sa.batch_factors(), sb.batch_factors()
    procs = fa[0] if fa[0] is not None else fb[0]
    fa, fb = (procs, fa[1], fa[2]), (procs, fb[1], fb[2])
    result = _diff(sa, sb, ver, tuple(ignore), frozenset(only), mode="accelerate-deepspeed", factors=(fa, fb))
    both_json = sa.ds_doc is not None and sb.ds_doc is not None
    for side in sides:  # what has no accelerate key, unless the other side's JSON is compared key by key
        result.notes.extend(n.message for n in side.cfg.notes if side.expresses is not None and not both_json)
    result.changes = [_auto_note(c) for c in result.changes]
    add_file_changes(result, sa, sb, tuple(ignore))
    return result


# The DeepSpeed keys a diff compares in their accelerate spelling (mixed_precision from these two).
_COMPARED_AS_ACCELERATE = frozenset(DS_TO_ACCELERATE) | {Paths.FP16_ENABLED, Paths.BF16_ENABLED}


def with_deepspeed_files(sa: _Side, sb: _Side) -> tuple[_Side, _Side]:
    """Both sides with the DeepSpeed JSON files they name (:func:`with_deepspeed_file`). The file
    names themselves are compared only when a side's file cannot be read: then its settings are
    unknown and the name is all there is to compare."""
    sa, sb = with_deepspeed_file(sa), with_deepspeed_file(sb)
    if sa.file_missing or sb.file_missing:
        sa.file_name_compared = sb.file_name_compared = True
    return sa, sb


def with_deepspeed_file(side: _Side) -> _Side:
    """The side with the DeepSpeed JSON its ``deepspeed_config_file`` names, when it runs DeepSpeed:
    the settings that file fixes replace the config's own (accelerate reads them from the file and
    raises when the config sets them too), with DeepSpeed's defaults for what the file leaves out.
    The file is found as validate finds it (:func:`accelconf.deepspeed.config_file_path`); one
    that cannot be read leaves the side as it is, with ``file_missing`` saying why."""
    ref = side.cfg.get("deepspeed_config.deepspeed_config_file")
    if side._distributed_type() != "DEEPSPEED" or not isinstance(ref, str) or ref.strip() in ("", "none"):
        return side
    path = config_file_path(ref, side.cfg.source)
    try:
        doc = load_file(path, "json") if path is not None else None
    except InputError as exc:
        side.file_missing = f"cannot be read ({exc})"
        return side
    if doc is None or not isinstance(doc.data, dict):
        side.file_missing = (
            "is not a DeepSpeed JSON"
            if doc is not None
            else f"was not found next to {side.cfg.source or 'the config'} or in the current directory"
        )
        return side
    side.ds_doc, side.file_cfg, side.file_paths = doc, deepspeed_config(doc), SHARED_WITH_DEEPSPEED
    side.ds = {k: v[0] for k, v in flatten_deepspeed(doc.data).items()}
    # accelerate's zero3_init_flag default is whether the file is ZeRO-3 (DeepSpeedPlugin.__post_init__)
    stage = side.file_cfg.get("deepspeed_config.zero_stage")
    side.defaults = {**_ds_side_defaults(), "deepspeed_config.zero3_init_flag": stage in (3, "3")}
    return side


def add_file_changes(result: DiffResult, sa: _Side, sb: _Side, ignore: tuple[str, ...]) -> None:
    """Add what two DeepSpeed JSON files in effect differ in beyond the settings accelerate has keys
    for (compared in accelerate's spelling already), key by key in DeepSpeed's spelling; and say
    which side's named file could not be read."""
    for name, side in (("A", sa), ("B", sb)):
        if side.file_missing:
            ref = side.cfg.get("deepspeed_config.deepspeed_config_file")
            result.notes.append(
                f"{name}'s deepspeed_config_file {ref!r} {side.file_missing}: "
                "the DeepSpeed settings in it are not compared"
            )
        result.ignored.extend(_shadowed(side, side is sa, ignore))
    if sa.ds_doc is None or sb.ds_doc is None or (sa.file_cfg is None and sb.file_cfg is None):
        for name, side, other in (("A", sa, sb), ("B", sb, sa)):
            if side.file_cfg is not None and other.ds_doc is None and other._distributed_type() == "DEEPSPEED":
                result.notes.extend(_uncompared_note(name, side, ignore))
        return
    more = diff_deepspeed(sa.ds_doc, sb.ds_doc, ignore=ignore)
    result.changes.extend(c for c in more.changes if c.key not in _COMPARED_AS_ACCELERATE)


# What accelerate's own DeepSpeed config (DeepSpeedPlugin.__post_init__, no file) holds besides its settings.
_AS_ACCELERATE_BUILDS = frozenset({(Paths.TRAIN_BATCH, "auto"), (Paths.MICRO_BATCH, "auto")})


def _uncompared_note(name: str, side: _Side, ignore: tuple[str, ...]) -> list[str]:
    """A note on the keys of a side's DeepSpeed file that have no accelerate setting, when the
    other side has no DeepSpeed JSON to compare them with (accelerate builds one from its settings)."""
    keys = [
        k
        for k, (v, _) in flatten_deepspeed(side.ds_doc.data).items()
        if k not in _COMPARED_AS_ACCELERATE and not matches(k, ignore) and (k, v) not in _AS_ACCELERATE_BUILDS
    ]
    if not keys:
        return []
    shown = ", ".join(keys[:5]) + (f" and {len(keys) - 5} more" if len(keys) > 5 else "")
    other = "B" if name == "A" else "A"
    return [
        f"{name}'s DeepSpeed file also sets {shown}, which have no accelerate setting: not compared "
        f"({other} has no DeepSpeed file; accelerate builds its DeepSpeed config from the settings above)"
    ]


def _shadowed(side: _Side, is_a: bool, ignore: tuple[str, ...]) -> list[Change]:
    """The config's own keys for settings its named DeepSpeed file fixes: the file's values are the
    ones compared (accelerate raises ValueError with both; validate reports it as an error)."""
    if side.file_cfg is None:
        return []
    out: list[Change] = []
    for path in sorted(side.file_paths & set(side.cfg.entries)):
        e = side.cfg.entries[path]
        if matches(path, ignore) or e.origin != "file":  # the launcher writes ACCELERATE_MIXED_PRECISION itself
            continue
        where = e.where or f"{side.cfg.source}:{e.line}"
        out.append(
            Change(
                path,
                e.value if is_a else None,
                None if is_a else e.value,
                "removed" if is_a else "added",
                e.line if is_a else 0,
                0 if is_a else e.line,
                where if is_a else "",
                "" if is_a else where,
                Note.of("beside deepspeed_config_file, accelerate raises ValueError; the file's value is compared"),
            )
        )
    return out


def _auto_note(c: Change) -> Change:
    if "auto" not in (c.a, c.b):
        return c
    extra = '"auto" is filled from the accelerate side at prepare time'
    return c.noted(extra)
