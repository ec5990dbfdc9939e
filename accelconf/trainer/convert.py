"""Conversions between Trainer arguments and accelerate configs, through what runs.

* :func:`to_accelerate`: the accelerate config that launches the same FSDP/DeepSpeed setup as the
  arguments (every FSDP plugin field the Trainer builds, under accelerate's key for it);
* :func:`to_arguments`: the ``TrainingArguments`` fields (``fsdp``, ``fsdp_config``, ``deepspeed``,
  ``bf16``/``fp16``, accumulation) that build the Accelerator an accelerate config launches;
* :func:`to_torchrun`: a ``torchrun`` command that runs the arguments without ``accelerate launch``.

What cannot be carried is a finding (rule ``trainer-convert``). The keys come from the settings
registry (:mod:`accelconf.accelerate.registry`), the one table of accelerate's keys.
"""

from __future__ import annotations

import json
import shlex
from typing import Any

import yaml

from accelconf.accelerate import registry
from accelconf.accelerate.model import Config
from accelconf.findings import Finding
from accelconf.trainer import releases
from accelconf.trainer.runs import Runs

RULE = "trainer-convert"


def _note(message: str, key: str = "", severity: str = "warning") -> Finding:
    return Finding(RULE, severity, message, key)  # type: ignore[arg-type]


def _launch_value(field: str, value: Any) -> Any:
    """A plugin field's value as an accelerate config writes it."""
    if field == "transformer_cls_names_to_wrap":
        return ",".join(value)
    return value


def _fsdp_section(runs: Runs) -> tuple[dict[str, Any], list[Finding]]:
    out: dict[str, Any] = {}
    notes: list[Finding] = []
    assert runs.fsdp is not None
    for field, p in runs.fsdp.items():
        s = registry.by_plugin(registry.FSDP, field)
        if p.value is None:
            continue
        if s is None:
            if field == "limit_all_gathers" and p.value is True:
                continue  # the plugin's default: nothing to carry
            notes.append(
                _note(
                    f"`{field}: {p.value}` has no accelerate config key: a launch from the config runs "
                    "with the plugin default",
                    field,
                )
            )
            continue
        out[s.key] = _launch_value(field, p.value)
    if runs.fsdp["fsdp_version"].value == 1 and "sharding_strategy" in runs.fsdp:
        # FSDP1: the Trainer's reshard_after_forward names the strategy;
        # accelerate's file says it as fsdp_sharding_strategy
        raf = runs.fsdp["reshard_after_forward"].value
        if raf is not None:
            out["fsdp_sharding_strategy"] = raf
        out.pop("fsdp_reshard_after_forward", None)
    return out, notes


def to_accelerate(runs: Runs, ds_path: str = "", num_processes: int | None = None) -> tuple[str, list[Finding]]:
    """The accelerate config (YAML) that launches what the arguments run."""
    notes: list[Finding] = [
        _note(
            "the Trainer accumulates gradients itself (its Accelerator gets num_steps=1): "
            "gradient_accumulation_steps stays in the arguments",
            "gradient_accumulation_steps",
            "info",
        )
    ]
    cfg: dict[str, Any] = {"compute_environment": "LOCAL_MACHINE"}
    if runs.deepspeed is not None:
        cfg["distributed_type"] = "DEEPSPEED"
        if ds_path:
            cfg["deepspeed_config"] = {"deepspeed_config_file": ds_path}
            notes.append(
                _note(
                    'the DeepSpeed JSON\'s "auto" entries are filled by the Trainer; another script '
                    "must fill them (or use the filled config explain shows)",
                    "deepspeed_config",
                    "info",
                )
            )
        else:
            stage = (runs.deepspeed.config.get("zero_optimization") or {}).get("stage", 2)
            cfg["deepspeed_config"] = {"zero_stage": stage}
            notes.append(
                _note(
                    "an inline DeepSpeed dict: only its ZeRO stage is carried; write it to a JSON file "
                    "and name it as deepspeed_config_file",
                    "deepspeed",
                )
            )
    elif runs.fsdp is not None:
        cfg["distributed_type"] = "FSDP"
        cfg["fsdp_config"], more = _fsdp_section(runs)
        notes += more
    else:
        cfg["distributed_type"] = "MULTI_GPU"
    if runs.deepspeed is None or not ds_path:
        cfg["mixed_precision"] = runs.mixed_precision.value
    cfg["num_processes"] = num_processes or 1
    if not num_processes:
        notes.append(
            _note(
                "the arguments do not say how many processes run: num_processes is 1, set it to the number of GPUs",
                "num_processes",
                "info",
            )
        )
    return yaml.safe_dump(cfg, sort_keys=False), notes


# accelerate fsdp_config key -> transformers fsdp_config key (fsdp_ prefix dropped), where they differ
_ARG_KEY = {"fsdp_offload_params": "cpu_offload", "fsdp_transformer_layer_cls_to_wrap": "transformer_layer_cls_to_wrap"}
_NOT_READ = ("fsdp_activation_checkpointing_offload", "fsdp_ignored_modules")


def _fsdp_arguments(cfg: Config) -> tuple[dict[str, Any], list[Finding]]:
    keys = releases.fsdp_config_keys(None)
    out: dict[str, Any] = {}
    notes: list[Finding] = []
    version = cfg.get("fsdp_config.fsdp_version", 1)
    out["version"] = int(version) if str(version).isdigit() else 1
    for path, e in cfg.entries.items():
        if not path.startswith("fsdp_config.") or path == "fsdp_config.fsdp_version":
            continue
        key = path.split(".", 1)[1]
        name = _ARG_KEY.get(key, key.removeprefix("fsdp_"))
        value = e.value
        if key == "fsdp_sharding_strategy":
            if out["version"] == 1:
                out["reshard_after_forward"] = str(registry.get("fsdp_config", key).canonical_value(value)).lower()  # type: ignore[union-attr]
            continue
        if key == "fsdp_transformer_layer_cls_to_wrap" and isinstance(value, str):
            value = [v.strip() for v in value.split(",") if v.strip()]
        if name not in keys or key in _NOT_READ:
            notes.append(
                _note(
                    f"`{key}` has no fsdp_config key the Trainer reads: a run without accelerate launch loses it", path
                )
            )
            continue
        out[name] = value
    return out, notes


def to_arguments(cfg: Config) -> tuple[str, list[Finding]]:
    """The TrainingArguments fields (YAML) that build the Accelerator this accelerate config launches."""
    out: dict[str, Any] = {}
    notes: list[Finding] = []
    dtype = str(cfg.get("distributed_type", "NO"))
    if dtype == "FSDP":
        out["fsdp"] = True
        out["fsdp_config"], notes = _fsdp_arguments(cfg)
    elif dtype == "DEEPSPEED":
        ds_file = cfg.get("deepspeed_config.deepspeed_config_file")
        if ds_file:
            out["deepspeed"] = ds_file
        else:
            out["deepspeed"] = _inline_deepspeed(cfg)
    mp = str(cfg.get("mixed_precision", "no"))
    # both written: the Trainer passes the one that is true as Accelerator(mixed_precision=...)
    out["bf16"], out["fp16"] = mp == "bf16", mp == "fp16"
    if mp == "fp8":
        notes.append(
            _note(
                "mixed_precision fp8 has no TrainingArguments field: set ACCELERATE_MIXED_PRECISION=fp8",
                "mixed_precision",
            )
        )
    gas = cfg.get("deepspeed_config.gradient_accumulation_steps")
    # always written: what the Accelerator accumulates under accelerate launch (1 unless DeepSpeed says)
    out["gradient_accumulation_steps"] = int(gas) if gas not in (None, "auto") and str(gas).isdigit() else 1
    return yaml.safe_dump(out, sort_keys=False), notes


def _inline_deepspeed(cfg: Config) -> dict[str, Any]:
    """The DeepSpeed dict accelerate builds from an inline ``deepspeed_config`` (DeepSpeedPlugin),
    "auto" where the Trainer fills it."""
    zero: dict[str, Any] = {"stage": int(cfg.get("deepspeed_config.zero_stage", 2))}
    for which in ("optimizer", "param"):
        dev = cfg.get(f"deepspeed_config.offload_{which}_device")
        if dev not in (None, "none"):
            zero[f"offload_{which}"] = {"device": dev}
    if cfg.get("deepspeed_config.zero3_save_16bit_model"):
        zero["stage3_gather_16bit_weights_on_model_save"] = True
    ds: dict[str, Any] = {
        "train_batch_size": "auto",
        "train_micro_batch_size_per_gpu": "auto",
        "gradient_accumulation_steps": "auto",
        "zero_optimization": zero,
    }
    clip = cfg.get("deepspeed_config.gradient_clipping")
    ds["gradient_clipping"] = "auto" if clip is None else clip
    return ds


def to_torchrun(
    values: dict[str, Any], script: str, num_processes: int = 1, num_machines: int = 1
) -> tuple[str, list[Finding]]:
    """A torchrun command that runs the training script with these arguments, without accelerate launch:
    the Trainer builds its FSDP plugin and DeepSpeed config from the arguments alone."""
    per_node = max(1, num_processes // max(1, num_machines))
    words = ["torchrun", "--nnodes", str(num_machines), "--nproc_per_node", str(per_node), script]
    notes: list[Finding] = []
    for name, value in values.items():
        if isinstance(value, bool):
            words += [f"--{name}", str(value)]
        elif isinstance(value, dict):
            # TrainingArguments parses a string that starts with "{" as JSON (_VALID_DICT_FIELDS)
            words += [f"--{name}", json.dumps(value, separators=(",", ":"))]
        elif isinstance(value, list):
            words += [f"--{name}", *[str(v) for v in value]]
        elif value is not None:
            words += [f"--{name}", str(value)]
    notes.append(
        _note(
            f"`{script}` stands for the training script; the arguments file may have held "
            "fields of that script's own dataclasses too",
            "",
            "info",
        )
    )
    if num_machines > 1:
        notes.append(
            _note("multi-node: add --node_rank, --master_addr and --master_port of each node", "num_machines", "info")
        )
    return " ".join(shlex.quote(w) for w in words) + "\n", notes
