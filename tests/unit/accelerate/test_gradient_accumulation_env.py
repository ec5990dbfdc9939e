"""``ACCELERATE_GRADIENT_ACCUMULATION_STEPS`` outside DeepSpeed: ``Accelerator.__init__`` reads it under
every distributed type (and ``accelerate launch`` passes the shell's environment on), but a config file
or a launch flag holds ``deepspeed_config.gradient_accumulation_steps`` only for DeepSpeed. The writers
say where it can go (or carry it: env, kwargs), and diff counts it as a setting in effect.
"""

from __future__ import annotations

import importlib

import pytest

from accelconf import api

semdiff = importlib.import_module("accelconf.diff")

VERSION = "1.15"
FSDP_ENV = "ACCELERATE_USE_FSDP=true\nFSDP_SHARDING_STRATEGY=FULL_SHARD\nACCELERATE_GRADIENT_ACCUMULATION_STEPS=4\n"
MULTI_GPU_ENV = "ACCELERATE_GRADIENT_ACCUMULATION_STEPS=4\nACCELERATE_MIXED_PRECISION=bf16\n"
LOST = (
    "ACCELERATE_GRADIENT_ACCUMULATION_STEPS=4 is read by the training process under every distributed type, but "
    "{holder} holds `deepspeed_config.gradient_accumulation_steps` only for DeepSpeed; not written: keep "
    "ACCELERATE_GRADIENT_ACCUMULATION_STEPS=4 in the environment accelerate launch runs in, or pass "
    "Accelerator(gradient_accumulation_steps=4)"
)


def _lossy(findings) -> list[tuple]:
    return [
        (f.rule, f.severity, f.message, f.line)
        for f in findings
        if "GRADIENT_ACCUMULATION" in f.message or f.key == "deepspeed_config.gradient_accumulation_steps"
    ]


@pytest.mark.parametrize("text", [FSDP_ENV, MULTI_GPU_ENV], ids=["fsdp", "no-paradigm"])
@pytest.mark.parametrize("to", ["yaml", "json"])
def test_to_yaml_of_an_env_file_drops_gradient_accumulation_outside_deepspeed_with_a_finding(text, to) -> None:
    out, findings = api.convert_text(text, to, fmt="env", path="launch.env", version=VERSION)
    assert "gradient_accumulation_steps" not in out and "deepspeed_config" not in out
    line = text.splitlines().index("ACCELERATE_GRADIENT_ACCUMULATION_STEPS=4") + 1
    assert _lossy(findings) == [("convert.lossy", "warning", LOST.format(holder="a config file"), line)]
    # nothing written that validate calls without effect (the process count an env cannot say aside)
    from accelconf.text.document import load_text

    found = api.validate_config(load_text(out, f"out.{to}"), accelerate_version=VERSION)
    assert [f.rule for f in found if "num_processes" not in f.message] == []


def test_to_yaml_under_deepspeed_keeps_gradient_accumulation() -> None:
    text = (
        "ACCELERATE_USE_DEEPSPEED=true\nACCELERATE_DEEPSPEED_ZERO_STAGE=2\nACCELERATE_GRADIENT_ACCUMULATION_STEPS=4\n"
    )
    out, findings = api.convert_text(text, "yaml", fmt="env", path="launch.env", version=VERSION)
    assert "  gradient_accumulation_steps: 4\n" in out and _lossy(findings) == []


def test_to_cli_names_where_gradient_accumulation_can_go() -> None:
    out, findings = api.convert_text(FSDP_ENV, "cli", fmt="env", path="launch.env", version=VERSION)
    assert "gradient_accumulation" not in out
    assert _lossy(findings) == [("convert.lossy", "warning", LOST.format(holder="a launch flag"), 3)]


def test_to_kwargs_passes_gradient_accumulation_to_the_accelerator() -> None:
    out, findings = api.convert_text(FSDP_ENV, "kwargs", fmt="env", path="launch.env", version=VERSION)
    assert "    gradient_accumulation_steps=4,\n" in out.split("accelerator = Accelerator(", 1)[1]
    assert _lossy(findings) == []  # no "not used" finding: it is written


def test_to_env_keeps_the_variable_the_training_process_reads() -> None:
    out, findings = api.convert_text(FSDP_ENV, "env", fmt="env", path="launch.env", version=VERSION)
    assert "ACCELERATE_GRADIENT_ACCUMULATION_STEPS=4\n" in out and _lossy(findings) == []


def test_a_config_file_gradient_accumulation_under_fsdp_still_reports_it_unused() -> None:
    text = "distributed_type: FSDP\nnum_processes: 2\ndeepspeed_config:\n  gradient_accumulation_steps: 4\n"
    out, findings = api.convert_text(text, "env", fmt="yaml", path="a.yaml", version=VERSION)
    assert "GRADIENT_ACCUMULATION" not in out
    assert _lossy(findings) == [
        (
            "launch.unused",
            "info",
            "`deepspeed_config.gradient_accumulation_steps` is not used: distributed_type is 'FSDP'",
            4,
        )
    ]


@pytest.mark.parametrize("text", [FSDP_ENV, MULTI_GPU_ENV], ids=["fsdp", "no-paradigm"])
def test_diff_of_an_env_file_and_the_yaml_written_from_it_reports_the_lost_accumulation(tmp_path, text) -> None:
    env = tmp_path / "launch.env"
    env.write_text(text)
    out, _ = api.convert_text(text, "yaml", fmt="env", path=str(env), version=VERSION)
    (tmp_path / "out.yaml").write_text(out)
    r = semdiff.diff_files(env, tmp_path / "out.yaml", version=VERSION)
    rows = [(c.key, c.a, c.b, c.kind) for c in r.differences]
    assert ("deepspeed_config.gradient_accumulation_steps", 4, 1, "removed") in rows
    change = next(c for c in r.differences if c.key == "deepspeed_config.gradient_accumulation_steps")
    assert change.note == (
        "ACCELERATE_GRADIENT_ACCUMULATION_STEPS reaches Accelerator(gradient_accumulation_steps=) "
        "under every distributed type; a config file or launch flag holds it only for DeepSpeed"
    )
    # the env written from it carries the variable: no loss
    out, _ = api.convert_text(text, "env", fmt="env", path=str(env), version=VERSION)
    (tmp_path / "out.env").write_text(out)
    assert semdiff.diff_files(env, tmp_path / "out.env", version=VERSION).equivalent


def test_a_yaml_key_for_gradient_accumulation_under_fsdp_is_no_difference(tmp_path) -> None:
    base = "distributed_type: FSDP\nnum_processes: 2\n"
    (tmp_path / "a.yaml").write_text(base)
    (tmp_path / "b.yaml").write_text(base + "deepspeed_config:\n  gradient_accumulation_steps: 4\n")
    (tmp_path / "c.env").write_text(FSDP_ENV)
    r = semdiff.diff_files(tmp_path / "a.yaml", tmp_path / "b.yaml", version=VERSION)
    assert r.equivalent
    assert [(c.key, c.note) for c in r.ignored] == [
        ("deepspeed_config.gradient_accumulation_steps", "a config file holds it only for DeepSpeed")
    ]
    # the same number in the environment is in effect: the key in b.yaml is not
    r = semdiff.diff_files(tmp_path / "b.yaml", tmp_path / "c.env", version=VERSION)
    assert ("deepspeed_config.gradient_accumulation_steps", 1, 4, "added") in [
        (c.key, c.a, c.b, c.kind) for c in r.changes
    ]


def test_diff_reads_the_accelerator_argument_a_kwargs_file_passes(tmp_path) -> None:
    env = tmp_path / "launch.env"
    env.write_text(FSDP_ENV)
    out, _ = api.convert_text(FSDP_ENV, "kwargs", fmt="env", path=str(env), version=VERSION)
    (tmp_path / "train.py").write_text(out)
    r = semdiff.diff_files(env, tmp_path / "train.py", version=VERSION)
    assert r.equivalent and r.changes == []
    (tmp_path / "a.yaml").write_text("distributed_type: FSDP\nfsdp_config:\n  fsdp_sharding_strategy: FULL_SHARD\n")
    r = semdiff.diff_files(tmp_path / "train.py", tmp_path / "a.yaml", version=VERSION)
    line = next(i for i, text in enumerate(out.splitlines(), 1) if "gradient_accumulation_steps=4" in text)
    assert [(c.key, c.a, c.b, c.kind, c.a_where) for c in r.changes if "gradient" in c.key] == [
        (
            "deepspeed_config.gradient_accumulation_steps",
            4,
            1,
            "removed",
            f"{tmp_path / 'train.py'}:{line} Accelerator(gradient_accumulation_steps=)",
        )
    ]
