"""The Trainer-arguments rules proven against transformers itself (the installed release, CPU).

Each case is one input: accelconf's finding for it (rule and what it says happens) and what the
real code does with the same input: ``HfArgumentParser.parse_yaml_file`` (or the class called
with the keywords), the ``TrainingArguments`` it builds, the FSDP plugin arguments it derives, and
the Trainer's own init. FSDP only becomes active on accelerators, so the Trainer is built with an
``Accelerator`` whose state holds the FSDP plugin the Trainer built (what a GPU run holds): the
Trainer's own checks then run as they run there.
"""

from __future__ import annotations

import dataclasses
import os
import typing
from pathlib import Path
from typing import Any

import pytest

from accelconf.api import validate_source
from accelconf.trainer import fields

transformers = pytest.importorskip("transformers", reason="the oracle needs transformers (test extras)")
torch = pytest.importorskip("torch", reason="the oracle needs torch (test extras)")

pytestmark = pytest.mark.oracle


def _real_types() -> dict[str, str]:
    """TrainingArguments' field types as HfArgumentParser reads them (Optional[X] is X)."""
    hints = typing.get_type_hints(transformers.TrainingArguments)
    out = {}
    for f in dataclasses.fields(transformers.TrainingArguments):
        members = [a for a in typing.get_args(hints[f.name]) if a is not type(None)] or [hints[f.name]]
        names = {m.__name__ for m in members if isinstance(m, type)}
        for t in ("bool", "int", "float"):
            if names == {t}:
                out[f.name] = t
    return out


def _parse(tmp_path: Path, text: str) -> Any:
    p = tmp_path / "args.yaml"
    p.write_text(text)
    (args,) = transformers.HfArgumentParser(transformers.TrainingArguments).parse_yaml_file(str(p))
    return args


class _Model(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(2, 2)

    def forward(self, x: Any = None, labels: Any = None) -> dict[str, Any]:
        return {"loss": self.lin(x).sum()}


def _trainer(args: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    """A real Trainer; its Accelerator's state holds the FSDP plugin as on GPUs."""
    import transformers.trainer as trainer_mod
    from accelerate.state import AcceleratorState, PartialState

    base = trainer_mod.Accelerator

    class FSDPState(base):  # type: ignore[misc, valid-type]
        def __init__(self, *a: Any, fsdp_plugin: Any = None, **kw: Any) -> None:
            super().__init__(*a, **kw)
            self.state.fsdp_plugin = fsdp_plugin

    AcceleratorState._reset_state(True)
    PartialState._reset_state()
    monkeypatch.setattr(trainer_mod, "Accelerator", FSDPState)
    return transformers.Trainer(model=_Model(), args=args)


def _findings(text: str, name: str = "args.yaml") -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = {}
    for f in validate_source(text, name):
        out.setdefault(f.rule, []).append(f)
    return out


BASE = "output_dir: out\nuse_cpu: true\nreport_to: none\n"


def test_yaml_learning_rate_5e_5_is_a_string_the_optimizer_refuses_in_train(tmp_path, monkeypatch):
    text = BASE + "learning_rate: 5e-5\n"
    (f,) = _findings(text)["trainer-wrong-type"]
    assert "optimizer refuses it in train() (TypeError)" in f.message
    args = _parse(tmp_path, text)
    assert args.learning_rate == "5e-5"  # construction keeps it
    with pytest.raises(TypeError):
        _trainer(args, monkeypatch).create_optimizer()


def test_bf16_auto_is_silently_on(tmp_path):
    text = BASE + "bf16: auto\n"
    (f,) = _findings(text)["trainer-wrong-type"]
    assert "silently on" in f.message
    args = _parse(tmp_path, text)
    assert args.bf16 == "auto" and args.mixed_precision == "bf16"


def test_misspelled_key_is_refused_by_hfargumentparser(tmp_path):
    text = BASE + "learning_rat: 1.0e-5\n"
    (f,) = _findings(text)["trainer-unknown-field"]
    assert f.severity == "error" and "Some keys are not used" in f.message
    with pytest.raises(ValueError, match="Some keys are not used"):
        _parse(tmp_path, text)


def test_removed_keyword_in_a_call_raises_type_error():
    text = "from transformers import TrainingArguments\nTrainingArguments(output_dir='o', evaluation_strategy='no')\n"
    (f,) = _findings(text, "train.py")["trainer-removed-field"]
    assert "TypeError" in f.message and "removed in transformers 4.51" in f.message
    with pytest.raises(TypeError, match="evaluation_strategy"):
        transformers.TrainingArguments(output_dir="o", evaluation_strategy="no")


@pytest.mark.parametrize(
    "fsdp, config, raises",
    [
        ("full_shard auto_wrapp", "{}", "Unknown `fsdp` option"),
        ("hybrid_shard", "{}", "only available with FSDP1"),
        ("hybrid_shard", "{version: 1}", None),
        ("true", "{}", "Unknown `fsdp` option"),
    ],
)
def test_fsdp_option_strings(tmp_path, fsdp, config, raises):
    text = BASE + f'fsdp: "{fsdp}"\nfsdp_config: {config}\n'
    got = _findings(text).get("trainer-fsdp-option", [])
    if raises is None:
        assert not got
        assert _parse(tmp_path, text).fsdp_plugin_args["reshard_after_forward"] == fsdp
        return
    assert got and "raises ValueError at construction" in got[0].message
    with pytest.raises(ValueError, match=raises):
        _parse(tmp_path, text)


def test_two_strategies_keep_the_first(tmp_path):
    text = BASE + 'fsdp: "full_shard shard_grad_op"\n'
    assert "keeps the first (full_shard)" in _findings(text)["trainer-fsdp-option-conflict"][0].message
    assert _parse(tmp_path, text).fsdp_plugin_args["reshard_after_forward"] is True


def test_offload_params_leaves_offload_off(tmp_path):
    text = BASE + "fsdp: true\nfsdp_config: {fsdp_offload_params: true}\n"
    assert "offload is silently off" in _findings(text)["trainer-fsdp-accelerate-name"][0].message
    assert "cpu_offload" not in _parse(tmp_path, text).fsdp_plugin_args


def test_fsdp1_only_keys_are_ignored_without_a_version(tmp_path):
    text = BASE + "fsdp: true\nfsdp_config: {use_orig_params: false, fsdp_backward_prefetch: BACKWARD_PRE}\n"
    assert len(_findings(text)["trainer-fsdp-version-key"]) == 2
    plugin = _parse(tmp_path, text).fsdp_plugin_args
    assert plugin["fsdp_version"] == 2 and "use_orig_params" not in plugin and "backward_prefetch" not in plugin


def test_prefixed_key_overwrites_its_twin(tmp_path):
    text = BASE + "fsdp: true\nfsdp_config: {cpu_offload: false, fsdp_cpu_offload: true}\n"
    assert "True wins" in _findings(text)["trainer-fsdp-prefix-collision"][0].message
    assert _parse(tmp_path, text).fsdp_plugin_args["cpu_offload"] is True


def test_fsdp_config_without_fsdp_configures_nothing(tmp_path):
    text = BASE + "fsdp_config: {cpu_offload: true}\n"
    assert _findings(text)["trainer-fsdp-config-unused"]
    assert _parse(tmp_path, text).fsdp_plugin_args is None


def test_nested_accelerate_config_configures_nothing(tmp_path):
    text = BASE + "fsdp: true\nfsdp_config: {fsdp_config: {fsdp_offload_params: true}, distributed_type: FSDP}\n"
    assert _findings(text)["trainer-fsdp-accelerate-config"]
    plugin = _parse(tmp_path, text).fsdp_plugin_args
    assert "cpu_offload" not in plugin


def test_min_num_params_is_ignored_with_a_wrap_class(tmp_path):
    text = (
        BASE + "fsdp: true\nfsdp_config: {min_num_params: 1000, transformer_layer_cls_to_wrap: [LlamaDecoderLayer]}\n"
    )
    assert "`min_num_params` is silently ignored" in _findings(text)["trainer-fsdp-wrap-conflict"][0].message
    plugin = _parse(tmp_path, text).fsdp_plugin_args
    assert "min_num_params" not in plugin and plugin["transformer_cls_names_to_wrap"] == "LlamaDecoderLayer"


def test_invalid_wrap_policy_raises_at_construction(tmp_path):
    text = BASE + "fsdp: true\nfsdp_config: {auto_wrap_policy: transformer_based_wrap}\n"
    assert "at construction" in _findings(text)["trainer-fsdp-invalid-value"][0].message
    with pytest.raises(ValueError, match="auto_wrap_policy"):
        _parse(tmp_path, text)


def test_state_dict_type_full_raises_at_trainer_init(tmp_path, monkeypatch):
    text = BASE + "fsdp: true\nfsdp_config: {state_dict_type: full}\n"
    assert "(Trainer init)" in _findings(text)["trainer-fsdp-invalid-value"][0].message
    args = _parse(tmp_path, text)  # construction accepts it
    with pytest.raises(KeyError):
        _trainer(args, monkeypatch)


def test_fsdp_and_argument_activation_checkpointing_raise_at_trainer_init(tmp_path, monkeypatch):
    text = BASE + "fsdp: true\nfsdp_config: {activation_checkpointing: true}\ngradient_checkpointing: true\n"
    assert "at Trainer init" in _findings(text)["trainer-fsdp-checkpointing"][0].message
    with pytest.raises(ValueError, match="can't both be set"):
        _trainer(_parse(tmp_path, text), monkeypatch)


def test_save_only_model_with_sharded_state_dict_raises_at_trainer_init(tmp_path, monkeypatch):
    text = BASE + "fsdp: true\nfsdp_config: {state_dict_type: SHARDED_STATE_DICT}\nsave_only_model: true\n"
    assert "SHARDED_STATE_DICT" in _findings(text)["trainer-save-only-model"][0].message
    with pytest.raises(ValueError, match="save_only_model option is not compatible"):
        _trainer(_parse(tmp_path, text), monkeypatch)


def test_save_only_model_with_load_best_under_fsdp_raises_at_trainer_init(tmp_path, monkeypatch):
    text = BASE + (
        "fsdp: true\nsave_only_model: true\nload_best_model_at_end: true\neval_strategy: steps\n"
        "save_strategy: steps\neval_steps: 10\nsave_steps: 10\n"
    )
    assert "load_best_model_at_end" in _findings(text)["trainer-save-only-model"][0].message
    with pytest.raises(ValueError, match="can't be used with `save_only_model`"):
        _trainer(_parse(tmp_path, text), monkeypatch)


def test_accelerator_config_num_steps_with_accumulation_raises_at_trainer_init(tmp_path, monkeypatch):
    text = BASE + "gradient_accumulation_steps: 4\naccelerator_config: {gradient_accumulation_kwargs: {num_steps: 2}}\n"
    assert _findings(text)["trainer-accumulation-twice"][0].severity == "error"
    with pytest.raises(ValueError, match="num_steps"):
        _trainer(_parse(tmp_path, text), monkeypatch)


def test_bf16_wins_over_accelerate_mixed_precision(tmp_path, monkeypatch):
    script = "export ACCELERATE_MIXED_PRECISION=fp16\ntorchrun train.py --bf16 True --output_dir o\n"
    assert "sets mixed_precision to 'bf16' over it" in _findings(script, "run.sh")["trainer-mixed-precision"][0].message
    monkeypatch.setenv("ACCELERATE_MIXED_PRECISION", "fp16")
    assert _parse(tmp_path, BASE + "bf16: true\n").mixed_precision == "bf16"


@pytest.mark.parametrize(
    "words, refused",
    [
        (["--bf16", "auto"], True),
        (["--learning_rate", "5e-5"], False),
        (["--gradient_accumulation_steps", "2.5"], True),
    ],
)
def test_command_line_types_as_argparse_converts_them(words, refused):
    script = "torchrun train.py " + " ".join(words) + " --output_dir o\n"
    assert bool(_findings(script, "run.sh").get("trainer-wrong-type")) is refused
    parser = transformers.HfArgumentParser(transformers.TrainingArguments)
    if refused:
        with pytest.raises(SystemExit):
            parser.parse_args_into_dataclasses(words + ["--output_dir", "o", "--use_cpu", "True"])
    else:
        parser.parse_args_into_dataclasses(words + ["--output_dir", "o", "--use_cpu", "True"])


def test_validate_imports_no_training_library():
    import subprocess
    import sys

    code = (
        "import sys; from accelconf.api import validate_source; "
        "validate_source('learning_rate: 5e-5\\nfsdp: full_shard\\noutput_dir: o\\n', 'a.yaml'); "
        "print(sorted(m for m in ('transformers', 'torch', 'accelerate', 'deepspeed') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env={**os.environ}, check=True)
    assert out.stdout.strip() == "[]"


ENUMS = sorted(n for n, t in fields.types().items() if t == "enum")


@pytest.mark.parametrize("name", ENUMS)
def test_an_enum_field_outside_its_choices_is_judged_as_the_release_does(name):
    from accelconf.trainer.rules import CONVERTED_ENUMS

    (f,) = _findings(BASE + f"{name}: not_a_choice\n")["trainer-wrong-type"]
    try:
        transformers.TrainingArguments(output_dir="o", use_cpu=True, **{name: "not_a_choice"})
        raised = False
    except ValueError:
        raised = True
    assert raised is (name in CONVERTED_ENUMS)
    assert ("raises ValueError at construction" in f.message) is raised


def test_the_releases_data_types_are_the_installed_dataclass_annotations():
    real = _real_types()
    assert real and all(fields.types()[n] == t for n, t in real.items())


def test_the_corpus_true_errors_raise_in_transformers():
    from tests.conftest import corpus_files

    files = [p for sub in ("python", "scripts") for p in corpus_files(f"trainer/{sub}")]
    if not files:
        pytest.skip("the shared corpus has no trainer/ folder here")
    checked = 0
    for path in files:
        for f in validate_source(path.read_text(), str(path)):
            if f.rule in ("trainer-unknown-field", "trainer-removed-field"):
                with pytest.raises(TypeError, match=f.key):
                    transformers.TrainingArguments(output_dir="o", use_cpu=True, **{f.key: 0.1})
                checked += 1
            elif f.rule == "trainer-fsdp-option" and f.severity == "error":
                value = path.read_text().splitlines()[f.line - 1].split("--fsdp", 1)[1].strip().split('"')[1]
                with pytest.raises(ValueError, match="Unknown `fsdp` option"):
                    transformers.TrainingArguments(output_dir="o", use_cpu=True, fsdp=value)
                checked += 1
    assert checked >= 5


def test_broken_json_string_for_a_dict_field_raises_at_construction():
    script = "torchrun train.py --fsdp full_shard --fsdp_config '{\"cpu_offload\": true,}' --output_dir o\n"
    assert "JSONDecodeError" in _findings(script, "run.sh")["trainer-wrong-type"][0].message
    import json

    with pytest.raises(json.JSONDecodeError):
        transformers.TrainingArguments(
            output_dir="o", use_cpu=True, fsdp="full_shard", fsdp_config='{"cpu_offload": true,}'
        )


def test_inline_json_fsdp_config_on_the_command_line_with_accelerates_name():
    script = "torchrun train.py --fsdp full_shard --fsdp_config '{\"offload_params\": true}' --output_dir o\n"
    assert "offload is silently off" in _findings(script, "run.sh")["trainer-fsdp-accelerate-name"][0].message
    parser = transformers.HfArgumentParser(transformers.TrainingArguments)
    (args,) = parser.parse_args_into_dataclasses(
        ["--output_dir", "o", "--use_cpu", "True", "--fsdp", "full_shard", "--fsdp_config", '{"offload_params": true}']
    )
    assert "cpu_offload" not in args.fsdp_plugin_args


@pytest.mark.parametrize(
    "config, stage",
    [
        ("{reshard_after_forward: full_shard}", "construction"),
        ("{version: 1, reshard_after_forward: true}", "Trainer init"),
        ("{version: 1, reshard_after_forward: hybrid_shard}", None),
        ("{cpu_ram_efficient_loading: maybe}", "construction"),
    ],
)
def test_fsdp_version_forms_of_a_value(tmp_path, monkeypatch, config, stage):
    text = BASE + f"fsdp: true\nfsdp_config: {config}\n"
    got = _findings(text).get("trainer-fsdp-invalid-value", [])
    if stage is None:
        assert not got
        from torch.distributed.fsdp import ShardingStrategy

        # what accelerate's FSDP1 plugin looks up (building one needs an accelerator device)
        assert _parse(tmp_path, text).fsdp_plugin_args["reshard_after_forward"].upper() in ShardingStrategy.__members__
        return
    (f,) = got
    assert (f"({stage})" if stage == "Trainer init" else "at construction") in f.message
    if stage == "construction":
        with pytest.raises(ValueError, match="invalid truth value"):
            _parse(tmp_path, text)
    else:
        with pytest.raises(KeyError):
            _trainer(_parse(tmp_path, text), monkeypatch)


ZERO3_TRAINER = """\
import os, sys, warnings
warnings.simplefilter("ignore")
os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT="29541", WORLD_SIZE="1", RANK="0", LOCAL_RANK="0")
import torch, transformers
class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.l = torch.nn.Linear(2, 2)
(args,) = transformers.HfArgumentParser(transformers.TrainingArguments).parse_yaml_file(sys.argv[1])
try:
    transformers.Trainer(model=M(), args=args)
    print("OK")
except ValueError as e:
    print("ValueError", e)
"""


def test_zero3_with_auto_find_batch_size_raises_at_trainer_init(tmp_path):
    import subprocess
    import sys

    pytest.importorskip("deepspeed", reason="the ZeRO-3 case needs DeepSpeed installed")
    (tmp_path / "ds.json").write_text('{"zero_optimization": {"stage": 3}, "train_micro_batch_size_per_gpu": "auto"}')
    text = BASE + f"deepspeed: {tmp_path / 'ds.json'}\nauto_find_batch_size: true\n"
    (tmp_path / "args.yaml").write_text(text)
    (f,) = _findings(text, str(tmp_path / "args.yaml"))["trainer-zero3-auto-batch"]
    assert "at Trainer init" in f.message
    (tmp_path / "run.py").write_text(ZERO3_TRAINER)
    out = subprocess.run(
        [sys.executable, str(tmp_path / "run.py"), str(tmp_path / "args.yaml")],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
        check=False,
    )
    assert "auto_find_batch_size` isn't supported yet with DeepSpeed Zero-3" in out.stdout, out.stderr[-2000:]


def test_activation_checkpointing_wins_over_its_deprecated_alias(tmp_path):
    text = BASE + "gradient_checkpointing: true\nactivation_checkpointing: false\n"
    assert "the new name wins" in _findings(text)["trainer-checkpointing-alias"][0].message
    args = _parse(tmp_path, text)
    assert args.activation_checkpointing is False and args.gradient_checkpointing is False


def test_trl_resolves_its_accelerate_config_preset_to_the_file_accelconf_reads(monkeypatch, tmp_path):
    import subprocess
    import sys

    from tests.oracle.transformers_releases import TRL_CACHE, TRL_RELEASES

    newest = max(TRL_RELEASES, key=lambda v: tuple(int(p) for p in v.split(".")))
    if not TRL_CACHE.installed(newest):
        pytest.skip(f"TRL {newest} is not in the release cache (python tests/oracle/transformers_releases.py --trl)")
    root = str(TRL_CACHE.path_of(newest))
    monkeypatch.syspath_prepend(root)
    from accelconf.trainer.validate import trl_preset

    ours = trl_preset("zero3")
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); from trl.cli.accelerate_config import "
        "resolve_accelerate_config_argument as r; print(r(['--accelerate_config', 'zero3'])[1])"
    )
    theirs = subprocess.run(
        [sys.executable, "-c", code, root], capture_output=True, text=True, check=True, cwd=tmp_path
    )
    assert ours is not None and Path(ours).resolve() == Path(theirs.stdout.strip()).resolve()


TRL_PARSE = """\
import sys, warnings
warnings.simplefilter("ignore")
sys.path.insert(0, sys.argv[1])
from trl import SFTConfig, TrlParser
try:
    (a,) = TrlParser((SFTConfig,)).parse_args_and_config(args=["--config", sys.argv[2]])
    print(repr(a.learning_rate))
except SystemExit as e:
    print("exit", e.code)
"""


@pytest.mark.parametrize("line, answer", [("learning_rate: 5e-5", "5e-05"), ("bf16: auto", "exit 2")])
def test_trl_config_converts_a_number_string_and_refuses_a_non_boolean(tmp_path, line, answer):
    import subprocess
    import sys

    from tests.oracle.transformers_releases import TRL_CACHE, TRL_RELEASES

    newest = max(TRL_RELEASES, key=lambda v: tuple(int(p) for p in v.split(".")))
    if not TRL_CACHE.installed(newest):
        pytest.skip(f"TRL {newest} is not in the release cache (python tests/oracle/transformers_releases.py --trl)")
    text = BASE + line + "\n"
    (f,) = _findings(text)["trainer-wrong-type"]
    assert ("TRL's --config converts it" in f.message) is (answer != "exit 2")
    assert ("TRL's --config refuses it" in f.message) is (answer == "exit 2")
    (tmp_path / "recipe.yaml").write_text(text)
    (tmp_path / "parse.py").write_text(TRL_PARSE)
    out = subprocess.run(
        [sys.executable, str(tmp_path / "parse.py"), str(TRL_CACHE.path_of(newest)), str(tmp_path / "recipe.yaml")],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
        check=False,
    )
    assert out.stdout.strip().splitlines()[-1] == answer, out.stderr[-1500:]


DS_ACCUMULATION = """\
import os, sys, warnings
warnings.simplefilter("ignore")
os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT="29543", WORLD_SIZE="1", RANK="0", LOCAL_RANK="0")
import torch, transformers
class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.l = torch.nn.Linear(2, 2)
(args,) = transformers.HfArgumentParser(transformers.TrainingArguments).parse_args_into_dataclasses(sys.argv[1:])
trainer = transformers.Trainer(model=M(), args=args)
try:  # what deepspeed_init does at the start of train()
    trainer.accelerator.state.deepspeed_plugin.hf_ds_config.trainer_config_finalize(args, trainer.model, 10)
    print("OK")
except ValueError as e:
    print("ValueError", str(e).splitlines()[1])
"""


def test_accumulation_in_the_arguments_and_the_accelerate_deepspeed_config_raises_in_train(tmp_path):
    import subprocess
    import sys

    from accelconf.accelerate import registry
    from accelconf.accelerate.launch import launch_env
    from accelconf.accelerate.model import from_document
    from accelconf.text.document import load_text

    pytest.importorskip("deepspeed", reason="the DeepSpeed case needs DeepSpeed installed")
    config = (
        "distributed_type: DEEPSPEED\ndeepspeed_config:\n  gradient_accumulation_steps: 4\n  zero_stage: 2\n"
        "num_processes: 1\n"
    )
    (tmp_path / "accel.yaml").write_text(config)
    script = "accelerate launch --config_file accel.yaml train.py --gradient_accumulation_steps 8 --output_dir o\n"
    (f,) = _findings(script, str(tmp_path / "run.sh"))["trainer-accumulation-twice"]
    assert f.severity == "error" and "in train()" in f.message
    # what accelerate launch exports for that config (accelconf's launcher model, itself proven against accelerate's)
    launched = launch_env(from_document(load_text(config, "accel.yaml"))).env
    env = {k: v for k, v in launched.items() if k.startswith("ACCELERATE_")}
    assert env[registry.get("deepspeed_config", "gradient_accumulation_steps").env] == "4"
    (tmp_path / "run.py").write_text(DS_ACCUMULATION)
    out = subprocess.run(
        [
            sys.executable,
            str(tmp_path / "run.py"),
            "--gradient_accumulation_steps",
            "8",
            "--output_dir",
            "o",
            "--use_cpu",
            "True",
            "--report_to",
            "none",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
        env={**os.environ, **env},
        check=False,
    )
    assert (
        out.stdout.strip().splitlines()[-1]
        == "ValueError - ds gradient_accumulation_steps=4 vs hf gradient_accumulation_steps=8"
    ), out.stderr[-1500:]


def test_a_yaml_file_as_fsdp_config_raises_at_construction(tmp_path):
    import json

    (tmp_path / "fsdp.yaml").write_text("fsdp_config:\n  fsdp_offload_params: true\n")
    text = BASE + f"fsdp: true\nfsdp_config: {tmp_path / 'fsdp.yaml'}\n"
    (f,) = _findings(text, str(tmp_path / "args.yaml"))["trainer-fsdp-config-file"]
    assert f.severity == "error" and "JSONDecodeError at construction" in f.message
    with pytest.raises(json.JSONDecodeError):
        _parse(tmp_path, text)
