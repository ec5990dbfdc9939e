"""Run accelerate's own launcher logic as a pure function, as a test oracle (no GPU, no processes).

Usage: ``python tests/oracle/launcher.py FILE...`` prints a JSON object mapping each file to
``{"ok": bool, "error": str, "mode": str, "env": {...}}``: what ``accelerate launch --config_file
FILE script.py`` would put in the training process's environment (only the keys the launcher
changed), or the exception it raised. ``HF_HOME`` is pointed at an empty directory before accelerate
is imported, so no default config file on the machine leaks in. Ports, fp8 availability and mpirun
are patched so that results do not depend on this machine.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile

os.environ["HF_HOME"] = tempfile.mkdtemp()

import accelerate.utils.launch as L  # noqa: E402
from accelerate.commands.launch import _validate_launch_command, launch_command_parser  # noqa: E402

L.is_port_in_use = lambda port=None: False
L.get_free_port = lambda: 29555
L.is_fp8_available = lambda: True
L._get_mpirun_args = lambda: ("mpirun", "--hostfile", "-n", "--npernode", "--bind-to")

TORCHRUN_KEYS = ("nproc_per_node", "nnodes", "node_rank", "master_addr", "master_port", "rdzv_endpoint",
                 "rdzv_backend", "max_restarts", "standalone")


def launch_env(argv: list[str], base_env: dict[str, str] | None = None) -> dict:
    base = dict(base_env if base_env is not None else {"PATH": os.environ.get("PATH", ""), "HF_HOME": os.environ["HF_HOME"]})
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(base)
    try:
        args = launch_command_parser().parse_args(argv)
        args, cfg, mp_from_cfg = _validate_launch_command(args)
        cmd = None
        if args.use_deepspeed and not args.cpu:
            fields = list(cfg.deepspeed_config) if cfg else []
            args.deepspeed_fields_from_accelerate_config = ",".join(fields + (["mixed_precision"] if mp_from_cfg else []))
            mode, (cmd, env) = "deepspeed", L.prepare_deepspeed_cmd_env(args)
        elif (args.use_fsdp or args.use_megatron_lm or args.multi_gpu) and not args.cpu:
            mode, env = "torchrun", L.prepare_multi_gpu_env(args)
        elif args.tpu and not args.cpu:
            mode, env = "tpu", {}
        elif cfg is not None and getattr(cfg, "compute_environment", None) is not None and str(getattr(cfg.compute_environment, "value", cfg.compute_environment)) == "AMAZON_SAGEMAKER":
            mode, env = "sagemaker", {}
        else:
            mode, (cmd, env) = "simple", L.prepare_simple_launcher_cmd_env(args)
        delta = {k: v for k, v in env.items() if base.get(k) != v}
        torchrun = {k: getattr(args, k) for k in TORCHRUN_KEYS if hasattr(args, k)}
        return {"ok": True, "mode": mode, "env": dict(sorted(delta.items())), "torchrun": json.loads(json.dumps(torchrun, default=str))}
    except BaseException as exc:  # the oracle's verdict, whatever it is
        return {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
    finally:
        os.environ.clear()
        os.environ.update(saved)


def main(paths: list[str]) -> None:
    out = {p: launch_env(["--config_file", p, "train.py"]) for p in paths}
    json.dump(out, sys.stdout, indent=1, sort_keys=True)


if __name__ == "__main__":
    main(sys.argv[1:])
