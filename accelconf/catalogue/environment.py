"""Rules of ``accelconf check`` against a machine (:mod:`accelconf.environment`): the environment,
the memory estimate and the model's layer classes."""

from __future__ import annotations

from accelconf.catalogue import Example, Rule, Severity

MG = "distributed_type: MULTI_GPU\nnum_processes: 8\n"


def E(id: str, severity: Severity, summary: str, why: str = "", *examples: Example) -> Rule:
    return Rule(id, "environment", severity, summary, why, False, examples)


def M(id: str, severity: Severity, summary: str, why: str) -> Rule:
    return Rule(id, "memory", severity, summary, why)


RULES: tuple[Rule, ...] = (
    E("env-probe", "warning", "GPU detection failed; the GPU checks may be incomplete"),
    E("env-no-gpu", "warning", "a GPU distributed_type, but no GPU was found"),
    E(
        "env-num-processes",
        "error",
        "processes per node (num_processes / num_machines) vs the GPUs on a node",
        "More processes than GPUs on a node share GPUs (or fail); fewer leave GPUs idle. "
        "`distributed_type: 'NO'` starts one process whatever num_processes says, so on a node of "
        "several GPUs the fix names MULTI_GPU too.",
        Example(
            "distributed_type: MULTI_GPU\nnum_processes: 16\n",
            "distributed_type: MULTI_GPU\nnum_processes: 4\n",
            "more processes than the node's GPUs",
            None,
            target="v100-node",
        ),
    ),
    E(
        "env-gpu-ids",
        "error",
        "gpu_ids names GPUs the node does not have",
        "CUDA_VISIBLE_DEVICES then names devices that do not exist.",
        Example(
            MG.replace("8", "2") + "gpu_ids: '0,9'\n",
            MG.replace("8", "2") + "gpu_ids: '0,1'\n",
            "a GPU id past the node's",
            "error",
            target="v100-node",
        ),
    ),
    E("env-num-machines", "warning", "num_machines differs from the target's"),
    E(
        "env-bf16",
        "error",
        "bf16 (mixed_precision, or bf16.enabled in a DeepSpeed JSON) on a GPU below compute capability 8.0",
        "Accelerator() raises on such a GPU (or the kernels are emulated).",
        Example(
            MG + "mixed_precision: bf16\n",
            MG + "mixed_precision: fp16\n",
            "bf16 on V100",
            "error",
            "mixed_precision",
            target="v100-node",
        ),
    ),
    E("env-fp8-gpu", "warning", "fp8 on a GPU below compute capability 8.9 (accelerate falls back to fp16)"),
    E(
        "env-fp8-backend",
        "error",
        "fp8 without transformer-engine, torchao or ms-amp (or without the one fp8_config.backend names)",
    ),
    E("env-torch-missing", "warning", "torch is not installed"),
    E("env-fsdp-torch", "error", "FSDP1 with a torch older than accelerate's FSDP_PYTORCH_VERSION"),
    E(
        "env-fsdp2-torch",
        "error",
        "FSDP2 with a torch older than accelerate's FSDP2_PYTORCH_VERSION (2.6.0; 2.5.1 in 1.6)",
    ),
    E("env-torch-cpu-only", "warning", "a CPU-only torch build on a machine with GPUs"),
    E("env-deepspeed-missing", "error", "distributed_type DEEPSPEED without deepspeed installed"),
    E("env-deepspeed-version", "error", "deepspeed older than accelerate or the config's DeepSpeed features need"),
    E("env-rendezvous", "warning", "multi-node settings incomplete (main_process_ip/port, machine_rank, hostfile)"),
    E("env-rtx40-p2p", "info", "several RTX 40 series GPUs with a driver before 550.40.07 (NCCL P2P/IB turned off)"),
    E("env-default-config", "warning", "a multi-node config on a host with its own accelerate default config"),
    Rule(
        "model-wrap-class",
        "environment",
        "error",
        "fsdp_transformer_layer_cls_to_wrap names a class the model (--model) does not have",
        "FSDP's auto-wrap policy raises: it could not find the transformer layer class in the model.",
    ),
    M(
        "mem-gpu",
        "error",
        "the estimated peak memory per GPU (model states by phase, activations when given, CUDA "
        "context and NCCL buffers) is over 80% (warning) or 100% (error) of the target GPU's",
        "The job would run out of GPU memory (or run at the edge of it).",
    ),
    M(
        "mem-host",
        "error",
        "offloaded states need over 80% (warning) or 100% (error) of the node's host RAM",
        "CPU offload keeps optimizer states (and parameters) in host RAM on every node.",
    ),
)
