"""The registry against the installed accelerate: flags, defaults, config keys and plugin fields.
Fails on drift when accelerate changes (tests run with the accelerate version of the test extras)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from accelconf.accelerate import registry

SCRIPT = (
    r"""
import json, os, tempfile, dataclasses
os.environ["HF_HOME"] = tempfile.mkdtemp()
from accelerate.commands.launch import launch_command_parser
from accelerate.commands.config.config_args import ClusterConfig, SageMakerConfig
from accelerate.utils import dataclasses as D
from accelerate import parallelism_config as P
import accelerate
p = launch_command_parser()
flags = {}
for a in p._actions:
    for o in a.option_strings:
        if o.startswith("--") and "-" not in o[2:]:
            flags[o[2:]] = {"dest": a.dest, "default": a.default if isinstance(a.default, (str, int, float, bool, """
    r"""type(None))) else repr(a.default),
                            "choices": list(a.choices) if a.choices else None}
fields = lambda c: sorted(f.name for f in dataclasses.fields(c))
print(json.dumps({
    "version": accelerate.__version__,
    "flags": flags,
    "cluster": fields(ClusterConfig), "sagemaker": fields(SageMakerConfig),
    "fsdp": fields(D.FullyShardedDataParallelPlugin), "ds": fields(D.DeepSpeedPlugin),
    "dynamo": fields(D.TorchDynamoPlugin), "megatron": fields(D.MegatronLMPlugin),
    "parallelism": fields(P.ParallelismConfig),
    "distributed": [e.value for e in D.DistributedType], "dynamo_backends": [e.value for e in D.DynamoBackend],
    "precision": [e.value for e in D.PrecisionType],
}))
"""
)


@pytest.fixture(scope="module")
def installed():
    pytest.importorskip("accelerate", reason="accelerate is in the test extras")
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=120, check=True)
    data = json.loads(out.stdout)
    return data


def test_installed_accelerate_is_the_registrys_version(installed):
    """The drift checks below compare with the installed accelerate: they only mean something when it
    is the release the registry describes, so a moved pin fails here instead of skipping them."""
    assert registry.normalize_version(installed["version"]) == registry.NEWEST, (
        f"the registry describes accelerate {registry.NEWEST} but accelerate {installed['version']} is installed: "
        f"update registry.NEWEST (and the registry) or install accelerate {registry.NEWEST}"
    )


def test_every_flag_in_the_registry_exists_with_its_default(installed):
    for s in registry.SETTINGS:
        if not s.flag or not s.exists_in(registry.NEWEST):
            continue
        assert s.flag in installed["flags"], f"{s.path}: --{s.flag} is not a launch flag"
        got = installed["flags"][s.flag]
        assert got["dest"] == s.namespace, s.path
        # A None flag default means the value is filled later in _validate_launch_command; the
        # registry records that effective default instead.
        if s.launcher_default is not None and got["default"] is not None and s.type not in ("list",):
            from accelconf.accelerate.model import canonical

            assert canonical(s, got["default"]) == canonical(s, s.launcher_default) or s.file_ignored, (
                s.path,
                got["default"],
            )


def test_every_config_key_of_clusterconfig_is_in_the_registry(installed):
    sagemaker_only = {
        s.key
        for s in registry.settings_in("", registry.NEWEST)
        if s.flag is None and s.key in registry.SAGEMAKER_KEYS and s.key not in installed["cluster"]
    }
    ours = {s.key for s in registry.settings_in("", registry.NEWEST)} - {"fp16", "dynamo_backend"} - sagemaker_only
    assert set(installed["cluster"]) == ours
    assert set(installed["sagemaker"]) <= registry.SAGEMAKER_KEYS | {"num_processes"}


def test_nested_flags_of_the_launcher_are_all_known(installed):
    known = {s.flag for s in registry.SETTINGS if s.flag}
    for flag in installed["flags"]:
        if flag.startswith(("fsdp_", "megatron_lm_", "parallelism_config_", "fp8_", "dynamo_")) or flag in (
            "zero_stage",
            "offload_optimizer_device",
            "offload_param_device",
            "gradient_accumulation_steps",
            "gradient_clipping",
            "zero3_init_flag",
            "zero3_save_16bit_model",
            "deepspeed_config_file",
            "deepspeed_hostfile",
            "deepspeed_multinode_launcher",
            "deepspeed_exclusion_filter",
            "deepspeed_inclusion_filter",
            "deepspeed_moe_layer_cls_names",
            "mpirun_hostfile",
        ):
            assert flag in known, f"--{flag} is missing from the registry"


@pytest.mark.parametrize(
    "cls, key",
    [
        ("fsdp", "FullyShardedDataParallelPlugin"),
        ("ds", "DeepSpeedPlugin"),
        ("dynamo", "TorchDynamoPlugin"),
        ("megatron", "MegatronLMPlugin"),
        ("parallelism", "ParallelismConfig"),
    ],
)
def test_plugin_fields_exist(installed, cls, key):
    for s in registry.SETTINGS:
        if s.plugin and s.plugin.startswith(key + ".") and s.exists_in(registry.NEWEST):
            assert s.plugin.split(".", 1)[1] in installed[cls], s.plugin


def test_enums_match(installed):
    assert set(installed["distributed"]) == set(registry.DISTRIBUTED_TYPES)
    assert set(installed["dynamo_backends"]) == set(registry.DYNAMO_BACKENDS)
    assert set(installed["precision"]) == set(registry.PRECISIONS)


def test_deepspeed_file_conflicts_match_the_plugin_check():
    """The keys the registry says conflict with deepspeed_config_file are the ones
    DeepSpeedPlugin._deepspeed_config_checks refuses (read from its source)."""
    pytest.importorskip("accelerate")
    import ast
    import importlib.util

    spec = importlib.util.find_spec("accelerate.utils.dataclasses")
    assert spec is not None and spec.origin
    tree = ast.parse(Path(spec.origin).read_text(encoding="utf-8"))  # read and closed: no ResourceWarning
    fn = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "_deepspeed_config_checks")
    names = next(
        ast.literal_eval(n.value) for n in ast.walk(fn) if isinstance(n, ast.Assign) and isinstance(n.value, ast.List)
    )
    refused = {n.replace("ACCELERATE_", "").replace("DEEPSPEED_", "").lower() for n in names} - {"mixed_precision"}
    assert refused == set(registry.deepspeed_json_keys())
