"""The value rules: what is wrong with one setting's value at one accelerate release.

Each rule is a function of the setting, its :class:`~accelconf.accelerate.model.Entry` and the
release, over the :class:`~accelconf.accelerate.model.Config` any reader builds (a YAML file, env
vars, launch flags, Python kwargs): it returns :class:`Problem` s, which know nothing of a document.
validate's YAML path (:mod:`accelconf.accelerate.validate.values` and ``toplevel``) places them on
the document's nodes, with their text edits; :func:`accelconf.formats.value_findings` places them at
the entry's own flag, variable or keyword. How a file is written (duplicate keys, YAML 1.1 scalars,
quoting) stays with the document rules.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, NamedTuple

from accelconf import releases
from accelconf.accelerate import registry
from accelconf.accelerate.launch import machine_rank_outside
from accelconf.accelerate.model import Config, Entry, canonical
from accelconf.accelerate.registry import Setting
from accelconf.findings import SEVERITY_ORDER, Severity
from accelconf.text import suggest
from accelconf.text.scalars import yaml_scalar

# the value of Problem.fix_value when the problem has no mechanical repair
NO_FIX: Any = object()

# settings whose value has a rule of its own (below, and validate's toplevel rules)
OWN_RULES = frozenset({"mixed_precision", "distributed_type", "compute_environment"})


TORCHRUN_TYPES = frozenset(registry.MULTI_GPU_TYPES) | {"FSDP", "DEEPSPEED", "MEGATRON_LM"}


def null_counts(
    num_processes: Any, num_machines: Any, distributed_type: Any, written: Iterable[str], use_cpu: Any = False
) -> list[tuple[str, str]]:
    """(key, what fails) for each process count (or ``use_cpu``) written as null that stops the run.

    accelerate 1.15 copies a null from the file into the namespace unchanged
    (commands/launch.py ``_validate_launch_command``: only ``None`` attributes are filled, and null
    is ``None``). ``num_machines`` is then compared with 1 on every launch path (utils/launch.py
    ``num_machines > 1``): TypeError. ``num_processes`` reaches torchrun as ``--nproc_per_node None``
    (``prepare_multi_gpu_env``, ``prepare_deepspeed_cmd_env``), which torch.distributed.run refuses;
    the simple launcher only tests it for truth, so 'NO' and MULTI_CPU run one process. That launcher
    exports ``str(args.cpu or args.use_cpu)`` as ACCELERATE_USE_CPU, ``"None"`` for a null, which
    ``str_to_bool`` refuses (the launcher itself from 1.15, ``AcceleratorState`` in every release);
    torchrun's paths do not export it.
    """
    keys = set(written)
    out = []
    if "num_machines" in keys and num_machines is None:
        out.append(
            (
                "num_machines",
                "`num_machines: null`: accelerate launch raises TypeError ('>' not supported between "
                "instances of 'NoneType' and 'int'); write a number (1 for one machine) or delete the key",
            )
        )
    if "num_processes" in keys and num_processes is None and distributed_type in TORCHRUN_TYPES:
        out.append(
            (
                "num_processes",
                "`num_processes: null`: accelerate launch passes `--nproc_per_node None` to torchrun, which "
                "refuses it (ValueError: Unsupported nproc_per_node value: None); write the total number of processes",
            )
        )
    if "use_cpu" in keys and use_cpu is None and distributed_type not in TORCHRUN_TYPES | {"XLA"}:
        out.append(
            (
                "use_cpu",
                "`use_cpu: null`: the simple launcher exports ACCELERATE_USE_CPU=None, which accelerate reads as a "
                "boolean and refuses (ValueError: invalid truth value none); write true or false, or delete the key",
            )
        )
    return out


def _quoted_number(v: Any) -> str | None:
    """The digits of a number written as a string, else None."""
    return v.strip() if isinstance(v, str) and v.strip().isdigit() else None


def quoted_counts(data: dict[str, Any], version: str | None = None) -> list[tuple[str, str, str]]:
    """(key, what fails, the number) for each launch count a config file writes as a string that
    stops `accelerate launch`.

    accelerate 1.15 loads the file with ``yaml.safe_load`` and copies its values into the namespace
    unchanged (commands/launch.py ``_validate_launch_command``), so ``'2'`` stays a string where the
    launcher compares and divides (utils/launch.py): ``num_machines > 1`` on every path; with
    use_cpu, the thread count's ``num_processes >= 1`` (commands/launch.py); the simple launcher's
    ``num_processes > 1`` (from 1.8 on several machines too: ``simple-launcher-processes-first``);
    torchrun's ``num_processes // num_machines`` on several machines (a single machine only passes
    ``str(num_processes)`` on, and so does the deepspeed launcher given a host filter, which takes
    no ``--num_gpus``); the port check ``is_port_in_use(main_process_port)`` of the main machine on
    the torchrun paths.
    Env vars and flags are strings by nature and the launcher's parser makes them numbers: only
    files are judged.
    """
    dt = data.get("distributed_type")
    n, machines = data.get("num_processes"), data.get("num_machines", 1)
    out = []
    quoted_machines, quoted_n = _quoted_number(machines), _quoted_number(n)
    if quoted_machines:
        out.append(("num_machines", "where it compares the count with 1", quoted_machines))
    torchrun = dt in TORCHRUN_TYPES
    several = machines > 1 if isinstance(machines, int) else int(quoted_machines or 1) > 1
    ds = data.get("deepspeed_config") if dt == "DEEPSPEED" else None
    # the deepspeed launcher (pdsh, nossh...) with a host filter takes no --num_gpus: nothing divides
    filtered = (
        isinstance(ds, dict)
        and ds.get("deepspeed_multinode_launcher", registry.DEFAULT_MULTINODE_LAUNCHER) != registry.STANDARD_LAUNCHER
        and any(ds.get(k) is not None for k in ("deepspeed_inclusion_filter", "deepspeed_exclusion_filter"))
    )
    cpu = bool(data.get("use_cpu"))  # tested for truth, as the launcher does
    if quoted_n and cpu:
        out.append(("num_processes", "where it compares the count with 1 to set the CPU threads", quoted_n))
    elif quoted_n and torchrun and several and not filtered:
        out.append(("num_processes", "where it divides the count by num_machines", quoted_n))
    elif quoted_n and not torchrun and (not several or releases.has(version, "simple-launcher-processes-first")):
        out.append(("num_processes", "where it compares the count with 1", quoted_n))
    port, rank = _quoted_number(data.get("main_process_port")), data.get("machine_rank", 0)
    main_machine = not several or str(rank).strip() == "0"
    if torchrun and port and main_machine:
        out.append(("main_process_port", "in the main machine's check that the port is free", port))
    return [
        (
            key,
            f"`{key}: '{v}'` is a string to accelerate (the quotes): accelerate launch raises TypeError "
            f"{error}; write the number unquoted",
            v,
        )
        for key, error, v in out
    ]


class Problem(NamedTuple):
    """One thing wrong with a value. ``fix_value``: the value that repairs it (written in the input's
    own spelling); ``fix_text``: literal text instead; ``like``: quote it as the value was quoted."""

    rule: str
    severity: Severity
    message: str
    suggestion: str | None = None
    fix_value: Any = NO_FIX
    fix_text: str | None = None
    like: bool = False
    # a type problem of a plain scalar: where the file's YAML 1.1 reading explains it, yaml11-scalar
    # reports it once instead
    scalar_type: bool = False


def _is_bool_like(v: Any) -> bool:
    return isinstance(v, bool) or (
        isinstance(v, str) and v.strip().lower() in registry.TRUE_WORDS | registry.FALSE_WORDS
    )


def _number_type(t: str, v: Any) -> str | None:
    if t == "int":
        if isinstance(v, bool) or not isinstance(v, int):
            return None if isinstance(v, str) and v.strip().lstrip("-").isdigit() else "an integer"
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        if isinstance(v, str):
            try:
                float(v)
                return None
            except ValueError:
                pass
        return "a number"
    return None


def expect_type(s: Setting, v: Any) -> str | None:
    """What the value's type should be (``"an integer"``...), or None when it fits the setting's type
    (strings of numbers and truth words fit: env vars and flags carry nothing else)."""
    if v is None:
        return None
    if s.type in ("int", "float"):
        return _number_type(s.type, v)
    expected = {
        "bool": (_is_bool_like(v), "a boolean"),
        "str": (isinstance(v, str), "a string"),
        "path": (isinstance(v, str), "a string"),
        "classlist": (isinstance(v, str), "a string"),
        "list": (isinstance(v, (list, tuple)), "a list"),
        "section": (isinstance(v, dict), "a mapping"),
    }.get(s.type)
    return None if expected is None or expected[0] else expected[1]


def section_unused(cfg: Config, section: str) -> bool:
    """Whether the launcher ignores this whole section for this config."""
    if section not in registry.SECTIONS or cfg.get("distributed_type") not in registry.DISTRIBUTED_TYPES:
        return False  # a distributed_type accelerate refuses (reported): nothing is known to be unused
    return not registry.section_active(section, cfg)


# FSDP2 never reads these (accelerate/utils/dataclasses.py FullyShardedDataParallelPlugin.__post_init__
# parses sharding_strategy only under ``if self.fsdp_version == 1``); the other FSDP1-only fields are
# still parsed on FSDP2, so a bad value fails there too.
UNREAD_ON_FSDP2 = frozenset({"fsdp_sharding_strategy"})


def has_no_effect(cfg: Config, s: Setting, version: str) -> bool:
    """A written setting that changes nothing: removed or too new for the version, never exported,
    ignored in a file, in a section the launcher does not use, or FSDP1-only and unread on FSDP2.
    Such a key gets one finding about that (from its own rule), never one about its value."""
    if not s.exists_in(version) or s.lost or s.file_ignored:
        return True
    if s.section and section_unused(cfg, s.section):
        return True
    return s.section == "fsdp_config" and s.key in UNREAD_ON_FSDP2 and cfg.fsdp_version() == 2


# -- one setting's value --------------------------------------------------------------------------


def entry_problems(s: Setting, e: Entry, version: str, cfg: Config, raw: str | None = None) -> list[Problem]:
    """The type and value problems of one entry (``raw``: how the value was written; by default as a
    file would write it). Nothing for a setting with a rule of its own, or one that has no effect
    (that is reported once, by its own rule)."""
    if s.path in OWN_RULES or has_no_effect(cfg, s, version):
        return []
    v = e.value
    special = _SPECIAL.get(s.key)
    if special is not None:
        return special(s, e, raw if raw is not None else yaml_scalar(v))
    if s.type == "section":
        return []
    if s.type == "enum" and s.choices:
        return enum_problems(s, e.written_key, v, version)
    wrong = _plain(s, e)
    if wrong:
        return wrong
    low = canonical(s, v)
    if s.minimum is not None and isinstance(low, (int, float)) and not isinstance(v, bool) and low < s.minimum:
        return [Problem("invalid-value", "error", f"`{e.written_key}` must be at least {s.minimum}")]
    return []


def _gpu_ids(s: Setting, e: Entry, raw: str) -> list[Problem]:
    v = e.value
    if v is None or isinstance(v, str):
        return []
    return [
        Problem(
            "invalid-type",
            "error",
            f"`gpu_ids: {raw}` is {type(v).__name__} for accelerate and crashes the launcher (no attribute 'split'); "
            f"write a string such as '{raw}'",
            suggestion=f"'{raw}'",
            fix_text=f"'{raw}'",
        )
    ]


def _layer_classes(s: Setting, e: Entry, raw: str) -> list[Problem]:
    if not isinstance(e.value, list):
        return _plain(s, e)
    return [
        Problem(
            "invalid-type",
            "error",
            "a YAML list here is exported as its Python repr (\"['A', 'B']\") and no class matches; write a "
            "comma-separated string",
            suggestion=",".join(str(x) for x in e.value),
        )
    ]


def _plain(s: Setting, e: Entry) -> list[Problem]:
    wrong = expect_type(s, e.value)
    if not wrong:
        return []
    sev: Severity = "error" if s.type in ("int", "float") else "warning"
    return [Problem("invalid-type", sev, f"`{e.written_key}` should be {wrong}, not {e.value!r}", scalar_type=True)]


def _linear_precision(s: Setting, e: Entry, raw: str) -> list[Problem]:
    v = e.value
    if isinstance(v, (list, tuple)):
        if len(v) == 3 and all(_is_bool_like(x) for x in v):
            return []
        return [
            Problem("invalid-value", "error", "`override_linear_precision` takes three booleans (fprop, dgrad, wgrad)")
        ]
    if isinstance(v, str):
        return [
            Problem(
                "invalid-type",
                "warning",
                f"`override_linear_precision: {v}` is a string: the launcher exports its first three characters, and "
                "TERecipeKwargs fails on them (invalid truth value); write a list [false, false, false]",
                suggestion="[false, false, false]",
            )
        ]
    return _plain(s, e)


def _reshard(s: Setting, e: Entry, raw: str) -> list[Problem]:
    return []  # depends on the FSDP version: see reshard_problems


_SPECIAL = {
    "gpu_ids": _gpu_ids,
    "fsdp_transformer_layer_cls_to_wrap": _layer_classes,
    "override_linear_precision": _linear_precision,
    "fsdp_reshard_after_forward": _reshard,
}


# -- enums ----------------------------------------------------------------------------------------


def _same(v: Any, c: Any) -> bool:
    return bool(v == c and type(v) is type(c))


def enum_problems(s: Setting, written_key: str, v: Any, version: str) -> list[Problem]:
    """An enum setting: one of its choices, a legacy value, a case variant, or a typo; then whether
    the value exists in the release."""
    choices = registry.enum_choices(s, version)
    if v is None:
        return []
    if s.key == "fsdp_sharding_strategy" and releases.has(version, "sharding-strategy-int"):
        return sharding_int_problems(v, version)
    if any(_same(v, c) for c in choices):
        found: list[Problem] = []
    elif any(_same(v, legacy) for legacy, _ in s.legacy_values):
        found = _legacy(s, written_key, v)
    elif isinstance(v, str) and any(isinstance(c, str) and c.lower() == v.lower() for c in choices):
        found = _case(s, written_key, v, version)
        if not s.case_insensitive:
            return found
    elif s.key == "zero_stage" and isinstance(v, str) and v.isdigit() and int(v) in choices:
        found = []
    else:
        return [_not_a_choice(written_key, v, s.choices or ())]  # (named as the newest release names them)
    if not registry.enum_exists(s, v, version):
        found.append(Problem("value-too-new", "error", f"`{written_key}: {v}` does not exist in accelerate {version}"))
    return found


def _legacy(s: Setting, written_key: str, v: Any) -> list[Problem]:
    # (integer sharding strategies of releases that read an integer went to sharding_int_problems)
    canon = s.canonical_value(v)
    if s.key == "fsdp_version":
        return []
    return [
        Problem(
            "legacy-value",
            "info",
            f"`{written_key}: {v}` means {canon}; accelerate writes the name",
            suggestion=str(canon),
            fix_value=canon,
        )
    ]


def _case(s: Setting, written_key: str, v: str, version: str) -> list[Problem]:
    """A choice written in another case: read as it (info) where the setting ignores case, refused
    (error) where it does not."""
    if s.case_insensitive:
        canon = s.canonical_value(v)
        if v == canon:
            return []
        if s.key == "fsdp_sharding_strategy" and not releases.has(version, "sharding-strategy-any-case"):
            message = f"`{v}` must be written `{canon}` for accelerate {version} (names are case-sensitive before 0.34)"
            return [Problem("enum-case", "error", message, suggestion=str(canon), fix_value=canon)]
        message = f"`{v}` works (any case); accelerate writes `{canon}`"
        return [Problem("enum-case", "info", message, suggestion=str(canon), fix_value=canon)]
    canon = next(c for c in s.choices or () if isinstance(c, str) and c.lower() == v.lower())
    sev: Severity = "error"
    extra = ""
    if s.key == "backend" and s.section == "fp8_config":
        extra = " (`Accelerator()` raises ValueError on a lowercase FP8 backend since 1.9)"
        sev = "error" if releases.has(version, "fp8-backend-enum") else "warning"
    return [Problem("enum-case", sev, f"`{written_key}: {v}` must be `{canon}`{extra}", str(canon), fix_value=canon)]


def _not_a_choice(written_key: str, v: Any, choices: tuple[Any, ...]) -> Problem:
    guess = None
    if isinstance(v, str):
        m = suggest.ranked(v.upper(), [str(c).upper() for c in choices], 1)
        if m:
            guess = next(str(c) for c in choices if str(c).upper() == m[0])
    shown = ", ".join(str(c) for c in choices)
    return Problem("invalid-value", "error", f"`{written_key}: {v}` is not one of {shown}", suggestion=guess)


def sharding_int_problems(v: Any, version: str) -> list[Problem]:
    """Before 0.26 FullyShardedDataParallelPlugin reads ShardingStrategy(int(FSDP_SHARDING_STRATEGY)):
    integers 1-5 (as the release knows them) work, a name fails when the plugin is built."""
    count = len(registry.SHARDING_STRATEGIES) if releases.has(version, "hybrid-shard") else 3
    text = str(v).strip()
    if not isinstance(v, bool) and text.isdigit() and 1 <= int(text) <= count:
        return []
    name = str(v).upper()
    number = registry.SHARDING_STRATEGIES.index(name) + 1 if name in registry.SHARDING_STRATEGIES else None
    message = (
        f"accelerate {version} reads the sharding strategy as an integer: "
        f"`{v}` makes FullyShardedDataParallelPlugin fail (int() of it) when training starts"
        + (f"; write {number} ({name})" if number else f"; write 1 to {count}")
    )
    if number is None:
        return [Problem("sharding-strategy-int", "error", message)]
    return [Problem("sharding-strategy-int", "error", message, str(number), fix_text=str(number))]


# -- the top-level settings with rules of their own ----------------------------------------------


def distributed_type_problems(v: Any, version: str, sagemaker: bool = False) -> list[Problem]:
    """A written ``distributed_type`` that is not a boolean (a YAML boolean is the document's
    yaml-bool-value rule): ``DistributedType(value)`` is case-sensitive (ValueError at load)."""
    if sagemaker:
        if v in registry.SAGEMAKER_DISTRIBUTED_TYPES:
            return []
        shown = ", ".join(registry.SAGEMAKER_DISTRIBUTED_TYPES)
        return [
            Problem("invalid-value", "error", f"`distributed_type: {v}` is not a SageMaker distributed type ({shown})")
        ]
    if not isinstance(v, str):
        return [Problem("invalid-type", "error", f"`distributed_type` must be a string, not {type(v).__name__}")]
    setting = registry.get("", "distributed_type")
    assert setting is not None
    if v in ("TPU", "TP") and v not in registry.DISTRIBUTED_TYPES:
        if registry.enum_exists(setting, v, version):
            return []
        renamed = "; it was renamed XLA in 0.28" if v == "TPU" else ""
        message = f"`distributed_type: {v}` does not exist in accelerate {version} (ValueError at load){renamed}"
        repl = "XLA" if v == "TPU" else "MULTI_GPU"
        return [Problem("legacy-value", "error", message, repl, fix_text=repl if v == "TPU" else None)]
    if v not in registry.DISTRIBUTED_TYPES:
        upper = v.upper()
        if upper in registry.DISTRIBUTED_TYPES:
            message = (
                f"`distributed_type: {v}` must be upper case: accelerate raises ValueError ('{v}' is not a valid "
                "DistributedType)"
            )
            return [Problem("enum-case", "error", message, upper, fix_value=upper, like=True)]
        guess = suggest.ranked(upper, registry.DISTRIBUTED_TYPES, 1)
        message = f"`distributed_type: {v}` is not one of {', '.join(registry.DISTRIBUTED_TYPES)}"
        return [Problem("invalid-value", "error", message, guess[0] if guess else None)]
    if not registry.enum_exists(setting, v, version):
        return [Problem("value-too-new", "error", f"`distributed_type: {v}` does not exist in accelerate {version}")]
    return []


def mixed_precision_problems(v: Any) -> list[Problem]:
    """A written ``mixed_precision`` that is neither null nor a boolean (a boolean is the document's
    yaml-bool-value rule): the launcher lower-cases it and refuses what is not a precision."""
    if v is None:
        return []
    if not isinstance(v, str):
        return [Problem("invalid-type", "error", f"`mixed_precision` must be one of {', '.join(registry.PRECISIONS)}")]
    low = v.lower()
    if low not in registry.PRECISIONS:
        guess = suggest.ranked(low, registry.PRECISIONS, 1)
        message = f"`mixed_precision: {v}` is not one of {', '.join(registry.PRECISIONS)} (ValueError at launch)"
        return [Problem("invalid-value", "error", message, guess[0] if guess else None)]
    if v != low:
        message = f"`mixed_precision: {v}` works (the launcher lowercases it); accelerate writes `{low}`"
        return [Problem("enum-case", "info", message, low, fix_value=low, like=True)]
    return []


# -- values judged with the FSDP version ----------------------------------------------------------


def reshard_problems(e: Entry, fsdp_version: int) -> list[Problem]:
    """``fsdp_reshard_after_forward`` under FSDP2: a boolean (the plugin's str_to_bool raises on a
    sharding strategy name; the boolean that name means is the repair)."""
    v = e.value
    if fsdp_version != 2 or _is_bool_like(v):
        return []
    as_bool = registry.FSDP2_RESHARD_OF_STRATEGY.get(str(v).upper())
    mapped = None if as_bool is None else str(as_bool).lower()
    message = (
        f"FSDP2 needs a boolean `fsdp_reshard_after_forward`, not {v!r} (the plugin raises ValueError: invalid truth "
        "value)"
    )
    return [Problem("fsdp2-reshard-bool", "error", message, mapped, fix_text=mapped)]


def state_dict_problems(e: Entry, fsdp_version: int) -> list[Problem]:
    """``fsdp_state_dict_type`` under FSDP2, which refuses LOCAL_STATE_DICT."""
    if fsdp_version != 2 or str(canonical(e.setting, e.value)).upper() != "LOCAL_STATE_DICT":
        return []
    return [
        Problem(
            "fsdp2-local-state-dict",
            "error",
            "FSDP2 does not support LOCAL_STATE_DICT (ValueError)",
            "SHARDED_STATE_DICT",
        )
    ]


# -- a whole Config, from any reader -------------------------------------------------------------


def _as_a_file(cfg: Config) -> Config:
    """The Config as the file it stands for reads: without a distributed_type it is 'NO' (the
    writers write that), so the sections it leaves unused are known."""
    if "distributed_type" in cfg.entries:
        return cfg
    view = Config(entries=dict(cfg.entries), unknown=cfg.unknown, sections=cfg.sections, source=cfg.source)
    view.set("distributed_type", "NO", origin="default")
    return view


def _top_problems(cfg: Config, path: str, e: Entry, version: str) -> list[Problem]:
    if path == "distributed_type" and not isinstance(e.value, bool):
        return distributed_type_problems(e.value, version)
    if path == "mixed_precision" and not isinstance(e.value, bool):
        return mixed_precision_problems(e.value)
    return []  # a boolean there is how a YAML file is written (the document's yaml-bool-value)


def _fsdp_problems(cfg: Config, path: str, e: Entry) -> list[Problem]:
    if section_unused(cfg, "fsdp_config"):
        return []
    if path == "fsdp_config.fsdp_reshard_after_forward":
        return reshard_problems(e, cfg.fsdp_version())
    if path == "fsdp_config.fsdp_state_dict_type":
        return state_dict_problems(e, cfg.fsdp_version())
    return []


def _layout_problems(cfg: Config) -> list[tuple[str, Problem]]:
    """Process counts written as null, and a machine rank that names no machine (validate's
    processes rule, for the keys one entry carries)."""
    n, machines = cfg.get("num_processes"), cfg.get("num_machines", 1)
    out = [
        (key, Problem("null-count", "error", message))
        for key, message in null_counts(n, machines, cfg.get("distributed_type"), cfg.entries, cfg.get("use_cpu"))
    ]
    whole = all(isinstance(v, int) and not isinstance(v, bool) for v in (n, machines))
    outside = machine_rank_outside(cfg.get("machine_rank", 0), machines) if whole and machines > 1 else None
    if outside:
        out.append(("machine_rank", Problem("multi-node", "error", outside)))
    return out


# The rules a Config from env vars, flags or kwargs is judged by. Not sharding-strategy-int: the
# readers of flags and env vars say what a release that takes only the strategy's number does with
# a name themselves (accelconf/formats/cli.py); nor legacy-value: they write the release's spelling.
INPUT_RULES = frozenset(
    {
        "invalid-value",
        "invalid-type",
        "enum-case",
        "value-too-new",
        "null-count",
        "multi-node",
        "fsdp2-reshard-bool",
        "fsdp2-local-state-dict",
    }
)


def _order(path: str) -> tuple[str, ...]:
    return tuple(path.split(".", 1))


def config_problems(cfg: Config, version: str) -> list[tuple[Entry, Problem]]:
    """The value problems (:data:`INPUT_RULES`) of a Config read from any format, with the entry each
    is about, in the order of the file it stands for (keys sorted, sections nested); infos left out
    (remarks about spelling are the file's, not the input's)."""
    view = _as_a_file(cfg)
    found: list[tuple[str, Problem]] = []
    for path, e in cfg.entries.items():
        s = e.setting
        if path.startswith("--") or s is None:
            continue
        if path in OWN_RULES:
            found += [(path, p) for p in _top_problems(view, path, e, version)]
            continue
        shown = e if e.written_key == s.key else Entry(e.path, e.value, s, s.key)
        found += [(path, p) for p in entry_problems(s, shown, version, view)]
        found += [(path, p) for p in _fsdp_problems(view, path, e)]
    found += [(key, p) for key, p in _layout_problems(view) if key in cfg.entries]
    found.sort(key=lambda kp: (_order(kp[0]), SEVERITY_ORDER[kp[1].severity], kp[1].rule))
    return [(cfg.entries[path], p) for path, p in found if p.severity != "info" and p.rule in INPUT_RULES]
