"""The Python reader against accelerate's own FullyShardedDataParallelPlugin (the oracle harness of
tests/oracle/test_oracle_launch.py): a script's plugin, built by accelerate from the script's own keyword
arguments (torch enum members, policy classes), has the same fields as the plugin accelerate builds
from launching the config file accelconf read from that script."""

from __future__ import annotations

from pathlib import Path

import pytest

from accelconf import formats
from tests.oracle.test_oracle_launch import Oracle, oracle  # noqa: F401 - the session fixture

pytestmark = pytest.mark.oracle

HEAD = (
    "import torch\nimport torch.distributed.fsdp\nfrom accelerate import Accelerator\n"
    "from accelerate.utils import FullyShardedDataParallelPlugin\n"
    "from torch.distributed.fsdp import BackwardPrefetch, CPUOffload, CPUOffloadPolicy, MixedPrecision, "
    "MixedPrecisionPolicy, OffloadPolicy, ShardingStrategy, StateDictType\n"
)

PLUGINS = {
    "fsdp1-enums": "sharding_strategy=ShardingStrategy.SHARD_GRAD_OP, "
    "backward_prefetch=BackwardPrefetch.BACKWARD_POST, state_dict_type=StateDictType.SHARDED_STATE_DICT, "
    "cpu_offload=CPUOffload(offload_params=True), use_orig_params=True",
    "fsdp1-dotted": "sharding_strategy=torch.distributed.fsdp.ShardingStrategy._HYBRID_SHARD_ZERO2, "
    "backward_prefetch=torch.distributed.fsdp.BackwardPrefetch.BACKWARD_PRE, "
    "state_dict_type=torch.distributed.fsdp.fully_sharded_data_parallel.StateDictType.FULL_STATE_DICT, "
    "cpu_offload=CPUOffload()",
    "fsdp2-policies": "fsdp_version=2, cpu_offload=CPUOffloadPolicy(), state_dict_type=StateDictType.FULL_STATE_DICT, "
    "reshard_after_forward=False",
    "fsdp2-no-offload": "fsdp_version=2, cpu_offload=OffloadPolicy(), state_dict_type=StateDictType.SHARDED_STATE_DICT",
}


def _config_file(source: str, tmp_path: Path, processes: int = 2) -> tuple[Path, list[str]]:
    """The YAML accelconf writes from a script, and the plugin fields the script sets."""
    cfg = formats.read(source, "kwargs", "train.py", "1.15")
    assert [n for n in cfg.notes if n.severity != "info"] == []  # every argument read: nothing left to judge
    text, _ = formats.write(cfg, "yaml")
    path = tmp_path / "read.yaml"
    path.write_text(text + f"num_processes: {processes}\n")
    return path, [e.written_key for p, e in cfg.items() if p not in ("distributed_type", "mixed_precision")]


def test_dynamo_plugin_from_accelerate_enum_members_equals_the_plugin_of_the_config_read_from_it(
    oracle: Oracle, tmp_path: Path
) -> None:
    source = (
        "from accelerate import Accelerator\n"
        "from accelerate.utils import DynamoBackend, PrecisionType, TorchDynamoPlugin\n"
        "accelerator = Accelerator(mixed_precision=PrecisionType.BF16, "
        "dynamo_plugin=TorchDynamoPlugin(backend=DynamoBackend.INDUCTOR, mode='max-autotune'))\n"
    )
    path, fields = _config_file(source, tmp_path, 1)
    assert formats.read(source, "kwargs").get("mixed_precision") == "bf16"
    theirs = oracle(["--config_file", str(path), "train.py"], plugins=True, snippet=source)
    from_file = theirs["plugins"]["TorchDynamoPlugin"]["fields"]
    from_script = theirs["snippet"]["TorchDynamoPlugin"]["fields"]
    assert fields == ["backend", "mode"]
    assert {f: from_file[f] for f in fields} == {f: from_script[f] for f in fields}


@pytest.mark.parametrize("kwargs", list(PLUGINS.values()), ids=list(PLUGINS))
def test_fsdp_plugin_from_enum_members_equals_the_plugin_of_the_config_read_from_it(
    kwargs: str, oracle: Oracle, tmp_path: Path
) -> None:
    source = (
        HEAD + f"plugin = FullyShardedDataParallelPlugin({kwargs})\naccelerator = Accelerator(fsdp_plugin=plugin)\n"
    )
    path, fields = _config_file(source, tmp_path)
    theirs = oracle(["--config_file", str(path), "train.py"], plugins=True, snippet=source)
    from_file = theirs["plugins"]["FullyShardedDataParallelPlugin"]
    from_script = theirs["snippet"]["FullyShardedDataParallelPlugin"]
    assert fields and "error" not in from_file
    assert {f: from_file["fields"][f] for f in fields} == {f: from_script["fields"][f] for f in fields}


POLICIES = {
    "fsdp1-bf16": (
        "",
        "MixedPrecision(param_dtype=torch.bfloat16, reduce_dtype=torch.bfloat16, buffer_dtype=torch.bfloat16)",
    ),
    "fsdp1-mixed": (
        "",
        "MixedPrecision(param_dtype=torch.bfloat16, reduce_dtype=torch.float32, buffer_dtype=torch.bfloat16)",
    ),
    "fsdp1-dict": ("", "dict(param_dtype=torch.float16, reduce_dtype=torch.float16, buffer_dtype=torch.float16)"),
    "fsdp1-name": ("", "'bf16'"),
    "fsdp2-bf16": (
        "fsdp_version=2, ",
        "MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.bfloat16, output_dtype=torch.bfloat16)",
    ),
    "fsdp2-cast": (
        "fsdp_version=2, ",
        "MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.bfloat16, "
        "output_dtype=torch.bfloat16, cast_forward_inputs=False)",
    ),
}


@pytest.mark.parametrize(("version", "policy"), list(POLICIES.values()), ids=list(POLICIES))
def test_mixed_precision_policy_is_the_one_mixed_precision_gives_exactly_when_accelconf_says_so(
    version: str, policy: str, oracle: Oracle
) -> None:
    """No config-file key holds a policy: the finding names `mixed_precision: X` and says whether
    Accelerator's set_mixed_precision(X) on a plugin without one gives this same policy."""
    source = HEAD + f"plugin = FullyShardedDataParallelPlugin({version}mixed_precision_policy={policy})\n"
    cfg = formats.read(source, "kwargs", "train.py", "1.15")
    (note,) = [n for n in cfg.notes if n.rule == "kwargs.no-config-value"]
    assert note.severity == "warning" and note.suggestion in ("bf16", "fp16")
    check = (
        f"nearest = FullyShardedDataParallelPlugin({version.rstrip(', ')})\n"
        f"nearest.set_mixed_precision({note.suggestion!r})\n"
        "accelerator = Accelerator(fsdp_plugin=plugin, "
        "same=nearest.mixed_precision_policy == plugin.mixed_precision_policy)\n"
    )
    built = oracle(["--use_fsdp", "--num_processes", "2", "train.py"], snippet=source + check)["snippet"]
    assert "error" not in built, built
    assert built["accelerator_kwargs"]["same"] is ("this same policy" in note.message), note.message


@pytest.mark.parametrize(
    ("kwargs", "refused"),
    [
        ("fsdp_version=2, cpu_offload=CPUOffload(offload_params=True)", "cpu_offload"),
        ("fsdp_version=2, mixed_precision_policy=MixedPrecision(param_dtype=torch.bfloat16)", "mixed_precision_policy"),
        ("fsdp_version=1, cpu_offload=CPUOffloadPolicy()", "cpu_offload"),
        ("mixed_precision_policy=dict(param_dtype=torch.bfloat16)", "mixed_precision_policy"),
        ("mixed_precision_policy='fp64'", "mixed_precision_policy"),
    ],
)
def test_a_policy_accelerate_refuses_is_an_error_where_accelerate_raises(
    kwargs: str, refused: str, oracle: Oracle
) -> None:
    source = (
        HEAD + f"plugin = FullyShardedDataParallelPlugin({kwargs})\naccelerator = Accelerator(fsdp_plugin=plugin)\n"
    )
    cfg = formats.read(source, "kwargs", "train.py", "1.15")
    errors = [n.key for n in cfg.notes if n.severity == "error"]
    assert errors == [f"FullyShardedDataParallelPlugin.{refused}"]
    built = oracle(["--use_fsdp", "--num_processes", "2", "train.py"], snippet=source)["snippet"]
    assert built.get("error", "").startswith("ValueError"), built
