"""Python keyword arguments: ``Accelerator(...)`` and the plugin/kwargs classes accelerate builds.

Writer: a runnable snippet that builds, with explicit arguments, the same objects the training
process would build from the launcher's environment: it launches the config with
:func:`accelconf.accelerate.launch.launch_env` and turns every variable into the field that reads it, through
the registry's ``plugin`` column (``FSDP_OFFLOAD_PARAMS`` -> ``FullyShardedDataParallelPlugin.cpu_offload``).
Only fields the plugin actually reads for that configuration are written (FSDP1-only fields are left
out of an FSDP2 plugin, ``min_num_params`` only with size-based wrapping, ...), so the objects are
equal field by field; a key the input sets that is left out this way is a finding. Variables with no Python equivalent
(``CUDA_VISIBLE_DEVICES``,
``OMP_NUM_THREADS``, ``ACCELERATE_DEBUG_MODE``, ...) are findings.

Reader: parses the source with :mod:`ast` (never executes it); every call of a known class gives its
literal keyword arguments to the matching settings. Non-literal arguments are reported.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any

from accelconf.accelerate import registry
from accelconf.accelerate.launch import accelerator_env_entries, launch_env, resolve
from accelconf.accelerate.model import Config, Entry
from accelconf.errors import InputError
from accelconf.findings import Finding, Severity
from accelconf.formats import pynames
from accelconf.formats.env import decode
from accelconf.formats.pyvalues import _Call, _call_name, _Dtype, _evaluate, _Member, _NotRead
from accelconf.text import suggest

ACCELERATOR = "Accelerator"
# Accelerator keyword -> plugin class it takes.
PLUGIN_KWARGS = {
    "fsdp_plugin": registry.FSDP,
    "deepspeed_plugin": registry.DS,
    "dynamo_plugin": registry.DYN,
    "megatron_lm_plugin": registry.MEG,
    "parallelism_config": registry.PAR,
}
PARADIGM_OF_PLUGIN = {registry.FSDP: "FSDP", registry.DS: "DEEPSPEED", registry.MEG: "MEGATRON_LM"}
RECIPES = {"TE": registry.TE, "AO": registry.AO, "MSAMP": registry.MSAMP}
HANDLERS = {"TorchContextParallelConfig": "cp_handler", "DeepSpeedSequenceParallelConfig": "sp_handler"}
ENV_ONLY = (
    "CUDA_VISIBLE_DEVICES",
    "OMP_NUM_THREADS",
    registry.get("", "debug").env,  # type: ignore[union-attr]
    registry.get("", "enable_cpu_affinity").env,  # type: ignore[union-attr]
    "MASTER_ADDR",
    "MASTER_PORT",
    "KMP_AFFINITY",
    "KMP_BLOCKTIME",
    "PYTHONPATH",
    registry.CONFIG_DS_FIELDS_ENV,
)


def _env(section: str, key: str) -> str:
    """The variable the launcher writes for a setting (from the registry)."""
    s = registry.get(section, key)
    assert s is not None and s.env is not None, (section, key)
    return s.env


def _bool(raw: str) -> bool:
    return raw.strip().lower() in registry.TRUE_WORDS


def _value(s: registry.Setting, raw: str) -> Any:
    """An env string as an explicit Python argument of the field that reads it."""
    t = s.type
    if t in ("bool", "boolish"):
        return _bool(raw)
    if t == "classlist" and s.section == "fsdp_config":
        return [p for p in raw.split(",") if p]
    return decode(s, raw)  # numbers (and "None", an unset one) as the env reader decodes them


@dataclass
class _Kwargs:
    """The plugin kwargs being built from a launched environment, and the findings on it."""

    env: dict[str, str]
    written: frozenset[str]
    fsdp_version: int
    wrap_policy: str
    classes: dict[str, dict[str, Any]] = field(default_factory=dict)
    acc: dict[str, Any] = field(default_factory=dict)  # Accelerator kwargs
    findings: list[Finding] = field(default_factory=list)

    def lossy(self, severity: Severity, message: str, path: str) -> None:
        self.findings.append(Finding("convert.lossy", severity, message, path))

    def unread(self, s: registry.Setting, var: str, raw: str, why: str) -> None:
        """A variable the plugin does not read here: a finding when the input set its key."""
        if s.path in self.written:
            self.lossy("info", f"{var}={raw} is not read by {s.plugin}: {why}; not written", s.path)


def plugin_kwargs(
    env: dict[str, str], version: str, written: frozenset[str] = frozenset()
) -> tuple[dict[str, dict[str, Any]], dict[str, Any], list[Finding]]:
    """env -> ({class: {field: value}}, Accelerator kwargs, findings).

    ``written``: the setting paths the input set; a variable of one of them that the plugin does not
    read for this configuration (and so is not written) is a finding.
    """
    kw = _Kwargs(
        env,
        written,
        int(env.get(_env("fsdp_config", "fsdp_version"), "1") or 1),
        env.get(_env("fsdp_config", "fsdp_auto_wrap_policy"), "NO_WRAP").upper(),
    )
    fp8 = env.get(_env("", "mixed_precision")) == "fp8"
    backend = env.get(_env("fp8_config", "backend"))
    recipe = RECIPES.get(backend or "")
    wanted = _wanted_classes(env, recipe if fp8 else None)
    # ACCELERATE_FP8_OVERRIDE_{FPROP,DGRAD,WGRAD} -> the tuple (fprop, dgrad, wgrad) TERecipeKwargs
    # reads (utils/dataclasses.py), in that order, not the variables' sorted order
    override: dict[str, bool] = {}
    for var, raw in sorted(env.items()):
        if var.startswith(registry.FP8_OVERRIDE_PREFIX):
            override[var[len(registry.FP8_OVERRIDE_PREFIX) :]] = _bool(raw)
        else:
            _place_variable(kw, wanted, var, raw)
    if override and registry.TE in wanted:  # (the launcher exports them only with mixed_precision fp8)
        kw.classes.setdefault(registry.TE, {})["override_linear_precision"] = tuple(
            override.get(p, False) for p in registry.FP8_OVERRIDE_PARTS
        )
    if fp8 and not recipe:
        kw.lossy(
            "warning",
            f"fp8 backend {backend!r} has no recipe class: Accelerator picks one (no FP8 recipe kwargs written)",
            "fp8_config.backend",
        )
    if fp8 and backend == "MSAMP" and registry.DS in wanted:
        kw.lossy(
            "info",
            "MS-AMP under DeepSpeed is configured through the DeepSpeed plugin "
            "(enable_msamp/msamp_opt_level), read from the environment",
            "fp8_config.backend",
        )
    for cls in wanted:
        if cls in (registry.FSDP, registry.DS, registry.MEG, registry.DYN, registry.PAR):
            kw.classes.setdefault(cls, {})
    if env.get(registry.CONFIG_DS_FIELDS_ENV):
        kw.lossy(
            "info",
            "ACCELERATE_CONFIG_DS_FIELDS (the conflict check between accelerate's "
            "DeepSpeed keys and a DeepSpeed JSON file) has no Python argument",
            "deepspeed_config",
        )
    return kw.classes, kw.acc, kw.findings


def _wanted_classes(env: dict[str, str], fp8_recipe: str | None) -> set[str]:
    """The plugin/kwargs classes the training process builds from this environment."""
    wanted = set()
    if env.get(registry.USE_ENV["FSDP"]) == "true":
        wanted.add(registry.FSDP)
    if env.get(registry.USE_ENV["DEEPSPEED"]) == "true":
        wanted.add(registry.DS)
    if env.get(registry.USE_ENV["MEGATRON_LM"]) == "true":
        wanted.add(registry.MEG)
    if env.get(registry.USE_PARALLELISM_CONFIG_ENV) == "true":
        wanted |= {registry.PAR, "TorchContextParallelConfig", "DeepSpeedSequenceParallelConfig"}
    if _env("dynamo_config", "dynamo_backend") in env:
        wanted.add(registry.DYN)
    if fp8_recipe:
        wanted.add(fp8_recipe)
    return wanted


def _place_variable(kw: _Kwargs, wanted: set[str], var: str, raw: str) -> None:
    """Write one variable as the field that reads it, or say why it has none."""
    s = registry.by_env(var)
    if s is None or not s.plugin:
        _no_field(kw, s, var, raw)
        return
    cls, fld = s.plugin.split(".", 1)
    if cls == ACCELERATOR:
        if fld == "mixed_precision":
            kw.acc["mixed_precision"] = raw
        elif fld == "cpu" and _bool(raw):
            kw.acc["cpu"] = True
        return
    if cls not in wanted:
        return
    if cls == registry.FSDP:
        why = _fsdp_unread(kw, s, fld)
        if why:
            kw.unread(s, var, raw, why)
            return
    kw.classes.setdefault(cls, {})[fld] = _value(s, raw)
    if var == _env("deepspeed_config", "gradient_accumulation_steps") and raw.isdigit():
        kw.acc["gradient_accumulation_steps"] = int(raw)


def _no_field(kw: _Kwargs, s: registry.Setting | None, var: str, raw: str) -> None:
    """A variable no plugin field reads: environment-only, a paradigm switch, or read by nothing."""
    if var in ENV_ONLY or var.startswith("ACCELERATE_USE_"):
        if var in ENV_ONLY and var != registry.CONFIG_DS_FIELDS_ENV:
            kw.lossy("info", f"{var}={raw} has no Python argument; set it in the environment", s.path if s else var)
        return
    kw.lossy("info", f"{var}={raw} is read by nothing; dropped", var)


def _fsdp_unread(kw: _Kwargs, s: registry.Setting, fld: str) -> str | None:
    """Why the FSDP plugin does not read this field for this FSDP version and wrap policy (None: it does)."""
    fsdp_v, policy = kw.fsdp_version, kw.wrap_policy
    other_version = s.fsdp_versions == ((1,) if fsdp_v == 2 else (2,))
    if other_version or (fsdp_v == 1 and fld == "reshard_after_forward"):
        return f"FSDP{fsdp_v} does not use it"
    needs = {"transformer_cls_names_to_wrap": "TRANSFORMER_BASED_WRAP", "min_num_params": "SIZE_BASED_WRAP"}.get(fld)
    if needs and policy != needs:
        return f"auto_wrap_policy is {policy}"
    return None


def _fmt(value: Any) -> str:
    return repr(value)


def snippet(classes: dict[str, dict[str, Any]], acc: dict[str, Any], source: str = "") -> str:
    names = {
        registry.FSDP: "fsdp_plugin",
        registry.DS: "deepspeed_plugin",
        registry.DYN: "dynamo_plugin",
        registry.MEG: "megatron_lm_plugin",
        registry.PAR: "parallelism_config",
        registry.TE: "fp8_recipe",
        registry.AO: "fp8_recipe",
        registry.MSAMP: "fp8_recipe",
        "TorchContextParallelConfig": "cp_handler",
        "DeepSpeedSequenceParallelConfig": "sp_handler",
    }
    imports = sorted(classes)
    lines = [
        f'"""Accelerator arguments equivalent to {source or "the configuration"} (written by accelconf)."""',
        "from accelerate import Accelerator",
    ]
    if imports:
        lines.append(f"from accelerate.utils import {', '.join(imports)}")
    lines.append("")
    order = ["TorchContextParallelConfig", "DeepSpeedSequenceParallelConfig"] + [
        c for c in classes if c not in HANDLERS
    ]
    for cls in order:
        if cls not in classes:
            continue
        fields = dict(classes[cls])
        if cls == registry.PAR:
            for h, arg in HANDLERS.items():
                if h in classes:
                    fields[arg] = _Raw(arg)
        if not fields:
            lines.append(f"{names[cls]} = {cls}()")
            continue
        lines.append(f"{names[cls]} = {cls}(")
        lines.extend(f"    {k}={_fmt(v)}," for k, v in fields.items())
        lines.append(")")
    kwargs = dict(acc)
    for cls in classes:
        for kw, pc in PLUGIN_KWARGS.items():
            if pc == cls:
                kwargs[kw] = _Raw(names[cls])
        if cls in RECIPES.values():
            kwargs["kwargs_handlers"] = _Raw(f"[{names[cls]}]")
    lines.append("accelerator = Accelerator(")
    lines.extend(f"    {k}={_fmt(v)}," for k, v in kwargs.items())
    lines.append(")")
    return "\n".join(lines) + "\n"


class _Raw(str):
    def __repr__(self) -> str:
        return str(self)


def write(
    cfg: Config, *, version: str | None = None, fmt: str = "kwargs", machine_rank: int | None = None, **_: Any
) -> tuple[str, list[Finding]]:
    ver = resolve(version)
    result = launch_env(cfg, version=ver, machine_rank=machine_rank)
    classes, acc, findings = plugin_kwargs(result.env, ver, frozenset(cfg.entries))
    for e, arg in accelerator_env_entries(cfg):  # the launcher does not export it; the Accelerator reads it
        acc[arg] = e.value
    findings = [f for f in result.findings if f.rule != "launch.not-env"] + findings
    if result.mode in ("torchrun", "deepspeed") or result.env.get("MASTER_ADDR"):
        findings.append(
            Finding(
                "convert.lossy",
                "info",
                "the process layout (num_processes, machines, rendezvous) is not an "
                "Accelerator argument: start the script with accelerate launch or torchrun",
                "num_processes",
            )
        )
    return snippet(classes, acc, cfg.source), findings


# -- reader ---------------------------------------------------------------------------------------


def _to_config_value(s: registry.Setting, value: Any) -> Any:
    if s.type == "classlist" and isinstance(value, (list, tuple)):
        return ",".join(str(v) for v in value)
    return value


def _exported(module: str) -> frozenset[str] | None:
    """The public names of an accelerate module the reader has a table of (else None)."""
    return {"accelerate": pynames.ACCELERATE, "accelerate.utils": pynames.UTILS}.get(module)


def _unknown_names(tree: ast.AST, cfg: Config, aliases: dict[str, str]) -> set[str]:
    """Imports of names accelerate does not have are errors (Python raises ImportError); returns the
    local names they bind, so that calls of them are reported too. ``aliases`` receives the local
    name of every accelerate import (``import X as Y``: Y -> X)."""
    missing: set[str] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom) or node.module is None:
            continue
        names = _exported(node.module)
        if node.module.startswith("accelerate"):
            aliases.update({a.asname: a.name for a in node.names if a.asname})
        if names is None:
            continue
        for alias in node.names:
            if alias.name == "*" or alias.name in names:
                continue
            everything = pynames.ACCELERATE | pynames.UTILS
            guess = suggest.ranked(
                alias.name,
                [c for c in everything if c[:1].isupper()] if alias.name[:1].isupper() else everything,
                fold_case=True,
                abbreviations=True,
            )
            hint = f"; did you mean {', '.join(guess)}?" if guess else ""
            cfg.note(
                f"`{node.module}` has no `{alias.name}` (accelerate {pynames.VERSION}): the import raises "
                f"ImportError{hint}",
                "error",
                rule="kwargs.unknown-name",
                key=alias.name,
                line=node.lineno,
                column=node.col_offset + 1,
            )
            missing.add(alias.asname or alias.name)
    return missing


# -- values the reader understands without running the script ---------------------------------------


def _plain(value: Any) -> bool:
    """Whether a value holds nothing but literals (a config file can hold it as it is)."""
    if isinstance(value, dict):
        return all(_plain(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return all(_plain(v) for v in value)
    return not isinstance(value, (_Member, _Dtype, _Call))


# accelerate's FullyShardedDataParallelPlugin.set_mixed_precision: the dtype of each mixed_precision
# a config file can give (fp8 trains FSDP in bf16); fp32 is no top-level mixed_precision value
_PRECISION_OF_DTYPE = {"bfloat16": "bf16", "float16": "fp16"}
_DTYPE_OF_PRECISION = {"fp8": "bfloat16", "fp16": "float16", "bf16": "bfloat16", "fp32": "float32"}
# the policy classes of each FSDP version (utils/dataclasses.py validate_mixed_precision_policy,
# validate_cpu_offload raise ValueError for the other version's class)
_FSDP_VERSION_OF_CALL = {
    "MixedPrecision": 1,
    "CPUOffload": 1,
    "MixedPrecisionPolicy": 2,
    "CPUOffloadPolicy": 2,
    "OffloadPolicy": 2,
}


def _fsdp_version(node: ast.Call) -> int | None:
    """The literal ``fsdp_version`` of a plugin call (None: not given, so FSDP_VERSION of the launch
    decides, or not a literal)."""
    for kw in node.keywords:
        if kw.arg == "fsdp_version":
            try:
                return int(ast.literal_eval(kw.value))
            except (ValueError, SyntaxError, TypeError):
                return None
    return None


def _cannot(
    cfg: Config, cls: str, field_name: str, node: ast.AST, pos: dict[str, Any], why: str, severity: Severity = "warning"
) -> None:
    """A value no config file can hold: kept as written in ``Config.unknown``, with a finding saying why."""
    key = f"{cls}.{field_name}"
    cfg.unknown[key] = Entry(key, ast.unparse(node), None, field_name, **pos)
    cfg.note(
        f"{cls}({field_name}={ast.unparse(node)}) {why}",
        severity,
        rule="kwargs.no-config-value",
        key=key,
        line=pos["line"],
        column=pos["column"],
    )


def _member_setting(member: _Member) -> registry.Setting | None:
    """The FSDP setting whose values are this enum's members (ShardingStrategy -> fsdp_sharding_strategy)."""
    for s in registry.SETTINGS:
        if (
            s.plugin
            and s.plugin.startswith(registry.FSDP + ".")
            and s.choices
            and member.name.lstrip("_") in s.choices
            and s.canonical_value(member.number) == member.name.lstrip("_")
        ):
            return s
    return None


def _express(
    cfg: Config,
    cls: str,
    field_name: str,
    s: registry.Setting | None,
    value: Any,
    node: ast.AST,
    pos: dict[str, Any],
    fsdp_version: int | None,
) -> None:
    """A value holding torch objects, set as the config-file value accelerate's plugin turns into the
    same object, or reported with the nearest setting when no config file can give it."""
    if isinstance(value, _Member):
        # __post_init__ turns a name from the environment into the member through its number
        # (FSDP_SHARDING_STRATEGY.index(name) + 1): the member of that number is the same setting
        home = _member_setting(value)
        if s is not None and home is s:
            cfg.set(s.path, s.canonical_value(value.number), written_key=field_name, **pos)
            return
        near = f"; the nearest setting is `{home.path}: {home.canonical_value(value.number)}`" if home else ""
        _cannot(cfg, cls, field_name, node, pos, f"has no config-file value{near}")
        return
    if cls == registry.FSDP and field_name == "mixed_precision_policy":
        _policy(cfg, field_name, value, node, pos, fsdp_version)
        return
    if isinstance(value, _Call) and s is not None and s.key == "fsdp_offload_params":
        _offload(cfg, s, value, node, pos, fsdp_version)
        return
    near = f"; the nearest setting is `{s.path}`" if s is not None else ""
    _cannot(cfg, cls, field_name, node, pos, f"has no config-file value{near}")


def _version_mismatch(
    cfg: Config, field_name: str, call: _Call, node: ast.AST, pos: dict[str, Any], fsdp_version: int | None
) -> bool:
    """``MixedPrecision``/``CPUOffload`` are FSDP1's classes, the ``...Policy`` ones FSDP2's: accelerate
    raises ValueError for the other version's class."""
    want = _FSDP_VERSION_OF_CALL[call.cls]
    if fsdp_version is None or fsdp_version == want:
        return False
    _cannot(
        cfg,
        registry.FSDP,
        field_name,
        node,
        pos,
        f"is an FSDP{want} class, and the plugin has fsdp_version={fsdp_version}: "
        "accelerate raises ValueError in FullyShardedDataParallelPlugin()",
        "error",
    )
    return True


def _offload(
    cfg: Config, s: registry.Setting, call: _Call, node: ast.AST, pos: dict[str, Any], fsdp_version: int | None
) -> None:
    """``CPUOffload(offload_params=b)`` is ``b``; ``CPUOffloadPolicy()`` true, ``OffloadPolicy()`` false
    (what set_cpu_offload builds from the boolean)."""
    if _version_mismatch(cfg, "cpu_offload", call, node, pos, fsdp_version):
        return
    value = {"CPUOffload": call.get("offload_params"), "OffloadPolicy": False}.get(call.cls, True)
    if call.cls == "CPUOffloadPolicy" and call.get("pin_memory") is not True or not isinstance(value, bool):
        _cannot(
            cfg,
            registry.FSDP,
            "cpu_offload",
            node,
            pos,
            f"has no config-file value; the nearest setting is `{s.path}: true`",
        )
        return
    cfg.set(s.path, value, written_key="cpu_offload", **pos)


def _policy_dtypes(value: Any) -> tuple[str, dict[str, Any]] | None:
    """(class or "dict", {argument: dtype name}) of a mixed precision policy; None when unreadable."""
    if isinstance(value, _Call) and value.cls.startswith("MixedPrecision"):
        return value.cls, {k: v.name if isinstance(v, _Dtype) else v for k, v in value.kwargs}
    if isinstance(value, dict) and all(isinstance(v, _Dtype) for v in value.values()):
        return "dict", {k: v.name for k, v in value.items()}
    return None


def _policy(
    cfg: Config, field_name: str, value: Any, node: ast.AST, pos: dict[str, Any], fsdp_version: int | None
) -> None:
    """A mixed precision policy has no config-file key: say whether ``mixed_precision`` (which makes
    Accelerator call ``set_mixed_precision`` on a plugin without a policy) gives the same one."""
    found = _policy_dtypes(value)
    if isinstance(value, str) and value in _DTYPE_OF_PRECISION:
        found = "str", {}
    if found is None:
        _cannot(
            cfg,
            registry.FSDP,
            field_name,
            node,
            pos,
            "has no config-file key; the nearest setting is `mixed_precision`",
            "error" if isinstance(value, str) else "warning",
        )  # (set_mixed_precision raises on another string)
        return
    kind, args = found
    if isinstance(value, _Call) and _version_mismatch(cfg, field_name, value, node, pos, fsdp_version):
        return
    version = _FSDP_VERSION_OF_CALL.get(kind, fsdp_version or 1)
    third = "buffer_dtype" if version == 1 else "output_dtype"
    if kind == "str":  # set_mixed_precision(name, override=True): every dtype from the name
        args = dict.fromkeys(("param_dtype", "reduce_dtype", third), _DTYPE_OF_PRECISION[value])
    missing = [k for k in ("param_dtype", "reduce_dtype", third) if k not in args]
    if kind == "dict" and missing:
        _cannot(
            cfg,
            registry.FSDP,
            field_name,
            node,
            pos,
            f"lacks {', '.join(missing)}: accelerate raises ValueError (Invalid mixed precision policy)",
            "error",
        )
        return
    dtype = args.get("param_dtype")
    precision = _PRECISION_OF_DTYPE.get(str(dtype))
    if precision is None:
        _cannot(
            cfg,
            registry.FSDP,
            field_name,
            node,
            pos,
            f"has no config-file key, and no `mixed_precision` value gives FSDP param_dtype={dtype}",
        )
        return
    defaults = pynames.TORCH_CALLS["MixedPrecision" if version == 1 else "MixedPrecisionPolicy"]
    same = all(args.get(k) == dtype for k in ("param_dtype", "reduce_dtype", third)) and all(
        args.get(k, d) == d for k, d in defaults.items() if k not in ("param_dtype", "reduce_dtype", third)
    )
    how = (
        "gives FSDP this same policy (and runs the forward pass under autocast as well)"
        if same
        else f"gives FSDP param_dtype, reduce_dtype and {third} all {dtype}"
    )
    _cannot(
        cfg,
        registry.FSDP,
        field_name,
        node,
        pos,
        f"has no config-file key; the nearest setting is `mixed_precision: {precision}`, which {how}",
    )
    cfg.notes[-1] = cfg.notes[-1].replace(suggestion=precision)


def read(text: str, *, path: str = "<text>", version: str | None = None, fmt: str = "kwargs") -> Config:
    try:
        tree = ast.parse(text, filename=path)
    except SyntaxError as exc:
        raise InputError(f"not Python: {exc.msg}", path, exc.lineno or 0, exc.offset or 0) from exc
    cfg = Config(source=path, format="kwargs")
    known = {s.plugin.split(".", 1)[0] for s in registry.SETTINGS if s.plugin} | set(RECIPES.values())
    aliases: dict[str, str] = {}
    missing = _unknown_names(tree, cfg, aliases)
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        cls = _call_name(node)
        cls = aliases.get(cls, cls) if cls not in missing else cls
        if cls in missing:
            cfg.note(
                f"`{cls}(...)` is not an accelerate class: none of its arguments are read",
                "error",
                rule="kwargs.unknown-name",
                key=cls,
                line=node.lineno,
                column=node.col_offset + 1,
            )
            continue
        if cls not in known:
            continue
        wrong = _unknown_keywords(cfg, cls, node)
        _implied_by_the_class(cfg, cls, node)
        for kw in node.keywords:
            if kw.arg is not None and kw.arg not in wrong:
                _read_keyword(cfg, cls, node, kw, kw.arg)
    return cfg


def _unknown_keywords(cfg: Config, cls: str, node: ast.Call) -> set[str]:
    """The keywords the class does not take (Python raises TypeError), each noted with a guess."""
    accepted = pynames.PARAMETERS.get(cls)
    wrong: set[str] = set()
    for kw in node.keywords:
        if accepted is None or kw.arg is None or kw.arg in accepted:
            continue
        guess = suggest.ranked(kw.arg, accepted, fold_case=True, abbreviations=True)
        hint = f"; did you mean {', '.join(guess)}?" if guess else ""
        cfg.note(
            f"`{cls}()` has no keyword `{kw.arg}` (accelerate {pynames.VERSION}): Python raises TypeError{hint}",
            "error",
            rule="kwargs.unknown-name",
            key=f"{cls}.{kw.arg}",
            line=kw.lineno,
            column=kw.col_offset + 1,
        )
        wrong.add(kw.arg)
    return wrong


def _implied_by_the_class(cfg: Config, cls: str, node: ast.Call) -> None:
    """What building the class says by itself: a plugin's paradigm, an FP8 recipe's backend."""
    kw_pos = dict(line=node.lineno, column=node.col_offset + 1, origin="kwargs")
    if cls in PARADIGM_OF_PLUGIN and "distributed_type" not in cfg:
        cfg.set("distributed_type", PARADIGM_OF_PLUGIN[cls], written_key=cls, where=f"{cls}(...)", **kw_pos)
    for backend, rc in RECIPES.items():
        if rc == cls:
            s = registry.get("fp8_config", "backend")
            if s:
                cfg.set(s.path, backend, written_key=cls, where=f"{cls}(...)", **kw_pos)
            if "mixed_precision" not in cfg:
                cfg.set("mixed_precision", "fp8", written_key=cls, where=f"{cls}(...)", **kw_pos)


def _read_keyword(cfg: Config, cls: str, node: ast.Call, kw: ast.keyword, arg: str) -> None:
    """One keyword argument of an accelerate class into the config (or its unknown entries)."""
    pos: dict[str, Any] = dict(
        line=kw.value.lineno, column=kw.value.col_offset + 1, origin="kwargs", where=f"{cls}({arg}=)"
    )
    if cls == ACCELERATOR and arg in PLUGIN_KWARGS or arg in HANDLERS.values() or arg == "kwargs_handlers":
        return
    s = registry.by_plugin(cls, arg)
    if cls == ACCELERATOR and arg == "dynamo_backend":
        # Accelerator(dynamo_backend=X) builds TorchDynamoPlugin(backend=X) (accelerator.py)
        s = registry.get("dynamo_config", "dynamo_backend")
    try:
        value = _evaluate(kw.value)
    except _NotRead:
        cfg.unknown[f"{cls}.{arg}"] = Entry(f"{cls}.{arg}", ast.unparse(kw.value), None, arg, **pos)
        setting = f" (its config-file setting: `{s.path}`)" if s is not None else " (no config-file key holds it)"
        cfg.note(
            f"{cls}({arg}=...) is not a literal; not read{setting}",
            "warning",
            rule="kwargs.not-read",
            key=f"{cls}.{arg}",
            line=pos["line"],
            column=pos["column"],
        )
        return
    # torch objects, a dict for a setting (no setting holds one), or a policy:
    # what a config file can say about it
    if (
        not _plain(value)
        or (isinstance(value, dict) and s is not None)
        or (cls == registry.FSDP and arg == "mixed_precision_policy" and value is not None)
    ):
        _express(cfg, cls, arg, s, value, kw.value, pos, _fsdp_version(node) if cls == registry.FSDP else None)
    elif s is None:
        cfg.unknown[f"{cls}.{arg}"] = Entry(f"{cls}.{arg}", value, None, arg, **pos)
    else:
        cfg.set(s.path, _to_config_value(s, value), written_key=arg, **pos)
