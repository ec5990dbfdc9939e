"""Rules about Hugging Face Trainer / TRL arguments (:mod:`accelconf.trainer`): what transformers refuses,
when (``TrainingArguments`` construction, ``Trainer`` init, ``train()``), and what it silently overrides."""

from __future__ import annotations

from accelconf.catalogue import Example, Rule


def T(rule_id: str, severity: str, summary: str, why: str, *examples: Example) -> Rule:
    return Rule(rule_id, "trainer", severity, summary, why, examples=examples)  # type: ignore[arg-type]


_ARGS = "per_device_train_batch_size: 8\ngradient_accumulation_steps: 2\nbf16: true\n"

RULES: tuple[Rule, ...] = (
    T(
        "trainer-unknown-field",
        "error",
        "A field TrainingArguments (or the TRL config class) does not have",
        "HfArgumentParser refuses an arguments file with keys no dataclass takes (ValueError) before training starts.",
        Example(
            "learning_rat: 1.0e-4\n" + _ARGS,
            "learning_rate: 1.0e-4\n" + _ARGS,
            "misspelled field",
            "error",
            file="train_args.yaml",
        ),
    ),
    T(
        "trainer-removed-field",
        "error",
        "A field the given transformers release no longer has (named with the release, and with the field to use "
        "instead where transformers' deprecation message names one)",
        "Removed fields (evaluation_strategy, warmup_ratio...) are refused like unknown ones. The replacement is the "
        "one the last release with the field named in its deprecation warning (evaluation_strategy -> eval_strategy, "
        "no_cuda -> use_cpu), read from that release's training_args.py.",
        Example(
            "evaluation_strategy: steps\n" + _ARGS,
            "eval_strategy: steps\n" + _ARGS,
            "renamed in transformers 4.51",
            "error",
            file="train_args.yaml",
        ),
    ),
    T(
        "trainer-other-fields",
        "info",
        "Fields of another dataclass of the script (model or data arguments)",
        "HfArgumentParser hands them to the script's own dataclasses; accelconf does not model those.",
    ),
    T(
        "trainer-wrong-type",
        "warning",
        "A value of the wrong type for its field (a YAML 5e-5 is a string; bf16: auto)",
        "parse_yaml_file passes values unconverted: a string learning rate fails in the optimizer at train().",
        Example(
            "learning_rate: 5e-5\n" + _ARGS,
            "learning_rate: 5.0e-5\n" + _ARGS,
            "YAML 1.1 exponent without a dot",
            "warning",
            file="train_args.yaml",
        ),
    ),
    T(
        "trainer-mixed-precision",
        "warning",
        "ACCELERATE_MIXED_PRECISION or --mixed_precision against bf16/fp16",
        "The Trainer sets the Accelerator's precision from its own arguments; a different launcher value raises at "
        "Trainer init or is overridden.",
    ),
    T(
        "trainer-accumulation-twice",
        "error",
        "Gradient accumulation set in the arguments and in the launcher or DeepSpeed",
        "The Trainer's value is what it steps with; a different DeepSpeed value raises in train(), an env value is "
        "ignored.",
    ),
    T(
        "trainer-checkpointing-alias",
        "warning",
        "The deprecated activation-checkpointing alias of gradient_checkpointing",
        "transformers maps it to gradient_checkpointing with a warning.",
    ),
    T(
        "trainer-zero3-auto-batch",
        "error",
        "ZeRO-3 with auto_find_batch_size",
        "transformers refuses to shrink the batch under ZeRO-3 (the engine is built once).",
    ),
    T(
        "trainer-save-only-model",
        "error",
        "save_only_model with a sharded state dict or load_best_model_at_end",
        "TrainingArguments/Trainer init refuses the combination: the checkpoint could not be resumed or reloaded.",
    ),
    T(
        "trainer-fsdp-option",
        "error",
        "An fsdp option string transformers does not know",
        "TrainingArguments construction raises on an unknown FSDP option.",
    ),
    T(
        "trainer-fsdp-option-conflict",
        "warning",
        "fsdp options that contradict each other (full_shard with shard_grad_op)",
        "The first strategy wins silently.",
    ),
    T(
        "trainer-fsdp-invalid-value",
        "error",
        "An fsdp_config value outside what transformers or accelerate accept",
        "The FSDP plugin refuses it at Trainer init (state_dict_type, wrap policy, truth values...).",
    ),
    T(
        "trainer-fsdp-unknown-key",
        "warning",
        "An fsdp_config key transformers never reads",
        "Unknown keys of fsdp_config are ignored silently.",
    ),
    T(
        "trainer-fsdp-version-key",
        "warning",
        "An FSDP1-only key under FSDP2, or the reverse",
        "Without fsdp_version transformers 5 runs FSDP2, and keys such as use_orig_params or backward_prefetch are "
        "ignored.",
    ),
    T(
        "trainer-fsdp-accelerate-name",
        "warning",
        "accelerate's key name where transformers reads another one",
        "fsdp_offload_params / offload_params are never read: transformers reads cpu_offload, so offload is silently "
        "off.",
        Example(
            "fsdp: full_shard auto_wrap\nfsdp_config:\n  fsdp_offload_params: true\nper_device_train_batch_size: 8\n",
            "fsdp: full_shard auto_wrap offload\nper_device_train_batch_size: 8\n",
            "accelerate's offload key",
            "warning",
            file="sft.yaml",
        ),
    ),
    T(
        "trainer-fsdp-prefix-collision",
        "warning",
        "A key given with and without the fsdp_ prefix",
        "transformers drops the prefix; one of the two values is lost.",
    ),
    T(
        "trainer-fsdp-accelerate-config",
        "warning",
        "A whole accelerate config given as fsdp_config",
        "Its keys are accelerate's, not the Trainer's: it configures nothing.",
    ),
    T(
        "trainer-fsdp-wrap-conflict",
        "warning",
        "min_num_params together with a transformer layer class",
        "min_num_params is silently ignored under the transformer-based wrap policy.",
    ),
    T(
        "trainer-fsdp-sync-states",
        "warning",
        "sync_module_states false with cpu_ram_efficient_loading",
        "Under FSDP1 accelerate forces it to true with a warning; the other ranks would hold no weights.",
    ),
    T(
        "trainer-fsdp-checkpointing",
        "error",
        "FSDP activation_checkpointing together with gradient_checkpointing",
        "The Trainer raises at init: checkpointing would be applied twice.",
    ),
    T(
        "trainer-fsdp-config-unused",
        "warning",
        "An fsdp_config without fsdp (or under DeepSpeed)",
        "Without an fsdp option the Trainer builds no FSDP plugin and ignores fsdp_config.",
    ),
    T(
        "trainer-fsdp-config-file",
        "error",
        "An fsdp_config file that cannot be read as transformers reads it",
        "transformers json.load()s the file at construction: a YAML file or a broken path raises.",
    ),
    T(
        "trainer-framework-keys",
        "info",
        "A LLaMA-Factory or axolotl YAML: its own keys are named, not checked",
        "Only its TrainingArguments fields and the files it references are checked.",
    ),
    T(
        "trainer-deepspeed-mismatch",
        "error",
        "A DeepSpeed JSON value that contradicts the Trainer arguments",
        "transformers' DeepSpeed integration compares them and raises (in train(), or at Trainer init for precision).",
    ),
    T(
        "trainer-raises",
        "error",
        "A combination transformers refuses, at the stage named",
        "Found by what the Trainer would build (explain): construction, Trainer init or train().",
    ),
    T(
        "trainer-reference",
        "warning",
        "A file the arguments name (deepspeed, fsdp_config) is not found",
        "transformers opens it at construction; accelconf cannot say what runs without it.",
    ),
    T(
        "trainer-convert",
        "warning",
        "A Trainer setting a conversion cannot carry",
        "to-yaml, to-args and to-cli name what the other side has no place for, instead of dropping it.",
    ),
)
