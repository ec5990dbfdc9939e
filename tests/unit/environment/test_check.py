"""``accelconf check``: the env-* rules, target profiles and the command line.

Rule cases are data: each ``tests/data/check/*.yaml`` says in its header comments what machine it
is checked against (``# args:`` check flags over a fixed fake installation, ``# target:`` a profile
in ``targets/``, or ``# detect:`` a faked probe) and which findings it must give (``# expect:
rule@line[:severity] ...``, nothing for a clean file). No test needs a GPU.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import shlex
from collections import Counter
from pathlib import Path

import pytest

from accelconf.cli import main
from accelconf.commands.check import CheckOptions, environment_for, summary
from accelconf.environment.checks import RULE_IDS, check_environment
from accelconf.environment.probe import Environment, probe
from accelconf.environment.targets import load_target, target_from_args
from accelconf.errors import InputError, UsageError
from accelconf.text.document import load_file, load_text

DATA = Path(__file__).parents[2] / "data" / "check"
CASES = sorted(p for p in DATA.glob("*.yaml"))
EXAMPLES = Path(__file__).parents[3] / "accelconf" / "environment" / "profiles"  # shipped profiles

# The installation the "# args:" cases are laid over: fixed, so results do not depend on the venv.
INSTALLED = Environment(
    python_version="3.11.7",
    platform="Linux x86_64",
    torch_version="2.7.1",
    accelerate_version="1.15.0",
    deepspeed_version="0.17.2",
    fp8_backends=(),
    cuda_version="12.6",
    source="detected (GPU probe off)",
    unknown=frozenset({"gpus", "gpu_count"}),
)

RTX4090_SMI = "0, NVIDIA GeForce RTX 4090, 8.9, 24564, 535.183.01\n1, NVIDIA GeForce RTX 4090, 8.9, 24564, 535.183.01\n"
H100_SMI = "0, NVIDIA H100 80GB HBM3, 9.0, 81559, 550.54.15\n1, NVIDIA H100 80GB HBM3, 9.0, 81559, 550.54.15\n"


class NoNVML:
    class NVMLError_LibraryNotFound(Exception):
        pass

    def nvmlInit(self) -> None:
        raise self.NVMLError_LibraryNotFound("NVML Shared Library Not Found")


def fake_detect(what: str) -> Environment:
    out = {"none": "", "2xH100": H100_SMI, "2xRTX4090-535": RTX4090_SMI}[what]
    versions = {"torch": "2.7.1+cpu", "accelerate": "1.15.0"}
    return probe(
        "auto", runner=lambda argv, timeout: out, nvml=NoNVML(), versions=versions.get, environ={}, build=(None, None)
    )


def _header(path: Path) -> dict[str, str]:
    head: dict[str, str] = {}
    for line in path.read_text().splitlines():
        if not line.startswith("#"):
            break
        key, sep, value = line[1:].strip().partition(":")
        if sep and key in ("args", "target", "detect", "expect", "default-config"):
            head[key] = value.strip()
    return head


def _env_for_case(head: dict[str, str]) -> Environment:
    if "default-config" in head:  # the detected host has accelerate's default config there
        rest = {k: v for k, v in head.items() if k != "default-config"}
        return dataclasses.replace(_env_for_case(rest), default_config=head["default-config"])
    if "target" in head:
        return load_target(DATA / "targets" / head["target"])
    if "detect" in head:
        return fake_detect(head["detect"])
    p = argparse.ArgumentParser()
    for flag in ("--gpus", "--num-machines"):
        p.add_argument(flag, type=int)
    for flag in ("--gpu", "--torch-version", "--accelerate-version", "--deepspeed-version"):
        p.add_argument(flag)
    a = p.parse_args(shlex.split(head.get("args", "")))
    return target_from_args(
        a.gpus, a.gpu, a.torch_version, a.accelerate_version, a.deepspeed_version, a.num_machines, base=INSTALLED
    )


@pytest.mark.parametrize("case", CASES, ids=[p.stem for p in CASES])
def test_rule_case(case: Path) -> None:
    head = _header(case)
    assert "expect" in head, f"{case.name}: no '# expect:' line"
    env = _env_for_case(head)
    findings = check_environment(load_file(case), env)
    expected = head["expect"].split()
    want_sev = {e.split("@")[0] + "@" + e.split("@")[1].split(":")[0]: e.split(":")[1] for e in expected if ":" in e}
    got = Counter(f"{f.rule}@{f.line}" for f in findings)
    assert got == Counter(e.split(":")[0] for e in expected), [(f.rule, f.line, f.message) for f in findings]
    for f in findings:
        key = f"{f.rule}@{f.line}"
        if key in want_sev:
            assert f.severity == want_sev[key], f.message
        assert f.rule in RULE_IDS
        assert f.column >= 1 and f.message


def test_every_rule_has_a_case() -> None:
    seen = set()
    for case in CASES:
        seen.update(e.split("@")[0] for e in _header(case).get("expect", "").split())
    untested = set(RULE_IDS) - seen - {"env-probe", "env-torch-missing", "env-fsdp-torch"}
    assert not untested


def test_probe_problem_becomes_a_finding() -> None:
    env = Environment(problems=("nvidia-smi probe failed: timed out after 2s",))
    doc = load_text("distributed_type: MULTI_GPU\nnum_processes: 2\n", "c.yaml")
    [f] = [f for f in check_environment(doc, env) if f.rule == "env-probe"]
    assert f.severity == "warning" and (f.line, f.column) == (1, 1) and "timed out" in f.message


def test_torch_missing_and_fsdp1_old_torch() -> None:
    doc = load_text("distributed_type: FSDP\nnum_processes: 2\n", "c.yaml")
    rules = {f.rule for f in check_environment(doc, Environment(torch_version=None))}
    assert "env-torch-missing" in rules
    rules = {f.rule for f in check_environment(doc, Environment(torch_version="2.0.1", accelerate_version="1.15.0"))}
    assert "env-fsdp-torch" in rules
    rules = {f.rule for f in check_environment(doc, Environment(torch_version="2.0.1", accelerate_version="0.24.1"))}
    assert "env-fsdp-torch" not in rules  # 0.21-0.24 asked only for torch 2.0.1


def test_unknown_facts_skip_their_rules() -> None:
    doc = load_file(DATA / "deepspeed-missing.yaml")
    env = load_target(EXAMPLES / "a10g-g5.yaml")  # says nothing about DeepSpeed
    assert not [f for f in check_environment(doc, env) if f.rule.startswith("env-deepspeed")]


def test_validated_mode_leaves_multinode_basics_to_validate() -> None:
    doc = load_text("distributed_type: MULTI_GPU\nnum_machines: 2\nnum_processes: 15\nmachine_rank: 5\n", "c.yaml")
    env = Environment(unknown=frozenset({"gpus", "gpu_count", "torch_version"}))
    alone = {(f.rule, f.line) for f in check_environment(doc, env)}
    assert {("env-num-processes", 3), ("env-rendezvous", 4)} <= alone
    both = {(f.rule, f.line) for f in check_environment(doc, env, validated=True)}
    assert ("env-num-processes", 3) not in both and ("env-rendezvous", 4) not in both
    assert ("env-rendezvous", 2) in both  # main_process_port: validate does not say it


# -- targets ----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["h100-node.yaml", "v100-node.yaml", "a10g-g5.yaml"])
def test_example_profiles_load(name: str) -> None:
    env = load_target(EXAMPLES / name)
    assert env.gpus and env.gpus[0].model and env.source == f"target {name}"


def test_profile_facts_left_out_are_unknown() -> None:
    env = load_target(EXAMPLES / "a10g-g5.yaml")
    assert env.gpu_count == 4 and env.gpus[0].bf16 and not env.gpus[0].fp8
    assert not env.knows("torch_version") and not env.knows("deepspeed_version")
    v100 = load_target(EXAMPLES / "v100-node.yaml")
    assert v100.knows("deepspeed_version") and v100.deepspeed_version is None


def test_profile_unquoted_version_keeps_its_digits(tmp_path: Path) -> None:
    p = tmp_path / "t.yaml"
    p.write_text("gpu: T4\ngpus_per_node: 1\ntorch_version: 2.10\n")  # YAML reads the float 2.1
    assert load_target(p).torch_version == "2.10"


@pytest.mark.parametrize(
    "text, line, col, words",
    [
        ("gpu: H100\ngpu_per_node: 8\n", 2, 1, "did you mean 'gpus_per_node'"),
        ("gpu: H1000\n", 1, 6, "unknown GPU model"),
        ("gpu: H100\ngpus_per_node: -1\n", 2, 16, "whole number"),
        ("gpu: H100\ntorch_version: latest\n", 2, 16, "not a version"),
        ("fp8_backends: [te]\n", 1, 15, "fp8_backends"),
        ("- gpu: H100\n", 1, 1, "mapping"),
        ("", 1, 1, "empty"),
    ],
)
def test_bad_profile_is_an_input_error_with_position(
    tmp_path: Path, text: str, line: int, col: int, words: str
) -> None:
    p = tmp_path / "bad.yaml"
    p.write_text(text)
    with pytest.raises(InputError) as info:
        load_target(p)
    assert (info.value.line, info.value.column) == (line, col)
    assert words in info.value.message


def test_target_from_args() -> None:
    env = target_from_args(8, "a100", "2.6.0", None, "none", 2)
    assert env.gpu_count == 8 and env.gpus[0].model == "A100-80GB" and env.num_machines == 2
    assert env.deepspeed_version is None and env.knows("deepspeed_version")
    assert not env.knows("accelerate_version")
    assert env.notes and "A100-40GB" in env.notes[0]
    with pytest.raises(UsageError):
        target_from_args(8, "Z80")
    with pytest.raises(UsageError):
        target_from_args(torch_version="two")


def test_gpus_without_model_takes_detected_model() -> None:
    base = fake_detect("2xH100")
    env = target_from_args(gpus=8, base=base)
    assert env.gpu_count == 8 and env.gpus[0].model == "H100-80GB"
    unknown = target_from_args(gpus=8, base=INSTALLED)
    assert unknown.gpus[0].bf16 is None and unknown.notes


def test_gpu_without_count_leaves_count_unknown() -> None:
    env = target_from_args(gpu="V100", base=INSTALLED)
    assert not env.knows("gpu_count") and env.knows("gpus")
    doc = load_file(DATA / "bf16-on-v100.yaml")
    assert {f.rule for f in check_environment(doc, env)} == {"env-bf16"}


# -- command line -----------------------------------------------------------------------------


def test_cli_clean_against_target(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        [
            "check",
            "--gpus",
            "8",
            "--gpu",
            "H100",
            "--torch-version",
            "2.7.1",
            str(DATA / "total-over-machines-ok.yaml"),
            "--num-machines",
            "2",
        ]
    )
    out, err = capsys.readouterr()
    assert code == 0, out
    assert "checking against" in err and "8x H100-80GB" in err


def test_cli_errors_exit_1_and_point_at_the_line(capsys: pytest.CaptureFixture[str]) -> None:
    path = str(DATA / "bf16-on-v100.yaml")
    code = main(["check", "--target", str(EXAMPLES / "v100-node.yaml"), path])
    out, _ = capsys.readouterr()
    assert code == 1
    assert f"{path}:5:18: error: mixed_precision bf16 needs compute capability 8.0 or higher; V100-32GB has 7.0" in out
    assert "suggestion: mixed_precision: fp16" in out


def test_cli_json_and_github(capsys: pytest.CaptureFixture[str]) -> None:
    path = str(DATA / "gpu-ids-absent.yaml")
    assert main(["check", "--gpus", "4", "--gpu", "A10G", "--format", "json", path]) == 1
    data = json.loads(capsys.readouterr().out)
    rules = {f["rule"] for f in data["files"][0]["findings"]}
    assert "env-gpu-ids" in rules
    assert main(["check", "--gpus", "4", "--gpu", "A10G", "--format", "github", path]) == 1
    assert f"::error file={path},line=6" in capsys.readouterr().out


def test_cli_strict_turns_warnings_into_exit_1(capsys: pytest.CaptureFixture[str]) -> None:
    path = str(DATA / "fp8-on-a100.yaml")
    args = ["check", "--target", str(DATA / "targets" / "a100-te.yaml"), path]
    assert main(args) == 0
    assert main([*args, "--strict"]) == 1
    capsys.readouterr()


def test_cli_unreadable_and_bad_target_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--gpus", "1", "--gpu", "T4", str(tmp_path / "missing.yaml")]) == 2
    assert "no such file" in capsys.readouterr().out
    bad = tmp_path / "t.yaml"
    bad.write_text("gpu: H100\nnum_gpus: 8\n")
    assert main(["check", "--target", str(bad), str(DATA / "use-cpu.yaml")]) == 2
    assert f"{bad}:2:1: unknown key 'num_gpus'" in capsys.readouterr().err
    assert main(["check", "--gpu", "Z80", str(DATA / "use-cpu.yaml")]) == 2
    assert "unknown GPU model 'Z80'" in capsys.readouterr().err


def test_cli_one_bad_file_does_not_stop_the_others(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = str(DATA / "bf16-on-v100.yaml")
    code = main(["check", "--gpus", "4", "--gpu", "V100", str(tmp_path / "nope.yaml"), good])
    out = capsys.readouterr().out
    assert code == 2 and "env-bf16" in out and "2 files checked" in out


def test_cli_help_lists_gpu_models(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--help"]) == 0
    out = capsys.readouterr().out
    for key in ("V100-16GB", "A100-80GB", "H100-80GB", "H200", "B200", "MI250", "MI300X", "L40S"):
        assert key in out


def test_cli_detection_with_fake_nvidia_smi(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    smi = tmp_path / "smi.txt"
    smi.write_text(H100_SMI)
    monkeypatch.setenv("ACCELCONF_FAKE_NVIDIA_SMI", str(smi))
    code = main(["check", str(DATA / "fewer-processes.yaml")])  # 4 processes, 2 GPUs
    out, err = capsys.readouterr()
    assert code == 1 and "env-num-processes" in out and "the node has 2 GPUs here" in out
    assert "detected via nvidia-smi" in err


def test_environment_for_and_summary() -> None:
    env = environment_for(CheckOptions(("x",), target=str(EXAMPLES / "v100-node.yaml"), torch_version="2.6.0"))
    assert env.torch_version == "2.6.0" and env.gpus[0].model == "V100-32GB"
    assert summary(env).startswith("checking against target v100-node.yaml + arguments: 1 machine, 4x V100-32GB")


# -- with validate ----------------------------------------------------------------------------


def test_check_includes_validate_findings(capsys: pytest.CaptureFixture[str]) -> None:
    try:
        from accelconf.accelerate.validate import validate_document
    except ImportError as exc:  # validate lands separately
        pytest.skip(f"accelconf.accelerate.validate is not importable: {exc}")
    path = DATA / "fsdp2-old-torch.yaml"
    want = {(f.rule, f.line, f.column) for f in validate_document(load_file(path), accelerate_version="1.5.2")}
    assert want, "fsdp_version is unknown to accelerate 1.5: validate should say so"
    assert main(
        [
            "check",
            "--gpus",
            "8",
            "--gpu",
            "H100",
            "--torch-version",
            "2.5.1",
            "--accelerate-version",
            "1.5.2",
            "--format",
            "json",
            str(path),
        ]
    ) in (0, 1)
    got = {(f["rule"], f["line"], f["column"]) for f in json.loads(capsys.readouterr().out)["files"][0]["findings"]}
    assert want <= got
    # accelerate 1.5 ignores fsdp_version and runs FSDP1: torch 2.5.1 is fine for that
    assert not any(rule == "env-fsdp2-torch" for rule, _, _ in got)
    assert (
        main(
            [
                "check",
                "--gpus",
                "8",
                "--gpu",
                "H100",
                "--torch-version",
                "2.5.1",
                "--accelerate-version",
                "1.15.0",
                "--format",
                "json",
                str(path),
            ]
        )
        == 1
    )
    got = {(f["rule"], f["line"], f["column"]) for f in json.loads(capsys.readouterr().out)["files"][0]["findings"]}
    assert ("env-fsdp2-torch", 8, 17) in got


def test_cli_without_config_reads_accelerates_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("HF_HOME", str(tmp_path))
    assert main(["check", "--gpus", "4", "--gpu", "V100"]) == 2
    assert "default config" in capsys.readouterr().err
    (tmp_path / "accelerate").mkdir()
    (tmp_path / "accelerate" / "default_config.yaml").write_text((DATA / "bf16-on-v100.yaml").read_text())
    assert main(["check", "--gpus", "4", "--gpu", "V100"]) == 1
    assert "accelerate/default_config.yaml:5:18: error" in capsys.readouterr().out


def test_bf16_in_deepspeed_json_given_or_referenced() -> None:
    env = target_from_args(4, "T4", base=INSTALLED)
    given = load_file(DATA / "ds" / "ds-bf16.json")
    [f] = check_environment(given, env)
    assert (f.rule, f.severity, f.key, f.line, f.column, f.path) == ("env-bf16", "warning", "bf16.enabled", 3, 23, "")
    referenced = load_file(DATA / "ds" / "zero2-file.yaml")
    [f] = [f for f in check_environment(referenced, env) if f.rule == "env-bf16"]
    assert f.path.endswith("ds-bf16.json") and f.line == 3
    assert not [f for f in check_environment(given, target_from_args(4, "A10G", base=INSTALLED))]


def test_check_json_output_includes_the_environment(capsys):
    import json as _json

    from accelconf.cli import main as cli_main

    code = cli_main(
        [
            "check",
            "--format",
            "json",
            "--gpus",
            "4",
            "--gpu",
            "V100",
            "--torch-version",
            "2.4.1",
            str(Path(__file__).resolve().parents[3] / "examples" / "fsdp2.yaml"),
        ]
    )
    out = _json.loads(capsys.readouterr().out)
    assert code == 1
    assert out["environment"]["gpus"][0]["model"].startswith("V100") and len(out["environment"]["gpus"]) == 4
    assert any(f["rule"] == "env-bf16" for f in out["files"][0]["findings"])


# -- a torch version given on the command line describes that torch's build -----------------------

H100_HERE_CPU_TORCH = Environment(
    torch_version="2.13.0+cpu",
    accelerate_version="1.15.0",
    deepspeed_version="0.17.2",
    gpus=fake_detect("2xH100").gpus,
    source="detected via nvidia-smi",
)
ONE_GPU_DDP = "distributed_type: MULTI_GPU\nnum_processes: 2\n"


@pytest.mark.parametrize(
    ("version", "cuda", "rocm", "warns"),
    [
        ("2.7.1+cu126", "12.6", None, False),
        ("2.4.1+cu118", "11.8", None, False),
        ("2.5.1+rocm6.2", None, "6.2", False),
        ("2.7.1+cpu", None, None, True),
        ("2.7.1", None, None, False),
    ],
)
def test_torch_version_flag_takes_the_build_from_its_local_suffix_not_from_the_local_torch(
    version: str, cuda: str | None, rocm: str | None, warns: bool
) -> None:
    env = target_from_args(torch_version=version, base=H100_HERE_CPU_TORCH)
    assert (env.cuda_version, env.rocm_version) == (cuda, rocm)
    assert env.knows("cuda_version") == ("+" in version)  # no suffix: the build is unknown, nothing is said
    rules = [f.rule for f in check_environment(load_text(ONE_GPU_DDP, "c.yaml"), env)]
    assert ("env-torch-cpu-only" in rules) == warns


def test_check_with_a_cuda_torch_version_on_a_machine_with_a_cpu_torch_says_nothing_of_a_cpu_build(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    smi = tmp_path / "smi.txt"
    smi.write_text(H100_SMI)
    monkeypatch.setenv("ACCELCONF_FAKE_NVIDIA_SMI", str(smi))
    cfg = tmp_path / "c.yaml"
    cfg.write_text(ONE_GPU_DDP)
    monkeypatch.setattr("accelconf.environment.probe.torch_build", lambda: (None, None))  # this machine: CPU torch
    main(["check", "--format", "json", str(cfg)])
    assert "env-torch-cpu-only" in capsys.readouterr().out
    assert main(["check", "--format", "json", "--torch-version", "2.7.1+cu126", str(cfg)]) == 0
    assert "env-torch-cpu-only" not in capsys.readouterr().out


def test_a_profile_torch_version_with_a_local_suffix_gives_its_cuda(tmp_path: Path) -> None:
    prof = tmp_path / "t.yaml"
    prof.write_text("gpu: H100\ngpus_per_node: 2\ntorch_version: 2.7.1+cpu\n")
    env = load_target(prof)
    assert env.knows("cuda_version") and env.cuda_version is None
    assert "env-torch-cpu-only" in [f.rule for f in check_environment(load_text(ONE_GPU_DDP, "c.yaml"), env)]


# -- packages missing from this interpreter while the flags describe the target -------------------

NO_TORCH_HERE = Environment(
    accelerate_version="1.15.0", source="detected (GPU probe off)", unknown=frozenset({"gpus", "gpu_count"})
)
DS_CONFIG = "distributed_type: DEEPSPEED\nnum_processes: 8\ndeepspeed_config:\n  zero_stage: 2\nmixed_precision: bf16\n"


def test_packages_missing_here_are_info_naming_python_when_the_flags_describe_the_target() -> None:
    doc = load_text(DS_CONFIG, "c.yaml")
    described = {f.rule: f for f in check_environment(doc, target_from_args(8, "H100", base=NO_TORCH_HERE))}
    for rule in ("env-torch-missing", "env-deepspeed-missing"):
        assert described[rule].severity == "info" and "--python" in described[rule].message
    here = {f.rule: f.severity for f in check_environment(doc, NO_TORCH_HERE)}  # this machine is the target
    assert here["env-deepspeed-missing"] == "error" and here["env-torch-missing"] == "warning"
    stated = {
        f.rule: f.severity
        for f in check_environment(doc, target_from_args(8, "H100", deepspeed_version="none", base=NO_TORCH_HERE))
    }
    assert stated["env-deepspeed-missing"] == "error"  # said on the command line: about the target


def test_readme_fit_examples_exit_0_with_no_torch_or_deepspeed_installed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    real_probe = probe

    def no_torch_probe(mode: str = "auto", timeout: float = 2.0) -> Environment:
        return real_probe(
            mode,
            timeout,
            runner=lambda argv, t: "",
            nvml=NoNVML(),
            environ={},
            build=(None, None),
            versions={"accelconf": "1"}.get,
        )

    monkeypatch.setattr("accelconf.environment.probe.probe", no_torch_probe)
    cfg = tmp_path / "ds.yaml"
    cfg.write_text(DS_CONFIG)
    assert main(["check", "--params", "8B", "--gpus", "8", "--gpu", "H100-80GB", "--format", "json", str(cfg)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["memory"][0]["verdict"] == "fits"
    sev = {f["rule"]: f["severity"] for f in out["files"][0]["findings"]}
    assert sev["env-torch-missing"] == sev["env-deepspeed-missing"] == "info"
    assert (
        main(["check", "--params", "8B", "--gpus", "8", "--gpu", "H100-80GB", "--deepspeed-version", "none", str(cfg)])
        == 1
    )
