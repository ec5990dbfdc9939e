"""``accelconf to-cli --all-ranks --preflight``: the launch commands with the preflight as their script.

:func:`with_preflight` appends ``-m accelconf.preflight CONFIG`` to every ``accelerate launch``
command of to-cli's output, so each node runs the check exactly as it will run training;
:func:`launcher_findings` says when that launcher cannot start a multi-node job as the config means.
"""

from __future__ import annotations

import shlex

from accelconf import formats
from accelconf.accelerate.launch import LaunchError, launch_env
from accelconf.findings import Finding


def with_preflight(out: str, config: str) -> str:
    lines = out.split("\n")
    tail = f" \\\n    -m accelconf.preflight {shlex.quote(config)}"
    in_command = False
    for i, line in enumerate(lines):
        in_command = in_command or line.startswith("accelerate launch")
        if in_command and not line.endswith("\\"):
            lines[i] = line + tail
            in_command = False
    return "\n".join(lines)


def launcher_findings(text: str, source: str) -> list[Finding]:
    try:
        result = launch_env(formats.read(text, None, source))
    except LaunchError:
        return []  # to-cli itself reports it
    machines = result.namespace.get("num_machines") or 1
    if result.mode == "simple" and not result.cmd and isinstance(machines, int) and machines > 1:
        return [
            Finding(
                "convert.preflight",
                "warning",
                "accelerate launch starts one process per node for this config (the simple launcher: no "
                "torchrun, no mpirun_hostfile), so every node runs on its own; preflight under it reports "
                "that; `accelconf preflight CONFIG --machine-rank N` starts each node's ranks itself",
                "distributed_type",
            )
        ]
    return []
