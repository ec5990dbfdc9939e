"""``accelconf fit``: every strategy accelconf models for one model on one machine, and the cheapest that fits.

The command reads the model as ``check`` does (``--params``, ``--model``; the same options), the
machine from ``--gpu``/``--gpus``/``--nodes`` or a ``--target`` profile, and prints the table of
:func:`accelconf.environment.fit.table` (text, with a bar per strategy on a TTY, or ``--format
json``). ``--write-config PATH`` writes the cheapest row that fits as an accelerate config (atomic
write). Exit codes: 0 something fits, 1 nothing fits, 2 bad input.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any


def add_parser(subparsers: Any, name: str, help_text: str) -> argparse.ArgumentParser:
    from accelconf.commands import help_texts
    from accelconf.commands.model_options import add_memory_options

    p: argparse.ArgumentParser = subparsers.add_parser(
        name,
        help=help_text,
        **help_texts(
            """Estimate every strategy accelconf models (DDP, DeepSpeed ZeRO 1-3 with and without CPU
        offload, the FSDP1 sharding strategies, FSDP2 with and without resharding, each with and without
        activation checkpointing) for one model on one machine: the peak memory per GPU of the training
        step, host RAM per node, the verdict (fits under 80% of the GPU, tight 80-100%, does not fit over
        100%) and the relative communication cost (parameters sent per rank per step, relative to DDP's
        all-reduce, as the ZeRO and FSDP papers count them). The cheapest row that fits avoids offload
        first, then recomputation, then communication.""",
            [
                (
                    "accelconf fit --model ./Qwen2-7B --gpus 8 --gpu H100-80GB --seq-len 4096 --micro-batch 2",
                    "the table for a local model folder, with activations",
                ),
                ("accelconf fit --params 70B --gpus 8 --gpu H100-80GB --nodes 2 --host-ram 2048", "model states only"),
                (
                    "accelconf fit --model ./Llama-3.1-8B --target h100-node --write-config fit.yaml",
                    "write the cheapest strategy that fits as an accelerate config",
                ),
                (
                    "accelconf fit --model Llama-3.1-8B --lora-rank 16 --quant 4bit --gpus 1 --gpu A10G",
                    "QLoRA on one 24 GB GPU, a well-known model by name",
                ),
                ("accelconf fit --params 8B --gpus 8 --gpu A100-80GB --format json", "for scripts"),
            ],
            "0 something fits, 1 nothing fits, 2 bad input (an unknown GPU or profile, a model folder that "
            "cannot be read, a bad option)",
        ),
    )
    t = p.add_argument_group("machine")
    t.add_argument("--gpus", type=int, metavar="N", help="GPUs per node (default: the profile's, else 1)")
    t.add_argument("--gpu", metavar="MODEL", help="GPU model, e.g. H100-80GB, A100-40GB (as check --gpu)")
    t.add_argument("--nodes", "--num-machines", dest="nodes", type=int, metavar="N", help="nodes (default: 1)")
    t.add_argument("--target", metavar="NAME|FILE", help="a machine profile (as check --target)")
    t.add_argument(
        "--mixed-precision",
        choices=("bf16", "fp16", "no"),
        help="the precision of every row (default: bf16 where the GPU has it, else fp16)",
    )
    add_memory_options(p)
    p.add_argument(
        "--write-config",
        metavar="PATH",
        help="write the cheapest strategy that fits as an accelerate "
        "config YAML (atomically); nothing is written when nothing fits",
    )
    p.add_argument("--format", choices=("text", "json"), default="text", help="output format (default: text)")
    p.add_argument(
        "--color",
        choices=("auto", "always", "never"),
        default="auto",
        help="bars per strategy (default: only on a TTY)",
    )
    p.set_defaults(func=run)
    return p


def _machine(args: argparse.Namespace) -> tuple[Any, dict[str, Any]]:
    """The environment and :func:`accelconf.environment.memory.machine_of`'s facts. Raises
    ``UsageError`` when no GPU memory is known."""
    from accelconf.environment import memory
    from accelconf.environment.probe import Environment
    from accelconf.environment.targets import ALL_FACTS, load_target, target_from_args
    from accelconf.errors import UsageError

    for flag in ("gpus", "nodes"):
        v = getattr(args, flag)
        if v is not None and v < 1:
            raise UsageError(f"--{flag} must be 1 or more")
    base = load_target(args.target) if args.target else Environment(source="arguments", unknown=ALL_FACTS)
    env = (
        target_from_args(args.gpus, args.gpu, None, None, None, args.nodes, base=base)
        if (args.gpus, args.gpu, args.nodes) != (None, None, None)
        else base
    )
    facts = memory.machine_of(env, args.host_ram)
    if not facts["gpu_memory_gib"]:
        raise UsageError("fit needs the GPU model: --gpu MODEL (with --gpus N), or --target PROFILE")
    return env, facts


def fit_table(args: argparse.Namespace) -> Any:
    """The :class:`~accelconf.environment.fit.FitTable` the options describe."""
    from accelconf.commands.model_options import adapter_of_args, model_size
    from accelconf.errors import UsageError

    size = model_size(args)
    if size is None:
        raise UsageError("fit needs the model: --model DIR|NAME or --params N")
    adapter = adapter_of_args(args)
    _, facts = _machine(args)
    from accelconf.environment.fit import for_model

    return for_model(
        size,
        gpu=facts["gpu_name"],
        gpu_memory_gib=facts["gpu_memory_gib"],
        gpus=facts["gpus_per_node"] or 1,
        nodes=facts["nodes"] or 1,
        seq_len=args.seq_len,
        micro_batch=args.micro_batch,
        host_ram_gib=facts["host_ram_gib"],
        mixed_precision=args.mixed_precision or ("bf16" if facts["bf16_ok"] else "fp16"),
        lora_rank=adapter.rank if adapter else None,
        lora_targets=adapter.targets if adapter else None,
        quant=adapter.quant if adapter else None,
    )


def write_config(path: str, t: Any) -> str | None:
    """Write the cheapest row that fits to ``path``; a message naming what was written, or ``None``."""
    from accelconf.atomic import write_atomic
    from accelconf.environment import fit
    from accelconf.errors import UsageError

    best = t.cheapest
    if best is None:
        return None
    try:
        write_atomic(path, fit.config_text(best.strategy, t.layout).encode())
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None
    note = fit.checkpointing_note(best.strategy)
    return f"wrote {path}: {best.label()}" + (f"; {note}" if note else "")


def run(args: argparse.Namespace) -> int:
    import json

    from accelconf.environment import fit
    from accelconf.report import use_color

    t = fit_table(args)
    written = write_config(args.write_config, t) if args.write_config else None
    if args.format == "json":
        out = t.to_json()
        if args.write_config:
            out["written"] = args.write_config if written else None
        sys.stdout.write(json.dumps(out, indent=1) + "\n")
    else:
        sys.stdout.write(fit.render(t, bars=use_color(sys.stdout, args.color)))
    if args.format == "text" and args.write_config:
        sys.stderr.write(f"accelconf: {written or 'nothing fits: no config written'}\n")
    return 0 if t.cheapest is not None else 1


def main(argv: Sequence[str]) -> int:
    """``accelconf fit ARGS`` as a function (for tests and benchmarks)."""
    from accelconf.cli import main as cli_main

    return cli_main(["fit", *argv])
