"""The Python keyword-argument format (``accelconf.formats.kwargs``), pinned value by value.

Writer: how each launched variable becomes a plugin field (``_value``/``_bool`` decoding, FSDP
fields a version or wrap policy does not read, FP8 recipes, context/sequence parallel handlers,
Megatron-LM, dynamo, gradient accumulation, ``cpu``), every ``convert.lossy`` finding with its exact
severity, message and key, and the exact snippet text. Reader: every class and argument mapped to its
config key with ``written_key``, ``where``, line, column and origin, unknown and non-literal
arguments, unknown names, the FP8 recipe classes, ``Accelerator(dynamo_backend=)`` and syntax errors.
Written from the survivors of ``make mutants`` (bench/MUTANTS.md).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from accelconf import formats
from accelconf.accelerate import registry
from accelconf.accelerate.model import Config, Entry
from accelconf.errors import InputError
from accelconf.findings import Finding
from accelconf.formats import kwargs as K

VER = "1.15"


def lossy(severity: str, message: str, key: str) -> Finding:
    return Finding("convert.lossy", severity, message, key)


# -- decoding one variable ------------------------------------------------------------------------


@pytest.mark.parametrize("raw", ["y", "yes", "t", "true", "on", "1", " YES ", "True", "ON\n"])
def test_bool_true_words(raw: str) -> None:
    assert K._bool(raw) is True


@pytest.mark.parametrize("raw", ["n", "no", "false", "off", "0", "", "2", "yess", "tru"])
def test_bool_anything_else_is_false(raw: str) -> None:
    assert K._bool(raw) is False


def _s(section: str, key: str) -> registry.Setting:
    s = registry.get(section, key)
    assert s is not None
    return s


@pytest.mark.parametrize(
    ("section", "key", "raw", "value"),
    [
        # an unset number is exported as str(None)
        ("parallelism_config", "parallelism_config_sp_seq_length", "None", None),  # int
        ("deepspeed_config", "gradient_clipping", "None", None),  # float
        ("parallelism_config", "parallelism_config_sp_attn_implementation", "None", "None"),  # str keeps it
        ("parallelism_config", "parallelism_config_sp_seq_length", "128", 128),
        ("deepspeed_config", "gradient_clipping", "1.5", 1.5),
        ("deepspeed_config", "gradient_accumulation_steps", "auto", "auto"),
        # bool and boolish: the plugin's parse_flag_from_env (true words, anything else False)
        ("fsdp_config", "fsdp_offload_params", "true", True),
        ("fsdp_config", "fsdp_offload_params", "maybe", False),
        ("megatron_lm_config", "megatron_lm_sequence_parallelism", "yes", True),
        ("megatron_lm_config", "megatron_lm_sequence_parallelism", "off", False),
        # the FSDP class list is split on commas (empty parts dropped); other class lists stay strings
        ("fsdp_config", "fsdp_transformer_layer_cls_to_wrap", "LlamaDecoderLayer,,MLP", ["LlamaDecoderLayer", "MLP"]),
        ("fsdp_config", "fsdp_transformer_layer_cls_to_wrap", "A B", ["A B"]),
        ("deepspeed_config", "deepspeed_moe_layer_cls_names", "A,B", "A,B"),
        ("fsdp_config", "fsdp_sharding_strategy", "FULL_SHARD", "FULL_SHARD"),
    ],
)
def test_value_decoding(section: str, key: str, raw: str, value: object) -> None:
    got = K._value(_s(section, key), raw)
    assert got == value and type(got) is type(value)


# -- plugin_kwargs: env -> classes, Accelerator kwargs, findings ----------------------------------


def test_fsdp2_transformer_wrap_fields_and_unread_findings() -> None:
    env = {
        "ACCELERATE_USE_FSDP": "true",
        "FSDP_VERSION": "2",
        "FSDP_AUTO_WRAP_POLICY": "TRANSFORMER_BASED_WRAP",
        "FSDP_TRANSFORMER_CLS_TO_WRAP": "A,B",
        "FSDP_MIN_NUM_PARAMS": "100",
        "FSDP_SHARDING_STRATEGY": "FULL_SHARD",
        "FSDP_RESHARD_AFTER_FORWARD": "true",
        "FSDP_OFFLOAD_PARAMS": "true",
    }
    written = frozenset({"fsdp_config.fsdp_min_num_params", "fsdp_config.fsdp_sharding_strategy"})
    classes, acc, findings = K.plugin_kwargs(env, VER, written)
    assert classes == {
        registry.FSDP: {
            "fsdp_version": 2,
            "auto_wrap_policy": "TRANSFORMER_BASED_WRAP",
            "transformer_cls_names_to_wrap": ["A", "B"],
            "reshard_after_forward": True,
            "cpu_offload": True,
        }
    }
    assert list(classes[registry.FSDP]) == [
        "auto_wrap_policy",
        "cpu_offload",
        "reshard_after_forward",
        "transformer_cls_names_to_wrap",
        "fsdp_version",
    ]
    assert acc == {}
    # only the keys the input wrote are reported (FSDP_RESHARD... is read; nothing about it)
    assert findings == [
        lossy(
            "info",
            "FSDP_MIN_NUM_PARAMS=100 is not read by FullyShardedDataParallelPlugin.min_num_params: "
            "auto_wrap_policy is TRANSFORMER_BASED_WRAP; not written",
            "fsdp_config.fsdp_min_num_params",
        ),
        lossy(
            "info",
            "FSDP_SHARDING_STRATEGY=FULL_SHARD is not read by FullyShardedDataParallelPlugin.sharding_strategy: "
            "FSDP2 does not use it; not written",
            "fsdp_config.fsdp_sharding_strategy",
        ),
    ]
    # nothing written by the input: the same fields, no findings
    assert K.plugin_kwargs(env, VER) == (classes, {}, [])


def test_fsdp1_size_wrap_and_reshard_after_forward() -> None:
    env = {
        "ACCELERATE_USE_FSDP": "true",
        "FSDP_VERSION": "1",
        "FSDP_AUTO_WRAP_POLICY": "size_based_wrap",
        "FSDP_TRANSFORMER_CLS_TO_WRAP": "A",
        "FSDP_MIN_NUM_PARAMS": "100",
        "FSDP_RESHARD_AFTER_FORWARD": "true",
        "FSDP_SHARDING_STRATEGY": "SHARD_GRAD_OP",
    }
    written = frozenset(registry.by_env(v).path for v in env if registry.by_env(v))  # type: ignore[union-attr]
    classes, acc, findings = K.plugin_kwargs(env, VER, written)
    # the policy is compared upper-cased: min_num_params is read under a lower-case size_based_wrap
    assert classes == {
        registry.FSDP: {
            "fsdp_version": 1,
            "auto_wrap_policy": "size_based_wrap",
            "min_num_params": 100,
            "sharding_strategy": "SHARD_GRAD_OP",
        }
    }
    assert findings == [
        lossy(
            "info",
            "FSDP_RESHARD_AFTER_FORWARD=true is not read by FullyShardedDataParallelPlugin.reshard_after_forward: "
            "FSDP1 does not use it; not written",
            "fsdp_config.fsdp_reshard_after_forward",
        ),
        lossy(
            "info",
            "FSDP_TRANSFORMER_CLS_TO_WRAP=A is not read by "
            "FullyShardedDataParallelPlugin.transformer_cls_names_to_wrap: "
            "auto_wrap_policy is SIZE_BASED_WRAP; not written",
            "fsdp_config.fsdp_transformer_layer_cls_to_wrap",
        ),
    ]


def test_fsdp_defaults_without_version_or_policy_variables() -> None:
    """No FSDP_VERSION (or an empty one): FSDP1; no FSDP_AUTO_WRAP_POLICY: NO_WRAP."""
    for version in ({}, {"FSDP_VERSION": ""}):
        env = {
            "ACCELERATE_USE_FSDP": "true",
            "FSDP_MIN_NUM_PARAMS": "7",
            "FSDP_BACKWARD_PREFETCH": "BACKWARD_PRE",
            "FSDP_RESHARD_AFTER_FORWARD": "false",
            **version,
        }
        written = frozenset({"fsdp_config.fsdp_min_num_params", "fsdp_config.fsdp_reshard_after_forward"})
        classes, _, findings = K.plugin_kwargs(env, VER, written)
        assert classes[registry.FSDP] == {
            "backward_prefetch": "BACKWARD_PRE",
            **({"fsdp_version": ""} if version else {}),
        }
        assert findings == [
            lossy(
                "info",
                "FSDP_MIN_NUM_PARAMS=7 is not read by FullyShardedDataParallelPlugin.min_num_params: "
                "auto_wrap_policy is NO_WRAP; not written",
                "fsdp_config.fsdp_min_num_params",
            ),
            lossy(
                "info",
                "FSDP_RESHARD_AFTER_FORWARD=false is not read by FullyShardedDataParallelPlugin.reshard_after_forward: "
                "FSDP1 does not use it; not written",
                "fsdp_config.fsdp_reshard_after_forward",
            ),
        ]


def test_fsdp2_reads_fsdp2_only_fields_and_drops_fsdp1_ones() -> None:
    env = {
        "ACCELERATE_USE_FSDP": "true",
        "FSDP_VERSION": "2",
        "FSDP_RESHARD_AFTER_FORWARD": "false",
        "FSDP_USE_ORIG_PARAMS": "true",
        "FSDP_AUTO_WRAP_POLICY": "SIZE_BASED_WRAP",
        "FSDP_MIN_NUM_PARAMS": "5",
    }
    classes, _, findings = K.plugin_kwargs(env, VER, frozenset({"fsdp_config.fsdp_use_orig_params"}))
    assert classes[registry.FSDP] == {
        "auto_wrap_policy": "SIZE_BASED_WRAP",
        "min_num_params": 5,
        "reshard_after_forward": False,
        "fsdp_version": 2,
    }
    assert findings == [
        lossy(
            "info",
            "FSDP_USE_ORIG_PARAMS=true is not read by FullyShardedDataParallelPlugin.use_orig_params: "
            "FSDP2 does not use it; not written",
            "fsdp_config.fsdp_use_orig_params",
        )
    ]


def test_variables_of_a_plugin_that_is_not_built_are_dropped_silently() -> None:
    env = {
        "FSDP_OFFLOAD_PARAMS": "true",
        "ACCELERATE_DEEPSPEED_ZERO_STAGE": "3",
        "MEGATRON_LM_TP_DEGREE": "2",
        "PARALLELISM_CONFIG_TP_SIZE": "2",
        "PARALLELISM_CONFIG_CP_COMM_STRATEGY": "alltoall",
        "PARALLELISM_CONFIG_SP_SEQ_LENGTH": "9",
        "ACCELERATE_USE_FSDP": "false",
    }
    assert K.plugin_kwargs(env, VER, frozenset({"fsdp_config.fsdp_offload_params"})) == ({}, {}, [])


def test_every_built_plugin_is_written_even_when_empty() -> None:
    env = {
        "ACCELERATE_USE_FSDP": "true",
        "ACCELERATE_USE_DEEPSPEED": "true",
        "ACCELERATE_USE_MEGATRON_LM": "true",
        "ACCELERATE_USE_PARALLELISM_CONFIG": "true",
        "ACCELERATE_DYNAMO_BACKEND": "NO",
    }
    classes, acc, findings = K.plugin_kwargs(env, VER)
    assert (
        classes
        == {registry.DYN: {"backend": "NO"}, registry.FSDP: {}, registry.DS: {}, registry.MEG: {}, registry.PAR: {}}
        and acc == {}
        and findings == []
    )
    # "true" only: accelerate compares the paradigm switches with the string "true"
    assert K.plugin_kwargs({"ACCELERATE_USE_FSDP": "True", "ACCELERATE_USE_DEEPSPEED": "1"}, VER) == ({}, {}, [])


def test_parallelism_config_and_its_handlers() -> None:
    env = {
        "ACCELERATE_USE_PARALLELISM_CONFIG": "true",
        "PARALLELISM_CONFIG_CP_SIZE": "2",
        "PARALLELISM_CONFIG_CP_COMM_STRATEGY": "alltoall",
        "PARALLELISM_CONFIG_SP_SIZE": "2",
        "PARALLELISM_CONFIG_SP_SEQ_LENGTH": "None",
        "PARALLELISM_CONFIG_SP_SEQ_LENGTH_IS_VARIABLE": "false",
        "PARALLELISM_CONFIG_SP_ATTN_IMPLEMENTATION": "sdpa",
    }
    classes, acc, findings = K.plugin_kwargs(env, VER)
    assert classes == {
        "TorchContextParallelConfig": {"cp_comm_strategy": "alltoall"},
        registry.PAR: {"cp_size": 2, "sp_size": 2},
        "DeepSpeedSequenceParallelConfig": {
            "sp_attn_implementation": "sdpa",
            "sp_seq_length": None,
            "sp_seq_length_is_variable": False,
        },
    }
    assert acc == {} and findings == []


def test_accelerator_arguments_mixed_precision_cpu_and_gradient_accumulation() -> None:
    classes, acc, _ = K.plugin_kwargs({"ACCELERATE_MIXED_PRECISION": "bf16", "ACCELERATE_USE_CPU": "True"}, VER)
    assert classes == {} and acc == {"mixed_precision": "bf16", "cpu": True}
    assert K.plugin_kwargs({"ACCELERATE_USE_CPU": "False"}, VER) == ({}, {}, [])
    # the fp8 backend variable is an Accelerator field that is not an argument: nothing written
    assert K.plugin_kwargs({"ACCELERATE_FP8_BACKEND": "TE"}, VER) == ({}, {}, [])
    env = {
        "ACCELERATE_USE_DEEPSPEED": "true",
        "ACCELERATE_GRADIENT_ACCUMULATION_STEPS": "4",
        "ACCELERATE_GRADIENT_CLIPPING": "1.0",
    }
    classes, acc, _ = K.plugin_kwargs(env, VER)
    assert classes == {registry.DS: {"gradient_accumulation_steps": 4, "gradient_clipping": 1.0}}
    assert acc == {"gradient_accumulation_steps": 4}
    # "auto" goes to the plugin only (Accelerator takes an int)
    classes, acc, _ = K.plugin_kwargs({**env, "ACCELERATE_GRADIENT_ACCUMULATION_STEPS": "auto"}, VER)
    assert classes[registry.DS]["gradient_accumulation_steps"] == "auto" and acc == {}
    # without DeepSpeed the variable is not read at all
    assert K.plugin_kwargs({"ACCELERATE_GRADIENT_ACCUMULATION_STEPS": "4"}, VER) == ({}, {}, [])


def test_environment_only_switch_and_unread_variables() -> None:
    env = {
        "CUDA_VISIBLE_DEVICES": "0,1",
        "ACCELERATE_DEBUG_MODE": "true",
        "OMP_NUM_THREADS": "4",
        "ACCELERATE_USE_FSDP": "false",
        "ACCELERATE_USE_SOMETHING_NEW": "x",
        "CCL_WORKER_COUNT": "2",
        "MY_VAR": "1",
        "ACCELERATE_CONFIG_DS_FIELDS": "",
    }
    classes, acc, findings = K.plugin_kwargs(env, VER)
    assert (classes, acc) == ({}, {})
    assert findings == [
        lossy("info", "ACCELERATE_DEBUG_MODE=true has no Python argument; set it in the environment", "debug"),
        lossy("info", "CCL_WORKER_COUNT=2 is read by nothing; dropped", "CCL_WORKER_COUNT"),
        lossy("info", "CUDA_VISIBLE_DEVICES=0,1 has no Python argument; set it in the environment", "gpu_ids"),
        lossy("info", "MY_VAR=1 is read by nothing; dropped", "MY_VAR"),
        lossy("info", "OMP_NUM_THREADS=4 has no Python argument; set it in the environment", "OMP_NUM_THREADS"),
    ]


@pytest.mark.parametrize(
    ("var", "key"),
    [
        ("MASTER_ADDR", "MASTER_ADDR"),
        ("MASTER_PORT", "MASTER_PORT"),
        ("KMP_AFFINITY", "KMP_AFFINITY"),
        ("KMP_BLOCKTIME", "KMP_BLOCKTIME"),
        ("PYTHONPATH", "PYTHONPATH"),
        ("ACCELERATE_CPU_AFFINITY", "enable_cpu_affinity"),
    ],
)
def test_every_environment_only_variable(var: str, key: str) -> None:
    assert K.plugin_kwargs({var: "v"}, VER) == (
        {},
        {},
        [lossy("info", f"{var}=v has no Python argument; set it in the environment", key)],
    )


def test_deepspeed_fields_variable_is_one_finding() -> None:
    _, _, findings = K.plugin_kwargs({"ACCELERATE_CONFIG_DS_FIELDS": "zero_stage,gradient_clipping"}, VER)
    assert findings == [
        lossy(
            "info",
            "ACCELERATE_CONFIG_DS_FIELDS (the conflict check between accelerate's DeepSpeed "
            "keys and a DeepSpeed JSON file) has no Python argument",
            "deepspeed_config",
        )
    ]


def test_fp8_te_recipe_with_the_override_tuple_in_fprop_dgrad_wgrad_order() -> None:
    """TERecipeKwargs reads (FPROP, DGRAD, WGRAD) (accelerate utils/dataclasses.py); sorting the variables
    by name (DGRAD, FPROP, WGRAD) put them in the wrong places."""
    env = {
        "ACCELERATE_MIXED_PRECISION": "fp8",
        "ACCELERATE_FP8_BACKEND": "TE",
        "ACCELERATE_FP8_FORMAT": "E4M3",
        "ACCELERATE_FP8_OVERRIDE_FPROP": "True",
        "ACCELERATE_FP8_OVERRIDE_DGRAD": "False",
        "ACCELERATE_FP8_OVERRIDE_WGRAD": "False",
        "ACCELERATE_FP8_AMAX_HISTORY_LEN": "16",
    }
    classes, acc, findings = K.plugin_kwargs(env, VER)
    assert classes == {
        registry.TE: {"amax_history_len": 16, "fp8_format": "E4M3", "override_linear_precision": (True, False, False)}
    }
    assert acc == {"mixed_precision": "fp8"} and findings == []
    env.update(ACCELERATE_FP8_OVERRIDE_FPROP="False", ACCELERATE_FP8_OVERRIDE_DGRAD="True")
    assert K.plugin_kwargs(env, VER)[0][registry.TE]["override_linear_precision"] == (False, True, False)
    del env["ACCELERATE_FP8_OVERRIDE_DGRAD"]
    env["ACCELERATE_FP8_OVERRIDE_WGRAD"] = "true"
    assert K.plugin_kwargs(env, VER)[0][registry.TE]["override_linear_precision"] == (False, False, True)


def test_fp8_override_is_te_only_and_fp8_only() -> None:
    over = {
        "ACCELERATE_FP8_OVERRIDE_FPROP": "True",
        "ACCELERATE_FP8_OVERRIDE_DGRAD": "True",
        "ACCELERATE_FP8_OVERRIDE_WGRAD": "True",
    }
    classes, _, _ = K.plugin_kwargs(
        {
            "ACCELERATE_MIXED_PRECISION": "fp8",
            "ACCELERATE_FP8_BACKEND": "AO",
            "ACCELERATE_FP8_PAD_INNER_DIM": "true",
            **over,
        },
        VER,
    )
    assert classes == {registry.AO: {"pad_inner_dim": True}}
    classes, acc, findings = K.plugin_kwargs(
        {"ACCELERATE_MIXED_PRECISION": "bf16", "ACCELERATE_FP8_BACKEND": "TE", "ACCELERATE_FP8_FORMAT": "E4M3", **over},
        VER,
    )
    assert classes == {} and acc == {"mixed_precision": "bf16"} and findings == []


def test_fp8_backend_without_a_recipe_class() -> None:
    _, acc, findings = K.plugin_kwargs({"ACCELERATE_MIXED_PRECISION": "fp8"}, VER)
    assert acc == {"mixed_precision": "fp8"}
    assert findings == [
        lossy(
            "warning",
            "fp8 backend None has no recipe class: Accelerator picks one (no FP8 recipe kwargs written)",
            "fp8_config.backend",
        )
    ]
    classes, _, findings = K.plugin_kwargs(
        {"ACCELERATE_MIXED_PRECISION": "fp8", "ACCELERATE_FP8_BACKEND": "te", "ACCELERATE_FP8_FORMAT": "E4M3"}, VER
    )
    assert classes == {}
    assert findings == [
        lossy(
            "warning",
            "fp8 backend 'te' has no recipe class: Accelerator picks one (no FP8 recipe kwargs written)",
            "fp8_config.backend",
        )
    ]


def test_msamp_recipe_alone_and_under_deepspeed() -> None:
    env = {"ACCELERATE_MIXED_PRECISION": "fp8", "ACCELERATE_FP8_BACKEND": "MSAMP", "ACCELERATE_FP8_OPT_LEVEL": "O2"}
    assert K.plugin_kwargs(env, VER) == ({registry.MSAMP: {"opt_level": "O2"}}, {"mixed_precision": "fp8"}, [])
    classes, _, findings = K.plugin_kwargs({**env, "ACCELERATE_USE_DEEPSPEED": "true"}, VER)
    assert classes == {registry.MSAMP: {"opt_level": "O2"}, registry.DS: {}}
    assert findings == [
        lossy(
            "info",
            "MS-AMP under DeepSpeed is configured through the DeepSpeed plugin "
            "(enable_msamp/msamp_opt_level), read from the environment",
            "fp8_config.backend",
        )
    ]
    # another recipe under DeepSpeed, or MS-AMP without fp8: no such finding
    te = {**env, "ACCELERATE_FP8_BACKEND": "TE", "ACCELERATE_USE_DEEPSPEED": "true"}
    assert K.plugin_kwargs(te, VER)[2] == []
    assert K.plugin_kwargs({**env, "ACCELERATE_MIXED_PRECISION": "no", "ACCELERATE_USE_DEEPSPEED": "true"}, VER) == (
        {registry.DS: {}},
        {"mixed_precision": "no"},
        [],
    )


def test_dynamo_plugin_from_its_backend_variable() -> None:
    env = {
        "ACCELERATE_DYNAMO_BACKEND": "INDUCTOR",
        "ACCELERATE_DYNAMO_MODE": "max-autotune",
        "ACCELERATE_DYNAMO_USE_FULLGRAPH": "True",
        "ACCELERATE_DYNAMO_USE_DYNAMIC": "False",
    }
    assert K.plugin_kwargs(env, VER) == (
        {registry.DYN: {"backend": "INDUCTOR", "mode": "max-autotune", "dynamic": False, "fullgraph": True}},
        {},
        [],
    )
    # the other dynamo variables alone build no plugin
    del env["ACCELERATE_DYNAMO_BACKEND"]
    assert K.plugin_kwargs(env, VER) == ({}, {}, [])


def test_megatron_plugin_fields() -> None:
    env = {
        "ACCELERATE_USE_MEGATRON_LM": "true",
        "MEGATRON_LM_TP_DEGREE": "2",
        "MEGATRON_LM_SEQUENCE_PARALLELISM": "true",
        "MEGATRON_LM_GRADIENT_CLIPPING": "0.5",
    }
    assert K.plugin_kwargs(env, VER) == (
        {registry.MEG: {"gradient_clipping": 0.5, "sequence_parallelism": True, "tp_degree": 2}},
        {},
        [],
    )


# -- snippet ----------------------------------------------------------------------------------------


def test_snippet_of_nothing() -> None:
    assert K.snippet({}, {}) == (
        '"""Accelerator arguments equivalent to the configuration (written by accelconf)."""\n'
        "from accelerate import Accelerator\n\naccelerator = Accelerator(\n)\n"
    )


def test_snippet_names_every_class_and_passes_it() -> None:
    classes = {registry.FSDP: {}, registry.DS: {"zero_stage": 2}, registry.DYN: {}, registry.MEG: {}, registry.AO: {}}
    assert (
        K.snippet(classes, {"cpu": True}, "a.yaml")
        == '''\
"""Accelerator arguments equivalent to a.yaml (written by accelconf)."""
from accelerate import Accelerator
from accelerate.utils import AORecipeKwargs, DeepSpeedPlugin, FullyShardedDataParallelPlugin, MegatronLMPlugin, \
TorchDynamoPlugin

fsdp_plugin = FullyShardedDataParallelPlugin()
deepspeed_plugin = DeepSpeedPlugin(
    zero_stage=2,
)
dynamo_plugin = TorchDynamoPlugin()
megatron_lm_plugin = MegatronLMPlugin()
fp8_recipe = AORecipeKwargs()
accelerator = Accelerator(
    cpu=True,
    fsdp_plugin=fsdp_plugin,
    deepspeed_plugin=deepspeed_plugin,
    dynamo_plugin=dynamo_plugin,
    megatron_lm_plugin=megatron_lm_plugin,
    kwargs_handlers=[fp8_recipe],
)
'''
    )


@pytest.mark.parametrize("recipe", [registry.TE, registry.MSAMP])
def test_snippet_recipe_is_a_kwargs_handler(recipe: str) -> None:
    assert K.snippet({recipe: {"x": "y"}}, {"mixed_precision": "fp8"}).splitlines()[4:] == [
        f"fp8_recipe = {recipe}(",
        "    x='y',",
        ")",
        "accelerator = Accelerator(",
        "    mixed_precision='fp8',",
        "    kwargs_handlers=[fp8_recipe],",
        ")",
    ]


def test_snippet_handlers_come_first_and_go_into_the_parallelism_config() -> None:
    classes = {
        registry.PAR: {"cp_size": 2},
        "DeepSpeedSequenceParallelConfig": {"sp_seq_length": None},
        "TorchContextParallelConfig": {},
    }
    assert K.snippet(classes, {}).splitlines()[2:] == [
        "from accelerate.utils import DeepSpeedSequenceParallelConfig, ParallelismConfig, TorchContextParallelConfig",
        "",
        "cp_handler = TorchContextParallelConfig()",
        "sp_handler = DeepSpeedSequenceParallelConfig(",
        "    sp_seq_length=None,",
        ")",
        "parallelism_config = ParallelismConfig(",
        "    cp_size=2,",
        "    cp_handler=cp_handler,",
        "    sp_handler=sp_handler,",
        ")",
        "accelerator = Accelerator(",
        "    parallelism_config=parallelism_config,",
        ")",
    ]
    # one handler only
    lines = K.snippet({registry.PAR: {}, "DeepSpeedSequenceParallelConfig": {}}, {}).splitlines()
    assert lines[4:9] == [
        "sp_handler = DeepSpeedSequenceParallelConfig()",
        "parallelism_config = ParallelismConfig(",
        "    sp_handler=sp_handler,",
        ")",
        "accelerator = Accelerator(",
    ]


# -- write: config -> snippet, through launch_env ---------------------------------------------------


def _write(text: str, version: str | None = None) -> tuple[str, list[tuple[str, str, str, str]]]:
    out, findings = formats.write(formats.read(text, "yaml", "c.yaml"), "kwargs", version=version)
    return out, [(f.rule, f.severity, f.message, f.key) for f in findings]


HEAD = '"""Accelerator arguments equivalent to c.yaml (written by accelconf)."""\nfrom accelerate import Accelerator\n'
DYNAMO_NO = (
    "dynamo_plugin = TorchDynamoPlugin(\n    backend='NO',\n    mode='default',\n    dynamic=False,\n"
    "    fullgraph=False,\n    use_regional_compilation=False,\n)\n"
)
OMP = (
    "convert.lossy",
    "info",
    "OMP_NUM_THREADS=1 has no Python argument; set it in the environment",
    "OMP_NUM_THREADS",
)
LAYOUT = (
    "convert.lossy",
    "info",
    "the process layout (num_processes, machines, rendezvous) is not an Accelerator "
    "argument: start the script with accelerate launch or torchrun",
    "num_processes",
)


def test_write_fsdp2() -> None:
    out, found = _write(
        "distributed_type: FSDP\nnum_processes: 2\nmixed_precision: bf16\nfsdp_config:\n  fsdp_version: 2\n"
        "  fsdp_auto_wrap_policy: TRANSFORMER_BASED_WRAP\n  fsdp_transformer_layer_cls_to_wrap: A,B\n"
        "  fsdp_min_num_params: 100\n  fsdp_offload_params: true\n  fsdp_reshard_after_forward: true\n"
    )
    assert (
        out
        == HEAD
        + "from accelerate.utils import FullyShardedDataParallelPlugin, TorchDynamoPlugin\n\n"
        + DYNAMO_NO
        + """\
fsdp_plugin = FullyShardedDataParallelPlugin(
    activation_checkpointing=False,
    activation_checkpointing_offload=False,
    auto_wrap_policy='TRANSFORMER_BASED_WRAP',
    cpu_ram_efficient_loading=True,
    cpu_offload=True,
    reshard_after_forward=True,
    transformer_cls_names_to_wrap=['A', 'B'],
    fsdp_version=2,
)
accelerator = Accelerator(
    mixed_precision='bf16',
    dynamo_plugin=dynamo_plugin,
    fsdp_plugin=fsdp_plugin,
)
"""
    )
    assert found == [
        (
            "convert.lossy",
            "info",
            "FSDP_MIN_NUM_PARAMS=100 is not read by FullyShardedDataParallelPlugin.min_num_params: "
            "auto_wrap_policy is TRANSFORMER_BASED_WRAP; not written",
            "fsdp_config.fsdp_min_num_params",
        ),
        OMP,
        LAYOUT,
    ]


def test_write_deepspeed_with_msamp(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)  # the DeepSpeed path exports PYTHONPATH=<working directory>
    out, found = _write(
        "distributed_type: DEEPSPEED\nnum_processes: 2\nmixed_precision: fp8\nfp8_config:\n  backend: MSAMP\n"
        "  opt_level: O2\ndeepspeed_config:\n  zero_stage: 2\n  gradient_accumulation_steps: 4\n"
    )
    assert (
        out
        == HEAD
        + """\
from accelerate.utils import DeepSpeedPlugin, MSAMPRecipeKwargs

deepspeed_plugin = DeepSpeedPlugin(
    zero_stage=2,
    gradient_accumulation_steps=4,
)
fp8_recipe = MSAMPRecipeKwargs(
    opt_level='O2',
)
accelerator = Accelerator(
    gradient_accumulation_steps=4,
    mixed_precision='fp8',
    deepspeed_plugin=deepspeed_plugin,
    kwargs_handlers=[fp8_recipe],
)
"""
    )
    assert found == [
        (
            "convert.lossy",
            "info",
            f"PYTHONPATH={tmp_path} has no Python argument; set it in the environment",
            "PYTHONPATH",
        ),
        (
            "convert.lossy",
            "info",
            "MS-AMP under DeepSpeed is configured through the DeepSpeed plugin (enable_msamp/msamp_opt_level), "
            "read from the environment",
            "fp8_config.backend",
        ),
        (
            "convert.lossy",
            "info",
            "ACCELERATE_CONFIG_DS_FIELDS (the conflict check between accelerate's DeepSpeed keys and a "
            "DeepSpeed JSON file) has no Python argument",
            "deepspeed_config",
        ),
        LAYOUT,
    ]


def test_write_single_process_cpu_has_no_layout_finding() -> None:
    out, found = _write(
        "distributed_type: 'NO'\nuse_cpu: true\nmixed_precision: fp8\nfp8_config:\n  backend: TE\n"
        "  fp8_format: E4M3\n  override_linear_precision: [false, true, false]\n"
    )
    assert (
        out
        == HEAD
        + "from accelerate.utils import TERecipeKwargs, TorchDynamoPlugin\n\n"
        + DYNAMO_NO
        + """\
fp8_recipe = TERecipeKwargs(
    amax_compute_algo='most_recent',
    amax_history_len=1024,
    fp8_format='E4M3',
    interval=1,
    margin=0,
    use_autocast_during_eval=False,
    override_linear_precision=(False, True, False),
)
accelerator = Accelerator(
    mixed_precision='fp8',
    cpu=True,
    dynamo_plugin=dynamo_plugin,
    kwargs_handlers=[fp8_recipe],
)
"""
    )
    assert LAYOUT not in found


def test_write_multi_machine_simple_launcher_is_a_process_layout_finding() -> None:
    """MULTI_CPU on two machines runs the simple launcher (no torchrun) but sets MASTER_ADDR."""
    _, found = _write(
        "distributed_type: MULTI_CPU\nnum_processes: 2\nnum_machines: 2\nmain_process_ip: 10.0.0.1\n"
        "main_process_port: 29500\n"
    )
    assert found[-1] == LAYOUT
    assert (
        "convert.lossy",
        "info",
        "MASTER_ADDR=10.0.0.1 has no Python argument; set it in the environment",
        "MASTER_ADDR",
    ) in found


def test_write_multi_node_deepspeed_launcher_is_a_process_layout_finding(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    cfg = formats.read(
        "distributed_type: DEEPSPEED\nnum_processes: 4\nnum_machines: 2\nmain_process_ip: 10.0.0.1\n"
        "main_process_port: 29500\ndeepspeed_config:\n  deepspeed_multinode_launcher: pdsh\n  zero_stage: 1\n",
        "yaml",
    )
    from accelconf.accelerate.launch import launch_env

    result = launch_env(cfg, version=VER)
    assert result.mode == "deepspeed" and "MASTER_ADDR" not in result.env
    _, findings = formats.write(cfg, "kwargs")
    assert findings[-1] == Finding(*LAYOUT)
    assert not any(f.rule == "launch.not-env" for f in findings)


def test_write_passes_the_version_to_the_launcher() -> None:
    """accelerate 1.0's launcher exports no ACCELERATE_DYNAMO_USE_REGIONAL_COMPILATION."""
    out, _ = _write("distributed_type: 'NO'\n", "1.0")
    assert "use_regional_compilation" not in out
    assert "    use_regional_compilation=False,\n" in _write("distributed_type: 'NO'\n")[0]


def test_written_snippet_reads_back() -> None:
    out, _ = _write(
        "distributed_type: FSDP\nnum_processes: 2\nfsdp_config:\n  fsdp_version: 2\n  fsdp_offload_params: true\n"
    )
    back = formats.read(out, "kwargs")
    assert back.get("distributed_type") == "FSDP" and back.get("fsdp_config.fsdp_offload_params") is True
    assert back.get("fsdp_config.fsdp_version") == 2 and back.get("dynamo_config.dynamo_backend") == "NO"


# -- reader -----------------------------------------------------------------------------------------


def _e(path: str, value: object, written: str, line: int, column: int, where: str) -> Entry:
    section, _, key = path.rpartition(".")
    return Entry(path, value, registry.get(section, key), written, line, column, "kwargs", where)


SRC = """\
from accelerate import Accelerator
from accelerate.utils import FullyShardedDataParallelPlugin as FP, TERecipeKwargs
fsdp = FP(fsdp_version=2, cpu_offload=True,
          transformer_cls_names_to_wrap=("A", "B"), state_dict_type=mystate)
r = TERecipeKwargs(fp8_format="HYBRID")
acc = Accelerator(cpu=True, mixed_precision="bf16", fsdp_plugin=fsdp, kwargs_handlers=[r], log_with="wandb", **extra)
"""


def test_reader_entries_with_their_origin() -> None:
    cfg = K.read(SRC, path="train.py")
    assert (cfg.source, cfg.format) == ("train.py", "kwargs")
    assert dict(cfg.items()) == {
        "distributed_type": _e("distributed_type", "FSDP", registry.FSDP, 3, 8, "FullyShardedDataParallelPlugin(...)"),
        "fsdp_config.fsdp_version": _e(
            "fsdp_config.fsdp_version", 2, "fsdp_version", 3, 24, "FullyShardedDataParallelPlugin(fsdp_version=)"
        ),
        "fsdp_config.fsdp_offload_params": _e(
            "fsdp_config.fsdp_offload_params",
            True,
            "cpu_offload",
            3,
            39,
            "FullyShardedDataParallelPlugin(cpu_offload=)",
        ),
        "fsdp_config.fsdp_transformer_layer_cls_to_wrap": _e(
            "fsdp_config.fsdp_transformer_layer_cls_to_wrap",
            "A,B",
            "transformer_cls_names_to_wrap",
            4,
            41,
            "FullyShardedDataParallelPlugin(transformer_cls_names_to_wrap=)",
        ),
        "fp8_config.backend": _e("fp8_config.backend", "TE", registry.TE, 5, 5, "TERecipeKwargs(...)"),
        "mixed_precision": _e("mixed_precision", "bf16", "mixed_precision", 6, 45, "Accelerator(mixed_precision=)"),
        "fp8_config.fp8_format": _e(
            "fp8_config.fp8_format", "HYBRID", "fp8_format", 5, 31, "TERecipeKwargs(fp8_format=)"
        ),
        "use_cpu": _e("use_cpu", True, "cpu", 6, 23, "Accelerator(cpu=)"),
    }
    assert cfg.unknown == {
        "FullyShardedDataParallelPlugin.state_dict_type": Entry(
            "FullyShardedDataParallelPlugin.state_dict_type",
            "mystate",
            None,
            "state_dict_type",
            4,
            69,
            "kwargs",
            "FullyShardedDataParallelPlugin(state_dict_type=)",
        ),
        "Accelerator.log_with": Entry(
            "Accelerator.log_with", "wandb", None, "log_with", 6, 101, "kwargs", "Accelerator(log_with=)"
        ),
    }
    assert cfg.notes == [
        Finding(
            "kwargs.not-read",
            "warning",
            "FullyShardedDataParallelPlugin(state_dict_type=...) is not a "
            "literal; not read (its config-file setting: `fsdp_config.fsdp_state_dict_type`)",
            "FullyShardedDataParallelPlugin.state_dict_type",
            4,
            69,
        )
    ]


def test_reader_recipe_sets_fp8_unless_mixed_precision_is_already_set() -> None:
    cfg = K.read(
        "from accelerate import Accelerator\nfrom accelerate.utils import AORecipeKwargs\n"
        "Accelerator(kwargs_handlers=[AORecipeKwargs(pad_inner_dim=False)])\n"
    )
    assert cfg.entries["mixed_precision"] == _e("mixed_precision", "fp8", registry.AO, 3, 30, "AORecipeKwargs(...)")
    assert cfg.entries["fp8_config.backend"] == _e(
        "fp8_config.backend", "AO", registry.AO, 3, 30, "AORecipeKwargs(...)"
    )
    assert cfg.get("fp8_config.pad_inner_dim") is False
    # a mixed_precision read before the recipe (ast.walk goes breadth first: the outer call first) stays
    cfg = K.read("Accelerator(mixed_precision='bf16', kwargs_handlers=[MSAMPRecipeKwargs(opt_level='O1')])\n")
    assert cfg.get("mixed_precision") == "bf16" and cfg.get("fp8_config.backend") == "MSAMP"
    assert cfg.get("fp8_config.opt_level") == "O1"


def test_reader_first_paradigm_wins() -> None:
    cfg = K.read("DeepSpeedPlugin(zero_stage=3)\nMegatronLMPlugin(tp_degree=2)\n")
    assert cfg.entries["distributed_type"] == _e(
        "distributed_type", "DEEPSPEED", registry.DS, 1, 1, "DeepSpeedPlugin(...)"
    )
    assert cfg.get("deepspeed_config.zero_stage") == 3 and cfg.get("megatron_lm_config.megatron_lm_tp_degree") == 2
    assert K.read("x = accelerate.utils.MegatronLMPlugin()\n").get("distributed_type") == "MEGATRON_LM"
    # dynamo and parallelism plugins are no paradigm
    assert "distributed_type" not in K.read("TorchDynamoPlugin(backend='inductor')\nParallelismConfig(tp_size=2)\n")


def test_reader_accelerator_dynamo_backend_is_the_dynamo_plugin_backend() -> None:
    """Accelerator(dynamo_backend=X) builds TorchDynamoPlugin(backend=X) (accelerate accelerator.py)."""
    cfg = K.read("from accelerate import Accelerator\nAccelerator(dynamo_backend='inductor')\n")
    assert dict(cfg.items()) == {
        "dynamo_config.dynamo_backend": _e(
            "dynamo_config.dynamo_backend", "inductor", "dynamo_backend", 2, 28, "Accelerator(dynamo_backend=)"
        )
    }
    assert cfg.unknown == {} and cfg.notes == []
    # a keyword named cpu of another class is not use_cpu
    cfg = K.read("TorchDynamoPlugin(cpu=True)\n")
    assert "use_cpu" not in cfg and "TorchDynamoPlugin.cpu" not in cfg.unknown


def test_reader_skips_plugin_and_handler_arguments_and_other_calls() -> None:
    cfg = K.read(
        "ParallelismConfig(cp_size=2, cp_handler=h, "
        "sp_handler=TorchContextParallelConfig(cp_comm_strategy='alltoall'))\n"
        "Accelerator(deepspeed_plugin=ds, parallelism_config=pc, dynamo_plugin=d, megatron_lm_plugin=m)\n"
        "print(x=1)\nf()(y=2)\n"
    )
    assert {p: e.value for p, e in cfg.items()} == {
        "parallelism_config.parallelism_config_cp_size": 2,
        "parallelism_config.parallelism_config_cp_comm_strategy": "alltoall",
    }
    assert cfg.unknown == {} and cfg.notes == []


def test_reader_unknown_names_are_errors_with_hints() -> None:
    cfg = K.read(
        "from accelerate.utils import FSDPPlugin as P, TERecipeKwargs\nP(cpu_offload=True)\n"
        "TERecipeKwargs(fp8_formt='HYBRID', margin=1)\n",
        path="t.py",
    )
    assert cfg.notes == [
        Finding(
            "kwargs.unknown-name",
            "error",
            "`accelerate.utils` has no `FSDPPlugin` (accelerate 1.15.0): the import raises "
            "ImportError; did you mean FullyShardedDataParallelPlugin, DeepSpeedPlugin?",
            "FSDPPlugin",
            1,
            1,
        ),
        Finding(
            "kwargs.unknown-name",
            "error",
            "`P(...)` is not an accelerate class: none of its arguments are read",
            "P",
            2,
            1,
        ),
        Finding(
            "kwargs.unknown-name",
            "error",
            "`TERecipeKwargs()` has no keyword `fp8_formt` (accelerate 1.15.0): Python raises "
            "TypeError; did you mean fp8_format?",
            "TERecipeKwargs.fp8_formt",
            3,
            16,
        ),
    ]
    assert {p: e.value for p, e in cfg.items()} == {
        "fp8_config.backend": "TE",
        "mixed_precision": "fp8",
        "fp8_config.margin": 1,
    }
    assert cfg.unknown == {}
    # no close name: no hint
    cfg = K.read("from accelerate import Zzzz\nDeepSpeedPlugin(qqqqqq=1)\n")
    assert [n.message for n in cfg.notes] == [
        "`accelerate` has no `Zzzz` (accelerate 1.15.0): the import raises ImportError",
        "`DeepSpeedPlugin()` has no keyword `qqqqqq` (accelerate 1.15.0): Python raises TypeError",
    ]


def test_reader_syntax_error_is_an_input_error() -> None:
    with pytest.raises(InputError) as err:
        K.read("x = 1\nAccelerator(cpu=True\n", path="train.py")
    e = err.value
    assert (e.path, e.line, e.column) == ("train.py", 2, 12)
    assert e.message == "not Python: '(' was never closed"
    assert str(e) == "train.py:2:12: not Python: '(' was never closed"


def test_reader_config_is_a_config() -> None:
    cfg = K.read("")
    assert cfg == Config(source="<text>", format="kwargs")


def test_reader_imports_other_than_the_checked_modules() -> None:
    # a module accelconf has no name table of: the import is trusted and its alias followed
    cfg = K.read("from accelerate.utils.dataclasses import DeepSpeedPlugin as D\nD(zero_stage=2)\n")
    assert (
        cfg.notes == [] and cfg.get("distributed_type") == "DEEPSPEED" and cfg.get("deepspeed_config.zero_stage") == 2
    )
    # not accelerate: an alias of that name is not an accelerate class
    cfg = K.read("from mylib import DeepSpeedPlugin as Q\nQ(zero_stage=1)\n")
    assert cfg == Config(source="<text>", format="kwargs")
    # a star import and a relative import are no error
    cfg = K.read(
        "from accelerate import *\nfrom . import helpers\nfrom .x import DeepSpeedPlugin as R\nR(zero_stage=3)\n"
    )
    assert cfg == Config(source="<text>", format="kwargs")
    # the imports after such ones are still checked
    cfg = K.read(
        "from mylib import x\nfrom accelerate.state import PartialState\nfrom . import y\nfrom accelerate import Zzzz\n"
    )
    assert [(n.key, n.line) for n in cfg.notes] == [("Zzzz", 4)]


def test_reader_calls_of_a_missing_name_are_errors() -> None:
    cfg = K.read("from accelerate.utils import set_sed, Zzzz\nZzzz(zero_stage=1)\nset_sed(1)\n")
    assert cfg.notes == [
        Finding(
            "kwargs.unknown-name",
            "error",
            "`accelerate.utils` has no `set_sed` (accelerate 1.15.0): the import raises "
            "ImportError; did you mean set_seed?",
            "set_sed",
            1,
            1,
        ),
        Finding(
            "kwargs.unknown-name",
            "error",
            "`accelerate.utils` has no `Zzzz` (accelerate 1.15.0): the import raises ImportError",
            "Zzzz",
            1,
            1,
        ),
        Finding(
            "kwargs.unknown-name",
            "error",
            "`Zzzz(...)` is not an accelerate class: none of its arguments are read",
            "Zzzz",
            2,
            1,
        ),
        Finding(
            "kwargs.unknown-name",
            "error",
            "`set_sed(...)` is not an accelerate class: none of its arguments are read",
            "set_sed",
            3,
            1,
        ),
    ]
    assert list(cfg.items()) == [] and cfg.unknown == {}


def test_reader_null_byte_is_an_input_error_without_position() -> None:
    with pytest.raises(InputError) as err:
        K.read("x = 1\0\n", path="t.py")
    assert (err.value.message, err.value.line, err.value.column) == (
        "not Python: source code string cannot contain null bytes",
        0,
        0,
    )


def test_reader_keeps_reading_after_each_skipped_call_or_argument() -> None:
    """Every skipped call or argument comes before one that is read."""
    cfg = K.read(
        "from accelerate.utils import set_seed, Zzzz\nZzzz(a=1)\nprint(1)\nf()(y=2)\n"
        "TERecipeKwargs(margin=1, fp8_formt='E4M3', interval=2)\n"
        "Accelerator(**extra, fsdp_plugin=p, kwargs_handlers=[r], log_with='wandb', mixed_precision=mp, cpu=True)\n"
        "ParallelismConfig(cp_handler=h, cp_size=2)\n"
    )
    assert {p: e.value for p, e in cfg.items()} == {
        "fp8_config.backend": "TE",
        "mixed_precision": "fp8",
        "fp8_config.margin": 1,
        "fp8_config.interval": 2,
        "use_cpu": True,
        "parallelism_config.parallelism_config_cp_size": 2,
    }
    assert [n.key for n in cfg.notes] == ["Zzzz", "Zzzz", "TERecipeKwargs.fp8_formt", "Accelerator.mixed_precision"]
    assert set(cfg.unknown) == {"Accelerator.log_with", "Accelerator.mixed_precision"}
    assert cfg.unknown["Accelerator.mixed_precision"].value == "mp"


def test_reader_a_capitalised_name_gets_only_class_names_as_hints() -> None:
    cfg = K.read("from accelerate.utils import Set_seed\n")
    assert (
        cfg.notes[0].message
        == "`accelerate.utils` has no `Set_seed` (accelerate 1.15.0): the import raises ImportError"
    )


def test_reader_keyword_hint_lists_every_close_name() -> None:
    cfg = K.read("DeepSpeedPlugin(offload_device='cpu')\n")
    assert cfg.notes[0].message == (
        "`DeepSpeedPlugin()` has no keyword `offload_device` (accelerate 1.15.0): Python raises "
        "TypeError; did you mean offload_param_device, offload_optimizer_device?"
    )


def test_reader_a_tuple_of_a_non_list_setting_stays_a_tuple() -> None:
    cfg = K.read("TERecipeKwargs(override_linear_precision=(True, False, False))\n")
    assert cfg.get("fp8_config.override_linear_precision") == (True, False, False)


def test_fp8_override_alone_builds_the_te_recipe() -> None:
    env = {"ACCELERATE_MIXED_PRECISION": "fp8", "ACCELERATE_FP8_BACKEND": "TE", "ACCELERATE_FP8_OVERRIDE_WGRAD": "1"}
    assert K.plugin_kwargs(env, VER)[0] == {registry.TE: {"override_linear_precision": (False, False, True)}}


def test_fsdp1_does_not_read_fsdp2_only_fields() -> None:
    var = registry.get("fsdp_config", "fsdp_activation_checkpointing_offload").env  # type: ignore[union-attr]
    env = {"ACCELERATE_USE_FSDP": "true", "FSDP_VERSION": "1", var: "true"}
    classes, _, findings = K.plugin_kwargs(env, VER, frozenset({"fsdp_config.fsdp_activation_checkpointing_offload"}))
    assert classes == {registry.FSDP: {"fsdp_version": 1}}
    assert findings == [
        lossy(
            "info",
            f"{var}=true is not read by FullyShardedDataParallelPlugin.activation_checkpointing_offload: "
            "FSDP1 does not use it; not written",
            "fsdp_config.fsdp_activation_checkpointing_offload",
        )
    ]
    classes, _, findings = K.plugin_kwargs({**env, "FSDP_VERSION": "2"}, VER)
    assert classes == {registry.FSDP: {"activation_checkpointing_offload": True, "fsdp_version": 2}} and findings == []


# -- torch objects in plugin arguments, read as accelerate's plugin reads them ------------------------

FSDP_IDIOM = (
    "import torch\nfrom accelerate import Accelerator\nfrom accelerate.utils import FullyShardedDataParallelPlugin\n"
    "from torch.distributed.fsdp import BackwardPrefetch, MixedPrecision, ShardingStrategy, StateDictType\n"
    "plugin = FullyShardedDataParallelPlugin(\n"
    "    sharding_strategy=ShardingStrategy.FULL_SHARD,\n"
    "    backward_prefetch=BackwardPrefetch.BACKWARD_PRE,\n"
    "    state_dict_type=torch.distributed.fsdp.StateDictType.SHARDED_STATE_DICT,\n"
    "    mixed_precision_policy=MixedPrecision(param_dtype=torch.bfloat16, reduce_dtype=torch.bfloat16, "
    "buffer_dtype=torch.bfloat16),\n"
    ")\naccelerator = Accelerator(fsdp_plugin=plugin)\n"
)


def test_reader_enum_members_are_the_config_file_values() -> None:
    cfg = formats.read(FSDP_IDIOM, "kwargs", "train.py")
    assert {p: (e.value, e.line, e.column) for p, e in cfg.items()} == {
        "distributed_type": ("FSDP", 5, 10),
        "fsdp_config.fsdp_sharding_strategy": ("FULL_SHARD", 6, 23),
        "fsdp_config.fsdp_backward_prefetch": ("BACKWARD_PRE", 7, 23),
        "fsdp_config.fsdp_state_dict_type": ("SHARDED_STATE_DICT", 8, 21),
    }


def test_reader_torch_private_hybrid_zero2_member_is_the_config_name() -> None:
    src = "FullyShardedDataParallelPlugin(sharding_strategy=fsdp.ShardingStrategy._HYBRID_SHARD_ZERO2)\n"
    assert formats.read(src, "kwargs").get("fsdp_config.fsdp_sharding_strategy") == "HYBRID_SHARD_ZERO2"


def test_reader_mixed_precision_policy_names_the_nearest_setting_and_nothing_is_falsely_dropped() -> None:
    cfg = formats.read(FSDP_IDIOM, "kwargs", "train.py")
    assert [(n.rule, n.severity, n.key, n.line, n.suggestion) for n in cfg.notes] == [
        ("kwargs.no-config-value", "warning", "FullyShardedDataParallelPlugin.mixed_precision_policy", 9, "bf16")
    ]
    assert "the nearest setting is `mixed_precision: bf16`, which gives FSDP this same policy" in cfg.notes[0].message
    text, findings = formats.write(cfg, "yaml")
    assert "fsdp_sharding_strategy: FULL_SHARD" in text and "mixed_precision_policy" not in text
    assert not [f for f in findings if "has no config-file key; dropped" in f.message]


def test_reader_a_member_of_another_setting_names_the_setting_it_belongs_to() -> None:
    src = "FullyShardedDataParallelPlugin(reshard_after_forward=ShardingStrategy.SHARD_GRAD_OP)\n"
    cfg = formats.read(src, "kwargs")
    assert "fsdp_config.fsdp_reshard_after_forward" not in cfg
    assert cfg.notes[0].message.endswith(
        "has no config-file value; the nearest setting is `fsdp_config.fsdp_sharding_strategy: SHARD_GRAD_OP`"
    )


def test_reader_offload_classes_are_fsdp_offload_params() -> None:
    for call, value in (
        ("CPUOffload(offload_params=True)", True),
        ("CPUOffload()", False),
        ("CPUOffloadPolicy()", True),
    ):
        assert (
            formats.read(f"FullyShardedDataParallelPlugin(cpu_offload={call})\n", "kwargs").get(
                "fsdp_config.fsdp_offload_params"
            )
            is value
        )
    cfg = formats.read("FullyShardedDataParallelPlugin(fsdp_version=2, cpu_offload=OffloadPolicy())\n", "kwargs")
    assert cfg.get("fsdp_config.fsdp_offload_params") is False
    cfg = formats.read("FullyShardedDataParallelPlugin(cpu_offload=CPUOffloadPolicy(pin_memory=False))\n", "kwargs")
    assert "fsdp_config.fsdp_offload_params" not in cfg
    assert cfg.notes[0].message.endswith("the nearest setting is `fsdp_config.fsdp_offload_params: true`")


def test_reader_an_inline_deepspeed_config_names_the_file_setting() -> None:
    cfg = formats.read("DeepSpeedPlugin(hf_ds_config=dict(zero_optimization=dict(stage=3)), zero_stage=3)\n", "kwargs")
    assert "deepspeed_config.deepspeed_config_file" not in cfg and cfg.get("deepspeed_config.zero_stage") == 3
    assert cfg.notes[0].message.endswith("the nearest setting is `deepspeed_config.deepspeed_config_file`")


def test_reader_a_value_it_cannot_know_names_its_config_file_setting() -> None:
    cfg = formats.read("FullyShardedDataParallelPlugin(auto_wrap_policy=transformer_auto_wrap_policy)\n", "kwargs")
    assert cfg.notes[0].message == (
        "FullyShardedDataParallelPlugin(auto_wrap_policy=...) is not a literal; not read "
        "(its config-file setting: `fsdp_config.fsdp_auto_wrap_policy`)"
    )


TRAINER_PYTHON = Path(__file__).resolve().parents[4] / "shared" / "corpus" / "trainer" / "python"


@pytest.mark.skipif(not TRAINER_PYTHON.is_dir(), reason=f"no corpus at {TRAINER_PYTHON}")
@pytest.mark.parametrize(
    "path", sorted(TRAINER_PYTHON.glob("*.py")) if TRAINER_PYTHON.is_dir() else [], ids=lambda p: p.name[:60]
)
def test_corpus_training_scripts_read_without_a_false_error(path: Path) -> None:
    cfg = formats.read(path.read_text(encoding="utf-8"), "kwargs", str(path))
    assert [n for n in cfg.notes if n.severity == "error"] == [] and formats.value_findings(cfg) == []
