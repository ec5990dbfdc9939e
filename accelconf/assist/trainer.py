"""Completion and hover for Hugging Face Trainer / TRL arguments files and Trainer ``fsdp_config`` JSON.

An arguments file (YAML or JSON, read as ``HfArgumentParser`` reads it) takes the fields of the
target transformers release's ``Seq2SeqTrainingArguments``, or of the TRL config classes the file
is for (:func:`accelconf.trainer.fields.trl_classes_for`); ``fsdp_config`` (inline, or a file of
its own) takes the keys that release's ``TrainingArguments`` reads, with or without the ``fsdp_``
prefix it drops, under the FSDP version the mapping selects. Every fact comes from the releases
data (:mod:`accelconf.trainer.releases`), the ``fsdp_config`` model (:mod:`accelconf.trainer.fsdp`,
:mod:`accelconf.trainer.fsdp_plugin`) and the rule catalogue; nothing here imports transformers.
Positions are 0-based and count characters.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from accelconf import catalogue
from accelconf.accelerate import registry
from accelconf.assist.complete import Candidate, _key_insert
from accelconf.assist.cursor import Where, context_at
from accelconf.assist.hover import named_at
from accelconf.errors import InputError
from accelconf.kinds import TRAINER_KINDS
from accelconf.text.document import load_text, resolve_yaml11
from accelconf.text.scalars import json_scalar, yaml_scalar
from accelconf.trainer import fields, fsdp, releases
from accelconf.trainer.args import Arg
from accelconf.trainer.releases import Field

# The recogniser's kinds whose keys are Trainer arguments (hover), and the two completion serves
# (a framework YAML's own keys are not modelled, so its key list would be incomplete).
KINDS = frozenset(TRAINER_KINDS)
COMPLETED = frozenset({"trainer-args", "fsdp-config"})
FSDP_FIELD = "fsdp_config"
PREFIX = "fsdp_"  # _process_fsdp_args renames a key with this prefix to the key without it


def _scalar(v: Any, fmt: str) -> str:
    return json_scalar(v) if fmt == "json" else yaml_scalar(v)


def _fsdp_mapping(where: Where, kind: str) -> bool:
    """Whether the cursor's mapping is an ``fsdp_config`` (a file of its own, or the argument inline)."""
    return (kind == "fsdp-config" and not where.path) or (kind != "fsdp-config" and where.path == (FSDP_FIELD,))


# A ``version`` entry as written in YAML or JSON (no Trainer field has either name): read from the
# text itself while the text does not parse (a key being typed).
_VERSION = re.compile(r"""^[ \t{,]*["']?((?:fsdp_)?version)["']?[ \t]*:[ \t]*["']?(\d+)""", re.M)


def _mapping_data(text: str, where: Where, kind: str, path: str) -> Mapping[str, Any]:
    """The parsed ``fsdp_config`` mapping around the cursor; only its ``version`` entries, found in
    the text, when the text does not parse."""
    try:
        data = load_text(text, path or "<text>", where.format).data
    except InputError:
        return {m.group(1): int(m.group(2)) for m in _VERSION.finditer(text)}
    if kind != "fsdp-config" and isinstance(data, dict):
        data = data.get(FSDP_FIELD)
    return data if isinstance(data, dict) else {}


def fsdp_version_at(text: str, where: Where, kind: str, tv: str | None, path: str = "") -> int:
    """The FSDP version the cursor's ``fsdp_config`` runs under in transformers ``tv``."""
    data = _mapping_data(text, where, kind, path)
    return fsdp.read_version([Arg(str(k), v, 0, 0, 0, 0, str(k), where.format) for k, v in data.items()], tv)


def arguments_fields(present: frozenset[str], tv: str | None, trl: str | None) -> dict[str, tuple[Field, str]]:
    """Field name -> (its form, the class it belongs to) for an arguments file holding ``present``:
    the TRL classes it is for (their own form wins), else ``Seq2SeqTrainingArguments``."""
    classes = fields.trl_classes_for(present, tv, trl)
    if not classes:
        return {n: (f, releases.SEQ2SEQ_CLASS) for n, f in releases.fields(tv).items()}
    out: dict[str, tuple[Field, str]] = {}
    for cls in classes:
        for n, f in releases.trl_fields(cls, trl, tv).items():
            own = bool(releases.trl_field_history(cls, n))
            if n not in out or own:
                out[n] = (f, cls if own else releases.BASE_CLASS)
    return out


def field_values(f: Field, version: int = 2) -> tuple[Any, ...]:
    """The values completion offers for a field: true/false, its choices, the ``fsdp`` options the
    FSDP version takes (``true`` turns FSDP on)."""
    if f.name == "fsdp":
        return (
            True,
            *(o for o in fsdp.OPTIONS if version == 1 or o not in set(fsdp.SHARDING) - set(fsdp.FSDP2_SHARDING)),
        )
    if f.base_type == "bool":
        return (True, False)
    return tuple(f.choices or ())


def _values(values: tuple[Any, ...], where: Where) -> list[Candidate]:
    out: list[Candidate] = []
    for i, v in enumerate(values):
        text = _scalar(v, where.format)
        plain = str(v).lower() if isinstance(v, bool) else str(v)
        doc = ""
        if where.format == "yaml" and text != plain and not isinstance(v, bool):
            doc = f"Quoted: a bare `{plain}` is read as `{resolve_yaml11(plain)!r}` by PyYAML (YAML 1.1)."
        insert = text if where.spaced or where.format == "json" else " " + text
        filt = text if where.quote else plain
        out.append(Candidate(text, "value", insert, where.start, where.end, "", doc, sort=f"0{i:03d}", filter=filt))
    return out


def _field_detail(f: Field, cls: str, fmt: str) -> str:
    default = "" if f.required else f" = {_scalar(f.default, fmt)}"
    return f"{f.type}{default}" + ("" if cls in (releases.BASE_CLASS, releases.SEQ2SEQ_CLASS) else f" · {cls}")


def _argument_keys(where: Where, tv: str | None, trl: str | None) -> list[Candidate]:
    out: list[Candidate] = []
    table = arguments_fields(where.present, tv, trl)
    for name in sorted(table):
        if name in where.present:
            continue
        f, cls = table[name]
        out.append(
            Candidate(
                name,
                "section" if name == FSDP_FIELD else "key",
                _key_insert(where, name, name == FSDP_FIELD),
                where.start,
                where.end,
                _field_detail(f, cls, where.format),
                field_markdown(name, tv, trl, cls, where.format) or "",
                sort="1" + name,
            )
        )
    return out


def fsdp_keys_offered(version: int, tv: str | None) -> list[str]:
    """The ``fsdp_config`` keys the release reads under that FSDP version, each in both spellings."""
    keys = sorted(k for k in fields.fsdp_keys(tv) if version == 1 or k not in fields.FSDP1_ONLY)
    return [spelled for k in keys for spelled in (k, PREFIX + k)]


def _fsdp_keys(where: Where, version: int, tv: str | None) -> list[Candidate]:
    present = {k.removeprefix(PREFIX) for k in where.present}
    out: list[Candidate] = []
    for i, name in enumerate(fsdp_keys_offered(version, tv)):
        key = name.removeprefix(PREFIX)
        if key in present:
            continue
        sets = fsdp.plugin_fields_set(key, version)
        detail = f"sets {registry.FSDP}.{sets[0]}" if sets else "read by TrainingArguments"
        md = fsdp_key_markdown(name, version, tv, where.format)
        out.append(
            Candidate(
                name, "key", _key_insert(where, name, False), where.start, where.end, detail, md, sort=f"1{i:03d}"
            )
        )
    return out


def complete_trainer(
    text: str,
    line: int,
    col: int,
    kind: str,
    transformers_version: str | None = None,
    trl_version: str | None = None,
    path: str = "",
) -> list[Candidate]:
    """Completion candidates at 0-based (line, col) in a file of ``kind`` (``trainer-args`` or
    ``fsdp-config``): fields and ``fsdp_config`` keys not yet present, and the values of a field
    or key that has a fixed set of them."""
    if kind not in COMPLETED:
        return []
    where = context_at(text, line, col, path=path)
    in_fsdp = _fsdp_mapping(where, kind)
    if where.part == "key":
        if in_fsdp:
            return _fsdp_keys(
                where, fsdp_version_at(text, where, kind, transformers_version, path), transformers_version
            )
        return _argument_keys(where, transformers_version, trl_version) if not where.path else []
    if where.part != "value" or where.key is None:
        return []
    if in_fsdp:
        version = fsdp_version_at(text, where, kind, transformers_version, path)
        return _values(fsdp.key_values(where.key.removeprefix(PREFIX), version), where)
    if where.path:
        return []
    got = arguments_fields(where.present, transformers_version, trl_version).get(where.key)
    if got is None:
        return []
    version = fsdp_version_at(text, Where(where.format, line, (FSDP_FIELD,), "key"), kind, transformers_version, path)
    return _values(field_values(got[0], version), where)


# -- hover ---------------------------------------------------------------------------------------


def _span_text(history: tuple[Field, ...], part: str = "transformers") -> str:
    known = releases.RELEASES if part == "transformers" else releases.TRL_RELEASES
    first, until = history[0].since, history[-1].until
    if until is None:
        return f"{part} {first}+"
    last = known[known.index(until) - 1] if until in known and known.index(until) > 0 else until
    return f"{part} {first} to {last}; removed in {until}"


def _form_rows(f: Field, fmt: str) -> list[str]:
    rows = [f"- **Type:** `{f.type}`"]
    rows.append("- **Default:** none: required" if f.required else f"- **Default:** `{_scalar(f.default, fmt)}`")
    if f.choices:
        rows.append("- **Allowed:** " + ", ".join(f"`{_scalar(c, fmt)}`" for c in f.choices))
    return rows


def field_markdown(name: str, tv: str | None, trl: str | None, cls: str = "", fmt: str = "yaml") -> str | None:
    """The hover text of an arguments field: type, default, allowed values and help in the target
    release (or the TRL class's own form), and the releases that know it or the one that removed it."""
    trl_cls = cls if cls and cls not in (releases.BASE_CLASS, releases.SEQ2SEQ_CLASS) else None
    own = releases.trl_field_history(trl_cls, name) if trl_cls else ()
    history = releases.field_history(name)
    if not own and not history:
        return None
    current = releases.trl_fields(trl_cls, trl, tv).get(name) if trl_cls else releases.fields(tv).get(name)
    where_from = trl_cls or releases.field_class(name)
    form = current or (own or history)[-1]
    text = releases.field_help(name, trl_cls)
    out = [f"**{name}** · {where_from} · {form.type}"] + (["", text] if text else [])
    rows = _form_rows(form, fmt)
    if own:
        rows.append(f"- **Releases:** {_span_text(own, 'trl')} ({trl_cls})")
    if history:
        rows.append(f"- **Releases:** {_span_text(history)}")
    if len(history) > 1:  # the type, default or choices changed between releases
        rows.append(
            "- **Forms:** " + "; ".join(f"{h.since}+ `{h.type}` = `{_scalar(h.default, fmt)}`" for h in history)
        )
    rename = releases.renamed(name)
    if rename is not None:
        how = "the value as written" if rename.value_carries else f'"{rename.message}"'
        label = "Renamed" if rename.value_carries else "Replaced by"
        rows.append(
            f"- **{label}:** `{rename.new}` from transformers {rename.removed_in} "
            f"(transformers {rename.last}'s deprecation message; {how})"
        )
    if current is None:
        gone = releases.removed(name)
        why = f"removed in transformers {gone[1]} (last in {gone[0]})" if gone else "not in this release"
        if rename is not None:
            why += f"; write `{rename.new}`"
        rows.insert(0, f"- ⚠ **Not a field of transformers {fields.version(tv)}:** {why}")
    return "\n".join(out + [""] + rows)


def _fsdp_key_rows(key: str, version: int, tv: str | None, fmt: str) -> list[str]:
    rows: list[str] = []
    sets = fsdp.plugin_fields_set(key, version)
    if sets:
        rows.append("- **Sets:** " + ", ".join(f"`{registry.FSDP}.{s}`" for s in sets) + f" (FSDP{version})")
    elif key in fields.FSDP1_ONLY and version == 2:
        rows.append(
            "- **Ignored under FSDP2:** only the FSDP1 branch of `_process_fsdp_args` reads it; "
            + _rule("trainer-fsdp-version-key")
        )
    elif key.startswith("xla"):
        rows.append("- **Read by:** the torch_xla FSDP path (`xla: true`), not accelerate's plugin")
    values = fsdp.key_values(key, version)
    if values:
        rows.append("- **Allowed:** " + ", ".join(f"`{_scalar(v, fmt)}`" for v in values))
    spans = releases.fsdp_key_history(key)
    if spans:
        first, until = spans[0][0], spans[-1][1]
        rows.append(
            f"- **Releases:** transformers {first}+"
            if until is None
            else f"- **Releases:** transformers {first} to before {until}"
        )
    return rows


def _rule(rule_id: str) -> str:
    rule = catalogue.get(rule_id)
    return f"`{rule_id}`: {rule.why}" if rule is not None else f"`{rule_id}`"


def fsdp_key_markdown(name: str, version: int, tv: str | None, fmt: str = "yaml") -> str:
    """What transformers (and accelerate's plugin) does with a key of ``fsdp_config``."""
    key = name.removeprefix(PREFIX)
    head = f"**{name}** · `fsdp_config` · FSDP{version}"
    out = [head, ""]
    if name != key:
        out += [
            f"Read as `{key}`: `_process_fsdp_args` drops the `{PREFIX}` prefix "
            f"(the prefixed key wins over `{key}` beside it).",
            "",
        ]
    if key in fields.fsdp_keys(tv):
        return "\n".join(out + _fsdp_key_rows(key, version, tv, fmt))
    if key in fsdp.ACCELERATE_NAMES:
        target = fsdp.ACCELERATE_NAMES[key]
        out.append(
            f"accelerate's name: transformers {fields.version(tv)} never reads it; it reads `{target}`. "
            + _rule("trainer-fsdp-accelerate-name")
        )
    elif key in fsdp.ACCELERATE_CONFIG_KEYS or name in fsdp.ACCELERATE_CONFIG_KEYS:
        out.append(
            "A key of an accelerate config: transformers never reads it here. "
            + _rule("trainer-fsdp-accelerate-config")
        )
    else:
        out.append(f"transformers {fields.version(tv)} never reads this key: silently ignored.")
    return "\n".join(out)


def hover_trainer(
    text: str,
    line: int,
    col: int,
    kind: str,
    transformers_version: str | None = None,
    trl_version: str | None = None,
    path: str = "",
) -> str | None:
    """Markdown for the field or ``fsdp_config`` key at 0-based (line, col); ``None`` elsewhere."""
    if kind not in KINDS:
        return None
    where, _raw = named_at(text, line, context_at(text, line, col, path=path))
    if where.part == "none" or not where.key:
        return None
    if _fsdp_mapping(where, kind):
        version = fsdp_version_at(text, where, kind, transformers_version, path)
        return fsdp_key_markdown(where.key, version, transformers_version, where.format)
    if where.path:
        return None
    got = arguments_fields(where.present, transformers_version, trl_version).get(where.key)
    cls = got[1] if got is not None else ""
    return field_markdown(where.key, transformers_version, trl_version, cls, where.format)


# The language server's settings naming the target releases, as --transformers-version / --trl-version.
SETTINGS = {"transformersVersion": "transformers", "trlVersion": "trl"}


def release_setting(name: str, value: Any) -> tuple[str | None, str | None]:
    """A release setting's value as the minor release it names (``None``: the installed release,
    else the newest known, as the CLI's default), and the message when it is refused."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None, None
    part = SETTINGS[name]
    if not isinstance(value, str):
        return None, f'accelconf.{name} {value!r} is not a version such as "{releases.NEWEST}"; using the default'
    try:
        return releases.resolve(value, part), None
    except releases.UnknownRelease as exc:
        return None, f"accelconf.{name}: {exc}; using the installed {part} (else the newest known)"


__all__ = [
    "COMPLETED",
    "SETTINGS",
    "KINDS",
    "arguments_fields",
    "complete_trainer",
    "field_markdown",
    "field_values",
    "fsdp_key_markdown",
    "fsdp_keys_offered",
    "fsdp_version_at",
    "hover_trainer",
    "release_setting",
]
