"""The value rules as functions of (setting, entry, release), the registry's reading of a value, and
the consumers that read the Config through them: validate's YAML path, ``formats.value_findings``
(env, flags, kwargs), the environment checks and the memory strategy."""

from __future__ import annotations

from typing import Any

import pytest

from accelconf import formats, releases
from accelconf.accelerate import registry
from accelconf.accelerate.model import Config, Entry, from_document
from accelconf.accelerate.validate import validate_document
from accelconf.accelerate.validate.valuerules import (
    INPUT_RULES,
    NO_FIX,
    Problem,
    config_problems,
    distributed_type_problems,
    entry_problems,
    enum_problems,
    mixed_precision_problems,
    reshard_problems,
    sharding_int_problems,
    state_dict_problems,
)
from accelconf.environment.checks import check_environment, reading
from accelconf.environment.memory import layout_of, strategy_of
from accelconf.environment.probe import Environment
from accelconf.text.document import load_text

NEWEST = registry.NEWEST


def _before(version: str) -> str:
    """The known release just before ``version`` (a release boundary's other side)."""
    known = registry.KNOWN_VERSIONS
    return known[known.index(version) - 1]


def _boundary(change: str) -> tuple[str, str]:
    """(the last release without, the first with) a behaviour of releases.CHANGES."""
    c = releases.CHANGES[change]
    first = c.since or c.until
    assert first is not None
    return _before(first), first


def _problems(path: str, value: Any, version: str = NEWEST, cfg: Config | None = None) -> list[Problem]:
    section, _, key = path.rpartition(".")
    s = registry.get(section, key)
    assert s is not None
    cfg = cfg or Config()
    e = cfg.entries.get(path) or Entry(path, value, s, key)
    return entry_problems(s, e, version, cfg)


def _rules(problems: list[Problem]) -> list[tuple[str, str]]:
    return [(p.rule, p.severity) for p in problems]


def _fsdp(**keys: Any) -> Config:
    cfg = Config()
    cfg.set("distributed_type", "FSDP")
    for k, v in keys.items():
        cfg.set(f"fsdp_config.{k}", v)
    return cfg


# -- per setting kind -----------------------------------------------------------------------------


def test_an_integer_setting_takes_integers_and_their_strings_and_refuses_the_rest() -> None:
    assert _problems("num_machines", 2) == _problems("num_machines", "2") == []
    [p] = _problems("num_machines", "two")
    assert (p.rule, p.severity, p.message) == (
        "invalid-type",
        "error",
        "`num_machines` should be an integer, not 'two'",
    )
    assert p.scalar_type  # a YAML 1.1 reading may explain it (yaml11-scalar then reports it)
    assert _rules(_problems("num_machines", True)) == [("invalid-type", "error")]  # a boolean is no integer


def test_an_integer_below_its_minimum_is_an_invalid_value() -> None:
    [p] = _problems("num_machines", 0)
    assert (p.rule, p.severity, p.message) == ("invalid-value", "error", "`num_machines` must be at least 1")
    assert _problems("machine_rank", 0) == []


def test_a_boolean_setting_takes_truth_words_and_warns_on_other_strings() -> None:
    for word in ("true", "False", "yes", "0"):
        assert _problems("fsdp_config.fsdp_offload_params", word, cfg=_fsdp(fsdp_offload_params=word)) == []
    cfg = _fsdp(fsdp_offload_params="maybe")
    assert _rules(_problems("fsdp_config.fsdp_offload_params", "maybe", cfg=cfg)) == [("invalid-type", "warning")]


def test_gpu_ids_as_a_number_is_written_back_quoted() -> None:
    [p] = _problems("gpu_ids", 0)
    assert (p.rule, p.severity, p.suggestion, p.fix_text) == ("invalid-type", "error", "'0'", "'0'")
    assert "`gpu_ids: 0` is int" in p.message
    assert _problems("gpu_ids", "0,1") == []


def test_a_list_of_layer_classes_is_refused_with_the_joined_string() -> None:
    cfg = _fsdp(fsdp_transformer_layer_cls_to_wrap=["A", "B"])
    [p] = _problems("fsdp_config.fsdp_transformer_layer_cls_to_wrap", None, cfg=cfg)
    assert (p.rule, p.suggestion) == ("invalid-type", "A,B")
    cfg = _fsdp(fsdp_transformer_layer_cls_to_wrap="A,B")
    assert _problems("fsdp_config.fsdp_transformer_layer_cls_to_wrap", None, cfg=cfg) == []


def test_a_setting_in_a_section_the_launcher_ignores_has_no_value_problem() -> None:
    cfg = Config()
    cfg.set("distributed_type", "MULTI_GPU")
    cfg.set("fsdp_config.fsdp_offload_params", "maybe")
    assert _problems("fsdp_config.fsdp_offload_params", None, cfg=cfg) == []  # reported once, as unused


def test_an_enum_choice_legacy_value_case_and_typo() -> None:
    s = registry.get("fsdp_config", "fsdp_sharding_strategy")
    assert s is not None
    assert enum_problems(s, "fsdp_sharding_strategy", "FULL_SHARD", NEWEST) == []
    [legacy] = enum_problems(s, "fsdp_sharding_strategy", 2, NEWEST)
    assert (legacy.rule, legacy.severity, legacy.fix_value) == ("legacy-value", "info", "SHARD_GRAD_OP")
    [case] = enum_problems(s, "fsdp_sharding_strategy", "full_shard", NEWEST)
    assert (case.rule, case.severity, case.fix_value, case.like) == ("enum-case", "info", "FULL_SHARD", False)
    [typo] = enum_problems(s, "fsdp_sharding_strategy", "FULL_SHARDS", NEWEST)
    assert (typo.rule, typo.severity, typo.suggestion, typo.fix_value) == (
        "invalid-value",
        "error",
        "FULL_SHARD",
        NO_FIX,
    )


def test_a_case_sensitive_enum_refuses_another_case() -> None:
    s = registry.get("deepspeed_config", "deepspeed_multinode_launcher")
    assert s is not None
    [p] = enum_problems(s, "deepspeed_multinode_launcher", "PDSH", NEWEST)
    assert (p.rule, p.severity, p.fix_value) == ("enum-case", "error", "pdsh")


def test_fsdp2_needs_a_boolean_reshard_and_refuses_local_state_dicts() -> None:
    raf = Entry("fsdp_config.fsdp_reshard_after_forward", "SHARD_GRAD_OP", None, "fsdp_reshard_after_forward")
    [p] = reshard_problems(raf, 2)
    assert (p.rule, p.suggestion, p.fix_text) == ("fsdp2-reshard-bool", "false", "false")
    assert reshard_problems(raf, 1) == []  # FSDP1 reads the strategy instead
    assert reshard_problems(Entry("x", "true"), 2) == []
    sdt = Entry("x", "local_state_dict", registry.get("fsdp_config", "fsdp_state_dict_type"))
    assert _rules(state_dict_problems(sdt, 2)) == [("fsdp2-local-state-dict", "error")]
    assert state_dict_problems(sdt, 1) == []


def test_mixed_precision_is_lower_cased_and_refused_when_not_a_precision() -> None:
    assert mixed_precision_problems("bf16") == mixed_precision_problems(None) == []
    [p] = mixed_precision_problems("BF16")
    assert (p.rule, p.severity, p.fix_value, p.like) == ("enum-case", "info", "bf16", True)
    [p] = mixed_precision_problems("bf17")
    assert (p.rule, p.severity, p.suggestion) == ("invalid-value", "error", "bf16")
    assert _rules(mixed_precision_problems(16)) == [("invalid-type", "error")]


def test_distributed_type_is_case_sensitive() -> None:
    [p] = distributed_type_problems("multi_gpu", NEWEST)
    assert (p.rule, p.severity, p.fix_value, p.like) == ("enum-case", "error", "MULTI_GPU", True)
    [p] = distributed_type_problems("MULTI_GPUS", NEWEST)
    assert (p.rule, p.suggestion) == ("invalid-value", "MULTI_GPU")
    assert _rules(distributed_type_problems(2, NEWEST)) == [("invalid-type", "error")]
    assert _rules(distributed_type_problems("MULTI_GPU", NEWEST, sagemaker=True)) == [("invalid-value", "error")]
    assert distributed_type_problems("DATA_PARALLEL", NEWEST, sagemaker=True) == []


# -- per release boundary -------------------------------------------------------------------------


def test_sharding_strategy_names_fail_before_the_plugin_reads_names() -> None:
    last, first = _boundary("sharding-strategy-int")
    s = registry.get("fsdp_config", "fsdp_sharding_strategy")
    assert s is not None
    [p] = enum_problems(s, "fsdp_sharding_strategy", "SHARD_GRAD_OP", last)
    assert (p.rule, p.suggestion, p.fix_text) == ("sharding-strategy-int", "2", "2")
    assert enum_problems(s, "fsdp_sharding_strategy", 2, last) == []
    assert enum_problems(s, "fsdp_sharding_strategy", "SHARD_GRAD_OP", first) == []
    without, with_ = _boundary("hybrid-shard")
    assert _rules(sharding_int_problems(4, without)) == [("sharding-strategy-int", "error")]  # 1 to 3 only
    assert sharding_int_problems(4, with_) == []


def test_sharding_strategy_case_matters_before_any_case_is_read() -> None:
    last, first = _boundary("sharding-strategy-any-case")
    s = registry.get("fsdp_config", "fsdp_sharding_strategy")
    assert s is not None
    assert _rules(enum_problems(s, "fsdp_sharding_strategy", "full_shard", last)) == [("enum-case", "error")]
    assert _rules(enum_problems(s, "fsdp_sharding_strategy", "full_shard", first)) == [("enum-case", "info")]


def test_a_lowercase_fp8_backend_is_an_error_once_accelerate_refuses_it() -> None:
    last, first = _boundary("fp8-backend-enum")
    s = registry.get("fp8_config", "backend")
    assert s is not None
    assert _rules(enum_problems(s, "backend", "te", last)) == [("enum-case", "warning")]
    assert _rules(enum_problems(s, "backend", "te", first)) == [("enum-case", "error")]


def test_distributed_types_exist_from_their_release_and_until_their_removal() -> None:
    since = registry.DISTRIBUTED_TYPE_SINCE["XLA"]
    assert _rules(distributed_type_problems("XLA", _before(since))) == [("value-too-new", "error")]
    assert distributed_type_problems("XLA", since) == []
    until = registry.DISTRIBUTED_TYPE_UNTIL["TPU"]
    assert distributed_type_problems("TPU", _before(until)) == []
    [p] = distributed_type_problems("TPU", until)
    assert (p.rule, p.severity, p.fix_text) == ("legacy-value", "error", "XLA")


def test_a_dynamo_backend_is_refused_before_the_release_that_added_it() -> None:
    since = registry.DYNAMO_BACKEND_SINCE["HPU_BACKEND"]
    cfg = Config()
    cfg.set("distributed_type", "NO")
    e = cfg.set("dynamo_config.dynamo_backend", "hpu_backend")
    s = e.setting
    assert s is not None
    assert _rules(entry_problems(s, e, _before(since), cfg)) == [("enum-case", "info"), ("value-too-new", "error")]
    assert _rules(entry_problems(s, e, since, cfg)) == [("enum-case", "info")]  # any case works


def test_a_setting_the_release_does_not_have_gets_no_value_problem() -> None:
    s = registry.get("fsdp_config", "fsdp_version")
    assert s is not None and s.since is not None
    cfg = _fsdp(fsdp_version=3)
    e = cfg.entries["fsdp_config.fsdp_version"]
    assert entry_problems(s, e, _before(s.since), cfg) == []  # key-too-new says it, once
    assert _rules(entry_problems(s, e, s.since, cfg)) == [("invalid-value", "error")]


# -- the registry's reading -----------------------------------------------------------------------


@pytest.mark.parametrize("value", ["MULTI_GPU", "multi_gpu", "FSDP", "fsdp", "XLA", "TPU", "MULTI_GPUS", 3])
@pytest.mark.parametrize("version", ["0.27", NEWEST])
def test_read_value_refuses_exactly_the_distributed_types_validate_calls_errors(value: Any, version: str) -> None:
    s = registry.get("", "distributed_type")
    assert s is not None
    refused = registry.read_value(s, value, version) is registry.REFUSED
    assert refused == any(p.severity == "error" for p in distributed_type_problems(value, version))


def test_read_value_reads_as_accelerate_reads() -> None:
    get = registry.get
    mp, machines, stage, sharding = (
        get("", "mixed_precision"),
        get("", "num_machines"),
        get("deepspeed_config", "zero_stage"),
        get("fsdp_config", "fsdp_sharding_strategy"),
    )
    assert mp and machines and stage and sharding
    assert registry.read_value(mp, "BF16") == "bf16"
    last, first = _boundary("yaml-false-precision-no")
    assert registry.read_value(mp, False, last) == "no" and registry.read_value(mp, False, first) is registry.REFUSED
    assert registry.read_value(machines, "2") is registry.REFUSED  # from a file: `"2" > 1` raises
    assert registry.read_value(machines, "2", from_file=False) == 2  # a flag's string: argparse type=int
    assert registry.read_value(stage, "3") == 3
    assert registry.read_value(sharding, 2) == "SHARD_GRAD_OP"
    assert registry.read_value(machines, None) is None


# -- consumers ------------------------------------------------------------------------------------

YAML_CASES = [
    "distributed_type: multi_gpu\nnum_processes: 2\n",
    "distributed_type: MULTI_GPU\nnum_processes: 2\nmixed_precision: bf17\ngpu_ids: '0,1'\n",
    "distributed_type: FSDP\nnum_processes: 2\nfsdp_config:\n  fsdp_version: 2\n"
    "  fsdp_reshard_after_forward: FULL_SHARD\n  fsdp_state_dict_type: LOCAL_STATE_DICT\n"
    "  fsdp_offload_params: maybe\n",
    "distributed_type: MULTI_GPU\nnum_processes: 4\nnum_machines: 2\nmachine_rank: 3\nmain_process_ip: 10.0.0.1\n",
    "distributed_type: DEEPSPEED\nnum_processes: null\nnum_machines: 1\n"
    "deepspeed_config:\n  zero_stage: 4\n  offload_param_device: CPU\n",
    "distributed_type: FSDP\nnum_processes: 2\nfsdp_config:\n  fsdp_sharding_strategy: full_shard\n",
]


@pytest.mark.parametrize("text", YAML_CASES)
@pytest.mark.parametrize("version", ["0.25", NEWEST])
def test_value_findings_of_a_config_are_validates_findings_of_its_file(text: str, version: str) -> None:
    """The rules of a Config from any reader are validate's rules of the same values in a file."""
    doc = load_text(text, "c.yaml")
    want = [
        (f.rule, f.severity, f.message, f.key, f.line)
        for f in validate_document(doc, accelerate_version=version)
        if f.rule in INPUT_RULES and f.severity != "info" and (f.rule != "multi-node" or f.key == "machine_rank")
    ]
    got = [
        (f.rule, f.severity, f.message, f.key, f.line)
        for f in formats.value_findings(formats.read(text, "yaml"), version)
    ]
    assert sorted(got) == sorted(want)
    # full_shard: an info from 0.34 (any case works), a sharding-strategy-int error before 0.26 (the
    # readers of flags and variables say that themselves)
    assert want or "full_shard" in text


def test_value_findings_name_the_variable_the_value_came_from() -> None:
    cfg = formats.read("ACCELERATE_MIXED_PRECISION=bf17\n", "env", "a.env")
    [f] = [f for f in formats.value_findings(cfg) if f.rule == "invalid-value"]
    assert f.message.startswith("ACCELERATE_MIXED_PRECISION") and (f.line, f.column) == (1, 1)
    assert f.suggestion == "bf16"


NO_GPUS = Environment(gpus=(), torch_version="2.7.1", accelerate_version="1.15.0", cuda_version="12.6")


def test_env_checks_do_not_take_a_refused_distributed_type_for_a_gpu_one() -> None:
    """accelerate 1.15's load_config_from_file raises ValueError ('multi_gpu' is not a valid
    DistributedType): the environment rules must not judge it as MULTI_GPU (validate reports it)."""
    upper = load_text("distributed_type: MULTI_GPU\nnum_processes: 2\n", "c.yaml")
    lower = load_text("distributed_type: multi_gpu\nnum_processes: 2\n", "c.yaml")
    assert "env-no-gpu" in {f.rule for f in check_environment(upper, NO_GPUS)}
    assert "env-no-gpu" not in {f.rule for f in check_environment(lower, NO_GPUS)}
    assert reading(lower).distributed_type == "" and reading(upper).distributed_type == "MULTI_GPU"


def test_env_checks_read_mixed_precision_as_the_launcher_lower_cases_it() -> None:
    doc = load_text("distributed_type: NO\nmixed_precision: FP8\nnum_processes: 1\n", "c.yaml")
    assert reading(doc).mixed_precision == "fp8"
    env = Environment(gpus=(), torch_version="2.7.1", accelerate_version="1.15.0", fp8_backends=())
    assert "env-fp8-backend" in {f.rule for f in check_environment(doc, env)}


def test_env_checks_read_an_integer_gpu_ids_as_refused() -> None:
    doc = load_text("distributed_type: MULTI_GPU\nnum_processes: 2\ngpu_ids: 0\n", "c.yaml")
    assert reading(doc).read("gpu_ids") is None  # the launcher calls .split on it
    assert reading(load_text("gpu_ids: '0,1'\n")).read("gpu_ids") == "0,1"


def test_the_memory_strategy_does_not_run_a_refused_distributed_type() -> None:
    assert strategy_of(load_text("distributed_type: FSDP\n").data)[0].kind == "fsdp1"
    assert strategy_of(load_text("distributed_type: fsdp\n").data)[0].kind == "single"
    assert strategy_of(load_text("distributed_type: deepspeed\n").data)[0].kind == "single"


def test_the_memory_strategy_reads_the_config_model() -> None:
    legacy = strategy_of(load_text("distributed_type: MULTI_GPU\nfp16: true\n").data)[0]
    assert (legacy.kind, legacy.precision) == ("ddp", "fp16")  # process_config: fp16 -> mixed_precision
    unprefixed = strategy_of(load_text("distributed_type: FSDP\nfsdp_config:\n  offload_params: true\n").data)[0]
    assert unprefixed.offload_params is True
    assert layout_of(load_text("distributed_type: 'NO'\nnum_processes: 4\n").data, 8, 1).world == 1
    assert layout_of(load_text("distributed_type: 'no'\nnum_processes: 4\n").data, 8, 1).world == 4


def test_config_problems_judge_a_config_without_distributed_type_as_the_file_written_from_it() -> None:
    """The writers write distributed_type 'NO' when the input names none: fsdp_config is then unused."""
    cfg = Config()
    cfg.set("fsdp_config.fsdp_offload_params", "maybe", origin="env", where="FSDP_OFFLOAD_PARAMS")
    assert config_problems(cfg, NEWEST) == []
    cfg.set("distributed_type", "FSDP")
    [(e, p)] = config_problems(cfg, NEWEST)
    assert (e.path, p.rule, p.severity) == ("fsdp_config.fsdp_offload_params", "invalid-type", "warning")


def test_config_problems_leave_the_sharding_number_to_the_readers_of_flags() -> None:
    last, _ = _boundary("sharding-strategy-int")
    doc = load_text("distributed_type: FSDP\nnum_processes: 2\nfsdp_config:\n  fsdp_sharding_strategy: FULL_SHARD\n")
    assert "sharding-strategy-int" in {f.rule for f in validate_document(doc, accelerate_version=last)}
    assert config_problems(from_document(doc, last), last) == []


def test_a_dynamo_backend_a_release_removed_is_a_choice_of_the_releases_before() -> None:
    """accelerate 1.12's DynamoBackend has IPEX (utils/dataclasses.py); 1.13 removed it."""
    until = registry.DYNAMO_BACKEND_UNTIL["IPEX"]
    s = registry.get("dynamo_config", "dynamo_backend")
    assert s is not None
    assert enum_problems(s, "dynamo_backend", "IPEX", _before(until)) == []
    assert _rules(enum_problems(s, "dynamo_backend", "ipex", _before(until))) == [("enum-case", "info")]
    assert _rules(enum_problems(s, "dynamo_backend", "IPEX", until)) == [("invalid-value", "error")]
    assert registry.read_value(s, "ipex", _before(until)) == "IPEX"
    assert registry.read_value(s, "IPEX", until) is registry.REFUSED
