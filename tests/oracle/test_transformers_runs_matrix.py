"""Every transformers release's Trainer init against accelconf's what-runs model, and the release diff
against what two releases really build (tests/oracle/transformers_runs_matrix.py).

One process per release (two at a time, each on its own rendezvous port) runs that release's own
``TrainingArguments`` and ``Trainer.create_accelerator_and_postprocess`` over one batch of FSDP and
plain cases, and a DeepSpeed ``Trainer`` with a tiny Llama over twelve, each then through the
release's own ``trainer_config_finalize`` as ``train()`` runs it (CPU; torch, accelerate and
DeepSpeed from the venv): "auto" filled, and batch size, accumulation, learning rate, betas, weight
decay, clipping, fp16 against bf16, ``"8"`` against 8 and the scheduler's warmup set otherwise. For
each release, accelconf raises where the release raises, at the same stage, and otherwise gives the
same plugin fields, mixed precision, accumulation and DeepSpeed config; each boundary of the
releases data's ``runs`` part is a release where the real results change; and ``diff
--transformers-version A..B`` reports as changed exactly the plugin fields two releases really build
differently. The releases are the cached ones the construction matrix uses
(tests/oracle/test_transformers_matrix.py); CI installs them.
"""

from __future__ import annotations

import os

import pytest
import yaml

from accelconf.trainer import releases as data
from accelconf.trainer.diff import release_diff
from tests.oracle import transformers_releases as tr
from tests.oracle import transformers_runs_matrix as matrix

IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")
pytestmark = pytest.mark.oracle
# Release pairs the diff's oracle compares: each side of a boundary of the runs data, and the ends.
PAIRS = (
    ("4.51", "4.52"),
    ("4.57", "5.0"),
    ("5.1", "5.2"),
    ("5.3", "5.4"),
    ("5.4", "5.5"),
    ("5.9", "5.10"),
    ("4.46", "5.24"),
)


@pytest.fixture(scope="module")
def results() -> dict[str, matrix.RunsResult]:
    pytest.importorskip("accelerate", reason="the releases run accelerate from the venv (test extras)")
    missing = [m for m in data.RELEASES if not tr.CACHE.installed(m)]
    if missing and not IN_CI:
        pytest.skip(
            f"{len(missing)} transformers releases are not cached under the venv ({', '.join(missing[:4])}...): "
            "run `python tests/oracle/transformers_releases.py` (CI installs them)"
        )
    for m in data.RELEASES:
        tr.CACHE.ensure(m)
    return {r.minor: r for r in matrix.run_matrix(data.RELEASES)}


@pytest.mark.parametrize("minor", list(data.RELEASES))
def test_each_releases_trainer_init_is_what_accelconf_says_runs(minor, results):
    r = results[minor]
    assert not r.error, f"transformers {minor} cannot run Trainer init here: {r.error}"
    assert len(r.results) == len(matrix.cases())
    assert r.stages.get("construction", 0) >= 3 and sum(1 for x in r.results if x.get("fsdp")) >= 20
    # the DeepSpeed cases reach train()'s mismatch check, each raising with the release's own lines
    assert sum(1 for c in matrix.cases() if c["kind"] == "deepspeed") >= 10 and r.stages.get("train()", 0) >= 5
    assert not r.problems, f"transformers {minor}:\n" + "\n".join(r.problems)


def _signature(r: matrix.RunsResult) -> list[object]:
    keys = ("raises", "mixed_precision", "fields", "accelerator_ga", "init_config", "train_config")
    return [tuple(x.get(k) for k in keys) for x in r.results]


def test_each_boundary_of_the_runs_data_is_a_release_whose_trainer_builds_differently(results):
    assert data.runs_boundaries()
    for since in data.runs_boundaries():
        before = data.RELEASES[data.RELEASES.index(since) - 1]
        assert _signature(results[before]) != _signature(results[since]), (
            f"the runs data says transformers {since} builds the Accelerator differently from {before}; "
            "their Trainer init gives the same results"
        )


def _args_text(case: dict) -> str:
    return yaml.safe_dump({"output_dir": "out", **case["args"]}, sort_keys=False)


@pytest.mark.parametrize(("a", "b"), PAIRS)
def test_the_release_diff_says_changed_what_the_two_releases_build_differently(a, b, results):
    ra, rb = results[a], results[b]
    compared = 0
    for case, xa, xb in zip(matrix.cases(), ra.results, rb.results):
        if case["kind"] != "init" or case["env"] or not xa.get("fields") or not xb.get("fields"):
            continue
        text = _args_text(case)
        got = release_diff((text, "args.yaml"), (text, "args.yaml"), (a, b))
        said = {c.key.removeprefix("fsdp_plugin.") for c in got.changes if c.key.startswith("fsdp_plugin.")}
        real = {k for k in set(xa["fields"]) | set(xb["fields"]) if xa["fields"].get(k) != xb["fields"].get(k)}
        assert said == real, (case["args"], {k: (xa["fields"].get(k), xb["fields"].get(k)) for k in said ^ real})
        compared += 1
    assert compared >= 5
    for case, xa, xb in zip(matrix.cases(), ra.results, rb.results):
        if case["env"] or (xa.get("raises") in (None, "train()")) == (xb.get("raises") in (None, "train()")):
            continue
        text = _args_text(case)
        keys = {c.key for c in release_diff((text, "args.yaml"), (text, "args.yaml"), (a, b)).changes}
        stage = xa.get("raises") or xb.get("raises")
        assert f"raises.{stage}" in keys, (case["args"], xa.get("error"), xb.get("error"))
    for case, xa, xb in zip(matrix.cases(), ra.results, rb.results):
        if case["kind"] != "deepspeed" or "accelerator_ga" not in xa or "accelerator_ga" not in xb:
            continue
        text = _args_text(case)
        keys = {c.key for c in release_diff((text, "args.yaml"), (text, "args.yaml"), (a, b)).changes}
        assert ("Accelerator.gradient_accumulation_steps" in keys) == (xa["accelerator_ga"] != xb["accelerator_ga"])
