"""The DeepSpeed key table.

:data:`TOP` lists every section and key that DeepSpeed 0.15 to 0.19.8 reads, with type, default
(and the version where a default changed), allowed values, aliases, deprecations, removals, where
``"auto"`` is filled and by whom, and a doc string. Facts come from reading the installed DeepSpeed
0.19.8 sources (``deepspeed/runtime/config.py``, ``deepspeed/runtime/zero/config.py`` and the other
pydantic models); ``tests/oracle/test_deepspeed_oracle.py`` checks the table against DeepSpeed's parser.
Whether a file is a DeepSpeed JSON is decided by the one recogniser of file kinds
(:mod:`accelconf.kinds`), from this table; :func:`canonical_path` is the only place that maps
another spelling of a key to the table's own.

Versions: ``since`` is the first DeepSpeed release that reads a key (inclusive), ``removed`` the
first that rejects or ignores it. ``None`` means "every version from 0.15 to 0.19.8".
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal

from packaging.version import InvalidVersion, Version

from accelconf.versions import installed_version as _installed

OLDEST = "0.15.0"
NEWEST = "0.19.8"
SCHEMA_ID = "urn:accelconf:schema:deepspeed-config"  # an identifier, not an address (see accelerate/schema.py)
ISSUE_8489 = "https://github.com/deepspeedai/DeepSpeed/issues/8489"

RUNTIMES: tuple[str, ...] = ("deepspeed", "accelerate", "transformers")

_UNSET: Any = object()

# Where "auto" is replaced, and from what. ``native``: DeepSpeed itself gives "auto" a meaning;
# ``autotuner``: ``deepspeed --autotuning`` fills it (only with ``autotuning.enabled``).
Filler = Literal["native", "autotuner", "accelerate", "transformers"]
_FILLER_LABEL = {
    "native": "DeepSpeed",
    "autotuner": "the DeepSpeed autotuner",
    "transformers": "the HF Trainer",
    "accelerate": "accelerate",
}


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

    @property
    def has_default(self) -> bool:
        """DeepSpeed gives the key a fixed default (``default``), not one that depends on other keys."""
        return self.default is not _UNSET

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
    (
        "accelerate",
        "the plugin's gradient_accumulation_steps (YAML deepspeed_config.gradient_accumulation_steps), "
        "else Accelerator(gradient_accumulation_steps=...)",
    ),
    ("autotuner", "the autotuner (deepspeed --autotuning, with autotuning.enabled)"),
)

# -- the table ---------------------------------------------------------------------------------

_OFFLOAD_DEVICE = dict(
    enum=("none", "cpu", "nvme"),
    enum_docs=("No offload.", "Offload to CPU memory.", "Offload to NVMe storage (needs `nvme_path`)."),
)

OFFLOAD_PARAM = _section(
    "Offload model parameters to CPU or NVMe (ZeRO stage 3 only; ignored for lower stages).",
    _lax(
        {
            "device": _s(
                "none",
                "Device memory to offload parameters to.",
                auto=(
                    (
                        "accelerate",
                        "the plugin's offload_param_device (YAML deepspeed_config.offload_param_device), default "
                        '"none"',
                    ),
                ),
                **_OFFLOAD_DEVICE,
            ),
            "nvme_path": _s(
                None,
                "Filesystem path of the NVMe device used for parameter offload.",
                nullable=True,
                auto=(("accelerate", 'the plugin\'s offload_param_nvme_path, default the string "none"'),),
            ),
            "buffer_count": _i(5, "Number of buffers in the buffer pool for parameter offload to NVMe.", minimum=0),
            "buffer_size": _i(100_000_000, "Size of the buffers for parameter offload to NVMe.", minimum=0),
            "max_in_cpu": _i(
                1_000_000_000, "Number of parameter elements kept in CPU memory when offloading to NVMe.", minimum=0
            ),
            "pin_memory": _b(True, "Offload to page-locked CPU memory.", default_changes=(("0.19.5", False),)),
        }
    ),
    strict_since="0.0",
    nullable=True,
)

OFFLOAD_OPTIMIZER = _section(
    "Offload optimizer state to CPU or NVMe (ZeRO stages 1-3; NVMe needs stage 3).",
    _lax(
        {
            "device": _s(
                "none",
                "Device memory to offload optimizer state to.",
                auto=(
                    (
                        "accelerate",
                        "the plugin's offload_optimizer_device (YAML deepspeed_config.offload_optimizer_device), "
                        'default "none"',
                    ),
                ),
                **_OFFLOAD_DEVICE,
            ),
            "nvme_path": _s(
                None,
                "Filesystem path of the NVMe device used for optimizer offload.",
                nullable=True,
                auto=(("accelerate", 'the plugin\'s offload_optimizer_nvme_path, default the string "none"'),),
            ),
            "buffer_count": _i(4, "Number of buffers in the buffer pool for optimizer offload to NVMe.", minimum=0),
            "pin_memory": _b(True, "Offload to page-locked CPU memory.", default_changes=(("0.19.5", False),)),
            "pipeline_read": _b(False, "Overlap reading of optimizer state from NVMe with computation."),
            "pipeline_write": _b(False, "Overlap writing of optimizer state to NVMe with computation."),
            "fast_init": _b(False, "Fast optimizer initialization when offloading to NVMe."),
            "ratio": _n(
                1.0,
                "Fraction of parameters updated on CPU (partial offload; < 1 needs ZeRO stage 3).",
                minimum=0.0,
                maximum=1.0,
            ),
            "super_offload": _b(
                False, "SuperOffload: CPU optimizer step overlapped with GPU work (stage 3).", since="0.18.0"
            ),
            "cpuadam_cores_perc": _n(
                0.8, "Fraction of CPU cores used by the CPU Adam optimizer.", minimum=0.0, maximum=1.0, since="0.18.0"
            ),
        }
    ),
    strict_since="0.0",
    nullable=True,
)

ZENFLOW = _section(
    "ZenFlow: stall-free offloading of optimizer updates (0.17+).",
    _lax(
        {
            "topk_ratio": _n(
                0.1,
                "Fraction of important gradient columns updated on the GPU.",
                exclusive_minimum=0.0,
                exclusive_maximum=1.0,
            ),
            "select_strategy": _s(
                "auto",
                "How important columns are selected: auto, step or epoch.",
                auto=(("native", "DeepSpeed picks the strategy"),),
            ),
            "select_interval": Key(
                ("string", "integer"),
                "auto",
                "Interval of column re-selection.",
                auto=(("native", "DeepSpeed picks the interval"),),
            ),
            "update_interval": Key(
                ("string", "integer"),
                "auto",
                "Interval of CPU optimizer updates.",
                auto=(("native", "DeepSpeed picks the interval"),),
            ),
            "overlap_step": _b(False, "Overlap the CPU optimizer step with GPU computation."),
            "offload": _b(False, "Offload the optimizer to CPU."),
            "auto_ratio": _n(0.99, "Threshold for adaptive update intervals.", minimum=0.0, maximum=1.0),
            "full_warm_up_rounds": _i(0, "Number of full-update warm-up rounds."),
            "steps_per_epoch": _i(None, "Steps per epoch (for the epoch strategy).", nullable=True),
            "pt_reserved_cores_perc": _n(0.5, "Fraction of CPU cores reserved for PyTorch.", minimum=0.0, maximum=1.0),
        }
    ),
    strict_since="0.0",
    nullable=True,
    since="0.17.0",
)

LEAF_MODULE = _section(
    "Modules ZeRO-3 treats as leaves (no hooks inside them), e.g. MoE blocks.",
    _lax(
        {
            # a string is one name: DeepSpeedZeroLeafModuleConfig._coerce_container_types wraps it in a list
            "classes": Key(
                ("array", "string"),
                _UNSET,
                "Fully qualified class names, a list or one string (default: Mixtral, "
                "Qwen2-MoE and Qwen3-MoE sparse blocks).",
                items="string",
            ),
            "names": Key(("array", "string"), [], "Module names (a list or one string).", items="string"),
            "name_suffixes": Key(
                ("array", "string"), [], "Module name suffixes (a list or one string).", items="string"
            ),
        }
    ),
    strict_since="0.0",
    since="0.18.0",
    nullable=True,
)

_HIDDEN_AUTO_RBS = (("transformers", "hidden_size * hidden_size"), ("accelerate", "model.config.hidden_size ** 2"))

ZERO = _section(
    "ZeRO memory optimizations (pydantic `DeepSpeedZeroConfig`; unknown keys are rejected).",
    _lax(
        {
            "stage": _i(
                0,
                "ZeRO stage: 0 disabled, 1 optimizer state, 2 + gradients, 3 + parameters partitioning.",
                enum=(0, 1, 2, 3),
                enum_docs=(
                    "Disabled (plain data parallelism).",
                    "Partition optimizer states.",
                    "Partition optimizer states and gradients.",
                    "Partition optimizer states, gradients and parameters.",
                ),
                auto=(("accelerate", "the plugin's zero_stage (YAML deepspeed_config.zero_stage, default 2)"),),
            ),
            "contiguous_gradients": _b(True, "Copy gradients to a contiguous buffer as they are produced."),
            "reduce_scatter": _b(True, "Use reduce or reduce-scatter instead of allreduce to average gradients."),
            "reduce_bucket_size": _i(
                500_000_000,
                "Number of elements reduced/allreduced at a time.",
                exclusive_minimum=0,
                auto=_HIDDEN_AUTO_RBS,
            ),
            "use_multi_rank_bucket_allreduce": _b(
                True, "Combine reduce buckets of different ranks into one allreduce."
            ),
            "allgather_partitions": _b(
                True, "Allgather updated parameters at the end of each step (vs. a series of broadcasts)."
            ),
            "allgather_bucket_size": _i(500_000_000, "Number of elements allgathered at a time.", minimum=0),
            "overlap_comm": _b(
                None,
                "Overlap gradient reduction with backward computation (default: true for stage 3, else false).",
                nullable=True,
            ),
            "compute_grad_norm": _b(
                True, "Compute the gradient norm; false is only allowed with stage 1 or 2.", since="0.19.8"
            ),
            "load_from_fp32_weights": _b(
                True, "Initialize fp32 master weights from the fp32 copies in the checkpoint."
            ),
            "elastic_checkpoint": _b(
                False, "Load optimizer state saved with a different data-parallel degree (deprecated for stage 3)."
            ),
            "offload_param": OFFLOAD_PARAM,
            "offload_optimizer": OFFLOAD_OPTIMIZER,
            "zenflow": ZENFLOW,
            "sub_group_size": _i(
                1_000_000_000, "Tile size for parameter processing (ZeRO-Offload / Infinity).", minimum=0
            ),
            "cpu_offload_param": _b(
                None,
                'Deprecated: use `offload_param: {"device": "cpu"}`.',
                nullable=True,
                deprecated='`cpu_offload_param` is deprecated; use `offload_param: {"device": "cpu"}`',
                replaced_by="zero_optimization.offload_param",
            ),
            "cpu_offload_use_pin_memory": _b(
                None,
                "Deprecated: use `pin_memory` in `offload_param` / `offload_optimizer`.",
                nullable=True,
                deprecated=(
                    "`cpu_offload_use_pin_memory` is deprecated and has no effect; set `pin_memory` in "
                    "`offload_param` or `offload_optimizer`"
                ),
            ),
            "cpu_offload": _b(
                None,
                'Deprecated: use `offload_optimizer: {"device": "cpu"}`.',
                nullable=True,
                deprecated='`cpu_offload` is deprecated; use `offload_optimizer: {"device": "cpu"}`',
                replaced_by="zero_optimization.offload_optimizer",
            ),
            "stage3_prefetch_bucket_size": _i(
                50_000_000,
                "Size of the fixed buffer for prefetching parameters (stage 3).",
                minimum=0,
                aliases=("prefetch_bucket_size",),
                auto=(
                    ("transformers", "int(0.9 * hidden_size * hidden_size)"),
                    ("accelerate", "int(0.9 * model.config.hidden_size ** 2)"),
                ),
            ),
            "stage3_param_persistence_threshold": _i(
                100_000,
                "Parameters smaller than this stay unpartitioned (stage 3).",
                minimum=0,
                aliases=("param_persistence_threshold",),
                auto=(("transformers", "10 * hidden_size"), ("accelerate", "10 * model.config.hidden_size")),
            ),
            "stage3_model_persistence_threshold": _i(
                2**63 - 1,
                "Maximum number of unpartitioned parameter elements (stage 3).",
                minimum=0,
                aliases=("model_persistence_threshold",),
            ),
            "stage3_max_live_parameters": _i(
                1_000_000_000,
                "Maximum number of parameters resident per GPU before releasing (stage 3).",
                minimum=0,
                aliases=("max_live_parameters",),
            ),
            "stage3_max_reuse_distance": _i(
                1_000_000_000,
                "Do not release a parameter that will be reused within this many parameters (stage 3).",
                minimum=0,
                aliases=("max_reuse_distance",),
            ),
            "stage3_gather_16bit_weights_on_model_save": _b(
                False,
                "Consolidate 16-bit weights when saving the model (stage 3).",
                aliases=("gather_16bit_weights_on_model_save",),
                auto=(
                    (
                        "accelerate",
                        "the plugin's zero3_save_16bit_model (YAML deepspeed_config.zero3_save_16bit_model), default "
                        "false",
                    ),
                ),
            ),
            "stage3_module_granularity_threshold": _i(
                0,
                "Modules with more parameters than this are treated as leaves (stage 3).",
                aliases=("module_granularity_threshold",),
                since="0.16.0",
            ),
            "stage3_use_all_reduce_for_fetch_params": _b(
                False,
                "Fetch parameters with allreduce instead of allgather (stage 3).",
                aliases=("use_all_reduce_for_fetch_params",),
            ),
            "stage3_allgather_sequential": _b(
                False,
                "Allgather parameters one at a time (stage 3).",
                aliases=("allgather_sequential",),
                since="0.18.0",
            ),
            "stage3_gather_fp16_weights_on_model_save": _b(
                False,
                "Deprecated spelling of `stage3_gather_16bit_weights_on_model_save`.",
                deprecated=(
                    "`stage3_gather_fp16_weights_on_model_save` is deprecated; use "
                    "`stage3_gather_16bit_weights_on_model_save`"
                ),
                replaced_by="zero_optimization.stage3_gather_16bit_weights_on_model_save",
            ),
            "ignore_unused_parameters": _b(True, "Do not fail on parameters that receive no gradient (stages 1-2)."),
            "legacy_stage1": _b(
                False, "Use the legacy stage 1 implementation (`true` fails at engine initialization)."
            ),
            "round_robin_gradients": _b(False, "Round-robin gradient partitioning across ranks (stages 1-2)."),
            "parameter_alignment": _b(False, "Align parameter partitions.", since="0.19.8"),
            "zero_hpz_partition_size": _i(
                1, "ZeRO++ hierarchical partitioning: ranks per secondary partition group.", minimum=0
            ),
            "zero_quantized_weights": _b(False, "ZeRO++: quantize weights for allgather."),
            "zero_quantized_nontrainable_weights": _b(False, "ZeRO++: keep non-trainable weights quantized."),
            "zero_quantized_gradients": _b(False, "ZeRO++: quantize gradients for reduce-scatter."),
            "memory_efficient_linear": _b(True, "Use the memory-efficient linear layer (stage 3)."),
            "pipeline_loading_checkpoint": _b(False, "Pipeline the loading of a checkpoint (stage 3)."),
            "override_module_apply": _b(True, "Override `nn.Module.apply` for partitioned parameters (stage 3)."),
            "log_trace_cache_warnings": _b(
                False, "Log warnings from the parameter prefetch trace cache (stage 3).", since="0.16.0"
            ),
            "enable_sanity_checks": _b(False, "Run expensive ZeRO sanity checks.", since="0.17.0"),
            "save_muon_momentum_buffer_in_memory": _b(
                False, "Keep the Muon momentum buffer in memory.", since="0.18.0"
            ),
            "leaf_module": LEAF_MODULE,
            "mics_shard_size": _i(
                -1,
                "MiCS shard size (removed).",
                removed="0.19.7",
                removed_message="MiCS ZeRO-3 sharding has been removed",
            ),
            "mics_hierarchical_params_gather": _b(
                False,
                "MiCS hierarchical parameter gather (removed).",
                removed="0.19.7",
                removed_message="MiCS ZeRO-3 sharding has been removed",
            ),
            "zeropp_loco_param": Key(
                "object",
                None,
                "LoCo-Zero++ error feedback (removed).",
                nullable=True,
                since="0.16.0",
                removed="0.19.8",
                removed_message="LoCo-Zero++ has been removed; ZeRO++ quantized gradients work without it",
            ),
        }
    ),
    strict_since="0.0",
    # `"zero_optimization": true` is the legacy form (stage 1)
)

FP16 = _section(
    "fp16 mixed precision with dynamic or static loss scaling (pydantic from 0.17.1; hand-parsed before).",
    _lax(
        {
            "enabled": _b(
                False,
                "Enable fp16 mixed-precision training.",
                auto=(
                    ("transformers", "TrainingArguments.fp16 or fp16_full_eval"),
                    ("accelerate", 'mixed_precision == "fp16"'),
                ),
            ),
            "auto_cast": _b(False, "Cast the model's inputs to fp16."),
            "loss_scale": _n(
                0, "Static loss scale; 0 enables dynamic loss scaling.", minimum=0, minimum_since="0.18.8", no_bool=True
            ),
            "initial_scale_power": _i(16, "Initial dynamic loss scale is 2**initial_scale_power."),
            "loss_scale_window": _i(
                1000,
                "Window over which to raise/lower the dynamic loss scale (> 0 with dynamic scaling).",
                no_bool=True,
            ),
            "hysteresis": _i(2, "Delay shift in dynamic loss scaling."),
            "consecutive_hysteresis": _b(False, "Refill hysteresis on every step without overflow."),
            "min_loss_scale": _i(1, "Minimum dynamic loss scale (> 0 with dynamic scaling).", no_bool=True),
            "fp16_master_weights_and_grads": _b(
                False, "Keep master weights and gradients in fp16 (needs ZeRO stage 1-3)."
            ),
        }
    ),
    strict_since="0.17.1",
)

BF16 = _section(
    "bfloat16 mixed precision (also read as `bfloat16`; pydantic from 0.17.1).",
    _lax(
        {
            "enabled": _b(
                False,
                "Enable bfloat16 mixed-precision training.",
                auto=(
                    ("transformers", "TrainingArguments.bf16 or bf16_full_eval"),
                    ("accelerate", 'mixed_precision in ("bf16", "fp8")'),
                ),
            ),
            "immediate_grad_update": _b(
                False,
                "Apply gradient updates immediately instead of at the end of accumulation.",
                default_changes=(("0.17.1", True),),
            ),
            "check_grad_overflow": _b(
                True,
                "Check gradients for overflow (inf/nan) each step.",
                default_changes=(("0.19.3", False),),
                since="0.17.1",
            ),
            "bf16_master_weights_and_grads": _b(
                False, "Keep master weights and gradients in bf16 (needs ZeRO stage 1-3).", since="0.18.0"
            ),
            "bf16_optimizer_states": _b(
                False, "Keep optimizer states in bf16 (needs bf16_master_weights_and_grads).", since="0.18.0"
            ),
        }
    ),
    strict_since="0.17.1",
)

_MONITOR_COMMON = {
    "enabled": _b(False, "Enable this monitor."),
    "output_path": _s("", "Directory for the logs."),
    "job_name": _s("DeepSpeedJobName", "Name of the job (a subdirectory of output_path)."),
}

_OPTIMIZERS = (
    "adam",
    "adamw",
    "lamb",
    "adagrad",
    "lion",
    "muadam",
    "muadamw",
    "musgd",
    "muon",
    "onebitadam",
    "zerooneadam",
    "onebitlamb",
)
_OPTIMIZERS_REMOVED = {"onebitadam": "0.19.7", "zerooneadam": "0.19.7", "onebitlamb": "0.19.7"}
_OPTIMIZERS_SINCE = {"muon": "0.17.0"}
# torch.optim / torch.optim.lr_scheduler names DeepSpeed falls back to, and each class's parameters:
# generated data, accelconf/data/deepspeed_classes.json (see accelconf.deepspeed.signatures).
_SCHEDULERS = ("LRRangeTest", "OneCycle", "WarmupLR", "WarmupDecayLR", "WarmupCosineLR")

_SCHED_PARAMS = {
    "warmup_min_lr": _n(0.0, "Initial learning rate of the warmup.", auto=(("transformers", "0"), ("accelerate", "0"))),
    "warmup_max_lr": _n(
        0.001,
        "Learning rate at the end of the warmup.",
        auto=(("transformers", "TrainingArguments.learning_rate"), ("accelerate", "the optimizer's lr")),
    ),
    # WarmupLR, WarmupDecayLR and WarmupCosineLR raise ValueError from 0.19.3; before, 0 warmed up over 2 steps
    "warmup_num_steps": _i(
        1000,
        "Number of warmup steps (> 0 from DeepSpeed 0.19.3).",
        exclusive_minimum=0,
        minimum_since="0.19.3",
        auto=(
            ("transformers", "max(1, TrainingArguments.get_warmup_steps(num_training_steps))"),
            ("accelerate", "max(1, DummyScheduler.warmup_num_steps)"),
        ),
    ),
    "warmup_type": _s("log", "Warmup curve.", enum=("log", "linear")),
    "warmup_min_ratio": _n(0.0, "Initial learning-rate ratio of the cosine warmup."),
    "cos_min_ratio": _n(0.0001, "Final learning-rate ratio of the cosine decay."),
    "total_num_steps": _i(
        None,
        "Total number of training steps.",
        nullable=True,
        auto=(
            ("transformers", "the number of training steps"),
            ("accelerate", "DummyScheduler.total_num_steps (/ num_processes unless split_batches)"),
        ),
    ),
    "last_batch_iteration": _i(-1, "Index of the last batch (for resuming)."),
    "lr_range_test_min_lr": _n(0.001, "LR range test: starting learning rate."),
    "lr_range_test_step_rate": _n(1.0, "LR range test: scaling rate."),
    "lr_range_test_step_size": _i(
        2000,
        "LR range test: training steps per learning-rate step (> 0 from DeepSpeed 0.19.4).",
        exclusive_minimum=0,
        minimum_since="0.19.4",
    ),
    "lr_range_test_staircase": _b(False, "LR range test: staircase instead of continuous increase."),
    "cycle_first_step_size": _i(
        2000,
        "OneCycle: steps in the first half of the cycle (> 0 from DeepSpeed 0.19.4).",
        exclusive_minimum=0,
        minimum_since="0.19.4",
    ),
    "cycle_first_stair_count": _i(0, "OneCycle: stairs in the first half."),
    "cycle_second_step_size": _i(
        None,
        "OneCycle: steps in the second half (>= 0 from DeepSpeed 0.19.4).",
        nullable=True,
        minimum=0,
        minimum_since="0.19.4",
    ),
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
        "type": _s(
            None,
            "DeepSpeed optimizer name (case-insensitive) or a torch.optim class name (case-sensitive).",
            nullable=True,
        ),
        "params": Key(
            "object",
            None,
            "Keyword arguments of the optimizer class (`lr`, `betas`, `eps`, `weight_decay`, ...); a "
            "parameter the class does not take raises TypeError at deepspeed.initialize. "
            "`max_grad_norm` is rejected at engine initialization: use `gradient_clipping`.",
            open=True,
            nullable=True,
        ),
        "legacy_fusion": _b(False, "Use the legacy fused optimizer."),
    },
)

SCHEDULER = _section(
    "Learning-rate scheduler DeepSpeed builds (hand-parsed; checked only at deepspeed.initialize).",
    {
        "type": _s(
            None,
            "Scheduler name: one of DeepSpeed's (" + ", ".join(_SCHEDULERS) + ") or a "
            "torch.optim.lr_scheduler class (e.g. `StepLR`); case-sensitive.",
            nullable=True,
        ),
        "params": _section(
            "Keyword arguments of the scheduler class (required: DeepSpeed calls `scheduler(optimizer, "
            "**params)`); a parameter the class does not take raises TypeError at deepspeed.initialize. "
            "The keys below are DeepSpeed's own schedulers'.",
            _SCHED_PARAMS,
            nullable=True,
            open=True,
        ),
    },
)

ACTIVATION_CHECKPOINTING = _section(
    "Activation checkpointing (hand-parsed; `configure()` kwarg names such as `checkpoint_in_cpu` are not JSON keys).",
    {
        "partition_activations": _b(False, "Partition activations across model-parallel GPUs."),
        "cpu_checkpointing": _b(
            False, "Keep checkpointed activations in CPU memory (the partitions, with partition_activations)."
        ),
        "contiguous_memory_optimization": _b(False, "Copy partitioned activations into a contiguous buffer."),
        "number_checkpoints": _i(
            None, "Total number of activation checkpoints (for the contiguous buffer).", nullable=True
        ),
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
        "thread_count": _i(
            1,
            "Old name of `intra_op_parallelism` (ignored from 0.16.4).",
            removed="0.16.4",
            removed_message="`aio.thread_count` is ignored since DeepSpeed 0.16.4; use `intra_op_parallelism`",
            replaced_by="aio.intra_op_parallelism",
        ),
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
    _lax(
        {
            "enabled": _b(False, "Enable the communication logger."),
            "verbose": _b(False, "Log every communication operation."),
            "prof_all": _b(True, "Profile all operations."),
            "debug": _b(False, "Add the calling function to each log entry."),
            "prof_ops": Key("array", [], "Operations to profile when prof_all is false.", items="string"),
        }
    ),
    strict_since="0.0",
)

HYBRID_ENGINE = _section(
    "Hybrid engine for RLHF (DeepSpeed-Chat; pydantic).",
    _lax(
        {
            "enabled": _b(False, "Enable the hybrid engine."),
            "max_out_tokens": _i(512, "Maximum number of generated tokens.", exclusive_minimum=0),
            "inference_tp_size": _i(1, "Tensor-parallel size for generation."),
            "release_inference_cache": _b(False, "Release the inference cache after generation."),
            "pin_parameters": _b(True, "Pin parameters in memory."),
            "tp_gather_partition_size": _i(8, "Partition size for gathering tensor-parallel weights."),
            "enable_cuda_graph": _b(False, "Capture generation in CUDA graphs.", since="0.19.8"),
        }
    ),
    strict_since="0.0",
)

COMPILE = _section(
    "Compilation: DeepCompile (0.16+). The older torch.compile block (`disable`, `backend`, `kwargs`, ...) is "
    "rejected by current versions.",
    _lax(
        {
            "deepcompile": _b(False, "Enable DeepCompile.", since="0.16.0"),
            "free_activation": _b(False, "Free activations eagerly.", since="0.16.0"),
            "free_activation_threshold": _i(
                10_485_760, "Activations of at least this many bytes are freed eagerly.", since="0.18.0"
            ),
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
            "keep_int_input_tensors": _b(True, "Keep integer input tensors.", since="0.17.2"),
            "keep_all_input_tensors": _b(False, "Keep all input tensors.", since="0.17.2"),
            "autoep_non_moe": _b(False, "Compile non-MoE parents of AutoEP layers.", since="0.19.8"),
            "passes": Key("array", None, "Compiler passes to run.", nullable=True, items="string", since="0.18.9"),
            # the torch.compile block of DeepSpeed <= 0.15 (`deepspeed/runtime/compiler.py`)
            "disable": _b(
                False,
                "torch.compile block of DeepSpeed <= 0.15: disable compilation.",
                removed="0.16.0",
                removed_message=(
                    "the torch.compile `compile` block was replaced by DeepCompile; call `engine.compile()` instead"
                ),
            ),
            "enabled": _b(
                False,
                "torch.compile block of older DeepSpeed: enable compilation.",
                removed="0.16.0",
                removed_message=(
                    "the torch.compile `compile` block was replaced by DeepCompile; call `engine.compile()` instead"
                ),
            ),
            "backend": _s(
                "inductor",
                "torch.compile block of DeepSpeed <= 0.15: backend.",
                removed="0.16.0",
                removed_message=(
                    "the torch.compile `compile` block was replaced by DeepCompile; pass `backend` to "
                    "`engine.compile()`"
                ),
            ),
            "kwargs": Key(
                "object",
                {},
                "torch.compile block of DeepSpeed <= 0.15: torch.compile kwargs.",
                open=True,
                removed="0.16.0",
                removed_message=(
                    "the torch.compile `compile` block was replaced by DeepCompile; pass kwargs to `engine.compile()`"
                ),
            ),
            "fullgraph": _b(
                False,
                "torch.compile block of DeepSpeed <= 0.15: fullgraph.",
                removed="0.16.0",
                removed_message=(
                    "the torch.compile `compile` block was replaced by DeepCompile; pass it to `engine.compile()`"
                ),
            ),
            "dynamic": _b(
                None,
                "torch.compile block of DeepSpeed <= 0.15: dynamic shapes.",
                nullable=True,
                removed="0.16.0",
                removed_message=(
                    "the torch.compile `compile` block was replaced by DeepCompile; pass it to `engine.compile()`"
                ),
            ),
            "mode": _s(
                None,
                "torch.compile block of DeepSpeed <= 0.15: mode.",
                nullable=True,
                removed="0.16.0",
                removed_message=(
                    "the torch.compile `compile` block was replaced by DeepCompile; pass it to `engine.compile()`"
                ),
            ),
            "options": Key(
                "object",
                None,
                "torch.compile block of DeepSpeed <= 0.15: backend options.",
                open=True,
                nullable=True,
                removed="0.16.0",
                removed_message=(
                    "the torch.compile `compile` block was replaced by DeepCompile; pass it to `engine.compile()`"
                ),
            ),
        }
    ),
    strict_since="0.16.0",  # DeepSpeedConfig reads `compile` from 0.16 (CompileConfig); 0.15 ignores the block
)

TENSOR_PARALLEL = _section(
    "Automatic tensor parallelism for training (AutoTP, pydantic `TPTrainingConfig`, 0.16+).",
    {
        "autotp_size": _i(0, "Tensor-parallel degree (0 disables AutoTP).", lax=True),
        "tp_overlap_comm": _b(False, "Overlap tensor-parallel communication.", lax=True),
        "keep_module_on_host": _b(False, "Keep modules on the host while partitioning.", lax=True),
        "partition_config": Key("object", None, "Custom partitioning rules.", nullable=True, open=True, since="0.18.6"),
        "preset_model": _s(None, "Preset partitioning of a known model family.", nullable=True, since="0.18.6"),
        "injection_policy_tuple": Key("array", None, "Injection policy (module, layer names).", nullable=True),
        "replace_with_kernel_inject": _b(False, "Inject DeepSpeed kernels.", aliases=("kernel_inject",), lax=True),
        "tensor_parallel": _section(
            "Tensor-parallel group settings.",
            _lax(
                {
                    "tp_size": _i(1, "Tensor-parallel size."),
                    "tp_grain_size": _i(1, "Granularity of the partitioning."),
                    "mpu": Key(("object", "null"), None, "Model-parallel unit (code only)."),
                    "tp_group": Key(("object", "null"), None, "Process group (code only)."),
                }
            ),
            strict_since="0.0",
            aliases=("tp",),
        ),
        "dtype": _s(
            "float16",
            "Data type of the partitioned model (a torch dtype name).",
            enum=("float16", "fp16", "half", "bfloat16", "bf16", "float32", "fp32", "float", "int8"),
        ),
        "vocab_parallel_lm_head": _b(
            None, "Partition the LM head over the vocabulary.", nullable=True, lax=True, since="0.19.8"
        ),
        "vocab_parallel_ce_backend": _s(
            "torch", "Cross-entropy backend for the vocabulary-parallel head.", enum=("torch", "liger"), since="0.19.8"
        ),
    },
    strict_since="0.0",
    since="0.16.0",
)

CHECKPOINT = _section(
    "Checkpointing (hand-parsed).",
    {
        "tag_validation": _s(
            "Warn",
            "Check that checkpoint tags match across ranks.",
            enum=("Warn", "Ignore", "Fail"),
            enum_docs=("Warn on a mismatch.", "Do not check.", "Fail on a mismatch."),
            enum_case_insensitive=True,
        ),
        "load_universal": _b(False, "Load a universal checkpoint."),
        "use_node_local_storage": _b(False, "Save to node-local storage (each node saves its own copy)."),
        "parallel_write": _section(
            "Parallel checkpoint writing.",
            {
                "pipeline_stage": _b(False, "Parallelize writes across pipeline stages (must be a JSON boolean)."),
            },
        ),
        "checkpoint_serialization": _b(True, "Serialize checkpoints with torch.save.", since="0.17.0"),
        "writer": _section(
            "Fast checkpoint writer.",
            {
                "type": _s(
                    "FAST", "Writer implementation.", enum=("MOCK", "PYTHON", "FAST"), enum_case_insensitive=True
                ),
                "io_buffer_size": _i(64 * 1024**2, "I/O buffer size in bytes."),
                "io_buffer_double": _b(True, "Double-buffer I/O."),
                "io_multiplier": _i(1, "I/O multiplier."),
                "show_statistics": _b(False, "Print I/O statistics."),
                "data_parallel": _s(
                    None,
                    "Data-parallel unit that writes.",
                    nullable=True,
                    enum=("SOCKET", "MACHINE"),
                    enum_case_insensitive=True,
                ),
                "decoupled": _b(False, "Decouple writing from training."),
            },
            nullable=True,
            since="0.17.0",
        ),
    },
)

# DtypeEnum's spellings (deepspeed/runtime/config.py) of each precision, int8 left out
DTYPE_SPELLINGS: dict[str, str] = {
    "fp32": "fp32",
    "float32": "fp32",
    "float": "fp32",
    "torch.float32": "fp32",
    "fp16": "fp16",
    "float16": "fp16",
    "half": "fp16",
    "torch.float16": "fp16",
    "bf16": "bf16",
    "bfloat16": "bf16",
    "torch.bfloat16": "bf16",
}
_DTYPES = tuple(DTYPE_SPELLINGS)

DATA_TYPES = _section(
    "Data types of gradient accumulation, parameters and buffers (hand-parsed).",
    {
        # read through DtypeEnum (deepspeed/runtime/config.py), which knows these spellings, case-sensitive
        "grad_accum_dtype": _s(None, "Data type of gradient accumulation.", nullable=True, enum=_DTYPES),
        "param_dtype": _s(
            None,
            "Data type of parameters (must match the fp16/bf16 mode).",
            nullable=True,
            enum=_DTYPES,
            since="0.19.5",
        ),
        "buffer_dtype": _s(None, "Data type of buffers.", nullable=True, enum=_DTYPES, since="0.19.5"),
        "keep_in_fp32_modules": Key(
            ("string", "array"),
            "auto",
            '`"auto"` or a list of module-name patterns whose buffers stay in fp32.',
            items="string",
            since="0.19.8",
            auto=(("native", "DeepSpeed's own default list"),),
        ),
    },
)

PIPELINE = _section(
    "Pipeline parallelism (merged into defaults without validation).",
    {
        "stages": Key(
            ("string", "integer"),
            "auto",
            "Number of pipeline stages.",
            auto=(("native", "DeepSpeed derives it from the topology"),),
        ),
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
        "model_info": Key(
            "object",
            None,
            "Model information (num_params, hidden_size, num_layers, profile).",
            nullable=True,
            open=True,
        ),
        "model_info_path": _s(None, "File with model information.", nullable=True),
        "arg_mappings": Key(
            "object", None, "Mapping of DeepSpeed keys to training-script arguments.", nullable=True, open=True
        ),
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
        "data_sampling": Key(
            "object",
            _UNSET,
            "Data sampling: num_epochs, num_workers, pin_memory, curriculum_learning, dynamic_batching.",
            open=True,
        ),
        "data_routing": Key("object", _UNSET, "Data routing: random_ltd.", open=True),
    },
)

TIMERS = _section(
    "Timers.",
    {
        "throughput": _section(
            "Throughput timer (pydantic).",
            _lax(
                {
                    "enabled": _b(True, "Enable the throughput timer."),
                    "synchronized": _b(True, "Synchronize the device when measuring."),
                }
            ),
            strict_since="0.0",
        ),
    },
)

TORCH_AUTOCAST = _section(
    "torch.autocast mixed precision (hand-parsed, 0.17+).",
    {
        "enabled": _b(False, "Enable torch.autocast."),
        "dtype": _s(
            _UNSET,
            "Lower-precision data type (default: the model's).",
            enum=(
                "bfloat16",
                "bf16",
                "torch.bfloat16",
                "float16",
                "fp16",
                "half",
                "torch.float16",
                "float32",
                "fp32",
                "float",
                "torch.float32",
                "int8",
                "torch.int8",
            ),
        ),
        "lower_precision_safe_modules": Key(
            "array",
            _UNSET,
            "Module classes safe to run in lower precision (default: DeepSpeed's list).",
            items="string",
        ),
    },
    since="0.17.0",
)

WEIGHT_QUANTIZATION = _section(
    "Weight quantization (inference `WeightQuantConfig`, pydantic).",
    _lax(
        {
            "enabled": _b(True, "Enable weight quantization."),
            "num_bits": _i(8, "Number of bits."),
            "q_type": _s("symmetric", "Quantization type.", enum=("symmetric", "asymmetric")),
            "q_groups": _i(1, "Number of quantization groups."),
            "quantized_initialization": Key("object", {}, "Quantize weights at initialization.", open=True),
            "post_init_quant": Key("object", {}, "Quantize after initialization.", open=True),
        }
    ),
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
    "curriculum_learning": (
        "0.19.8",
        "top-level `curriculum_learning` has been removed; use `data_efficiency.data_sampling.curriculum_learning`",
    ),
    "progressive_layer_drop": ("0.19.8", "Progressive Layer Dropping has been removed"),
}


def _removed_block(name: str, doc: str, t: str | tuple[str, ...] = "object") -> Key:
    version, message = _REMOVED_TOP[name]
    return Key(
        t,
        _UNSET,
        doc,
        removed=version,
        removed_message=message,
        open=True,
        replaced_by="data_efficiency.data_sampling.curriculum_learning" if name == "curriculum_learning" else None,
    )


_COMM_DTYPE = dict(enum=("fp32", "fp16", "bf16"), enum_case_insensitive=True, nullable=True)

TOP: Key = _section(
    "DeepSpeed training configuration (`ds_config.json`), DeepSpeed 0.15 to 0.19.8.",
    {
        "train_batch_size": _i(
            None,
            "Global batch size: train_micro_batch_size_per_gpu x gradient_accumulation_steps x world size.",
            nullable=True,
            exclusive_minimum=0,
            auto=_AUTO_BATCH_TBS,
        ),
        "train_micro_batch_size_per_gpu": _i(
            None, "Batch size of one step on one GPU.", nullable=True, exclusive_minimum=0, auto=_AUTO_BATCH_MBS
        ),
        "gradient_accumulation_steps": _i(
            None,
            "Steps to accumulate gradients over before an optimizer step (derived when absent).",
            nullable=True,
            exclusive_minimum=0,
            auto=_AUTO_GAS,
        ),
        "managed_gradient_accumulation": _b(True, "DeepSpeed manages the accumulation boundary.", since="0.19.5"),
        "optimizer": OPTIMIZER,
        "scheduler": SCHEDULER,
        "zero_allow_untested_optimizer": _b(
            False,
            "Allow ZeRO with an optimizer DeepSpeed does not know (accelerate and the HF Trainer set it for torch "
            "optimizers).",
        ),
        "zero_force_ds_cpu_optimizer": _b(True, "Require DeepSpeed's CPU optimizer when offloading the optimizer."),
        "gradient_clipping": _n(
            1.0,
            "Clip gradients to this global norm (0 disables).",
            default_changes=(("0.19.3", 0.0),),
            auto=(
                ("transformers", "TrainingArguments.max_grad_norm"),
                ("accelerate", "the plugin's gradient_clipping (YAML deepspeed_config.gradient_clipping), else 1.0"),
            ),
        ),
        "prescale_gradients": _b(False, "Scale gradients before allreduce."),
        "gradient_predivide_factor": _n(1.0, "Divide gradients by this factor before allreduce."),
        "gradient_allreduce_op": _s(
            "mean",
            "Gradient allreduce operation (`sum` is rejected with ZeRO-3, ZenFlow or DeepCompile).",
            enum=("mean", "sum"),
            enum_case_insensitive=True,
            since="0.19.6",
        ),
        "sparse_gradients": _removed_block(
            "sparse_gradients", "Sparse gradients for dense embeddings (removed).", ("boolean", "object")
        ),
        "fp16": FP16,
        "bf16": BF16,
        "bfloat16": Key(
            **{
                **BF16.__dict__,
                "doc": "Old name of the `bf16` block (`bf16` wins if both are present).",
                "deprecated": "`bfloat16` is the old name of the `bf16` block; write `bf16`",
                "replaced_by": "bf16",
            }
        ),
        "amp": _removed_block("amp", "NVIDIA Apex AMP (removed in 0.19.8)."),
        "torch_autocast": TORCH_AUTOCAST,
        "communication_data_type": _s(None, "Data type of gradient communication.", **_COMM_DTYPE),
        "seq_parallel_communication_data_type": _s(
            "fp32", "Data type of sequence-parallel communication.", since="0.16.0", **_COMM_DTYPE
        ),
        "seq_parallel_comm_data_type": _s(
            "fp32",
            "Old name of `seq_parallel_communication_data_type` (DeepSpeed <= 0.15).",
            removed="0.16.0",
            replaced_by="seq_parallel_communication_data_type",
            removed_message="renamed `seq_parallel_communication_data_type`; the old name is ignored",
            **_COMM_DTYPE,
        ),
        "data_types": DATA_TYPES,
        "zero_optimization": ZERO,
        "activation_checkpointing": ACTIVATION_CHECKPOINTING,
        "aio": AIO,
        "flops_profiler": FLOPS_PROFILER,
        "tensorboard": _section("TensorBoard monitor (pydantic).", _lax(dict(_MONITOR_COMMON)), **_MONITOR),
        "csv_monitor": _section("CSV monitor (pydantic).", _lax(dict(_MONITOR_COMMON)), **_MONITOR),
        "wandb": _section(
            "Weights & Biases monitor (pydantic).",
            _lax(
                {
                    "enabled": _b(False, "Enable the monitor."),
                    "group": _s(None, "Run group.", nullable=True),
                    "team": _s(None, "Team (entity).", nullable=True),
                    "project": _s("deepspeed", "Project name."),
                }
            ),
            **_MONITOR,
        ),
        "comet": _section(
            "Comet monitor (pydantic).",
            _lax(
                {
                    "enabled": _b(False, "Enable the monitor."),
                    "samples_log_interval": _i(100, "Log every N samples."),
                    "project": _s(None, "Project.", nullable=True),
                    "workspace": _s(None, "Workspace.", nullable=True),
                    "api_key": _s(None, "API key.", nullable=True),
                    "experiment_name": _s(None, "Experiment name.", nullable=True),
                    "experiment_key": _s(None, "Experiment key.", nullable=True),
                    "online": _b(None, "Log online.", nullable=True),
                    "mode": _s(None, "Comet start mode.", nullable=True),
                }
            ),
            **_MONITOR,
        ),
        "comms_logger": COMMS_LOGGER,
        "hybrid_engine": HYBRID_ENGINE,
        "compile": COMPILE,
        "tensor_parallel": TENSOR_PARALLEL,
        "expert_parallel": Key(
            "object",
            None,
            "Automatic expert parallelism (AutoEP, 0.19+; custom parser).",
            open=True,
            nullable=True,
            since="0.19.0",
        ),
        "timers": TIMERS,
        "weight_quantization": WEIGHT_QUANTIZATION,
        "checkpoint": CHECKPOINT,
        "datastates_ckpt": Key(
            "object", None, "DataStates asynchronous checkpointing (0.18+).", open=True, nullable=True, since="0.18.0"
        ),
        "pipeline": PIPELINE,
        "autotuning": AUTOTUNING,
        "data_efficiency": DATA_EFFICIENCY,
        "steps_per_print": _i(
            None,
            "Print progress every N steps (no printing by default since 0.15.2).",
            nullable=True,
            default_changes=(("0.15.2", 10),),
        ),
        "wall_clock_breakdown": _b(False, "Time forward/backward/step (forced on by flops_profiler.enabled)."),
        "memory_breakdown": _b(False, "Print memory usage at each step."),
        "dump_state": _b(False, "Print the DeepSpeed state after initialization."),
        "disable_allgather": _b(False, "Disable allgather."),
        "disable_python_gc": _b(False, "Disable Python garbage collection during training.", since="0.19.8"),
        "vocabulary_size": _i(None, "Vocabulary size (a warning if not a multiple of 8).", nullable=True),
        "log_level": _s(None, "Log level.", nullable=True, since="0.19.5"),
        "dataloader_drop_last": _b(False, "Drop the last incomplete batch of DeepSpeed's dataloader."),
        "use_data_before_expert_parallelism": _b(False, "Use data-before-expert parallel topology."),
        "sequence_parallel_size": _i(
            1,
            "Sequence-parallel degree; DeepSpeed divides the world size by it for the batch equation.",
            exclusive_minimum=0,
        ),
        "nebula": _removed_block("nebula", "Nebula checkpointing (removed in 0.19.7)."),
        "compression_training": _removed_block("compression_training", "Compression library (removed in 0.19.7)."),
        "quantize_training": _removed_block("quantize_training", "Mixture-of-Quantization (removed in 0.19.7)."),
        "sparse_attention": _removed_block("sparse_attention", "Sparse attention (removed in 0.19.7)."),
        "eigenvalue": _removed_block("eigenvalue", "Eigenvalue MoQ (removed in 0.19.8)."),
        "elasticity": _removed_block("elasticity", "Elastic training (removed in 0.19.8)."),
        "graph_harvesting": _removed_block(
            "graph_harvesting", "Graph harvesting (removed in 0.19.8).", ("boolean", "object")
        ),
        "curriculum_learning": _removed_block("curriculum_learning", "Legacy curriculum learning (removed in 0.19.8)."),
        "progressive_layer_drop": _removed_block(
            "progressive_layer_drop", "Progressive layer dropping (removed in 0.19.8)."
        ),
        "allgather_size": _i(500_000_000, "Legacy: allgather bucket size when `zero_optimization` is `true`."),
    },
)


def installed_version() -> str | None:
    """The installed DeepSpeed's version, read from its package metadata (never imported), without a
    local part (``0.19.8+cu121`` is ``0.19.8``); ``None`` when DeepSpeed is not installed."""
    v = _installed("deepspeed")
    return v.split("+")[0] if v else None


# -- looking keys up -------------------------------------------------------------------------------


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


def canonical_path(path: str) -> str:
    """The table's own spelling of a dotted key path: each part's alias (``prefetch_bucket_size``,
    ``tp``) is replaced by the key it stands for, and a deprecated spelling of a same-typed scalar
    (``stage3_gather_fp16_weights_on_model_save``) by its replacement. Unknown parts are kept."""
    out: list[str] = []
    cur: Key | None = TOP
    for part in path.split("."):
        if cur is None or cur.children is None:
            out.append(part)
            cur = None
            continue
        canon, spec = _child(cur, part)
        if spec is not None and spec.deprecated and spec.replaced_by and spec.children is None:
            target = lookup(spec.replaced_by)
            if target is not None and target.children is None and target.type == spec.type:
                canon, spec = spec.replaced_by.rsplit(".", 1)[-1], target
        out.append(canon)
        cur = spec
    return ".".join(out)


# Key paths other packages name (diff, the memory estimate): each is a key of the table above
# (tests/project/test_single_homes.py looks every one up), spelled here once.
class Paths:
    ZERO = "zero_optimization"
    STAGE = "zero_optimization.stage"
    OFFLOAD_OPTIMIZER_DEVICE = "zero_optimization.offload_optimizer.device"
    OFFLOAD_PARAM_DEVICE = "zero_optimization.offload_param.device"
    FP16_ENABLED = "fp16.enabled"
    BF16_ENABLED = "bf16.enabled"
    MICRO_BATCH = "train_micro_batch_size_per_gpu"
    TRAIN_BATCH = "train_batch_size"
    GRADIENT_ACCUMULATION = "gradient_accumulation_steps"
