"""How releases before transformers 5.10 turn ``fsdp``/``fsdp_config`` into the FSDP plugin; which
form a release uses is the ``runs`` part of the releases data (:func:`accelconf.trainer.releases.runs_fact`).

- ``env`` (4.46 to 4.57): ``TrainingArguments.__post_init__`` writes ``ACCELERATE_USE_FSDP`` and
  ``FSDP_*`` variables into the process, over what the launcher wrote, and ``Accelerator()`` builds
  the plugin from the variables;
- ``kwargs`` (5.0 to 5.9): ``_process_fsdp_args`` builds ``fsdp_plugin_args`` from the ``fsdp``
  options (``auto_wrap`` alone gives a wrap policy) and a few ``fsdp_config`` keys, FSDP1 by default.

In both, the Trainer sets ``limit_all_gathers`` and ``activation_checkpointing`` on the built plugin
from ``fsdp_config`` as written (``trainer_sets_from_fsdp_config``). The release matrix
(tests/oracle/test_transformers_matrix.py) runs each release's own code over the same inputs.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from accelconf.accelerate import registry
from accelconf.records import Record
from accelconf.trainer import releases
from accelconf.trainer.fsdp_plugin import (
    SHARDING,
    WRAP_POLICIES,
    TrainerRaises,
    env_var,
    normalise_fsdp_config,
    str_to_bool,
)

OPTIONS = ("full_shard", "shard_grad_op", "no_shard", "hybrid_shard", "hybrid_shard_zero2", "offload", "auto_wrap")


class PluginInputs(Record):
    """What the plugin is built from: keyword arguments (and the key that gave each), variables the
    arguments write into the process (variable -> (value, "arguments" or "transformers", key)), and
    the fields the Trainer sets afterwards (field -> (value, key))."""

    _fields = ("kwargs", "src", "env", "after")

    def __init__(
        self,
        kwargs: dict[str, Any] | None = None,
        src: dict[str, str] | None = None,
        env: dict[str, tuple[str, str, str]] | None = None,
        after: dict[str, tuple[Any, str]] | None = None,
    ) -> None:
        self.kwargs: dict[str, Any] = {} if kwargs is None else kwargs
        self.src: dict[str, str] = {} if src is None else src
        self.env: dict[str, tuple[str, str, str]] = {} if env is None else env
        self.after: dict[str, tuple[Any, str]] = {} if after is None else after


def options(fsdp: Any) -> list[str]:
    """``fsdp`` as the release's ``FSDPOption`` list: ``True`` is ``full_shard``; refused at construction
    as the release refuses it."""
    items = ["full_shard"] if fsdp is True else (fsdp.split() if isinstance(fsdp, str) else list(fsdp or []))
    for item in items:
        if item not in OPTIONS:
            raise TrainerRaises(f"ValueError: '{item}' is not a valid FSDPOption", "construction", "fsdp")
    if items == ["offload"]:
        raise TrainerRaises("`--fsdp offload` can't work on its own", "construction", "fsdp")
    if "full_shard" in items and "shard_grad_op" in items:
        raise TrainerRaises(
            "`--fsdp full_shard` is not compatible with `--fsdp shard_grad_op`.", "construction", "fsdp"
        )
    return items


def _checked_sync(cfg: Mapping[str, Any]) -> tuple[str, str]:
    sync = str(cfg.get("sync_module_states", "true")).lower()
    ram = str(cfg.get("cpu_ram_efficient_loading", "false")).lower()
    if sync == "false" and ram == "true":
        raise TrainerRaises(
            '`sync_module_states` must be `"True"` if `cpu_ram_efficient_loading` is `"True"`',
            "construction",
            "sync_module_states",
        )
    return sync, ram


def _wrap(items: list[str], cfg: Mapping[str, Any]) -> dict[str, Any]:
    """What the ``auto_wrap`` option gives: a transformer-based policy, size-based with ``min_num_params``."""
    if "auto_wrap" not in items:
        return {}
    if cfg.get("min_num_params", 0) > 0:
        return {"auto_wrap_policy": WRAP_POLICIES[1], "min_num_params": cfg["min_num_params"]}
    names = cfg.get("transformer_layer_cls_to_wrap")
    out: dict[str, Any] = {"auto_wrap_policy": WRAP_POLICIES[0]}
    if names is not None:
        out["transformer_cls_names_to_wrap"] = ",".join([names] if isinstance(names, str) else names)
    return out


def _env_form(items: list[str], cfg: Mapping[str, Any], written: Mapping[str, str], inp: PluginInputs) -> None:
    def put(section: str, key: str, value: str, by: str) -> None:
        # "transformers": a value TrainingArguments writes of its own, no key of the file gave it
        inp.env[env_var(section, key)] = (value, "transformers" if by.endswith("__post_init__") else "arguments", by)

    inp.env[registry.USE_ENV["FSDP"]] = ("true", "arguments", "fsdp")
    for item in items:
        if item.upper() in SHARDING:
            put("fsdp_config", "fsdp_sharding_strategy", str(SHARDING.index(item.upper()) + 1), f"fsdp {item}")
        elif item == "offload":
            put("fsdp_config", "fsdp_offload_params", "true", "fsdp offload")
    wrap = _wrap(items, cfg)
    if wrap:
        put("fsdp_config", "fsdp_auto_wrap_policy", wrap["auto_wrap_policy"], "fsdp auto_wrap")
        if "min_num_params" in wrap:
            put("fsdp_config", "fsdp_min_num_params", str(wrap["min_num_params"]), written.get("min_num_params", ""))
        if "transformer_cls_names_to_wrap" in wrap:
            by = written.get("transformer_layer_cls_to_wrap", "")
            put("fsdp_config", "fsdp_transformer_layer_cls_to_wrap", wrap["transformer_cls_names_to_wrap"], by)
    sync, ram = _checked_sync(cfg)
    for key, value in (
        ("backward_prefetch", str(cfg.get("backward_prefetch", "NO_PREFETCH")).upper()),
        ("forward_prefetch", str(cfg.get("forward_prefetch", "false")).lower()),
        ("sync_module_states", sync),
        ("cpu_ram_efficient_loading", ram),
        ("use_orig_params", str(cfg.get("use_orig_params", "true")).lower()),
    ):
        put("fsdp_config", f"fsdp_{key}", value, written.get(key, "TrainingArguments.__post_init__"))


def _kwargs_form(
    items: list[str], cfg: Mapping[str, Any], written: Mapping[str, str], inp: PluginInputs, version: str
) -> None:
    def put(name: str, value: Any, key: str) -> None:
        inp.kwargs[name], inp.src[name] = value, written.get(key, "")

    sharding = next((i for i in items if i.upper() in SHARDING), None)
    by_sharding = releases.runs_fact("fsdp_reshard_from_sharding", version)
    for item in items:
        if item.upper() in SHARDING and not by_sharding:
            inp.kwargs["sharding_strategy"], inp.src["sharding_strategy"] = item, f"fsdp {item}"
        elif item == "offload":
            inp.kwargs["cpu_offload"], inp.src["cpu_offload"] = True, "fsdp offload"
    for name, value in _wrap(items, cfg).items():
        inp.kwargs[name], inp.src[name] = value, "fsdp auto_wrap" if name == "auto_wrap_policy" else ""
    fsdp_version = int(cfg.get("version", releases.runs_fact("fsdp_version_default", version)))
    put("fsdp_version", fsdp_version, "version")
    if fsdp_version == 2:
        default: Any = (sharding != "shard_grad_op" if sharding else True) if by_sharding else "false"
        put(
            "reshard_after_forward",
            str_to_bool(str(cfg.get("reshard_after_forward", default)).lower()),
            "reshard_after_forward",
        )
    else:
        put("forward_prefetch", str_to_bool(str(cfg.get("forward_prefetch", "false")).lower()), "forward_prefetch")
        put("backward_prefetch", str(cfg.get("backward_prefetch", "NO_PREFETCH")).upper(), "backward_prefetch")
        default = (sharding.upper() if sharding else "FULL_SHARD") if by_sharding else "FULL_SHARD"
        put("reshard_after_forward", str(cfg.get("reshard_after_forward", default)).lower(), "reshard_after_forward")
        put("use_orig_params", str_to_bool(str(cfg.get("use_orig_params", "true")).lower()), "use_orig_params")
    sync, ram = _checked_sync(cfg)
    put("cpu_ram_efficient_loading", str_to_bool(ram), "cpu_ram_efficient_loading")
    put("sync_module_states", str_to_bool(sync), "sync_module_states")


def plugin_inputs(
    fsdp: Any, fsdp_config: Mapping[str, Any] | None, version: str | None, inline: bool = False
) -> PluginInputs | None:
    """What a release before 5.10 builds the plugin from; ``None`` when ``fsdp`` is off or ``xla`` is on.
    ``inline``: ``fsdp_config`` was written in the arguments, not a file they name (before 4.52 only a
    file's keys lose their ``fsdp_`` prefix)."""

    items = options(fsdp)
    if not items:
        return None
    if inline and not releases.runs_fact("fsdp_prefix_dropped_inline", version):
        cfg, written_as = dict(fsdp_config or {}), {k: k for k in fsdp_config or {}}
    else:
        cfg, written_as = normalise_fsdp_config(fsdp_config)
    if cfg.get("xla", False):
        return None
    cfg["min_num_params"] = cfg.get("min_num_params", 0)
    if cfg["min_num_params"] > 0 and cfg.get("transformer_layer_cls_to_wrap") is not None:
        raise TrainerRaises(
            "`min_num_params` and `transformer_layer_cls_to_wrap` are mutually exclusive.",
            "construction",
            "fsdp_config",
        )
    written = {k: f"fsdp_config.{w}" for k, w in written_as.items()}
    inp = PluginInputs()
    if releases.runs_fact("fsdp_plugin_from", version) == "env":
        _env_form(items, cfg, written, inp)
    else:
        _kwargs_form(items, cfg, written, inp, releases.resolve(version))
    for name in releases.runs_fact("trainer_sets_from_fsdp_config", version):
        if name in cfg:
            inp.after[name] = (cfg[name], written[name])
    return inp
