"""Preflight: two "nodes" on localhost, each a real process tree, through torch.distributed on CPU.

Every multi-process test runs its processes in sessions of their own under a deadline, kills what
is left when it passes, and then checks /proc that no process of those sessions survived.
The comparison rules are also tested on hand-made facts, without processes.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from accelconf.preflight.compare import issues
from accelconf.preflight.layout import read_layout

ROOT = Path(__file__).resolve().parents[2]
# The rendezvous deadline of the scenarios that succeed: generous, because two busy cores can take
# half a minute to import torch in one process and not in the other; a clean run ends as soon as
# every node is there.
ARRIVE_S = 150
DEADLINE_S = 400  # per scenario, processes killed after it


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _config(tmp_path: Path, port: int, name: str = "multinode.yaml", processes: int = 4, extra: str = "") -> Path:
    path = tmp_path / name
    path.write_text(f"""compute_environment: LOCAL_MACHINE
distributed_type: MULTI_CPU
num_machines: 2
num_processes: {processes}
machine_rank: 0
main_process_ip: 127.0.0.1
main_process_port: {port}
mixed_precision: 'no'
use_cpu: true
{extra}""")
    return path


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ACCELERATE_", "ACCELCONF_PREFLIGHT_"))}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(ROOT / "lsp"), env.get("PYTHONPATH", "")])
    env["OMP_NUM_THREADS"] = "1"
    return {**env, **extra}


def _sessions_alive(sids: set[int]) -> list[int]:
    alive = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if fields[0] != "Z" and int(fields[3]) in sids:  # state, ppid, pgrp, session
            alive.append(int(entry))
    return alive


def _run_all(commands: list[tuple[list[str], dict[str, str]]], cwd: Path) -> list[subprocess.CompletedProcess]:
    """Run the commands at once, each in its own session; every process is gone when this returns."""
    procs = [
        subprocess.Popen(
            argv, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
        )
        for argv, env in commands
    ]
    sids = {p.pid for p in procs}
    end = time.monotonic() + DEADLINE_S
    results = []
    try:
        for p in procs:
            out, err = p.communicate(timeout=max(end - time.monotonic(), 1))
            results.append(subprocess.CompletedProcess(p.args, p.returncode, out, err))
    finally:
        for sid in sids:
            try:
                os.killpg(sid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        for p in procs:
            p.wait()
    time.sleep(0.2)
    assert _sessions_alive(sids) == [], "a preflight process outlived its node"
    return results


def _node(config: Path, rank: int, *more: str, **env: str) -> tuple[list[str], dict[str, str]]:
    return (
        [
            sys.executable,
            "-m",
            "accelconf",
            "preflight",
            str(config),
            "--machine-rank",
            str(rank),
            "--timeout",
            str(ARRIVE_S),
            "--step-timeout",
            "120",
            "--size",
            "0.25",
            *more,
        ],
        _env(**env),
    )


def _findings(result: subprocess.CompletedProcess) -> list[dict]:
    return json.loads(result.stdout)["findings"]


def test_two_nodes_that_agree_exit_0_with_a_table_per_node(tmp_path):
    cfg = _config(tmp_path, _free_port())
    node0, node1 = _run_all([_node(cfg, 0), _node(cfg, 1)], tmp_path)
    assert (node0.returncode, node1.returncode) == (0, 0), node0.stdout + node0.stderr + node1.stderr
    assert "2 node(s), 4 rank(s)" in node0.stdout
    assert "node 0 (" in node0.stdout and "ranks 0, 1" in node0.stdout
    assert "node 1 (" in node0.stdout and "ranks 2, 3" in node0.stdout
    assert "all_reduce of 0.25 MiB on gloo: sum correct" in node0.stdout
    assert "clean:" in node0.stdout
    assert "node 1" in node1.stdout and "joined" in node1.stdout


def test_each_difference_of_node_1_is_reported_with_its_node(tmp_path):
    port = _free_port()
    cfg0 = _config(tmp_path, port)
    cfg1 = _config(tmp_path, port, "other.yaml", extra="# edited on node 1 only\n")
    node0, node1 = _run_all(
        [
            _node(cfg0, 0, "--format", "json", ACCELERATE_MIXED_PRECISION="no"),
            _node(
                cfg1,
                1,
                "--format",
                "json",
                ACCELERATE_MIXED_PRECISION="bf16",
                ACCELCONF_PREFLIGHT_FAKE_VERSIONS="accelerate=0.0.1",
            ),
        ],
        tmp_path,
    )
    assert (node0.returncode, node1.returncode) == (1, 1), node0.stderr + node1.stderr
    found = {(f["rule"], f["node"], tuple(f["ranks"])): f["message"] for f in _findings(node0)}
    assert (
        "bf16" in found[("preflight.env", 1, (2, 3))]
        and "ACCELERATE_MIXED_PRECISION" in found[("preflight.env", 1, (2, 3))]
    )
    assert "0.0.1" in found[("preflight.version", 1, (2, 3))]
    assert ("preflight.config", 1, (2, 3)) in found
    assert all(f["node"] == 1 for f in _findings(node0)), found


def test_a_node_that_never_starts_is_named_within_the_deadline(tmp_path):
    cfg = _config(tmp_path, _free_port())
    argv, env = _node(cfg, 0)
    argv[argv.index("--timeout") + 1] = "3"
    started = time.monotonic()
    (node0,) = _run_all([(argv, env)], tmp_path)
    assert node0.returncode == 1
    assert "node rank(s) 1 never arrived: waited 3 s at 127.0.0.1:" in node0.stdout
    # 3 s of waiting, after an import of torch that can take half a minute on busy cores
    assert time.monotonic() - started < 3 + 90


def _torchrun(cfg: Path, port: int, node: int) -> tuple[list[str], dict[str, str]]:
    return (
        [
            sys.executable,
            "-m",
            "torch.distributed.run",
            "--nnodes",
            "2",
            "--nproc_per_node",
            "2",
            "--node_rank",
            str(node),
            "--master_addr",
            "127.0.0.1",
            "--master_port",
            str(port),
            "-m",
            "accelconf.preflight",
            str(cfg),
            "--size",
            "0.25",
            "--format",
            "json",
        ],
        _env(),
    )


def test_num_processes_8_with_4_ranks_started_is_reported(tmp_path):
    port = _free_port()
    cfg = _config(tmp_path, port, processes=8)
    node0, _ = _run_all([_torchrun(cfg, port, 0), _torchrun(cfg, port, 1)], tmp_path)
    assert node0.returncode == 1, node0.stderr[-2000:]
    found = {(f["rule"], f["node"]): f["message"] for f in _findings(node0)}
    assert (
        "4 ranks joined" in found[("preflight.world-size", None)]
        and "num_processes: 8" in found[("preflight.world-size", None)]
    )
    assert "4 per node" in found[("preflight.per-node", 0)] and ("preflight.per-node", 1) in found


def test_two_nodes_under_torchrun_exit_0(tmp_path):
    port = _free_port()
    cfg = _config(tmp_path, port)
    node0, node1 = _run_all([_torchrun(cfg, port, 0), _torchrun(cfg, port, 1)], tmp_path)
    assert (node0.returncode, node1.returncode) == (0, 0), node0.stderr[-2000:]
    assert _findings(node0) == [] and len(json.loads(node0.stdout)["ranks"]) == 4


def test_two_nodes_under_accelerate_launch_multi_node_flags_exit_0(tmp_path):
    pytest.importorskip("accelerate")
    port = _free_port()
    cfg = _config(tmp_path, port)

    def launch(node: int) -> tuple[list[str], dict[str, str]]:
        return (
            [
                sys.executable,
                "-m",
                "accelerate.commands.launch",
                "--multi_gpu",
                "--num_processes",
                "4",
                "--num_machines",
                "2",
                "--machine_rank",
                str(node),
                "--main_process_ip",
                "127.0.0.1",
                "--main_process_port",
                str(port),
                "--mixed_precision",
                "no",
                "--dynamo_backend",
                "no",
                "-m",
                "accelconf.preflight",
                str(cfg),
                "--size",
                "0.25",
            ],
            _env(),
        )

    node0, node1 = _run_all([launch(0), launch(1)], tmp_path)
    assert (node0.returncode, node1.returncode) == (0, 0), node0.stdout + node0.stderr[-2000:]
    assert "clean:" in node0.stdout and "2 node(s), 4 rank(s)" in node0.stdout


# -- the rules on hand-made facts -------------------------------------------------------------------


def _facts(rank: int, node: int, **over: object) -> dict:
    base = {
        "host": f"host{node}",
        "rank": rank,
        "local_rank": rank % 2,
        "node": node,
        "world_size": 4,
        "local_world_size": 2,
        "from_launcher": True,
        "pid": 1,
        "clock": 100.0,
        "gpus": {"count": 0, "models": [], "memory_gib": [], "cuda_visible_devices": None},
        "versions": {"python": "3.11.7", "torch": "2.13.0", "accelerate": "1.15.0"},
        "config": {"path": "c.yaml", "sha256": "a" * 64},
        "deepspeed_file": {"path": None, "sha256": None},
        "default_config": {"path": "/home/x/default_config.yaml", "sha256": None},
        "env": {"NCCL_SOCKET_IFNAME": "eth0"},
        "rendezvous": "127.0.0.1:29500",
        "disk": None,
    }
    return {**base, **over}


@pytest.fixture
def layout(tmp_path):
    return read_layout(str(_config(tmp_path, 29500)))


def test_facts_that_agree_give_no_issue(layout):
    assert issues(layout, [_facts(r, r // 2) for r in range(4)]) == []


def test_an_env_var_set_on_node_0_only_is_reported_on_the_node_without_it(layout):
    facts = [_facts(r, r // 2) for r in range(4)]
    for f in facts[2:]:
        f["env"] = {}
    (issue,) = issues(layout, facts)
    assert (issue.rule, issue.node, issue.ranks) == ("preflight.env", 1, (2, 3))
    assert "NCCL_SOCKET_IFNAME is None here, 'eth0' on node 0" in issue.message


def test_a_default_config_on_one_host_a_skewed_clock_and_another_rendezvous_are_reported(layout):
    facts = [_facts(r, r // 2) for r in range(4)]
    facts[3]["default_config"] = {"path": "/home/x/default_config.yaml", "sha256": "b" * 64}
    facts[2]["clock"] = 107.5
    for f in facts[2:]:
        f["rendezvous"] = "10.0.0.9:29500"
    got = {(i.rule, i.node, i.ranks) for i in issues(layout, facts)}
    assert got == {
        ("preflight.default-config", 1, (3,)),
        ("preflight.clock", 1, (2,)),
        ("preflight.rendezvous", 1, (2, 3)),
    }


def test_gpus_are_expected_only_when_the_config_trains_on_them(tmp_path):
    gpu = tmp_path / "gpu.yaml"
    gpu.write_text(_config(tmp_path, 29500).read_text().replace("MULTI_CPU", "MULTI_GPU").replace("use_cpu: true", ""))
    facts = [_facts(r, r // 2) for r in range(4)]
    facts[2]["gpus"] = facts[3]["gpus"] = {"count": 1, "models": ["NVIDIA H100"], "cuda_visible_devices": "0"}
    got = {(i.rule, i.node) for i in issues(read_layout(str(gpu)), facts)}
    assert ("preflight.gpus", 0) in got and ("preflight.gpus", 1) in got and ("preflight.gpu-model", 1) in got


def test_a_process_started_without_a_launcher_is_told_it_runs_alone(layout):
    (issue, *_) = [
        i
        for i in issues(layout, [_facts(0, 0, from_launcher=False, world_size=1)])
        if i.rule == "preflight.no-launcher"
    ]
    assert "rank 0 of 1" in issue.message


# -- the CLI without torch ----------------------------------------------------------------------------


def test_to_cli_all_ranks_preflight_ends_each_command_with_the_preflight_module(cli, tmp_path):
    cfg = _config(tmp_path, 29500).read_text().replace("MULTI_CPU", "MULTI_GPU").replace("use_cpu: true", "")
    (tmp_path / "gpu.yaml").write_text(cfg)
    r = cli("to-cli", "--all-ranks", "--preflight", str(tmp_path / "gpu.yaml"))
    assert r.code == 0
    blocks = r.out.split("\n\n")
    assert len(blocks) == 2
    for rank, block in enumerate(blocks):
        assert f"--machine_rank {rank} \\\n    -m accelconf.preflight {tmp_path / 'gpu.yaml'}" in block


def test_to_cli_preflight_warns_that_accelerate_runs_a_multi_cpu_config_one_process_per_node(cli, tmp_path):
    r = cli("to-cli", "--all-ranks", "--preflight", str(_config(tmp_path, 29500)))
    assert "[convert.preflight]" in r.err and "one process per node" in r.err


def test_preflight_rejects_a_machine_rank_the_config_does_not_have(cli, tmp_path):
    r = cli("preflight", str(_config(tmp_path, 29500)), "--machine-rank", "2")
    assert r.code == 2 and "--machine-rank 2 is outside 0..1: num_machines is 2" in r.err


def test_preflight_of_an_unreadable_config_exits_2_with_its_position(cli, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("num_machines: [2\n")
    r = cli("preflight", str(bad), "--machine-rank", "0")
    assert r.code == 2 and str(bad) + ":" in r.err


def test_preflight_help_imports_no_torch():
    code = (
        "import sys; from accelconf.cli import main\n"
        "try:\n    main(['preflight', '--help'])\nexcept SystemExit:\n    pass\n"
        "print([m for m in ('torch', 'accelerate') if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=_env(), timeout=60).stdout
    assert out.strip().endswith("[]")


def test_a_rank_whose_rendezvous_never_completes_reports_the_hang_and_exits(tmp_path):
    cfg = _config(tmp_path, _free_port())
    port = str(_free_port())
    env = _env(
        RANK="0", WORLD_SIZE="2", LOCAL_RANK="0", LOCAL_WORLD_SIZE="1", MASTER_ADDR="127.0.0.1", MASTER_PORT=port
    )
    (rank0,) = _run_all([([sys.executable, "-m", "accelconf.preflight", str(cfg), "--timeout", "3"], env)], tmp_path)
    assert rank0.returncode == 1
    assert (
        f"node 0 rank 0: the rendezvous at 127.0.0.1:{port} did not finish within 3 s [preflight.hang]" in rank0.stderr
    )


def test_a_machine_rank_used_by_two_nodes_is_reported_by_node_0(tmp_path):
    cfg = _config(tmp_path, _free_port())
    node0, first, second = _run_all([_node(cfg, 0), _node(cfg, 1), _node(cfg, 1)], tmp_path)
    assert node0.returncode == 1
    assert "node 1: machine_rank 1 was used by two nodes" in node0.stderr
    assert sorted([first.returncode, second.returncode]) == [0, 1]
    assert "machine_rank 1 is used by another node already" in (first.stderr + second.stderr)


def test_free_disk_is_reported_for_the_path_given_and_an_error_for_a_missing_one(tmp_path):
    from accelconf.preflight.facts import disk_free

    assert disk_free(str(tmp_path))["free_gib"] >= 0
    assert "error" in disk_free(str(tmp_path / "absent"))
    facts = [_facts(0, 0, disk={"path": "/ckpt", "error": "No such file or directory"}), _facts(1, 0)]
    assert [
        (i.rule, i.node, i.ranks)
        for i in issues(read_layout(str(_config(tmp_path, 29500))), facts)
        if i.rule == "preflight.disk"
    ] == [("preflight.disk", 0, (0,))]


def test_preflight_without_torch_exits_2_with_a_message(cli, tmp_path, monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "torch" else real(name, *a))
    r = cli("preflight", str(_config(tmp_path, 29500)), "--machine-rank", "0")
    assert r.code == 2 and "torch is not installed" in r.err
