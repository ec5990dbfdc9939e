"""The accelerate diff (:mod:`accelconf.diff.accelerate`) change by change: every field of every
:class:`~accelconf.diff.result.Change` (values in canonical spelling, kind, lines, where each side's
value comes from, the note, both key spellings), the differences without effect, and the notes.

tests/unit/diff/test_diff.py checks whole data-directory cases and properties; this module pins the
smaller rules (defaults that follow other settings, what a format cannot express, the env's
spellings of an unset number and of a list of booleans, FSDP1 against FSDP2 sharding). Written
from the survivors of ``make mutants`` (bench/MUTANTS.md).
"""

from __future__ import annotations

import importlib

import pytest

from accelconf import formats

semdiff = importlib.import_module("accelconf.diff")

FSDP2 = "distributed_type: FSDP\nfsdp_config:\n  fsdp_version: 2\n"
STATE_DICT_1_TO_2 = (
    "fsdp_config.fsdp_state_dict_type",
    "FULL_STATE_DICT",
    "SHARDED_STATE_DICT",
    "changed",
    0,
    0,
    "default",
    "default",
    "neither side sets it; the default differs",
)
STATE_DICT_2_TO_1 = (
    "fsdp_config.fsdp_state_dict_type",
    "SHARDED_STATE_DICT",
    "FULL_STATE_DICT",
    "changed",
    0,
    0,
    "default",
    "default",
    "neither side sets it; the default differs",
)


def _read(text: str, fmt: str, side: str, version: str | None):
    path = f"{side}.sh" if fmt == "cli" else f"{side}.{fmt}"
    return formats.read(text, fmt=fmt, path=path, version=version)


def _diff(a: str, b: str, fa: str = "yaml", fb: str = "yaml", version: str | None = None, ignore=()):
    return semdiff.diff(_read(a, fa, "a", version), _read(b, fb, "b", version), version=version, ignore=ignore)


def _rows(changes) -> list[tuple]:
    out = []
    for c in changes:
        row = (c.key, c.a, c.b, c.kind, c.a_line, c.b_line, c.a_where, c.b_where, c.note)
        out.append(row + (c.a_key, c.b_key) if c.a_key or c.b_key else row)
    return out


# (A, B, formats, version, changes, notes)
CASES = {
    "num_processes defaults to 1 only for distributed_type NO": (
        "distributed_type: 'NO'\nnum_processes: 1\n",
        "distributed_type: 'NO'\n",
        ("yaml", "yaml"),
        None,
        [],
        [],
    ),
    "num_processes has no default for multi-GPU": (
        "distributed_type: MULTI_GPU\nnum_processes: 1\n",
        "distributed_type: MULTI_GPU\n",
        ("yaml", "yaml"),
        None,
        [("num_processes", 1, None, "removed", 2, 0, "a.yaml:2", "default", "")],
        [],
    ),
    "one machine rendezvous is local": (
        "num_machines: 1\nmain_process_ip: 10.0.0.1\n",
        "num_machines: 1\n",
        ("yaml", "yaml"),
        None,
        [("main_process_ip", "10.0.0.1", "127.0.0.1", "removed", 2, 0, "a.yaml:2", "default", "")],
        [],
    ),
    "one machine when num_machines is unset": (
        "main_process_ip: 10.0.0.1\n",
        "{}\n",
        ("yaml", "yaml"),
        None,
        [("main_process_ip", "10.0.0.1", "127.0.0.1", "removed", 1, 0, "a.yaml:1", "default", "")],
        [],
    ),
    "one machine when num_machines is the string 1": (
        "num_machines: 1\nmain_process_ip: 10.0.0.1\n",
        "num_machines: '1'\n",
        ("yaml", "yaml"),
        None,
        [("main_process_ip", "10.0.0.1", "127.0.0.1", "removed", 2, 0, "a.yaml:2", "default", "")],
        [],
    ),
    "two machines have no rendezvous default": (
        "num_machines: 2\nmain_process_ip: 10.0.0.1\n",
        "num_machines: 2\n",
        ("yaml", "yaml"),
        None,
        [("main_process_ip", "10.0.0.1", None, "removed", 2, 0, "a.yaml:2", "default", "")],
        [],
    ),
    "zero3_init_flag defaults to true under stage 3": (
        "distributed_type: DEEPSPEED\ndeepspeed_config:\n  zero_stage: 3\n",
        "distributed_type: DEEPSPEED\ndeepspeed_config:\n  zero_stage: 3\n  zero3_init_flag: true\n",
        ("yaml", "yaml"),
        None,
        [],
        [],
    ),
    "zero3_init_flag defaults to false under stage 2": (
        "distributed_type: DEEPSPEED\ndeepspeed_config:\n  zero_stage: 2\n",
        "distributed_type: DEEPSPEED\ndeepspeed_config:\n  zero_stage: 2\n  zero3_init_flag: true\n",
        ("yaml", "yaml"),
        None,
        [("deepspeed_config.zero3_init_flag", False, True, "added", 0, 4, "default", "b.yaml:4", "")],
        [],
    ),
    "zero3_init_flag: the stage defaults to 2": (
        "distributed_type: DEEPSPEED\ndeepspeed_config: {}\n",
        "distributed_type: DEEPSPEED\ndeepspeed_config:\n  zero3_init_flag: false\n",
        ("yaml", "yaml"),
        None,
        [],
        [],
    ),
    "zero3_init_flag: a stage written as text": (
        "distributed_type: DEEPSPEED\ndeepspeed_config:\n  zero_stage: '3'\n",
        "distributed_type: DEEPSPEED\ndeepspeed_config:\n  zero_stage: 3\n  zero3_init_flag: true\n",
        ("yaml", "yaml"),
        None,
        [],
        [],
    ),
    "an env var written None is an unset number": (
        "distributed_type: MEGATRON_LM\nmegatron_lm_config:\n  megatron_lm_num_micro_batches: 4\n",
        "ACCELERATE_USE_MEGATRON_LM=true\nMEGATRON_LM_NUM_MICRO_BATCHES=None\n",
        ("yaml", "env"),
        None,
        [("megatron_lm_config.megatron_lm_num_micro_batches", 4, 1, "removed", 3, 0, "a.yaml:3", "default", "")],
        [],
    ),
    "an env var written none is an unset number, int or float": (
        "distributed_type: MEGATRON_LM\nmegatron_lm_config: {}\n",
        "ACCELERATE_USE_MEGATRON_LM=true\nMEGATRON_LM_NUM_MICRO_BATCHES=none\nMEGATRON_LM_GRADIENT_CLIPPING=None\n",
        ("yaml", "env"),
        None,
        [],
        [],
    ),
    "env cannot express main_training_function": (
        "mixed_precision: bf16\nmain_training_function: run\n",
        "ACCELERATE_MIXED_PRECISION=bf16\n",
        ("yaml", "env"),
        None,
        [
            (
                "main_training_function",
                "run",
                None,
                "not_comparable",
                2,
                0,
                "a.yaml:2",
                "env cannot express it",
                "B (env) cannot express this setting",
            )
        ],
        [],
    ),
    "what env cannot express is no difference at its default": (
        "mixed_precision: bf16\nmain_training_function: main\n",
        "ACCELERATE_MIXED_PRECISION=bf16\n",
        ("yaml", "env"),
        None,
        [],
        [],
    ),
    "env cannot express it, seen from the env side": (
        "ACCELERATE_MIXED_PRECISION=bf16\n",
        "mixed_precision: bf16\nmain_training_function: run\n",
        ("env", "yaml"),
        None,
        [
            (
                "main_training_function",
                None,
                "run",
                "not_comparable",
                0,
                2,
                "env cannot express it",
                "b.yaml:2",
                "A (env) cannot express this setting",
            )
        ],
        [],
    ),
    "flags: where names the flag": (
        "distributed_type: MULTI_GPU\ndowncast_bf16: 'no'\n",
        "--multi_gpu --num_processes 2",
        ("yaml", "cli"),
        None,
        [("num_processes", None, 2, "added", 0, 1, "default", "b.sh:1 --num_processes", "")],
        [],
    ),
    "flags take the launcher's default of a function name": (
        "distributed_type: MULTI_GPU\nnum_processes: 2\nmain_training_function: run\n",
        "--multi_gpu --num_processes 2",
        ("yaml", "cli"),
        None,
        [("main_training_function", "run", "main", "removed", 3, 0, "a.yaml:3", "default", "")],
        [],
    ),
    "a list of booleans written as tuple text (accelerate's fp8 template)": (
        "mixed_precision: fp8\nfp8_config:\n  backend: TE\n  override_linear_precision: [true, false, true]\n",
        "mixed_precision: fp8\nfp8_config:\n  backend: TE\n  override_linear_precision: (True, false,true)\n",
        ("yaml", "yaml"),
        None,
        [],
        [],
    ),
    "a list of booleans written as list text": (
        "mixed_precision: fp8\nfp8_config:\n  backend: TE\n  override_linear_precision: [true, false, true]\n",
        "mixed_precision: fp8\nfp8_config:\n  backend: TE\n  override_linear_precision: ' [false,false, true]'\n",
        ("yaml", "yaml"),
        None,
        [
            (
                "fp8_config.override_linear_precision",
                [True, False, True],
                [False, False, True],
                "changed",
                4,
                4,
                "a.yaml:4",
                "b.yaml:4",
                "",
            )
        ],
        [],
    ),
    "an env digit for an enum with legacy integers": (
        "distributed_type: FSDP\nfsdp_config:\n  fsdp_backward_prefetch: BACKWARD_PRE\n",
        "ACCELERATE_USE_FSDP=true\nFSDP_BACKWARD_PREFETCH= 1\n",
        ("yaml", "env"),
        None,
        [],
        [],
    ),
    "FSDP2 reshard false against FSDP1 FULL_SHARD": (
        FSDP2 + "  fsdp_reshard_after_forward: false\n",
        "distributed_type: FSDP\nfsdp_config:\n  fsdp_sharding_strategy: FULL_SHARD\n",
        ("yaml", "yaml"),
        None,
        [
            ("fsdp_config.fsdp_version", 2, 1, "removed", 3, 0, "a.yaml:3", "default", ""),
            STATE_DICT_2_TO_1,
            (
                "fsdp_config.fsdp_sharding_strategy",
                False,
                "FULL_SHARD",
                "changed",
                4,
                3,
                "a.yaml:4",
                "b.yaml:3",
                "FSDP1 FULL_SHARD corresponds to fsdp_reshard_after_forward: true; "
                "fsdp_reshard_after_forward: false corresponds to FSDP1 SHARD_GRAD_OP",
                "fsdp_config.fsdp_reshard_after_forward",
                "fsdp_config.fsdp_sharding_strategy",
            ),
        ],
        [
            "fsdp_reshard_after_forward false -> fsdp_sharding_strategy "
            "FULL_SHARD: more sharding, less memory per GPU and more communication"
        ],
    ),
    "FSDP2 by default against FSDP1 HYBRID_SHARD": (
        FSDP2,
        "distributed_type: FSDP\nfsdp_config:\n  fsdp_sharding_strategy: HYBRID_SHARD\n",
        ("yaml", "yaml"),
        None,
        [
            ("fsdp_config.fsdp_version", 2, 1, "removed", 3, 0, "a.yaml:3", "default", ""),
            STATE_DICT_2_TO_1,
            (
                "fsdp_config.fsdp_sharding_strategy",
                True,
                "HYBRID_SHARD",
                "added",
                0,
                3,
                "default",
                "b.yaml:3",
                "accelerate to-fsdp2 maps HYBRID_SHARD to reshard_after_forward: true, but FSDP2 has no HYBRID_SHARD",
                "fsdp_config.fsdp_reshard_after_forward",
                "fsdp_config.fsdp_sharding_strategy",
            ),
        ],
        [
            "hybrid sharding shards within a node and replicates across nodes: "
            "less inter-node traffic, more memory per GPU on several nodes"
        ],
    ),
    "FSDP1 SHARD_GRAD_OP against FSDP2 reshard true": (
        "distributed_type: FSDP\nfsdp_config:\n  fsdp_sharding_strategy: SHARD_GRAD_OP\n",
        FSDP2 + "  fsdp_reshard_after_forward: true\n",
        ("yaml", "yaml"),
        None,
        [
            ("fsdp_config.fsdp_version", 1, 2, "added", 0, 3, "default", "b.yaml:3", ""),
            STATE_DICT_1_TO_2,
            (
                "fsdp_config.fsdp_sharding_strategy",
                "SHARD_GRAD_OP",
                True,
                "changed",
                3,
                4,
                "a.yaml:3",
                "b.yaml:4",
                "FSDP1 SHARD_GRAD_OP corresponds to fsdp_reshard_after_forward: false; "
                "fsdp_reshard_after_forward: true corresponds to FSDP1 FULL_SHARD",
                "fsdp_config.fsdp_sharding_strategy",
                "fsdp_config.fsdp_reshard_after_forward",
            ),
        ],
        [
            "fsdp_sharding_strategy SHARD_GRAD_OP -> fsdp_reshard_after_forward "
            "true: more sharding, less memory per GPU and more communication"
        ],
    ),
    "FSDP1 NO_SHARD against FSDP2 by default": (
        "distributed_type: FSDP\nfsdp_config:\n  fsdp_sharding_strategy: NO_SHARD\n",
        FSDP2,
        ("yaml", "yaml"),
        None,
        [
            ("fsdp_config.fsdp_version", 1, 2, "added", 0, 3, "default", "b.yaml:3", ""),
            STATE_DICT_1_TO_2,
            (
                "fsdp_config.fsdp_sharding_strategy",
                "NO_SHARD",
                True,
                "removed",
                3,
                0,
                "a.yaml:3",
                "default",
                "FSDP1 NO_SHARD corresponds to fsdp_reshard_after_forward: false; "
                "fsdp_reshard_after_forward: true corresponds to FSDP1 FULL_SHARD",
                "fsdp_config.fsdp_sharding_strategy",
                "fsdp_config.fsdp_reshard_after_forward",
            ),
        ],
        [
            "fsdp_sharding_strategy NO_SHARD -> fsdp_reshard_after_forward "
            "true: more sharding, less memory per GPU and more communication"
        ],
    ),
    "FSDP2 by default is FSDP1 FULL_SHARD written as 1": (
        FSDP2,
        "distributed_type: FSDP\nfsdp_config:\n  fsdp_sharding_strategy: 1\n",
        ("yaml", "yaml"),
        None,
        [
            (
                "fsdp_config.fsdp_version",
                2,
                1,
                "removed",
                3,
                0,
                "a.yaml:3",
                "default",
                "sharding unchanged: FSDP1 FULL_SHARD is FSDP2 fsdp_reshard_after_forward: true",
            ),
            STATE_DICT_2_TO_1,
        ],
        [],
    ),
    "unknown keys: top level and in a section": (
        "foo: 1\nfsdp_config:\n  bar: 2\n",
        "foo: 2\nfsdp_config:\n  bar: 2\n  baz: x\n",
        ("yaml", "yaml"),
        None,
        [
            ("foo", 1, 2, "changed", 1, 1, "a.yaml:1", "b.yaml:1", "unknown key: accelerate refuses to load the file"),
            ("fsdp_config.baz", None, "x", "added", 0, 4, "", "b.yaml:4", "unknown key: accelerate ignores it"),
        ],
        [],
    ),
    "unknown names only one format has": (
        "foo: 1\n",
        "ACCELERATE_MIXED_PRECISION=no\nACCELERATE_WHATEVER=1\n",
        ("yaml", "env"),
        None,
        [
            (
                "ACCELERATE_WHATEVER",
                None,
                "1",
                "not_comparable",
                0,
                2,
                "",
                "ACCELERATE_WHATEVER",
                "B (env) has it; A (yaml) cannot express it",
            ),
            ("foo", 1, None, "not_comparable", 1, 0, "a.yaml:1", "", "A (yaml) has it; B (env) cannot express it"),
        ],
        [],
    ),
    "a section that takes effect on one side": (
        "distributed_type: MULTI_GPU\nfsdp_config:\n  fsdp_offload_params: true\n",
        "distributed_type: FSDP\nfsdp_config:\n  fsdp_offload_params: false\n",
        ("yaml", "yaml"),
        None,
        [
            ("distributed_type", "MULTI_GPU", "FSDP", "changed", 1, 1, "a.yaml:1", "b.yaml:1", ""),
            ("fsdp_config.fsdp_offload_params", True, False, "changed", 3, 3, "a.yaml:3", "b.yaml:3", ""),
        ],
        ["fsdp_offload_params true -> false: more GPU memory, faster steps"],
    ),
    "use_cpu under MULTI_CPU": (
        "distributed_type: MULTI_CPU\nuse_cpu: true\n",
        "distributed_type: MULTI_CPU\nuse_cpu: false\n",
        ("yaml", "yaml"),
        None,
        [("use_cpu", True, False, "changed", 2, 2, "a.yaml:2", "b.yaml:2", "")],
        [],
    ),
    "a setting both FSDP versions read": (
        FSDP2 + "  fsdp_cpu_ram_efficient_loading: true\n",
        "distributed_type: FSDP\nfsdp_config:\n  fsdp_version: 1\n  fsdp_cpu_ram_efficient_loading: false\n",
        ("yaml", "yaml"),
        None,
        [
            (
                "fsdp_config.fsdp_version",
                2,
                1,
                "changed",
                3,
                3,
                "a.yaml:3",
                "b.yaml:3",
                "sharding unchanged: FSDP1 FULL_SHARD is FSDP2 fsdp_reshard_after_forward: true",
            ),
            STATE_DICT_2_TO_1,
            ("fsdp_config.fsdp_cpu_ram_efficient_loading", True, False, "changed", 4, 4, "a.yaml:4", "b.yaml:4", ""),
        ],
        [],
    ),
    "kwargs cannot express num_machines": (
        "mixed_precision: bf16\nnum_machines: 2\n",
        "from accelerate import Accelerator\nAccelerator(mixed_precision='bf16')\n",
        ("yaml", "kwargs"),
        None,
        [
            (
                "num_machines",
                2,
                None,
                "not_comparable",
                2,
                0,
                "a.yaml:2",
                "kwargs cannot express it",
                "B (kwargs) cannot express this setting",
            )
        ],
        [],
    ),
    "tensor parallelism divides the data-parallel processes": (
        "num_processes: 4\ndistributed_type: MULTI_GPU\nparallelism_config:\n  parallelism_config_tp_size: 2\n",
        "num_processes: 4\ndistributed_type: MULTI_GPU\n",
        ("yaml", "yaml"),
        None,
        [("parallelism_config.parallelism_config_tp_size", 2, 1, "removed", 4, 0, "a.yaml:4", "default", "")],
        [
            "effective global batch size (processes x gradient accumulation x micro batch): 2 x ? x ? -> 4 x ? x ?, "
            "x2 for the same accumulation and micro batch"
        ],
    ),
    "a number written None or none in a file is unset": (
        "distributed_type: MEGATRON_LM\nmegatron_lm_config:\n  megatron_lm_num_micro_batches: None\n"
        "  megatron_lm_gradient_clipping: none\n",
        "distributed_type: MEGATRON_LM\nmegatron_lm_config:\n  megatron_lm_num_micro_batches: 1\n"
        "  megatron_lm_gradient_clipping: 1.0\n",
        ("yaml", "yaml"),
        None,
        [],
        [],
    ),  # both sides are the defaults, 1 and 1.0
    "the sharding-strategy default of 0.24 is the number 1, FULL_SHARD": (
        "distributed_type: FSDP\nfsdp_config:\n  fsdp_sharding_strategy: SHARD_GRAD_OP\n",
        "distributed_type: FSDP\nfsdp_config: {}\n",
        ("yaml", "yaml"),
        "0.24",
        [
            (
                "fsdp_config.fsdp_sharding_strategy",
                "SHARD_GRAD_OP",
                "FULL_SHARD",
                "removed",
                3,
                0,
                "a.yaml:3",
                "default",
                "",
            )
        ],
        [
            "fsdp_sharding_strategy SHARD_GRAD_OP -> FULL_SHARD: more "
            "sharding, less memory per GPU and more communication"
        ],
    ),
    "the fp8 override default is a list": (
        "mixed_precision: fp8\nfp8_config:\n  backend: TE\n  override_linear_precision: [true, false, false]\n",
        "mixed_precision: fp8\nfp8_config:\n  backend: TE\n",
        ("yaml", "yaml"),
        None,
        [
            (
                "fp8_config.override_linear_precision",
                [True, False, False],
                [False, False, False],
                "removed",
                4,
                0,
                "a.yaml:4",
                "default",
                "",
            )
        ],
        [],
    ),
    "an FSDP1 strategy FSDP2 has no counterpart for": (
        "distributed_type: FSDP\nfsdp_config:\n  fsdp_sharding_strategy: BOGUS\n",
        FSDP2 + "  fsdp_reshard_after_forward: false\n",
        ("yaml", "yaml"),
        None,
        [
            ("fsdp_config.fsdp_version", 1, 2, "added", 0, 3, "default", "b.yaml:3", ""),
            STATE_DICT_1_TO_2,
            (
                "fsdp_config.fsdp_sharding_strategy",
                "BOGUS",
                False,
                "changed",
                3,
                4,
                "a.yaml:3",
                "b.yaml:4",
                "fsdp_reshard_after_forward: false corresponds to FSDP1 SHARD_GRAD_OP",
                "fsdp_config.fsdp_sharding_strategy",
                "fsdp_config.fsdp_reshard_after_forward",
            ),
        ],
        [],
    ),
    "a section active through a value in another case": (
        "mixed_precision: FP8\nfp8_config:\n  backend: TE\n",
        "mixed_precision: FP8\nfp8_config:\n  backend: MSAMP\n",
        ("yaml", "yaml"),
        None,
        [("fp8_config.backend", "TE", "MSAMP", "changed", 3, 3, "a.yaml:3", "b.yaml:3", "")],
        [],
    ),
    "a file's rdzv_backend against the flag (only the flag applies)": (
        "rdzv_backend: c10d\n",
        "--rdzv_backend c10d",
        ("yaml", "cli"),
        None,
        [("rdzv_backend", "static", "c10d", "added", 0, 1, "default", "b.sh:1 --rdzv_backend", "")],
        [],
    ),
    "an empty value is unset where there is no default": (
        "num_machines: 2\nmain_process_ip: ''\n",
        "num_machines: 2\n",
        ("yaml", "yaml"),
        None,
        [],
        [],
    ),
    "an empty value is unset, and no line is given for it": (
        "num_machines: 2\nmain_process_ip: ''\n",
        "num_machines: 2\nmain_process_ip: 10.0.0.1\n",
        ("yaml", "yaml"),
        None,
        [("main_process_ip", None, "10.0.0.1", "added", 0, 2, "default", "b.yaml:2", "")],
        [],
    ),
    "an empty value is a value where there is a default": (
        "num_machines: 1\nmain_process_ip: ''\n",
        "num_machines: 1\n",
        ("yaml", "yaml"),
        None,
        [("main_process_ip", "", "127.0.0.1", "removed", 2, 0, "a.yaml:2", "default", "")],
        [],
    ),
}

# (A, B, version, differences without effect)
IGNORED = {
    "a section neither side uses": (
        "distributed_type: MULTI_GPU\nfsdp_config:\n  fsdp_offload_params: true\n",
        "distributed_type: MULTI_GPU\nfsdp_config:\n  fsdp_offload_params: false\n",
        None,
        [
            (
                "fsdp_config.fsdp_offload_params",
                True,
                False,
                "changed",
                3,
                3,
                "a.yaml:3",
                "b.yaml:3",
                "no effect on either side (distributed_type is not FSDP)",
            )
        ],
    ),
    "use_cpu in a file under the torchrun launcher": (
        "distributed_type: MULTI_GPU\nuse_cpu: true\n",
        "distributed_type: MULTI_GPU\nuse_cpu: false\n",
        None,
        [
            (
                "use_cpu",
                True,
                False,
                "changed",
                2,
                2,
                "a.yaml:2",
                "b.yaml:2",
                "distributed_type MULTI_GPU launches without it",
            )
        ],
    ),
    "FSDP1 reads no reshard_after_forward": (
        "distributed_type: FSDP\nfsdp_config:\n  fsdp_reshard_after_forward: false\n",
        "distributed_type: FSDP\nfsdp_config:\n  fsdp_reshard_after_forward: true\n",
        None,
        [
            (
                "fsdp_config.fsdp_reshard_after_forward",
                False,
                True,
                "changed",
                3,
                3,
                "a.yaml:3",
                "b.yaml:3",
                "FSDP1 does not read it (it reads fsdp_sharding_strategy)",
            )
        ],
    ),
    "FSDP2 reads no sync_module_states": (
        FSDP2 + "  fsdp_sync_module_states: true\n",
        FSDP2 + "  fsdp_sync_module_states: false\n",
        None,
        [
            (
                "fsdp_config.fsdp_sync_module_states",
                True,
                False,
                "changed",
                4,
                4,
                "a.yaml:4",
                "b.yaml:4",
                "FSDP2 does not read it",
            )
        ],
    ),
    "no fsdp_version before 1.6": (
        FSDP2,
        "distributed_type: FSDP\nfsdp_config:\n  fsdp_version: 1\n",
        "1.5",
        [("fsdp_config.fsdp_version", 2, 1, "changed", 3, 3, "a.yaml:3", "b.yaml:3", "not read by accelerate 1.5")],
    ),
    "a key an old release does not read": (
        "distributed_type: FSDP\nfsdp_config:\n  fsdp_activation_checkpointing: true\n",
        "distributed_type: FSDP\nfsdp_config: {}\n",
        "0.20",
        [
            (
                "fsdp_config.fsdp_activation_checkpointing",
                True,
                None,
                "removed",
                3,
                0,
                "a.yaml:3",
                "",
                "not read by accelerate 0.20",
            )
        ],
    ),
    "a key an old release does not read, added": (
        "distributed_type: FSDP\nfsdp_config: {}\n",
        "distributed_type: FSDP\nfsdp_config:\n  fsdp_activation_checkpointing: true\n",
        "0.20",
        [
            (
                "fsdp_config.fsdp_activation_checkpointing",
                None,
                True,
                "added",
                0,
                3,
                "",
                "b.yaml:3",
                "not read by accelerate 0.20",
            )
        ],
    ),
    "a key written empty against one set, both without effect": (
        "distributed_type: FSDP\nfsdp_config:\n  fsdp_activation_checkpointing:\n",
        "distributed_type: FSDP\nfsdp_config:\n  fsdp_activation_checkpointing: true\n",
        "0.20",
        [
            (
                "fsdp_config.fsdp_activation_checkpointing",
                None,
                True,
                "changed",
                3,
                3,
                "a.yaml:3",
                "b.yaml:3",
                "not read by accelerate 0.20",
            )
        ],
    ),
    "a key that never reaches the training process": (
        "distributed_type: DEEPSPEED\ndeepspeed_config:\n  offload_param_nvme_path: /a\n",
        "distributed_type: DEEPSPEED\ndeepspeed_config:\n  offload_param_nvme_path: /b\n",
        None,
        [
            (
                "deepspeed_config.offload_param_nvme_path",
                "/a",
                "/b",
                "changed",
                3,
                3,
                "a.yaml:3",
                "b.yaml:3",
                "never reaches the training process",
            )
        ],
    ),
    "a key only the launch flag sets": (
        "rdzv_backend: static\n",
        "rdzv_backend: c10d\n",
        None,
        [
            (
                "rdzv_backend",
                "static",
                "c10d",
                "changed",
                1,
                1,
                "a.yaml:1",
                "b.yaml:1",
                "ignored in a config file (only the launch flag applies)",
            )
        ],
    ),
}


@pytest.mark.parametrize("name", list(IGNORED))
def test_differences_without_effect(name: str) -> None:
    a, b, version, ignored = IGNORED[name]
    r = semdiff.diff(_read(a, "yaml", "a", version), _read(b, "yaml", "b", version), version=version)
    assert r.changes == [] and r.notes == []
    assert _rows(r.ignored) == ignored


@pytest.mark.parametrize("name", list(CASES))
def test_changes(name: str) -> None:
    a, b, (fa, fb), version, changes, notes = CASES[name]
    ca, cb = _read(a, fa, "a", version), _read(b, fb, "b", version)
    r = semdiff.diff(ca, cb, version=version)
    assert _rows(r.changes) == changes
    assert r.notes == notes and r.ignored == []
    back = semdiff.diff(cb, ca, version=version)
    assert sorted(_rows(c.mirrored() for c in back.changes)) == sorted(changes)  # the same changes seen from B


def test_where_a_value_comes_from_in_each_format() -> None:
    from accelconf.accelerate.model import from_data

    r = semdiff.diff(from_data({"mixed_precision": "fp16"}), from_data({"mixed_precision": "bf16"}))
    assert _rows(r.changes) == [("mixed_precision", "fp16", "bf16", "changed", 0, 0, "file", "file", "")]
    r = semdiff.diff(
        formats.read("--mixed_precision fp16", fmt="cli", path="x.sh"),
        formats.read('Accelerator(mixed_precision="bf16")', fmt="kwargs", path="k.py"),
    )
    assert _rows(r.changes) == [
        (
            "mixed_precision",
            "fp16",
            "bf16",
            "changed",
            1,
            1,
            "x.sh:1 --mixed_precision",
            "k.py:1 Accelerator(mixed_precision=)",
            "",
        )
    ]
    r = semdiff.diff(
        formats.read("mixed_precision: fp16\n", fmt="yaml", path=""),
        formats.read("ACCELERATE_MIXED_PRECISION=bf16\n", fmt="env", path=""),
    )
    assert _rows(r.changes) == [
        ("mixed_precision", "fp16", "bf16", "changed", 1, 1, ":1", "ACCELERATE_MIXED_PRECISION", "")
    ]
    assert (r.a_source, r.b_source, r.version, r.mode) == ("", "", "1.15", "accelerate")


def test_the_version_reaches_both_sides() -> None:
    # fsdp_use_orig_params: the launcher default was false until 0.24, true from 0.25.
    a = _read("distributed_type: FSDP\nfsdp_config: {fsdp_use_orig_params: true}\n", "yaml", "a", "0.24")
    b = _read("distributed_type: FSDP\nfsdp_config: {}\n", "yaml", "b", "0.24")
    assert _rows(semdiff.diff(a, b, version="0.24").changes) == [
        ("fsdp_config.fsdp_use_orig_params", True, False, "removed", 2, 0, "a.yaml:2", "default", "")
    ]
    assert _rows(semdiff.diff(b, a, version="0.24").changes) == [
        ("fsdp_config.fsdp_use_orig_params", False, True, "added", 0, 2, "default", "a.yaml:2", "")
    ]
    assert semdiff.diff(a, b, version="0.24").version == "0.24"


def test_unknown_keys_equal_removed_and_ignored() -> None:
    a = _read("aaa: 1\nbbb: [1, 2]\nccc: x\nfsdp_config:\n  zzz: 1\n", "yaml", "a", None)
    b = _read("aaa: 1.0\nbbb: [1, 2]\n", "yaml", "b", None)
    r = semdiff.diff(a, b)
    assert _rows(r.changes) == [
        ("ccc", "x", None, "removed", 3, 0, "a.yaml:3", "", "unknown key: accelerate refuses to load the file"),
        ("fsdp_config.zzz", 1, None, "removed", 5, 0, "a.yaml:5", "", "unknown key: accelerate ignores it"),
    ]
    assert [c.key for c in semdiff.diff(a, b, ignore=["ccc"]).changes] == ["fsdp_config.zzz"]
    assert [c.key for c in semdiff.diff(a, b, ignore=["fsdp_config"]).changes] == ["ccc"]


def test_configs_built_from_data_are_files() -> None:
    from accelconf.accelerate.model import from_data

    a = from_data({"distributed_type": "MULTI_GPU", "use_cpu": True, "foo": 1})
    b = from_data({"distributed_type": "MULTI_GPU"})
    r = semdiff.diff(a, b)
    assert _rows(r.changes) == [
        ("foo", 1, None, "removed", 0, 0, "", "", "unknown key: accelerate refuses to load the file")
    ]
    assert _rows(r.ignored) == [
        ("use_cpu", True, None, "removed", 0, 0, "", "", "distributed_type MULTI_GPU launches without it")
    ]
    yaml = _read("distributed_type: MULTI_GPU\n", "yaml", "b", None)
    assert [c.kind for c in semdiff.diff(a, yaml).changes] == ["removed"]  # "" and yaml are one format
