"""Issues ``accelconf preflight`` reports after every rank of the job gathered its facts
(:mod:`accelconf.preflight`): each is a reason the real launch would fail or differ between nodes."""

from __future__ import annotations

from accelconf.catalogue import Rule


def P(id: str, summary: str) -> Rule:
    return Rule(
        f"preflight.{id}",
        "preflight",
        "error",
        summary,
        "Found on the cluster by the ranks themselves, before the training job runs.",
    )


RULES: tuple[Rule, ...] = (
    P("world-size", "fewer or more ranks joined than num_processes"),
    P("nodes", "fewer or more nodes joined than num_machines"),
    P("no-launcher", "started without RANK/WORLD_SIZE: the process runs alone"),
    P("per-node", "a node runs another number of processes than the config gives"),
    P("gpus", "fewer GPUs visible on a node than processes per node"),
    P("rendezvous", "the rendezvous used differs from main_process_ip:port"),
    P("version", "a package version differs between ranks"),
    P("config", "the config file differs between ranks (sha256)"),
    P("deepspeed-file", "the DeepSpeed file differs between ranks (sha256)"),
    P("default-config", "accelerate's default config differs between ranks"),
    P("env", "an environment variable accelerate or NCCL reads differs between ranks"),
    P("gpu-model", "the GPU models differ between ranks"),
    P("clock", "a node's clock is skewed from rank 0's"),
    P("disk", "the output directory cannot be written"),
    P("allreduce", "an all_reduce returned a wrong result"),
    P("missing-nodes", "some nodes never reported"),
    P("hang", "a step did not finish within its time limit"),
    P("step-failed", "a step failed on a rank"),
    P("machine-rank", "two nodes claimed one machine rank, or a rank outside 0..num_machines-1"),
)
