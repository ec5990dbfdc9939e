"""Host RAM per node for the offloading strategies follows the ranks on the node.

An offloaded shard lives in the host RAM of the node its rank runs on, so with the world size
fixed, one node of 8 GPUs holds twice what each of two nodes of 4 GPUs holds. Every offloading
strategy accelconf models (FSDP1 and FSDP2 with offload_params, ZeRO-3 with the optimizer and/or
the parameters on the CPU, ZeRO-2 with the optimizer on the CPU) is checked on both layouts: a
per-node figure that counts one rank (or the whole world) instead of the node's ranks fails here.
"""

from __future__ import annotations

import pytest

from accelconf.environment.memory import Layout, estimate, strategy_of
from accelconf.environment.modelsize import from_count
from accelconf.text.document import load_text

FSDP = "distributed_type: FSDP\nmixed_precision: bf16\nnum_processes: 8\nfsdp_config:\n"
DS = "distributed_type: DEEPSPEED\nmixed_precision: bf16\nnum_processes: 8\ndeepspeed_config:\n"
OFFLOADING = {
    "fsdp1-offload": FSDP
    + "  fsdp_version: 1\n  fsdp_offload_params: true\n  fsdp_cpu_ram_efficient_loading: true\n"
    + "  fsdp_sharding_strategy: FULL_SHARD\n",
    "fsdp2-offload": FSDP + "  fsdp_version: 2\n  fsdp_offload_params: true\n  fsdp_cpu_ram_efficient_loading: true\n",
    "zero3-offload-both": DS + "  zero_stage: 3\n  offload_optimizer_device: cpu\n  offload_param_device: cpu\n",
    "zero3-offload-optimizer": DS + "  zero_stage: 3\n  offload_optimizer_device: cpu\n",
}


@pytest.mark.parametrize("name", OFFLOADING)
def test_one_node_of_eight_holds_twice_the_host_ram_of_each_of_two_nodes_of_four(name: str) -> None:
    strategy, _ = strategy_of(load_text(OFFLOADING[name], "train.yaml").data)
    model = from_count("8B")
    one = estimate(strategy, Layout(8, 1), model).host
    two = estimate(strategy, Layout(4, 2), model).host
    assert one > 0 and two > 0
    assert one == pytest.approx(2 * two, rel=0.02), (name, one, two)


@pytest.mark.parametrize("name", OFFLOADING)
def test_offloaded_host_ram_per_node_grows_with_the_gpus_on_it(name: str) -> None:
    strategy, _ = strategy_of(load_text(OFFLOADING[name], "train.yaml").data)
    model = from_count("8B")
    figures = [estimate(strategy, Layout(g, 8 // g), model).host for g in (2, 4, 8)]
    assert figures == sorted(figures) and figures[0] < figures[-1], (name, figures)
