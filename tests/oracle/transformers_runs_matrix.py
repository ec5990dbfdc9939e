"""Every transformers release's Trainer init against accelconf's what-runs model: the release matrix's
second stage.

For each release, one process (tests/oracle/trainer_runs_worker.py, with the release's directory
first on ``sys.path``; torch, accelerate 1.15 and DeepSpeed from the venv) builds
``TrainingArguments`` and runs the release's own ``Trainer.create_accelerator_and_postprocess``
(``init`` cases: the FSDP plugin, built as that release builds it, after the Trainer's own
post-processing) or a whole ``Trainer`` with DeepSpeed and a tiny random Llama (``deepspeed`` cases),
in a batch. Each case is compared with :func:`accelconf.trainer.runs.what_runs` for that release:
the same stage where the release raises (construction, Trainer init, train()), else the same
plugin fields, mixed precision, accumulation and filled DeepSpeed config.

    python tests/oracle/transformers_runs_matrix.py 4.46 5.24     # print the disagreements
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(ROOT))

from accelconf.trainer import ds_fill  # noqa: E402
from accelconf.trainer.argvalues import ArgValues  # noqa: E402
from accelconf.trainer.runs import what_runs  # noqa: E402
from tests.oracle import transformers_releases as tr  # noqa: E402

WORKER = HERE / "trainer_runs_worker.py"
HIDDEN = 64  # the worker's tiny Llama
STEPS = 120
BASE_PORT = 29600

FSDP_FORMS: list[Any] = ["full_shard auto_wrap", True, "shard_grad_op offload", "hybrid_shard", "full_shard"]
FSDP_CONFIGS: list[Any] = [
    None,
    {"fsdp_transformer_layer_cls_to_wrap": "LlamaDecoderLayer"},
    {"transformer_layer_cls_to_wrap": ["LlamaDecoderLayer"], "limit_all_gathers": "false"},
    {"version": 1},
    {"version": 2, "forward_prefetch": True},
    {
        "fsdp_version": 1,
        "backward_prefetch": "backward_post",
        "forward_prefetch": True,
        "use_orig_params": False,
        "sync_module_states": "false",
        "cpu_ram_efficient_loading": True,
    },
    {"offload_params": True, "activation_checkpointing": True, "state_dict_type": "SHARDED_STATE_DICT"},
    {"auto_wrap_policy": "SIZE_BASED_WRAP", "min_num_params": 1000, "reshard_after_forward": "false"},
    {"min_num_params": 2000, "backward_prefetch": "backward_pre", "cpu_ram_efficient_loading": "true"},
    {"auto_wrap_policy": "NO_WRAP", "version": 2, "cpu_offload": "true"},
]
ENVS: list[dict[str, str]] = [
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
        "FSDP_MIN_NUM_PARAMS": "2000",
        "FSDP_STATE_DICT_TYPE": "SHARDED_STATE_DICT",
        "FSDP_VERSION": "2",
    },
]
DS_AUTO: dict[str, Any] = {
    "train_micro_batch_size_per_gpu": "auto",
    "gradient_accumulation_steps": "auto",
    "gradient_clipping": "auto",
    "bf16": {"enabled": "auto"},
    "optimizer": {"type": "AdamW", "params": {"lr": "auto", "weight_decay": "auto"}},
    "zero_optimization": {"stage": 2, "reduce_bucket_size": "auto"},
}


def cases() -> list[dict[str, Any]]:
    """The cases every release runs: each fsdp form with each fsdp_config, under one of the
    environments in turn, a few plain runs (mixed precision from the arguments or the launcher), and
    DeepSpeed with a JSON of "auto" values and with values that disagree with the arguments."""
    out: list[dict[str, Any]] = []
    for (form, cfg), env in zip(itertools.product(FSDP_FORMS, FSDP_CONFIGS), itertools.cycle(ENVS)):
        args: dict[str, Any] = {"fsdp": form}
        if cfg is not None:
            args["fsdp_config"] = cfg
        out.append({"kind": "init", "args": args, "env": env})
    out += [
        # an inline fsdp_config's fsdp_ prefix with nothing in the environment to stand in for it
        {"kind": "init", "args": {"fsdp": "full_shard auto_wrap", "fsdp_config": FSDP_CONFIGS[1]}, "env": {}},
        {
            "kind": "init",
            "args": {"fsdp": "full_shard auto_wrap", "fsdp_config": {"fsdp_min_num_params": 500}},
            "env": {},
        },
        {"kind": "init", "args": {"fsdp": "full_shard bogus"}, "env": {}},
        {"kind": "init", "args": {"fsdp": "offload"}, "env": {}},
        {"kind": "init", "args": {"bf16": True, "gradient_accumulation_steps": 4}, "env": {}},
        {"kind": "init", "args": {}, "env": {"ACCELERATE_MIXED_PRECISION": "fp16"}},
        {"kind": "init", "args": {"fp16": True, "bf16": True}, "env": {}},
    ]
    ds_args: list[dict[str, Any]] = [
        {"bf16": True, "gradient_accumulation_steps": 4, "per_device_train_batch_size": 2, "learning_rate": 3e-5},
        {"gradient_accumulation_steps": 2, "max_grad_norm": 0.5, "weight_decay": 0.1},
    ]
    for ds, args in ds_pairs(ds_args):
        out.append({"kind": "deepspeed", "args": {**args, "deepspeed": ds}, "env": {}, "steps": STEPS})
    return out


def ds_pairs(ds_args: list[dict[str, Any]]) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """DeepSpeed JSON and arguments: "auto" filled, and each value ``trainer_config_process`` /
    ``trainer_config_finalize`` compares with the arguments set otherwise (the train() mismatch
    lines, which the releases word differently)."""
    no_bf16 = {k: v for k, v in DS_AUTO.items() if k != "bf16"}
    every_auto = {
        **DS_AUTO,
        "train_batch_size": "auto",
        "fp16": {"enabled": "auto"},
        "optimizer": {"type": "AdamW", "params": {k: "auto" for k in ("lr", "betas", "eps", "weight_decay")}},
        "scheduler": {
            "type": "WarmupDecayLR",
            "params": {k: "auto" for k in ("warmup_min_lr", "warmup_max_lr", "warmup_num_steps", "total_num_steps")},
        },
        "amp": {"enabled": "auto", "opt_level": "auto"},  # transformers 4 fills it (apex's fp16)
        "zero_optimization": {
            "stage": 3,
            "reduce_bucket_size": "auto",
            "stage3_prefetch_bucket_size": "auto",
            "stage3_param_persistence_threshold": "auto",
        },
    }
    warmup = {"type": "WarmupLR", "params": {"warmup_min_lr": 0, "warmup_max_lr": 1e-4, "warmup_num_steps": 10}}
    return [
        (DS_AUTO, ds_args[0]),
        (DS_AUTO, ds_args[1]),
        # batch size and accumulation set otherwise
        ({**DS_AUTO, "gradient_accumulation_steps": 8, "train_micro_batch_size_per_gpu": 1}, ds_args[0]),
        # the learning rate, betas and weight decay set otherwise
        (
            {
                **DS_AUTO,
                "optimizer": {"type": "AdamW", "params": {"lr": 1e-4, "betas": [0.9, 0.95], "weight_decay": 0.01}},
            },
            ds_args[0],
        ),
        # fp16 in the JSON, bf16 in the arguments; bf16 in the JSON, no precision in the arguments
        ({**no_bf16, "fp16": {"enabled": True}}, ds_args[0]),
        ({**DS_AUTO, "bf16": {"enabled": True}}, ds_args[1]),
        # "8" is not 8: the JSON's strings are compared as they are
        (
            {**DS_AUTO, "gradient_accumulation_steps": "8", "train_micro_batch_size_per_gpu": "2"},
            {**ds_args[0], "gradient_accumulation_steps": 8},
        ),
        # every "auto" transformers fills, ZeRO-3's bucket sizes from the model's hidden size
        (every_auto, {"fp16": True, "learning_rate": 3e-5, "adam_beta2": 0.95, "warmup_steps": 10, "max_steps": 100}),
        # the calculated train_batch_size and gradient clipping set otherwise
        (
            {**DS_AUTO, "train_batch_size": 32, "gradient_clipping": 1.0},
            {**ds_args[1], "per_device_train_batch_size": 2},
        ),
        # the scheduler's peak and warmup set otherwise (warmup_num_steps is compared in train())
        ({**DS_AUTO, "scheduler": warmup}, ds_args[0]),
        # the warmup transformers fills: from the default warmup_steps (0, at least 1 from 5.18) and
        # from a fraction (4.x passes 0.1 through, 5.x takes it as a ratio of the steps)
        ({**DS_AUTO, "scheduler": every_auto["scheduler"]}, ds_args[1]),
        ({**DS_AUTO, "scheduler": every_auto["scheduler"]}, {**ds_args[1], "warmup_steps": 0.1}),
    ]


@dataclass
class RunsResult:
    minor: str
    error: str = ""
    results: list[dict[str, Any]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    seconds: float = 0.0
    stages: dict[str, int] = field(default_factory=dict)  # stage -> cases raising there

    @property
    def agree(self) -> int:
        return len(self.results) - len(self.problems)


def _env(case: dict[str, Any]) -> dict[str, tuple[str, str, str]]:
    return {k: (v, "shell", k) for k, v in case.get("env", {}).items()}


def _jsonable(data: Any) -> Any:
    return json.loads(json.dumps(data, default=str).replace("Infinity", '"Infinity"'))


def _mp(case: dict[str, Any]) -> str:
    a = case["args"]
    return "fp16" if a.get("fp16") else "bf16" if a.get("bf16") else case["env"].get("ACCELERATE_MIXED_PRECISION", "no")


def judge(case: dict[str, Any], real: dict[str, Any], minor: str) -> str:
    """Where accelconf and the release disagree on one case, why; empty when they agree."""
    args = ArgValues(case["args"], version=minor)
    ds = case["args"].get("deepspeed")
    runs = what_runs(args, env=_env(case), ds_config=ds, hidden_size=HIDDEN, num_training_steps=STEPS)
    stages = [r.stage for r in runs.raises]
    if "harness" in real:
        return f"the worker could not run the release's Trainer init: {real['harness']}"
    if real.get("raises") in ("construction", "Trainer init"):
        return (
            ""
            if stages[:1] == [real["raises"]]
            else f"the release raises at {real['raises']} ({real['error'][:160]}); accelconf: {stages or 'nothing'}"
        )
    if stages:
        return f"accelconf raises at {stages[0]} ({runs.raises[0].message[:120]}); the release runs"
    if runs.mixed_precision.value != real["mixed_precision"]:
        return f"mixed_precision {runs.mixed_precision.value!r}; the release: {real['mixed_precision']!r}"
    if case["kind"] == "init":
        if not real.get("fsdp"):
            return "" if runs.fsdp is None else "accelconf builds an FSDP plugin; the release builds none"
        mine = {k: v.value for k, v in (runs.fsdp or {}).items()}
        diff = {k: (mine.get(k), v) for k, v in real["fields"].items() if mine.get(k) != v}
        return f"plugin fields (accelconf, release): {diff}" if diff else ""
    init = ds_fill.fill(ds, args, env=_env(case), mixed_precision=_mp(case), through="Trainer init")
    if _jsonable(init.config) != real["init_config"]:
        return f"DeepSpeed config at Trainer init: {_jsonable(init.config)} vs {real['init_config']}"
    ga = [g.value for g in runs.gradient_accumulation[:2]]
    if ga != [real["trainer_ga"], real["accelerator_ga"]]:
        return f"accumulation {ga}; the release: {[real['trainer_ga'], real['accelerator_ga']]}"
    assert runs.deepspeed is not None
    if real.get("raises") == "train()":
        lines = [f"- ds {m.ds_key}={m.ds_value} vs hf {m.hf_key}={m.hf_value}" for m in runs.deepspeed.mismatches]
        return (
            ""
            if lines == real["error"].split("\n")[1:-1]
            else f"train() mismatches {lines}; the release: {real['error'][:200]}"
        )
    if runs.deepspeed.mismatches:
        return "accelconf finds DeepSpeed mismatches at train(); the release runs"
    return "" if _jsonable(runs.deepspeed.config) == real["train_config"] else "DeepSpeed config after train() differs"


def run_release(minor: str, job: int = 0) -> RunsResult:
    """One release, one process, every case."""
    start = time.monotonic()
    batch = cases()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ACCELERATE_", "FSDP_"))}
    # two releases at a time, and maybe two matrices on one machine: each its own rendezvous port
    env["ORACLE_PORT"] = str(BASE_PORT + 2 * (os.getpid() % 500) + job)
    result = RunsResult(minor)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "runs.json"
        proc = subprocess.run(
            [sys.executable, str(WORKER), str(out), *tr.sys_path(tr.path_of(minor))],
            input=json.dumps(batch),
            text=True,
            capture_output=True,
            env=env,
            timeout=600,
            check=False,
        )
        if proc.returncode != 0 or not out.is_file():
            result.error = (proc.stderr.strip().splitlines() or [f"exit {proc.returncode}"])[-1][:300]
            return result
        result.results = json.loads(out.read_text())
    for case, real in zip(batch, result.results):
        if real.get("raises"):
            result.stages[real["raises"]] = result.stages.get(real["raises"], 0) + 1
        why = judge(case, real, minor)
        if why:
            result.problems.append(f"{case['kind']} {json.dumps(case['args'])[:140]} env={sorted(case['env'])}: {why}")
    result.seconds = time.monotonic() - start
    return result


@cache
def run_matrix(minors: tuple[str, ...], jobs: int = 2) -> tuple[RunsResult, ...]:
    """Every release, ``jobs`` at a time (each job its own port); cached: the diff's oracle reuses it."""
    with ThreadPoolExecutor(jobs) as pool:
        return tuple(pool.map(lambda im: run_release(im[1], im[0] % jobs), enumerate(minors)))


def table(results: list[RunsResult]) -> list[str]:
    lines = [
        "",
        "Trainer init, per release (tests/oracle/transformers_runs_matrix.py): each release's own",
        "`Trainer.create_accelerator_and_postprocess` (FSDP plugin built as that release builds it, with a",
        "stand-in Accelerator: a real one refuses FSDP on one CPU process) and a DeepSpeed `Trainer` with a tiny",
        f"Llama, {len(cases())} cases per release, against `accelconf explain`'s model of that release.",
        "",
        "| release | cases agree | raise at construction | at Trainer init | at train() | s |",
        "|---|---|---|---|---|---|",
    ]
    for r in results:
        if r.error:
            lines.append(f"| {r.minor} | cannot run Trainer init here: {r.error[:120]} | | | | |")
            continue
        s = r.stages
        lines.append(
            f"| {r.minor} | {r.agree}/{len(r.results)} | {s.get('construction', 0)} | {s.get('Trainer init', 0)} "
            f"| {s.get('train()', 0)} | {r.seconds:.1f} |"
        )
    bad = [f"- {r.minor}: {p}" for r in results for p in r.problems]
    return [*lines, "", f"Trainer init disagreements: {len(bad)}", "", *bad[:40]]


if __name__ == "__main__":
    from accelconf.trainer import releases

    start = time.monotonic()
    got = run_matrix(tuple(sys.argv[1:]) or releases.RELEASES)
    print(f"{time.monotonic() - start:.0f} s")
    print("\n".join(table(list(got))))
