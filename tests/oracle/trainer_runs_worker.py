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
import time
from typing import Any

os.environ.update(
    RANK="0",
    WORLD_SIZE="1",
    LOCAL_RANK="0",
    LOCAL_WORLD_SIZE="1",
    MASTER_ADDR="127.0.0.1",
    MASTER_PORT=os.environ.get("ORACLE_PORT", "29561"),
    DS_ACCELERATOR="cpu",
    HF_HUB_OFFLINE="1",  # an older release asks the hub at Trainer init and waits out its retries offline
    TRANSFORMERS_NO_ADVISORY_WARNINGS="1",
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


class _StandInAccelerator:
    """What ``create_accelerator_and_postprocess`` reads of the ``Accelerator`` it builds, for a CPU
    process where a real one refuses FSDP ("only works in distributed training"): the FSDP plugin
    it is given, else the one ``Accelerator()`` builds from ``ACCELERATE_USE_FSDP`` and the
    ``FSDP_*`` variables (what transformers 4 writes), and the DeepSpeed plugin it is given."""

    def __init__(self, **kwargs: Any) -> None:
        from types import SimpleNamespace

        from accelerate.utils import FullyShardedDataParallelPlugin

        plugin = kwargs.get("fsdp_plugin")
        if plugin is None and os.environ.get("ACCELERATE_USE_FSDP", "false").lower() == "true":
            plugin = FullyShardedDataParallelPlugin()
        self.state = SimpleNamespace(fsdp_plugin=plugin, deepspeed_plugin=kwargs.get("deepspeed_plugin"))
        self.gradient_accumulation_steps = 1

    def gather_for_metrics(self, data: Any, use_gather_object: bool = False) -> Any:
        return data


def init_case(case: dict[str, Any], out_dir: str) -> dict[str, Any]:
    """Construction, then the release's own ``Trainer.create_accelerator_and_postprocess`` with the
    stand-in Accelerator: the FSDP plugin fields after the Trainer's own post-processing."""
    import transformers.trainer as tt

    try:
        a = _args(case, out_dir)
    except Exception as exc:  # noqa: BLE001 - the stage and message are the result
        return {"raises": "construction", "error": f"{type(exc).__name__}: {exc}"}
    mp = getattr(a, "mixed_precision", None) or os.environ.get("ACCELERATE_MIXED_PRECISION", "no")
    res: dict[str, Any] = {"mixed_precision": mp, "plugin_args": getattr(a, "fsdp_plugin_args", None)}
    trainer = tt.Trainer.__new__(tt.Trainer)
    trainer.args, trainer.model = a, _model()
    real = tt.Accelerator
    tt.Accelerator = _StandInAccelerator
    try:
        tt.Trainer.create_accelerator_and_postprocess(trainer)
    except (AttributeError, TypeError) as exc:
        return {"harness": f"{type(exc).__name__}: {exc}"}  # the stand-in lacks what this release reads
    except Exception as exc:  # noqa: BLE001
        return {**res, "raises": "Trainer init", "error": f"{type(exc).__name__}: {exc}"}
    finally:
        tt.Accelerator = real
    plugin = trainer.accelerator.state.fsdp_plugin
    res["fsdp"] = plugin is not None
    if plugin is not None:
        res["fields"] = plugin_fields(plugin)
    return res


RUNNERS = {"deepspeed": "ds_case", "init": "init_case", "fsdp": "fsdp_case"}


def main() -> None:
    sys.path[:0] = sys.argv[2:]  # a transformers release's own directory, then its dependencies
    _patch()
    cases = json.load(sys.stdin)
    results = []
    with tempfile.TemporaryDirectory() as out_dir:
        for case in cases:
            os.environ.clear()
            os.environ.update(BASE_ENV)
            os.environ.update(case.get("env", {}))
            run = globals()[RUNNERS[case.get("kind", "fsdp")]]
            start = time.monotonic()
            results.append(run(case, out_dir))
            if os.environ.get("ORACLE_TIMES"):
                print(
                    f"{time.monotonic() - start:.1f}s {case.get('kind')} {json.dumps(case['args'])[:80]}",
                    file=sys.stderr,
                )
    with open(sys.argv[1], "w", encoding="utf-8") as fh:  # stdout carries DeepSpeed's own messages
        json.dump(results, fh, default=str)


if __name__ == "__main__":
    main()
