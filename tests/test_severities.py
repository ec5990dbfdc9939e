"""Severities are data: one row per validate rule id and case, with the severity
it must have. Every rule id validate.py can emit appears here, so changing a severity, or adding a rule
without deciding its severity, fails a test."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from accelconf.accelerate.validate import validate_document
from accelconf.text.document import load_text

MG = "distributed_type: MULTI_GPU\nnum_processes: 2\n"
FS = "distributed_type: FSDP\nnum_processes: 2\n"
DS = "distributed_type: DEEPSPEED\nnum_processes: 2\n"

# (rule, case, text, accelerate version, key the finding is about, expected severity)
TABLE: list[tuple[str, str, str, str, str, str]] = [
    ("empty", "empty document", "# nothing\n", "1.15", "", "error"),
    ("not-a-mapping", "a list", "- a\n- b\n", "1.15", "", "error"),
    ("duplicate-key", "key twice", MG + "num_processes: 4\n", "1.15", "", "error"),
    ("yaml11-scalar", "enum value read as a boolean", FS + "fsdp_config:\n  fsdp_state_dict_type: off\n", "1.15", "fsdp_config.fsdp_state_dict_type", "warning"),
    ("yaml11-scalar", "free string read as a boolean", MG + "main_training_function: yes\n", "1.15", "main_training_function", "warning"),
    ("unknown-key", "top-level typo", MG + "mixed_precison: fp16\n", "1.15", "mixed_precison", "error"),
    ("unknown-nested-key", "typo in fsdp_config", FS + "fsdp_config:\n  fsdp_state_dict_typ: FULL_STATE_DICT\n", "1.15", "fsdp_config.fsdp_state_dict_typ", "warning"),
    ("alias-too-new", "unprefixed dynamo key before 1.14", MG + "dynamo_config:\n  backend: INDUCTOR\n", "1.13", "dynamo_config.backend", "warning"),
    ("removed-key", "top-level section removed", MG + "ipex_config:\n  ipex: true\n", "1.15", "ipex_config", "error"),
    ("removed-key", "nested key removed", FS + "fsdp_config:\n  fsdp_backward_prefetch_policy: BACKWARD_PRE\n", "1.15", "fsdp_config.fsdp_backward_prefetch_policy", "warning"),
    ("key-too-new", "top-level section too new", MG + "parallelism_config:\n  parallelism_config_tp_size: 1\n", "1.9", "parallelism_config", "error"),
    ("key-too-new", "ignoring it changes what runs", FS + "fsdp_config:\n  fsdp_version: 2\n", "1.2", "fsdp_config.fsdp_version", "error"),
    ("key-too-new", "ignoring it changes nothing that runs", MG + "dynamo_config:\n  dynamo_backend: INDUCTOR\n  dynamo_use_regional_compilation: true\n", "1.4",
     "dynamo_config.dynamo_use_regional_compilation", "warning"),
    ("missing-distributed-type", "no distributed_type", "num_processes: 2\n", "1.15", "", "error"),
    ("yaml-bool-value", "unquoted NO without num_processes (launch fails)", "distributed_type: NO\n", "1.15", "distributed_type", "error"),
    ("yaml-bool-value", "unquoted NO with num_processes (launches)", "distributed_type: NO\nnum_processes: 1\n", "1.15", "distributed_type", "warning"),
    ("yaml-bool-value", "unquoted no as mixed_precision (crash since 0.34)", MG + "mixed_precision: no\n", "1.15", "mixed_precision", "error"),
    ("yaml-bool-value", "unquoted no as mixed_precision before 0.34", MG + "mixed_precision: no\n", "0.33", "mixed_precision", "info"),
    ("invalid-type", "distributed_type not a string", "distributed_type: 3\nnum_processes: 2\n", "1.15", "distributed_type", "error"),
    ("invalid-type", "integer gpu_ids", MG + "gpu_ids: 0\n", "1.15", "gpu_ids", "error"),
    ("invalid-type", "number setting not a number", MG + "main_process_port: abc\n", "1.15", "main_process_port", "error"),
    ("invalid-type", "string setting not a string", MG + "main_process_ip: [a]\n", "1.15", "main_process_ip", "warning"),
    ("invalid-type", "used section not a mapping", MG + "dynamo_config: inductor\n", "1.15", "dynamo_config", "error"),
    ("legacy-value", "TPU before 0.28 name", "distributed_type: TPU\nnum_processes: 8\n", "1.15", "distributed_type", "error"),
    ("legacy-value", "integer sharding strategy", FS + "fsdp_config:\n  fsdp_sharding_strategy: 1\n", "1.15", "fsdp_config.fsdp_sharding_strategy", "info"),
    ("enum-case", "distributed_type in lower case (general rule)", "distributed_type: multi_gpu\nnum_processes: 2\n", "1.15", "distributed_type", "error"),
    ("enum-case", "compute_environment in lower case", MG + "compute_environment: local_machine\n", "1.15", "compute_environment", "error"),
    ("enum-case", "mixed_precision in upper case (lowercased)", MG + "mixed_precision: FP16\n", "1.15", "mixed_precision", "info"),
    ("enum-case", "case-insensitive enum in another case", FS + "fsdp_config:\n  fsdp_state_dict_type: full_state_dict\n", "1.15", "fsdp_config.fsdp_state_dict_type", "info"),
    ("enum-case", "case-sensitive enum in another case (general rule)", MG + "dynamo_config:\n  dynamo_mode: DEFAULT\n", "1.15", "dynamo_config.dynamo_mode", "error"),
    ("enum-case", "sharding strategy case before 0.34", FS + "fsdp_config:\n  fsdp_sharding_strategy: full_shard\n", "0.33", "fsdp_config.fsdp_sharding_strategy", "error"),
    ("enum-case", "lowercase fp8 backend since 1.9", MG + "mixed_precision: fp8\nfp8_config:\n  backend: te\n", "1.15", "fp8_config.backend", "error"),
    ("enum-case", "lowercase fp8 backend before 1.9", MG + "mixed_precision: fp8\nfp8_config:\n  backend: te\n", "1.8", "fp8_config.backend", "warning"),
    ("invalid-value", "unknown distributed_type", "distributed_type: GPU\nnum_processes: 2\n", "1.15", "distributed_type", "error"),
    ("invalid-value", "unknown compute_environment", MG + "compute_environment: CLOUD\n", "1.15", "compute_environment", "error"),
    ("invalid-value", "unknown mixed_precision", MG + "mixed_precision: fp32\n", "1.15", "mixed_precision", "error"),
    ("invalid-value", "unknown enum value", FS + "fsdp_config:\n  fsdp_sharding_strategy: HALF_SHARD\n", "1.15", "fsdp_config.fsdp_sharding_strategy", "error"),
    ("invalid-value", "below the minimum", MG + "num_machines: 0\n", "1.15", "num_machines", "error"),
    ("invalid-value", "unknown legacy dynamo backend", MG + "dynamo_backend: warp\n", "1.15", "dynamo_backend", "error"),
    ("value-too-new", "distributed type too new", "distributed_type: MULTI_HPU\nnum_processes: 2\n", "1.4", "distributed_type", "error"),
    ("value-too-new", "dynamo backend too new", MG + "dynamo_config:\n  dynamo_backend: NEURON\n", "1.14", "dynamo_config.dynamo_backend", "error"),
    ("sagemaker-broken", "SageMaker config since 1.10", "compute_environment: AMAZON_SAGEMAKER\ndistributed_type: 'NO'\nec2_instance_type: ml.p3.2xlarge\niam_role_name: r\n",
     "1.15", "compute_environment", "error"),
    ("legacy-key", "fp16 beside mixed_precision", MG + "mixed_precision: bf16\nfp16: true\n", "1.15", "fp16", "warning"),
    ("legacy-key", "legacy fp16 alone", MG + "fp16: true\n", "1.15", "fp16", "info"),
    ("legacy-key", "dynamo_backend beside dynamo_config", MG + "dynamo_backend: INDUCTOR\ndynamo_config:\n  dynamo_mode: default\n", "1.15", "dynamo_backend", "warning"),
    ("no-effect", "ignored in a file, would change the launch", MG + "num_machines: 2\nmain_process_ip: 10.0.0.1\nnum_processes: 4\nsame_network: true\n", "1.15",
     "same_network", "warning"),
    ("no-effect", "ignored in a file, changes nothing", MG + "rdzv_backend: static\n", "1.15", "rdzv_backend", "info"),
    ("no-effect", "exported under a name nothing reads", MG + "mixed_precision: fp8\nfp8_config:\n  backend: TE\n  amax_history_length: 16\n", "1.15",
     "fp8_config.amax_history_length", "warning"),
    ("no-effect", "dynamo under DeepSpeed", DS + "dynamo_config:\n  dynamo_backend: INDUCTOR\n", "1.15", "dynamo_config", "warning"),
    ("fsdp1-key-in-fsdp2", "FSDP1 key on FSDP2", FS + "fsdp_config:\n  fsdp_version: 2\n  fsdp_backward_prefetch: BACKWARD_PRE\n", "1.15",
     "fsdp_config.fsdp_backward_prefetch", "warning"),
    ("fsdp2-key-in-fsdp1", "FSDP2 key set on FSDP1", FS + "fsdp_config:\n  fsdp_activation_checkpointing: true\n  fsdp_activation_checkpointing_offload: true\n",
     "1.15", "fsdp_config.fsdp_activation_checkpointing_offload", "error"),
    ("fsdp2-reshard-bool", "strategy name as FSDP2 reshard", FS + "fsdp_config:\n  fsdp_version: 2\n  fsdp_reshard_after_forward: FULL_SHARD\n", "1.15",
     "fsdp_config.fsdp_reshard_after_forward", "error"),
    ("fsdp1-strategy-ignored", "FSDP1 reads only the strategy", FS + "fsdp_config:\n  fsdp_reshard_after_forward: SHARD_GRAD_OP\n", "1.15",
     "fsdp_config.fsdp_reshard_after_forward", "warning"),
    ("fsdp1-strategy-ignored", "FSDP1 strategy that is the default", FS + "fsdp_config:\n  fsdp_reshard_after_forward: FULL_SHARD\n", "1.15",
     "fsdp_config.fsdp_reshard_after_forward", "info"),
    ("fsdp2-local-state-dict", "LOCAL_STATE_DICT on FSDP2", FS + "fsdp_config:\n  fsdp_version: 2\n  fsdp_state_dict_type: LOCAL_STATE_DICT\n", "1.15",
     "fsdp_config.fsdp_state_dict_type", "error"),
    ("fsdp-invalid-combination", "offload without checkpointing", FS + "fsdp_config:\n  fsdp_version: 2\n  fsdp_activation_checkpointing_offload: true\n", "1.15",
     "fsdp_config.fsdp_activation_checkpointing_offload", "error"),
    ("fsdp-invalid-combination", "RAM-efficient loading without sync", FS + "fsdp_config:\n  fsdp_sync_module_states: false\n", "1.15",
     "fsdp_config.fsdp_sync_module_states", "error"),
    ("unprefixed-key", "unprefixed fsdp key", FS + "fsdp_config:\n  offload_params: true\n", "1.15", "fsdp_config.offload_params", "info"),
    ("section-unused", "unused section (mapping)", MG + "fsdp_config:\n  fsdp_version: 2\n", "1.15", "fsdp_config", "info"),
    ("section-unused", "unused section not a mapping", MG + "deepspeed_config: ds.json\n", "1.15", "deepspeed_config", "warning"),
    ("section-unused", "fp8_config without fp8", MG + "fp8_config:\n  backend: TE\n", "1.15", "fp8_config", "info"),
    ("section-unused", "mpirun_config without MULTI_CPU", MG + "mpirun_config:\n  mpirun_hostfile: h\n", "1.15", "mpirun_config", "info"),
    ("deepspeed-config-file-conflict", "a DeepSpeed key beside the JSON file", DS + "deepspeed_config:\n  deepspeed_config_file: ds.json\n  zero_stage: 2\n", "1.15",
     "deepspeed_config.zero_stage", "error"),
    ("deepspeed-config-file-conflict", "mixed_precision beside the JSON file", DS + "mixed_precision: 'no'\ndeepspeed_config:\n  deepspeed_config_file: ds.json\n", "1.15",
     "mixed_precision", "error"),
    ("deepspeed-config-file-missing", "JSON file not next to the config", DS + "deepspeed_config:\n  deepspeed_config_file: nowhere.json\n", "1.15",
     "deepspeed_config.deepspeed_config_file", "info"),
    ("deepspeed-offload-stage", "param offload below ZeRO-3", DS + "deepspeed_config:\n  zero_stage: 2\n  offload_param_device: cpu\n", "1.15",
     "deepspeed_config.offload_param_device", "warning"),
    ("zero3-save-16bit", "ZeRO-3 without 16-bit gathering on save", DS + "deepspeed_config:\n  zero_stage: 3\n", "1.15",
     "deepspeed_config.zero_stage", "warning"),
    ("zero3-save-16bit", "ZeRO-3 with zero3_save_16bit_model false", DS + "deepspeed_config:\n  zero_stage: 3\n  zero3_save_16bit_model: false\n",
     "1.15", "deepspeed_config.zero3_save_16bit_model", "warning"),
    ("missing-key", "no num_processes (0.34+)", "distributed_type: MULTI_GPU\n", "1.15", "distributed_type", "error"),
    ("missing-key", "num_processes: -1", "distributed_type: MULTI_GPU\nnum_processes: -1\n", "1.15", "num_processes", "error"),
    ("missing-key", "SageMaker without its keys", "compute_environment: AMAZON_SAGEMAKER\ndistributed_type: 'NO'\n", "1.9", "compute_environment", "error"),
    ("null-count", "num_machines: null", MG + "num_machines: null\n", "1.15", "num_machines", "error"),
    ("process-layout", "not a multiple of num_machines", MG.replace("2\n", "3\n") + "num_machines: 2\nmain_process_ip: 10.0.0.1\n", "1.15", "num_processes", "warning"),
    ("process-layout", "fewer processes than machines", MG.replace("2\n", "1\n") + "num_machines: 2\nmain_process_ip: 10.0.0.1\n", "1.15", "num_processes", "error"),
    ("multi-node", "no main_process_ip", MG.replace("2\n", "4\n") + "num_machines: 2\n", "1.15", "num_machines", "warning"),
    ("multi-node", "machine_rank out of range", MG.replace("2\n", "4\n") + "num_machines: 2\nmain_process_ip: 10.0.0.1\nmachine_rank: 2\n", "1.15", "machine_rank", "error"),
    ("gpu-ids", "one GPU id for MULTI_GPU", MG + "gpu_ids: '0'\n", "1.15", "gpu_ids", "error"),
    ("gpu-ids", "more GPU ids than processes", MG + "gpu_ids: '0,1,2,3'\n", "1.15", "gpu_ids", "warning"),
    ("processes", "'NO' with several processes", "distributed_type: 'NO'\nnum_processes: 2\n", "1.15", "num_processes", "info"),
    ("parallelism", "sizes do not multiply to num_processes", FS + "parallelism_config:\n  parallelism_config_dp_shard_size: 4\n", "1.15", "parallelism_config", "error"),
    ("parallelism", "FSDP2 without a shard dimension", FS + "fsdp_config:\n  fsdp_version: 2\nparallelism_config:\n  parallelism_config_dp_replicate_size: 2\n",
     "1.15", "parallelism_config", "error"),
    ("parallelism", "FSDP2 without a shard dimension, before 1.15", FS + "fsdp_config:\n  fsdp_version: 2\nparallelism_config:\n"
     "  parallelism_config_dp_replicate_size: 2\n", "1.14", "parallelism_config", "warning"),
    ("section-unused", "parallelism_config a launch does not pass on", "distributed_type: DEEPSPEED\nnum_processes: 2\n"
     "parallelism_config:\n  parallelism_config_dp_replicate_size: 2\n", "1.11", "parallelism_config", "info"),
    ("launch-refused", "multi-node simple launcher without main_process_ip", "distributed_type: MULTI_CPU\nnum_processes: 4\nnum_machines: 2\n", "1.15",
     "distributed_type", "error"),
    ("sharding-strategy-int", "strategy name before 0.26", FS + "fsdp_config:\n  fsdp_sharding_strategy: FULL_SHARD\n", "0.25",
     "fsdp_config.fsdp_sharding_strategy", "error"),
    ("deepspeed-config-file-invalid", "unreadable JSON file", DS + "deepspeed_config:\n  deepspeed_config_file: {bad}\n", "1.15",
     "deepspeed_config.deepspeed_config_file", "error"),
]


def _rule_ids_in_validate() -> set[str]:
    """Every rule id validate.py can emit (``ctx.finding("x", ...)``, ``Finding("x", ...)``, ``"a" if c else "b"``).

    Read with :mod:`ast`; the mutant copies ``make mutants`` adds to the module (functions named
    ``*__mutmut_<n>``) are passed over, so the scan sees the rules as written."""
    import accelconf.accelerate.validate as v

    ids: set[str] = set()

    def first_arg(node: ast.expr) -> list[ast.expr]:
        return [node.body, node.orelse] if isinstance(node, ast.IfExp) else [node]

    def visit(node: ast.AST) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and re.search(r"__mutmut_\d+$", node.name):
            return
        if isinstance(node, ast.Call) and node.args and (
                (isinstance(node.func, ast.Attribute) and node.func.attr == "finding"
                 and isinstance(node.func.value, ast.Name) and node.func.value.id == "ctx")
                or (isinstance(node.func, ast.Name) and node.func.id == "Finding")):
            ids.update(a.value for a in first_arg(node.args[0]) if isinstance(a, ast.Constant) and isinstance(a.value, str))
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(Path(v.__file__).read_text(encoding="utf-8")))
    return ids


def test_every_validate_rule_id_has_rows_in_the_table() -> None:
    ids = _rule_ids_in_validate()
    assert len(ids) > 30  # the scan finds the rules: the test can fail
    missing = ids - {row[0] for row in TABLE}
    assert not missing, f"rule ids without a severity row: {sorted(missing)}"


@pytest.mark.parametrize("rule,case,text,version,key,severity", TABLE, ids=[f"{r[0]}:{r[1]}" for r in TABLE])
def test_severity_table(rule: str, case: str, text: str, version: str, key: str, severity: str, tmp_path: Path) -> None:
    if "{bad}" in text:  # a referenced DeepSpeed JSON that cannot be read
        (tmp_path / "bad.json").write_text("{not json")
        (tmp_path / "c.yaml").write_text(text.replace("{bad}", "bad.json"))
        from accelconf.text.document import load_file

        doc = load_file(tmp_path / "c.yaml")
    else:
        doc = load_text(text, str(tmp_path / "c.yaml"))
    got = [f for f in validate_document(doc, accelerate_version=version) if f.rule == rule and (not key or f.key == key)]
    assert got, f"{case}: no {rule} finding; got {[(f.rule, f.key, f.severity) for f in validate_document(doc, accelerate_version=version)]}"
    assert {f.severity for f in got} == {severity}, f"{case}: {[(f.severity, f.message) for f in got]}"


@pytest.mark.oracle
def test_unquoted_no_error_is_where_the_launcher_fails(tmp_path: Path) -> None:
    """The two yaml-bool-value rows for ``distributed_type: NO``, against accelerate's launcher."""
    from tests.oracle.run import oracle

    fails, runs = tmp_path / "fails.yaml", tmp_path / "runs.yaml"
    fails.write_text("distributed_type: NO\n")
    runs.write_text("distributed_type: NO\nnum_processes: 1\n")
    verdict = oracle([fails, runs])
    assert not verdict[str(fails)]["ok"] and "num_processes" in verdict[str(fails)]["error"]
    assert verdict[str(runs)]["ok"]
