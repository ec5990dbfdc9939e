"""Branches of validate's rules that the reviewed records (test_validate_findings.py) do not reach,
each with the behaviour a user sees. Written from the mutants of ``validate.py`` that survived
(bench/MUTANTS.md)."""

from __future__ import annotations

from pathlib import Path

from accelconf.accelerate.fmt import apply_edits
from accelconf.accelerate.validate import did_you_mean, validate_document
from accelconf.api import validate_any
from accelconf.findings import Finding
from accelconf.text.document import load_file, load_text

MG = "distributed_type: MULTI_GPU\nnum_processes: 2\n"
FS = "distributed_type: FSDP\nnum_processes: 2\n"
DS = "distributed_type: DEEPSPEED\nnum_processes: 2\n"


def run(text: str, version: str = "1.15", name: str = "c.yaml") -> list[Finding]:
    return validate_document(load_text(text, name), accelerate_version=version)


def only(findings: list[Finding], rule: str) -> Finding:
    got = [f for f in findings if f.rule == rule]
    assert len(got) == 1, [(f.rule, f.message) for f in findings]
    return got[0]


def fixed(text: str, f: Finding) -> str:
    return apply_edits(text, list(f.fix))


# -- did you mean --------------------------------------------------------------------------------


def test_did_you_mean_adds_the_fsdp_prefix_only_for_a_key_the_release_has() -> None:
    assert did_you_mean("fsdp_config", "backward_prefetch", "1.15") == "fsdp_backward_prefetch"
    # 0.20 has no fsdp_backward_prefetch: the key it has is the closest one
    assert did_you_mean("fsdp_config", "backward_prefetch", "0.20") == "fsdp_backward_prefetch_policy"
    assert did_you_mean("fsdp_config", "version", "1.15") == "fsdp_version"
    assert did_you_mean("fsdp_config", "version", "0.20") is None


def test_did_you_mean_ignores_case() -> None:
    assert did_you_mean("", "Mixed_Precision") == "mixed_precision"
    assert did_you_mean("deepspeed_config", "ZERO_STAGE") == "zero_stage"


def test_did_you_mean_in_a_section_with_unprefixed_keys() -> None:
    # fp8_config has keys without "_" (backend, margin, interval): the unprefixed comparison copes
    assert did_you_mean("fp8_config", "qqqq") is None
    assert did_you_mean("fp8_config", "fp8_margin") == "margin"
    # too far from the prefixed name, close to it without the prefix
    assert did_you_mean("megatron_lm_config", "tp_degre") == "megatron_lm_tp_degree"


# -- renames keep the key's quoting --------------------------------------------------------------


def test_rename_fix_keeps_the_quotes_of_the_key() -> None:
    text = MG + "'mixed_precison': fp16\n"
    f = only(run(text), "unknown-key")
    assert f.suggestion == "mixed_precision"
    assert fixed(text, f) == MG + "'mixed_precision': fp16\n"
    text = MG + '"mixed_precison": fp16\n'
    assert fixed(text, only(run(text), "unknown-key")) == MG + '"mixed_precision": fp16\n'


def test_unknown_nested_key_fix_and_message() -> None:
    text = FS + "fsdp_config:\n  fsdp_state_dict_typ: FULL_STATE_DICT\n"
    f = only(run(text), "unknown-nested-key")
    assert (
        f.message == "unknown key `fsdp_state_dict_typ` in `fsdp_config`: "
        "accelerate ignores it silently; did you mean `fsdp_state_dict_type`?"
    )
    assert fixed(text, f) == FS + "fsdp_config:\n  fsdp_state_dict_type: FULL_STATE_DICT\n"
    text = FS + "fsdp_config:\n  zzzzzz: 1\n"
    f = only(run(text), "unknown-nested-key")
    assert (f.message, f.suggestion, f.fix) == (
        "unknown key `zzzzzz` in `fsdp_config`: accelerate ignores it silently",
        None,
        (),
    )


# -- duplicates in JSON --------------------------------------------------------------------------


def test_duplicate_key_in_a_json_config_names_json_load() -> None:
    text = '{"distributed_type": "MULTI_GPU", "num_processes": 2,\n "num_processes": 4}'
    f = only(run(text, name="c.json"), "duplicate-key")
    assert (
        f.message
        == "duplicate key 'num_processes' at lines 1 and 2: accelerate (json.load) silently keeps line 2; keep one"
    )
    assert (f.line, f.column) == (2, 2)


# -- values ---------------------------------------------------------------------------------------


def test_a_digit_string_zero_stage_is_accepted() -> None:
    # the launcher exports the string; the plugin int()s it
    got = run(DS + "deepspeed_config:\n  zero_stage: '2'\n")
    assert not [f for f in got if f.severity == "error"], got


def test_a_case_sensitive_fp8_setting_in_lower_case() -> None:
    text = MG + "mixed_precision: fp8\nfp8_config:\n  backend: MSAMP\n  opt_level: o1\n"
    f = only(run(text), "enum-case")
    assert (f.severity, f.message, f.suggestion) == ("error", "`opt_level: o1` must be `O1`", "O1")
    assert fixed(text, f).endswith("  opt_level: O1\n")
    te = MG + "mixed_precision: fp8\nfp8_config:\n  backend: te\n"
    f = only(run(te), "enum-case")
    assert (
        f.message
        == "`backend: te` must be `TE` (`Accelerator()` raises ValueError on a lowercase FP8 backend since 1.9)"
    )


def test_invalid_values_of_case_sensitive_and_numeric_enums() -> None:
    f = only(run(MG + "mixed_precision: fp8\nfp8_config:\n  backend: FOO\n"), "invalid-value")
    assert (f.severity, f.message) == ("error", "`backend: FOO` is not one of TE, MSAMP, AO")
    f = only(run(DS + "deepspeed_config:\n  zero_stage: four\n"), "invalid-value")
    assert (f.severity, f.message) == ("error", "`zero_stage: four` is not one of 0, 1, 2, 3")


def test_a_case_insensitive_enum_before_0_34_is_only_a_remark() -> None:
    # only the sharding strategy was case-sensitive before 0.34
    f = only(run(FS + "fsdp_config:\n  fsdp_state_dict_type: full_state_dict\n", "0.33"), "enum-case")
    assert f.severity == "info"
    f = only(run(FS + "fsdp_config:\n  fsdp_sharding_strategy: full_shard\n", "0.33"), "enum-case")
    assert (f.severity, f.suggestion) == ("error", "FULL_SHARD")


def test_sharding_strategy_out_of_range_when_read_as_an_integer() -> None:
    f = only(run(FS + "fsdp_config:\n  fsdp_sharding_strategy: 7\n", "0.25"), "sharding-strategy-int")
    assert f.message.endswith(
        "`7` makes FullyShardedDataParallelPlugin fail (int() of it) when training starts; write 1 to 5"
    )
    assert (f.suggestion, f.fix) == (None, ())
    f = only(run(FS + "fsdp_config:\n  fsdp_sharding_strategy: 4\n", "0.20"), "sharding-strategy-int")
    assert f.message.endswith("; write 1 to 3")  # 0.20 knows three strategies (HYBRID_SHARD came in 0.21)
    text = FS + "fsdp_config:\n  fsdp_sharding_strategy: shard_grad_op\n"
    f = only(run(text, "0.25"), "sharding-strategy-int")
    assert (f.suggestion, fixed(text, f)) == ("2", FS + "fsdp_config:\n  fsdp_sharding_strategy: 2\n")


def test_number_settings_written_as_strings() -> None:
    assert not [f for f in run(MG + "main_process_port: '-1'\n") if f.rule == "invalid-type"]
    f = only(run(MG + "main_process_port: x8\n"), "invalid-type")
    assert f.message == "`main_process_port` should be an integer, not 'x8'"
    ds = DS + "deepspeed_config:\n  zero_stage: 2\n  gradient_clipping: {}\n"
    assert not [f for f in run(ds.format("'1.0'")) if f.rule == "invalid-type"]
    f = only(run(ds.format("abc")), "invalid-type")
    assert (f.severity, f.message) == ("error", "`gradient_clipping` should be a number, not 'abc'")


def test_type_messages_name_the_expected_type() -> None:
    f = only(run(FS + "fsdp_config:\n  fsdp_use_orig_params: maybe\n"), "invalid-type")
    assert (f.severity, f.message) == ("warning", "`fsdp_use_orig_params` should be a boolean, not 'maybe'")
    f = only(
        run(
            FS
            + "fsdp_config:\n  fsdp_auto_wrap_policy: TRANSFORMER_BASED_WRAP\n  fsdp_transformer_layer_cls_to_wrap: 5\n"
        ),
        "invalid-type",
    )
    assert f.message == "`fsdp_transformer_layer_cls_to_wrap` should be a string, not 5"
    f = only(run(DS + "deepspeed_config:\n  zero_stage: 2\n  deepspeed_moe_layer_cls_names: 5\n"), "invalid-type")
    assert f.message == "`deepspeed_moe_layer_cls_names` should be a string, not 5"  # a comma-separated class list


def test_gpu_ids_not_a_string() -> None:
    f = only(run(MG + "gpu_ids: true\n"), "invalid-type")
    assert (
        f.message == "`gpu_ids: true` is bool for accelerate and crashes the "
        "launcher (no attribute 'split'); write a string such as 'true'"
    )
    # a list is no scalar to replace: the message says what to write, there is no fix
    f = only(run(MG + "gpu_ids: [0, 1]\n"), "invalid-type")
    assert f.fix == ()


def test_override_linear_precision() -> None:
    base = MG + "mixed_precision: fp8\nfp8_config:\n  backend: TE\n  override_linear_precision: {}\n"
    assert not [f for f in run(base.format("[false, true, false]")) if f.severity != "info"]
    f = only(run(base.format("[false, true]")), "invalid-value")
    assert (f.severity, f.message, f.line, f.column) == (
        "error",
        "`override_linear_precision` takes three booleans (fprop, dgrad, wgrad)",
        6,
        30,
    )
    f = only(run(base.format("(false, false, false)")), "invalid-type")
    assert (f.severity, f.suggestion, f.line, f.column) == ("warning", "[false, false, false]", 6, 30)


# -- DeepSpeed files ------------------------------------------------------------------------------


def test_a_yaml_deepspeed_file_cannot_be_read(tmp_path: Path) -> None:
    """accelerate reads deepspeed_config_file with json.load: a YAML file there fails, whatever its name."""
    (tmp_path / "zero2.yaml").write_text("train_batch_size: 8\nzero_optimization:\n  stage: 2\n")
    (tmp_path / "c.yaml").write_text(DS + "deepspeed_config:\n  deepspeed_config_file: zero2.yaml\n")
    got = validate_document(load_file(tmp_path / "c.yaml"), accelerate_version="1.15")
    assert only(got, "deepspeed-config-file-invalid").severity == "error"


def test_validate_any_reads_yaml_as_accelerate() -> None:
    got = validate_any(load_text("train_batch_size: 8\nzero_optimization:\n  stage: 2\n", "x.yaml"))
    assert {f.rule for f in got} == {"missing-distributed-type", "unknown-key"}


def test_validate_any_picks_the_runtime_from_auto_values() -> None:
    auto = '{"train_batch_size": "auto", "train_micro_batch_size_per_gpu": "auto", "zero_optimization": {"stage": 2}}'
    assert validate_any(load_text(auto, "ds.json")) == []  # "auto": a Hugging Face runtime fills it
    assert {f.rule for f in validate_any(load_text(auto, "ds.json"), runtime="deepspeed")} == {"ds-auto"}


# -- more branches (the second sample) ------------------------------------------------------------

SAGEMAKER = (
    "compute_environment: AMAZON_SAGEMAKER\ndistributed_type: DATA_PARALLEL\nec2_instance_type: ml.p3.2xlarge\n"
    "iam_role_name: r\nregion: us-east-1\nnum_machines: 1\n"
)


def test_a_top_level_section_before_its_release_is_too_new_not_removed() -> None:
    # tp_config existed in 1.4-1.6 only: before 1.4 it is too new (no fix), from 1.7 removed (fix: delete)
    f = only(run(MG + "tp_config:\n  tp_size: 2\n", "1.3"), "key-too-new")
    assert (f.severity, f.fix) == ("error", ())
    assert (
        f.message == "`tp_config` needs accelerate 1.4 or newer (checking against 1.3); "
        "accelerate refuses to load a config with unknown top-level keys"
    )
    f = only(run(MG + "tp_config:\n  tp_size: 2\n", "1.8"), "removed-key")
    assert f.severity == "error" and f.message.endswith(
        "; accelerate refuses to load a config with unknown top-level keys"
    )


def test_an_unknown_distributed_type_gets_the_closest_name() -> None:
    f = only(run("distributed_type: MULTI_GPUS\nnum_processes: 2\n"), "invalid-value")
    assert (f.suggestion, f.line, f.column) == ("MULTI_GPU", 1, 19)


def test_sagemaker_configs_refuse_local_keys_and_lower_case() -> None:
    f = only(run(SAGEMAKER + "main_process_ip: 10.0.0.1\n", "1.9"), "unknown-key")
    assert (f.severity, f.message, f.line) == (
        "error",
        "`main_process_ip` is not a SageMaker config key: accelerate refuses to load the file",
        7,
    )
    text = SAGEMAKER.replace("AMAZON_SAGEMAKER", "amazon_sagemaker")
    f = only(run(text, "1.9"), "enum-case")
    assert (f.severity, f.suggestion) == ("error", "AMAZON_SAGEMAKER")
    assert fixed(text, f) == SAGEMAKER


def test_yaml11_scalars_after_a_dedicated_rule_or_a_key_without_effect_are_still_reported() -> None:
    got = run("distributed_type: NO\nnum_processes: 1\nmain_training_function: yes\n")
    assert [(f.rule, f.line) for f in got if f.rule.startswith("yaml")] == [
        ("yaml-bool-value", 1),
        ("yaml11-scalar", 3),
    ]
    got = run(MG + "fsdp_config:\n  fsdp_state_dict_type: off\nmain_training_function: yes\n")
    assert [(f.rule, f.line) for f in got if f.rule.startswith("yaml")] == [("yaml11-scalar", 5)]


def test_a_yaml11_scalar_where_a_path_belongs_is_a_warning() -> None:
    f = only(run(DS + "deepspeed_config:\n  zero_stage: 2\n  deepspeed_hostfile: on\n"), "yaml11-scalar")
    assert (f.severity, f.suggestion) == ("warning", "'on'")


# -- more branches (the third sample) -------------------------------------------------------------


def test_deleting_the_last_line_without_a_final_newline() -> None:
    text = DS + "deepspeed_config:\n  deepspeed_config_file: missing.json\n  zero_stage: 2"
    f = only(run(text), "deepspeed-config-file-conflict")
    assert fixed(text, f) == DS + "deepspeed_config:\n  deepspeed_config_file: missing.json\n"


def test_a_config_without_a_file_name_finds_its_deepspeed_file_from_the_working_directory(
    tmp_path: Path, monkeypatch
) -> None:
    """accelerate resolves deepspeed_config_file against the launch directory; a config read from
    stdin has no directory of its own."""
    (tmp_path / "ds.json").write_text('{"zero_optimization": {"stage": 2}}')
    monkeypatch.chdir(tmp_path)
    text = DS + "deepspeed_config:\n  deepspeed_config_file: ds.json\n"
    assert not [
        f
        for f in validate_document(load_text(text, "<stdin>"), accelerate_version="1.15")
        if f.rule.startswith("deepspeed-config-file")
    ]
    monkeypatch.chdir(tmp_path.parent)
    assert [
        f.rule
        for f in validate_document(load_text(text, "<stdin>"), accelerate_version="1.15")
        if f.rule.startswith("deepspeed-config-file")
    ] == ["deepspeed-config-file-missing"]


def test_validate_any_passes_the_world_size_to_deepspeed() -> None:
    text = '{"train_batch_size": 30, "train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 2}'
    f = only(validate_any(load_text(text, "ds.json"), world_size=4), "ds-batch")
    assert (
        f.message
        == "train_batch_size 30 != train_micro_batch_size_per_gpu 4 x gradient_accumulation_steps 2 x world size 4 (32)"
    )
    f = only(validate_any(load_text(text, "ds.json")), "ds-batch")
    assert "so no world size satisfies" in f.message


def test_list_and_path_settings_of_the_wrong_type() -> None:
    f = only(run("distributed_type: XLA\nnum_processes: 8\ntpu_env: abc\n"), "invalid-type")
    assert (f.severity, f.message) == ("warning", "`tpu_env` should be a list, not 'abc'")
    f = only(run(DS + "deepspeed_config:\n  zero_stage: 2\n  deepspeed_hostfile: 5\n"), "invalid-type")
    assert (f.severity, f.message) == ("warning", "`deepspeed_hostfile` should be a string, not 5")


# -- written from the survivors of the full run of validate.py ------------------------------------


def test_did_you_mean_with_a_prefixed_match_and_fragments_that_match_several_keys() -> None:
    # a close prefixed name wins over the unprefixed comparison
    assert did_you_mean("fp8_config", "op_level", "1.15") == "opt_level"
    # a fragment shared by several keys gets no guess (offload_param_device / offload_optimizer_device...)
    assert did_you_mean("deepspeed_config", "device", "1.15") is None
    assert did_you_mean("deepspeed_config", "file", "1.15") is None
    assert did_you_mean("deepspeed_config", "flag", "1.15") is None


def test_a_case_variant_of_a_case_sensitive_choice_suggests_that_choice() -> None:
    text = MG + "mixed_precision: fp8\nfp8_config:\n  backend: msamp\n  opt_level: o2\n"
    found = [(f.rule, f.suggestion) for f in run(text) if f.rule == "enum-case"]
    assert found == [("enum-case", "MSAMP"), ("enum-case", "O2")]


def test_a_quoted_fsdp_version_is_not_reported_as_a_legacy_value() -> None:
    assert not [f for f in run(FS + "fsdp_config:\n  fsdp_version: '2'\n") if f.rule == "legacy-value"]


def test_a_setting_that_never_reaches_training_gets_no_value_finding() -> None:
    # lost (never exported): one no-effect finding, nothing about the value that does not matter
    found = run(DS + "deepspeed_config:\n  offload_optimizer_nvme_path: 5\n")
    assert [f.rule for f in found] == ["no-effect"]
    found = run(MG + "mixed_precision: fp8\nfp8_config:\n  backend: TE\n  amax_compute_algorithm: bogus\n")
    assert [f.rule for f in found] == ["no-effect"]


def test_an_integer_setting_with_letters_is_a_type_error() -> None:
    f = only(run(MG + "main_process_port: X29500\n"), "invalid-type")
    assert f.message == "`main_process_port` should be an integer, not 'X29500'"


def test_override_linear_precision_takes_quoted_booleans_in_any_case() -> None:
    text = (
        MG + "mixed_precision: fp8\nfp8_config:\n  backend: TE\n  override_linear_precision: ['false', 'no', 'TRUE']\n"
    )
    assert not [f for f in run(text) if f.key.endswith("override_linear_precision")]


def test_integer_sharding_strategies_up_to_the_count_the_release_knows() -> None:
    text = FS + "fsdp_config:\n  fsdp_sharding_strategy: {}\n"
    assert not [f for f in run(text.format(5), "0.22") if f.rule == "sharding-strategy-int"]
    assert not [f for f in run(text.format(3), "0.20") if f.rule == "sharding-strategy-int"]
    f = only(run(text.format(4), "0.20"), "sharding-strategy-int")
    assert f.message.endswith("; write 1 to 3")
    f = only(run(text.format(6), "0.22"), "sharding-strategy-int")
    assert f.message.endswith("; write 1 to 5")


def test_the_count_that_fits_is_a_multiple_of_the_machines() -> None:
    text = "distributed_type: MULTI_GPU\nnum_processes: 10\nnum_machines: 4\nmain_process_ip: 10.0.0.1\n"
    f = only(run(text), "process-layout")
    assert f.suggestion == "8" and fixed(text, f) == text.replace("10\n", "8\n", 1)


def test_deleting_a_key_after_a_blank_first_line_keeps_the_blank_line() -> None:
    text = "\nfp16: true\nmixed_precision: bf16\n" + MG
    f = only(run(text), "legacy-key")
    assert fixed(text, f) == "\nmixed_precision: bf16\n" + MG


def test_validate_any_targets_the_installed_deepspeed_unless_told_a_version() -> None:
    from accelconf import deepspeed as dsmod

    installed = dsmod.installed_version()
    assert installed is not None, "the test extras install deepspeed"
    doc = load_text('{"train_batch_size": 8, "fp16": {"enabled": true, "opt_level": "O2"}}', "ds.json")
    got = [(f.rule, f.severity, f.message) for f in validate_any(doc)]
    assert got == [(f.rule, f.severity, f.message) for f in validate_any(doc, deepspeed_version=installed)]
    # 0.17.1 and newer reject unknown fp16 keys (pydantic extra_forbidden); the pin is newer
    assert got == [
        ("ds-unknown-key", "error", "unknown key `opt_level` in fp16: DeepSpeed rejects it (extra_forbidden)")
    ]
    old = validate_any(doc, deepspeed_version="0.16.0")
    assert [(f.rule, f.severity) for f in old] == [("ds-unknown-key", "warning")]


def test_validate_any_reads_a_json_file_as_deepspeed_when_told_so() -> None:
    doc = load_text('{"wall_clock_breakdwn": true}', "x.json")  # by content: neither format
    assert [f.rule for f in validate_any(doc)] == [
        "missing-distributed-type",
        "unknown-key",
    ]  # an accelerate config by default
    for told in ({"runtime": "deepspeed"}, {"deepspeed_version": "0.16.0"}):
        got = validate_any(doc, **told)
        assert {f.rule for f in got} == {"ds-unknown-key", "ds-batch"}, told
        assert only(got, "ds-unknown-key").suggestion == "wall_clock_breakdown"
    assert [f.rule for f in validate_any(doc, runtime="accelerate")] == ["missing-distributed-type", "unknown-key"]


def test_validate_any_without_auto_values_is_plain_deepspeed() -> None:
    # no "auto": DeepSpeed itself reads the file, and its hjson loader takes a duplicate key
    doc = load_text('{"train_batch_size": 8,\n "train_batch_size": 16,\n "zero_optimization": {"stage": 2}}', "ds.json")
    assert only(validate_any(doc), "ds-duplicate-key").severity == "error"
    assert only(validate_any(doc, runtime="transformers"), "ds-duplicate-key").severity == "warning"


def test_validate_any_passes_disabled_rules_to_an_accelerate_config() -> None:
    doc = load_text(MG + "mixed_precison: fp16\n", "c.yaml")
    assert [f.rule for f in validate_any(doc)] == ["unknown-key"]
    assert validate_any(doc, disabled=["unknown-key"]) == []


def test_yaml11_skips_nan_and_booleans_where_booleans_belong_and_reads_on() -> None:
    text = (
        "distributed_type: MEGATRON_LM\nnum_processes: 2\nrdzv_conf: .nan\ndebug: yes\nmegatron_lm_config:\n"
        "  megatron_lm_sequence_parallelism: on\n  megatron_lm_tp_degree: 2\n  megatron_lm_gradient_clipping: 1_000.5\n"
        "  megatron_lm_other: [on]\nmain_training_function: on\n"
    )
    got = [(f.key, f.severity) for f in run(text) if f.rule == "yaml11-scalar"]
    # .nan is nan for both readers; `yes`/`on` where a boolean belongs is what the writer meant
    assert got == [
        ("megatron_lm_config.megatron_lm_gradient_clipping", "info"),
        ("megatron_lm_config.megatron_lm_other.0", "info"),
        ("main_training_function", "warning"),
    ]


def test_a_yaml11_scalar_of_the_wrong_type_for_both_readers_is_also_a_type_error() -> None:
    # `yes` is True for accelerate and 'yes' for YAML 1.2: an integer for neither
    found = run(MG + "main_process_port: yes\n")
    assert [(f.rule, f.severity) for f in found] == [("invalid-type", "error"), ("yaml11-scalar", "info")]


def test_a_key_in_a_json_config_gets_no_deletion_fix() -> None:
    # deleting a JSON member means mending commas: validate offers no edit there
    text = '{"fp16": true, "mixed_precision": "bf16", "distributed_type": "MULTI_GPU", "num_processes": 2}'
    f = only(run(text, name="c.json"), "legacy-key")
    assert f.fix == ()


def test_a_sagemaker_key_in_a_cluster_config_gets_no_suggestion_of_itself() -> None:
    # accelerate 1.15: ValueError, unknown keys (['ec2_instance_type']) (checked with tests/oracle/run.py)
    f = only(run(MG + "ec2_instance_type: ml.p3.2xlarge\n"), "unknown-key")
    assert (f.severity, f.suggestion, f.fix) == ("error", None, ())
    assert f.message.startswith("`ec2_instance_type` is a SageMaker config key")


def test_a_key_no_config_has_is_reported_once_in_a_sagemaker_config() -> None:
    text = (
        "compute_environment: AMAZON_SAGEMAKER\ndistributed_type: DATA_PARALLEL\nec2_instance_type: ml.p3.2xlarge\n"
        "iam_role_name: role\nnum_proceses: 2\nmain_process_ip: 10.0.0.1\n"
    )
    got = [(f.line, f.suggestion) for f in run(text, "1.9") if f.rule == "unknown-key"]
    assert got == [(5, "num_processes"), (6, None)]  # the typo with its guess; a cluster key, once


def test_parallelism_sizes_a_launch_does_not_pass_on_are_said_to_have_no_effect() -> None:
    """accelerate 1.11 writes the parallelism variables only on the multi-GPU path: under DeepSpeed
    no ParallelismConfig is built, so sizes that would fail from 1.12 on are only an info there."""
    text = (
        "distributed_type: DEEPSPEED\nnum_processes: 4\ndeepspeed_config:\n  zero_stage: 2\nparallelism_config:\n"
        "  parallelism_config_tp_size: 3\n"
    )
    old = [
        (f.rule, f.severity, f.line)
        for f in validate_document(load_text(text, "p.yaml"), accelerate_version="1.11")
        if f.key == "parallelism_config"
    ]
    assert old == [("section-unused", "info", 5)]
    new = [
        (f.rule, f.severity)
        for f in validate_document(load_text(text, "p.yaml"), accelerate_version="1.12")
        if f.key == "parallelism_config"
    ]
    assert new == [("parallelism", "error")]
    assert not [
        f
        for f in validate_document(load_text(text, "p.yaml"), accelerate_version="1.9")
        if f.rule in ("parallelism", "section-unused")
    ]
