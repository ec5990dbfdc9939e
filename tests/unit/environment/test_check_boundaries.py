"""The environment checks at their edges: a GPU id equal to the node's count, processes per node
equal to, one above and one below the usable GPUs, on one and on several machines, with and
without ``gpu_ids``. Each case names the finding (rule and severity) it must give, or none."""

from __future__ import annotations

import pytest

from accelconf import api
from accelconf.environment.targets import target_from_args
from accelconf.text.document import load_text

RULES = ("env-gpu-ids", "env-num-processes")


def _found(text: str, gpus: int) -> list[tuple[str, str, str]]:
    env = target_from_args(gpus=gpus, gpu="H100-80GB", accelerate_version="1.15", torch_version="2.7.1+cu126")
    found = api.check_document(load_text(text, "train.yaml"), env, accelerate_version="1.15")
    return sorted((f.rule, f.severity, f.message) for f in found if f.rule in RULES)


def _config(num_processes: int, gpu_ids: str | None = None, machines: int = 1) -> str:
    text = f"distributed_type: MULTI_GPU\nnum_processes: {num_processes}\nnum_machines: {machines}\n"
    if machines > 1:
        text += "machine_rank: 0\nmain_process_ip: 10.0.0.1\nmain_process_port: 29500\n"
    if gpu_ids is not None:
        text += f"gpu_ids: '{gpu_ids}'\n"
    return text


@pytest.mark.parametrize(
    "gpu_ids, gpus, missing",
    [
        ("0,1,2,3", 4, None),  # the last id is count - 1: fine
        ("0,1,2,4", 4, "4"),  # an id equal to the count does not exist
        ("3", 4, None),
        ("4", 4, "4"),
        ("0", 1, None),
        ("1", 1, "1"),
        ("7,8,9", 8, "8, 9"),  # every id at or over the count is named, the ones below are not
    ],
)
def test_gpu_id_equal_to_the_count_is_the_first_missing_one(gpu_ids: str, gpus: int, missing: str | None) -> None:
    n = len(gpu_ids.split(","))
    found = [f for f in _found(_config(n, gpu_ids), gpus) if f[0] == "env-gpu-ids"]
    if missing is None:
        assert found == []
    else:
        ((rule, severity, message),) = found
        assert severity == "error" and f"lists GPU {missing}, but the node has {gpus} GPU" in message


@pytest.mark.parametrize(
    "num_processes, machines, gpus, expected",
    [
        (8, 1, 8, None),  # processes per node equal to the GPUs: no finding
        (9, 1, 8, "error"),  # one over
        (7, 1, 8, "warning"),  # one under: a GPU left idle
        (16, 2, 8, None),  # the total over two machines, 8 per node
        (18, 2, 8, "error"),  # 9 per node
        (14, 2, 8, "warning"),  # 7 per node
        (1, 1, 1, None),
        (2, 1, 1, "error"),
    ],
)
def test_processes_per_node_at_the_gpu_count(
    num_processes: int, machines: int, gpus: int, expected: str | None
) -> None:
    found = [f for f in _found(_config(num_processes, machines=machines), gpus) if f[0] == "env-num-processes"]
    if expected is None:
        assert found == []
    else:
        ((_, severity, message),) = found
        per_node = num_processes // machines
        assert severity == expected and f"{per_node} process" in message


@pytest.mark.parametrize(
    "num_processes, gpu_ids, gpus, expected",
    [
        (2, "0,1", 8, None),  # gpu_ids narrows the node: 2 usable, 2 processes
        (3, "0,1", 8, "error"),  # one over what gpu_ids leaves
        (1, "0,1", 8, None),  # under what gpu_ids leaves: no idle-GPU warning (the user chose the ids)
        (2, "6,7", 8, None),
        (2, "7,8", 8, "error"),  # id 8 does not exist: one usable GPU for two processes
    ],
)
def test_processes_against_what_gpu_ids_leaves(
    num_processes: int, gpu_ids: str, gpus: int, expected: str | None
) -> None:
    found = [f for f in _found(_config(num_processes, gpu_ids), gpus) if f[0] == "env-num-processes"]
    if expected is None:
        assert found == []
    else:
        ((_, severity, message),) = found
        assert severity == expected and "gpu_ids leaves" in message
