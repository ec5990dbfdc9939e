"""Another interpreter's packages: ``check --python PATH`` probes the environment that will train.

A tool installed with pipx (or in its own venv) sees its own interpreter's packages, not those of
the venv that runs ``accelerate launch``. This module asks the other interpreter for its
``sys.path`` and Python version with a one-line script that imports only ``sys``, ``json`` and
``platform`` (never torch, accelerate or deepspeed), then reads versions from the ``*.dist-info``
folders on that path (:func:`accelconf.versions.scan_dist_infos`) and the CUDA/ROCm build from
``torch/version.py`` as text. GPUs are this machine's, detected as usual by
:func:`accelconf.environment.probe.probe`.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import replace

from accelconf.environment.probe import Environment, probe, torch_build_from
from accelconf.errors import UsageError
from accelconf.versions import _norm, scan_dist_infos

_ASK = "import sys, json, platform; print(json.dumps([sys.path, platform.python_version()]))"


def interpreter_path(python: str) -> str:
    """The interpreter as given (a path, or a command name found on PATH). Raises UsageError."""
    found = python if os.sep in python else shutil.which(python)
    if not found or not os.path.isfile(found) or not os.access(found, os.X_OK):
        raise UsageError(
            f"--python {python!r}: no such executable; give the python of the venv that trains, "
            "e.g. --python /path/to/venv/bin/python"
        )
    return found


def ask_interpreter(python: str, timeout: float = 20.0) -> tuple[list[str], str]:
    """(sys.path, Python version) of another interpreter. Raises UsageError when it cannot answer."""
    exe = interpreter_path(python)
    try:
        r = subprocess.run([exe, "-c", _ASK], capture_output=True, text=True, timeout=timeout)
        paths, version = json.loads(r.stdout.strip().splitlines()[-1])
    except (OSError, subprocess.TimeoutExpired, ValueError, IndexError) as exc:
        raise UsageError(
            f"--python {python!r}: could not ask it for its packages ({type(exc).__name__}: {exc})"
        ) from exc
    cwd_free = [p for p in paths if p]  # '' is the current directory of that run, not an install
    return cwd_free, version


def probe_interpreter(python: str, mode: str = "auto", timeout: float = 2.0) -> Environment:
    """This machine's GPUs with the packages of ``python`` (a path to another interpreter)."""
    exe = interpreter_path(python)
    paths, version = ask_interpreter(exe)
    found = scan_dist_infos(paths)
    torch_dir = next(
        (os.path.join(p, "torch") for p in paths if os.path.isfile(os.path.join(p, "torch", "version.py"))), None
    )
    build = torch_build_from(os.path.join(torch_dir, "version.py")) if torch_dir else (None, None)
    env = probe(mode, timeout, versions=lambda name: found.get(_norm(name)), build=build)
    return replace(env, python_version=version, source=f"{env.source}, packages of {exe}")
