"""The model options of ``check`` and ``fit`` (``--params``/``--model``, the shapes, LoRA), read in one place.

This module owns :func:`add_memory_options` (the option group), :func:`model_size` (the model they
name, checked with the options that need it) and :func:`adapter_of_args` (the LoRA/QLoRA adapter).
It imports nothing at module level beyond argparse, so ``accelconf fit`` starts without what
``check`` needs to probe a machine.
"""

from __future__ import annotations

import argparse
from typing import Any


def add_memory_options(p: argparse.ArgumentParser) -> None:
    """The "will it fit?" option group of ``check`` and ``fit``."""
    from accelconf.environment.activations import ATTN_CHOICES

    m = p.add_argument_group("will it fit? (memory per GPU; with --params or --model)")
    m.add_argument("--params", metavar="N", help="the model's parameter count: 8B, 70e9, 350M")
    m.add_argument(
        "--model",
        metavar="DIR|NAME",
        help="a local Hugging Face model folder (safetensors index or "
        "headers, else config.json), or a well-known model's name (Llama-3.1-8B, Qwen/Qwen2.5-7B: "
        "accelconf's bundled config.json table; a folder wins); nothing is downloaded",
    )
    m.add_argument(
        "--largest-layer", metavar="N", help="with --params: the largest layer's parameters (default: 1/32 of --params)"
    )
    m.add_argument("--seq-len", type=int, metavar="S", help="sequence length, for activations (with --micro-batch)")
    m.add_argument("--micro-batch", type=int, metavar="B", help="micro batch per GPU, for activations")
    m.add_argument(
        "--attn",
        choices=ATTN_CHOICES,
        help="the attention kernel, for activations "
        "(default: the config.json's attn_implementation, else sdpa as transformers picks)",
    )
    from accelconf.environment.lora import QUANT_CHOICES

    m.add_argument(
        "--lora-rank",
        type=int,
        metavar="R",
        help="LoRA: train rank-R adapters on a frozen base (no gradients or optimizer state for it); needs --model",
    )
    m.add_argument(
        "--lora-targets",
        metavar="NAMES",
        help="with --lora-rank: comma-separated module names "
        "(default: every attention and MLP projection of the family, as peft's all-linear)",
    )
    m.add_argument(
        "--quant",
        choices=QUANT_CHOICES,
        help="with --lora-rank: QLoRA, the base in NF4 (4bit, double "
        "quantisation) or LLM.int8 (8bit), as bitsandbytes stores it",
    )
    m.add_argument(
        "--host-ram",
        type=float,
        metavar="GIB",
        help="host RAM per node in GiB (default: this machine's when checking against it, else unknown)",
    )


def model_size(args: argparse.Namespace) -> Any:
    """The model of --params/--model (with --attn), checked with the options that need it; ``None``
    without either. Raises ``UsageError`` on a bad combination."""
    from accelconf.environment import modelsize
    from accelconf.errors import UsageError

    if getattr(args, "params", None) is None and getattr(args, "model", None) is None:
        for flag in (
            "seq_len",
            "micro_batch",
            "largest_layer",
            "host_ram",
            "attn",
            "lora_rank",
            "lora_targets",
            "quant",
        ):
            if getattr(args, flag, None) is not None:
                raise UsageError(f"--{flag.replace('_', '-')} needs --params or --model")
        return None
    if args.params is not None and args.model is not None:
        raise UsageError("give --params or --model, not both")
    for flag in ("seq_len", "micro_batch"):
        v = getattr(args, flag)
        if v is not None and v < 1:
            raise UsageError(f"--{flag.replace('_', '-')} must be 1 or more")
    if (args.seq_len is None) != (args.micro_batch is None):
        raise UsageError("activations need both --seq-len and --micro-batch")
    if args.host_ram is not None and args.host_ram <= 0:
        raise UsageError("--host-ram must be a positive number of GiB")
    size = modelsize.resolve(args.model) if args.model else modelsize.from_count(args.params, args.largest_layer)
    return modelsize.with_attention(size, getattr(args, "attn", None))


def adapter_of_args(args: argparse.Namespace) -> Any:
    """The LoRA/QLoRA adapter of --lora-rank/--lora-targets/--quant, or ``None``."""
    from accelconf.environment.lora import adapter_of

    return adapter_of(
        getattr(args, "lora_rank", None), getattr(args, "lora_targets", None), getattr(args, "quant", None)
    )
