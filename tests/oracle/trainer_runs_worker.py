"""Runs transformers' own ``TrainingArguments``/``Trainer`` on CPU for a list of cases (JSON on stdin)
and writes what the Accelerator was built with (JSON, to the file named by its argument), for
``tests/oracle/test_trainer_runs_oracle.py``.

Each case: ``{"args": {...}, "env": {...}, "steps": N}``. ``fsdp`` cases build the plugin the Trainer
builds (``FullyShardedDataParallelPlugin(**args.fsdp_plugin_args)``); ``deepspeed`` cases build a
Trainer with a tiny random Llama (hidden size 64) and read the accelerator state, then run
``trainer_config_finalize`` as ``train()`` does.

CPU stand-ins, and why: ``TrainingArguments`` refuses bf16 without a bf16 GPU, so the check is made
to pass; an FSDP1 plugin with ``sync_module_states`` asks for the current CUDA device to build its
``param_init_fn``, so device 0 is reported. Neither changes a value compared.
"""

from __future__ import annotations

import copy
import json
import os
import sys
import tempfile
from typing import Any

os.environ.update(
    RANK="0",
    WORLD_SIZE="1",
    LOCAL_RANK="0",
    LOCAL_WORLD_SIZE="1",
    MASTER_ADDR="127.0.0.1",
    MASTER_PORT=os.environ.get("ORACLE_PORT", "29561"),
    DS_ACCELERATOR="cpu",
)
BASE_ENV = dict(os.environ)


def _patch() -> None:
    import accelerate.utils.dataclasses as adc
    import torch
    import transformers.training_args as ta

    ta.is_torch_bf16_gpu_available = lambda: True
    adc.is_cuda_available = lambda: True
    torch.cuda.current_device = lambda: 0


def _name(value: Any) -> Any:
    import enum

    if isinstance(value, enum.Enum):
        return value.name
    return value


def plugin_fields(p: Any) -> dict[str, Any]:
    from torch.distributed.fsdp.wrap import (
        size_based_auto_wrap_policy,
        transformer_auto_wrap_policy,
    )

    policy = {
        transformer_auto_wrap_policy: "TRANSFORMER_BASED_WRAP",
        size_based_auto_wrap_policy: "SIZE_BASED_WRAP",
        None: "NO_WRAP",
    }.get(p.auto_wrap_policy, repr(p.auto_wrap_policy))
    offload = p.cpu_offload
    offload = getattr(offload, "offload_params", type(offload).__name__ == "CPUOffloadPolicy")
    out = {
        k: _name(getattr(p, k))
        for k in (
            "fsdp_version",
            "sharding_strategy",
            "reshard_after_forward",
            "backward_prefetch",
            "state_dict_type",
            "transformer_cls_names_to_wrap",
            "min_num_params",
            "use_orig_params",
            "sync_module_states",
            "forward_prefetch",
            "activation_checkpointing",
            "activation_checkpointing_offload",
            "ignored_modules",
            "cpu_ram_efficient_loading",
            "limit_all_gathers",
        )
    }
    out.update(auto_wrap_policy=policy, cpu_offload=bool(offload))
    return out


def _args(case: dict[str, Any], out_dir: str) -> Any:
    from transformers import TrainingArguments

    return TrainingArguments(output_dir=out_dir, report_to=[], **case["args"])


def fsdp_case(case: dict[str, Any], out_dir: str) -> dict[str, Any]:
    from accelerate.utils import FullyShardedDataParallelPlugin

    try:
        a = _args(case, out_dir)
    except Exception as exc:  # noqa: BLE001 - the stage and message are the result
        return {"raises": "construction", "error": f"{type(exc).__name__}: {exc}"}
    res: dict[str, Any] = {"mixed_precision": a.mixed_precision, "plugin_args": a.fsdp_plugin_args}
    if a.fsdp_plugin_args is None:
        return res
    try:
        res["fields"] = plugin_fields(FullyShardedDataParallelPlugin(**a.fsdp_plugin_args))
    except Exception as exc:  # noqa: BLE001
        res.update(raises="Trainer init", error=f"{type(exc).__name__}: {exc}")
    return res


_MODEL: list[Any] = []


def _model() -> Any:
    if not _MODEL:
        import torch
        from transformers import LlamaConfig, LlamaForCausalLM

        torch.manual_seed(0)
        _MODEL.append(
            LlamaForCausalLM(
                LlamaConfig(
                    num_hidden_layers=2,
                    hidden_size=64,
                    intermediate_size=128,
                    num_attention_heads=4,
                    num_key_value_heads=4,
                    vocab_size=128,
                )
            )
        )
    return _MODEL[0]


def _jsonable(data: Any) -> Any:
    return json.loads(json.dumps(data, default=str).replace("Infinity", '"Infinity"'))


def ds_case(case: dict[str, Any], out_dir: str) -> dict[str, Any]:
    from accelerate.state import AcceleratorState
    from transformers import Trainer

    AcceleratorState._reset_state(True)
    try:
        a = _args(case, out_dir)
    except Exception as exc:  # noqa: BLE001
        return {"raises": "construction", "error": f"{type(exc).__name__}: {exc}"}
    try:
        t = Trainer(model=_model(), args=a)
    except Exception as exc:  # noqa: BLE001
        return {"raises": "Trainer init", "error": f"{type(exc).__name__}: {exc}"}
    state = t.accelerator.state
    hf = state.deepspeed_plugin.hf_ds_config
    res: dict[str, Any] = {
        "mixed_precision": state.mixed_precision,
        "accelerator_ga": t.accelerator.gradient_accumulation_steps,
        "trainer_ga": a.gradient_accumulation_steps,
        "init_config": _jsonable(hf.config),
    }
    later = copy.deepcopy(hf)
    try:
        later.trainer_config_finalize(a, t.model, case["steps"])
        res["train_config"] = _jsonable(later.config)
    except ValueError as exc:
        res.update(raises="train()", error=str(exc))
    return res


def main() -> None:
    _patch()
    cases = json.load(sys.stdin)
    results = []
    with tempfile.TemporaryDirectory() as out_dir:
        for case in cases:
            os.environ.clear()
            os.environ.update(BASE_ENV)
            os.environ.update(case.get("env", {}))
            run = ds_case if case.get("kind") == "deepspeed" else fsdp_case
            results.append(run(case, out_dir))
    with open(sys.argv[1], "w", encoding="utf-8") as fh:  # stdout carries DeepSpeed's own messages
        json.dump(results, fh, default=str)


if __name__ == "__main__":
    main()
