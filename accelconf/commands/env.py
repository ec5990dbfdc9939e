"""``accelconf env``: print the detected environment, fast (no torch import).

Gathers options and calls :func:`accelconf.environment.probe.probe`; formatting is :func:`format_text` /
``Environment.to_json``. Exit 0 always: a probe that fails is reported, not fatal.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from accelconf.environment.probe import PROBE_MODES, Environment


def add_parser(subparsers: Any, name: str, help_text: str) -> argparse.ArgumentParser:
    from accelconf.commands import help_texts

    p: argparse.ArgumentParser = subparsers.add_parser(
        name,
        help=help_text,
        **help_texts(
            """Print the versions of torch, accelerate, deepspeed and transformers, the fp8 backends
            and the GPUs of this machine. Versions are read from package metadata of this
            interpreter (`accelconf check --python PATH` reads another's); GPUs from NVML or
            nvidia-smi (rocm-smi on AMD); torch is imported only with --probe torch.""",
            [
                ("accelconf env", ""),
                ("accelconf env --format json", ""),
                ("accelconf env --probe torch", "ask torch too (slower)"),
            ],
            "0 (a probe that fails is reported, never fatal), 2 bad arguments",
        ),
    )
    p.add_argument("--format", choices=("text", "json"), default="text", help="output format (default: text)")
    p.add_argument(
        "--probe",
        choices=PROBE_MODES,
        default="auto",
        help="GPU detection: auto (NVML, then nvidia-smi, then rocm-smi), one source, or none",
    )
    p.add_argument("--timeout", type=float, default=2.0, help="seconds to wait for nvidia-smi/rocm-smi (default: 2)")
    p.set_defaults(func=run)
    return p


def _v(version: str | None) -> str:
    return version if version else "not installed"


def format_text(env: Environment, seconds: float | None = None) -> str:
    """The human-readable report ``accelconf env`` prints."""
    rows: list[tuple[str, str]] = [
        ("python", f"{env.python_version} ({env.platform})"),
        (
            "torch",
            _v(env.torch_version)
            + (
                f" (CUDA {env.cuda_version})"
                if env.cuda_version
                else f" (ROCm {env.rocm_version})"
                if env.rocm_version
                else " (CPU-only build)"
                if env.torch_version
                else ""
            ),
        ),
        ("accelerate", _v(env.accelerate_version)),
        ("deepspeed", _v(env.deepspeed_version)),
        ("transformers", _v(env.transformers_version)),
        ("fp8 backends", ", ".join(env.fp8_backends) or "none"),
    ]
    if env.driver_version:
        drv = env.driver_version + (f" (CUDA {env.driver_cuda_version})" if env.driver_cuda_version else "")
        rows.append(("driver", drv))
    if env.gpus:
        rows.append(("GPUs", f"{env.gpu_count}"))
        for g in env.gpus:
            feats = [f for f, on in (("bf16", g.bf16), ("fp8", g.fp8)) if on]
            mem = f", {g.memory_gib:g} GiB" if g.memory_gib else ""
            cc = f"CC {g.cc_text}" if g.compute_capability else (g.arch or "unknown arch")
            model = f" [{g.model}]" if g.model and g.model != g.name else ""
            rows.append((f"  {g.index}", f"{g.name}{model} ({cc}{mem}{', ' + ', '.join(feats) if feats else ''})"))
    else:
        rows.append(("GPUs", "none found" if env.knows("gpus") else "not probed"))
    if env.source.startswith("detected"):
        from accelconf.environment.probe import default_config_file

        rows.append(("default config", env.default_config or f"{default_config_file()} (not there)"))
    for problem in env.problems:
        rows.append(("problem", problem))
    for note in env.notes:
        rows.append(("note", note))
    took = f", {seconds * 1000:.0f} ms" if seconds is not None else ""
    head = f"accelconf env: {env.source}{took}"
    width = max(len(k) for k, _ in rows)
    return head + "\n" + "\n".join(f"  {k.ljust(width)}  {v}" for k, v in rows) + "\n"


def run(args: argparse.Namespace) -> int:
    from accelconf.environment.probe import timed_probe

    env, seconds = timed_probe(args.probe, args.timeout)
    if args.format == "json":
        sys.stdout.write(json.dumps({**env.to_json(), "probe_ms": round(seconds * 1000, 1)}, indent=2) + "\n")
    else:
        sys.stdout.write(format_text(env, seconds))
    return 0
