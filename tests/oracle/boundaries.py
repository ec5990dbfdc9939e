"""A config for each launcher difference between releases, launched by the releases on both sides
of each boundary and kept in ``tests/data/oracle/boundaries.json``.

``accelconf.accelerate.launch.CHANGES`` names every launcher behaviour that only some releases have
(``[since, until)``). ``CASES`` below gives each one configs (and flags) that reach it; every case is
launched by the last release before and the first release after each end of the range, and the
answers are recorded. Two tests read the records:

* ``tests/oracle/test_oracle_launch.py`` compares ``launch_env(version=V)`` with them: fast, no release
  needed, so the per-release code paths are in the tests each mutant runs (``make mutants``);
* ``tests/oracle/test_release_matrix.py`` launches every case again with its release and compares the
  answers with the records, so they are what the releases do, not what they once did.

    python -m tests.oracle.boundaries     # record again (the releases: python tests/oracle/releases.py)
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from accelconf.accelerate.launch import CHANGES
from tests.oracle import matrix, releases

RECORDS = Path(__file__).resolve().parents[1] / "data" / "oracle" / "boundaries.json"

MG = "compute_environment: LOCAL_MACHINE\ndistributed_type: MULTI_GPU\nnum_processes: 2\n"
FSDP = "compute_environment: LOCAL_MACHINE\ndistributed_type: FSDP\nnum_processes: 2\n"
CPU = "compute_environment: LOCAL_MACHINE\ndistributed_type: MULTI_CPU\nnum_processes: 2\nuse_cpu: true\n"
MULTINODE_DS = (
    "compute_environment: LOCAL_MACHINE\ndistributed_type: DEEPSPEED\nnum_machines: 2\nnum_processes: 16\n"
    "main_process_ip: 10.0.0.1\nmain_process_port: 29500\ndeepspeed_config:\n  zero_stage: 2\n"
    "  deepspeed_multinode_launcher: pdsh\n  deepspeed_hostfile: hostfile\n"
)
FP8 = MG + "mixed_precision: fp8\nfp8_config:\n  backend: TE\n  fp8_format: HYBRID\n  amax_history_length: 32\n"
OVERRIDE = "  override_linear_precision: [false, true, false]\n"
MPIRUN = (
    "compute_environment: LOCAL_MACHINE\ndistributed_type: MULTI_CPU\nnum_machines: 2\nnum_processes: 8\n"
    "main_process_ip: 10.0.0.1\nmain_process_port: 29500\nuse_cpu: true\nmpirun_config:\n  mpirun_hostfile: hostfile\n"
)
PARALLEL = "parallelism_config:\n  parallelism_config_dp_shard_size: 2\n"

# change -> [(config text, extra flags)]; a text starting with "{" is a JSON file
CASES: dict[str, list[tuple[str, list[str]]]] = {
    "num-processes-default": [
        ("compute_environment: LOCAL_MACHINE\ndistributed_type: 'NO'\nmixed_precision: bf16\n", [])
    ],
    "omp-threads-per-process": [(CPU, [])],
    "multi-xpu-dispatch": [("compute_environment: LOCAL_MACHINE\ndistributed_type: MULTI_XPU\nnum_processes: 2\n", [])],
    "ze-mask-inverted": [(MG + "gpu_ids: '0,1'\n", [])],
    "backward-prefetch-policy": [
        (
            FSDP + "fsdp_config:\n  fsdp_backward_prefetch_policy: BACKWARD_PRE\n"
            "  fsdp_backward_prefetch: BACKWARD_POST\n",
            [],
        ),
        (FSDP + "fsdp_config:\n  fsdp_backward_prefetch_policy: NO_PREFETCH\n", []),
    ],
    "fp8-backend-ao-flag": [(MG + "mixed_precision: fp8\n", ["--fp8_backend", "ao"])],
    "fp8-backend-enum": [(MG + "mixed_precision: fp8\n", ["--fp8_backend", "te"])],
    "sharding-strategy-int": [
        (FSDP + "fsdp_config:\n  fsdp_sharding_strategy: 2\n", []),
        (FSDP + "fsdp_config:\n  fsdp_sharding_strategy: SHARD_GRAD_OP\n", []),
    ],
    "ds-multinode-no-local-rank-first": [(MULTINODE_DS, [])],
    "ds-multinode-master-addr": [(MULTINODE_DS, []), (MULTINODE_DS.replace("main_process_ip: 10.0.0.1\n", ""), [])],
    "rendezvous-port-default": [
        (
            "compute_environment: LOCAL_MACHINE\ndistributed_type: MULTI_GPU\nnum_machines: 2\n"
            "num_processes: 16\nmain_process_ip: 10.0.0.1\n",
            [],
        )
    ],
    "sagemaker-cpu-affinity-unknown": [
        (
            "compute_environment: AMAZON_SAGEMAKER\ndistributed_type: 'NO'\nec2_instance_type: ml.p3.2xlarge\n"
            "iam_role_name: accelerate_sagemaker_execution_role\nmixed_precision: 'no'\nnum_machines: 1\n"
            "profile: default\npy_version: py38\npytorch_version: 1.10.2\nregion: us-east-1\n"
            "transformers_version: 4.17.0\nuse_cpu: false\n",
            [],
        )
    ],
    "fp8-config": [(FP8, [])],
    "fp8-override-split": [(FP8 + OVERRIDE, [])],
    "fp8-override-unconverted": [
        (FP8 + OVERRIDE, []),
        (FP8.replace("MULTI_GPU\nnum_processes: 2", "'NO'\nnum_processes: 1") + OVERRIDE, []),
        (MULTINODE_DS + FP8.split("num_processes: 2\n", 1)[1] + OVERRIDE, []),
    ],
    "explicit-flags-win": [
        (
            FSDP + "fsdp_config:\n  fsdp_state_dict_type: SHARDED_STATE_DICT\n",
            ["--fsdp_state_dict_type", "FULL_STATE_DICT"],
        )
    ],
    "simple-rendezvous-any-count": [
        (CPU.replace("num_processes: 2", "num_processes: 1"), []),
        (CPU.replace("num_processes: 2", "num_processes: 1\nnum_machines: 2\nmain_process_ip: 10.0.0.1"), []),
    ],
    "simple-multinode-asserts": [
        (CPU.replace("num_processes: 2", "num_processes: 4\nnum_machines: 2"), []),
        (CPU.replace("num_processes: 2", "num_processes: 4\nnum_machines: 2\nmain_process_ip: 10.0.0.1"), []),
    ],
    "mpirun-bind-to": [(MPIRUN, [])],
    "ccl-count-unconverted": [
        (MPIRUN + "  mpirun_ccl: 2\n", []),
        (MPIRUN + "  mpirun_ccl: '2'\n", []),
        (CPU + "mpirun_config:\n  mpirun_ccl: 2\n", []),
    ],
    "kmp-vars": [(CPU, []), (CPU.replace("use_cpu: true", "use_cpu: false"), [])],
    "kmp-test-string": [(CPU, []), (CPU.replace("use_cpu: true", "use_cpu: false"), [])],
    "kmp-test-flag-name": [(CPU, []), (CPU.replace("use_cpu: true", "use_cpu: false"), [])],
    "yaml-false-precision-no": [
        (MG + "mixed_precision: false\n", []),
        ('{"distributed_type": "MULTI_GPU", "num_processes": 2, "mixed_precision": false}', []),
    ],
    "parallelism-config": [(MG + PARALLEL, [])],
    "parallelism-under-deepspeed": [
        (
            "compute_environment: LOCAL_MACHINE\ndistributed_type: DEEPSPEED\nnum_processes: 2\n"
            "deepspeed_config:\n  zero_stage: 2\n" + PARALLEL,
            [],
        )
    ],
}
# Differences that are not the launcher's: ParallelismConfig's checks when the Accelerator starts
# (tests/oracle/test_release_matrix.py::test_parallelism_findings_are_what_parallelism_config_raises).
NOT_LAUNCHER = {name for name, c in CHANGES.items() if c.file == "parallelism_config.py"}


def boundary_releases(name: str) -> list[str]:
    """The releases on both sides of each end of CHANGES[name]'s range."""
    minors = list(releases.RELEASES)
    out: list[str] = []
    for edge in (CHANGES[name].since, CHANGES[name].until):
        if edge is not None and edge in minors:
            i = minors.index(edge)
            out += [m for m in minors[max(i - 1, 0) : i + 1] if m not in out]
    return out


def requests() -> dict[str, list[tuple[str, str, list[str]]]]:
    """release -> [(change, config text, flags)], each launch once (the first change that asks for it)."""
    out: dict[str, list[tuple[str, str, list[str]]]] = {}
    for name, cases in CASES.items():
        for minor in boundary_releases(name):
            have = {(text, tuple(flags)) for _, text, flags in out.get(minor, [])}
            out.setdefault(minor, []).extend(
                (name, text, flags) for text, flags in cases if (text, tuple(flags)) not in have
            )
    return out


CWD = "/cwd"  # the launch's working directory as recorded (launch_env takes it as ``cwd``)


def launch(minor: str, cases: list[tuple[str, str, list[str]]]) -> list[dict[str, Any]]:
    """Each case through the release's own launcher (tests/oracle/harness.py), its temporary paths
    (the config files, the working directory) written as ``TMP`` and ``CWD``."""
    with tempfile.TemporaryDirectory() as tmp, tempfile.TemporaryDirectory() as cwd:
        reqs = []
        for i, (_, text, flags) in enumerate(cases):
            path = Path(tmp) / f"case{i}.{'json' if text.startswith('{') else 'yaml'}"
            path.write_text(text, encoding="utf-8")
            reqs.append({"argv": ["--config_file", str(path), *flags, "train.py"]})
        _, answers = matrix.run_harness(minor, reqs, cwd=cwd)
        text = json.dumps(answers).replace(json.dumps(cwd)[1:-1], CWD).replace(json.dumps(tmp)[1:-1], "TMP")
    return json.loads(text)


def record() -> list[dict[str, Any]]:
    out = []
    for minor, cases in sorted(requests().items(), key=lambda kv: [int(p) for p in kv[0].split(".")]):
        for (name, text, flags), answer in zip(cases, launch(minor, cases)):
            out.append({"change": name, "version": minor, "config": text, "flags": flags, "result": answer})
    return out


if __name__ == "__main__":
    records = record()
    RECORDS.write_text(json.dumps(records, indent=1) + "\n", encoding="utf-8")
    print(f"{RECORDS.name}: {len(records)} launches, {sum('error' in r['result'] for r in records)} refused")
