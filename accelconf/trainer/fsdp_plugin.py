"""The FSDP plugin a ``Trainer`` builds: ``TrainingArguments._process_fsdp_args`` turns ``fsdp`` and
``fsdp_config`` into ``FullyShardedDataParallelPlugin`` keyword arguments, and the plugin's
``__post_init__`` fills every field it was not given from the ``FSDP_*`` variables ``accelerate
launch`` writes, else from its own default.

Facts from transformers 5.24.0 ``training_args.py`` (``_process_fsdp_args``,
``_apply_legacy_fsdp_to_config``) and accelerate 1.15.0 ``utils/dataclasses.py``
(``FullyShardedDataParallelPlugin.__post_init__``, ``set_state_dict_type``); the oracle test
``tests/oracle/test_trainer_runs_oracle.py`` builds the real plugin from the same inputs and compares.
Field values are given in a plain spelling: enum members by name (``FULL_SHARD``), the wrap policy
by its accelerate name, ``cpu_offload`` as a bool.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from accelconf.accelerate import registry
from accelconf.records import Record

SHARDING = registry.SHARDING_STRATEGIES
WRAP_POLICIES = registry.AUTO_WRAP_POLICIES
BACKWARD = registry.BACKWARD_PREFETCH
STATE_DICTS = registry.STATE_DICT_TYPES
FSDP2_STATE_DICTS = registry.FSDP2_STATE_DICT_TYPES
TRUE = ("y", "yes", "t", "true", "on", "1")
FALSE = ("n", "no", "f", "false", "off", "0")


def env_var(section: str, key: str) -> str:
    """The variable accelerate launch writes for a setting (the registry's name, never spelled here)."""
    setting = registry.get(section, key)
    assert setting is not None and setting.env is not None, (section, key)
    return setting.env


def _var(key: str) -> str:
    return env_var("fsdp_config", key)


class TrainerRaises(Exception):
    """transformers or accelerate refuses the arguments: ``stage`` says when (construction, Trainer init, train())."""

    def __init__(self, message: str, stage: str, key: str = "") -> None:
        super().__init__(message)
        self.message, self.stage, self.key = message, stage, key


class Provenance(Record):
    """One value of what runs and where it came from. ``source``: argument | argument default |
    transformers default | accelerate config | env | plugin default | model."""

    _fields = ("name", "value", "source", "where", "overrode", "note")

    def __init__(self, name: str, value: Any, source: str, where: str = "", overrode: str = "", note: str = "") -> None:
        self.name, self.value, self.source = name, value, source
        self.where, self.overrode, self.note = where, overrode, note


def str_to_bool(text: str, stage: str = "construction", key: str = "") -> bool:
    """accelerate's ``str_to_bool``: a word of yes or no, anything else refused."""
    low = str(text).lower()
    if low in TRUE:
        return True
    if low in FALSE:
        return False
    raise TrainerRaises(f"invalid truth value {text!r}", stage, key)


def normalise_fsdp_config(fsdp_config: Mapping[str, Any] | None) -> tuple[dict[str, Any], dict[str, str]]:
    """The ``fsdp_config`` transformers reads (``fsdp_`` prefix dropped), and each read key's written name."""
    out: dict[str, Any] = {}
    written: dict[str, str] = {}
    for k, v in (fsdp_config or {}).items():
        short = k.removeprefix("fsdp_")
        out[short] = v
        written[short] = k
    return out, written


def _legacy_fsdp(fsdp: Any, cfg: dict[str, Any], set_by: dict[str, str]) -> None:
    """``_apply_legacy_fsdp_to_config``: a string or list of ``fsdp`` options into ``fsdp_config`` entries."""
    items = fsdp.split() if isinstance(fsdp, str) else list(fsdp)
    version = int(cfg.get("version", 2))
    for item in items:
        if str(item).upper() in SHARDING:
            if version == 2:
                if item not in ("full_shard", "shard_grad_op"):
                    raise TrainerRaises(
                        f"`fsdp={item}` is only available with FSDP1. Set `fsdp_config['version'] = 1`",
                        "construction",
                        "fsdp",
                    )
                if "reshard_after_forward" not in cfg:
                    cfg["reshard_after_forward"] = item == "full_shard"
                    set_by["reshard_after_forward"] = f"fsdp {item}"
            elif "reshard_after_forward" not in cfg:
                cfg["reshard_after_forward"], set_by["reshard_after_forward"] = item, f"fsdp {item}"
        elif item == "offload":
            if "cpu_offload" not in cfg:
                cfg["cpu_offload"], set_by["cpu_offload"] = True, "fsdp offload"
        elif item != "auto_wrap":
            raise TrainerRaises(f"Unknown `fsdp` option: {item}", "construction", "fsdp")


def plugin_args(fsdp: Any, fsdp_config: Mapping[str, Any] | None) -> tuple[dict[str, Any], dict[str, str]] | None:
    """``TrainingArguments._process_fsdp_args``: the plugin's keyword arguments and, for each, the
    ``fsdp_config`` key or ``fsdp`` option that gave it ("" for transformers' own default); ``None``
    when ``fsdp`` is off or ``fsdp_config`` turns on ``xla``."""
    if not fsdp:
        return None
    cfg, written = normalise_fsdp_config(fsdp_config)
    set_by = {k: f"fsdp_config.{w}" for k, w in written.items()}
    if isinstance(fsdp, (str, list)):
        _legacy_fsdp(fsdp, cfg, set_by)
    cfg["min_num_params"] = cfg.get("min_num_params", 0)
    if isinstance(cfg.get("transformer_layer_cls_to_wrap"), str):
        cfg["transformer_layer_cls_to_wrap"] = [cfg["transformer_layer_cls_to_wrap"]]
    if cfg.get("xla", False):
        return None  # torch_xla's own FSDP wraps the model: no accelerate plugin is built
    version = int(cfg.get("version", 2))
    out: dict[str, Any] = {"fsdp_version": version}
    src: dict[str, str] = {"fsdp_version": set_by.get("version", "")}

    def put(field: str, value: Any, key: str) -> None:
        out[field], src[field] = value, set_by.get(key, "")

    if cfg.get("cpu_offload", False):
        put("cpu_offload", True, "cpu_offload")
    policy = cfg.get("auto_wrap_policy", WRAP_POLICIES[0])
    put("auto_wrap_policy", policy, "auto_wrap_policy")
    if policy == WRAP_POLICIES[1] and cfg["min_num_params"] > 0:
        put("min_num_params", cfg["min_num_params"], "min_num_params")
    elif policy == WRAP_POLICIES[0] and cfg.get("transformer_layer_cls_to_wrap") is not None:
        put(
            "transformer_cls_names_to_wrap",
            ",".join(cfg["transformer_layer_cls_to_wrap"]),
            "transformer_layer_cls_to_wrap",
        )
    put(
        "cpu_ram_efficient_loading",
        str_to_bool(str(cfg.get("cpu_ram_efficient_loading", "false"))),
        "cpu_ram_efficient_loading",
    )
    put("state_dict_type", cfg.get("state_dict_type", "FULL_STATE_DICT"), "state_dict_type")
    if "activation_checkpointing" in cfg:
        put("activation_checkpointing", str_to_bool(str(cfg["activation_checkpointing"])), "activation_checkpointing")
    if version == 2:
        put("reshard_after_forward", str_to_bool(str(cfg.get("reshard_after_forward", True))), "reshard_after_forward")
    else:
        put("reshard_after_forward", str(cfg.get("reshard_after_forward", "full_shard")), "reshard_after_forward")
        put("forward_prefetch", str_to_bool(str(cfg.get("forward_prefetch", "false"))), "forward_prefetch")
        put("backward_prefetch", str(cfg.get("backward_prefetch", "NO_PREFETCH")).upper(), "backward_prefetch")
        put("use_orig_params", str_to_bool(str(cfg.get("use_orig_params", "true"))), "use_orig_params")
        put("sync_module_states", str_to_bool(str(cfg.get("sync_module_states", "true"))), "sync_module_states")
        if "limit_all_gathers" in cfg:
            put("limit_all_gathers", str_to_bool(str(cfg["limit_all_gathers"])), "limit_all_gathers")
    return out, src


class _Fields:
    """The plugin's ``__post_init__`` over its keyword arguments and the process environment."""

    def __init__(
        self, kwargs: Mapping[str, Any], kw_src: Mapping[str, str], env: Mapping[str, tuple[str, str, str]]
    ) -> None:
        self.kwargs, self.kw_src, self.env = kwargs, kw_src, env
        self.rows: dict[str, Provenance] = {}

    def given(self, field: str, value: Any) -> None:
        where = self.kw_src.get(field, "")
        self.rows[field] = Provenance(
            field, value, "argument" if where else "transformers default", where or "_process_fsdp_args"
        )
        var = registry.by_plugin(registry.FSDP, field)
        if var is not None and var.env and var.env in self.env:
            v, _, w = self.env[var.env]
            self.rows[field].overrode = f"{var.env}={v}" + (f" ({w})" if w else "")

    def from_env(self, field: str, var: str, default: Any, convert: Any = None) -> Any:
        """The value of an unset field: the variable when the process has it, else the plugin default."""
        if var in self.env:
            raw, how, where = self.env[var]
            value = convert(raw) if convert else raw
            source = {
                "launch": "accelerate config",
                "arguments": "argument",
                "transformers": "transformers default",
            }.get(how, "env")
            self.rows[field] = Provenance(field, value, source, where or var, note=f"from {var}")
            return value
        self.rows[field] = Provenance(field, default, "plugin default", f"{registry.FSDP}.{field}")
        return default

    def set(self, field: str, value: Any, source: str, note: str) -> None:
        self.rows[field] = Provenance(field, value, source, f"{registry.FSDP}.__post_init__", note=note)


def _strategy_name(value: Any) -> str:
    text = str(value)
    if text.isdigit():
        return SHARDING[int(text) - 1]
    return text.upper()


def _bool_env(text: str) -> bool:
    return str_to_bool(text, "Trainer init")


def plugin_fields(
    kwargs: Mapping[str, Any], kw_src: Mapping[str, str], env: Mapping[str, tuple[str, str, str]]
) -> dict[str, Provenance]:
    """Every field of the ``FullyShardedDataParallelPlugin`` built from ``kwargs`` in a process whose
    environment is ``env`` (variable -> (value, "launch"|"shell", where)), under the plugin's names."""
    f = _Fields(kwargs, kw_src, env)
    for field, value in kwargs.items():
        f.given(field, value)
    version = (
        kwargs["fsdp_version"] if "fsdp_version" in kwargs else f.from_env("fsdp_version", _var("fsdp_version"), 1, int)
    )
    _sharding(f, version)
    if "cpu_offload" not in kwargs:
        f.from_env("cpu_offload", _var("fsdp_offload_params"), False, _bool_env)
    _prefetch_and_state(f, version)
    _wrap(f)
    _fsdp1_only(f, version)
    for field, var in (
        ("activation_checkpointing", _var("fsdp_activation_checkpointing")),
        ("activation_checkpointing_offload", _var("fsdp_activation_checkpointing_offload")),
        ("cpu_ram_efficient_loading", _var("fsdp_cpu_ram_efficient_loading")),
    ):
        if field not in kwargs:
            f.from_env(field, var, False, _bool_env)
    if f.rows["activation_checkpointing_offload"].value and not f.rows["activation_checkpointing"].value:
        raise TrainerRaises(
            "`activation_checkpointing_offload=True` requires `activation_checkpointing=True`.",
            "Trainer init",
            "activation_checkpointing_offload",
        )
    if "ignored_modules" not in kwargs:
        f.from_env("ignored_modules", _var("fsdp_ignored_modules"), None)
    if "limit_all_gathers" not in kwargs:
        f.rows["limit_all_gathers"] = Provenance(
            "limit_all_gathers", True, "plugin default", f"{registry.FSDP}.limit_all_gathers"
        )
    if version == 1 and f.rows["cpu_ram_efficient_loading"].value and not f.rows["sync_module_states"].value:
        f.set("sync_module_states", True, "plugin default", "forced on by cpu_ram_efficient_loading (FSDP1)")
    return dict(sorted(f.rows.items()))


def _sharding(f: _Fields, version: int) -> None:
    kw = f.kwargs
    if version == 1:
        if "sharding_strategy" in kw:
            f.rows["sharding_strategy"].value = _strategy_name(kw["sharding_strategy"])
        else:
            f.from_env("sharding_strategy", _var("fsdp_sharding_strategy"), "FULL_SHARD", _strategy_name)
    elif "sharding_strategy" in kw:  # given (transformers 5.0 to 5.3 pass it): named, though FSDP2 does not read it
        f.rows["sharding_strategy"].value = _strategy_name(kw["sharding_strategy"])
    else:
        f.rows.setdefault(
            "sharding_strategy",
            Provenance(
                "sharding_strategy",
                None,
                "plugin default",
                f"{registry.FSDP}.sharding_strategy",
                note="not read by FSDP2",
            ),
        )
    if "reshard_after_forward" in kw:
        raf = kw["reshard_after_forward"]
        if version == 1:
            f.rows["reshard_after_forward"].value = (
                _strategy_name(raf) if isinstance(raf, (str, int)) and not isinstance(raf, bool) else raf
            )
            name = f.rows["reshard_after_forward"].value
            if isinstance(name, str) and name not in SHARDING:  # accelerate: ShardingStrategy[name]
                raise TrainerRaises(f"KeyError: {name!r}", "Trainer init", "reshard_after_forward")
        elif isinstance(raf, str):
            f.rows["reshard_after_forward"].value = str_to_bool(raf, "Trainer init")
    elif version == 2:
        f.from_env("reshard_after_forward", _var("fsdp_reshard_after_forward"), True, _bool_env)
    else:  # FSDP1 has a sharding_strategy by now: the plugin leaves reshard_after_forward unset
        f.rows["reshard_after_forward"] = Provenance(
            "reshard_after_forward", None, "plugin default", f"{registry.FSDP}.reshard_after_forward"
        )
    raf = f.rows["reshard_after_forward"].value
    if version == 2 and not isinstance(raf, bool):
        raise TrainerRaises(
            f"reshard_after_forward set to {raf}. This is not supported with FSDP2",
            "Trainer init",
            "reshard_after_forward",
        )


def _prefetch_and_state(f: _Fields, version: int) -> None:
    kw = f.kwargs
    if "backward_prefetch" in kw:
        bp = kw["backward_prefetch"]
        f.rows["backward_prefetch"].value = None if str(bp).upper() == "NO_PREFETCH" else str(bp).upper()
    else:
        f.from_env(
            "backward_prefetch",
            _var("fsdp_backward_prefetch"),
            None,
            lambda t: None if t.upper() == "NO_PREFETCH" else (BACKWARD[int(t) - 1] if t.isdigit() else t.upper()),
        )
    if version == 2 and f.rows["backward_prefetch"].value is not None:
        f.set("backward_prefetch", None, "plugin default", "FSDP2 has no backward prefetch: set to None")
    if "state_dict_type" in kw:
        f.rows["state_dict_type"].value = str(kw["state_dict_type"]).upper()
    else:
        f.from_env(
            "state_dict_type",
            _var("fsdp_state_dict_type"),
            "FULL_STATE_DICT" if version == 1 else "SHARDED_STATE_DICT",
            lambda t: STATE_DICTS[int(t) - 1] if t.isdigit() else t.upper(),
        )
    if version == 2 and f.rows["state_dict_type"].value == "LOCAL_STATE_DICT":
        raise TrainerRaises("FSDP2 does not support LOCAL_STATE_DICT.", "Trainer init", "state_dict_type")


def _wrap(f: _Fields) -> None:
    kw = f.kwargs
    if "auto_wrap_policy" not in kw:
        f.from_env("auto_wrap_policy", _var("fsdp_auto_wrap_policy"), "NO_WRAP")
    policy = str(f.rows["auto_wrap_policy"].value).upper()
    if policy not in WRAP_POLICIES:
        raise TrainerRaises(
            f"Invalid auto wrap policy: {policy}. Must be one of {list(WRAP_POLICIES)}",
            "Trainer init",
            "auto_wrap_policy",
        )
    f.rows["auto_wrap_policy"].value = policy
    if policy == "TRANSFORMER_BASED_WRAP":
        if "transformer_cls_names_to_wrap" not in kw:
            f.from_env("transformer_cls_names_to_wrap", _var("fsdp_transformer_layer_cls_to_wrap"), None)
            if f.rows["transformer_cls_names_to_wrap"].value is None:
                f.rows["transformer_cls_names_to_wrap"].note = "the model's _no_split_modules, at prepare"
        names = f.rows["transformer_cls_names_to_wrap"].value
        if isinstance(names, str):
            f.rows["transformer_cls_names_to_wrap"].value = names.split(",")
    elif "transformer_cls_names_to_wrap" not in kw:
        f.rows["transformer_cls_names_to_wrap"] = Provenance(
            "transformer_cls_names_to_wrap", None, "plugin default", f"{registry.FSDP}.transformer_cls_names_to_wrap"
        )
    if policy == "SIZE_BASED_WRAP":
        if "min_num_params" not in kw:
            f.from_env("min_num_params", _var("fsdp_min_num_params"), 0, lambda t: int(t))
    elif "min_num_params" not in kw:
        f.rows["min_num_params"] = Provenance(
            "min_num_params", None, "plugin default", f"{registry.FSDP}.min_num_params"
        )


def _fsdp1_only(f: _Fields, version: int) -> None:
    """``use_orig_params``, ``sync_module_states``, ``forward_prefetch``: FSDP1 reads them, FSDP2 sets them to None."""
    for field, var in (
        ("use_orig_params", _var("fsdp_use_orig_params")),
        ("sync_module_states", _var("fsdp_sync_module_states")),
        ("forward_prefetch", _var("fsdp_forward_prefetch")),
    ):
        if version == 1:
            if field not in f.kwargs:
                f.from_env(field, var, False, _bool_env)
        elif field in f.kwargs and f.kwargs[field] is not None:
            if field == "forward_prefetch":
                raise TrainerRaises("forward_prefetch is not yet implemented in FSDP2", "Trainer init", field)
            f.set(field, None, "plugin default", "obsolete in FSDP2: set to None")
        else:
            f.rows[field] = Provenance(
                field, None, "plugin default", f"{registry.FSDP}.{field}", note="not read by FSDP2"
            )
