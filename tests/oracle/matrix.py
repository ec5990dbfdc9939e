"""The release matrix: every accelerate minor release's own launcher against accelconf.

For each release in :data:`tests.oracle.releases.RELEASES` one harness process (tests/oracle/harness.py
with that release first on ``sys.path``) launches every config of the corpus and of
:func:`generated_configs` as a pure function. For each config the parent compares:

* ``to-env``: :func:`accelconf.accelerate.launch.launch_env` with ``version=V`` (mode, env, torchrun
  arguments, command) against the release's hand-off environment; both sides assume 8 physical
  cores, so the CPU thread formula is compared too;
* the verdict: ``accelconf validate --accelerate-version V`` has an error exactly where the release
  refuses to launch. Errors on configs the release launches are the training-time failures (and
  silent misbehaviour) validate adds on purpose; they are listed apart, by rule.

    python tests/oracle/matrix.py                      # every release, summary on stdout
    python tests/oracle/matrix.py --write bench/VERSIONS.md --jobs 2
    python tests/oracle/matrix.py 1.4 0.20 --verbose   # some releases, each mismatch printed
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.oracle import releases  # noqa: E402

CORPUS = ROOT.parent / "shared" / "corpus" / "accelerate"
CORES = 8  # physical cores both sides assume (the harness patches psutil.cpu_count)

# Errors validate reports on configs the release does launch, on purpose: the launch succeeds but
# training fails, or a setting is silently not applied. rule -> why.
ON_PURPOSE: dict[str, str] = {
    "sharding-strategy-int": "0.20-0.25: FullyShardedDataParallelPlugin calls int() on FSDP_SHARDING_STRATEGY, so a "
                             "strategy name fails when training starts",
    "key-too-new (nested)": "a nested key newer than the release (fsdp_version: 2 before 1.6, parallelism sizes before "
                            "1.10...) is ignored by it and something else runs than written (Setting.too_new)",
}
# Refusals that depend on the machine that launches, not on the config: (start of accelerate's error, why).
MACHINE_DEPENDENT: tuple[tuple[str, str], ...] = (
    ("FileNotFoundError", "sagemaker_inputs_file / sagemaker_metrics_file are read from the working directory of the "
                          "machine that launches"),
)


def corpus_configs() -> list[Path]:
    env = os.environ.get("ACCELCONF_CORPUS")
    where = Path(env) if env else CORPUS
    if not where.is_dir():
        return []
    return sorted(p for p in where.iterdir() if p.suffix in (".yaml", ".yml", ".json"))


def generated_configs(n: int = 40, seed: int = 13) -> list[tuple[str, str]]:
    """Configs drawn from the registry (deterministic): every paradigm, precision and section."""
    from accelconf.accelerate import registry
    from accelconf.formats.yamljson import dump_yaml

    rng = random.Random(seed)
    section_of = {"FSDP": "fsdp_config", "DEEPSPEED": "deepspeed_config", "MEGATRON_LM": "megatron_lm_config",
                  "MULTI_CPU": "mpirun_config"}

    def value(s: registry.Setting) -> Any:
        if s.choices:
            return rng.choice(s.choices)
        return {"bool": rng.choice([True, False]), "boolish": rng.choice([True, False]), "int": rng.choice([1, 2, 4]),
                "float": rng.choice([0.5, 1.0]), "classlist": "LlamaDecoderLayer",
                "list": [rng.choice([True, False]) for _ in range(3)], "path": "hostfile"}.get(s.type, "x")

    def section(name: str) -> dict[str, Any]:
        cands = [s for s in registry.settings_in(name, registry.NEWEST) if not s.deprecated and not s.lost
                 and s.key not in ("deepspeed_config_file", "mpirun_hostfile", "deepspeed_hostfile")]
        keys = rng.sample(cands, k=min(len(cands), rng.randint(0, 5)))
        return {s.key: value(s) for s in keys}

    out = []
    for i in range(n):
        dtype = ["NO", "MULTI_CPU", "MULTI_GPU", "FSDP", "DEEPSPEED", "MEGATRON_LM"][i % 6]
        machines = rng.choice([1, 1, 1, 2])
        data: dict[str, Any] = {"compute_environment": "LOCAL_MACHINE", "distributed_type": dtype, "num_machines": machines,
                                "num_processes": machines * rng.choice([1, 2, 4, 8]),
                                "mixed_precision": rng.choice(["no", "fp16", "bf16", "bf16", "fp8"])}
        if dtype == "MULTI_GPU" and data["num_processes"] < 2:
            data["num_processes"] = 2
        if machines > 1:
            data.update(main_process_ip="10.0.0.1", main_process_port=29400, machine_rank=rng.randrange(machines))
        if rng.random() < 0.3:
            data["gpu_ids"] = rng.choice(["all", "0,1", "0,1,2,3"])
        if rng.random() < 0.3:
            data["use_cpu"] = rng.choice([True, False])
        if rng.random() < 0.3:
            data["debug"] = rng.choice([True, False])
        if dtype in section_of:
            data[section_of[dtype]] = section(section_of[dtype])
            if dtype == "FSDP":  # every release knows these spellings
                data["fsdp_config"].pop("fsdp_version", None)
        if rng.random() < 0.4:
            data["dynamo_config"] = {"dynamo_backend": rng.choice(["NO", "INDUCTOR", "EAGER"])}
        out.append((f"generated-{i:02d}-{dtype.lower()}.yaml", dump_yaml(data)))
    return out


@dataclass
class Case:
    name: str
    path: str
    launched: bool = False
    refused: str = ""
    env_exact: bool | None = None
    verdict_agrees: bool = True
    added_errors: list[str] = field(default_factory=list)  # validate errors (ON_PURPOSE) on a config the release launches
    machine_dependent: bool = False  # refused for a reason of the machine (MACHINE_DEPENDENT): not a verdict
    detail: str = ""


@dataclass
class ReleaseResult:
    minor: str
    version: str
    cases: list[Case]
    seconds: float

    @property
    def launched(self) -> int:
        return sum(c.launched for c in self.cases)

    @property
    def env_exact(self) -> int:
        return sum(bool(c.env_exact) for c in self.cases)

    @property
    def agreeing(self) -> int:
        return sum(c.verdict_agrees for c in self.cases)


def run_harness(minor: str, paths: list[str]) -> tuple[str, list[dict[str, Any]]]:
    """One process for one release: every config through its launcher."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["ACCELERATE_ORACLE_PATH"] = str(releases.ensure(minor))
    requests = "".join(json.dumps({"argv": ["--config_file", p, "train.py"], "cores": CORES}) + "\n" for p in paths)
    proc = subprocess.run([sys.executable, str(HERE / "harness.py")], input=requests, capture_output=True, text=True,
                          env=env, timeout=600)
    if proc.returncode != 0:
        raise RuntimeError(f"accelerate {minor}: the harness failed: {proc.stderr[-2000:]}")
    lines = [json.loads(ln) for ln in proc.stdout.splitlines() if ln.startswith("{")]
    hello, answers = lines[0], lines[1:]
    if len(answers) != len(paths):
        raise RuntimeError(f"accelerate {minor}: {len(answers)} answers for {len(paths)} configs: {proc.stderr[-2000:]}")
    return hello["version"], answers


def _error_class(f: Any) -> str:
    """A validate error's rule; a key-too-new error on a nested key (ignored, not refused) is its own class."""
    return f"{f.rule} (nested)" if f.rule == "key-too-new" and "." in f.key else f.rule


def compare(minor: str, name: str, path: str, theirs: dict[str, Any]) -> Case:
    from accelconf import formats
    from accelconf.api import validate_config
    from accelconf.accelerate.launch import LaunchError, launch_env
    from accelconf.errors import InputError

    case = Case(name, path)
    text = Path(path).read_text(encoding="utf-8")
    errors = sorted({_error_class(f) for f in validate_config(path, accelerate_version=minor) if f.severity == "error"})
    refused = "error" in theirs
    case.launched = not refused
    case.refused = theirs.get("error", "")
    case.machine_dependent = refused and case.refused.startswith(tuple(m for m, _ in MACHINE_DEPENDENT))
    if refused:
        case.verdict_agrees = bool(errors) or case.machine_dependent
    else:
        case.added_errors = errors
        case.verdict_agrees = all(rule in ON_PURPOSE for rule in errors)
        if not case.verdict_agrees:
            case.detail = f"validate errors {errors} on a config accelerate {minor} launches"
    try:
        cfg = formats.read(text, None, path, minor)
        mine = launch_env(cfg, version=minor, cwd=theirs.get("cwd"), physical_cores=CORES)
    except (LaunchError, InputError) as exc:
        mine, mine_error = None, getattr(exc, "message", str(exc))
    if refused:
        case.env_exact = None
        if not case.verdict_agrees:
            case.detail = f"accelerate refuses ({theirs['error'][:160]}), validate has no error"
        return case
    if mine is None:
        case.env_exact = False
        case.detail = f"accelconf refuses ({mine_error[:160]}), accelerate launches"
        return case
    problems = []
    if mine.mode != theirs["mode"]:
        problems.append(f"mode {mine.mode} != {theirs['mode']}")
    if mine.env != theirs["env"]:
        keys = sorted(set(mine.env) | set(theirs["env"]))
        diff = {k: (mine.env.get(k), theirs["env"].get(k)) for k in keys if mine.env.get(k) != theirs["env"].get(k)}
        problems.append(f"env (accelconf, accelerate): {diff}")
    for key, value in theirs.get("torchrun", {}).items():
        if str(mine.torchrun.get(key)) != str(value):
            problems.append(f"torchrun {key}: {mine.torchrun.get(key)!r} != {value!r}")
    if (mine.cmd or None) != theirs.get("cmd"):
        problems.append(f"cmd {mine.cmd} != {theirs.get('cmd')}")
    case.env_exact = not problems
    case.detail = "; ".join([case.detail] * bool(case.detail) + problems)
    return case


def run_release(minor: str, configs: list[tuple[str, str]]) -> ReleaseResult:
    start = time.monotonic()
    version, answers = run_harness(minor, [p for _, p in configs])
    cases = [compare(minor, name, path, a) for (name, path), a in zip(configs, answers)]
    return ReleaseResult(minor, version, cases, time.monotonic() - start)


def all_configs(tmp: str) -> list[tuple[str, str]]:
    out = [(p.name, str(p)) for p in corpus_configs()]
    for name, text in generated_configs():
        path = os.path.join(tmp, name)
        Path(path).write_text(text, encoding="utf-8")
        out.append((name, path))
    return out


def run_matrix(minors: list[str], jobs: int = 2) -> list[ReleaseResult]:
    with tempfile.TemporaryDirectory(prefix="accelconf-matrix-") as tmp:
        configs = all_configs(tmp)
        for minor in minors:  # install first (pip is not safe to run twice at once)
            releases.ensure(minor)
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            return list(pool.map(lambda m: run_release(m, configs), minors))


def table(results: list[ReleaseResult], seconds: float, jobs: int) -> str:
    lines = ["# accelerate releases checked against their own launcher", "",
             "Written by `make versions` (`tests/oracle/matrix.py`); do not edit. Each release's launcher runs",
             "as a pure function (tests/oracle/harness.py) over the corpus and generated configs; accelconf answers",
             "with `--accelerate-version` set to that release. *Configs launched*: the release starts them",
             "(the others it refuses); *to-env exact*: of those, accelconf's environment, torchrun arguments and",
             "command are identical; *verdicts agreeing*: `validate` has an error exactly where the release",
             "refuses, except the errors it adds on purpose on configs the release launches (training-time",
             "failures and silently ignored settings: *errors added*, configs by rule) and refusals that depend",
             "on the machine (*machine*, not counted). See README \"Versions: every release against its own code\".", "",
             "| release | configs | launched | to-env exact | verdicts agreeing | errors added | machine |",
             "|---|---|---|---|---|---|---|"]
    for r in results:
        added: dict[str, int] = {}
        for c in r.cases:
            for rule in c.added_errors:
                added[rule] = added.get(rule, 0) + 1
        extra = ", ".join(f"{k} {v}" for k, v in sorted(added.items())) or "-"
        machine = sum(c.machine_dependent for c in r.cases)
        lines.append(f"| {r.version} | {len(r.cases)} | {r.launched} | {r.env_exact}/{r.launched} | "
                     f"{r.agreeing - machine}/{len(r.cases) - machine} | {extra} | {machine} |")
    total = sum(len(r.cases) for r in results)
    lines += ["", "Errors added on purpose:", ""] + [f"- `{k}`: {v}" for k, v in ON_PURPOSE.items()]
    lines += ["", "Machine-dependent refusals:", ""] + [f"- `{k}`: {v}" for k, v in MACHINE_DEPENDENT]
    lines += ["", f"{len(results)} releases, {total} launches, {seconds:.0f} s wall time with {jobs} parallel jobs.", ""]
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("minors", nargs="*", help="releases such as 1.4 (default: all)")
    ap.add_argument("--write", help="write the markdown table here")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--verbose", action="store_true", help="print every mismatch")
    args = ap.parse_args()
    minors = args.minors or list(releases.RELEASES)
    start = time.monotonic()
    results = run_matrix(minors, args.jobs)
    seconds = time.monotonic() - start
    text = table(results, seconds, args.jobs)
    if args.write:
        Path(args.write).write_text(text, encoding="utf-8")
    print(text)
    if args.verbose:
        for r in results:
            for c in r.cases:
                if c.detail:
                    print(f"{r.minor} {c.name}: verdict_agrees={c.verdict_agrees} refused={c.refused[:120]!r} "
                          f"added={c.added_errors} {c.detail}")


if __name__ == "__main__":
    main()
