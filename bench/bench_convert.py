"""How long ``accelconf to-env`` takes, against ``python -c pass`` and ``accelerate env --config_file``.

Not a test: run it by hand, ``python bench/bench_convert.py [--runs N] [CONFIG]`` (default: a corpus
FSDP config, else a built-in one). Each command runs in a fresh interpreter, as a user starts it;
the table gives median and best wall time, the ratio to ``python -c pass`` (goal: within about 8x)
and how many times faster than ``accelerate env --config_file`` (goal: at least 20x). Bytecode is
cached in a temporary ``PYTHONPYCACHEPREFIX``, as it is for an installed package.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

from common import bench_env, shown, timed  # noqa: E402  (bench/ is on sys.path when run as a script)

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "accelerate"
DEFAULT = CORPUS / "huggingface__accelerate__examples__config_yaml_templates__fsdp.yaml"
FALLBACK = """\
compute_environment: LOCAL_MACHINE
distributed_type: FSDP
mixed_precision: bf16
num_processes: 8
fsdp_config:
  fsdp_version: 2
  fsdp_auto_wrap_policy: TRANSFORMER_BASED_WRAP
  fsdp_state_dict_type: SHARDED_STATE_DICT
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("config", nargs="?")
    ap.add_argument("--runs", type=int, default=15)
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="accelconf-bench-")
    config = args.config or (str(DEFAULT) if DEFAULT.exists() else None)
    if config is None:
        config = os.path.join(tmp, "config.yaml")
        Path(config).write_text(FALLBACK)
    env = bench_env(tmp, HF_HOME=os.path.join(tmp, "hf"))
    py = sys.executable
    accelerate = shutil.which("accelerate", path=os.path.dirname(py)) or shutil.which("accelerate")
    commands = [("python -c pass", [py, "-c", "pass"]), ("accelconf to-env", [py, "-m", "accelconf", "to-env", config])]
    if accelerate:
        commands.append(("accelerate env --config_file", [accelerate, "env", "--config_file", config]))
    for _, argv in commands:  # warm the caches (bytecode, file system)
        timed(argv, 1, env)
    results = {}
    for name, argv in commands:
        runs = args.runs if "accelerate env" not in name else max(3, args.runs // 3)
        results[name] = timed(argv, runs, env)
    base = statistics.median(results["python -c pass"])
    ours = statistics.median(results["accelconf to-env"])
    print(f"config: {shown(config)}")
    print(f"{'command':32} {'median ms':>10} {'best ms':>9} {'x python':>9} {'to-env faster':>14}")
    for name, times in results.items():
        med = statistics.median(times)
        faster = f"{med / ours:.1f}x" if name.startswith("accelerate") else ""
        print(f"{name:32} {med * 1000:10.1f} {min(times) * 1000:9.1f} {med / base:9.1f} {faster:>14}")
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
