"""What a file is: the one recogniser of file kinds, by content and name.

:func:`recognise` answers "is this an accelerate config, a DeepSpeed JSON, an env file, a launch
script, a Python script, or a file that holds distributed settings but is none of these (Hugging
Face Trainer or TRL arguments, a LLaMA-Factory or axolotl YAML, a gpt-neox YAML, a Trainer
``fsdp_config`` JSON, a training script's own ``config.json``)?". ``validate``, the API, the
format detection of the converters (:func:`accelconf.formats.detect_format`) and the editor's
detection (:func:`accelconf.assist.document_kind`) all ask it, so they never disagree.

The markers come from real field lists: accelerate's keys from the settings registry, DeepSpeed's
from its key table, the Trainer's from transformers' ``TrainingArguments`` (every field of every release the
releases data knows, :mod:`accelconf.trainer.releases`, generated from each release's own code), LLaMA-Factory's and
axolotl's from their documented example configs. Nothing here imports transformers or any other
training library.
"""

from __future__ import annotations

import os
import re
from functools import lru_cache
from typing import Any, NamedTuple

from accelconf.accelerate import registry
from accelconf.errors import InputError
from accelconf.text.document import FILE_SUFFIXES, Document, load_text, looks_like_json

# What validate says each kind is; the kinds accelconf checks itself are CHECKED.
LABELS: dict[str, str] = {
    "accelerate": "an accelerate config",
    "deepspeed": "a DeepSpeed JSON",
    "env": "an env file",
    "launch": "a launch script",
    "other-launch": "a launch script without `accelerate launch` (torchrun, deepspeed or python)",
    "python": "a Python script",
    "other-python": "a Python script without `Accelerator(...)` or plugin calls",
    "trainer-args": "a Hugging Face Trainer / TRL arguments file",
    "llama-factory": "a LLaMA-Factory training YAML",
    "axolotl": "an axolotl training YAML",
    "gpt-neox": "a gpt-neox YAML (its DeepSpeed keys sit among its own)",
    "fsdp-config": "a Hugging Face Trainer `fsdp_config` file",
    "script-args": "a training script's own arguments file (its `train_batch_size` is not DeepSpeed's)",
    "unknown": "a file of no kind accelconf knows",
}
# What validate says it leaves alone in a kind it only names (or, for a framework YAML, in part).
NOT_CHECKED: dict[str, str] = {
    "other-launch": "its launch lines are not checked",
    "other-python": "it has no accelerate settings to check",
    "llama-factory": "LLaMA-Factory's own keys are not checked; its TrainingArguments fields and referenced files are",
    "axolotl": "axolotl's own keys are not checked; its TrainingArguments fields and referenced files are",
}
# Script suffixes: the name says what the file is before any content does.
SCRIPT_SUFFIXES: dict[str, str] = {".py": "kwargs", ".sh": "cli", ".bash": "cli", ".sbatch": "cli", ".slurm": "cli"}
# The kinds whose file holds Trainer / TRL arguments (what `validate`, `explain` and the conversions
# read through the Trainer model rather than as an accelerate config).
TRAINER_KINDS = ("trainer-args", "llama-factory", "axolotl", "fsdp-config")
CHECKED = frozenset({"accelerate", "deepspeed", "env", "launch", "python", *TRAINER_KINDS})
ENV_SUFFIX = ".env"  # also a whole name (a dotfile) or its end: prod.env

# Top-level keys only an accelerate config has (ClusterConfig in accelerate/commands/config/
# config_args.py): its identity, or one of its sections.
IDENTITY_KEYS = ("compute_environment", "distributed_type")
ACCELERATE_MARKERS: tuple[str, ...] = IDENTITY_KEYS + tuple(s for s in registry.SECTIONS if s)
# LLaMA-Factory's own arguments (src/llamafactory/hparams: model, data, finetuning; v1's
# model_class/dist_config/kernel_config), as its examples/ configs use them.
LLAMA_FACTORY_KEYS = frozenset(
    {
        "stage",
        "finetuning_type",
        "template",
        "cutoff_len",
        "dataset_dir",
        "lora_target",
        "max_samples",
        "overwrite_cache",
        "val_size",
        "plot_loss",
        "model_class",
        "dist_config",
        "kernel_config",
        "quant_config",
        "train_dataset",
        "quantization_bit",
        "pref_beta",
        "lora_rank",
        "freeze_trainable_layers",
        "mix_strategy",
    }
)
# axolotl's own config keys (axolotl/utils/schemas/config.py), as its examples/ use them; not the
# ones TRL's ModelConfig shares (lora_r, load_in_4bit, ...), which an alignment-handbook recipe has.
AXOLOTL_KEYS = frozenset(
    {
        "base_model",
        "datasets",
        "sequence_len",
        "micro_batch_size",
        "sample_packing",
        "adapter",
        "strict",
        "special_tokens",
        "val_set_size",
        "pad_to_sequence_len",
        "flash_attention",
        "dataset_prepared_path",
        "num_epochs",
        "plugins",
        "base_model_config",
        "tokenizer_type",
        "eval_sample_packing",
        "saves_per_epoch",
        "evals_per_epoch",
    }
)
# gpt-neox's arguments (megatron/neox_arguments): hyphenated names a DeepSpeed config never has.
GPT_NEOX_KEYS = frozenset(
    {
        "pipe-parallel-size",
        "model-parallel-size",
        "num-layers",
        "hidden-size",
        "num-attention-heads",
        "seq-length",
        "max-position-embeddings",
        "train-iters",
        "lr-decay-style",
        "pos-emb",
        "norm",
        "attention-config",
        "train_micro_batch_size_per_gpu",
        "tokenizer-type",
        "data-path",
        "vocab-file",
    }
)
# The arguments of a training script's own argparse (diffusers' train_*.py): a ``train_batch_size``
# among these is the script's, not DeepSpeed's.
SCRIPT_ARG_KEYS = frozenset(
    {
        "pretrained_model_name_or_path",
        "resolution",
        "max_train_steps",
        "num_train_epochs",
        "lr_scheduler",
        "lr_warmup_steps",
        "instance_prompt",
        "train_text_encoder",
        "validation_prompt",
        "checkpointing_steps",
        "output_dir",
        "learning_rate",
        "train_data_dir",
        "dataset_name",
        "revision",
        "seed",
    }
)


@lru_cache(maxsize=1)
def fsdp_config_keys() -> frozenset[str]:
    """The keys of a Trainer ``fsdp_config``: what transformers reads, and accelerate's FSDP names
    (people write those too), all without the ``fsdp_`` prefix transformers drops. Read from the
    releases data on first use: an accelerate config or an env file never needs it."""
    from accelconf.trainer import releases as trainer_releases

    return trainer_releases.all_fsdp_config_keys() | frozenset(
        k.removeprefix("fsdp_") for k in registry.all_keys("fsdp_config")
    )


_DS_MARKERS = (
    "zero_optimization",
    "train_batch_size",
    "train_micro_batch_size_per_gpu",
    "gradient_accumulation_steps",
    "optimizer",
    "scheduler",
    "fp16",
    "bf16",
    "steps_per_print",
    "gradient_clipping",
    "wall_clock_breakdown",
    "zero_allow_untested_optimizer",
    "activation_checkpointing",
    "flops_profiler",
    "aio",
)
_DS_STRONG = ("zero_optimization", "train_batch_size", "train_micro_batch_size_per_gpu")
_DS_STRONG_TEXT = re.compile(r'"(?:{})"\s*:'.format("|".join(_DS_STRONG)))
_ACCELERATE_TEXT = re.compile(r'"(?:{}|num_processes|mixed_precision)"\s*:'.format("|".join(ACCELERATE_MARKERS)))
_YAML_TOP_KEY = re.compile(r"""^(['"]?)([A-Za-z_][\w.-]*)\1\s*:(?=\s|$)""", re.M)
_ENV_LINE = re.compile(r"^(export\s+)?[A-Za-z_][A-Za-z0-9_]*=")
_PY_TOKENS = ("Accelerator(", "Plugin(", "import accelerate", "from accelerate")
_PY_LINE = re.compile(
    r"^(?:import\s+[\w.]+|from\s+[\w.]+\s+import\s|def\s+\w+\(|class\s+\w+[(:]|if __name__\s*==)", re.M
)
# A command that starts a distributed run, after optional env assignments and a wrapper (srun, ...).
# Compiled on first use: it costs milliseconds, and most commands never sniff a launch script.
_LAUNCH_PATTERN = (
    r"^\s*(?:[A-Za-z_]\w*=\S*\s+)*(?:(?:srun|exec|nohup|time|mpirun)\b[^\n]*?\s)?"
    r"(accelerate(?:\s+launch|-launch)\b|python3?\s+-m\s+accelerate\.commands\.launch\b|torchrun\b|deepspeed\b"
    r"|python3?\s+-m\s+torch\.distributed\.(?:run|launch)\b)"
)


@lru_cache(maxsize=1)
def _launch() -> re.Pattern[str]:
    return re.compile(_LAUNCH_PATTERN, re.M)


class Recognition(NamedTuple):
    """A file's kind (a key of :data:`LABELS`) and the reader that reads it (``yaml``, ``json``,
    ``env``, ``cli`` or ``kwargs``)."""

    kind: str
    format: str

    @property
    def label(self) -> str:
        return LABELS[self.kind]

    @property
    def not_checked(self) -> str:
        """What validate leaves alone in a kind it only names."""
        return NOT_CHECKED.get(self.kind, "its own keys are not checked")

    @property
    def checked(self) -> bool:
        """accelconf checks this kind's own settings (otherwise it only names it)."""
        return self.kind in CHECKED


def recognise(text: str, path: str = "", doc: Document | None = None, *, assume_deepspeed: bool = False) -> Recognition:
    """What ``text`` (named ``path``) is: the name's suffix decides the reader first, then the content.

    ``doc`` is the parsed document when the caller has one. ``assume_deepspeed`` (the user said
    so: ``--runtime deepspeed``, ``--deepspeed-version``) makes any JSON mapping without an
    accelerate key a DeepSpeed JSON. An accelerate config is recognised only when its top-level
    keys say so; a mapping of no known kind is ``unknown`` (validate still reads it as an
    accelerate config: the user asked for it).
    """
    fmt = text_format(text, path)
    if fmt in ("env", "cli", "kwargs"):
        return Recognition(_script_kind(fmt, text), fmt)
    if doc is None or doc.format != fmt:
        try:
            doc = load_text(text, path or "<text>", fmt)  # type: ignore[arg-type]
        except InputError:
            doc = None
    if doc is None:
        return Recognition(_unparsed_kind(fmt, text), fmt)
    return Recognition(mapping_kind(doc.data, fmt, assume_deepspeed=assume_deepspeed), fmt)


def text_format(text: str, path: str = "") -> str:
    """The reader of a text: ``yaml``, ``json``, ``env``, ``cli`` or ``kwargs``; the file suffix
    first, then the content."""
    # "-", "<stdin>" and "<text>" have no suffix; splitext gives a dotfile such as ".env" none either
    suffix = os.path.splitext(path)[1].lower()
    if suffix in FILE_SUFFIXES:
        return FILE_SUFFIXES[suffix]
    if suffix in SCRIPT_SUFFIXES:
        return SCRIPT_SUFFIXES[suffix]
    if suffix == ENV_SUFFIX or os.path.basename(path).lower().endswith(ENV_SUFFIX):
        return "env"
    lines = [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.strip().startswith("#")]
    if not lines:
        return "yaml"
    if lines[0].startswith(("accelerate ", "accelerate-launch", "--")):
        return "cli"
    if looks_like_json(lines[0]):
        return "json"
    if any(tok in ln for ln in lines for tok in _PY_TOKENS):  # not in a comment
        return "kwargs"
    if all(_ENV_LINE.match(ln) for ln in lines) and not _launch().search(text):  # not `NCCL_DEBUG=INFO torchrun ...`
        return "env"
    if _is_yaml_mapping(text):
        return "yaml"
    if _launch().search(text):
        return "cli"
    return "kwargs" if _PY_LINE.search(text) else "yaml"


def _is_yaml_mapping(text: str) -> bool:
    try:
        return isinstance(load_text(text, "<text>", "yaml").data, dict)
    except InputError:
        return False


def _script_kind(fmt: str, text: str) -> str:
    if fmt == "env":
        return "env"
    if fmt == "cli":
        launches = [m.group(1) for m in _launch().finditer(text)]
        plain = not launches and text.lstrip().startswith(("accelerate", "--"))
        return "launch" if plain or any("accelerate" in c for c in launches) else "other-launch"
    return "python" if any(tok in text for tok in _PY_TOKENS) else "other-python"


def _unparsed_kind(fmt: str, text: str) -> str:
    """Text that does not parse (an editor buffer being typed, a template with placeholders)."""
    if fmt == "json":
        if is_deepspeed_text(text):
            return "deepspeed"
        keys = [m.group(0).split('"')[1] for m in _ACCELERATE_TEXT.finditer(text)]
    else:
        keys = [m.group(2) for m in _YAML_TOP_KEY.finditer(text)]
    return "accelerate" if is_accelerate_keys(keys) else "unknown"


def mapping_kind(data: Any, fmt: str = "yaml", *, assume_deepspeed: bool = False) -> str:
    """The kind of loaded YAML/JSON data (see :func:`recognise`)."""
    if not isinstance(data, dict) or not data:
        return "unknown"
    keys = [str(k) for k in data]
    if fmt == "json" and assume_deepspeed and is_deepspeed_data(data, assume=True):
        return "deepspeed"  # the user said so, and no accelerate key says otherwise
    other = _other_kind(data, keys)
    if other == "gpt-neox":  # its inline DeepSpeed keys would make it look like a DeepSpeed JSON
        return other
    if fmt == "json" and is_deepspeed_data(data):
        return "deepspeed"
    if other is not None:
        return other
    return "accelerate" if is_accelerate_keys(keys) else "unknown"


def _other_kind(data: dict[Any, Any], keys: list[str]) -> str | None:
    """A file that holds distributed settings but is not an accelerate config, or ``None``."""
    if any(k in data for k in IDENTITY_KEYS):
        return None
    for kind, markers in (
        ("gpt-neox", GPT_NEOX_KEYS),
        ("llama-factory", LLAMA_FACTORY_KEYS),
        ("axolotl", AXOLOTL_KEYS),
    ):
        if sum(1 for k in keys if k in markers) >= 2:
            return kind
    if "train_batch_size" in data and sum(1 for k in keys if k in SCRIPT_ARG_KEYS) >= 2:
        return "script-args"
    if _is_trainer_args(keys) or any(
        isinstance(v, dict) and _is_trainer_args([str(k) for k in v]) for v in data.values()
    ):
        return "trainer-args"
    if all(k.removeprefix("fsdp_") in fsdp_config_keys() for k in keys):
        return "fsdp-config"
    if _only_trainer_fields(keys):
        return "trainer-args"
    return None


def _is_trainer_args(keys: list[str]) -> bool:
    """Mostly ``TrainingArguments`` fields: at least two that accelerate does not share, and more of
    them than keys only accelerate has."""
    from accelconf.trainer import releases as trainer_releases

    names = trainer_releases.all_field_names()
    trainer = sum(1 for k in keys if k in names and not _accelerate_top(k))
    accelerate = sum(1 for k in keys if _accelerate_top(k) and k not in names)
    return trainer >= 2 and trainer > accelerate


def _only_trainer_fields(keys: list[str]) -> bool:
    """A short arguments file (only ``output_dir``, say): every key a field of one release's
    ``TrainingArguments`` and one at least that accelerate does not share (a lone ``debug`` stays
    unknown). Asked after the fsdp_config test: a JSON of only ``fsdp_config`` keys stays one."""
    from accelconf.trainer import releases as trainer_releases

    return any(not _accelerate_top(k) for k in keys) and trainer_releases.one_release_has_all(frozenset(keys))


def _accelerate_top(key: str) -> bool:
    return key in registry.SECTIONS or registry.lookup("", key)[0] is not None


def is_accelerate_keys(keys: list[str]) -> bool:
    """Top-level keys of an accelerate config: at least one of :data:`ACCELERATE_MARKERS`, and mostly
    keys accelerate knows (a ``distributed_type`` among a training script's own keys is not one)."""
    if not keys or not any(k in ACCELERATE_MARKERS for k in keys):
        return False
    return sum(1 for k in keys if _accelerate_top(k)) * 2 >= len(keys)


def _accelerate_key(name: Any, value: Any) -> bool:
    """A top-level key of an accelerate config (the settings registry); ``fp16`` only as accelerate's
    legacy boolean, since a DeepSpeed config has an ``fp16`` block."""
    if name in ACCELERATE_MARKERS:
        return True
    return registry.get("", name) is not None and not (name in _deepspeed_top() and isinstance(value, dict))


def _deepspeed_top() -> dict[str, Any]:
    # Imported when a mapping is judged: the DeepSpeed package costs the converters' start-up time
    # (to-env reads an env file and never needs it).
    from accelconf.deepspeed.keys import TOP

    return TOP.children or {}


def is_deepspeed_data(data: Any, *, assume: bool = False) -> bool:
    """Whether loaded data is a DeepSpeed config rather than an accelerate config (by content, not by name).

    A mapping is a DeepSpeed config when it has no accelerate key and either ``zero_optimization``, a
    batch key among mostly DeepSpeed keys (Hugging Face Trainer's ``trainer_state.json`` has a
    ``train_batch_size`` among a dozen keys of its own), an fp16/bf16 block, or only DeepSpeed's
    top-level keys (``{"elasticity": {...}}``). ``assume`` (the user said so: ``--runtime deepspeed``,
    ``--deepspeed-version``) makes any mapping without an accelerate key one.
    """
    if not isinstance(data, dict) or not data:
        return False
    if any(_accelerate_key(k, v) for k, v in data.items()):
        return False
    if assume or "zero_optimization" in data:
        return True
    if any(isinstance(data.get(k), dict) and "enabled" in data[k] for k in ("fp16", "bf16")):
        return True
    from accelconf.deepspeed.keys import TOP, _child

    top = _deepspeed_top()
    known = sum(1 for k in data if _child(TOP, k)[1] is not None)
    if any(k in data for k in _DS_STRONG) and known * 2 >= len(data):
        return True
    hits = [k for k in _DS_MARKERS if k in data]
    return (len(hits) >= 2 and known * 2 >= len(data)) or (known == len(data) and all(k in top for k in data))


def is_deepspeed(doc: Document, *, assume: bool = False) -> bool:
    """Whether a document is a DeepSpeed config: :func:`is_deepspeed_data` of its data."""
    return is_deepspeed_data(doc.data, assume=assume)


def is_deepspeed_text(text: str) -> bool:
    """For JSON text that does not parse (an editor buffer being typed): a DeepSpeed key that only a
    DeepSpeed config has, and no accelerate key."""
    return bool(_DS_STRONG_TEXT.search(text)) and not _ACCELERATE_TEXT.search(text)


__all__ = [
    "ACCELERATE_MARKERS",
    "CHECKED",
    "LABELS",
    "Recognition",
    "is_accelerate_keys",
    "is_deepspeed",
    "is_deepspeed_data",
    "is_deepspeed_text",
    "mapping_kind",
    "recognise",
    "text_format",
]
