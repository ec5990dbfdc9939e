"""accelerate's own launcher run as a pure function (no processes, no GPU): the test oracle.

Run as a separate process so that HF_HOME (read by accelerate at import time) and the patches never
leak into the test process. Protocol: one JSON request per stdin line, one JSON answer per stdout
line. A request is ``{"argv": [...], "cores": int, "plugins": bool, "snippet": "python source" | null,
"parallelism_world": int | null}``;
the answer holds ``mode``, ``env`` (the delta to the base environment), ``torchrun``, ``cmd``,
``plugins`` (fields of the FSDP/DeepSpeed/Dynamo plugins built from that env) and ``snippet``
(fields of the plugins a to-kwargs snippet builds, executed with an empty accelerate environment),
``parallelism`` (what ParallelismConfig says at ``Accelerator()`` with that many processes) or ``error``.

The release's own ``launch_command`` runs (``_validate_launch_command``, its dispatch, the
``prepare_*`` functions) and is stopped at the hand-off: ``subprocess.Popen`` in
accelerate/commands/launch.py and ``torch.distributed.run.run`` record their environment (the
Popen ``env``; ``os.environ`` inside ``patch_environment``) and raise; the TPU and SageMaker
launchers are replaced by their ``prepare_*`` step (the SageMaker job's ``environment``).

``ACCELERATE_ORACLE_PATH`` puts another accelerate (a release of tests/oracle/releases.py) first on
sys.path; every release from 0.20 works the same way. Patches: ports are free, fp8 libraries
present, mpirun is Open MPI, ``cores`` physical cores (default 1, so the CPU thread heuristic
leaves OMP_NUM_THREADS at 1), fake AWS keys for SageMaker, CUDA device 0 for the FSDP1 plugin.
"""

from __future__ import annotations

import contextlib
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
        "OMP_NUM_THREADS",
        "CUDA_VISIBLE_DEVICES",
        "PYTHONPATH",
        "MASTER_ADDR",
        "MASTER_PORT",
        "KMP_AFFINITY",
        "KMP_BLOCKTIME",
    ):
        del os.environ[_k]
if ORACLE_PATH:
    sys.path.insert(0, ORACLE_PATH)
warnings.simplefilter("ignore")
import logging  # noqa: E402

logging.disable(logging.CRITICAL)

import accelerate  # noqa: E402
import accelerate.utils.launch as L  # noqa: E402
import psutil  # noqa: E402

L.is_port_in_use = lambda port: False
L.get_free_port = lambda: 29555
L.is_fp8_available = lambda: True
if hasattr(L, "_get_mpirun_args"):  # Open MPI's argument names; 0.28-0.31 return four of them (no --bind-to)
    import inspect

    _MPI = ("mpirun", "--hostfile", "-n", "--npernode", "--bind-to")
    _MPI = _MPI if "--bind-to" in inspect.getsource(L._get_mpirun_args) else _MPI[:4]
    L._get_mpirun_args = lambda: _MPI
CORES = [1]
psutil.cpu_count = lambda logical=True: CORES[0]

import accelerate.commands.launch as C  # noqa: E402
import torch.distributed.run as distrib_run  # noqa: E402

TORCHRUN_KEYS = ("nproc_per_node", "nnodes", "node_rank", "master_addr", "master_port", "rdzv_endpoint", "rdzv_backend")
# The working directory reaches the answer (DeepSpeed's PYTHONPATH): a caller that keeps answers
# across harness processes passes one directory to all of them (tests/oracle/test_oracle_launch.py).
CWD = os.environ.pop("ACCELCONF_ORACLE_CWD", "") or tempfile.mkdtemp(prefix="accelconf-cwd-")
os.chdir(CWD)


# Set by `import deepspeed` (deepspeed/__init__.py, os.environ.setdefault), which the DeepSpeed
# launcher imports: DeepSpeed's doing, not accelerate's.
NOT_ACCELERATES = frozenset({"PYTORCH_NVML_BASED_CUDA_CHECK"})


class Handoff(BaseException):
    """Raised where accelerate hands the training process over (BaseException: the launchers'
    ``except Exception`` re-raise blocks never see it)."""

    def __init__(self, env: dict, cmd: list | None = None, torchrun: dict | None = None) -> None:
        super().__init__()
        self.env, self.cmd, self.torchrun = env, cmd, torchrun or {}


def _popen(cmd, env=None, **_kw):
    # subprocess.Popen encodes every key and value: a non-str value raises TypeError there
    for k, v in (env or {}).items():
        for x in (k, v):
            if not isinstance(x, (str, bytes, os.PathLike)):
                raise TypeError(f"expected str, bytes or os.PathLike object, not {type(x).__name__}")
    raise Handoff(dict(env if env is not None else os.environ), list(cmd))


LAST_ARGS: list = [None]


def _filter_args(args, *rest, **kw):
    LAST_ARGS[0] = args  # accelerate's namespace, before torchrun's parser adds its own defaults
    return _real_filter_args(args, *rest, **kw)


_real_filter_args = C._filter_args
C._filter_args = _filter_args


def _torchrun(args):
    ns = LAST_ARGS[0]
    raise Handoff(dict(os.environ), None, {k: getattr(ns, k) for k in TORCHRUN_KEYS if hasattr(ns, k)})


class _Subprocess:
    """accelerate.commands.launch's view of the subprocess module: Popen records instead of starting."""

    def __getattr__(self, name):
        import subprocess

        return _popen if name == "Popen" else getattr(subprocess, name)


C.subprocess = _Subprocess()
distrib_run.run = _torchrun
MODE = ["?"]


def _wrap(name: str, mode: str):
    real = getattr(C, name)

    def wrapper(*a, **kw):
        MODE[0] = mode
        return real(*a, **kw)

    setattr(C, name, wrapper)


for _name, _mode in (
    ("simple_launcher", "simple"),
    ("multi_gpu_launcher", "torchrun"),
    ("deepspeed_launcher", "deepspeed"),
):
    _wrap(_name, _mode)


def _tpu(args, pod=False):
    MODE[0] = "tpu"
    raise Handoff(L.prepare_tpu(args, {}, pod)[1] if pod else L.prepare_tpu(args, {})[1])


def _sagemaker(sagemaker_config, args):
    """The job environment SageMaker gets (prepare_sagemager_args_inputs); credentials are faked
    when the config names no profile (accelerate needs them from the command line or AWS_PROFILE)."""
    MODE[0] = "sagemaker"
    if getattr(args, "aws_access_key_id", None) is None:
        args.aws_access_key_id, args.aws_secret_access_key = "oracle", "oracle"
    kwargs, _inputs = L.prepare_sagemager_args_inputs(sagemaker_config, args)
    raise Handoff(dict(kwargs["environment"]), None, {"distribution": kwargs.get("distribution")})


C.tpu_launcher = _tpu
C.tpu_pod_launcher = lambda args: _tpu(args, True)
C.sagemaker_launcher = _sagemaker


def launch(argv: list[str], cores: int = 1) -> dict:
    """accelerate's own ``launch_command`` up to the hand-off: the Popen env of the simple launcher,
    the environment inside ``patch_environment`` when torchrun would start, the SageMaker job env."""
    base = dict(os.environ)
    CORES[0] = cores
    MODE[0] = "?"
    args = C.launch_command_parser().parse_args(argv)
    try:
        with contextlib.redirect_stdout(sys.stderr):  # the launchers print (SageMaker); stdout carries the answers
            C.launch_command(args)
    except Handoff as h:
        env, cmd, trun = h.env, h.cmd, h.torchrun
    else:
        raise AssertionError("launch_command returned without handing off")
    finally:
        os.environ.clear()
        os.environ.update(base)
    mode = MODE[0]
    delta = (
        env if mode == "sagemaker" else {k: v for k, v in env.items() if base.get(k) != v and k not in NOT_ACCELERATES}
    )
    if mode == "sagemaker":
        trun = {}
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
        return {
            type(value).__name__: {f.name: norm(getattr(value, f.name), depth + 1) for f in dataclasses.fields(value)}
        }
    text = repr(value)
    return text.split(" at 0x")[0]


SKIP_FIELDS = {"param_init_fn", "mixed_precision_policy", "torch_device_mesh", "device_mesh"}


def fields(obj) -> dict:
    return {f.name: norm(getattr(obj, f.name)) for f in dataclasses.fields(obj) if f.name not in SKIP_FIELDS}


def _plugin_classes():
    from accelerate.utils import DeepSpeedPlugin, FullyShardedDataParallelPlugin, TorchDynamoPlugin

    out = {
        "FullyShardedDataParallelPlugin": FullyShardedDataParallelPlugin,
        "DeepSpeedPlugin": DeepSpeedPlugin,
        "TorchDynamoPlugin": TorchDynamoPlugin,
    }
    try:
        from accelerate import ParallelismConfig

        out["ParallelismConfig"] = ParallelismConfig
    except ImportError:
        pass
    return out


def _device_patch():
    import accelerate.utils.dataclasses as D
    import torch

    D.is_cuda_available = lambda: True
    torch.cuda.current_device = lambda: 0


def _build(cls, env: dict, kwargs: dict | None = None):
    saved = dict(os.environ)
    try:
        os.environ.clear()
        os.environ.update(
            {k: v for k, v in saved.items() if not k.startswith(("ACCELERATE_", "FSDP_", "PARALLELISM_CONFIG_"))}
        )
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
        os.environ.update(
            {k: v for k, v in saved.items() if not k.startswith(("ACCELERATE_", "FSDP_", "PARALLELISM_CONFIG_"))}
        )
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
    out["accelerator_kwargs"] = {
        k: norm(v)
        for k, v in captured.items()
        if k not in ("fsdp_plugin", "deepspeed_plugin", "dynamo_plugin", "parallelism_config")
    }
    return out


def parser_table() -> dict:
    out = {}
    for a in C.launch_command_parser()._actions:
        if a.option_strings:
            out[a.dest] = [
                type(a).__name__,
                getattr(a.type, "__name__", str(a.type)),
                repr(a.default),
                list(a.choices) if a.choices else None,
            ]
    return out


def parallelism_verdict(env: dict, world: int) -> str | None:
    """What the release's ParallelismConfig says when the Accelerator starts in ``env`` with ``world``
    processes: None when the launch passes no parallelism on, "ok", or the error it raises. It is built
    from the environment as ``Accelerator()`` builds it, and checked by its own ``_validate_accelerator``
    against a stand-in for the Accelerator (the device mesh, which needs the processes, is not built)."""
    if env.get("ACCELERATE_USE_PARALLELISM_CONFIG", "false").lower() != "true":
        return None
    from accelerate.parallelism_config import ParallelismConfig
    from accelerate.utils import DistributedType

    fsdp2 = env.get("ACCELERATE_USE_FSDP", "false").lower() == "true" and env.get("FSDP_VERSION", "1") == "2"
    deepspeed = env.get("ACCELERATE_USE_DEEPSPEED", "false").lower() == "true"
    kind = DistributedType.FSDP if fsdp2 else DistributedType.DEEPSPEED if deepspeed else DistributedType.MULTI_GPU
    stand_in = type(
        "Accelerator",
        (),
        {
            "multi_device": world > 1,
            "num_processes": world,
            "is_fsdp2": fsdp2,
            "distributed_type": kind,
            "is_main_process": True,
        },
    )()
    saved = dict(os.environ)
    os.environ.update(env)
    try:
        ParallelismConfig()._validate_accelerator(stand_in)
    except ValueError as exc:
        return f"ValueError: {str(exc)[:200]}"
    finally:
        os.environ.clear()
        os.environ.update(saved)
    return "ok"


def answer(req: dict) -> dict:
    if req.get("parser"):
        return {"parser": parser_table()}
    try:
        res = launch(req["argv"], int(req.get("cores", 1)))
    except BaseException as exc:  # argparse exits with SystemExit
        return {"error": f"{type(exc).__name__}: {str(exc)[:300]}"}
    if req.get("plugins"):
        _device_patch()
        res["plugins"] = plugins_from_env(res["mode"], res["env"])
    if req.get("parallelism_world"):
        res["parallelism"] = parallelism_verdict(res["env"], int(req["parallelism_world"]))
    if req.get("snippet"):
        _device_patch()
        res["snippet"] = plugins_from_snippet(req["snippet"])
    return res


def main() -> None:
    # A request without --config_file (to-cli flags) must not read a default config: every release
    # 0.20-1.15 derives its path from HF_HOME at import (commands/config/config_args.py), and HF_HOME
    # is a fresh empty directory here, never ~/.cache/huggingface.
    if not C.default_config_file.startswith(os.environ["HF_HOME"]) or os.path.exists(C.default_config_file):
        raise SystemExit(
            f"accelerate {accelerate.__version__} would read a default config file: {C.default_config_file}"
        )
    print(json.dumps({"ready": True, "version": accelerate.__version__}), flush=True)
    for line in sys.stdin:
        if not line.strip():
            continue
        req = json.loads(line)
        print(json.dumps(answer(req), default=str), flush=True)


if __name__ == "__main__":
    main()
