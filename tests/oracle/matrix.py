"""The release matrix: every accelerate minor release's own launcher against accelconf.

For each release in :data:`tests.oracle.releases.RELEASES` one harness process (tests/oracle/harness.py
with that release first on ``sys.path``) launches every config of the corpus and of
:func:`generated_configs` as a pure function. For each config the parent compares:

* ``to-env``: :func:`accelconf.accelerate.launch.launch_env` with ``version=V`` (mode, env, torchrun
  arguments, command) against the release's hand-off environment; both sides assume 8 physical
  cores, so the CPU thread formula is compared too;
* the verdict: ``accelconf validate --accelerate-version V`` has an error exactly where the release
  refuses to launch. Errors on configs the release launches are the training-time failures (and
  silent misbehaviour) validate adds on purpose; they are listed apart, by rule;
* ``to-cli``: the flags accelconf writes for V (:func:`accelconf.formats.cli.flags_for`), launched by
  the release without a config file, give the file's mode and env, except the variables the writer
  itself reports as lossy; where the writer reports an error the release must refuse the flags;
* ``fmt``: the text ``accelconf fmt --accelerate-version V`` writes
  (:func:`accelconf.accelerate.fmt.format_document`) launches to the file's mode and env;
* ``migrate``: the text ``accelconf migrate --to fsdp2 --accelerate-version V`` writes
  (:func:`accelconf.accelerate.migrate.migrate_document`) launches to the file's mode and env, except
  the variables of the keys migrate changes on purpose, each of which one of its notes names
  (:func:`migrate_explained`).

All requests of a release (the file, its flags, its fmt and migrate output) go to its one harness
process.

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
    "key-too-new (nested)": "a nested key newer than the release, with a value other than what the release does "
    "without it (fsdp_version: 2 before 1.6, a parallel size above 1...), is ignored by it and "
    "something else runs than written (Setting.too_new, Setting.before_since)",
}
# Refusals that depend on the machine that launches, not on the config: (start of accelerate's error, why).
MACHINE_DEPENDENT: tuple[tuple[str, str], ...] = (
    (
        "FileNotFoundError",
        "sagemaker_inputs_file / sagemaker_metrics_file are read from the working directory of the "
        "machine that launches",
    ),
)

# Variables the to-cli flags cannot give as the file does, in some release: the writer reports each
# as lossy (convert.lossy), and the flags are compared without them. var -> why.
CLI_LOSSY: dict[str, str] = {
    "ACCELERATE_CONFIG_DS_FIELDS": "the list of the file's deepspeed_config keys (DeepSpeed's JSON conflict check): "
    "without a file there is none",
    "ACCELERATE_FP8_BACKEND": "--fp8_backend accepts only lowercase (choices te/msamp, ao from 1.13) and exports it as "
    "given, a file upper case. 1.4-1.8: the flag is written (their Accelerator() does not "
    "read the variable; only DeepSpeed's MS-AMP test wants MSAMP); from 1.9 it is not, since "
    "Accelerator() raises on lowercase (FP8BackendType) and picks an installed backend without it",
    "ACCELERATE_FP8_OVERRIDE_*": "--fp8_override_linear_precision is parsed to 0/1 (str_to_bool); a file's list is "
    "exported as written (False, or one character of a string)",
    "ACCELERATE_FP8_ENABLE_FSDP_FLOAT8_ALL_GATHER": "from 1.13 a str_to_bool flag (exported as "
    "0/1) where a file exports True/False; before 1.13 no flag, yet a file's key is exported all "
    "the same (utils/launch.py setup_fp8_env copies every fp8_ argument) and nothing reads it",
    "FSDP_SHARDING_STRATEGY": "0.20-0.25: --fsdp_sharding_strategy has type=int (commands/launch.py), so the flags "
    "carry the strategy's number where the file passes its name through (which then fails in the plugin's int())",
    "FSDP_IGNORED_MODULES": "fsdp_ignored_modules has no launch flag (1.15 reads it from a file only)",
    "ACCELERATE_USE_PARALLELISM_CONFIG": "parallelism_config without FSDP (DeepSpeed sequence parallelism): "
    "--use_parallelism_config requires --use_fsdp",
    "PARALLELISM_CONFIG_*": "parallelism_config without FSDP (DeepSpeed "
    "sequence parallelism): --use_parallelism_config requires --use_fsdp",
    "ACCELERATE_USE_CPU": "a one-process MULTI_GPU file runs torchrun, the flags (no "
    "--multi_gpu below 2 processes) the simple launcher, which exports ACCELERATE_USE_CPU",
    "OMP_NUM_THREADS": "use_cpu: true under torchrun or DeepSpeed sets it from the launching machine's physical cores; "
    "--cpu would switch to the simple launcher, and a fixed --num_cpu_threads_per_process would "
    "hold for one machine only",
    "KMP_*": "1.8-1.12: the simple launcher of a one-process MULTI_GPU file's "
    "flags sets the MULTI_CPU thread variables (see ACCELERATE_USE_CPU)",
}


def cli_lossy_reason(var: str) -> str | None:
    """The named reason (CLI_LOSSY) why the flags may give a variable otherwise than the file."""
    import fnmatch

    return next((why for pat, why in CLI_LOSSY.items() if fnmatch.fnmatchcase(var, pat)), None)


# Variables fmt respells without changing what the release builds from them: fmt's output counts as
# launching the same when only these differ and the release's own plugins built from both
# environments are equal (harness ``plugins``). var -> why.
FMT_RESPELLED: dict[str, str] = {
    "FSDP_SHARDING_STRATEGY": "fmt writes the strategy name for a legacy number (1 -> FULL_SHARD) "
    "only from 0.26, where FullyShardedDataParallelPlugin reads both (utils/dataclasses.py)",
}


def corpus_configs() -> list[Path]:
    env = os.environ.get("ACCELCONF_CORPUS")
    where = Path(env) if env else CORPUS
    if not where.is_dir():
        return []
    return sorted(p for p in where.iterdir() if p.suffix in (".yaml", ".yml", ".json"))


def generated_configs(n: int = 60, seed: int = 13) -> list[tuple[str, str]]:
    """Configs drawn from the registry (deterministic): every paradigm, precision and section."""
    from accelconf.accelerate import registry
    from accelconf.formats.yamljson import dump_yaml

    rng = random.Random(seed)
    section_of = {
        "FSDP": "fsdp_config",
        "DEEPSPEED": "deepspeed_config",
        "MEGATRON_LM": "megatron_lm_config",
        "MULTI_CPU": "mpirun_config",
    }

    def value(s: registry.Setting) -> Any:
        if s.choices:
            return rng.choice(s.choices)
        return {
            "bool": rng.choice([True, False]),
            "boolish": rng.choice([True, False]),
            "int": rng.choice([1, 2, 4]),
            "float": rng.choice([0.5, 1.0]),
            "classlist": "LlamaDecoderLayer",
            "list": [rng.choice([True, False]) for _ in range(3)],
            "path": "hostfile",
        }.get(s.type, "x")

    def section(name: str) -> dict[str, Any]:
        cands = [
            s
            for s in registry.settings_in(name, registry.NEWEST)
            if not s.deprecated
            and not s.lost
            and s.key not in ("deepspeed_config_file", "mpirun_hostfile", "deepspeed_hostfile")
        ]
        keys = rng.sample(cands, k=min(len(cands), rng.randint(0, 5)))
        return {s.key: value(s) for s in keys}

    out = []
    for i in range(n):
        dtype = ["NO", "MULTI_CPU", "MULTI_GPU", "FSDP", "DEEPSPEED", "MEGATRON_LM"][i % 6]
        machines = rng.choice([1, 1, 1, 2])
        data: dict[str, Any] = {
            "compute_environment": "LOCAL_MACHINE",
            "distributed_type": dtype,
            "num_machines": machines,
            "num_processes": machines * rng.choice([1, 2, 4, 8]),
            "mixed_precision": rng.choice(["no", "fp16", "bf16", "bf16", "fp8"]),
        }
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
        if data["mixed_precision"] == "fp8" and rng.random() < 0.7:  # flags of every spelling (to-cli)
            data["fp8_config"] = section("fp8_config")
            data["fp8_config"]["backend"] = registry.FP8_BACKENDS[len(out) % len(registry.FP8_BACKENDS)]
        out.append((f"generated-{i:02d}-{dtype.lower()}.yaml", dump_yaml(data)))
    return out


@dataclass
class Plan:
    """What one config sends to a release's harness besides the file itself (built before the run)."""

    flags: list[str] | None = None  # to-cli flags (None: accelconf does not launch it)
    flag_findings: list[Any] = field(default_factory=list)
    fmt_path: str | None = None  # fmt's output, when it changes the text
    migrate_path: str | None = None  # migrate's output, when it changes the text
    migrate_notes: list[str] = field(default_factory=list)

    def requests(self, path: str) -> list[dict[str, Any]]:
        """Harness requests: the file (with its plugins when fmt's output is compared by them too), the
        flags, fmt's output, migrate's output."""
        out = [{"argv": ["--config_file", path, "train.py"], "plugins": bool(self.fmt_path)}]
        if self.flags is not None:
            out.append({"argv": self.flags + ["train.py"]})
        if self.fmt_path:
            out.append({"argv": ["--config_file", self.fmt_path, "train.py"], "plugins": True})
        if self.migrate_path:
            out.append({"argv": ["--config_file", self.migrate_path, "train.py"]})
        return out


@dataclass
class Case:
    name: str
    path: str
    launched: bool = False
    refused: str = ""
    env_exact: bool | None = None
    verdict_agrees: bool = True
    added_errors: list[str] = field(
        default_factory=list
    )  # validate errors (ON_PURPOSE) on a config the release launches
    machine_dependent: bool = False  # refused for a reason of the machine (MACHINE_DEPENDENT): not a verdict
    cli_same: bool | None = None  # to-cli flags launch the same (None: not checked)
    fmt_same: bool | None = None  # fmt's output launches the same (None: fmt changes nothing, or not launched)
    migrate_same: bool | None = (
        None  # migrate's output launches the same but for what its notes name (None: not checked)
    )
    cli_lossy: list[str] = field(default_factory=list)  # variables the flags change, each reported lossy by the writer
    fmt_respelled: list[str] = field(default_factory=list)  # variables fmt respells (FMT_RESPELLED), same plugins
    migrate_notes: list[str] = field(default_factory=list)
    detail: str = ""  # to-env and verdict mismatches
    rewrite_detail: str = ""  # to-cli, fmt and migrate mismatches


@dataclass
class ReleaseResult:
    minor: str
    version: str
    cases: list[Case]
    seconds: float
    requests: int = 0  # launches sent to the harness (the files, their flags, fmt and migrate output)

    @property
    def launched(self) -> int:
        return sum(c.launched for c in self.cases)

    @property
    def env_exact(self) -> int:
        return sum(bool(c.env_exact) for c in self.cases)

    @property
    def agreeing(self) -> int:
        return sum(c.verdict_agrees for c in self.cases)

    def count(self, attr: str) -> tuple[int, int]:
        """(same, checked) for cli_same, fmt_same or migrate_same."""
        values = [getattr(c, attr) for c in self.cases if getattr(c, attr) is not None]
        return sum(values), len(values)


def run_harness(minor: str, reqs: list[dict[str, Any]], cwd: str | None = None) -> tuple[str, list[dict[str, Any]]]:
    """One process for one release: every request (a command line) through its launcher (in ``cwd``
    when given, else a new temporary directory)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["ACCELERATE_ORACLE_PATH"] = str(releases.ensure(minor))
    if cwd is not None:
        env["ACCELCONF_ORACLE_CWD"] = cwd
    requests = "".join(json.dumps({**req, "cores": CORES}) + "\n" for req in reqs)
    proc = subprocess.run(
        [sys.executable, str(HERE / "harness.py")], input=requests, capture_output=True, text=True, env=env, timeout=600
    )
    if proc.returncode != 0:
        raise RuntimeError(f"accelerate {minor}: the harness failed: {proc.stderr[-2000:]}")
    lines = [json.loads(ln) for ln in proc.stdout.splitlines() if ln.startswith("{")]
    hello, answers = lines[0], lines[1:]
    if len(answers) != len(reqs):
        raise RuntimeError(
            f"accelerate {minor}: {len(answers)} answers for {len(reqs)} requests: {proc.stderr[-2000:]}"
        )
    return hello["version"], answers


def _error_class(f: Any) -> str:
    """A validate error's rule; a key-too-new error on a nested key (ignored, not refused) is its own class."""
    return f"{f.rule} (nested)" if f.rule == "key-too-new" and "." in f.key else f.rule


def compare(minor: str, name: str, path: str, theirs: dict[str, Any]) -> Case:
    from accelconf import formats
    from accelconf.accelerate.launch import LaunchError, launch_env
    from accelconf.api import validate_config
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


def plan(minor: str, path: str, out_dir: str) -> Plan:
    """The flags, fmt output and migrate output accelconf writes for one config and release V."""
    from accelconf import formats
    from accelconf.accelerate.fmt import format_document
    from accelconf.accelerate.launch import LaunchError
    from accelconf.accelerate.migrate import migrate_document
    from accelconf.errors import InputError
    from accelconf.formats.cli import flags_for
    from accelconf.text.document import load_file

    p = Plan()
    try:
        p.flags, p.flag_findings = flags_for(
            formats.read(Path(path).read_text(encoding="utf-8"), None, path, minor), minor
        )
    except (LaunchError, InputError):
        pass
    try:
        doc = load_file(path)
    except InputError:
        return p
    if not isinstance(doc.data, dict):
        return p
    for kind, (text, notes) in (
        ("fmt", (format_document(doc, minor).text, [])),
        ("migrate", migrate_document(doc, minor)),
    ):
        if kind == "migrate":
            p.migrate_notes = notes
        if text == doc.text:
            continue
        target = Path(out_dir) / kind / Path(path).name  # the same name: accelerate reads JSON by its suffix
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        if kind == "fmt":
            p.fmt_path = str(target)
        else:
            p.migrate_path = str(target)
    return p


def _differ(a: dict[str, Any], b: dict[str, Any]) -> set[str]:
    return {k for k in set(a["env"]) | set(b["env"]) if a["env"].get(k) != b["env"].get(k)}


def migrate_explained(var: str, notes: list[str]) -> bool:
    """A variable migrate changes on purpose: one of its notes names the key it comes from."""
    from accelconf.accelerate import registry

    s = registry.by_env(var)
    return s is not None and any(s.key in n or s.key.removeprefix("fsdp_") in n for n in notes)


def check_rewrites(case: Case, theirs: dict[str, Any], p: Plan, more: list[dict[str, Any]]) -> None:
    """to-cli, fmt and migrate on a config the release launches (``more``: the answers to p's requests)."""
    problems = []
    answers = iter(more)
    if p.flags is not None:
        from_flags = next(answers)
        if theirs["mode"] in ("torchrun", "deepspeed", "simple"):  # SageMaker and TPU jobs have no flag form here
            ok, why = cli_same(theirs, from_flags, p.flag_findings)
            case.cli_same = ok
            case.cli_lossy = sorted(_differ(theirs, from_flags)) if ok and "error" not in from_flags else []
            if not ok:
                problems.append(f"to-cli {p.flags}: {why}")
    elif theirs["mode"] in ("torchrun", "deepspeed", "simple"):
        case.cli_same = False
        problems.append("to-cli: accelconf writes no flags for a config the release launches")
    if p.fmt_path:
        ans = next(answers)
        differ = _differ(ans, theirs) if "error" not in ans else set()
        # a respelled value (FMT_RESPELLED) counts as the same where the release builds the same plugins from both
        same_plugins = not any("error" in v for v in theirs.get("plugins", {}).values()) and ans.get(
            "plugins"
        ) == theirs.get("plugins")
        case.fmt_respelled = sorted(differ) if differ and differ <= set(FMT_RESPELLED) and same_plugins else []
        case.fmt_same = (
            "error" not in ans and ans["mode"] == theirs["mode"] and (not differ or bool(case.fmt_respelled))
        )
        if not case.fmt_same:
            output = ans.get("error") or (ans["mode"], {k: (theirs["env"].get(k), ans["env"].get(k)) for k in differ})
            problems.append(f"fmt output: {output}{'' if same_plugins else ' (plugins differ)'}")
    if p.migrate_path:
        ans = next(answers)
        unexplained = (
            sorted(k for k in _differ(ans, theirs) if not migrate_explained(k, p.migrate_notes))
            if "error" not in ans
            else []
        )
        case.migrate_same = "error" not in ans and ans["mode"] == theirs["mode"] and not unexplained
        if not case.migrate_same:
            output = ans.get("error") or (
                ans["mode"],
                {k: (theirs["env"].get(k), ans["env"].get(k)) for k in unexplained},
            )
            problems.append(f"migrate output: {output} notes {p.migrate_notes}")
    case.rewrite_detail = "; ".join(problems)


def cli_same(theirs: dict[str, Any], from_flags: dict[str, Any], findings: list[Any]) -> tuple[bool, str]:
    """Whether to-cli flags (``findings``: the writer's) launch as the file did, and why not: the one
    rule of the release matrix and tests/oracle/test_oracle_launch.py (``theirs``, ``from_flags``: answers
    of the harness for the file and for the flags)."""
    if any(f.severity == "error" for f in findings):  # the writer says these flags cannot launch: check it
        return "error" in from_flags, "the writer reports an error, the release launches the flags"
    if "error" in from_flags:
        return False, f"the release refuses the flags: {from_flags['error'][:200]}"
    # a one-process MULTI_GPU file has no flag form (--multi_gpu needs 2 processes): the writer says
    # it drops --multi_gpu, and the flags then take the simple launcher
    no_multi_gpu = any(
        f.key == "distributed_type" and f.severity == "warning" and "fewer than 2 processes" in f.message
        for f in findings
    )
    want = "simple" if no_multi_gpu else theirs["mode"]
    lossy = {
        var
        for var in set(theirs["env"]) | set(from_flags["env"])
        for f in findings
        if f.rule == "convert.lossy" and var in f.message
    }
    differ = _differ(theirs, from_flags) - lossy
    if from_flags["mode"] != want or differ:
        return False, f"mode {from_flags['mode']} (want {want}), env (file, flags): " + str(
            {k: (theirs["env"].get(k), from_flags["env"].get(k)) for k in sorted(differ)}
        )
    return True, ""


def run_release(minor: str, configs: list[tuple[str, str]], tmp: str) -> ReleaseResult:
    start = time.monotonic()
    out_dir = os.path.join(tmp, minor)
    plans = [plan(minor, path, out_dir) for _, path in configs]
    requests = [p.requests(path) for p, (_, path) in zip(plans, configs)]
    version, answers = run_harness(minor, [req for reqs in requests for req in reqs])
    cases, i = [], 0
    for (name, path), p, reqs in zip(configs, plans, requests):
        theirs, more = answers[i], answers[i + 1 : i + len(reqs)]
        i += len(reqs)
        case = compare(minor, name, path, theirs)
        case.migrate_notes = p.migrate_notes
        if case.launched:
            check_rewrites(case, theirs, p, more)
        cases.append(case)
    return ReleaseResult(minor, version, cases, time.monotonic() - start, len(answers))


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
            return list(pool.map(lambda m: run_release(m, configs, tmp), minors))


def table(results: list[ReleaseResult], seconds: float, jobs: int) -> str:
    lines = [
        "# accelerate releases checked against their own launcher",
        "",
        "Written by `make versions` (`tests/oracle/matrix.py`); do not edit. Each release's launcher runs",
        "as a pure function (tests/oracle/harness.py) over the corpus and generated configs; accelconf answers",
        "with `--accelerate-version` set to that release. *Configs launched*: the release starts them",
        "(the others it refuses); *to-env exact*: of those, accelconf's environment, torchrun arguments and",
        "command are identical; *verdicts agreeing*: `validate` has an error exactly where the release",
        "refuses, except the errors it adds on purpose on configs the release launches (training-time",
        "failures and silently ignored settings: *errors added*, configs by rule) and refusals that depend",
        "on the machine (*machine*, not counted). *to-cli same env*: of the configs launched on the local",
        "launchers, the flags `to-cli --accelerate-version V` writes, launched by the release without the file, give",
        "the same mode and env but for the variables the writer reports as lossy (named below), or are refused",
        "where the writer reports an error. *fmt/migrate same env*: the output of `fmt --accelerate-version V`",
        "(configs it changes) launches to the same env, a respelled value counted only where the release's own",
        "plugins are equal; `migrate --to fsdp2` output (1.6 on) to the same env but for the variables of the",
        "keys one of its notes names. See docs/versions.md.",
        "",
        "| release | configs | launched | to-env exact | verdicts agreeing | errors added | machine "
        "| to-cli same env | fmt/migrate same env |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        added: dict[str, int] = {}
        for c in r.cases:
            for rule in c.added_errors:
                added[rule] = added.get(rule, 0) + 1
        extra = ", ".join(f"{k} {v}" for k, v in sorted(added.items())) or "-"
        machine = sum(c.machine_dependent for c in r.cases)
        (cli, cli_n), (fmt, fmt_n), (mig, mig_n) = r.count("cli_same"), r.count("fmt_same"), r.count("migrate_same")
        lines.append(
            f"| {r.version} | {len(r.cases)} | {r.launched} | {r.env_exact}/{r.launched} | "
            f"{r.agreeing - machine}/{len(r.cases) - machine} | {extra} | {machine} | {cli}/{cli_n} | "
            f"{fmt}/{fmt_n}, {mig}/{mig_n} |"
        )
    total = sum(len(r.cases) for r in results)
    requests = sum(r.requests for r in results)
    lines += ["", "Errors added on purpose:", ""] + [f"- `{k}`: {v}" for k, v in ON_PURPOSE.items()]
    lines += ["", "Machine-dependent refusals:", ""] + [f"- `{k}`: {v}" for k, v in MACHINE_DEPENDENT]
    used = sorted(
        {
            pat
            for r in results
            for c in r.cases
            for v in c.cli_lossy
            for pat in CLI_LOSSY
            if cli_lossy_reason(v) == CLI_LOSSY[pat]
        }
    )
    lines += ["", "Variables the flags cannot give as the file does (the writer reports them as lossy):", ""]
    lines += [f"- `{k}`: {CLI_LOSSY[k]}" for k in used]
    respelled = sorted({v for r in results for c in r.cases for v in c.fmt_respelled})
    lines += ["", "Variables fmt respells (the release builds the same plugins from both spellings):", ""]
    lines += [f"- `{k}`: {FMT_RESPELLED[k]}" for k in respelled]
    lines += [
        "",
        f"{len(results)} releases, {total} configs, {requests} "
        f"launches, {seconds:.0f} s wall time with {jobs} parallel jobs.",
        "",
    ]
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
                    print(
                        f"{r.minor} {c.name}: verdict_agrees={c.verdict_agrees} refused={c.refused[:120]!r} "
                        f"added={c.added_errors} {c.detail}"
                    )
                if c.rewrite_detail:
                    print(f"{r.minor} {c.name}: {c.rewrite_detail}")


if __name__ == "__main__":
    main()
