"""Preflight: every rank of a multi-node job checked against the config and against each other.

Two entry points share one check. ``accelconf preflight CONFIG --machine-rank N``
(:mod:`accelconf.preflight.node`) starts one node's ranks itself, after every node has registered
in a TCPStore at ``main_process_ip:port`` within a join deadline, so it can name the nodes that
never arrived. ``python -m accelconf.preflight CONFIG`` (:mod:`accelconf.preflight.rank`) is one
rank started by the job's own launcher (``accelerate launch``, ``torchrun``, ``srun``...).
Each rank collects its facts (:mod:`~accelconf.preflight.facts`, no torch), a gloo group gathers
them, :mod:`~accelconf.preflight.compare` turns them into issues and
:mod:`~accelconf.preflight.report` prints them. torch is imported only on the run path.

Exit codes: 0 clean, 1 issues (or nodes that never arrived, or a step that hung), 2 unreadable
config or bad arguments.
"""

from __future__ import annotations
