"""The facts one rank reports: who it is, what it runs, what it read. No torch import here.

:func:`rank_info` reads the rank from the launcher's variables (accelerate's own lists for CPU
jobs: torchrun's, then MPI's); :func:`collect` gathers the rest into one JSON-able dict. GPU facts
are passed in by the caller, which has torch imported already.

``ACCELCONF_PREFLIGHT_FAKE_VERSIONS`` (``name=version,...``) replaces installed versions: a hook
for tests only, so that one machine can play two nodes that differ.
"""

from __future__ import annotations

import hashlib
import os
import platform
import shutil
import socket
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from accelconf.environment.probe import default_config_file
from accelconf.preflight.layout import Layout
from accelconf.versions import installed_version

# The variables accelerate reads for ranks (accelerate/utils/environment.py get_cpu_distributed_information).
RANK_VARS = ("RANK", "PMI_RANK", "OMPI_COMM_WORLD_RANK", "MV2_COMM_WORLD_RANK")
WORLD_VARS = ("WORLD_SIZE", "PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "MV2_COMM_WORLD_SIZE")
LOCAL_RANK_VARS = ("LOCAL_RANK", "MPI_LOCALRANKID", "OMPI_COMM_WORLD_LOCAL_RANK", "MV2_COMM_WORLD_LOCAL_RANK")
LOCAL_WORLD_VARS = ("LOCAL_WORLD_SIZE", "MPI_LOCALNRANKS", "OMPI_COMM_WORLD_LOCAL_SIZE", "MV2_COMM_WORLD_LOCAL_SIZE")
# Variables whose value every rank must share.
SHARED_PREFIXES = ("ACCELERATE_", "FSDP_", "NCCL_", "MASTER_", "TORCH_")
# ...except these, which a launcher sets per process or per node on purpose.
PER_PROCESS = frozenset({"TORCH_NCCL_ASYNC_ERROR_HANDLING_PER_RANK"})
PACKAGES = ("torch", "accelerate", "deepspeed", "transformers")
FAKE_VERSIONS = "ACCELCONF_PREFLIGHT_FAKE_VERSIONS"


@dataclass(frozen=True)
class RankInfo:
    rank: int
    world_size: int
    local_rank: int
    local_world_size: int
    node_rank: int
    from_launcher: bool  # False: no launcher variable was set (accelerate then runs rank 0 of 1)


def _first(environ: Mapping[str, str], names: tuple[str, ...], default: int) -> tuple[int, bool]:
    for name in names:
        try:
            return int(environ[name]), True
        except (KeyError, ValueError):
            continue
    return default, False


def rank_info(environ: Mapping[str, str] | None = None) -> RankInfo:
    env = os.environ if environ is None else environ
    rank, given = _first(env, RANK_VARS, 0)
    world, _ = _first(env, WORLD_VARS, 1)
    local, _ = _first(env, LOCAL_RANK_VARS, 0)
    local_world, _ = _first(env, LOCAL_WORLD_VARS, 1)
    node, _ = _first(env, ("GROUP_RANK",), rank // max(local_world, 1))
    return RankInfo(rank, world, local, local_world, node, given)


def file_hash(path: str | None) -> str | None:
    """sha256 of a file's bytes, ``"missing"`` when it cannot be read, None for no path."""
    if not path:
        return None
    try:
        with open(path, "rb") as fh:
            return hashlib.sha256(fh.read()).hexdigest()
    except OSError:
        return "missing"


def versions(environ: Mapping[str, str]) -> dict[str, str | None]:
    out: dict[str, str | None] = {"python": platform.python_version()}
    out.update({name: installed_version(name) for name in PACKAGES})
    for item in filter(None, environ.get(FAKE_VERSIONS, "").split(",")):
        name, _, value = item.partition("=")
        out[name.strip()] = value.strip() or None
    return out


def shared_env(environ: Mapping[str, str]) -> dict[str, str]:
    return {k: v for k, v in sorted(environ.items()) if k.startswith(SHARED_PREFIXES) and k not in PER_PROCESS}


def disk_free(path: str | None) -> dict[str, Any] | None:
    if not path:
        return None
    try:
        return {"path": path, "free_gib": round(shutil.disk_usage(path).free / 2**30, 1)}
    except OSError as exc:
        return {"path": path, "error": exc.strerror or str(exc)}


def collect(
    info: RankInfo,
    layout: Layout,
    gpus: dict[str, Any],
    build: dict[str, str | None],
    disk: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """One rank's facts. ``gpus``: count, models, memory_gib; ``build``: torch's CUDA and NCCL."""
    env = os.environ if environ is None else environ
    default = default_config_file(env)
    return {
        "host": socket.gethostname(),
        "rank": info.rank,
        "local_rank": info.local_rank,
        "node": info.node_rank,
        "world_size": info.world_size,
        "local_world_size": info.local_world_size,
        "from_launcher": info.from_launcher,
        "pid": os.getpid(),
        "gpus": {**gpus, "cuda_visible_devices": env.get("CUDA_VISIBLE_DEVICES")},
        "versions": {**versions(env), **build},
        "config": {"path": layout.path, "sha256": file_hash(layout.path)},
        "deepspeed_file": {"path": layout.deepspeed_file, "sha256": file_hash(layout.deepspeed_file)},
        "default_config": {"path": default, "sha256": file_hash(default) if os.path.exists(default) else None},
        "env": shared_env(env),
        "rendezvous": f"{env.get('MASTER_ADDR', '')}:{env.get('MASTER_PORT', '')}",
        "disk": disk_free(disk),
    }
