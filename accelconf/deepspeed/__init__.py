"""DeepSpeed JSON configs: the key table, its JSON Schema, validation and the accelerate cross-check.

This module owns everything accelconf knows about DeepSpeed's ``ds_config.json``: one table
(:data:`TOP`) of every section and key that DeepSpeed 0.15 to 0.19.8 reads, with type, default
(and the version where a default changed), allowed values, aliases, deprecations, removals, where
``"auto"`` is filled and by whom, and a doc string. The JSON Schema (:func:`deepspeed_schema`),
validation (:func:`validate_deepspeed`), the accelerate cross-check (:func:`crosscheck`) and the
conversion to an accelerate ``deepspeed_config`` section (:func:`to_accelerate_section`) are all
derived from it. Facts come from reading the installed DeepSpeed 0.19.8 and accelerate 1.15.0
sources; ``tests/test_deepspeed_oracle.py`` checks the table against DeepSpeed's own parser.

It never imports deepspeed, torch or accelerate. Positions in findings are 1-based (end
exclusive); :class:`accelconf.text.document.Node` positions are 0-based and converted here.

Versions: ``since`` is the first DeepSpeed release that reads a key (inclusive), ``removed`` the
first that rejects or ignores it. ``None`` means "every version from 0.15 to 0.19.8".
"""

from __future__ import annotations

import difflib
import json
import math
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from packaging.version import InvalidVersion, Version

from accelconf.accelerate import registry as _registry
from accelconf.text.document import Document, Node
from accelconf.errors import UsageError
from accelconf.findings import Finding, Severity

OLDEST = "0.15.0"
NEWEST = "0.19.8"
SCHEMA_ID = "urn:accelconf:schema:deepspeed-config"  # an identifier, not an address (see accelerate/schema.py)
ISSUE_8489 = "https://github.com/deepspeedai/DeepSpeed/issues/8489"

RUNTIMES: tuple[str, ...] = ("deepspeed", "accelerate", "transformers")

_UNSET: Any = object()

# Where "auto" is replaced, and from what. ``native``: DeepSpeed itself gives "auto" a meaning;
# ``autotuner``: ``deepspeed --autotuning`` fills it (only with ``autotuning.enabled``).
Filler = Literal["native", "autotuner", "accelerate", "transformers"]
_FILLER_LABEL = {"native": "DeepSpeed", "autotuner": "the DeepSpeed autotuner", "transformers": "the HF Trainer",
                 "accelerate": "accelerate"}


@dataclass(frozen=True)
class Key:
    """One DeepSpeed config key (a scalar setting or a section).

    ``type`` is a JSON Schema type name or a tuple of them; ``nullable`` adds ``null``.
    ``children`` makes it a section; ``strict_since`` is the first version whose parser is a
    pydantic model with ``extra="forbid"`` (unknown keys raise), ``None`` for hand-parsed
    sections (unknown keys are ignored). ``open`` sections take any key (a kwargs dict).
    ``auto`` maps a filler (see :data:`Filler`) to a description of the value it puts in.
    ``lax`` says DeepSpeed coerces values through pydantic's lax mode (``"3"`` for an int).
    """

    type: str | tuple[str, ...]
    default: Any = _UNSET
    doc: str = ""
    enum: tuple[Any, ...] = ()
    enum_docs: tuple[str, ...] = ()
    enum_case_insensitive: bool = False
    nullable: bool = False
    minimum: float | None = None
    exclusive_minimum: float | None = None
    maximum: float | None = None
    exclusive_maximum: float | None = None
    minimum_since: str | None = None  # the range check exists from this version
    auto: tuple[tuple[str, str], ...] = ()
    since: str | None = None
    removed: str | None = None
    removed_message: str = ""
    deprecated: str = ""  # deprecation message (still accepted)
    replaced_by: str | None = None  # dotted path of the replacement key
    aliases: tuple[str, ...] = ()  # other spellings DeepSpeed accepts for this key
    default_changes: tuple[tuple[str, Any], ...] = ()  # (version, default before that version)
    children: dict[str, Key] | None = None
    strict_since: str | None = None
    open: bool = False
    lax: bool = False
    items: str | None = None  # JSON type of array items
    no_bool: bool = False  # a validator rejects booleans that lax mode would turn into 0/1

    @property
    def is_section(self) -> bool:
        return self.children is not None

    def fillers(self) -> dict[str, str]:
        return dict(self.auto)


def _ver(v: str | None) -> Version | None:
    if v is None:
        return None
    try:
        return Version(v)
    except InvalidVersion:
        return None


def _section(doc: str, keys: dict[str, Key], strict_since: str | None = None, **kw: Any) -> Key:
    return Key("object", doc=doc, children=keys, strict_since=strict_since, **kw)


def _b(default: Any, doc: str, **kw: Any) -> Key:
    return Key("boolean", default, doc, **kw)


def _i(default: Any, doc: str, **kw: Any) -> Key:
    return Key("integer", default, doc, **kw)


def _n(default: Any, doc: str, **kw: Any) -> Key:
    return Key("number", default, doc, **kw)


def _s(default: Any, doc: str, **kw: Any) -> Key:
    return Key("string", default, doc, **kw)


def _lax(keys: dict[str, Key]) -> dict[str, Key]:
    """Mark every scalar key of a pydantic section as coerced in pydantic's lax mode."""
    out = {}
    for name, k in keys.items():
        if k.children is None and not k.open:
            k = Key(**{**k.__dict__, "lax": True})
        out[name] = k
    return out


# "auto" fillers -------------------------------------------------------------------------------

_AUTO_BATCH_MBS = (
    ("transformers", "TrainingArguments.per_device_train_batch_size"),
    ("accelerate", "the batch_size of the dataloaders passed to accelerator.prepare()"),
    ("autotuner", "the autotuner (deepspeed --autotuning, with autotuning.enabled)"),
)
_AUTO_BATCH_TBS = (
    ("transformers", "world_size x per_device_train_batch_size x gradient_accumulation_steps"),
    ("accelerate", "train_micro_batch_size_per_gpu x gradient_accumulation_steps x num_processes"),
    ("autotuner", "the autotuner (deepspeed --autotuning, with autotuning.enabled)"),
)
_AUTO_GAS = (
    ("transformers", "TrainingArguments.gradient_accumulation_steps"),
    ("accelerate", "the plugin's gradient_accumulation_steps (YAML deepspeed_config.gradient_accumulation_steps), "
     "else Accelerator(gradient_accumulation_steps=...)"),
    ("autotuner", "the autotuner (deepspeed --autotuning, with autotuning.enabled)"),
)

# -- the table ---------------------------------------------------------------------------------

_OFFLOAD_DEVICE = dict(
    enum=("none", "cpu", "nvme"),
    enum_docs=("No offload.", "Offload to CPU memory.", "Offload to NVMe storage (needs `nvme_path`)."),
)

OFFLOAD_PARAM = _section(
    "Offload model parameters to CPU or NVMe (ZeRO stage 3 only; ignored for lower stages).",
    _lax({
        "device": _s("none", "Device memory to offload parameters to.", auto=(("accelerate", "the plugin's offload_param_device (YAML deepspeed_config.offload_param_device), default \"none\""),), **_OFFLOAD_DEVICE),  # type: ignore[arg-type]
        "nvme_path": _s(None, "Filesystem path of the NVMe device used for parameter offload.", nullable=True,
                        auto=(("accelerate", "the plugin's offload_param_nvme_path, default the string \"none\""),)),
        "buffer_count": _i(5, "Number of buffers in the buffer pool for parameter offload to NVMe.", minimum=0),
        "buffer_size": _i(100_000_000, "Size of the buffers for parameter offload to NVMe.", minimum=0),
        "max_in_cpu": _i(1_000_000_000, "Number of parameter elements kept in CPU memory when offloading to NVMe.", minimum=0),
        "pin_memory": _b(True, "Offload to page-locked CPU memory.", default_changes=(("0.19.5", False),)),
    }),
    strict_since="0.0",
    nullable=True,
)

OFFLOAD_OPTIMIZER = _section(
    "Offload optimizer state to CPU or NVMe (ZeRO stages 1-3; NVMe needs stage 3).",
    _lax({
        "device": _s("none", "Device memory to offload optimizer state to.", auto=(("accelerate", "the plugin's offload_optimizer_device (YAML deepspeed_config.offload_optimizer_device), default \"none\""),), **_OFFLOAD_DEVICE),  # type: ignore[arg-type]
        "nvme_path": _s(None, "Filesystem path of the NVMe device used for optimizer offload.", nullable=True,
                        auto=(("accelerate", "the plugin's offload_optimizer_nvme_path, default the string \"none\""),)),
        "buffer_count": _i(4, "Number of buffers in the buffer pool for optimizer offload to NVMe.", minimum=0),
        "pin_memory": _b(True, "Offload to page-locked CPU memory.", default_changes=(("0.19.5", False),)),
        "pipeline_read": _b(False, "Overlap reading of optimizer state from NVMe with computation."),
        "pipeline_write": _b(False, "Overlap writing of optimizer state to NVMe with computation."),
        "fast_init": _b(False, "Fast optimizer initialization when offloading to NVMe."),
        "ratio": _n(1.0, "Fraction of parameters updated on CPU (partial offload; < 1 needs ZeRO stage 3).", minimum=0.0, maximum=1.0),
        "super_offload": _b(False, "SuperOffload: CPU optimizer step overlapped with GPU work (stage 3).", since="0.18.0"),
        "cpuadam_cores_perc": _n(0.8, "Fraction of CPU cores used by the CPU Adam optimizer.", minimum=0.0, maximum=1.0, since="0.18.0"),
    }),
    strict_since="0.0",
    nullable=True,
)

ZENFLOW = _section(
    "ZenFlow: stall-free offloading of optimizer updates (0.17+).",
    _lax({
        "topk_ratio": _n(0.1, "Fraction of important gradient columns updated on the GPU.", exclusive_minimum=0.0, exclusive_maximum=1.0),
        "select_strategy": _s("auto", "How important columns are selected: auto, step or epoch.", auto=(("native", "DeepSpeed picks the strategy"),)),
        "select_interval": Key(("string", "integer"), "auto", "Interval of column re-selection.", auto=(("native", "DeepSpeed picks the interval"),)),
        "update_interval": Key(("string", "integer"), "auto", "Interval of CPU optimizer updates.", auto=(("native", "DeepSpeed picks the interval"),)),
        "overlap_step": _b(False, "Overlap the CPU optimizer step with GPU computation."),
        "offload": _b(False, "Offload the optimizer to CPU."),
        "auto_ratio": _n(0.99, "Threshold for adaptive update intervals.", minimum=0.0, maximum=1.0),
        "full_warm_up_rounds": _i(0, "Number of full-update warm-up rounds."),
        "steps_per_epoch": _i(None, "Steps per epoch (for the epoch strategy).", nullable=True),
        "pt_reserved_cores_perc": _n(0.5, "Fraction of CPU cores reserved for PyTorch.", minimum=0.0, maximum=1.0),
    }),
    strict_since="0.0",
    nullable=True,
    since="0.17.0",
)

LEAF_MODULE = _section(
    "Modules ZeRO-3 treats as leaves (no hooks inside them), e.g. MoE blocks.",
    {
        "classes": Key("array", _UNSET, "Fully qualified class names (default: Mixtral, Qwen2-MoE and Qwen3-MoE sparse blocks).", items="string"),
        "names": Key("array", [], "Module names.", items="string"),
        "name_suffixes": Key("array", [], "Module name suffixes.", items="string"),
    },
    strict_since="0.0",
    since="0.18.0",
)

_HIDDEN_AUTO_RBS = (("transformers", "hidden_size * hidden_size"), ("accelerate", "model.config.hidden_size ** 2"))

ZERO = _section(
    "ZeRO memory optimizations (pydantic `DeepSpeedZeroConfig`; unknown keys are rejected).",
    _lax({
        "stage": _i(0, "ZeRO stage: 0 disabled, 1 optimizer state, 2 + gradients, 3 + parameters partitioning.",
                    enum=(0, 1, 2, 3), enum_docs=("Disabled (plain data parallelism).", "Partition optimizer states.",
                                                  "Partition optimizer states and gradients.", "Partition optimizer states, gradients and parameters."),
                    auto=(("accelerate", "the plugin's zero_stage (YAML deepspeed_config.zero_stage, default 2)"),)),
        "contiguous_gradients": _b(True, "Copy gradients to a contiguous buffer as they are produced."),
        "reduce_scatter": _b(True, "Use reduce or reduce-scatter instead of allreduce to average gradients."),
        "reduce_bucket_size": _i(500_000_000, "Number of elements reduced/allreduced at a time.", exclusive_minimum=0,
                                 auto=_HIDDEN_AUTO_RBS),
        "use_multi_rank_bucket_allreduce": _b(True, "Combine reduce buckets of different ranks into one allreduce."),
        "allgather_partitions": _b(True, "Allgather updated parameters at the end of each step (vs. a series of broadcasts)."),
        "allgather_bucket_size": _i(500_000_000, "Number of elements allgathered at a time.", minimum=0),
        "overlap_comm": _b(None, "Overlap gradient reduction with backward computation (default: true for stage 3, else false).", nullable=True),
        "compute_grad_norm": _b(True, "Compute the gradient norm; false is only allowed with stage 1 or 2.", since="0.19.8"),
        "load_from_fp32_weights": _b(True, "Initialize fp32 master weights from the fp32 copies in the checkpoint."),
        "elastic_checkpoint": _b(False, "Load optimizer state saved with a different data-parallel degree (deprecated for stage 3)."),
        "offload_param": OFFLOAD_PARAM,
        "offload_optimizer": OFFLOAD_OPTIMIZER,
        "zenflow": ZENFLOW,
        "sub_group_size": _i(1_000_000_000, "Tile size for parameter processing (ZeRO-Offload / Infinity).", minimum=0),
        "cpu_offload_param": _b(None, "Deprecated: use `offload_param: {\"device\": \"cpu\"}`.", nullable=True,
                                deprecated="`cpu_offload_param` is deprecated; use `offload_param: {\"device\": \"cpu\"}`",
                                replaced_by="zero_optimization.offload_param"),
        "cpu_offload_use_pin_memory": _b(None, "Deprecated: use `pin_memory` in `offload_param` / `offload_optimizer`.", nullable=True,
                                         deprecated="`cpu_offload_use_pin_memory` is deprecated and has no effect; set `pin_memory` in `offload_param` or `offload_optimizer`"),
        "cpu_offload": _b(None, "Deprecated: use `offload_optimizer: {\"device\": \"cpu\"}`.", nullable=True,
                          deprecated="`cpu_offload` is deprecated; use `offload_optimizer: {\"device\": \"cpu\"}`",
                          replaced_by="zero_optimization.offload_optimizer"),
        "stage3_prefetch_bucket_size": _i(50_000_000, "Size of the fixed buffer for prefetching parameters (stage 3).", minimum=0,
                                          aliases=("prefetch_bucket_size",),
                                          auto=(("transformers", "int(0.9 * hidden_size * hidden_size)"), ("accelerate", "int(0.9 * model.config.hidden_size ** 2)"))),
        "stage3_param_persistence_threshold": _i(100_000, "Parameters smaller than this stay unpartitioned (stage 3).", minimum=0,
                                                 aliases=("param_persistence_threshold",),
                                                 auto=(("transformers", "10 * hidden_size"), ("accelerate", "10 * model.config.hidden_size"))),
        "stage3_model_persistence_threshold": _i(2**63 - 1, "Maximum number of unpartitioned parameter elements (stage 3).", minimum=0,
                                                 aliases=("model_persistence_threshold",)),
        "stage3_max_live_parameters": _i(1_000_000_000, "Maximum number of parameters resident per GPU before releasing (stage 3).", minimum=0,
                                         aliases=("max_live_parameters",)),
        "stage3_max_reuse_distance": _i(1_000_000_000, "Do not release a parameter that will be reused within this many parameters (stage 3).", minimum=0,
                                        aliases=("max_reuse_distance",)),
        "stage3_gather_16bit_weights_on_model_save": _b(False, "Consolidate 16-bit weights when saving the model (stage 3).",
                                                        aliases=("gather_16bit_weights_on_model_save",),
                                                        auto=(("accelerate", "the plugin's zero3_save_16bit_model (YAML deepspeed_config.zero3_save_16bit_model), default false"),)),
        "stage3_module_granularity_threshold": _i(0, "Modules with more parameters than this are treated as leaves (stage 3).",
                                                  aliases=("module_granularity_threshold",), since="0.16.0"),
        "stage3_use_all_reduce_for_fetch_params": _b(False, "Fetch parameters with allreduce instead of allgather (stage 3).",
                                                     aliases=("use_all_reduce_for_fetch_params",)),
        "stage3_allgather_sequential": _b(False, "Allgather parameters one at a time (stage 3).", aliases=("allgather_sequential",), since="0.18.0"),
        "stage3_gather_fp16_weights_on_model_save": _b(False, "Deprecated spelling of `stage3_gather_16bit_weights_on_model_save`.",
                                                       deprecated="`stage3_gather_fp16_weights_on_model_save` is deprecated; use `stage3_gather_16bit_weights_on_model_save`",
                                                       replaced_by="zero_optimization.stage3_gather_16bit_weights_on_model_save"),
        "ignore_unused_parameters": _b(True, "Do not fail on parameters that receive no gradient (stages 1-2)."),
        "legacy_stage1": _b(False, "Use the legacy stage 1 implementation (`true` fails at engine initialization)."),
        "round_robin_gradients": _b(False, "Round-robin gradient partitioning across ranks (stages 1-2)."),
        "parameter_alignment": _b(False, "Align parameter partitions.", since="0.19.8"),
        "zero_hpz_partition_size": _i(1, "ZeRO++ hierarchical partitioning: ranks per secondary partition group.", minimum=0),
        "zero_quantized_weights": _b(False, "ZeRO++: quantize weights for allgather."),
        "zero_quantized_nontrainable_weights": _b(False, "ZeRO++: keep non-trainable weights quantized."),
        "zero_quantized_gradients": _b(False, "ZeRO++: quantize gradients for reduce-scatter."),
        "memory_efficient_linear": _b(True, "Use the memory-efficient linear layer (stage 3)."),
        "pipeline_loading_checkpoint": _b(False, "Pipeline the loading of a checkpoint (stage 3)."),
        "override_module_apply": _b(True, "Override `nn.Module.apply` for partitioned parameters (stage 3)."),
        "log_trace_cache_warnings": _b(False, "Log warnings from the parameter prefetch trace cache (stage 3).", since="0.16.0"),
        "enable_sanity_checks": _b(False, "Run expensive ZeRO sanity checks.", since="0.17.0"),
        "save_muon_momentum_buffer_in_memory": _b(False, "Keep the Muon momentum buffer in memory.", since="0.18.0"),
        "leaf_module": LEAF_MODULE,
        "mics_shard_size": _i(-1, "MiCS shard size (removed).", removed="0.19.7",
                              removed_message="MiCS ZeRO-3 sharding has been removed"),
        "mics_hierarchical_params_gather": _b(False, "MiCS hierarchical parameter gather (removed).", removed="0.19.7",
                                              removed_message="MiCS ZeRO-3 sharding has been removed"),
        "zeropp_loco_param": Key("object", None, "LoCo-Zero++ error feedback (removed).", nullable=True, since="0.16.0", removed="0.19.8",
                                 removed_message="LoCo-Zero++ has been removed; ZeRO++ quantized gradients work without it"),
    }),
    strict_since="0.0",
    # `"zero_optimization": true` is the legacy form (stage 1)
)

FP16 = _section(
    "fp16 mixed precision with dynamic or static loss scaling (pydantic from 0.17.1; hand-parsed before).",
    _lax({
        "enabled": _b(False, "Enable fp16 mixed-precision training.",
                      auto=(("transformers", "TrainingArguments.fp16 or fp16_full_eval"), ("accelerate", "mixed_precision == \"fp16\""))),
        "auto_cast": _b(False, "Cast the model's inputs to fp16."),
        "loss_scale": _n(0, "Static loss scale; 0 enables dynamic loss scaling.", minimum=0, minimum_since="0.18.8", no_bool=True),
        "initial_scale_power": _i(16, "Initial dynamic loss scale is 2**initial_scale_power."),
        "loss_scale_window": _i(1000, "Window over which to raise/lower the dynamic loss scale (> 0 with dynamic scaling).", no_bool=True),
        "hysteresis": _i(2, "Delay shift in dynamic loss scaling."),
        "consecutive_hysteresis": _b(False, "Refill hysteresis on every step without overflow."),
        "min_loss_scale": _i(1, "Minimum dynamic loss scale (> 0 with dynamic scaling).", no_bool=True),
        "fp16_master_weights_and_grads": _b(False, "Keep master weights and gradients in fp16 (needs ZeRO stage 1-3)."),
    }),
    strict_since="0.17.1",
)

BF16 = _section(
    "bfloat16 mixed precision (also read as `bfloat16`; pydantic from 0.17.1).",
    _lax({
        "enabled": _b(False, "Enable bfloat16 mixed-precision training.",
                      auto=(("transformers", "TrainingArguments.bf16 or bf16_full_eval"), ("accelerate", "mixed_precision in (\"bf16\", \"fp8\")"))),
        "immediate_grad_update": _b(False, "Apply gradient updates immediately instead of at the end of accumulation.", default_changes=(("0.17.1", True),)),
        "check_grad_overflow": _b(True, "Check gradients for overflow (inf/nan) each step.", default_changes=(("0.19.3", False),), since="0.17.1"),
        "bf16_master_weights_and_grads": _b(False, "Keep master weights and gradients in bf16 (needs ZeRO stage 1-3).", since="0.18.0"),
        "bf16_optimizer_states": _b(False, "Keep optimizer states in bf16 (needs bf16_master_weights_and_grads).", since="0.18.0"),
    }),
    strict_since="0.17.1",
)

_MONITOR_COMMON = {
    "enabled": _b(False, "Enable this monitor."),
    "output_path": _s("", "Directory for the logs."),
    "job_name": _s("DeepSpeedJobName", "Name of the job (a subdirectory of output_path)."),
}

_OPTIMIZERS = ("adam", "adamw", "lamb", "adagrad", "lion", "muadam", "muadamw", "musgd", "muon",
               "onebitadam", "zerooneadam", "onebitlamb")
_OPTIMIZERS_REMOVED = {"onebitadam": "0.19.7", "zerooneadam": "0.19.7", "onebitlamb": "0.19.7"}
_OPTIMIZERS_SINCE = {"muon": "0.17.0"}
# torch.optim classes DeepSpeed falls back to (getattr(torch.optim, type), case-sensitive)
_TORCH_OPTIMIZERS = ("Adadelta", "Adafactor", "Adagrad", "Adam", "AdamW", "Adamax", "ASGD", "LBFGS", "Muon", "NAdam",
                     "RAdam", "RMSprop", "Rprop", "SGD", "SparseAdam")
_SCHEDULERS = ("LRRangeTest", "OneCycle", "WarmupLR", "WarmupDecayLR", "WarmupCosineLR")

_SCHED_PARAMS = {
    "warmup_min_lr": _n(0.0, "Initial learning rate of the warmup.", auto=(("transformers", "0"), ("accelerate", "0"))),
    "warmup_max_lr": _n(0.001, "Learning rate at the end of the warmup.",
                        auto=(("transformers", "TrainingArguments.learning_rate"), ("accelerate", "the optimizer's lr"))),
    "warmup_num_steps": _i(1000, "Number of warmup steps (> 0 from DeepSpeed 0.19.6).",
                           auto=(("transformers", "TrainingArguments.get_warmup_steps(num_training_steps)"), ("accelerate", "max(1, DummyScheduler.warmup_num_steps)"))),
    "warmup_type": _s("log", "Warmup curve.", enum=("log", "linear")),
    "warmup_min_ratio": _n(0.0, "Initial learning-rate ratio of the cosine warmup."),
    "cos_min_ratio": _n(0.0001, "Final learning-rate ratio of the cosine decay."),
    "total_num_steps": _i(None, "Total number of training steps.", nullable=True,
                          auto=(("transformers", "the number of training steps"), ("accelerate", "DummyScheduler.total_num_steps (/ num_processes unless split_batches)"))),
    "last_batch_iteration": _i(-1, "Index of the last batch (for resuming)."),
    "lr_range_test_min_lr": _n(0.001, "LR range test: starting learning rate."),
    "lr_range_test_step_rate": _n(1.0, "LR range test: scaling rate."),
    "lr_range_test_step_size": _i(2000, "LR range test: training steps per learning-rate step."),
    "lr_range_test_staircase": _b(False, "LR range test: staircase instead of continuous increase."),
    "cycle_first_step_size": _i(2000, "OneCycle: steps in the first half of the cycle."),
    "cycle_first_stair_count": _i(0, "OneCycle: stairs in the first half."),
    "cycle_second_step_size": _i(None, "OneCycle: steps in the second half.", nullable=True),
    "cycle_second_stair_count": _i(None, "OneCycle: stairs in the second half.", nullable=True),
    "cycle_min_lr": _n(0.001, "OneCycle: minimum learning rate."),
    "cycle_max_lr": _n(0.01, "OneCycle: maximum learning rate."),
    "cycle_min_mom": _n(0.8, "OneCycle: minimum momentum."),
    "cycle_max_mom": _n(0.9, "OneCycle: maximum momentum."),
    "cycle_momentum": _b(True, "OneCycle: cycle the momentum too."),
    "decay_step_size": _i(0, "OneCycle: steps between decays after the cycle."),
    "decay_lr_rate": _n(0.0, "OneCycle: learning-rate decay rate."),
    "decay_mom_rate": _n(0.0, "OneCycle: momentum decay rate."),
}

_OPT_PARAMS_AUTO = {
    "lr": (("transformers", "TrainingArguments.learning_rate"), ("accelerate", "DummyOptim.lr")),
    "weight_decay": (("transformers", "TrainingArguments.weight_decay"), ("accelerate", "DummyOptim.weight_decay")),
    "betas": (("transformers", "[adam_beta1, adam_beta2]"),),
    "eps": (("transformers", "TrainingArguments.adam_epsilon"),),
}

OPTIMIZER = _section(
    "Optimizer DeepSpeed builds (hand-parsed; checked only at deepspeed.initialize).",
    {
        "type": _s(None, "DeepSpeed optimizer name (case-insensitive) or a torch.optim class name (case-sensitive).", nullable=True),
        "params": Key("object", None, "Keyword arguments of the optimizer constructor (`lr`, `betas`, `eps`, `weight_decay`, ...). "
                      "`max_grad_norm` is rejected at engine initialization: use `gradient_clipping`.", open=True, nullable=True),
        "legacy_fusion": _b(False, "Use the legacy fused optimizer."),
    },
)

SCHEDULER = _section(
    "Learning-rate scheduler DeepSpeed builds (hand-parsed; checked only at deepspeed.initialize).",
    {
        "type": _s(None, "Scheduler name.", nullable=True, enum=_SCHEDULERS,
                   enum_docs=("Learning-rate range test.", "1Cycle schedule.", "Warmup, then constant.",
                              "Warmup, then linear decay to 0 at total_num_steps.", "Warmup, then cosine decay.")),
        "params": _section("Scheduler parameters.", _SCHED_PARAMS, nullable=True),
    },
)

ACTIVATION_CHECKPOINTING = _section(
    "Activation checkpointing (hand-parsed; `configure()` kwarg names such as `checkpoint_in_cpu` are not JSON keys).",
    {
        "partition_activations": _b(False, "Partition activations across model-parallel GPUs."),
        "cpu_checkpointing": _b(False, "Offload partitioned activations to CPU (needs partition_activations)."),
        "contiguous_memory_optimization": _b(False, "Copy partitioned activations into a contiguous buffer."),
        "number_checkpoints": _i(None, "Total number of activation checkpoints (for the contiguous buffer).", nullable=True),
        "synchronize_checkpoint_boundary": _b(False, "Synchronize at each checkpoint boundary."),
        "profile": _b(False, "Log forward/backward time of each checkpoint function."),
    },
)

AIO = _section(
    "Asynchronous I/O for NVMe offload (top-level; hand-parsed).",
    {
        "block_size": _i(1_048_576, "I/O block size in bytes."),
        "queue_depth": _i(8, "I/O queue depth."),
        "intra_op_parallelism": _i(1, "I/O parallelism per operation.", since="0.16.4"),
        "thread_count": _i(1, "Old name of `intra_op_parallelism` (ignored from 0.16.4).", removed="0.16.4",
                           removed_message="`aio.thread_count` is ignored since DeepSpeed 0.16.4; use `intra_op_parallelism`",
                           replaced_by="aio.intra_op_parallelism"),
        "single_submit": _b(False, "Submit requests to storage one at a time."),
        "overlap_events": _b(True, "Overlap submission and completion of requests."),
        "use_gds": _b(False, "Use NVIDIA GPUDirect Storage (CUDA only)."),
    },
    nullable=True,
)

FLOPS_PROFILER = _section(
    "FLOPS profiler (hand-parsed).",
    {
        "enabled": _b(False, "Enable the profiler (also turns on wall_clock_breakdown)."),
        "recompute_fwd_factor": _n(0.0, "Factor for recomputed forward passes (activation checkpointing)."),
        "profile_step": _i(1, "Training step at which to profile."),
        "module_depth": _i(-1, "Depth of the module tree to print (-1: all)."),
        "top_modules": _i(1, "Number of top modules to print."),
        "detailed": _b(True, "Print the detailed model profile."),
        "output_file": _s(None, "File to write the profile to (default: stdout).", nullable=True),
    },
)

COMMS_LOGGER = _section(
    "Communication logger (pydantic).",
    _lax({
        "enabled": _b(False, "Enable the communication logger."),
        "verbose": _b(False, "Log every communication operation."),
        "prof_all": _b(True, "Profile all operations."),
        "debug": _b(False, "Add the calling function to each log entry."),
        "prof_ops": Key("array", [], "Operations to profile when prof_all is false.", items="string"),
    }),
    strict_since="0.0",
)

HYBRID_ENGINE = _section(
    "Hybrid engine for RLHF (DeepSpeed-Chat; pydantic).",
    _lax({
        "enabled": _b(False, "Enable the hybrid engine."),
        "max_out_tokens": _i(512, "Maximum number of generated tokens.", exclusive_minimum=0),
        "inference_tp_size": _i(1, "Tensor-parallel size for generation."),
        "release_inference_cache": _b(False, "Release the inference cache after generation."),
        "pin_parameters": _b(True, "Pin parameters in memory."),
        "tp_gather_partition_size": _i(8, "Partition size for gathering tensor-parallel weights."),
        "enable_cuda_graph": _b(False, "Capture generation in CUDA graphs.", since="0.19.8"),
    }),
    strict_since="0.0",
)

COMPILE = _section(
    "Compilation: DeepCompile (0.16+). The older torch.compile block (`disable`, `backend`, `kwargs`, ...) is rejected by current versions.",
    _lax({
        "deepcompile": _b(False, "Enable DeepCompile.", since="0.16.0"),
        "free_activation": _b(False, "Free activations eagerly.", since="0.16.0"),
        "free_activation_threshold": _i(10_485_760, "Activations of at least this many bytes are freed eagerly.", since="0.16.0"),
        "offload_activation": _b(False, "Offload activations.", since="0.16.0"),
        "offload_activation_pin_memory": _b(True, "Pin memory for offloaded activations.", since="0.19.8"),
        "offload_opt_states": _b(False, "Offload optimizer states.", since="0.16.0"),
        "offload_parameters": _b(False, "Offload parameters.", since="0.16.0"),
        "double_buffer": _b(True, "Double buffering.", since="0.16.0"),
        "symmetric_memory": _b(False, "Use symmetric memory.", since="0.16.0"),
        "debug_log": _b(False, "Debug logging.", since="0.16.0"),
        "sync_before_reduce": _b(False, "Synchronize before reduce.", since="0.16.0"),
        "sync_after_reduce": _b(False, "Synchronize after reduce.", since="0.16.0"),
        "sync_before_allgather": _b(False, "Synchronize before allgather.", since="0.16.0"),
        "sync_after_allgather": _b(False, "Synchronize after allgather.", since="0.16.0"),
        "keep_int_input_tensors": _b(True, "Keep integer input tensors.", since="0.16.0"),
        "keep_all_input_tensors": _b(False, "Keep all input tensors.", since="0.16.0"),
        "autoep_non_moe": _b(False, "Compile non-MoE parents of AutoEP layers.", since="0.19.8"),
        "passes": Key("array", None, "Compiler passes to run.", nullable=True, items="string", since="0.16.0"),
        # the torch.compile block of DeepSpeed <= 0.15 (`deepspeed/runtime/compiler.py`)
        "disable": _b(False, "torch.compile block of DeepSpeed <= 0.15: disable compilation.", removed="0.16.0",
                      removed_message="the torch.compile `compile` block was replaced by DeepCompile; call `engine.compile()` instead"),
        "enabled": _b(False, "torch.compile block of older DeepSpeed: enable compilation.", removed="0.16.0",
                      removed_message="the torch.compile `compile` block was replaced by DeepCompile; call `engine.compile()` instead"),
        "backend": _s("inductor", "torch.compile block of DeepSpeed <= 0.15: backend.", removed="0.16.0",
                      removed_message="the torch.compile `compile` block was replaced by DeepCompile; pass `backend` to `engine.compile()`"),
        "kwargs": Key("object", {}, "torch.compile block of DeepSpeed <= 0.15: torch.compile kwargs.", open=True, removed="0.16.0",
                      removed_message="the torch.compile `compile` block was replaced by DeepCompile; pass kwargs to `engine.compile()`"),
        "fullgraph": _b(False, "torch.compile block of DeepSpeed <= 0.15: fullgraph.", removed="0.16.0",
                        removed_message="the torch.compile `compile` block was replaced by DeepCompile; pass it to `engine.compile()`"),
        "dynamic": _b(None, "torch.compile block of DeepSpeed <= 0.15: dynamic shapes.", nullable=True, removed="0.16.0",
                      removed_message="the torch.compile `compile` block was replaced by DeepCompile; pass it to `engine.compile()`"),
        "mode": _s(None, "torch.compile block of DeepSpeed <= 0.15: mode.", nullable=True, removed="0.16.0",
                   removed_message="the torch.compile `compile` block was replaced by DeepCompile; pass it to `engine.compile()`"),
        "options": Key("object", None, "torch.compile block of DeepSpeed <= 0.15: backend options.", open=True, nullable=True,
                       removed="0.16.0",
                       removed_message="the torch.compile `compile` block was replaced by DeepCompile; pass it to `engine.compile()`"),
    }),
    strict_since="0.0",
)

TENSOR_PARALLEL = _section(
    "Automatic tensor parallelism for training (AutoTP, pydantic `TPTrainingConfig`, 0.16+).",
    {
        "autotp_size": _i(0, "Tensor-parallel degree (0 disables AutoTP).", lax=True),
        "tp_overlap_comm": _b(False, "Overlap tensor-parallel communication.", lax=True),
        "keep_module_on_host": _b(False, "Keep modules on the host while partitioning.", lax=True),
        "partition_config": Key("object", None, "Custom partitioning rules.", nullable=True, open=True),
        "preset_model": _s(None, "Preset partitioning of a known model family.", nullable=True),
        "injection_policy_tuple": Key("array", None, "Injection policy (module, layer names).", nullable=True),
        "replace_with_kernel_inject": _b(False, "Inject DeepSpeed kernels.", aliases=("kernel_inject",), lax=True),
        "tensor_parallel": _section("Tensor-parallel group settings.", _lax({
            "tp_size": _i(1, "Tensor-parallel size."),
            "tp_grain_size": _i(1, "Granularity of the partitioning."),
            "mpu": Key(("object", "null"), None, "Model-parallel unit (code only)."),
            "tp_group": Key(("object", "null"), None, "Process group (code only)."),
        }), strict_since="0.0", aliases=("tp",)),
        "dtype": _s("float16", "Data type of the partitioned model (a torch dtype name).",
                    enum=("float16", "fp16", "half", "bfloat16", "bf16", "float32", "fp32", "float", "int8")),
        "vocab_parallel_lm_head": _b(None, "Partition the LM head over the vocabulary.", nullable=True, lax=True),
        "vocab_parallel_ce_backend": _s("torch", "Cross-entropy backend for the vocabulary-parallel head.", enum=("torch", "liger"), since="0.19.8"),
    },
    strict_since="0.0",
    since="0.16.0",
)

CHECKPOINT = _section(
    "Checkpointing (hand-parsed).",
    {
        "tag_validation": _s("Warn", "Check that checkpoint tags match across ranks.", enum=("Warn", "Ignore", "Fail"),
                             enum_docs=("Warn on a mismatch.", "Do not check.", "Fail on a mismatch."), enum_case_insensitive=True),
        "load_universal": _b(False, "Load a universal checkpoint."),
        "use_node_local_storage": _b(False, "Save to node-local storage (each node saves its own copy)."),
        "parallel_write": _section("Parallel checkpoint writing.", {
            "pipeline_stage": _b(False, "Parallelize writes across pipeline stages (must be a JSON boolean)."),
        }),
        "checkpoint_serialization": _b(True, "Serialize checkpoints with torch.save.", since="0.17.0"),
        "writer": _section("Fast checkpoint writer.", {
            "type": _s("FAST", "Writer implementation.", enum=("MOCK", "PYTHON", "FAST"), enum_case_insensitive=True),
            "io_buffer_size": _i(64 * 1024**2, "I/O buffer size in bytes."),
            "io_buffer_double": _b(True, "Double-buffer I/O."),
            "io_multiplier": _i(1, "I/O multiplier."),
            "show_statistics": _b(False, "Print I/O statistics."),
            "data_parallel": _s(None, "Data-parallel unit that writes.", nullable=True, enum=("SOCKET", "MACHINE"), enum_case_insensitive=True),
            "decoupled": _b(False, "Decouple writing from training."),
        }, nullable=True, since="0.17.0"),
    },
)

DATA_TYPES = _section(
    "Data types of gradient accumulation, parameters and buffers (hand-parsed).",
    {
        "grad_accum_dtype": _s(None, "Data type of gradient accumulation.", nullable=True, enum=("fp32", "fp16", "bf16")),
        "param_dtype": _s(None, "Data type of parameters.", nullable=True, enum=("fp32", "fp16", "bf16"), since="0.19.5"),
        "buffer_dtype": _s(None, "Data type of buffers.", nullable=True, enum=("fp32", "fp16", "bf16"), since="0.19.5"),
        "keep_in_fp32_modules": Key(("string", "array"), "auto", "`\"auto\"` or a list of module-name patterns whose buffers stay in fp32.",
                                    items="string", since="0.19.8", auto=(("native", "DeepSpeed's own default list"),)),
    },
)

PIPELINE = _section(
    "Pipeline parallelism (merged into defaults without validation).",
    {
        "stages": Key(("string", "integer"), "auto", "Number of pipeline stages.", auto=(("native", "DeepSpeed derives it from the topology"),)),
        "partition": _s("best", "Partitioning method (parameters, uniform, type:REGEX, best)."),
        "seed_layers": _b(False, "Use a different seed per layer."),
        "activation_checkpoint_interval": _i(0, "Checkpoint every N layers (0 disables)."),
        "pipe_partitioned": _b(True, "Partition activations between pipeline stages."),
        "grad_partitioned": _b(True, "Partition gradients between pipeline stages."),
    },
    open=True,
)

AUTOTUNING = _section(
    "Autotuner (`deepspeed --autotuning`; hand-parsed).",
    {
        "enabled": _b(False, "Enable autotuning."),
        "results_dir": _s("autotuning_results", "Directory for results."),
        "exps_dir": _s("autotuning_exps", "Directory for experiments."),
        "overwrite": _b(True, "Overwrite existing results."),
        "fast": _b(True, "Fast mode: tune micro-batch size and ZeRO stage only."),
        "start_profile_step": _i(3, "First step to profile."),
        "end_profile_step": _i(5, "Last step to profile."),
        "metric": _s("throughput", "Metric to optimize.", enum=("latency", "throughput", "flops")),
        "metric_path": _s(None, "File the training script writes the metric to.", nullable=True),
        "model_info": Key("object", None, "Model information (num_params, hidden_size, num_layers, profile).", nullable=True, open=True),
        "model_info_path": _s(None, "File with model information.", nullable=True),
        "arg_mappings": Key("object", None, "Mapping of DeepSpeed keys to training-script arguments.", nullable=True, open=True),
        "tuner_type": _s("gridsearch", "Search strategy.", enum=("gridsearch", "random", "model_based")),
        "tuner_early_stopping": _i(5, "Stop after this many experiments without improvement."),
        "tuner_num_trials": _i(50, "Maximum number of experiments."),
        "num_tuning_micro_batch_sizes": _i(3, "Number of micro-batch sizes to try."),
        "mp_size": _i(1, "Model-parallel degree."),
        "max_train_batch_size": _i(None, "Largest train batch size to try.", nullable=True),
        "min_train_batch_size": _i(1, "Smallest train batch size to try."),
        "max_train_micro_batch_size_per_gpu": _i(1024, "Largest micro batch to try."),
        "min_train_micro_batch_size_per_gpu": _i(1, "Smallest micro batch to try."),
    },
)

DATA_EFFICIENCY = _section(
    "Data efficiency library: curriculum learning, dynamic batching, random-LTD (hand-parsed).",
    {
        "enabled": _b(False, "Enable the data efficiency library."),
        "seed": _i(1234, "Random seed."),
        "data_sampling": Key("object", _UNSET, "Data sampling: num_epochs, num_workers, pin_memory, curriculum_learning, dynamic_batching.", open=True),
        "data_routing": Key("object", _UNSET, "Data routing: random_ltd.", open=True),
    },
)

TIMERS = _section("Timers.", {
    "throughput": _section("Throughput timer (pydantic).", _lax({
        "enabled": _b(True, "Enable the throughput timer."),
        "synchronized": _b(True, "Synchronize the device when measuring."),
    }), strict_since="0.0"),
})

TORCH_AUTOCAST = _section(
    "torch.autocast mixed precision (hand-parsed, 0.17+).",
    {
        "enabled": _b(False, "Enable torch.autocast."),
        "dtype": _s(_UNSET, "Lower-precision data type (default: the model's).",
                    enum=("bfloat16", "bf16", "torch.bfloat16", "float16", "fp16", "half", "torch.float16",
                          "float32", "fp32", "float", "torch.float32", "int8", "torch.int8")),
        "lower_precision_safe_modules": Key("array", _UNSET, "Module classes safe to run in lower precision (default: DeepSpeed's list).",
                                            items="string"),
    },
    since="0.17.0",
)

WEIGHT_QUANTIZATION = _section(
    "Weight quantization (inference `WeightQuantConfig`, pydantic).",
    _lax({
        "enabled": _b(True, "Enable weight quantization."),
        "num_bits": _i(8, "Number of bits."),
        "q_type": _s("symmetric", "Quantization type.", enum=("symmetric", "asymmetric")),
        "q_groups": _i(1, "Number of quantization groups."),
        "quantized_initialization": Key("object", {}, "Quantize weights at initialization.", open=True),
        "post_init_quant": Key("object", {}, "Quantize after initialization.", open=True),
    }),
    strict_since="0.0",
)

_MONITOR = dict(strict_since="0.0")

_REMOVED_TOP = {
    "nebula": ("0.19.7", "Nebula checkpointing has been removed"),
    "compression_training": ("0.19.7", "the DeepSpeed compression library has been removed"),
    "quantize_training": ("0.19.7", "Mixture-of-Quantization (MoQ) / `quantize_training` has been removed"),
    "sparse_attention": ("0.19.7", "DeepSpeed Sparse Attention has been removed"),
    "amp": ("0.19.8", "NVIDIA Apex AMP integration has been removed; use `fp16`, `bf16` or `torch_autocast`"),
    "sparse_gradients": ("0.19.8", "sparse compression of dense embedding gradients has been removed"),
    "eigenvalue": ("0.19.8", "eigenvalue-based MoQ has been removed"),
    "elasticity": ("0.19.8", "elastic training has been removed; set the batch keys directly"),
    "graph_harvesting": ("0.19.8", "graph harvesting has been removed"),
    "curriculum_learning": ("0.19.8", "top-level `curriculum_learning` has been removed; use `data_efficiency.data_sampling.curriculum_learning`"),
    "progressive_layer_drop": ("0.19.8", "Progressive Layer Dropping has been removed"),
}


def _removed_block(name: str, doc: str, t: str | tuple[str, ...] = "object") -> Key:
    version, message = _REMOVED_TOP[name]
    return Key(t, _UNSET, doc, removed=version, removed_message=message, open=True,
               replaced_by="data_efficiency.data_sampling.curriculum_learning" if name == "curriculum_learning" else None)


_COMM_DTYPE = dict(enum=("fp32", "fp16", "bf16"), enum_case_insensitive=True, nullable=True)

TOP: Key = _section(
    "DeepSpeed training configuration (`ds_config.json`), DeepSpeed 0.15 to 0.19.8.",
    {
        "train_batch_size": _i(None, "Global batch size: train_micro_batch_size_per_gpu x gradient_accumulation_steps x world size.",
                               nullable=True, exclusive_minimum=0, auto=_AUTO_BATCH_TBS),
        "train_micro_batch_size_per_gpu": _i(None, "Batch size of one step on one GPU.", nullable=True, exclusive_minimum=0, auto=_AUTO_BATCH_MBS),
        "gradient_accumulation_steps": _i(None, "Steps to accumulate gradients over before an optimizer step (derived when absent).",
                                          nullable=True, exclusive_minimum=0, auto=_AUTO_GAS),
        "managed_gradient_accumulation": _b(True, "DeepSpeed manages the accumulation boundary.", since="0.19.5"),
        "optimizer": OPTIMIZER,
        "scheduler": SCHEDULER,
        "zero_allow_untested_optimizer": _b(False, "Allow ZeRO with an optimizer DeepSpeed does not know (accelerate and the HF Trainer set it for torch optimizers)."),
        "zero_force_ds_cpu_optimizer": _b(True, "Require DeepSpeed's CPU optimizer when offloading the optimizer."),
        "gradient_clipping": _n(1.0, "Clip gradients to this global norm (0 disables).", default_changes=(("0.19.3", 0.0),),
                                auto=(("transformers", "TrainingArguments.max_grad_norm"),
                                      ("accelerate", "the plugin's gradient_clipping (YAML deepspeed_config.gradient_clipping), else 1.0"))),
        "prescale_gradients": _b(False, "Scale gradients before allreduce."),
        "gradient_predivide_factor": _n(1.0, "Divide gradients by this factor before allreduce."),
        "gradient_allreduce_op": _s("mean", "Gradient allreduce operation (`sum` is rejected with ZeRO-3, ZenFlow or DeepCompile).",
                                    enum=("mean", "sum"), enum_case_insensitive=True, since="0.19.6"),
        "sparse_gradients": _removed_block("sparse_gradients", "Sparse gradients for dense embeddings (removed).", ("boolean", "object")),
        "fp16": FP16,
        "bf16": BF16,
        "bfloat16": Key(**{**BF16.__dict__, "doc": "Old name of the `bf16` block (`bf16` wins if both are present).",
                           "deprecated": "`bfloat16` is the old name of the `bf16` block; write `bf16`", "replaced_by": "bf16"}),
        "amp": _removed_block("amp", "NVIDIA Apex AMP (removed in 0.19.8)."),
        "torch_autocast": TORCH_AUTOCAST,
        "communication_data_type": _s(None, "Data type of gradient communication.", **_COMM_DTYPE),  # type: ignore[arg-type]
        "seq_parallel_communication_data_type": _s("fp32", "Data type of sequence-parallel communication.", since="0.16.0",
                                                   **_COMM_DTYPE),  # type: ignore[arg-type]
        "seq_parallel_comm_data_type": _s("fp32", "Old name of `seq_parallel_communication_data_type` (DeepSpeed <= 0.15).",
                                          removed="0.16.0", replaced_by="seq_parallel_communication_data_type",
                                          removed_message="renamed `seq_parallel_communication_data_type`; the old name is ignored",
                                          **_COMM_DTYPE),  # type: ignore[arg-type]
        "data_types": DATA_TYPES,
        "zero_optimization": ZERO,
        "activation_checkpointing": ACTIVATION_CHECKPOINTING,
        "aio": AIO,
        "flops_profiler": FLOPS_PROFILER,
        "tensorboard": _section("TensorBoard monitor (pydantic).", _lax(dict(_MONITOR_COMMON)), **_MONITOR),  # type: ignore[arg-type]
        "csv_monitor": _section("CSV monitor (pydantic).", _lax(dict(_MONITOR_COMMON)), **_MONITOR),  # type: ignore[arg-type]
        "wandb": _section("Weights & Biases monitor (pydantic).", _lax({
            "enabled": _b(False, "Enable the monitor."),
            "group": _s(None, "Run group.", nullable=True),
            "team": _s(None, "Team (entity).", nullable=True),
            "project": _s("deepspeed", "Project name."),
        }), **_MONITOR),  # type: ignore[arg-type]
        "comet": _section("Comet monitor (pydantic).", _lax({
            "enabled": _b(False, "Enable the monitor."),
            "samples_log_interval": _i(100, "Log every N samples."),
            "project": _s(None, "Project.", nullable=True),
            "workspace": _s(None, "Workspace.", nullable=True),
            "api_key": _s(None, "API key.", nullable=True),
            "experiment_name": _s(None, "Experiment name.", nullable=True),
            "experiment_key": _s(None, "Experiment key.", nullable=True),
            "online": _b(None, "Log online.", nullable=True),
            "mode": _s(None, "Comet start mode.", nullable=True),
        }), **_MONITOR),  # type: ignore[arg-type]
        "comms_logger": COMMS_LOGGER,
        "hybrid_engine": HYBRID_ENGINE,
        "compile": COMPILE,
        "tensor_parallel": TENSOR_PARALLEL,
        "expert_parallel": Key("object", None, "Automatic expert parallelism (AutoEP, 0.19+; custom parser).", open=True, since="0.19.0"),
        "timers": TIMERS,
        "weight_quantization": WEIGHT_QUANTIZATION,
        "checkpoint": CHECKPOINT,
        "datastates_ckpt": Key("object", None, "DataStates asynchronous checkpointing (0.18+).", open=True, nullable=True, since="0.18.0"),
        "pipeline": PIPELINE,
        "autotuning": AUTOTUNING,
        "data_efficiency": DATA_EFFICIENCY,
        "steps_per_print": _i(None, "Print progress every N steps (no printing by default since 0.15.2).", nullable=True, default_changes=(("0.15.2", 10),)),
        "wall_clock_breakdown": _b(False, "Time forward/backward/step (forced on by flops_profiler.enabled)."),
        "memory_breakdown": _b(False, "Print memory usage at each step."),
        "dump_state": _b(False, "Print the DeepSpeed state after initialization."),
        "disable_allgather": _b(False, "Disable allgather."),
        "disable_python_gc": _b(False, "Disable Python garbage collection during training.", since="0.19.8"),
        "vocabulary_size": _i(None, "Vocabulary size (a warning if not a multiple of 8).", nullable=True),
        "log_level": _s(None, "Log level.", nullable=True, since="0.19.5"),
        "dataloader_drop_last": _b(False, "Drop the last incomplete batch of DeepSpeed's dataloader."),
        "use_data_before_expert_parallelism": _b(False, "Use data-before-expert parallel topology."),
        "sequence_parallel_size": _i(1, "Sequence-parallel degree; DeepSpeed divides the world size by it for the batch equation.",
                                     exclusive_minimum=0),
        "nebula": _removed_block("nebula", "Nebula checkpointing (removed in 0.19.7)."),
        "compression_training": _removed_block("compression_training", "Compression library (removed in 0.19.7)."),
        "quantize_training": _removed_block("quantize_training", "Mixture-of-Quantization (removed in 0.19.7)."),
        "sparse_attention": _removed_block("sparse_attention", "Sparse attention (removed in 0.19.7)."),
        "eigenvalue": _removed_block("eigenvalue", "Eigenvalue MoQ (removed in 0.19.8)."),
        "elasticity": _removed_block("elasticity", "Elastic training (removed in 0.19.8)."),
        "graph_harvesting": _removed_block("graph_harvesting", "Graph harvesting (removed in 0.19.8).", ("boolean", "object")),
        "curriculum_learning": _removed_block("curriculum_learning", "Legacy curriculum learning (removed in 0.19.8)."),
        "progressive_layer_drop": _removed_block("progressive_layer_drop", "Progressive layer dropping (removed in 0.19.8)."),
        "allgather_size": _i(500_000_000, "Legacy: allgather bucket size when `zero_optimization` is `true`."),
    },
)

# Keys that mark a document as a DeepSpeed config.
_MARKERS = ("zero_optimization", "train_batch_size", "train_micro_batch_size_per_gpu", "gradient_accumulation_steps",
            "optimizer", "scheduler", "fp16", "bf16", "steps_per_print", "gradient_clipping", "wall_clock_breakdown",
            "zero_allow_untested_optimizer", "activation_checkpointing", "flops_profiler", "aio")
_ACCELERATE_MARKERS = ("compute_environment", "distributed_type", "num_processes", "deepspeed_config", "fsdp_config", "mixed_precision")


# -- public API --------------------------------------------------------------------------------

def is_deepspeed(doc: Document) -> bool:
    """Whether a document looks like a DeepSpeed config (by content, not by name)."""
    data = doc.data
    if not isinstance(data, dict) or not data:
        return False
    if any(k in data for k in _ACCELERATE_MARKERS):
        return False
    strong = ("zero_optimization", "train_batch_size", "train_micro_batch_size_per_gpu")
    if any(k in data for k in strong):
        return True
    hits = [k for k in _MARKERS if k in data]
    if any(isinstance(data.get(k), dict) and "enabled" in data[k] for k in ("fp16", "bf16")):
        return True
    known = sum(1 for k in data if k in (TOP.children or {}))
    return len(hits) >= 2 and known * 2 >= len(data)


def lookup(path: str | tuple[str, ...]) -> Key | None:
    """The table entry of a dotted path (aliases accepted), or ``None``."""
    parts = path.split(".") if isinstance(path, str) else path
    cur: Key | None = TOP
    for part in parts:
        if cur is None or cur.children is None:
            return None
        cur = _child(cur, part)[1]
    return cur


def _child(section: Key, name: str) -> tuple[str, Key | None]:
    """(canonical name, entry) of a key in a section, following aliases."""
    children = section.children or {}
    if name in children:
        return name, children[name]
    for canon, k in children.items():
        if name in k.aliases:
            return canon, k
    return name, None


def iter_keys(section: Key = TOP, prefix: str = "") -> Iterator[tuple[str, Key]]:
    """Every (dotted path, entry) of the table, depth first."""
    for name, k in (section.children or {}).items():
        path = f"{prefix}{name}"
        yield path, k
        if k.children is not None:
            yield from iter_keys(k, path + ".")


# -- JSON Schema -------------------------------------------------------------------------------

def _json_default(v: Any) -> Any:
    if isinstance(v, float) and (math.isinf(v) or math.isnan(v)):
        return None
    return v


def _version_notes(k: Key) -> list[str]:
    notes = []
    if k.since:
        notes.append(f"Since DeepSpeed {k.since}.")
    for version, old in k.default_changes:
        notes.append(f"Default before {version}: `{json.dumps(old)}`.")
    if k.removed:
        notes.append(f"Removed in DeepSpeed {k.removed}: {k.removed_message or 'no longer read'}.")
    if k.aliases:
        notes.append("Also accepted as " + ", ".join(f"`{a}`" for a in k.aliases) + ".")
    fill = k.fillers()
    if fill:
        for who in ("native", "autotuner", "transformers", "accelerate"):
            if who in fill:
                label = _FILLER_LABEL[who]
                notes.append(f"`\"auto\"`: {label} fills it from {fill[who]}.")
    return notes


def _schema_for(k: Key, strict_parent: bool) -> dict[str, Any]:
    s: dict[str, Any] = {}
    types = [k.type] if isinstance(k.type, str) else list(k.type)
    if k.nullable and "null" not in types:
        types.append("null")
    notes = _version_notes(k)
    text = k.doc + ("\n\n" + " ".join(notes) if notes else "")
    s["description"] = text.replace("`", "")
    s["markdownDescription"] = text
    if k.default is not _UNSET:
        s["default"] = _json_default(k.default)
    if k.removed or k.deprecated:
        s["deprecationMessage"] = (k.deprecated or f"Removed in DeepSpeed {k.removed}: {k.removed_message}").replace("`", "")
    if k.children is not None:
        props = {}
        for name, child in k.children.items():
            props[name] = _schema_for(child, k.strict_since is not None)
            for alias in child.aliases:
                alias_schema = dict(props[name])
                alias_schema["description"] = f"Alternative spelling of {name}."
                alias_schema["markdownDescription"] = f"Alternative spelling of `{name}`."
                props[alias] = alias_schema
        s["type"] = ["object", "null"] if k.nullable else "object"
        if k is ZERO:
            s["type"] = ["object", "boolean"]
        s["properties"] = props
        if not k.open:
            s["additionalProperties"] = False
        return s
    body: dict[str, Any] = {"type": types[0] if len(types) == 1 else types}
    if k.enum:
        body["enum"] = list(k.enum) + ([None] if k.nullable else [])
        if k.enum_docs:
            body["markdownEnumDescriptions"] = list(k.enum_docs) + (["Not set."] if k.nullable else [])
    if k.items and "array" in types:
        body["items"] = {"type": k.items}
    for attr, name in (("minimum", "minimum"), ("exclusive_minimum", "exclusiveMinimum"),
                       ("maximum", "maximum"), ("exclusive_maximum", "exclusiveMaximum")):
        value = getattr(k, attr)
        if value is not None:
            body[name] = value
    if k.fillers():
        s["anyOf"] = [body, {"const": "auto", "description": "Filled in by " + ", ".join(
            _FILLER_LABEL[w] for w in k.fillers())}]
    else:
        s.update(body)
    return s


def deepspeed_schema() -> dict[str, Any]:
    """The JSON Schema (draft-07) of a DeepSpeed config, generated from :data:`TOP`."""
    schema: dict[str, Any] = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "$id": SCHEMA_ID,
        "title": f"DeepSpeed configuration (ds_config.json), DeepSpeed {OLDEST} to {NEWEST}",
    }
    schema.update(_schema_for(TOP, False))
    return schema


def write_schema(path: str) -> None:
    """Write the generated schema to ``path`` (the committed ``schemas/deepspeed-config.schema.json``)."""
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(json.dumps(deepspeed_schema(), indent=2, sort_keys=False) + "\n")


# -- validation --------------------------------------------------------------------------------

_TRUE_STR = {"1", "on", "t", "true", "y", "yes"}
_FALSE_STR = {"0", "off", "f", "false", "n", "no"}


def _json_type(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int):
        return "integer"
    if isinstance(v, float):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    return "object"


def _strict_ok(v: Any, t: str) -> bool:
    jt = _json_type(v)
    if t == "number":
        return jt in ("integer", "number")
    if t == "integer":
        # pydantic converts integral floats only below 2**63 (int_parsing_size)
        return jt == "integer" or (jt == "number" and math.isfinite(v) and float(v).is_integer() and abs(v) < 2.0**63)
    return jt == t


def _lax_ok(v: Any, t: str) -> bool:
    """Whether pydantic v2's lax mode turns ``v`` into type ``t`` (what DeepSpeed's models accept)."""
    if _strict_ok(v, t):
        return True
    if t == "boolean":
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return v in (0, 1)
        return isinstance(v, str) and v.strip().lower() in _TRUE_STR | _FALSE_STR
    if t == "integer":
        if isinstance(v, bool):
            return True
        if isinstance(v, str):
            s = v.strip()
            try:
                int(s)
                return True
            except ValueError:
                try:
                    f = float(s)
                except ValueError:
                    return False
                return math.isfinite(f) and f.is_integer() and abs(f) < 2.0**63
        return False
    if t == "number":
        if isinstance(v, bool):
            return True
        if isinstance(v, str):
            try:
                float(v.strip())
                return True
            except ValueError:
                return False
    return False


def _coerce(v: Any, t: str) -> Any:
    """The value pydantic's lax mode produces (for range checks); ``v`` itself if unknown."""
    if t in ("integer", "number") and isinstance(v, str):
        try:
            f = float(v.strip())
            return int(f) if t == "integer" else f
        except ValueError:
            return v
    if t in ("integer", "number") and isinstance(v, bool):
        return int(v)
    return v


@dataclass
class _Ctx:
    doc: Document
    runtime: str
    version: Version | None
    findings: list[Finding] = field(default_factory=list)
    autotuning: bool = False

    def add(self, rule: str, severity: Severity, message: str, key: str, node: Node | None,
            suggestion: str | None = None) -> None:
        if node is None:
            line, col = self.doc.position(key) if key else (1, 1)
            self.findings.append(Finding(rule, severity, message, key, line, col, suggestion))
            return
        self.findings.append(Finding(rule, severity, message, key, node.line + 1, node.col + 1, suggestion,
                                     node.end_line + 1, node.end_col + 1))

    def active(self, since: str | None, removed: str | None) -> bool | None:
        """True if the key exists in the target version, False if not, None if unknown (no version)."""
        if self.version is None:
            return None
        s, r = _ver(since), _ver(removed)
        if s is not None and self.version < s:
            return False
        if r is not None and self.version >= r:
            return False
        return True


def _fmt(v: Any) -> str:
    return json.dumps(v) if not isinstance(v, float) or math.isfinite(v) else str(v)


def _suggest(name: str, section: Key) -> list[str]:
    names: list[str] = []
    for canon, k in (section.children or {}).items():
        if k.removed is None:
            names.append(canon)
            names.extend(k.aliases)
    ranked = difflib.get_close_matches(name, names, n=3, cutoff=0.6)
    if not ranked:
        lowered = {n.lower(): n for n in names}
        ranked = [lowered[m] for m in difflib.get_close_matches(name.lower(), list(lowered), n=3, cutoff=0.6)]
    return ranked


def _where_else(name: str) -> list[str]:
    """Other sections that know a key of this name (for a key at the wrong level)."""
    return [p for p, k in iter_keys() if p.rsplit(".", 1)[-1] == name and k.removed is None]


def _strict_here(ctx: _Ctx, section: Key) -> bool | None:
    """Whether unknown keys of this section raise in the target version (None: depends on the version)."""
    if section.strict_since is None:
        return False
    since = _ver(section.strict_since)
    if ctx.version is None:
        return True if since is None or since <= Version(OLDEST) else None
    return since is None or ctx.version >= since


def validate_deepspeed(doc: Document, *, world_size: int | None = None, runtime: str = "accelerate",
                       deepspeed_version: str | None = None) -> list[Finding]:
    """Check a DeepSpeed config. Returns findings (1-based positions), never raises on content.

    ``runtime`` is who runs the file: ``deepspeed`` (plain ``deepspeed.initialize``),
    ``accelerate`` (``Accelerator.prepare``) or ``transformers`` (the HF Trainer, which fills
    more ``"auto"`` values). ``deepspeed_version`` turns version-dependent warnings (removed
    blocks, keys newer than the version) into errors; ``world_size`` enables the batch equation.
    Raises :class:`accelconf.errors.UsageError` for an unknown runtime or an unparsable version.
    """
    if runtime not in RUNTIMES:
        raise UsageError(f"runtime must be one of {', '.join(RUNTIMES)}, not {runtime!r}")
    version = _ver(deepspeed_version) if deepspeed_version else None
    if deepspeed_version and version is None:
        raise UsageError(f"not a DeepSpeed version: {deepspeed_version!r}")
    ctx = _Ctx(doc, runtime, version)
    ctx.autotuning = isinstance(doc.data, dict) and isinstance(doc.data.get("autotuning"), dict) \
        and doc.data["autotuning"].get("enabled") is True
    for q in doc.quirks:
        if q.kind == "duplicate-key":
            # DeepSpeed's file loader raises on duplicates; json.load (accelerate, transformers) keeps the last
            ctx.findings.append(Finding("ds-duplicate-key", "error" if runtime == "deepspeed" else "warning",
                                        q.message + "; DeepSpeed's own file loader rejects duplicate keys, "
                                        "accelerate and transformers silently keep the last one", "", q.line + 1, q.col + 1))
        else:
            ctx.findings.append(Finding("ds-json-portability", "warning",
                                        q.message + ("; DeepSpeed's hjson loader reads it, other tools may not" if runtime == "deepspeed"
                                                     else f"; {runtime} reads this file with json.load and fails"),
                                        "", q.line + 1, q.col + 1))
    root = doc.root
    if root is None or root.kind != "map":
        ctx.add("ds-type", "error", "a DeepSpeed config must be a JSON object", "", root)
        return ctx.findings
    _walk(ctx, TOP, root, ())
    data = doc.data if isinstance(doc.data, dict) else {}
    _rules(ctx, data, world_size)
    return ctx.findings


def _auto_severity(ctx: _Ctx, k: Key, strict_section: bool) -> tuple[Severity, str] | None:
    """Severity and reason of an "auto" value for the runtime, or None when it will be filled."""
    fill = k.fillers()
    if "native" in fill or ("autotuner" in fill and ctx.autotuning):
        return None
    if ctx.runtime == "transformers" and ("transformers" in fill or "accelerate" in fill):
        return None
    if ctx.runtime == "accelerate" and "accelerate" in fill:
        return None
    if ctx.runtime == "deepspeed":
        if strict_section:
            d = "null" if k.default is _UNSET else _fmt(k.default)
            return "warning", f"plain DeepSpeed silently drops \"auto\" here and uses the default {d}"
        return "error", "plain DeepSpeed does not fill \"auto\": it keeps the string and fails when it uses the value"
    who = "the HF Trainer" if ctx.runtime == "transformers" else "accelerate"
    others = [w for w in fill if w in ("accelerate", "transformers")]
    hint = f" (only {' and '.join('the HF Trainer' if w == 'transformers' else w for w in others)} fills it)" if others else ""
    return "error", f"{who} does not fill \"auto\" here{hint}: accelerator.prepare() raises ValueError"


def _walk(ctx: _Ctx, section: Key, node: Node, path: tuple[str, ...]) -> None:
    strict = _strict_here(ctx, section)
    seen: dict[str, tuple[str, Node]] = {}
    for knode, vnode in node.pairs:
        name = knode.value
        if not isinstance(name, str):
            continue
        dotted = ".".join(path + (name,))
        canon, spec = _child(section, name)
        if spec is None:
            if section.open:
                continue
            _unknown(ctx, section, strict, name, dotted, knode)
            continue
        if canon in seen and seen[canon][0] != name:
            ctx.add("ds-alias-conflict", "error",
                    f"`{name}` and `{seen[canon][0]}` are the same setting; DeepSpeed rejects both together", dotted, knode)
        seen[canon] = (name, knode)
        _check_value(ctx, section, spec, knode, vnode, path + (name,), strict)


def _unknown(ctx: _Ctx, section: Key, strict: bool | None, name: str, dotted: str, knode: Node) -> None:
    ranked = _suggest(name, section)
    elsewhere = [p for p in _where_else(name) if p != dotted]
    where = ".".join(dotted.split(".")[:-1]) or "the top level"
    if strict is True:
        severity: Severity = "error"
        effect = "DeepSpeed rejects it (extra_forbidden)"
    elif strict is None:
        severity = "warning"
        effect = f"DeepSpeed {section.strict_since} and newer reject it; older versions ignore it"
    else:
        severity = "warning"
        effect = "DeepSpeed silently ignores it"
    message = f"unknown key `{name}` in {where}: {effect}"
    suggestion = None
    if name.startswith(("_", "//", "#")):
        ranked, elsewhere = [], []
        message += " (a comment key?)"
    if ranked:
        suggestion = ranked[0]
        message += "; did you mean " + " or ".join(f"`{r}`" for r in ranked) + "?"
    elif elsewhere:
        suggestion = elsewhere[0]
        message += f"; `{name}` belongs in `{elsewhere[0].rsplit('.', 1)[0] if '.' in elsewhere[0] else 'the top level'}`"
    ctx.add("ds-unknown-key", severity, message, dotted, knode, suggestion)


def _check_value(ctx: _Ctx, section: Key, spec: Key, knode: Node, vnode: Node, path: tuple[str, ...],
                 strict: bool | None) -> None:
    dotted = ".".join(path)
    name = path[-1]
    # versions: removed / newer than the target
    if spec.removed:
        raises = (section is TOP and name in _REMOVED_TOP) or section.strict_since is not None
        effect = "reject" if raises else "ignore"
        pointer = f" (see {ISSUE_8489})" if section is TOP and name in _REMOVED_TOP else ""
        if ctx.active(None, spec.removed) is False:
            ctx.add("ds-removed", "error" if raises else "warning",
                    f"`{dotted}`: {spec.removed_message}; DeepSpeed {spec.removed} and newer {effect} it, "
                    f"and the target is {ctx.version}{pointer}", dotted, knode, spec.replaced_by)
        elif ctx.version is None:
            ctx.add("ds-removed", "warning", f"`{dotted}`: {spec.removed_message}; DeepSpeed {spec.removed} and newer "
                    f"{effect} it{pointer}", dotted, knode, spec.replaced_by)
        if ctx.active(None, spec.removed) is False or not raises:
            return
    if spec.since and ctx.active(spec.since, None) is False:
        ctx.add("ds-version", "error" if strict else "warning", f"`{dotted}` needs DeepSpeed {spec.since} or newer; {ctx.version} "
                f"{'rejects' if strict else 'ignores'} it", dotted, knode)
    if spec.deprecated:
        ctx.add("ds-deprecated", "warning", spec.deprecated, dotted, knode, spec.replaced_by)
        _deprecated_with_replacement(ctx, section, spec, knode, vnode, path)
    value = vnode.value if vnode.kind == "scalar" else None
    pydantic_section = section.strict_since is not None and strict is not False
    # "auto"
    if vnode.kind == "scalar" and value == "auto":
        result = _auto_severity(ctx, spec, pydantic_section)
        if result is not None:
            sev, why = result
            ctx.add("ds-auto", sev, f"`{dotted}` is \"auto\": {why}", dotted, vnode)
        return
    # sections
    if spec.children is not None:
        if vnode.kind == "map":
            _walk(ctx, spec, vnode, path)
            return
        if vnode.kind == "scalar" and value is None and spec.nullable:
            return
        if spec is ZERO and vnode.kind == "scalar" and isinstance(value, bool):
            ctx.add("ds-deprecated", "warning", "`\"zero_optimization\": true` is the legacy form (stage 1); "
                    "write `{\"stage\": 1}`", dotted, vnode, '{"stage": 1}')
            return
        ctx.add("ds-type", "error", f"`{dotted}` must be an object, not {_json_type(_node_value(vnode))}", dotted, vnode)
        return
    if spec.open:
        types = [spec.type] if isinstance(spec.type, str) else list(spec.type)
        v = _node_value(vnode)
        if not any(_strict_ok(v, t) for t in types) and not (v is None and spec.nullable):
            ctx.add("ds-type", "error", f"`{dotted}` must be {_type_words(spec)}, not {_json_type(v)}", dotted, vnode)
        if name == "params" and path[:1] == ("optimizer",) and vnode.kind == "map":
            _optimizer_params(ctx, vnode, path)
        return
    before = len(ctx.findings)
    _check_scalar(ctx, spec, vnode, dotted, pydantic_section)
    if strict is None:
        # the section became a strict pydantic model inside the supported range: not an error for every version
        for i in range(before, len(ctx.findings)):
            f = ctx.findings[i]
            if f.severity == "error":
                ctx.findings[i] = replace(f, severity="warning",
                                          message=f.message + f" (DeepSpeed {section.strict_since} and newer reject it)")


def _deprecated_with_replacement(ctx: _Ctx, section: Key, spec: Key, knode: Node, vnode: Node,
                                 path: tuple[str, ...]) -> None:
    """A deprecated pydantic field given together with its replacement: DeepSpeed asserts."""
    if not spec.replaced_by or section.strict_since is None or (vnode.kind == "scalar" and vnode.value == "auto"):
        return
    parent = ctx.doc.node(path[:-1])
    target = spec.replaced_by.rsplit(".", 1)[-1]
    spellings = {target}
    replacement = (section.children or {}).get(target)
    if replacement is not None:
        spellings |= set(replacement.aliases)
    if parent is None or parent.kind != "map":
        return
    for k, v in parent.pairs:
        if k.value in spellings and not (v.kind == "scalar" and v.value == "auto"):
            ctx.add("ds-alias-conflict", "error", f"cannot give the deprecated `{path[-1]}` together with its replacement "
                    f"`{k.value}`; DeepSpeed raises AssertionError", ".".join(path), knode, None)
            return


def _node_value(node: Node) -> Any:
    if node.kind == "scalar":
        return node.value
    if node.kind == "seq":
        return [_node_value(i) for i in node.items]
    return {k.value: _node_value(v) for k, v in node.pairs}


def _type_words(spec: Key) -> str:
    types = [spec.type] if isinstance(spec.type, str) else list(spec.type)
    words = {"boolean": "a boolean", "integer": "an integer", "number": "a number", "string": "a string",
             "array": "a list", "object": "an object", "null": "null"}
    if spec.nullable:
        types = types + ["null"]
    return " or ".join(words[t] for t in types)


def _check_scalar(ctx: _Ctx, spec: Key, vnode: Node, dotted: str, pydantic_section: bool) -> None:
    v = _node_value(vnode)
    types = [spec.type] if isinstance(spec.type, str) else list(spec.type)
    if v is None:
        if spec.nullable or any(t in ("object", "null") for t in types):
            return
        sev: Severity = "error" if (pydantic_section and spec.lax) or _hand_type_fatal(dotted, v, spec) else "warning"
        ctx.add("ds-type", sev, f"`{dotted}` must be {_type_words(spec)}, not null", dotted, vnode)
        return
    strict_ok = any(_strict_ok(v, t) for t in types)
    lax = pydantic_section and spec.lax
    if spec.no_bool and isinstance(v, bool):
        ctx.add("ds-type", "error" if lax else "warning", f"`{dotted}` must be {_type_words(spec)}, not a boolean", dotted, vnode)
        return
    if not strict_ok:
        if lax and any(_lax_ok(v, t) for t in types):
            t = next(t for t in types if _lax_ok(v, t))
            ctx.add("ds-type", "warning", f"`{dotted}` should be {_type_words(spec)}; DeepSpeed converts {_fmt(v)} "
                    f"but other tools will not", dotted, vnode)
            v = _coerce(v, t)
        else:
            sev = "error" if lax or _hand_type_fatal(dotted, v, spec) else "warning"
            extra = "" if sev == "error" else " (DeepSpeed does not check it here; expect a failure when it is used)"
            ctx.add("ds-type", sev, f"`{dotted}` must be {_type_words(spec)}, not {_json_type(v)} {_fmt(v)}{extra}", dotted, vnode)
            return
    if isinstance(v, list) and spec.items:
        for item_node in vnode.items:
            if not _strict_ok(_node_value(item_node), spec.items):
                sev = "error" if lax or spec.items == "string" and dotted.startswith(("data_types.", "torch_autocast.")) else "warning"
                ctx.add("ds-type", sev, f"items of `{dotted}` must be {_type_words(Key(spec.items))}", dotted, item_node)
        if spec.enum is not None and dotted == "compile.passes":
            for item_node in vnode.items:
                if item_node.value not in ("z1", "z3", "autosp", "autotp"):
                    ctx.add("ds-enum", "error", f"unknown compile pass {_fmt(item_node.value)}; expected one of z1, z3, autosp, autotp",
                            dotted, item_node)
        return
    if dotted == "data_types.keep_in_fp32_modules" and isinstance(v, str) and v != "auto":
        ctx.add("ds-enum", "error", f"`{dotted}` must be \"auto\" or a list of module-name patterns, not {_fmt(v)}",
                dotted, vnode, "auto")
        return
    if dotted == "aio.use_gds" and _lax_bool(v):
        ctx.add("ds-enum", "warning", "`aio.use_gds` (GPUDirect Storage) works only on CUDA machines; DeepSpeed's config "
                "parser raises on any other accelerator", dotted, vnode)
    if spec.enum and not isinstance(v, (list, dict)):
        _check_enum(ctx, spec, vnode, v, dotted, lax)
    _check_range(ctx, spec, vnode, v, dotted, lax)


def _hand_type_fatal(dotted: str, v: Any, spec: Key) -> bool:
    """Hand-parsed keys whose wrong type DeepSpeed's config parser itself trips over."""
    if dotted in ("train_batch_size", "train_micro_batch_size_per_gpu", "gradient_accumulation_steps"):
        return True
    if dotted in ("communication_data_type", "seq_parallel_communication_data_type", "seq_parallel_comm_data_type",
                  "gradient_allreduce_op", "checkpoint.tag_validation", "checkpoint.parallel_write.pipeline_stage",
                  "data_types.keep_in_fp32_modules", "torch_autocast.dtype", "torch_autocast.lower_precision_safe_modules",
                  "gradient_clipping", "optimizer.type", "checkpoint.writer.type", "checkpoint.writer.data_parallel",
                  # combined with `|` in DeepSpeedConfig: a string raises TypeError
                  "wall_clock_breakdown", "flops_profiler.enabled",
                  # the world size is divided by it
                  "sequence_parallel_size"):
        return True
    return False


def _check_enum(ctx: _Ctx, spec: Key, vnode: Node, v: Any, dotted: str, lax: bool) -> None:
    allowed = list(spec.enum)
    if spec.enum_case_insensitive and isinstance(v, str):
        ok = v.lower() in {str(a).lower() for a in allowed}
    elif lax and isinstance(v, (int, float, str)) and all(isinstance(a, int) for a in allowed):
        try:
            ok = float(v) in allowed
        except ValueError:
            ok = False
    else:
        ok = v in allowed
    if ok:
        return
    rule = "ds-zero-stage" if dotted == "zero_optimization.stage" else "ds-enum"
    fatal = lax or _hand_type_fatal(dotted, v, spec) or dotted in (
        "tensor_parallel.dtype", "tensor_parallel.vocab_parallel_ce_backend", "weight_quantization.q_type")
    if dotted.startswith(("scheduler.", "autotuning.")):
        fatal = True
    suggestion = None
    if isinstance(v, str):
        close = difflib.get_close_matches(v, [str(a) for a in allowed], n=1, cutoff=0.5)
        if not close:
            lowered = {str(a).lower(): str(a) for a in allowed}
            close = [lowered[c] for c in difflib.get_close_matches(v.lower(), list(lowered), n=1, cutoff=0.5)]
        suggestion = close[0] if close else None
    what = "ZeRO stage must be 0, 1, 2 or 3" if rule == "ds-zero-stage" else \
        f"`{dotted}` must be one of {', '.join(_fmt(a) for a in allowed)}"
    tail = "" if spec.enum_case_insensitive is False else " (case-insensitive)"
    ctx.add(rule, "error" if fatal else "warning", f"{what}{tail}, not {_fmt(v)}", dotted, vnode, suggestion)


def _check_range(ctx: _Ctx, spec: Key, vnode: Node, v: Any, dotted: str, lax: bool) -> None:
    if not isinstance(v, (int, float)) or isinstance(v, bool) and not lax:
        return
    x = float(v)
    problems = []
    if spec.minimum is not None and x < spec.minimum:
        problems.append(f">= {spec.minimum:g}")
    if spec.exclusive_minimum is not None and x <= spec.exclusive_minimum:
        problems.append(f"> {spec.exclusive_minimum:g}")
    if spec.maximum is not None and x > spec.maximum:
        problems.append(f"<= {spec.maximum:g}")
    if spec.exclusive_maximum is not None and x >= spec.exclusive_maximum:
        problems.append(f"< {spec.exclusive_maximum:g}")
    if not problems:
        return
    fatal = lax or dotted in ("train_batch_size", "train_micro_batch_size_per_gpu", "gradient_accumulation_steps",
                              "sequence_parallel_size")
    if spec.minimum_since and ctx.version is not None and ctx.version < Version(spec.minimum_since):
        fatal = False
    rule = "ds-batch" if dotted in ("train_batch_size", "train_micro_batch_size_per_gpu", "gradient_accumulation_steps") else "ds-range"
    extra = ""
    if dotted == "zero_optimization.reduce_bucket_size":
        extra = " (0 divides by zero in the ZeRO backward even where the config accepts it)"
    ctx.add(rule, "error" if fatal else "warning", f"`{dotted}` must be {' and '.join(problems)}, not {_fmt(v)}{extra}", dotted, vnode)


def _optimizer_params(ctx: _Ctx, vnode: Node, path: tuple[str, ...]) -> None:
    for knode, pnode in vnode.pairs:
        dotted = ".".join(path + (knode.value,))
        if knode.value == "max_grad_norm":
            ctx.add("ds-optimizer", "error", "`max_grad_norm` in optimizer params is rejected at deepspeed.initialize "
                    "(ValueError); use the top-level `gradient_clipping`", dotted, knode, "gradient_clipping")
        if pnode.kind == "scalar" and pnode.value == "auto":
            fill = dict(_OPT_PARAMS_AUTO.get(knode.value, ()))
            result = _auto_severity(ctx, Key("any", auto=tuple(fill.items())), False)
            if result is not None:
                ctx.add("ds-auto", result[0], f"`{dotted}` is \"auto\": {result[1]}", dotted, pnode)


# -- cross-field rules -------------------------------------------------------------------------

def _int_or_none(v: Any) -> int | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, float) and v.is_integer():
        return int(v)
    return None


def _lax_bool(v: Any) -> bool | None:
    """The boolean pydantic's lax mode makes of ``v`` (None when it rejects it or it is "auto")."""
    if isinstance(v, bool):
        return v
    if isinstance(v, (int, float)) and v in (0, 1):
        return bool(v)
    if isinstance(v, str):
        low = v.strip().lower()
        if low in _TRUE_STR:
            return True
        if low in _FALSE_STR:
            return False
    return None


def _lax_num(v: Any) -> float | None:
    """The number pydantic's lax mode makes of ``v`` (None when it rejects it)."""
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, str):
        try:
            return float(v.strip())
        except ValueError:
            return None
    return None


def _enabled(block: Any) -> bool:
    if not isinstance(block, dict):
        return False
    return _lax_bool(block.get("enabled")) is True


def _stage(data: dict[str, Any]) -> int | None:
    """The ZeRO stage DeepSpeed will use, or None when unknown ("auto" under accelerate)."""
    z = data.get("zero_optimization")
    if z is True:
        return 1
    if not isinstance(z, dict):
        return 0
    s = z.get("stage", 0)
    if s == "auto":
        return None
    if isinstance(s, bool):
        return int(s)
    if isinstance(s, (int, float)) and float(s).is_integer():
        return int(s)
    if isinstance(s, str) and s.strip().isdigit():
        return int(s.strip())
    return None


def _rules(ctx: _Ctx, data: dict[str, Any], world_size: int | None) -> None:
    doc = ctx.doc
    # fp16 and bf16 both enabled
    bf_name = "bf16" if "bf16" in data else "bfloat16"
    if _enabled(data.get("fp16")) and _enabled(data.get(bf_name)):
        ctx.add("ds-fp16-bf16", "error", "fp16 and bf16 are both enabled; DeepSpeed raises "
                "\"bfloat16 and fp16 modes cannot be simultaneously enabled\"", f"{bf_name}.enabled",
                doc.node(f"{bf_name}.enabled"))
    if "bf16" in data and "bfloat16" in data:
        ctx.add("ds-alias-conflict", "warning", "both `bf16` and its old name `bfloat16` are present; DeepSpeed reads `bf16` "
                "and ignores `bfloat16`", "bfloat16", doc.key("bfloat16"))
    stage = _stage(data)
    zero = data.get("zero_optimization")
    z: dict[str, Any] = zero if isinstance(zero, dict) else {}
    for which in ("offload_param", "offload_optimizer"):
        off = z.get(which)
        if not isinstance(off, dict):
            continue
        device = off.get("device", "none")
        key = f"zero_optimization.{which}"
        if which == "offload_param" and stage is not None and stage < 3 and device not in ("none", None):
            ctx.add("ds-offload-stage", "warning", f"`offload_param` only works with ZeRO stage 3; with stage {stage} "
                    "DeepSpeed silently ignores it", key, doc.key(key))
        if which == "offload_optimizer" and stage is not None and stage < 3 and device == "nvme":
            ctx.add("ds-offload-stage", "warning", f"NVMe optimizer offload needs ZeRO stage 3; stage {stage} "
                    "treats it as CPU offload", f"{key}.device", doc.node(f"{key}.device"))
        if which == "offload_optimizer" and stage is not None and stage != 3:
            ratio = _lax_num(off.get("ratio"))
            if ratio is not None and ratio < 1:
                ctx.add("ds-offload-stage", "error", f"partial optimizer offload (`ratio` {_fmt(ratio)} < 1) is only supported "
                        "with ZeRO stage 3; DeepSpeed rejects it", f"{key}.ratio", doc.node(f"{key}.ratio"))
        used = stage is None or (stage == 3 if which == "offload_param" else stage >= 1)
        if used and device == "nvme" and off.get("nvme_path") in (None, "", "none"):
            filled = off.get("nvme_path") == "auto"
            if not filled:
                node = doc.node(f"{key}.nvme_path") or doc.node(f"{key}.device")
                ctx.add("ds-nvme-path", "error", f"`{which}` uses device nvme but has no `nvme_path`"
                        + ("" if off.get("nvme_path") != "none" else " (\"none\" is a relative directory named none)")
                        + "; DeepSpeed fails when it starts swapping", f"{key}.device", node)
    # stage-dependent checks DeepSpeed makes
    if stage is not None:
        if _lax_bool(z.get("compute_grad_norm")) is False and stage not in (1, 2):
            ctx.add("ds-stage-requirement", "error", f"`compute_grad_norm: false` is only allowed with ZeRO stage 1 or 2, not {stage}",
                    "zero_optimization.compute_grad_norm", doc.node("zero_optimization.compute_grad_norm"))
        for block, flag in (("fp16", "fp16_master_weights_and_grads"), (bf_name, "bf16_master_weights_and_grads"),
                            (bf_name, "bf16_optimizer_states")):
            b = data.get(block)
            if isinstance(b, dict) and _lax_bool(b.get(flag)) is True and stage == 0:
                ctx.add("ds-stage-requirement", "error", f"`{block}.{flag}` needs ZeRO stage 1, 2 or 3", f"{block}.{flag}",
                        doc.node(f"{block}.{flag}"))
        op = data.get("gradient_allreduce_op")
        if isinstance(op, str) and op.lower() == "sum":
            reason = "ZeRO stage 3" if stage == 3 else "ZenFlow" if isinstance(z.get("zenflow"), dict) else \
                "DeepCompile" if isinstance(data.get("compile"), dict) and _lax_bool(data["compile"].get("deepcompile")) else None
            if reason:
                ctx.add("ds-stage-requirement", "error", f"`gradient_allreduce_op: \"sum\"` is not supported with {reason}",
                        "gradient_allreduce_op", doc.node("gradient_allreduce_op"))
    b = data.get(bf_name)
    if isinstance(b, dict) and _lax_bool(b.get("bf16_optimizer_states")) and not _lax_bool(b.get("bf16_master_weights_and_grads")):
        ctx.add("ds-stage-requirement", "error", "`bf16_optimizer_states` requires `bf16_master_weights_and_grads: true`",
                f"{bf_name}.bf16_optimizer_states", doc.node(f"{bf_name}.bf16_optimizer_states"))
    _fp16_scaling(ctx, data)
    _optimizer_scheduler(ctx, data)
    _batch(ctx, data, world_size)
    if ctx.runtime in ("accelerate", "transformers") and "zero_optimization" not in data:
        ctx.add("ds-zero-missing", "error", f"no `zero_optimization` section: {ctx.runtime} raises \"Please specify the ZeRO "
                "optimization config in the DeepSpeed config\"", "", doc.root, "zero_optimization")


def _fp16_scaling(ctx: _Ctx, data: dict[str, Any]) -> None:
    fp = data.get("fp16")
    if not isinstance(fp, dict) or not _enabled(fp):
        return
    if ctx.version is not None and ctx.version < Version("0.17.1"):
        return
    if _lax_num(fp.get("loss_scale", 0)) != 0:
        return
    for key, label in (("loss_scale_window", "loss_scale_window"), ("min_loss_scale", "min_loss_scale")):
        v = _lax_num(fp.get(key))
        if v is not None and v <= 0:
            sev: Severity = "error"
            if key == "loss_scale_window" and ctx.version is not None and ctx.version < Version("0.19.3"):
                sev = "warning"
            ctx.add("ds-fp16-scaling", sev, f"`fp16.{label}` must be > 0 with dynamic loss scaling (loss_scale 0)",
                    f"fp16.{key}", ctx.doc.node(f"fp16.{key}"))


def _optimizer_scheduler(ctx: _Ctx, data: dict[str, Any]) -> None:
    opt = data.get("optimizer")
    if isinstance(opt, dict) and isinstance(opt.get("type"), str):
        t = opt["type"]
        node = ctx.doc.node("optimizer.type")
        low = t.lower()
        if low in _OPTIMIZERS:
            removed = _OPTIMIZERS_REMOVED.get(low)
            if removed:
                active = ctx.active(None, removed)
                sev: Severity = "error" if active is False else "warning"
                ctx.add("ds-removed", sev, f"optimizer `{t}` was removed in DeepSpeed {removed}", "optimizer.type", node)
            since = _OPTIMIZERS_SINCE.get(low)
            if since and ctx.active(since, None) is False:
                ctx.add("ds-version", "error", f"optimizer `{t}` needs DeepSpeed {since} or newer", "optimizer.type", node)
        elif t not in _TORCH_OPTIMIZERS:
            names = [o for o in _OPTIMIZERS if o not in _OPTIMIZERS_REMOVED] + list(_TORCH_OPTIMIZERS)
            close = difflib.get_close_matches(t, names, n=2, cutoff=0.6) or difflib.get_close_matches(
                low, [n.lower() for n in names], n=2, cutoff=0.6)
            ctx.add("ds-optimizer", "error", f"unknown optimizer type `{t}`: neither a DeepSpeed optimizer "
                    "(case-insensitive) nor a torch.optim class (case-sensitive); deepspeed.initialize fails"
                    + (f"; did you mean {' or '.join(f'`{c}`' for c in close)}?" if close else ""),
                    "optimizer.type", node, close[0] if close else None)


def _batch(ctx: _Ctx, data: dict[str, Any], world_size: int | None) -> None:
    doc = ctx.doc
    names = ("train_batch_size", "train_micro_batch_size_per_gpu", "gradient_accumulation_steps")
    raw = {n: data.get(n) for n in names}
    autotuning = isinstance(data.get("autotuning"), dict) and data["autotuning"].get("enabled") is True
    vals: dict[str, int | None] = {}
    auto = set()
    for n in names:
        v = raw[n]
        if v == "auto":
            auto.add(n)
            vals[n] = None
        else:
            iv = _int_or_none(v)
            vals[n] = iv if iv is not None and iv > 0 else None
            if v is not None and iv is None:
                return  # a type problem, already reported
            if iv is not None and iv <= 0:
                return  # a range problem, already reported
    tbs, mbs, gas = vals["train_batch_size"], vals["train_micro_batch_size_per_gpu"], vals["gradient_accumulation_steps"]
    if raw["train_batch_size"] is None and raw["train_micro_batch_size_per_gpu"] is None and not autotuning:
        ctx.add("ds-batch", "error", "neither `train_batch_size` nor `train_micro_batch_size_per_gpu` is set; DeepSpeed "
                "raises \"Either train_batch_size or train_micro_batch_size_per_gpu needs to be provided\"", "", doc.root,
                "train_micro_batch_size_per_gpu")
        return
    if tbs is None:
        return
    node = doc.node("train_batch_size")
    sp = data.get("sequence_parallel_size", 1)
    if world_size is not None and sp != 1:
        # DeepSpeed divides the world size by the sequence-parallel degree (a float division)
        if _int_or_none(sp) is None or sp <= 0 or mbs is None or gas is None:
            return
        if tbs * sp != mbs * gas * world_size:
            ctx.add("ds-batch", "error", f"train_batch_size {tbs} != train_micro_batch_size_per_gpu {mbs} x gradient_accumulation_steps "
                    f"{gas} x data-parallel size {world_size}/{sp} (world size / sequence_parallel_size)", "train_batch_size", node)
        return
    if world_size is not None:
        if world_size <= 0:
            return
        if mbs is not None and gas is not None:
            if tbs != mbs * gas * world_size:
                ctx.add("ds-batch", "error", f"train_batch_size {tbs} != train_micro_batch_size_per_gpu {mbs} x "
                        f"gradient_accumulation_steps {gas} x world size {world_size} ({mbs * gas * world_size})",
                        "train_batch_size", node, str(mbs * gas * world_size))
            return
        known = [x for x in (mbs, gas) if x is not None]
        missing = [n for n, x in (("train_micro_batch_size_per_gpu", mbs), ("gradient_accumulation_steps", gas)) if x is None]
        product = world_size
        for x in known:
            product *= x
        if tbs % product:
            what = " x ".join([f"{n} {vals[n]}" for n in names[1:] if vals[n] is not None] + [f"world size {world_size}"])
            filled = [n for n in missing if n in auto]
            derived = [n for n in missing if n not in auto]
            how = ("; DeepSpeed derives " + " and ".join(derived) + " by floor division and then fails the batch assertion") if derived else ""
            ctx.add("ds-batch", "error", f"train_batch_size {tbs} is not divisible by {what} ({product})" + how
                    + ("; " + " and ".join(filled) + " filled from \"auto\" cannot make it match" if filled else ""),
                    "train_batch_size", node)
            return
        if len(missing) == 2 and not auto and tbs // world_size < 1:
            return
        if gas is not None and mbs is None and "train_micro_batch_size_per_gpu" not in auto and tbs // world_size // gas < 1:
            ctx.add("ds-batch", "error", "the derived train_micro_batch_size_per_gpu is 0", "train_batch_size", node)
        return
    # no world size: the batch keys must at least divide
    known = [x for x in (mbs, gas) if x is not None]
    product = 1
    for x in known:
        product *= x
    if known and tbs % product:
        what = " x ".join(f"{n} {vals[n]}" for n in names[1:] if vals[n] is not None)
        ctx.add("ds-batch", "error", f"train_batch_size {tbs} is not a multiple of {what} ({product}), "
                "so no world size satisfies train_batch_size = micro x accumulation x world size", "train_batch_size", node)


# -- accelerate ----------------------------------------------------------------------------------

# accelerate config `deepspeed_config` keys that raise next to a deepspeed_config_file
# (DeepSpeedPlugin._deepspeed_config_checks, accelerate 1.15.0), with the DeepSpeed key they mirror.
# accelerate deepspeed_config key -> DeepSpeed JSON path, from the settings registry.
CONFLICTING_KEYS: dict[str, str] = _registry.deepspeed_json_keys()

_IGNORED_LIST = ("['gradient_accumulation_steps', 'gradient_clipping', 'zero_stage', 'offload_optimizer_device', "
                 "'offload_param_device', 'offload_param_nvme_path', 'offload_optimizer_nvme_path', "
                 "'zero3_save_16bit_model', 'mixed_precision']")


def _walk_values(node: Node, path: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], Node]]:
    if node.kind == "map":
        for k, v in node.pairs:
            if isinstance(k.value, str):
                yield from _walk_values(v, path + (k.value,))
    elif node.kind == "scalar":
        yield path, node


def crosscheck(accel_data: dict[str, Any], accel_doc: Document | None, ds_doc: Document, *,
               key_conflicts: bool = True) -> list[Finding]:
    """Check an accelerate config against the DeepSpeed file its ``deepspeed_config_file`` names.

    Reports (rule ``ds-accelerate-conflict``) the accelerate keys that make
    ``DeepSpeedPlugin._deepspeed_config_checks`` raise ValueError at training time, and (rule
    ``ds-accelerate-auto``, info) each ``"auto"`` in the DeepSpeed file that accelerate fills, with
    the source of the value. Findings carry ``path`` so that they can point into either file.
    ``key_conflicts=False`` leaves out the conflicts that need only the accelerate config (the keys
    themselves), for a caller that reports those already; what needs the JSON is always reported.
    """
    findings: list[Finding] = []
    accel_path = accel_doc.path if accel_doc is not None else ""

    def at_accel(key: str) -> tuple[int, int, int, int]:
        if accel_doc is None:
            return 0, 0, 0, 0
        n = accel_doc.key(key)
        if n is None:
            line, col = accel_doc.position(key)
            return line, col, 0, 0
        return n.line + 1, n.col + 1, n.end_line + 1, n.end_col + 1

    section = accel_data.get("deepspeed_config")
    ds_cfg: dict[str, Any] = section if isinstance(section, dict) else {}
    ds_data = ds_doc.data if isinstance(ds_doc.data, dict) else {}
    ds_name = ds_doc.path
    for ykey, dskey in CONFLICTING_KEYS.items():
        if ykey not in ds_cfg or not key_conflicts:
            continue
        file_value = _get(ds_data, dskey)
        have = f"the DeepSpeed file has `{dskey}` = {_fmt(file_value)}" if file_value is not _MISSING else \
            f"set `{dskey}` in the DeepSpeed file instead"
        line, col, el, ec = at_accel(f"deepspeed_config.{ykey}")
        findings.append(Finding("ds-accelerate-conflict", "error",
                                f"`deepspeed_config.{ykey}` cannot be used with `deepspeed_config_file`: accelerate raises "
                                f"\"When using `deepspeed_config_file`, the following accelerate config variables will be "
                                f"ignored: {_IGNORED_LIST}\"; {have}", f"deepspeed_config.{ykey}", line, col, dskey, el, ec,
                                path=accel_path))
    mp_key = "mixed_precision" if "mixed_precision" in accel_data else ("fp16" if accel_data.get("fp16") else None)
    if mp_key is not None:
        mp = accel_data.get("mixed_precision", "fp16")
        enabled = [b for b in ("fp16", "bf16") if _enabled(ds_data.get(b))]
        hint = f"the DeepSpeed file enables {enabled[0]}" if enabled else \
            "control precision with `fp16.enabled`/`bf16.enabled` in the DeepSpeed file (\"auto\" takes --mixed_precision)"
        line, col, el, ec = at_accel(mp_key)
        if key_conflicts:
            findings.append(Finding("ds-accelerate-conflict", "error",
                                f"top-level `{mp_key}` ({_fmt(mp)}) cannot be used with `deepspeed_config_file`: accelerate "
                                f"raises ValueError at launch; remove it and {hint}, or pass --mixed_precision on the command line",
                                mp_key, line, col, None, el, ec, path=accel_path))
        if isinstance(mp, str) and mp in ("fp16", "bf16", "fp8"):
            other = "bf16" if mp == "fp16" else "fp16"
            if _enabled(ds_data.get(other)):
                findings.append(Finding("ds-accelerate-conflict", "error",
                                        f"mixed_precision {mp} with `{other}.enabled: true` in the DeepSpeed file: accelerate raises "
                                        f"\"--mixed_precision arg cannot be set to {mp} when {other} is set in the DeepSpeed config file\"",
                                        mp_key, line, col, None, el, ec, path=accel_path))
    stage = _stage(ds_data)
    if ds_cfg.get("zero3_init_flag") is True and stage is not None and stage != 3:
        line, col, el, ec = at_accel("deepspeed_config.zero3_init_flag")
        findings.append(Finding("ds-accelerate-conflict", "warning",
                                f"`zero3_init_flag: true` but the DeepSpeed file uses ZeRO stage {stage}; accelerate turns it off "
                                "with a warning", "deepspeed_config.zero3_init_flag", line, col, None, el, ec, path=accel_path))
    if "zero_optimization" not in ds_data:
        findings.append(Finding("ds-zero-missing", "error", "the DeepSpeed file has no `zero_optimization` section: accelerate raises "
                                "\"Please specify the ZeRO optimization config in the DeepSpeed config\"", "", 1, 1, "zero_optimization",
                                path=ds_name))
    if "gradient_accumulation_steps" not in ds_data:
        findings.append(Finding("ds-accelerate-auto", "info", "no `gradient_accumulation_steps`: accelerate sets it to 1", "", 1, 1,
                                path=ds_name))
    if ds_doc.root is not None:
        for path, node in _walk_values(ds_doc.root, ()):
            if node.value != "auto":
                continue
            dotted = ".".join(path)
            source = _accelerate_source(path, ds_cfg, accel_data)
            if source is None:
                continue
            findings.append(Finding("ds-accelerate-auto", "info", f"`{dotted}` \"auto\" is filled by accelerate from {source}",
                                    dotted, node.line + 1, node.col + 1, None, node.end_line + 1, node.end_col + 1, path=ds_name))
    return findings


_MISSING: Any = object()


def _get(data: Any, dotted: str) -> Any:
    cur = data
    for part in dotted.split("."):
        if not isinstance(cur, dict) or part not in cur:
            return _MISSING
        cur = cur[part]
    return cur


def _accelerate_source(path: tuple[str, ...], ds_cfg: dict[str, Any], accel_data: dict[str, Any]) -> str | None:
    if path[:2] == ("optimizer", "params") and len(path) == 3:
        fill = dict(_OPT_PARAMS_AUTO.get(path[2], ()))
        return fill.get("accelerate")
    spec = lookup(path)
    if spec is None:
        return None
    source = spec.fillers().get("accelerate")
    if source is None:
        return None
    # say which value the plugin will actually carry when the YAML has it (it raises then, but say so)
    reverse = {v: k for k, v in CONFLICTING_KEYS.items()}
    ykey = reverse.get(".".join(path))
    if ykey and ykey in ds_cfg:
        source += f" (the YAML sets {_fmt(ds_cfg[ykey])}, which raises next to a file)"
    if path == ("fp16", "enabled") or path == ("bf16", "enabled"):
        source += "; --mixed_precision on the command line or ACCELERATE_MIXED_PRECISION"
    return source


def accelerate_world_size(accel_data: dict[str, Any]) -> int | None:
    """The world size an accelerate config launches (``num_processes``, the total over machines)."""
    n = accel_data.get("num_processes")
    return n if isinstance(n, int) and not isinstance(n, bool) and n > 0 else None


def to_accelerate_section(ds_data: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The accelerate ``deepspeed_config`` keys equivalent to a DeepSpeed config, and notes on what does not map.

    The top-level ``mixed_precision`` (from fp16/bf16) is returned under the key
    ``"mixed_precision"``; the caller moves it out of the section. Values that are ``"auto"``
    are left to the plugin defaults, with a note.
    """
    out: dict[str, Any] = {}
    notes: list[str] = []
    z = ds_data.get("zero_optimization")
    if z is True:
        z = {"stage": 1}
    if not isinstance(z, dict):
        z = {}
        notes.append("no zero_optimization section: the accelerate plugin defaults to ZeRO stage 2, DeepSpeed to stage 0; "
                     "zero_stage 0 written")
    stage = z.get("stage", 0)
    if stage == "auto":
        notes.append("zero_optimization.stage is \"auto\": left to the accelerate default (2)")
    else:
        out["zero_stage"] = _stage({"zero_optimization": z})
    for which in ("optimizer", "param"):
        off = z.get(f"offload_{which}")
        if not isinstance(off, dict):
            out[f"offload_{which}_device"] = "none"
            continue
        device = off.get("device", "none")
        if device == "auto":
            notes.append(f"zero_optimization.offload_{which}.device is \"auto\": left to the accelerate default (none)")
        else:
            out[f"offload_{which}_device"] = device
        if off.get("nvme_path") not in (None, "auto"):
            out[f"offload_{which}_nvme_path"] = off["nvme_path"]
            notes.append(f"offload_{which}_nvme_path: accelerate 1.15 does not export it to the training process "
                         "(ACCELERATE_DEEPSPEED_OFFLOAD_*_NVME_PATH is never set); keep a deepspeed_config_file for NVMe")
        extra = [k for k in off if k not in ("device", "nvme_path")]
        if extra:
            notes.append(f"zero_optimization.offload_{which}: no accelerate key for {', '.join(extra)}")
    for k in ("gradient_accumulation_steps", "gradient_clipping"):
        v = ds_data.get(k)
        if v is None:
            continue
        if v == "auto":
            notes.append(f"{k} is \"auto\": left to the accelerate default")
        else:
            out[k] = v
    save16 = z.get("stage3_gather_16bit_weights_on_model_save",
                   z.get("gather_16bit_weights_on_model_save", z.get("stage3_gather_fp16_weights_on_model_save")))
    if save16 is not None and save16 != "auto":
        out["zero3_save_16bit_model"] = bool(save16)
    if "zero_stage" in out:
        out["zero3_init_flag"] = out["zero_stage"] == 3
    fp16, bf16 = _enabled(ds_data.get("fp16")), _enabled(ds_data.get("bf16") or ds_data.get("bfloat16"))
    if fp16 and not bf16:
        out["mixed_precision"] = "fp16"
    elif bf16 and not fp16:
        out["mixed_precision"] = "bf16"
    elif not fp16 and not bf16:
        if any(isinstance(ds_data.get(b), dict) and ds_data[b].get("enabled") == "auto" for b in ("fp16", "bf16")):
            notes.append("fp16/bf16 enabled is \"auto\": mixed_precision is left unset")
        else:
            out["mixed_precision"] = "no"
    else:
        notes.append("fp16 and bf16 are both enabled (DeepSpeed rejects this): mixed_precision is left unset")
    mapped_zero = {"stage", "offload_optimizer", "offload_param", "stage3_gather_16bit_weights_on_model_save",
                   "gather_16bit_weights_on_model_save", "stage3_gather_fp16_weights_on_model_save"}
    rest_zero = [k for k in z if k not in mapped_zero]
    if rest_zero:
        notes.append("zero_optimization keys with no accelerate key: " + ", ".join(rest_zero))
    mapped_top = {"zero_optimization", "gradient_accumulation_steps", "gradient_clipping", "fp16", "bf16", "bfloat16"}
    for b in ("fp16", "bf16", "bfloat16"):
        block = ds_data.get(b)
        if isinstance(block, dict):
            extra = [k for k in block if k != "enabled"]
            if extra:
                notes.append(f"{b}: no accelerate key for {', '.join(extra)}")
    for k in ds_data:
        if k in mapped_top:
            continue
        if k in ("train_batch_size", "train_micro_batch_size_per_gpu"):
            notes.append(f"{k}: no accelerate key (accelerate derives it from the dataloader batch size)")
        elif k == "steps_per_print":
            continue
        else:
            notes.append(f"{k}: no accelerate key; keep a deepspeed_config_file to use it")
    return out, notes


# Every rule id this module reports.
RULES: tuple[str, ...] = (
    "ds-accelerate-auto", "ds-accelerate-conflict", "ds-alias-conflict", "ds-auto", "ds-batch", "ds-deprecated",
    "ds-duplicate-key", "ds-enum", "ds-fp16-bf16", "ds-fp16-scaling", "ds-json-portability", "ds-nvme-path",
    "ds-offload-stage", "ds-optimizer", "ds-range", "ds-removed", "ds-stage-requirement", "ds-type", "ds-unknown-key",
    "ds-version", "ds-zero-missing", "ds-zero-stage",
)

