"""Rules of ``accelconf validate`` for DeepSpeed JSON files (:mod:`accelconf.deepspeed`)."""

from __future__ import annotations

from accelconf.catalogue import Example, Rule, Severity

Z2 = '"zero_optimization": {"stage": 2}'
MB = '"train_micro_batch_size_per_gpu": 4'


def X(
    text: str,
    fixed: str | None,
    case: str,
    severity: Severity,
    key: str = "",
    runtime: str = "deepspeed",
    deepspeed: str | None = None,
) -> Example:
    return Example(
        "{" + text + "}\n",
        None if fixed is None else "{" + fixed + "}\n",
        case,
        severity,
        key,
        file="ds_config.json",
        runtime=runtime,
        deepspeed=deepspeed,
    )


def R(id: str, severity: Severity, summary: str, why: str, *examples: Example) -> Rule:
    return Rule(id, "deepspeed", severity, summary, why, False, examples)


RULES: tuple[Rule, ...] = (
    R(
        "ds-unknown-key",
        "warning",
        "A key DeepSpeed does not know.",
        "DeepSpeed ignores unknown keys in most blocks (and refuses them in the pydantic-checked ones): "
        "the setting meant is not applied. A close known key is suggested.",
        X(
            f'{MB}, "zero_optimization": {{"stag": 2}}',
            f"{MB}, {Z2}",
            "typo in a block DeepSpeed checks strictly",
            "error",
            "zero_optimization.stag",
        ),
    ),
    R(
        "ds-type",
        "error",
        "A value of the wrong JSON type for its key.",
        "DeepSpeed's config classes refuse it (pydantic ValidationError) or read it as something else.",
        X(
            f'{MB}, "zero_optimization": {{"stage": "two"}}',
            f"{MB}, {Z2}",
            "a string where an integer is expected",
            "error",
            "zero_optimization.stage",
        ),
    ),
    R(
        "ds-enum",
        "error",
        "A value outside the key's choices.",
        "DeepSpeed raises when it reads the block.",
        X(
            f'{MB}, {Z2}, "scheduler": {{"type": "WarmupLRR"}}',
            f'{MB}, {Z2}, "scheduler": {{"type": "WarmupLR"}}',
            "unknown scheduler type",
            "error",
            "scheduler.type",
        ),
    ),
    R(
        "ds-zero-stage",
        "error",
        "A ZeRO stage other than 0, 1, 2 or 3.",
        "DeepSpeed refuses the stage when it builds the engine.",
        X(f'{MB}, "zero_optimization": {{"stage": 4}}', f"{MB}, {Z2}", "stage 4", "error", "zero_optimization.stage"),
    ),
    R(
        "ds-range",
        "error",
        "A number outside the range DeepSpeed accepts.",
        "DeepSpeed's config validation refuses it, or the engine fails on it.",
        X(
            f'{MB}, "zero_optimization": {{"stage": 2, "reduce_bucket_size": -5}}',
            f"{MB}, {Z2}",
            "negative bucket size",
            "error",
            "zero_optimization.reduce_bucket_size",
        ),
    ),
    R(
        "ds-batch",
        "error",
        "Batch sizes DeepSpeed cannot reconcile.",
        "train_batch_size = micro batch x gradient accumulation x world size, or DeepSpeed raises; "
        "one of the two batch sizes must be set.",
        X(f"{Z2}", f"{MB}, {Z2}", "no batch size", "error"),
    ),
    R(
        "ds-version",
        "warning",
        "A key or value newer than the targeted DeepSpeed release.",
        "The older release does not know it (an error when a DeepSpeed version is given).",
        X(
            f'{MB}, {Z2}, "optimizer": {{"type": "Muon"}}',
            f'{MB}, {Z2}, "optimizer": {{"type": "AdamW"}}',
            "an optimizer newer than the release",
            "error",
            "optimizer.type",
            deepspeed="0.15.0",
        ),
    ),
    R(
        "ds-removed",
        "warning",
        "A key or value the targeted DeepSpeed release removed.",
        "The release ignores or refuses it (an error when a DeepSpeed version is given).",
    ),
    R(
        "ds-deprecated",
        "warning",
        "A deprecated DeepSpeed key.",
        "DeepSpeed still reads it but warns; a newer name exists.",
        X(
            f'{MB}, "zero_optimization": {{"stage": 3, "stage3_gather_fp16_weights_on_model_save": true}}',
            f'{MB}, "zero_optimization": {{"stage": 3, "stage3_gather_16bit_weights_on_model_save": true}}',
            "the old fp16 name",
            "warning",
            "zero_optimization.stage3_gather_fp16_weights_on_model_save",
        ),
    ),
    R(
        "ds-auto",
        "info",
        'An "auto" value, and who fills it for this runtime.',
        'Only accelerate and the transformers Trainer fill "auto"; plain DeepSpeed refuses it (an error there).',
        X(
            f'"train_micro_batch_size_per_gpu": "auto", {Z2}',
            f"{MB}, {Z2}",
            "auto under plain DeepSpeed",
            "error",
            "train_micro_batch_size_per_gpu",
        ),
    ),
    R(
        "ds-alias-conflict",
        "warning",
        "A key and its old name both present.",
        "DeepSpeed reads one of them and ignores the other silently.",
        X(
            f'{MB}, {Z2}, "bf16": {{"enabled": true}}, "bfloat16": {{"enabled": true}}',
            f'{MB}, {Z2}, "bf16": {{"enabled": true}}',
            "bf16 and bfloat16",
            "warning",
            "bfloat16",
        ),
    ),
    R(
        "ds-data-types",
        "error",
        "`data_types` that conflict with the precision mode.",
        "DeepSpeed raises, or keeps gradients in another dtype than written.",
    ),
    R(
        "ds-duplicate-key",
        "error",
        "A key written twice in the JSON.",
        "DeepSpeed's own loader refuses duplicate keys; accelerate and transformers keep the last silently.",
        X(f"{MB}, {Z2}, {Z2}", f"{MB}, {Z2}", "zero_optimization twice", "error"),
    ),
    R(
        "ds-json-portability",
        "warning",
        "JSON that only DeepSpeed's hjson loader reads (comments, trailing commas).",
        "accelerate and transformers read the file with json.load and fail on it.",
        X(f"{MB}, {Z2},", f"{MB}, {Z2}", "trailing comma", "warning"),
    ),
    R(
        "ds-expert-parallel",
        "error",
        "Expert-parallel settings DeepSpeed refuses.",
        "DeepSpeed does not support auxiliary-loss load balancing there (it raises).",
        X(
            f'{MB}, {Z2}, "expert_parallel": {{"load_balance_coeff": 0.1}}',
            f"{MB}, {Z2}",
            "auxiliary-loss balancing",
            "error",
            "expert_parallel.load_balance_coeff",
        ),
    ),
    R(
        "ds-fp16-bf16",
        "error",
        "fp16 and bf16 both enabled.",
        "DeepSpeed raises: bfloat16 and fp16 modes cannot be simultaneously enabled.",
        X(
            f'{MB}, {Z2}, "fp16": {{"enabled": true}}, "bf16": {{"enabled": true}}',
            f'{MB}, {Z2}, "bf16": {{"enabled": true}}',
            "both enabled",
            "error",
        ),
    ),
    R(
        "ds-fp16-scaling",
        "error",
        "Dynamic loss-scaling parameters that are not positive.",
        "With loss_scale 0 (dynamic), DeepSpeed divides and compares with them; they must be > 0.",
    ),
    R(
        "ds-nvme-path",
        "error",
        "NVMe offload without `nvme_path`.",
        "DeepSpeed needs a directory to swap to.",
        X(
            f'{MB}, "zero_optimization": {{"stage": 3, "offload_param": {{"device": "nvme"}}}}',
            f'{MB}, "zero_optimization": {{"stage": 3, "offload_param": {{"device": "nvme", "nvme_path": '
            f'"/local_nvme"}}}}',
            "NVMe offload without a path",
            "error",
            "zero_optimization.offload_param.device",
        ),
    ),
    R(
        "ds-offload-stage",
        "warning",
        "Offload in a ZeRO stage that does not use it.",
        "Parameter offload works only with stage 3; below it DeepSpeed silently ignores it.",
        X(
            f'{MB}, "zero_optimization": {{"stage": 2, "offload_param": {{"device": "cpu"}}}}',
            f'{MB}, "zero_optimization": {{"stage": 2, "offload_optimizer": {{"device": "cpu"}}}}',
            "param offload on stage 2",
            "warning",
        ),
    ),
    R(
        "ds-optimizer",
        "error",
        "An optimizer ZeRO does not support, or its parameters wrong.",
        "deepspeed.initialize raises for an untested optimizer unless zero_allow_untested_optimizer is set.",
        X(
            f'{MB}, {Z2}, "optimizer": {{"type": "SGD"}}',
            f'{MB}, {Z2}, "optimizer": {{"type": "AdamW"}}',
            "an optimizer ZeRO has not tested",
            "error",
            "optimizer.type",
        ),
    ),
    R(
        "ds-stage-requirement",
        "error",
        "A setting that needs another setting or ZeRO stage.",
        "DeepSpeed raises at initialisation.",
        X(
            f'{MB}, {Z2}, "bf16": {{"enabled": true, "bf16_optimizer_states": true}}',
            f'{MB}, {Z2}, "bf16": {{"enabled": true}}',
            "optimizer states in bf16 without bf16 master weights",
            "error",
            "bf16.bf16_optimizer_states",
        ),
    ),
    R(
        "ds-zero-missing",
        "error",
        "No `zero_optimization` section where the runtime needs one.",
        'accelerate raises "Please specify the ZeRO optimization config in the DeepSpeed config".',
        X(MB, f"{MB}, {Z2}", "no ZeRO section under accelerate", "error", runtime="accelerate"),
    ),
    R(
        "ds-zero3-save",
        "warning",
        "ZeRO-3 without `stage3_gather_16bit_weights_on_model_save`.",
        "Saving the model then writes no consolidated weights.",
        X(
            f'{MB}, "zero_optimization": {{"stage": 3}}',
            f'{MB}, "zero_optimization": {{"stage": 3, "stage3_gather_16bit_weights_on_model_save": true}}',
            "stage 3 without the gather",
            "warning",
            runtime="transformers",
        ),
    ),
    R(
        "ds-accelerate-auto",
        "info",
        'A DeepSpeed JSON value accelerate fills ("auto" or missing), and from what.',
        "With an accelerate config referencing the JSON, accelerate fills these from its own settings.",
    ),
    R(
        "ds-accelerate-conflict",
        "error",
        "The accelerate config and the DeepSpeed JSON it references disagree.",
        "accelerate raises ValueError (or one side silently wins) when both set the same thing.",
    ),
)
