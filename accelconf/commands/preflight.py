"""``accelconf preflight CONFIG --machine-rank N``: check every node of a multi-node job before it trains.

Options are gathered here; the work is :mod:`accelconf.preflight.node` (this node's ranks) and
:mod:`accelconf.preflight.rank` (one rank). torch is imported only when the command runs.
"""

from __future__ import annotations

import argparse
from typing import Any


def add_parser(subparsers: Any, name: str, help_text: str) -> argparse.ArgumentParser:
    from accelconf.commands import help_texts
    from accelconf.preflight.layout import add_options

    p: argparse.ArgumentParser = subparsers.add_parser(
        name,
        help=help_text,
        **help_texts(
            """Run on every node of a multi-node job, before it trains. Each node registers at the
        config's main_process_ip:port and waits (--timeout) for the others; a node that waited in
        vain names the node ranks that never arrived. Then each node starts its ranks the way the
        config launches them (num_processes / num_machines per node) through torch.distributed.
        Every rank reports its host, ranks, GPUs, versions, the hashes of the config and DeepSpeed
        files it read, accelerate's default config, the ACCELERATE_*, FSDP_*, NCCL_*, MASTER_* and
        TORCH_* variables, free disk and its clock; rank 0 compares them with the config and with
        each other, runs an all_reduce on the job's backend (NCCL on GPUs, else gloo) and prints
        one report. Under the job's own launcher, run `python -m accelconf.preflight CONFIG`
        instead (`accelconf to-cli --all-ranks --preflight CONFIG` prints the commands).""",
            [
                (
                    "accelconf preflight multinode.yaml --machine-rank 0",
                    "on node 0; the same with 1, 2... on the others",
                ),
                (
                    "srun --ntasks-per-node 1 bash -c 'accelconf preflight cfg.yaml --machine-rank $SLURM_NODEID'",
                    "SLURM",
                ),
                ("accelconf preflight cfg.yaml --machine-rank 0 --timeout 300 --size 256 --disk /checkpoints", ""),
            ],
            "0 clean, 1 findings (a difference, a node that never arrived, a step that hung), "
            "2 an unreadable config or bad arguments",
        ),
    )
    add_options(p)
    p.add_argument(
        "--machine-rank", type=int, required=True, metavar="N", help="this node's rank (0 hosts the rendezvous)"
    )
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    from accelconf.preflight.node import run as run_node

    return run_node(args)
