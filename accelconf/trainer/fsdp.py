"""Checks of ``fsdp`` and ``fsdp_config`` as ``TrainingArguments._process_fsdp_args`` reads them.

transformers 5.x: an ``fsdp_config`` key with an ``fsdp_`` prefix is renamed without it, the
prefixed one overwriting an unprefixed twin; ``version`` defaults to 2 (FSDP2), and only the
FSDP1 branch reads ``forward_prefetch``, ``backward_prefetch``, ``use_orig_params``,
``sync_module_states`` and ``limit_all_gathers``; any other key is never read. A legacy ``fsdp``
string is split into options: a sharding strategy sets ``reshard_after_forward`` with
``setdefault`` (the first one, or ``fsdp_config``'s own value, wins), ``offload`` sets
``cpu_offload``, ``auto_wrap`` does nothing, any other word raises ``ValueError``.
"""

from __future__ import annotations

import json
from typing import Any

from accelconf.findings import Finding
from accelconf.kinds import ACCELERATE_MARKERS
from accelconf.text.suggest import ranked
from accelconf.trainer import fsdp_plugin
from accelconf.trainer.args import Arg
from accelconf.trainer.fields import FSDP1_ONLY, fsdp_keys

# accelerate's FSDP plugin constants (accelerate/utils/constants.py), which transformers checks against.
SHARDING = ("full_shard", "shard_grad_op", "no_shard", "hybrid_shard", "hybrid_shard_zero2")
FSDP2_SHARDING = ("full_shard", "shard_grad_op")
OPTIONS = SHARDING + ("offload", "auto_wrap")
WRAP_POLICIES = ("TRANSFORMER_BASED_WRAP", "SIZE_BASED_WRAP", "NO_WRAP")
STATE_DICT_TYPES = ("FULL_STATE_DICT", "LOCAL_STATE_DICT", "SHARDED_STATE_DICT")
# accelerate's names for a setting transformers reads under another key (or not at all).
ACCELERATE_NAMES = {
    "offload_params": "cpu_offload",
    "sharding_strategy": "reshard_after_forward",
    "reshard_after_forward": "reshard_after_forward",
}
# keys that mark an accelerate config (or its fsdp_config section) pasted as a Trainer fsdp_config:
# the recogniser's markers (identity keys and sections) and the launch settings every config has
ACCELERATE_CONFIG_KEYS = frozenset(ACCELERATE_MARKERS) | {"num_processes", "mixed_precision"}


def _f(rule: str, severity: str, message: str, a: Arg, key: str, value: bool = False) -> Finding:
    line, col = a.value_position if value else (a.line, a.column)
    return Finding(rule, severity, message, key, line, col, end_line=a.end_line, end_column=a.end_column)  # type: ignore[arg-type]


def config_entries(value: Any, arg: Arg) -> list[Arg] | None:
    """The keys of an ``fsdp_config`` value (a mapping, or a JSON string starting with ``{`` as
    ``__post_init__`` parses it), each with a position; None for a path or no mapping."""
    if arg.children:
        return list(arg.children)
    if isinstance(value, str) and value.strip().startswith("{"):
        try:
            data = json.loads(value)
        except ValueError:
            return None
        value = data
    if isinstance(value, dict):
        return [
            Arg(
                str(k),
                v,
                arg.value_line or arg.line,
                arg.value_column or arg.column,
                arg.end_line,
                arg.end_column,
                str(k),
                arg.source,
            )
            for k, v in value.items()
        ]
    return None


def version_of(entries: list[Arg]) -> tuple[int, Arg | None]:
    """The FSDP version the config selects (``version`` after the prefix rule; default 2)."""
    chosen = None
    for e in entries:
        if e.name.removeprefix("fsdp_") == "version" and (chosen is None or e.name.startswith("fsdp_")):
            chosen = e
    if chosen is None:
        return 2, None
    try:
        return int(chosen.value), chosen
    except (TypeError, ValueError):
        return 2, chosen


def check_config(entries: list[Arg], where: str, fsdp_on: bool) -> list[Finding]:
    """Findings of one ``fsdp_config`` mapping's keys (``where`` names it in messages)."""
    out: list[Finding] = []
    version, _ = version_of(entries)
    vtext = f"FSDP{version}" + (
        ""
        if any(e.name.removeprefix("fsdp_") == "version" for e in entries)
        else " (no `version` is set: transformers 5.x defaults to 2)"
    )
    names = [e.name for e in entries]
    for e in entries:
        key = e.name.removeprefix("fsdp_")
        k = f"{where}.{e.name}"
        if e.name != key and key in names:
            out.append(
                _f(
                    "trainer-fsdp-prefix-collision",
                    "warning",
                    f"`{e.name}` and `{key}` are both given: transformers drops the `fsdp_` prefix and the prefixed "
                    "one "
                    f"overwrites `{key}` ({e.value!r} wins)",
                    e,
                    k,
                )
            )
        out += _key_checks(e, key, k, entries, version, vtext)
    if entries and not fsdp_on:
        first = entries[0]
        out.append(
            _f(
                "trainer-fsdp-config-unused",
                "warning",
                f"`{where}` is read only when `fsdp` is set; without it TrainingArguments ignores every key",
                first,
                where,
            )
        )
    return out


def _key_checks(e: Arg, key: str, k: str, entries: list[Arg], version: int, vtext: str) -> list[Finding]:
    """One key: accelerate's config or name, unknown, FSDP1-only under FSDP2, else its value."""
    if key in ACCELERATE_CONFIG_KEYS or e.name in ACCELERATE_CONFIG_KEYS:
        return [
            _f(
                "trainer-fsdp-accelerate-config",
                "warning",
                f"`{e.name}` belongs to an accelerate config, not a Trainer `fsdp_config`: TrainingArguments "
                "never reads "
                "it, so this configures nothing; give the keys transformers reads (cpu_offload, version, ...) at "
                "the top",
                e,
                k,
            )
        ]
    if key in ACCELERATE_NAMES and key not in fsdp_keys():
        target = ACCELERATE_NAMES[key]
        what = " offload is silently off" if key == "offload_params" else ""
        return [
            _f(
                "trainer-fsdp-accelerate-name",
                "warning",
                f"`{e.name}` is accelerate's name: TrainingArguments reads `{target}` and never this key;{what}"
                if what
                else f"`{e.name}` is accelerate's name: TrainingArguments reads `{target}` and never this key",
                e,
                k,
            )
        ]
    if key not in fsdp_keys():
        guess = ranked(key, fsdp_keys(), fold_case=True, abbreviations=True)
        hint = f"; did you mean `{guess[0]}`?" if guess else ""
        return [
            _f(
                "trainer-fsdp-unknown-key",
                "warning",
                f"`{e.name}` is not a key TrainingArguments reads from `fsdp_config`: silently ignored{hint}",
                e,
                k,
            )
        ]
    if key in FSDP1_ONLY and version == 2:
        return [
            _f(
                "trainer-fsdp-version-key",
                "warning",
                f"`{e.name}` is read only by FSDP1; {vtext} runs and ignores it",
                e,
                k,
            )
        ]
    return _value_checks(key, e, k, entries, version)


# The keys _process_fsdp_args reads with its str_to_bool (str(value).lower()), per FSDP version read.
BOOL_KEYS: dict[str, tuple[int, ...]] = {
    "cpu_ram_efficient_loading": (1, 2),
    "activation_checkpointing": (1, 2),
    "reshard_after_forward": (2,),
    "forward_prefetch": (1,),
    "use_orig_params": (1,),
    "sync_module_states": (1,),
    "limit_all_gathers": (1,),
}
_TRUTH = ("y", "yes", "t", "true", "on", "1", "n", "no", "f", "false", "off", "0")


def _value_checks(key: str, e: Arg, k: str, entries: list[Arg], version: int) -> list[Finding]:
    return _invalid_values(key, e, k, version) + _combinations(key, e, k, entries, version)


def _invalid_values(key: str, e: Arg, k: str, version: int) -> list[Finding]:
    """Values TrainingArguments or accelerate's FSDP plugin refuse."""
    out: list[Finding] = []
    if version in BOOL_KEYS.get(key, ()) and str(e.value).lower() not in _TRUTH:
        hint = (
            " (a sharding strategy is FSDP1's form: FSDP2 takes true/false)" if key == "reshard_after_forward" else ""
        )
        out.append(
            _f(
                "trainer-fsdp-invalid-value",
                "error",
                f"`{e.name}: {e.value}` is not a truth value{hint}: TrainingArguments raises ValueError (invalid "
                "truth value) at construction",
                e,
                k,
                value=True,
            )
        )
    if key == "reshard_after_forward" and version == 1 and str(e.value).lower() in _TRUTH:
        out.append(
            _f(
                "trainer-fsdp-invalid-value",
                "error",
                f"`{e.name}: {e.value}` is FSDP2's form; FSDP1 reads a sharding strategy here ({', '.join(SHARDING)}): "
                "accelerate's FSDP plugin raises KeyError when the Trainer builds it (Trainer init)",
                e,
                k,
                value=True,
            )
        )
    if key == "auto_wrap_policy" and e.value not in WRAP_POLICIES:
        out.append(
            _f(
                "trainer-fsdp-invalid-value",
                "error",
                f"`{e.name}: {e.value}` must be one of {', '.join(WRAP_POLICIES)}: TrainingArguments raises "
                "ValueError at construction",
                e,
                k,
                value=True,
            )
        )
    if key == "state_dict_type" and str(e.value).upper() not in STATE_DICT_TYPES and not str(e.value).isdigit():
        out.append(
            _f(
                "trainer-fsdp-invalid-value",
                "error",
                f"`{e.name}: {e.value}` is not one of {', '.join(STATE_DICT_TYPES)}: accelerate's FSDP plugin raises "
                "KeyError when the Trainer builds it (Trainer init)",
                e,
                k,
                value=True,
            )
        )
    return out


def _combinations(key: str, e: Arg, k: str, entries: list[Arg], version: int) -> list[Finding]:
    """A key that another key of the mapping silences or overrides."""
    out: list[Finding] = []
    given = {x.name.removeprefix("fsdp_"): x for x in entries}
    if key == "min_num_params" and "transformer_layer_cls_to_wrap" in given:
        policy = str(given["auto_wrap_policy"].value) if "auto_wrap_policy" in given else WRAP_POLICIES[0]
        unused = "min_num_params" if policy != "SIZE_BASED_WRAP" else "transformer_layer_cls_to_wrap"
        out.append(
            _f(
                "trainer-fsdp-wrap-conflict",
                "warning",
                f"`min_num_params` and `transformer_layer_cls_to_wrap` are both given: with auto_wrap_policy {policy} "
                f"transformers passes only one, `{unused}` is silently ignored",
                e,
                k,
            )
        )
    if (
        key == "sync_module_states"
        and version == 1
        and not _truth(e.value)
        and _truth(given.get("cpu_ram_efficient_loading"))
    ):
        out.append(
            _f(
                "trainer-fsdp-sync-states",
                "warning",
                "`sync_module_states: false` with `cpu_ram_efficient_loading`: accelerate's FSDP1 plugin warns and "
                "sets "
                "sync_module_states to True (Trainer init)",
                e,
                k,
                value=True,
            )
        )
    return out


def _truth(v: Any) -> bool:
    if isinstance(v, Arg):
        v = v.value
    return str(v).lower() in ("true", "1", "yes", "y", "t")


def check_option_string(arg: Arg, entries: list[Arg]) -> list[Finding]:
    """The legacy ``fsdp`` option string (or list) as ``_apply_legacy_fsdp_to_config`` splits it."""
    value = arg.value
    if value is True or value is None or value is False or value == "":
        return []
    items = value.split() if isinstance(value, str) else [str(x) for x in value] if isinstance(value, list) else None
    if items is None:
        return []
    version, _ = version_of(entries)
    out: list[Finding] = []
    strategies = []
    for item in items:
        if item.upper() in (s.upper() for s in SHARDING):
            strategies.append(item)
            if version == 2 and item not in FSDP2_SHARDING:
                out.append(
                    _f(
                        "trainer-fsdp-option",
                        "error",
                        f"`fsdp: {item}` is only available with FSDP1 and FSDP2 runs (no `fsdp_config` version 1): "
                        "TrainingArguments raises ValueError at construction",
                        arg,
                        "fsdp",
                        value=True,
                    )
                )
        elif item not in OPTIONS:
            guess = ranked(item, OPTIONS, fold_case=True, abbreviations=True)
            hint = f"; did you mean `{guess[0]}`?" if guess else ""
            what = (
                " (a boolean `fsdp` is `fsdp: true` unquoted, or `--fsdp` alone)"
                if item.lower() in ("true", "false")
                else hint
            )
            out.append(
                _f(
                    "trainer-fsdp-option",
                    "error",
                    f"`{item}` is not an `fsdp` option ({', '.join(OPTIONS)}): TrainingArguments raises ValueError at "
                    f"construction{what}",
                    arg,
                    "fsdp",
                    value=True,
                )
            )
    if len(strategies) > 1:
        out.append(
            _f(
                "trainer-fsdp-option-conflict",
                "warning",
                f"`fsdp` names {len(strategies)} sharding strategies ({', '.join(strategies)}): transformers keeps "
                "the first "
                f"({strategies[0]}) and silently drops the others",
                arg,
                "fsdp",
                value=True,
            )
        )
    if strategies and any(e.name.removeprefix("fsdp_") == "reshard_after_forward" for e in entries):
        out.append(
            _f(
                "trainer-fsdp-option-conflict",
                "warning",
                f"`fsdp: {strategies[0]}` and `fsdp_config.reshard_after_forward` are both given: the fsdp_config "
                "value "
                "wins, the strategy is silently dropped",
                arg,
                "fsdp",
                value=True,
            )
        )
    return out


def read_version(entries: list[Arg], requested: str | None = None) -> int:
    """The FSDP version an ``fsdp_config`` runs under in that transformers release: the one it selects
    where the release reads ``version`` (5.x), else 1 (4.x builds FSDP1 only)."""
    return version_of(entries)[0] if "version" in fsdp_keys(requested) else 1


def key_values(key: str, version: int) -> tuple[Any, ...]:
    """The values an ``fsdp_config`` key takes under that FSDP version, as ``_process_fsdp_args``
    and accelerate's plugin read them (empty for a key of free value: a number, class names)."""
    if version in BOOL_KEYS.get(key, ()) or key in ("cpu_offload", "xla", "xla_fsdp_v2", "xla_fsdp_grad_ckpt"):
        return (True, False)
    table: dict[str, tuple[Any, ...]] = {
        "version": (2, 1),
        "auto_wrap_policy": WRAP_POLICIES,
        "state_dict_type": fsdp_plugin.FSDP2_STATE_DICTS if version == 2 else STATE_DICT_TYPES,
        "backward_prefetch": fsdp_plugin.BACKWARD if version == 1 else (),
        "reshard_after_forward": tuple(s.lower() for s in fsdp_plugin.SHARDING) if version == 1 else (),
    }
    return table.get(key, ())


def plugin_fields_set(key: str, version: int) -> tuple[str, ...]:
    """The ``FullyShardedDataParallelPlugin`` fields a key of ``fsdp_config`` sets under that FSDP
    version: found by building the plugin arguments (:func:`fsdp_plugin.plugin_args`, the model of
    ``_process_fsdp_args``) with the key given and reading which fields it was the source of."""
    samples = key_values(key, version) or {"min_num_params": (1,), "transformer_layer_cls_to_wrap": (["Block"],)}.get(
        key, ()
    )
    if not samples:
        return ()
    got: set[str] = set()
    for policy in WRAP_POLICIES[:2]:
        cfg = {"version": version, "auto_wrap_policy": policy, key: samples[0]}
        try:
            built = fsdp_plugin.plugin_args(True, cfg)
        except fsdp_plugin.TrainerRaises:
            continue
        if built is not None:
            got |= {f for f, src in built[1].items() if src == f"fsdp_config.{key}"}
    return tuple(sorted(got))


__all__ = [
    "check_config",
    "check_option_string",
    "config_entries",
    "key_values",
    "plugin_fields_set",
    "read_version",
    "version_of",
]
