"""How long ``accelconf check`` (with GPU detection) and ``accelconf env`` take, against ``python -c pass``.

Not a test: run it by hand, ``python bench/bench_check.py [--runs N] [--no-bytecode] [CONFIG]``. Each
command runs in a fresh interpreter, as a user would start it; the table gives the median and best
wall time and the ratio of the median to ``python -c pass`` (the goal for ``check`` is within about
20x). Bytecode is cached (in a temporary ``PYTHONPYCACHEPREFIX``) as it is for an installed
package, even where ``PYTHONDONTWRITEBYTECODE`` is set; ``--no-bytecode`` measures the other case.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile

from common import bench_env, print_ratios, startup_rows  # noqa: E402  (bench/ is on sys.path when run as a script)

CONFIG = """\
compute_environment: LOCAL_MACHINE
distributed_type: FSDP
mixed_precision: bf16
num_machines: 1
num_processes: 8
fsdp_config:
  fsdp_version: 2
  fsdp_auto_wrap_policy: TRANSFORMER_BASED_WRAP
  fsdp_reshard_after_forward: true
  fsdp_state_dict_type: SHARDED_STATE_DICT
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("config", nargs="?", help="config to check (default: a built-in FSDP2 config)")
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--no-bytecode", action="store_true", help="compile every module on every run")
    args = parser.parse_args()
    py = sys.executable
    with tempfile.TemporaryDirectory() as tmp:
        env = bench_env(tmp, args.no_bytecode)
        config = args.config
        if config is None:
            config = os.path.join(tmp, "fsdp2.yaml")
            with open(config, "w", encoding="utf-8") as fh:
                fh.write(CONFIG)
        cases = [
            ("python -c pass", [py, "-c", "pass"]),
            ("accelconf env", [py, "-m", "accelconf", "env"]),
            ("accelconf check (detect)", [py, "-m", "accelconf", "check", config]),
            (
                "accelconf check --gpus 8 --gpu H100",
                [py, "-m", "accelconf", "check", "--gpus", "8", "--gpu", "H100", config],
            ),
            ("accelconf check --probe none", [py, "-m", "accelconf", "check", "--probe", "none", config]),
        ]
        rows = startup_rows(cases, args.runs, env)
    print_ratios(rows, 38)
    load = f", load {os.getloadavg()[0]:.1f}" if hasattr(os, "getloadavg") else ""
    cache = "no bytecode cache" if args.no_bytecode else "bytecode cached"
    print(f"({args.runs} runs each, Python {sys.version.split()[0]}, {os.cpu_count()} CPUs{load}, {cache})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
