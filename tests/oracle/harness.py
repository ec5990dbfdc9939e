"""accelerate's own launcher run as a pure function (no processes, no GPU): the test oracle.

Run as a separate process so that HF_HOME (read by accelerate at import time) and the patches never
leak into the test process. Protocol: one JSON request per stdin line, one JSON answer per stdout
line. A request is ``{"argv": [...], "plugins": bool, "snippet": "python source" | null}``; the
answer holds ``mode``, ``env`` (the delta to the base environment), ``torchrun``, ``cmd``,
``plugins`` (fields of the FSDP/DeepSpeed/Dynamo plugins built from that env) and ``snippet``
(fields of the plugins a to-kwargs snippet builds, executed with an empty accelerate environment),
or ``error``.

``ACCELERATE_ORACLE_PATH`` puts another accelerate (an unpacked older wheel) first on sys.path.
Patches: ports are free, fp8 libraries present, mpirun found, one physical core (so the CPU
thread heuristic leaves OMP_NUM_THREADS at 1), CUDA device 0 for the FSDP1 plugin.
"""

from __future__ import annotations

import dataclasses
import enum
import json
import os
import sys
import tempfile
import warnings

os.environ["HF_HOME"] = tempfile.mkdtemp(prefix="accelconf-oracle-")
ORACLE_PATH = os.environ.pop("ACCELERATE_ORACLE_PATH", "")
for _k in list(os.environ):
    if _k.startswith(("ACCELERATE_", "FSDP_", "MEGATRON_LM_", "PARALLELISM_CONFIG_")) or _k in (
            "OMP_NUM_THREADS", "CUDA_VISIBLE_DEVICES", "PYTHONPATH", "MASTER_ADDR", "MASTER_PORT", "KMP_AFFINITY", "KMP_BLOCKTIME"):
        del os.environ[_k]
if ORACLE_PATH:
    sys.path.insert(0, ORACLE_PATH)
warnings.simplefilter("ignore")
import logging  # noqa: E402

logging.disable(logging.CRITICAL)

import psutil  # noqa: E402

import accelerate  # noqa: E402
import accelerate.utils.launch as L  # noqa: E402
from accelerate.commands.launch import _validate_launch_command, launch_command_parser  # noqa: E402

L.is_port_in_use = lambda port: False
L.get_free_port = lambda: 29555
L.is_fp8_available = lambda: True
L._get_mpirun_args = lambda: ("mpirun", "--hostfile", "-n", "--npernode", "--bind-to")
psutil.cpu_count = lambda logical=True: 1

TORCHRUN_KEYS = ("nproc_per_node", "nnodes", "node_rank", "master_addr", "master_port", "rdzv_endpoint", "rdzv_backend")
CWD = tempfile.mkdtemp(prefix="accelconf-cwd-")
os.chdir(CWD)


def launch(argv: list[str]) -> dict:
    base = dict(os.environ)
    args = launch_command_parser().parse_args(argv)
    args, cfg, mp_from_cfg = _validate_launch_command(args)
    cmd = None
    if cfg is not None and str(getattr(cfg.compute_environment, "value", cfg.compute_environment)) == "AMAZON_SAGEMAKER" and not (
            args.use_deepspeed or args.use_fsdp or args.use_megatron_lm or args.multi_gpu or args.tpu):
        return {"mode": "sagemaker", "skip": "SageMaker launches need AWS: not run", "env": {}, "torchrun": {}, "cmd": None, "cwd": CWD}
    if args.use_deepspeed and not args.cpu:
        fields = list(cfg.deepspeed_config) if cfg else []
        args.deepspeed_fields_from_accelerate_config = ",".join(fields + (["mixed_precision"] if mp_from_cfg else []))
        mode, (cmd, env) = "deepspeed", L.prepare_deepspeed_cmd_env(args)
    elif (args.use_fsdp or args.use_megatron_lm or args.multi_gpu) and not args.cpu:
        mode, env = "torchrun", L.prepare_multi_gpu_env(args)
    elif args.tpu and not args.cpu:
        mode, env = "tpu", L.prepare_tpu(args, dict(os.environ))[1]
    else:
        mode, (cmd, env) = "simple", L.prepare_simple_launcher_cmd_env(args)
    delta = {k: v for k, v in env.items() if base.get(k) != v}
    trun = {k: getattr(args, k) for k in TORCHRUN_KEYS if hasattr(args, k)} if mode in ("torchrun", "deepspeed") else {}
    if cmd and mode == "simple":
        cmd = cmd[: cmd.index(sys.executable)] if sys.executable in cmd else cmd
    elif cmd:
        cmd = cmd[: cmd.index("--master_port") + 2]
    return {"mode": mode, "env": delta, "torchrun": trun, "cmd": cmd or None, "cwd": CWD}


def norm(value, depth=0):
    if isinstance(value, enum.Enum):
        return str(value.name)
    if callable(value) and hasattr(value, "__name__"):
        return value.__name__
    if isinstance(value, dict):
        return {str(k): norm(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [norm(v, depth + 1) for v in value]
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if dataclasses.is_dataclass(value) and depth < 3:
        return {type(value).__name__: {f.name: norm(getattr(value, f.name), depth + 1) for f in dataclasses.fields(value)}}
    text = repr(value)
    return text.split(" at 0x")[0]


SKIP_FIELDS = {"param_init_fn", "mixed_precision_policy", "torch_device_mesh", "device_mesh"}


def fields(obj) -> dict:
    return {f.name: norm(getattr(obj, f.name)) for f in dataclasses.fields(obj) if f.name not in SKIP_FIELDS}


def _plugin_classes():
    from accelerate.utils import DeepSpeedPlugin, FullyShardedDataParallelPlugin, TorchDynamoPlugin

    out = {"FullyShardedDataParallelPlugin": FullyShardedDataParallelPlugin, "DeepSpeedPlugin": DeepSpeedPlugin,
           "TorchDynamoPlugin": TorchDynamoPlugin}
    try:
        from accelerate import ParallelismConfig

        out["ParallelismConfig"] = ParallelismConfig
    except ImportError:
        pass
    return out


def _device_patch():
    import torch

    import accelerate.utils.dataclasses as D

    D.is_cuda_available = lambda: True
    torch.cuda.current_device = lambda: 0


def _build(cls, env: dict, kwargs: dict | None = None):
    saved = dict(os.environ)
    try:
        os.environ.clear()
        os.environ.update({k: v for k, v in saved.items() if not k.startswith(("ACCELERATE_", "FSDP_", "PARALLELISM_CONFIG_"))})
        os.environ.update(env)
        try:
            return {"fields": fields(cls(**(kwargs or {})))}
        except Exception as exc:  # the same failure on both sides counts as equal
            return {"error": f"{type(exc).__name__}: {str(exc)[:200]}"}
    finally:
        os.environ.clear()
        os.environ.update(saved)


def plugins_from_env(mode: str, env: dict) -> dict:
    classes = _plugin_classes()
    out = {}
    if env.get("ACCELERATE_USE_FSDP") == "true":
        out["FullyShardedDataParallelPlugin"] = _build(classes["FullyShardedDataParallelPlugin"], env)
    if env.get("ACCELERATE_USE_DEEPSPEED") == "true":
        out["DeepSpeedPlugin"] = _build(classes["DeepSpeedPlugin"], env)
    if "ACCELERATE_DYNAMO_BACKEND" in env:
        out["TorchDynamoPlugin"] = _build(classes["TorchDynamoPlugin"], env)
    if env.get("ACCELERATE_USE_PARALLELISM_CONFIG") == "true" and "ParallelismConfig" in classes:
        out["ParallelismConfig"] = _build(classes["ParallelismConfig"], env)
    return out


def plugins_from_snippet(source: str) -> dict:
    """Execute a to-kwargs snippet with an empty accelerate environment; Accelerator(...) is recorded, not built."""
    captured: dict = {}

    class Recorder:
        def __init__(self, **kwargs):
            captured.update(kwargs)

    saved = dict(os.environ)
    real = accelerate.Accelerator
    accelerate.Accelerator = Recorder
    try:
        os.environ.clear()
        os.environ.update({k: v for k, v in saved.items() if not k.startswith(("ACCELERATE_", "FSDP_", "PARALLELISM_CONFIG_"))})
        try:
            exec(compile(source, "<to-kwargs>", "exec"), {"__name__": "__snippet__"})
        except Exception as exc:
            return {"error": f"{type(exc).__name__}: {str(exc)[:200]}"}
    finally:
        accelerate.Accelerator = real
        os.environ.clear()
        os.environ.update(saved)
    out = {}
    for key in ("fsdp_plugin", "deepspeed_plugin", "dynamo_plugin", "parallelism_config"):
        obj = captured.get(key)
        if obj is not None:
            out[type(obj).__name__] = {"fields": fields(obj)}
    out["accelerator_kwargs"] = {k: norm(v) for k, v in captured.items()
                                 if k not in ("fsdp_plugin", "deepspeed_plugin", "dynamo_plugin", "parallelism_config")}
    return out


def parser_table() -> dict:
    out = {}
    for a in launch_command_parser()._actions:
        if a.option_strings:
            out[a.dest] = [type(a).__name__, getattr(a.type, "__name__", str(a.type)), repr(a.default),
                           list(a.choices) if a.choices else None]
    return out


def answer(req: dict) -> dict:
    if req.get("parser"):
        return {"parser": parser_table()}
    try:
        res = launch(req["argv"])
    except BaseException as exc:  # argparse exits with SystemExit
        return {"error": f"{type(exc).__name__}: {str(exc)[:300]}"}
    if req.get("plugins"):
        _device_patch()
        res["plugins"] = plugins_from_env(res["mode"], res["env"])
    if req.get("snippet"):
        _device_patch()
        res["snippet"] = plugins_from_snippet(req["snippet"])
    return res


def main() -> None:
    print(json.dumps({"ready": True, "version": accelerate.__version__}), flush=True)
    for line in sys.stdin:
        if not line.strip():
            continue
        req = json.loads(line)
        print(json.dumps(answer(req), default=str), flush=True)


if __name__ == "__main__":
    main()
