"""Oracles for the memory estimate: DeepSpeed's own estimators, FSDP2 measured, transformers' counts.

* ZeRO-2/ZeRO-3 model states equal ``estimate_zero2_model_states_mem_needs`` and
  ``estimate_zero3_model_states_mem_needs`` (installed DeepSpeed; pure functions of counts).
* FSDP2: ``fully_shard`` runs under ``torchrun`` on CPU with gloo (``tests/data/memory/fsdp2_probe.py``);
  each rank's local parameter, gradient and AdamW-state elements after one step equal the estimate.
* Parameter counts from ``config.json`` equal transformers' ``num_parameters()`` of each family's
  default config, built on the meta device.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from accelconf.environment import memory
from accelconf.environment.memory import Layout, Strategy, estimate, fsdp2_local_elements
from accelconf.environment.modelsize import FAMILIES, ModelSize, from_model_dir

pytestmark = pytest.mark.oracle
DATA = Path(__file__).resolve().parents[1] / "data" / "memory"

PARAMS = (125_000_000, 1_234_567_891, 8_030_261_248, 70_553_706_496, 405_000_000_000)
LAYOUTS = ((1, 1), (2, 1), (8, 1), (4, 2), (8, 2), (8, 16))


@pytest.fixture(scope="module")
def ds_estimators():
    os.environ.setdefault("DS_ACCELERATOR", "cpu")
    try:
        from deepspeed.runtime.zero.stage3 import estimate_zero3_model_states_mem_needs
        from deepspeed.runtime.zero.stage_1_and_2 import estimate_zero2_model_states_mem_needs
    except ImportError as exc:
        pytest.skip(f"DeepSpeed is not installed (test extras): {exc}")
    return estimate_zero2_model_states_mem_needs, estimate_zero3_model_states_mem_needs


@pytest.mark.parametrize("precision", ["bf16", "fp16"])
def test_zero2_equals_deepspeed(ds_estimators, precision):
    z2, _ = ds_estimators
    checked = 0
    for p in PARAMS:
        for per_node, nodes in LAYOUTS:
            for offload in (False, True):
                size = ModelSize(p, p // 40, p // 40, "test")
                s = Strategy("deepspeed", precision, 2, "cpu" if offload else "none")
                e = estimate(s, Layout(per_node, nodes), size)
                cpu, gpu = z2(p, num_gpus_per_node=per_node, num_nodes=nodes, cpu_offload=offload)
                assert (round(e.model_states), int(e.host)) == (gpu, cpu), (p, per_node, nodes, offload)
                checked += 1
    assert checked == len(PARAMS) * len(LAYOUTS) * 2


def test_zero3_equals_deepspeed(ds_estimators):
    _, z3 = ds_estimators
    checked = 0
    for p in PARAMS:
        for largest in (p // 80, p // 7):
            for per_node, nodes in LAYOUTS:
                for opt, par in ((False, False), (True, False), (True, True)):
                    for init in (False, True):
                        size = ModelSize(p, largest, largest, "test")
                        s = Strategy("deepspeed", "bf16", 3, "cpu" if opt else "none", "cpu" if par else "none", init)
                        e = estimate(s, Layout(per_node, nodes), size)
                        cpu, gpu, live = z3(
                            p,
                            largest,
                            num_gpus_per_node=per_node,
                            num_nodes=nodes,
                            cpu_offload=opt,
                            cpu_offload_params=par,
                            zero_init=init,
                        )
                        assert (round(e.model_states), int(e.host), e.gathered) == (gpu, cpu, live), (
                            p,
                            largest,
                            per_node,
                            nodes,
                            opt,
                            par,
                            init,
                        )
                        checked += 1
    assert checked == len(PARAMS) * 2 * len(LAYOUTS) * 3 * 2


def test_zero2_from_accelerate_config_equals_deepspeed(ds_estimators, tmp_path):
    """The whole path: a config file's deepspeed_config section -> the strategy -> DeepSpeed's figure."""
    z2, _ = ds_estimators
    from accelconf.environment.modelsize import from_count
    from accelconf.text.document import load_text

    doc = load_text(
        "distributed_type: DEEPSPEED\nmixed_precision: bf16\nnum_machines: 2\nnum_processes: 16\n"
        "deepspeed_config:\n  zero_stage: 2\n  offload_optimizer_device: cpu\n"
    )
    report = memory.assess(
        doc.data, from_count("8B"), gpu_name="H100-80GB", gpu_memory_gib=80, gpus_per_node=8, nodes=2
    )
    cpu, gpu = z2(8_000_000_000, num_gpus_per_node=8, num_nodes=2, cpu_offload=True)
    assert (round(report.estimate.model_states), int(report.estimate.host)) == (gpu, cpu)


# -- FSDP2, measured ------------------------------------------------------------------------------


def _torchrun() -> list[str]:
    return [sys.executable, "-m", "torch.distributed.run"]


@pytest.mark.parametrize("world", [2, 3])
def test_fsdp2_shards_measured(tmp_path, world):
    pytest.importorskip("torch", reason="torch is in the test extras; FSDP2 is measured with it")
    out = tmp_path / "out"
    out.mkdir()
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONWARNINGS="ignore")
    proc = subprocess.run(
        [
            *_torchrun(),
            f"--nproc_per_node={world}",
            "--master_port=0",
            "--rdzv_backend=c10d",
            "--rdzv_endpoint=localhost:0",
            str(DATA / "fsdp2_probe.py"),
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=240,
        env=env,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    size = from_model_dir(str(out / "model"))
    assert size.source.startswith("safetensors headers")
    est = estimate(Strategy("fsdp2", "no"), Layout(world, 1), size)
    measured = [json.loads((out / f"rank{r}.json").read_text()) for r in range(world)]
    assert {m["world"] for m in measured} == {world}
    for m in measured:
        local = fsdp2_local_elements(size.tensors, world, m["rank"])
        assert m["param_elements"] == local
        assert m["grad_elements"] == local
        assert m["optimizer_elements"] == 2 * local + len(size.tensors)  # exp_avg, exp_avg_sq, one step each
    busiest = max(measured, key=lambda m: m["param_elements"])
    assert est.elements == {
        "params": busiest["param_elements"],
        "grads": busiest["grad_elements"],
        "optimizer": busiest["optimizer_elements"],
    }
    for key, part in (("param_bytes", est.params), ("grad_bytes", est.grads), ("optimizer_bytes", est.optimizer)):
        assert abs(part - busiest[key]) <= 0.05 * busiest[key], (key, part, busiest[key])
    # uneven dim-0 chunks really happened: the ranks do not all hold the same amount
    assert len({m["param_elements"] for m in measured}) > 1


# -- parameter counts vs transformers -----------------------------------------------------------


@pytest.fixture(scope="module")
def transformers_count():
    pytest.importorskip("transformers", reason="transformers is in the test extras: it is the parameter-count oracle")
    torch = pytest.importorskip("torch", reason="transformers builds models with torch")
    from transformers import AutoConfig, AutoModelForCausalLM

    def count(family: str) -> tuple[int, dict]:
        cfg = AutoConfig.for_model(family)
        with torch.device("meta"):
            model = AutoModelForCausalLM.from_config(cfg)
        return model.num_parameters(), cfg.to_dict()

    return count


@pytest.mark.parametrize("family", FAMILIES)
def test_config_count_equals_transformers(transformers_count, tmp_path, family):
    expected, cfg = transformers_count(family)
    (tmp_path / "config.json").write_text(json.dumps(cfg, default=str))
    size = from_model_dir(str(tmp_path))
    assert size.source == f"config.json ({family})"
    assert size.params == expected
    assert 0 < size.largest_layer <= size.largest_unit < size.params


@pytest.mark.parametrize("gpus_per_node, nodes", [(4, 1), (2, 2)])
def test_fsdp2_offloaded_host_ram_per_node_measured(tmp_path, gpus_per_node, nodes):
    """With fsdp_offload_params, each node's host RAM holds its ranks' shards of the fp32 weights,
    gradients and AdamW state: the estimate per node equals the measured sum over that node's ranks
    (4 processes on localhost, grouped into nodes as torchrun would number them)."""
    pytest.importorskip("torch", reason="torch is in the test extras; FSDP2 is measured with it")
    world = gpus_per_node * nodes
    out = tmp_path / "out"
    out.mkdir()
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONWARNINGS="ignore")
    proc = subprocess.run(
        [
            *_torchrun(),
            f"--nproc_per_node={world}",
            "--master_port=0",
            "--rdzv_backend=c10d",
            "--rdzv_endpoint=localhost:0",
            str(DATA / "fsdp2_probe.py"),
            str(out),
            "offload",
        ],
        capture_output=True,
        text=True,
        timeout=240,
        env=env,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    size = from_model_dir(str(out / "model"))
    measured = [json.loads((out / f"rank{r}.json").read_text()) for r in range(world)]
    assert all(m["devices"] == ["cpu"] for m in measured)
    per_node = [
        sum(
            m["param_bytes"] + m["grad_bytes"] + m["optimizer_bytes"]
            for m in measured
            if m["rank"] // gpus_per_node == node
        )
        for node in range(nodes)
    ]
    est = estimate(
        Strategy("fsdp2", "no", offload_params=True, cpu_ram_efficient_loading=True), Layout(gpus_per_node, nodes), size
    )
    assert est.params == est.grads == est.optimizer == 0.0  # nothing of the states stays on the GPU
    busiest = max(per_node)
    assert abs(est.host - busiest) <= 0.05 * busiest, (est.host, per_node)
