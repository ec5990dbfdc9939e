"""What runs on the Trainer path, against transformers 5.24 and accelerate 1.15 themselves (CPU), and
the DeepSpeed fill through ``train()``'s checks against a spread of releases (4.46, 4.57, 5.0, 5.18
and 5.24, each from the release cache; the installed one from the venv).

``tests/oracle/trainer_runs_worker.py`` builds ``TrainingArguments`` and the FSDP plugin the Trainer
builds, or a ``Trainer`` with DeepSpeed and a tiny random Llama (hidden size 64), in one subprocess
per kind (the accelerator state and the environment are process-wide); accelconf's
:func:`accelconf.trainer.runs.what_runs` and :func:`accelconf.trainer.ds_fill.fill` must give the
same plugin fields, DeepSpeed config (at Trainer init and after ``trainer_config_finalize``),
mixed precision, accumulation, and the same stage and mismatch lines where transformers raises.

Inputs: the corpus arguments files (only the fields what runs reads: a recipe's hub, dataset and
logging fields do not reach the Accelerator), the corpus ``fsdp_config`` files and DeepSpeed JSONs,
and generated combinations with the ``FSDP_*``/``ACCELERATE_*`` variables an accelerate config writes.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from accelconf.trainer import ds_fill, releases
from accelconf.trainer.argvalues import ArgValues, defaults
from accelconf.trainer.runs import what_runs
from tests.oracle import transformers_releases as tr

pytestmark = pytest.mark.oracle
ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT.parent / "shared" / "corpus"
WORKER = ROOT / "tests" / "oracle" / "trainer_runs_worker.py"
RUNS_FIELDS = (
    "fsdp",
    "fsdp_config",
    "deepspeed",
    "bf16",
    "fp16",
    "gradient_accumulation_steps",
    "per_device_train_batch_size",
    "learning_rate",
    "max_grad_norm",
    "adam_beta1",
    "adam_beta2",
    "adam_epsilon",
    "weight_decay",
    "warmup_steps",
    "max_steps",
    "save_on_each_node",
)
HIDDEN = 64
STEPS = 120
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")
# The releases train()'s DeepSpeed checks are compared at: each side of the releases whose checks or
# fills differ (fp16_backend and amp before 5.0, warmup_steps' forms at 5.0 and 5.18) and the newest.
SPREAD = ("4.46", "4.57", "5.0", "5.18", "5.24")


def _release_dirs(minor: str) -> list[str]:
    """What goes first on the worker's sys.path for that release: nothing for the venv's own."""
    if releases.resolve(None) == minor and releases.installed_version() == releases.full_version(minor):
        return []
    if not tr.CACHE.installed(minor) and not IN_CI:
        pytest.skip(
            f"transformers {minor} is not cached under the venv: python tests/oracle/transformers_releases.py {minor}"
        )
    return tr.sys_path(tr.CACHE.ensure(minor))


def _worker(
    cases: list[dict[str, Any]], tmp_path: Path, name: str, dirs: list[str] | None = None
) -> list[dict[str, Any]]:
    pytest.importorskip("transformers", reason="the oracle runs transformers itself (test extras)")
    pytest.importorskip("accelerate", reason="the oracle runs accelerate itself (test extras)")
    out = tmp_path / f"{name}.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ACCELERATE_", "FSDP_"))}
    proc = subprocess.run(
        [sys.executable, str(WORKER), str(out), *(dirs or [])],
        check=False,
        input=json.dumps(cases),
        text=True,
        capture_output=True,
        env=env,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    results = json.loads(out.read_text())
    assert len(results) == len(cases)
    return results


def _env(case: dict[str, Any]) -> dict[str, tuple[str, str, str]]:
    return {k: (v, "shell", k) for k, v in case.get("env", {}).items()}


def _corpus_args() -> list[dict[str, Any]]:
    """The corpus arguments files, reduced to the fields what runs reads (values as yaml.safe_load gives them)."""
    out = []
    for path in sorted((CORPUS / "trainer" / "args").glob("*.yaml")):
        data = yaml.safe_load(path.read_text()) or {}
        kept = {k: v for k, v in data.items() if k in RUNS_FIELDS and k not in ("deepspeed", "fsdp_config")}
        out.append(kept)
    return out


def _json(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text())


def _fsdp_cases() -> list[dict[str, Any]]:
    cases = []
    configs: list[Any] = [
        None,
        {"fsdp_transformer_layer_cls_to_wrap": "LlamaDecoderLayer"},
        {"version": 1},
        {
            "fsdp_version": 1,
            "backward_prefetch": "backward_post",
            "forward_prefetch": True,
            "use_orig_params": False,
            "sync_module_states": "false",
            "cpu_ram_efficient_loading": True,
            "limit_all_gathers": False,
        },
        {"offload_params": True, "activation_checkpointing": True, "state_dict_type": "SHARDED_STATE_DICT"},
        {"auto_wrap_policy": "SIZE_BASED_WRAP", "min_num_params": 1000, "reshard_after_forward": "false"},
        {"auto_wrap_policy": "NO_WRAP", "version": 2, "cpu_offload": "true"},
        {"version": 2, "forward_prefetch": True},
    ]
    configs += [_json(p) for p in sorted((CORPUS / "trainer" / "fsdp_config").glob("*.json"))]
    envs = [
        {},
        {
            "FSDP_OFFLOAD_PARAMS": "true",
            "FSDP_ACTIVATION_CHECKPOINTING": "true",
            "FSDP_SHARDING_STRATEGY": "SHARD_GRAD_OP",
            "FSDP_TRANSFORMER_CLS_TO_WRAP": "LlamaDecoderLayer",
            "ACCELERATE_MIXED_PRECISION": "bf16",
        },
        {
            "FSDP_BACKWARD_PREFETCH": "BACKWARD_PRE",
            "FSDP_USE_ORIG_PARAMS": "true",
            "FSDP_IGNORED_MODULES": "lm_head",
            "FSDP_MIN_NUM_PARAMS": "2000",
            "FSDP_STATE_DICT_TYPE": "SHARDED_STATE_DICT",
            "FSDP_SYNC_MODULE_STATES": "true",
        },
    ]
    for fsdp, cfg, env in itertools.product(
        ["full_shard auto_wrap", True, "shard_grad_op offload", "hybrid_shard"], configs, envs
    ):
        args: dict[str, Any] = {"fsdp": fsdp}
        if cfg is not None:
            args["fsdp_config"] = cfg
        cases.append({"kind": "fsdp", "args": args, "env": env})
    for extra, env in zip(_corpus_args(), itertools.cycle(envs)):
        cases.append({"kind": "fsdp", "args": {"fsdp": True, **extra}, "env": env})
    cases.append({"kind": "fsdp", "args": {"fsdp": "full_shard bogus"}, "env": {}})
    return cases


def _fsdp_config_of(args: dict[str, Any]) -> Any:
    return args.get("fsdp_config")


def test_fsdp_plugin_fields_equal_the_plugin_transformers_builds(tmp_path):
    cases = _fsdp_cases()
    results = _worker(cases, tmp_path, "fsdp")
    compared = 0
    for case, real in zip(cases, results):
        runs = what_runs(ArgValues(case["args"]), env=_env(case))
        stages = [r.stage for r in runs.raises]
        if "raises" in real:
            assert stages[:1] == [real["raises"]], (case, real)
            continue
        assert not stages, (case, [r.message for r in runs.raises])
        assert runs.mixed_precision.value == real["mixed_precision"], case
        if real["plugin_args"] is None:  # fsdp_config turns on xla: torch_xla wraps, no accelerate plugin
            assert runs.fsdp is None and runs.notes, case
            continue
        assert runs.fsdp is not None
        mine = {k: v.value for k, v in runs.fsdp.items()}
        assert mine == real["fields"], (
            case,
            {k: (mine.get(k), real["fields"].get(k)) for k in real["fields"] if mine.get(k) != real["fields"].get(k)},
        )
        compared += 1
    assert compared >= len(cases) // 2, compared  # the others raise (hybrid_shard on FSDP2, ...) or run xla


_DS_MINIMAL = {"zero_optimization": {"stage": 2}}
_DS_AUTO = {
    "train_batch_size": "auto",
    "train_micro_batch_size_per_gpu": "auto",
    "gradient_accumulation_steps": "auto",
    "gradient_clipping": "auto",
    "bf16": {"enabled": "auto"},
    "fp16": {"enabled": "auto"},
    "optimizer": {"type": "AdamW", "params": {"lr": "auto", "betas": "auto", "eps": "auto", "weight_decay": "auto"}},
    "scheduler": {
        "type": "WarmupDecayLR",
        "params": {
            "warmup_min_lr": "auto",
            "warmup_max_lr": "auto",
            "warmup_num_steps": "auto",
            "total_num_steps": "auto",
        },
    },
    "amp": {"enabled": "auto", "opt_level": "auto"},  # filled by transformers 4 only (apex's fp16)
    "zero_optimization": {
        "stage": 3,
        "reduce_bucket_size": "auto",
        "stage3_prefetch_bucket_size": "auto",
        "stage3_param_persistence_threshold": "auto",
        "offload_optimizer": {"device": "auto"},
    },
}
_DS_FIXED = {
    "train_micro_batch_size_per_gpu": "4",
    "gradient_accumulation_steps": 8,
    "gradient_clipping": 0.5,
    "train_batch_size": 32,
    "bf16": {"enabled": True},
    "optimizer": {"type": "AdamW", "params": {"lr": 3e-5, "betas": [0.9, 0.95], "eps": 1e-8, "weight_decay": 0.1}},
    "scheduler": {
        "type": "WarmupLR",
        "params": {"warmup_min_lr": 0, "warmup_max_lr": 3e-5, "warmup_num_steps": 10, "total_num_steps": 100},
    },
    "zero_optimization": {"stage": "auto", "reduce_bucket_size": 5e8},
}


def _ds_cases(minor: str | None = None) -> list[dict[str, Any]]:
    dss = [_DS_MINIMAL, _DS_AUTO, _DS_FIXED, {"train_batch_size": 8}]
    dss += [_json(p) for p in sorted((CORPUS / "trainer" / "refs").glob("*.json"))]
    dss += [
        _json(CORPUS / "deepspeed" / n)
        for n in (
            "QwenLM__Qwen__finetune__ds_config_zero3.json",
            "hiyouga__LLaMA-Factory__examples__deepspeed__ds_z0_config.json",
        )
        if (CORPUS / "deepspeed" / n).is_file()
    ]
    argsets: list[dict[str, Any]] = [
        {},
        {
            "bf16": True,
            "gradient_accumulation_steps": 8,
            "per_device_train_batch_size": 4,
            "learning_rate": 3e-5,
            "adam_beta2": 0.95,
            "weight_decay": 0.1,
            "max_grad_norm": 0.5,
            "max_steps": 100,
            "warmup_steps": 10,
        },
        {"fp16": True, "per_device_train_batch_size": "4", "warmup_steps": 0.1, "save_on_each_node": True},
    ]
    argsets += _corpus_args()[:6]
    # accumulation set twice: in accelerator_config and in the arguments (Trainer init refuses), or only there
    argsets += [
        {"accelerator_config": {"gradient_accumulation_kwargs": {"num_steps": 4}}, "gradient_accumulation_steps": 2},
        {"accelerator_config": {"gradient_accumulation_kwargs": {"num_steps": 4}}},
    ]
    if "warmup_ratio" in releases.fields(minor):  # 4.x: a ratio of the steps; 5.0-5.14: warmup_steps' value
        argsets += [{"warmup_ratio": 0.1, "max_steps": 100}, {"warmup_ratio": 0.1, "warmup_steps": 5}]
    if "fp16_backend" in releases.fields(minor):  # 4.x: fp16 through amp only, amp.* filled
        argsets += [{"fp16": True, "fp16_backend": "amp", "fp16_opt_level": "O2"}]
    cases = []
    for n, ds in enumerate(dss):
        for m, args in enumerate(argsets):
            if (n + m) % 2 and n > 1:
                continue  # the corpus JSONs against every other argument set: the worker takes seconds per Trainer
            env = (
                {"ACCELERATE_MIXED_PRECISION": "fp16"}
                if m == 0 and n == 0
                else (
                    {"ACCELERATE_GRADIENT_ACCUMULATION_STEPS": "4", "ACCELERATE_DEEPSPEED_ZERO_STAGE": "1"}
                    if m == 1
                    else {}
                )
            )
            cases.append({"kind": "deepspeed", "args": {**args, "deepspeed": ds}, "env": env, "steps": STEPS})
    return cases


def _mismatch_lines(filled: ds_fill.Filled) -> list[str]:
    return [f"- ds {m.ds_key}={m.ds_value} vs hf {m.hf_key}={m.hf_value}" for m in filled.mismatches]


def _jsonable(data: Any) -> Any:
    return json.loads(json.dumps(data, default=str).replace("Infinity", '"Infinity"'))


@pytest.mark.parametrize("minor", SPREAD)
def test_deepspeed_fill_equals_the_trainers_config_at_init_and_train(minor, tmp_path):
    dirs = _release_dirs(minor)
    cases = _ds_cases(minor)
    results = _worker(cases, tmp_path, "deepspeed", dirs)
    raised_in_train = 0
    for case, real in zip(cases, results):
        args = ArgValues(case["args"], version=minor)
        runs = what_runs(
            args, env=_env(case), ds_config=case["args"]["deepspeed"], hidden_size=HIDDEN, num_training_steps=STEPS
        )
        stages = [r.stage for r in runs.raises]
        if real.get("raises") in ("construction", "Trainer init"):
            assert stages[:1] == [real["raises"]], (case, real)
            continue
        assert not stages, (case, [r.message for r in runs.raises], real)
        init = ds_fill.fill(
            case["args"]["deepspeed"], args, env=_env(case), mixed_precision=_mp(case), through="Trainer init"
        )
        assert _jsonable(init.config) == real["init_config"], (case, real)
        assert runs.mixed_precision.value == real["mixed_precision"], case
        assert [g.value for g in runs.gradient_accumulation[:2]] == [real["trainer_ga"], real["accelerator_ga"]]
        if real.get("raises") == "train()":
            lines = real["error"].split("\n")[1:-1]
            assert _mismatch_lines(runs.deepspeed) == lines, (case, real["error"])  # type: ignore[arg-type]
            raised_in_train += 1
        else:
            assert not runs.deepspeed.mismatches, case  # type: ignore[union-attr]
            assert _jsonable(runs.deepspeed.config) == real["train_config"], (case, real)  # type: ignore[union-attr]
    assert raised_in_train >= 3


def _mp(case: dict[str, Any]) -> str:
    a = case["args"]
    return (
        "fp16"
        if a.get("fp16")
        else "bf16"
        if a.get("bf16")
        else case.get("env", {}).get("ACCELERATE_MIXED_PRECISION", "no")
    )


def test_argument_defaults_what_runs_reads_are_the_installed_transformers_defaults():
    transformers = pytest.importorskip("transformers", reason="compares with the installed transformers (test extras)")
    import dataclasses

    fields = {f.name: f.default for f in dataclasses.fields(transformers.TrainingArguments)}
    mine = defaults(transformers.__version__)
    assert len(mine) >= 20 and {k: fields[k] for k in mine} == mine
