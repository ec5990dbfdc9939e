"""Record oracle fixtures for an accelerate version other than the installed one.

    python tests/oracle/record_fixtures.py 1.4.0            # the release from the matrix cache
    python tests/oracle/record_fixtures.py 1.4.0 --dir DIR  # use an unpacked wheel in DIR

Writes ``tests/data/oracle/corpus-<version>.json`` (every corpus config through that version's
launcher) and adds that version's entry to ``tests/data/oracle/precedence.json`` (a nested FSDP key
against an explicit flag: the 1.5 precedence change). The installed accelerate's entry is
recorded too. The tests compare :func:`accelconf.accelerate.launch.launch_env` with these files.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = HERE.parent / "data" / "oracle"
CORPUS = HERE.parents[2] / "shared" / "corpus" / "accelerate"
PRECEDENCE_CONFIG = """\
compute_environment: LOCAL_MACHINE
distributed_type: FSDP
mixed_precision: bf16
num_machines: 1
num_processes: 8
fsdp_config:
  fsdp_auto_wrap_policy: TRANSFORMER_BASED_WRAP
  fsdp_transformer_layer_cls_to_wrap: LlamaDecoderLayer
  fsdp_sharding_strategy: FULL_SHARD
  fsdp_state_dict_type: SHARDED_STATE_DICT
  fsdp_offload_params: false
  fsdp_sync_module_states: true
  fsdp_use_orig_params: true
"""
PRECEDENCE_FLAGS = ["--fsdp_state_dict_type", "FULL_STATE_DICT"]


def unpack(version: str) -> str:
    """The release's directory in the matrix cache (tests/oracle/releases.py installs it if needed)."""
    sys.path.insert(0, str(HERE.parents[1]))
    from tests.oracle import releases

    minor = ".".join(version.split(".")[:2])
    if releases.RELEASES.get(minor) != version:
        raise SystemExit(
            f"accelerate {version} is not a pinned release "
            f"(tests/oracle/releases.py pins {releases.RELEASES.get(minor)})"
        )
    return str(releases.ensure(minor))


def run_oracle(requests: list[dict], path: str | None) -> tuple[str, list[dict]]:
    env = dict(os.environ)
    if path:
        env["ACCELERATE_ORACLE_PATH"] = path
    proc = subprocess.run(
        [sys.executable, str(HERE / "harness.py")],
        input="".join(json.dumps(r) + "\n" for r in requests),
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    lines = [json.loads(ln) for ln in proc.stdout.splitlines() if ln.strip()]
    return lines[0]["version"], lines[1:]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("version")
    ap.add_argument("--dir", help="an unpacked accelerate wheel (default: the matrix cache, tests/oracle/releases.py)")
    args = ap.parse_args()
    path = args.dir or unpack(args.version)
    DATA.mkdir(parents=True, exist_ok=True)
    files = sorted(p for p in CORPUS.iterdir() if p.suffix in (".yaml", ".yml", ".json")) if CORPUS.is_dir() else []
    with tempfile.TemporaryDirectory() as tmp:
        cfg_path = os.path.join(tmp, "cfg.yaml")
        Path(cfg_path).write_text(PRECEDENCE_CONFIG)
        prec = [{"argv": ["--config_file", cfg_path, *PRECEDENCE_FLAGS, "train.py"]}]
        corpus = [{"argv": ["--config_file", str(p), "train.py"]} for p in files]
        precedence = []
        for where in (path, None):
            version, answers = run_oracle(prec + (corpus if where else []), where)
            precedence.append(
                {"version": version, "config": PRECEDENCE_CONFIG, "flags": PRECEDENCE_FLAGS, "result": answers[0]}
            )
            if where:
                out = {p.name: a for p, a in zip(files, answers[1:])}
                (DATA / f"corpus-{version}.json").write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")
                print(
                    f"corpus-{version}.json: {sum('error' not in a for a in out.values())} launched, "
                    f"{sum('error' in a for a in out.values())} refused"
                )
    (DATA / "precedence.json").write_text(json.dumps(precedence, indent=1) + "\n")
    print(
        "precedence.json:", [(p["version"], p["result"].get("env", {}).get("FSDP_STATE_DICT_TYPE")) for p in precedence]
    )


if __name__ == "__main__":
    main()
