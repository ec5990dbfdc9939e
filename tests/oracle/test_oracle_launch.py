"""Conversions proven against accelerate's own launcher (the oracle in tests/oracle/harness.py).

For every corpus config that accelerate launches: ``to-env`` equals the oracle's environment delta;
the ``to-cli`` flags fed to the oracle without a file give the same environment (except variables
the writer itself reports as lossy); the plugins built by the ``to-kwargs`` snippet equal those
built from the oracle's environment. The same holds for configs generated from the registry with
hypothesis. Older accelerate versions are compared with fixtures recorded by
``tests/oracle/record_fixtures.py``.

``PYTHONPATH`` (DeepSpeed path) is the oracle's working directory on both sides (``cwd=``).
"""

from __future__ import annotations

import copy
import json
import os
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from accelconf import formats
from accelconf.accelerate import registry
from accelconf.accelerate.launch import LaunchError, argparse_default, flag_kind, launch_env, str_to_bool
from accelconf.errors import InputError
from accelconf.formats.cli import FLAG_CHOICES, flags_for
from accelconf.formats.kwargs import plugin_kwargs, snippet
from tests.oracle.matrix import MACHINE_DEPENDENT, cli_same

HERE = Path(__file__).resolve().parents[1]
CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus" / "accelerate"
FIXTURES = HERE / "data" / "oracle"
HARNESS = HERE / "oracle" / "harness.py"

try:
    import importlib.util

    HAVE_ACCELERATE = importlib.util.find_spec("accelerate") is not None
except Exception:  # pragma: no cover
    HAVE_ACCELERATE = False

pytestmark = pytest.mark.oracle


# Answers per request, for the whole process: accelerate's answer to one command line does not
# change, and a mutation run (make mutants) forks this process once per mutant, so a request seen
# before needs no new harness (starting one imports torch: seconds).
_HELLO: dict[str, dict[str, Any]] = {}
_ANSWERS: dict[tuple[str, str], dict[str, Any]] = {}
# One working directory per harness environment, for every harness this process starts: an answer
# kept from an earlier harness (the DeepSpeed PYTHONPATH holds its working directory) must agree
# with the answers of the next one.
_CWD: dict[str, str] = {}


class Oracle:
    """accelerate's launcher in a harness process (tests/oracle/harness.py), started on the first
    request whose answer is not known yet."""

    def __init__(self, env: dict[str, str] | None = None) -> None:
        self.env = env
        self._key = json.dumps(env, sort_keys=True)
        self._proc: subprocess.Popen[str] | None = None
        self.cwd: str | None = None

    @property
    def proc(self) -> subprocess.Popen[str]:
        if self._proc is None:
            if self._key not in _CWD:
                _CWD[self._key] = tempfile.mkdtemp(prefix="accelconf-cwd-")
            env = dict(os.environ if self.env is None else self.env, ACCELCONF_ORACLE_CWD=_CWD[self._key])
            self._proc = subprocess.Popen(
                [sys.executable, str(HARNESS)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                text=True,
                env=env,
            )
            assert self._proc.stdout is not None
            _HELLO[self._key] = json.loads(self._proc.stdout.readline())
        return self._proc

    @property
    def version(self) -> str:
        if self._key not in _HELLO:
            self.proc  # noqa: B018 - starting the harness reads its hello
        return str(_HELLO[self._key]["version"])

    def __call__(self, argv: list[str], plugins: bool = False, snippet: str | None = None) -> dict[str, Any]:
        request = json.dumps({"argv": argv, "plugins": plugins, "snippet": snippet})
        # a file named on the command line is part of the question (one temporary path may hold other texts)
        files = [Path(a).read_text(encoding="utf-8", errors="replace") for a in argv if Path(a).is_file()]
        known = (self._key, request + json.dumps(files))
        if known not in _ANSWERS:
            proc = self.proc
            assert proc.stdin is not None and proc.stdout is not None
            proc.stdin.write(request + "\n")
            proc.stdin.flush()
            _ANSWERS[known] = json.loads(proc.stdout.readline())
        ans = copy.deepcopy(_ANSWERS[known])
        self.cwd = ans.get("cwd", self.cwd)
        return ans

    def close(self) -> None:
        if self._proc is None:
            return
        if self._proc.stdin:
            self._proc.stdin.close()
        self._proc.wait(timeout=30)
        if self._proc.stdout:
            self._proc.stdout.close()


@pytest.fixture(scope="session")
def oracle():
    if not HAVE_ACCELERATE:
        pytest.skip("accelerate is not installed (pip install -e '.[test]'): the oracle cannot run")
    o = Oracle()
    yield o
    o.close()


def test_answers_kept_from_an_earlier_harness_agree_with_a_new_harness(tmp_path: Path) -> None:
    """Answers outlive their harness (_ANSWERS; a mutation run forks after they are kept): a new
    harness must answer in the same working directory, which DeepSpeed's PYTHONPATH holds."""
    if not HAVE_ACCELERATE:
        pytest.skip("accelerate is not installed (pip install -e '.[test]'): the oracle cannot run")
    path = tmp_path / "ds.yaml"
    path.write_text("distributed_type: DEEPSPEED\nnum_processes: 1\ndeepspeed_config:\n  zero_stage: 2\n")
    answers = []
    for argv in (
        ["--config_file", str(path), "train.py"],
        ["--use_deepspeed", "--zero_stage", "2", "--num_processes", "1", "train.py"],
    ):
        o = Oracle()  # one harness per request: the second request is answered by a new process
        try:
            answers.append(o(argv))
        finally:
            o.close()
    assert [a["mode"] for a in answers] == ["deepspeed", "deepspeed"]
    assert answers[0]["cwd"] == answers[1]["cwd"]
    assert answers[0]["env"]["PYTHONPATH"] == answers[1]["env"]["PYTHONPATH"] == answers[0]["cwd"]


def corpus_files() -> list[Path]:
    if not CORPUS.is_dir():
        return []
    return sorted(p for p in CORPUS.iterdir() if p.suffix in (".yaml", ".yml", ".json"))


def _read(path: Path):
    return formats.read(path.read_text(encoding="utf-8"), None, str(path), "1.15")


def _ours(cfg, oracle: Oracle) -> Any:
    return launch_env(cfg, version=oracle.version, cwd=oracle.cwd)


def _compare_launch(mine, theirs: dict[str, Any]) -> None:
    assert mine.mode == theirs["mode"]
    assert dict(sorted(mine.env.items())) == dict(sorted(theirs["env"].items()))
    for key, value in theirs["torchrun"].items():
        assert str(mine.torchrun.get(key)) == str(value), key
    assert (mine.cmd or None) == theirs["cmd"]


CORPUS_FILES = corpus_files()
# Fields the plugin fills from the environment only later (not in __post_init__): the snippet passes
# them explicitly, so the freshly built objects differ there by design.
LAZY = {("DeepSpeedPlugin", "transformer_moe_cls_names")}


@pytest.mark.skipif(not CORPUS_FILES, reason=f"no corpus at {CORPUS}")
@pytest.mark.parametrize("path", CORPUS_FILES, ids=lambda p: p.name[:70])
def test_corpus_to_env_to_cli_to_kwargs(path: Path, oracle: Oracle) -> None:
    theirs = oracle(["--config_file", str(path), "train.py"], plugins=True)
    cfg = _read(path)
    if "error" in theirs:
        # accelerate refuses it: so must we (TPU is not modelled by the oracle)
        with pytest.raises(LaunchError):
            _ours(cfg, oracle)
        return
    mine = _ours(cfg, oracle)
    if "skip" in theirs:
        assert mine.mode == theirs["mode"]
        return
    _compare_launch(mine, theirs)
    if mine.mode not in ("torchrun", "deepspeed", "simple"):
        return
    # to-cli without the file (the rule of the release matrix: lossy variables reported by the writer
    # aside, a writer error means refused flags, a one-process MULTI_GPU file takes the simple launcher)
    flags, findings = flags_for(cfg, oracle.version)
    from_flags = oracle(flags + ["train.py"])
    ok, why = cli_same(theirs, from_flags, findings)
    assert ok, (why, flags)
    if any(f.severity == "error" for f in findings):
        return
    # to-kwargs: the same plugin objects
    classes, acc, _ = plugin_kwargs(mine.env, oracle.version)
    built = oracle(["--config_file", str(path), "train.py"], snippet=snippet(classes, acc))["snippet"]
    if "error" in built and built["error"].startswith("ImportError"):
        # FP8 recipe kwargs need their library (TransformerEngine, torchao, MS-AMP), absent on a CPU test machine
        return
    if "error" in built:  # the snippet stops where the env-built plugin fails too (e.g. a missing DeepSpeed JSON)
        assert built["error"] in [f.get("error") for f in theirs["plugins"].values()], built
        return
    for cls, fields in theirs["plugins"].items():
        assert cls in built, cls
        if "error" in fields:
            continue
        mine_fields = {k: v for k, v in built[cls]["fields"].items() if (cls, k) not in LAZY}
        assert mine_fields == {k: v for k, v in fields["fields"].items() if (cls, k) not in LAZY}, cls


def test_flag_kinds_and_defaults_match_accelerates_parser(oracle: Oracle) -> None:
    """The argparse emulation (action, type, default of every registry flag) against the real parser."""
    assert oracle.proc.stdin is not None and oracle.proc.stdout is not None
    oracle.proc.stdin.write(json.dumps({"parser": True}) + "\n")
    oracle.proc.stdin.flush()
    real = json.loads(oracle.proc.stdout.readline())["parser"]
    names = {"_StoreTrueAction": "store_true"}
    types = {
        "int": "int",
        "float": "float",
        "bool": "bool",
        "str_to_bool": "str_to_bool",
        "<lambda>": "list3",
        "str": "str",
        "None": "str",
    }
    for s in registry.SETTINGS:
        if not s.flag or not s.exists_in("1.15") or s.namespace not in real:
            continue
        action, typ, default, choices = real[s.namespace]
        if choices:
            assert sorted(FLAG_CHOICES.get(s.path, ())) == sorted(str(c) for c in choices), s.path
        if action == "_StoreConstAction":  # --no_tpu_cluster shares the dest of --tpu_cluster
            continue
        want = names.get(action) or types[typ]
        assert flag_kind(s) == want, s.path
        d = argparse_default(s)
        if flag_kind(s) == "str_to_bool" and default.startswith(
            "'"
        ):  # argparse converts a string default with its type
            assert d == str_to_bool(default[1:-1]), (s.path, d, default)
            continue
        assert repr(d) == default or (isinstance(d, tuple) and default.startswith("(")), (s.path, d, default)


@pytest.mark.parametrize(
    "flags",
    [
        [
            "--mixed_precision",
            "fp8",
            "--fp8_backend",
            "te",
            "--fp8_override_linear_precision",
            "false,true,0",
            "--fp8_pad_inner_dim",
            "0",
            "--num_processes",
            "1",
        ],
        ["--multi_gpu", "--num_processes", "2", "--num_cpu_threads_per_process", "4", "--mixed_precision", "bf16"],
        # --same_network (a flag a file cannot set): torchrun gets --master_addr/--master_port, not a
        # rendezvous endpoint
        [
            "--multi_gpu",
            "--num_processes",
            "16",
            "--num_machines",
            "2",
            "--machine_rank",
            "1",
            "--main_process_ip",
            "10.0.0.1",
            "--main_process_port",
            "29400",
            "--same_network",
        ],
        ["--multi_gpu", "--num_processes", "2", "--dynamo_backend", "inductor", "--dynamo_mode", "max-autotune"],
        ["--multi_gpu", "--num_processes", "2", "--enable_cpu_affinity"],  # a flag a file cannot set; exported as "1"
        ["--cpu", "--num_processes", "1", "--enable_cpu_affinity"],
        ["--use_deepspeed", "--num_processes", "2", "--zero_stage", "2", "--enable_cpu_affinity"],
        # not refused: accelerate tests the flag's string "1" against the integer 1
        ["--use_fsdp", "--fsdp_version", "1", "--num_processes", "2", "--use_parallelism_config"],
    ],
)
def test_flags_read_in_file_spelling_launch_as_accelerate_parses_them(flags: list[str], oracle: Oracle) -> None:
    """The cli reader keeps 0/1 flags as booleans; launching them must still give accelerate's "0"/"1"."""
    theirs = oracle(flags + ["train.py"])
    cfg = formats.read(shlex.join(flags), "cli", "<flags>", "1.15")
    _compare_launch(launch_env(cfg, version=oracle.version, cwd=oracle.cwd), theirs)


LOCAL = "compute_environment: LOCAL_MACHINE\n"
FILE_CASES = {
    "debug-torchrun": LOCAL + "distributed_type: MULTI_GPU\nnum_processes: 2\ndebug: true\n",
    "debug-simple": LOCAL + "distributed_type: 'NO'\nnum_processes: 1\ndebug: true\n",
    "debug-deepspeed": LOCAL
    + "distributed_type: DEEPSPEED\nnum_processes: 2\ndebug: true\ndeepspeed_config:\n  zero_stage: 2\n",
    "tpu": LOCAL + "distributed_type: XLA\nnum_processes: 8\ndebug: true\nmain_training_function: train\n",
    "tpu-pod": LOCAL + "distributed_type: XLA\nnum_processes: 8\ntpu_use_cluster: true\ntpu_name: pod\ntpu_zone: z\n"
    "main_training_function: train\n",
    "gpu-ids-one": LOCAL + "distributed_type: MULTI_GPU\nnum_processes: 2\ngpu_ids: '0'\n",
    "gpu-ids-one-of-two-machines": LOCAL
    + "distributed_type: MULTI_GPU\nnum_processes: 2\nnum_machines: 2\nmachine_rank: 0\n"
    "main_process_ip: 10.0.0.1\nmain_process_port: 29500\ngpu_ids: '0'\n",
    "gpu-ids-int": LOCAL + "distributed_type: MULTI_GPU\nnum_processes: 2\ngpu_ids: 0\n",
    "ds-exclusion": LOCAL
    + "distributed_type: DEEPSPEED\nnum_machines: 2\nnum_processes: 16\nmain_process_ip: 10.0.0.1\n"
    "main_process_port: 29500\ndeepspeed_config:\n  zero_stage: 2\n  deepspeed_multinode_launcher: pdsh\n"
    "  deepspeed_hostfile: hostfile\n  deepspeed_exclusion_filter: host3\n  deepspeed_inclusion_filter: host1@host2\n",
    "parallelism-unknown-key-only": LOCAL
    + "distributed_type: FSDP\nnum_processes: 2\nfsdp_config:\n  fsdp_version: 2\n"
    "parallelism_config:\n  parallelism_config_made_up: 2\n",
    "no-process-count": LOCAL + "distributed_type: 'NO'\nmixed_precision: bf16\nuse_cpu: true\n",
    "no-type-two-processes": LOCAL + "distributed_type: 'NO'\nnum_processes: 2\nuse_cpu: true\n",
    "no-distributed-type": LOCAL + "num_processes: 2\n",
    "dynamo-backend-unknown": LOCAL
    + "distributed_type: MULTI_GPU\nnum_processes: 2\ndynamo_config:\n  dynamo_backend: BOGUS\n",
    "sagemaker-key-in-a-local-config": LOCAL
    + "distributed_type: MULTI_GPU\nnum_processes: 2\nec2_instance_type: ml.p3.2xlarge\n",
    "sagemaker-gpu-ids": "compute_environment: AMAZON_SAGEMAKER\ndistributed_type: DATA_PARALLEL\n"
    "ec2_instance_type: ml.p3.16xlarge\ngpu_ids: '0,1'\niam_role_name: role\nmixed_precision: 'no'\nnum_machines: 1\n"
    "profile: default\npy_version: py38\npytorch_version: 1.10.2\nregion: us-east-1\ntransformers_version: 4.17.0\n"
    "use_cpu: false\n",
}


@pytest.mark.parametrize("name", sorted(FILE_CASES))
def test_config_files_launch_as_accelerate_launches_them(name: str, oracle: Oracle, tmp_path: Path) -> None:
    """Paths the corpus does not reach (debug on each launcher, TPU pods, gpu_ids refusals, DeepSpeed
    host filters): the same launch, or the same refusal with accelerate's own message."""
    path = tmp_path / "cfg.yaml"
    path.write_text(FILE_CASES[name], encoding="utf-8")
    theirs = oracle(["--config_file", str(path), "train.py"])
    cfg = formats.read(FILE_CASES[name], "yaml", "cfg.yaml", oracle.version)
    if "error" in theirs:
        with pytest.raises(LaunchError) as refused:
            launch_env(cfg, version=oracle.version, cwd=oracle.cwd)
        # accelconf's message leaves out the file's path (its own error line names the file)
        assert refused.value.message == theirs["error"].split(": ", 1)[1].replace(f" at {path}", "")
        return
    _compare_launch(launch_env(cfg, version=oracle.version, cwd=oracle.cwd), theirs)


@pytest.mark.parametrize(
    "flags",
    [
        ["--cpu", "--multi_gpu", "--num_processes", "2"],
        ["--multi_gpu", "--num_processes", "1"],
        ["--multi_gpu", "--num_processes", "2", "--use_parallelism_config"],
    ],
)
def test_flag_combinations_accelerate_refuses_are_refused_with_its_message(flags: list[str], oracle: Oracle) -> None:
    theirs = oracle(flags + ["train.py"])
    assert "error" in theirs, flags
    with pytest.raises(LaunchError) as refused:
        launch_env(
            formats.read(shlex.join(flags), "cli", "<flags>", oracle.version), version=oracle.version, cwd=oracle.cwd
        )
    assert refused.value.message == theirs["error"].split(": ", 1)[1]


def test_omp_num_threads_read_from_env_launches_again(oracle: Oracle) -> None:
    """env -> cli: OMP_NUM_THREADS comes back as --num_cpu_threads_per_process, and launches the same env."""
    theirs = oracle(
        ["--num_processes", "1", "--num_cpu_threads_per_process", "4", "--mixed_precision", "bf16", "train.py"]
    )
    env_text = "".join(f"{k}={v}\n" for k, v in theirs["env"].items())
    cfg = formats.read(env_text, "env", "<env>", "1.15")
    assert formats.write(cfg, "env", "1.15")[0].count("OMP_NUM_THREADS=4") == 1
    flags, _ = flags_for(cfg, oracle.version)
    again = oracle(flags + ["train.py"])
    assert again["env"] == theirs["env"], flags


def test_precedence_fixtures_match_older_accelerate() -> None:
    """1.4 lets nested config keys beat explicit flags; 1.5+ lets explicit flags win (recorded fixtures)."""
    data = json.loads((FIXTURES / "precedence.json").read_text())
    assert {case["version"] for case in data} >= {"1.4.0", "1.15.0"}
    results = {}
    for case in data:
        cfg = formats.read(case["config"], "yaml", "cfg.yaml", case["version"])
        cli = formats.read(shlex.join(case["flags"]), "cli", "<flags>", case["version"])
        mine = launch_env(cfg, version=case["version"], cli_overrides=cli)
        expected = case["result"]
        assert mine.mode == expected["mode"]
        assert mine.env == expected["env"], case["version"]
        results[case["version"]] = mine.env
    assert results["1.4.0"]["FSDP_STATE_DICT_TYPE"] == "SHARDED_STATE_DICT"
    assert results["1.15.0"]["FSDP_STATE_DICT_TYPE"] == "FULL_STATE_DICT"


def test_corpus_fixtures_match_older_accelerate() -> None:
    """Every corpus config through accelerate 1.4 (recorded) equals launch_env(version='1.4')."""
    path = FIXTURES / "corpus-1.4.0.json"
    data = json.loads(path.read_text())
    checked = 0
    for name, expected in data.items():
        src = CORPUS / name
        if not src.exists():
            continue
        cfg = formats.read(src.read_text(encoding="utf-8"), None, str(src), "1.4")
        if expected.get("error", "").startswith(tuple(m for m, _ in MACHINE_DEPENDENT)):
            continue  # refused for a reason of the recording machine (a missing sagemaker_inputs_file)
        if "error" in expected:
            with pytest.raises(LaunchError):
                launch_env(cfg, version="1.4", cwd=expected.get("cwd"))
            continue
        mine = launch_env(cfg, version="1.4", cwd=expected["cwd"])
        if "skip" in expected:
            assert mine.mode == expected["mode"]
            continue
        assert mine.mode == expected["mode"], name
        assert mine.env == expected["env"], name
        checked += 1
    if not checked:
        pytest.skip(f"no corpus at {CORPUS}")


BOUNDARIES = json.loads((FIXTURES / "boundaries.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("record", BOUNDARIES, ids=lambda r: f"{r['change']}@{r['version']}")
def test_launch_matches_the_releases_on_both_sides_of_each_change(record: dict[str, Any]) -> None:
    """Each launcher difference between releases (CHANGES), as the releases around its boundaries
    launched it (tests/oracle/boundaries.py records them; the release matrix checks the records)."""
    from tests.oracle.matrix import CORES

    version, theirs = record["version"], record["result"]
    text, flags = record["config"], record["flags"]

    def launch() -> Any:
        cfg = formats.read(text, "json" if text.startswith("{") else "yaml", "cfg", version)
        cli = formats.read(shlex.join(flags), "cli", "<flags>", version) if flags else None
        return launch_env(cfg, version=version, cli_overrides=cli, cwd=theirs.get("cwd"), physical_cores=CORES)

    if "error" in theirs:
        with pytest.raises((LaunchError, InputError)) as refused:
            launch()
        if theirs["error"].startswith(("AssertionError:", "TypeError: expected str")):  # accelerate's message, kept
            assert refused.value.message.split(": ", 1)[-1] == theirs["error"].split(": ", 1)[1]
        return
    _compare_launch(launch(), theirs)


# -- hypothesis: configs drawn from the registry ---------------------------------------------------

from hypothesis import HealthCheck, event, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

SECTION_OF_TYPE = {"FSDP": "fsdp_config", "DEEPSPEED": "deepspeed_config", "MEGATRON_LM": "megatron_lm_config"}


def _value_strategy(s: registry.Setting) -> st.SearchStrategy[Any]:
    if s.choices:
        return st.sampled_from(s.choices)
    return {
        "bool": st.booleans(),
        "boolish": st.sampled_from([True, False, "true", "false"]),
        "int": st.integers(1, 64),
        "float": st.sampled_from([0.5, 1.0, 2.0]),
        "classlist": st.sampled_from(["LlamaDecoderLayer", "GPT2Block,T5Block"]),
        "list": st.tuples(st.booleans(), st.booleans(), st.booleans()).map(list),
    }.get(s.type, st.sampled_from(["x", "a_b"]))


def _section_strategy(section: str) -> st.SearchStrategy[dict[str, Any]]:
    candidates = [s for s in registry.settings_in(section, "1.15") if not s.deprecated]
    return st.dictionaries(st.sampled_from([s.key for s in candidates]), st.none(), max_size=6).flatmap(
        lambda keys: st.fixed_dictionaries({k: _value_strategy(registry.get(section, k)) for k in keys})
    )  # type: ignore[arg-type]


@st.composite
def configs(draw: st.DrawFn) -> dict[str, Any]:
    dtype = draw(st.sampled_from(["NO", "MULTI_CPU", "MULTI_GPU", "FSDP", "DEEPSPEED", "MEGATRON_LM"]))
    machines = draw(st.sampled_from([1, 1, 2]))
    data: dict[str, Any] = {
        "compute_environment": "LOCAL_MACHINE",
        "distributed_type": dtype,
        "num_machines": machines,
        "num_processes": machines * draw(st.sampled_from([1, 2, 4, 8])),
        "mixed_precision": draw(st.sampled_from(["no", "fp16", "bf16", "fp8"])),
    }
    if machines > 1:
        data.update(
            main_process_ip="10.0.0.1", main_process_port=29400, machine_rank=draw(st.integers(0, machines - 1))
        )
    if draw(st.booleans()):
        data["gpu_ids"] = draw(st.sampled_from(["all", "0,1", "0,1,2,3"]))
    for key in ("debug", "use_cpu", "same_network"):
        if draw(st.booleans()):
            data[key] = draw(st.booleans())
    if dtype in SECTION_OF_TYPE:
        data[SECTION_OF_TYPE[dtype]] = draw(_section_strategy(SECTION_OF_TYPE[dtype]))
    if draw(st.booleans()):
        data["dynamo_config"] = draw(_section_strategy("dynamo_config"))
    if data["mixed_precision"] == "fp8":
        data["fp8_config"] = draw(_section_strategy("fp8_config"))
    if dtype == "FSDP" and draw(st.booleans()):
        data["fsdp_config"]["fsdp_version"] = 2
        data["parallelism_config"] = draw(_section_strategy("parallelism_config"))
    return data


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
@given(data=configs())
def test_generated_configs_to_env_and_to_cli(data: dict[str, Any], oracle: Oracle, tmp_path_factory) -> None:
    from accelconf.formats.yamljson import dump_yaml

    text = dump_yaml(data)
    path = tmp_path_factory.mktemp("gen") / "cfg.yaml"
    path.write_text(text)
    cfg = formats.read(text, "yaml", str(path), "1.15")
    theirs = oracle(["--config_file", str(path), "train.py"])
    event(f"oracle: {theirs['error'].split(':')[0] if 'error' in theirs else theirs['mode']}")
    if "error" in theirs:
        with pytest.raises(LaunchError):
            _ours(cfg, oracle)
        return
    mine = _ours(cfg, oracle)
    _compare_launch(mine, theirs)
    flags, findings = flags_for(cfg, oracle.version)
    from_flags = oracle(flags + ["train.py"])
    ok, why = cli_same(theirs, from_flags, findings)
    assert ok, (why, text, flags)
