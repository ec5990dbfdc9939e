"""What a config says the job looks like: world size, nodes, processes per node, rendezvous.

Everything comes from :func:`accelconf.accelerate.launch.launch_env`, the model of ``accelerate
launch``; processes per node are ``num_processes // num_machines`` as accelerate's torchrun and
mpirun paths compute them. Shared by both preflight entry points and the command's options.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from accelconf import formats
from accelconf.accelerate import registry
from accelconf.accelerate.launch import LaunchError, launch_env
from accelconf.errors import InputError, UsageError
from accelconf.text.document import read_text


@dataclass(frozen=True)
class Layout:
    path: str
    num_processes: int
    num_machines: int
    per_node: int
    main_ip: str
    main_port: int
    machine_rank: int
    uses_gpus: bool  # a GPU distributed_type without use_cpu: one visible GPU per process expected
    deepspeed_file: str | None

    @property
    def endpoint(self) -> str:
        return f"{self.main_ip}:{self.main_port}"


def _int(value: object, default: int) -> int:
    try:
        return int(value) if value is not None else default  # type: ignore[call-overload]
    except (TypeError, ValueError):
        return default


def read_layout(path: str, machine_rank: int | None = None) -> Layout:
    """The layout of the config at ``path``. Raises ``InputError`` (exit 2) when it cannot be read
    or ``accelerate launch`` would refuse it."""
    text, path = read_text(path)  # as every command reads its input
    cfg = formats.read(text, None, path)
    try:
        ns = launch_env(cfg, machine_rank=machine_rank).namespace
    except LaunchError as exc:
        raise InputError(f"accelerate launch would fail: {exc.message}", path, exc.line, exc.column) from exc
    machines = max(_int(ns.get("num_machines"), 1), 1)
    processes = max(_int(ns.get("num_processes"), 1), 1)
    port_default = registry.get("", "main_process_port").launcher_default  # type: ignore[union-attr]
    dtype = str(cfg.get("distributed_type") or "")
    gpu_types = (*registry.MULTI_GPU_TYPES, "DEEPSPEED", "FSDP", "MEGATRON_LM")
    return Layout(
        path=path,
        num_processes=processes,
        num_machines=machines,
        per_node=max(processes // machines, 1),
        main_ip=str(ns.get("main_process_ip") or "127.0.0.1"),
        main_port=_int(ns.get("main_process_port"), _int(port_default, 29500)),
        machine_rank=_int(ns.get("machine_rank"), 0),
        uses_gpus=dtype in gpu_types and not (ns.get("cpu") or ns.get("use_cpu")),
        deepspeed_file=ns.get("deepspeed_config_file") or None,
    )


def require_torch() -> None:
    """Raise ``UsageError`` (exit 2) when torch, the engine the job itself runs on, is not installed."""
    import importlib.util

    if importlib.util.find_spec("torch") is None:
        raise UsageError(
            "preflight runs through torch.distributed, and torch is not installed in this "
            "interpreter: run it with the Python that trains"
        )


def add_options(p: argparse.ArgumentParser) -> None:
    """The options both entry points take (the command adds ``--machine-rank``)."""
    p.add_argument("config", metavar="CONFIG", help="the accelerate config file the job launches with")
    p.add_argument(
        "--timeout",
        type=float,
        default=120.0,
        metavar="S",
        help="seconds to wait for every node to arrive (default: 120)",
    )
    p.add_argument(
        "--step-timeout",
        type=float,
        default=60.0,
        metavar="S",
        help="seconds each step after the rendezvous may take: gathering facts, the all_reduce (default: 60)",
    )
    p.add_argument("--size", type=float, default=4.0, metavar="MIB", help="all_reduce payload in MiB (default: 4)")
    p.add_argument(
        "--disk", metavar="PATH", help="report the free disk space at this path (the output/checkpoint folder)"
    )
    p.add_argument("--format", choices=("text", "json"), default="text", help="report format (default: text)")
