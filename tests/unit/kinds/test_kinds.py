"""The one recogniser of file kinds (:mod:`accelconf.kinds`) and what validate does with each kind:
check it, read it with its format's reader, or name it and check the files it references."""

from __future__ import annotations

import ast
import csv
import json
import re
import shutil
from pathlib import Path

import pytest

from accelconf import api, formats
from accelconf.kinds import LABELS, recognise
from accelconf.kinds.references import in_document, in_script
from accelconf.text.document import load_text
from tests.conftest import CORPUS, corpus_files

TRAINER = CORPUS / "trainer"
# The MANIFEST's folder of each trainer corpus file, and the kinds a file of that folder may be.
FOLDER_KINDS = {
    "args": {"trainer-args"},
    "frameworks": {"llama-factory", "axolotl"},
    "fsdp_config": {"fsdp-config"},
    "python": {"python", "other-python"},
    "refs": {"deepspeed"},
    "scripts": {"launch", "other-launch"},
}
# Trainer corpus files with an error DeepSpeed itself raises: WarmupCosineLR takes
# warmup_min_ratio/warmup_num_steps, and deepspeed.initialize calls it with the file's params as
# keyword arguments, so warmup_min_lr/warmup_max_lr raise TypeError.
# corpus file -> the error rules it truly has under the installed releases, and why
# Files written for transformers 4.x whose fields transformers 5.24 (the installed release, the
# default) no longer has, so HfArgumentParser refuses the file (ValueError) and TrainingArguments(...)
# the call (TypeError): warmup_ratio and logging_dir (gone in 5.15), overwrite_output_dir (5.0),
# evaluation_strategy (4.51), fsdp_transformer_layer_cls_to_wrap (moved into fsdp_config). Each is
# clean under the release it was written for (test_the_recipes_are_clean_under_transformers_4_57).
WRITTEN_FOR_4 = (
    "args/Neelectric__open-r1_olmo__recipes__Qwen__Qwen2.5-7B-Instruct__grpo__grpo_config_v00.12.yaml",
    "args/SmallDoges__small-doge__recipes__doge__Doge-160M-Reason__sft__config_full.yaml",
    "args/huggingface__alignment-handbook__recipes__constitutional-ai__sft__config_grok.yaml",
    "args/huggingface__alignment-handbook__recipes__smollm3__sft__sft.yaml",
    "args/huggingface__alignment-handbook__recipes__starchat2-15b__dpo__config_v0.1.yaml",
    "args/huggingface__alignment-handbook__recipes__zephyr-7b-beta__dpo__config_qlora.yaml",
    "args/huggingface__alignment-handbook__recipes__zephyr-7b-beta__sft__config_full.yaml",
    "args/huggingface__open-r1__recipes__DeepSeek-R1-Distill-Qwen-1.5B__grpo__config_demo.yaml",
    "args/huggingface__open-r1__recipes__OlympicCoder-32B__sft__config_v00.00.yaml",
    "args/huggingface__open-r1__recipes__OpenR1-Distill-7B__sft__config_distill.yaml",
    "args/huggingface__open-r1__recipes__Qwen2.5-Coder-7B-Instruct__grpo__config_codeforces.yaml",
    "args/rhymes-ai__Aria__recipes__config_full.yaml",
    "args/xuanhua__openr1_4x3090__recipes__Qwen2.5-Math-7B__grpo__config_simple_rl.yaml",
    "python/Ryukijano__Gemma-Grook__scripts__gr00t_finetune.py",
    "python/safr-ai-lab__pandora-llm__experiments__train__run_train.py",
    "python/vijayvraman__eur-lex-globalization-model__scripts__train_sft.py",
    "scripts/EvelinYin__Dispider__run_scripts__run_finetune.sh",
    "scripts/FoundationVision__Groma__scripts__vl_finetune.sh",
    "scripts/QwenLM__Qwen__finetune__finetune_ds.sh",
    "scripts/cambrian-mllm__cambrian__scripts__cambrian__finetune_cambrian_13b.sh",
    "scripts/haotian-liu__LLaVA__scripts__v1_5__finetune.sh",
    "scripts/lm-sys__FastChat__scripts__train_vicuna_7b.sh",
    "scripts/lm-sys__llm-decontaminator__finetune.sh",
)
TRUE_ERRORS = {
    **{name: {"trainer-removed-field"} for name in WRITTEN_FOR_4},
    # WarmupCosineLR takes no warmup_min_lr/warmup_max_lr (DeepSpeed raises TypeError)
    "refs/vijayvraman__eur-lex-globalization-model__configs__ds_config_zero3_sft.json": {"ds-optimizer"},
    # --fsdp "_hybrid_shard_zero2 auto_wrap": not an fsdp option (ValueError at construction); also
    # evaluation_strategy and warmup_ratio, as above
    "scripts/Coldog2333__BioMed-LLaMA__pretrain__train_multi_nodes.sh": {
        "trainer-fsdp-option",
        "trainer-removed-field",
    },
}


def _manifest() -> list[dict[str, str]]:
    path = TRAINER / "MANIFEST.tsv"
    if not path.is_file():
        pytest.skip(f"the shared corpus is not at {TRAINER}")
    with path.open(encoding="utf-8") as fh:
        return list(csv.DictReader(fh, delimiter="\t"))


@pytest.mark.parametrize(
    ("path", "text", "kind", "fmt"),
    [
        (
            "c.yaml",
            "compute_environment: LOCAL_MACHINE\ndistributed_type: FSDP\nnum_processes: 2\n",
            "accelerate",
            "yaml",
        ),
        ("ds.json", '{"train_micro_batch_size_per_gpu": 1, "zero_optimization": {"stage": 3}}', "deepspeed", "json"),
        ("launch.env", "ACCELERATE_MIXED_PRECISION=bf16\n", "env", "env"),
        ("", "export ACCELERATE_USE_FSDP=true\nFSDP_VERSION=2\n", "env", "env"),
        (
            "train.sh",
            "#!/bin/bash\nexport NCCL_DEBUG=INFO\naccelerate launch --num_processes 8 train.py\n",
            "launch",
            "cli",
        ),
        ("", "#!/bin/bash\nexport NCCL_DEBUG=INFO\naccelerate launch --num_processes 8 train.py\n", "launch", "cli"),
        ("run.sbatch", "#SBATCH -N 2\nsrun torchrun --nnodes 2 train.py --deepspeed ds.json\n", "other-launch", "cli"),
        ("", "#!/bin/bash\nNCCL_DEBUG=INFO torchrun --nproc_per_node 8 train.py\n", "other-launch", "cli"),
        (
            "train.py",
            "from accelerate import Accelerator\nacc = Accelerator(mixed_precision='bf16')\n",
            "python",
            "kwargs",
        ),
        (
            "train.py",
            "from transformers import TrainingArguments\nargs = TrainingArguments(bf16=True)\n",
            "other-python",
            "kwargs",
        ),
        (
            "sft.yaml",
            "learning_rate: 2.0e-5\nbf16: true\ndeepspeed: ds.json\nper_device_train_batch_size: 4\n",
            "trainer-args",
            "yaml",
        ),
        ("args.json", '{"output_dir": "out", "deepspeed": "ds_z3.json", "bf16": true}', "trainer-args", "json"),
        (
            "cfg.yaml",
            "model:\n  name: x\ntraining:\n  learning_rate: 1e-5\n  num_train_epochs: 3\n",
            "trainer-args",
            "yaml",
        ),
        (
            "lf.yaml",
            "stage: sft\nfinetuning_type: full\ndeepspeed: ds.json\nbf16: true\nlearning_rate: 1.0e-5\n",
            "llama-factory",
            "yaml",
        ),
        (
            "ax.yaml",
            "base_model: m\ndatasets:\n  - path: d\nsequence_len: 4096\nmicro_batch_size: 1\n",
            "axolotl",
            "yaml",
        ),
        (
            "neox.yml",
            '{"pipe-parallel-size": 1, "model-parallel-size": 1, "zero_optimization": {"stage": 1}}',
            "gpt-neox",
            "yaml",
        ),
        (
            "neox.json",
            '{"pipe-parallel-size": 1, "num-layers": 12, "zero_optimization": {"stage": 1}}',
            "gpt-neox",
            "json",
        ),
        (
            "fsdp.json",
            '{"fsdp_transformer_layer_cls_to_wrap": ["LlamaDecoderLayer"], "xla": true}',
            "fsdp-config",
            "json",
        ),
        (
            "config.json",
            '{"pretrained_model_name_or_path": "sd", "train_batch_size": 4, "resolution": 512}',
            "script-args",
            "json",
        ),
        ("compose.yaml", "services:\n  web: {}\n", "unknown", "yaml"),
        # only fields every Trainer release shares: still an arguments file (keys as they are typed)
        ("args.yaml", "output_dir:\n", "trainer-args", "yaml"),
        ("args.json", '{"output_dir": "out"}', "trainer-args", "json"),
        ("args.yaml", "seed: 42\n", "trainer-args", "yaml"),
        # a field transformers 4.46-4.50 had, alone: the fields of some release, not only the newest's
        ("args.yaml", "evaluation_strategy: steps\n", "trainer-args", "yaml"),
        # a key no release has beside it, or a lone field accelerate shares: not an arguments file
        ("x.yaml", "output_dir: out\nname: run\n", "unknown", "yaml"),
        ("x.yaml", "debug: true\n", "unknown", "yaml"),
        # only keys a Trainer fsdp_config reads (activation_checkpointing is also a 5.23 field)
        ("fsdp.json", '{"activation_checkpointing": true, "version": 2}', "fsdp-config", "json"),
        # a field accelerate shares beside one it does not: a Trainer field still
        ("args.yaml", "output_dir: out\ndebug: true\n", "trainer-args", "yaml"),
        # a distributed_type among a script's own keys is neither accelerate's nor a Trainer's
        ("x.yaml", "distributed_type: ddp\nlr: 1\nepochs: 3\nmodel: x\n", "unknown", "yaml"),
    ],
)
def test_the_recogniser_names_each_kind_by_content_and_name(path: str, text: str, kind: str, fmt: str) -> None:
    got = recognise(text, path)
    assert (got.kind, got.format) == (kind, fmt)
    assert got.label == LABELS[kind]


def test_a_python_token_in_a_yaml_comment_does_not_make_it_python() -> None:
    text = "# built with Accelerator(...) in train.py\ndistributed_type: MULTI_GPU\nnum_processes: 2\n"
    assert formats.detect_format(text) == "yaml"
    assert recognise(text).kind == "accelerate"


def test_a_yaml_block_scalar_holding_a_torchrun_line_stays_yaml() -> None:
    assert formats.detect_format("job:\n  script: |\n    torchrun --nproc_per_node 8 train.py\n") == "yaml"


def test_validate_reads_a_llama_factory_yaml_as_trainer_arguments_not_as_an_accelerate_config() -> None:
    text = "stage: sft\nfinetuning_type: full\nbf16: true\nlearning_rate: 1.0e-5\ntemplate: qwen3\ncutoff_len: 2048\n"
    got = api.validate_source(text, "train.yaml")
    assert [(f.rule, f.severity) for f in got] == [("trainer-framework-keys", "info")]
    assert got[0].message.startswith(
        "LLaMA-Factory's own keys (4: `stage`, `finetuning_type`, `template`, `cutoff_len`)"
    )


def test_validate_checks_the_deepspeed_json_a_trainer_yaml_references_against_that_file(
    tmp_path: Path, monkeypatch
) -> None:
    (tmp_path / "configs").mkdir()
    ds = tmp_path / "configs" / "ds.json"
    ds.write_text(
        '{\n  "train_micro_batch_size_per_gpu": 1,\n  "zero_optimization": {"stage": 5}\n}\n', encoding="utf-8"
    )
    args = tmp_path / "configs" / "sft.yaml"
    args.write_text("learning_rate: 1.0e-5\nbf16: true\ndeepspeed: ds.json\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    got = api.validate_config(str(args))
    stage = [f for f in got if f.path]
    assert stage and {f.path for f in stage} == {str(Path("configs") / "ds.json")}
    assert any(f.severity == "error" and f.line == 3 for f in stage)  # the bad stage, at its line in ds.json
    assert [f.rule for f in got if not f.path] == []  # the arguments themselves are fine


def test_a_reference_is_found_relative_to_the_working_directory_when_not_next_to_the_file(
    tmp_path: Path, monkeypatch
) -> None:
    (tmp_path / "examples" / "deepspeed").mkdir(parents=True)
    (tmp_path / "examples" / "deepspeed" / "z3.json").write_text(
        '{"zero_optimization": {"stage": 3}}', encoding="utf-8"
    )
    (tmp_path / "recipes").mkdir()
    args = tmp_path / "recipes" / "sft.yaml"
    args.write_text("stage: sft\nfinetuning_type: full\ndeepspeed: examples/deepspeed/z3.json\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    got = api.validate_config(str(args))
    assert "file-reference" not in {f.rule for f in got}  # found
    assert {f.path for f in got if f.rule.startswith("ds-")} == {str(Path("examples/deepspeed/z3.json"))}


def test_a_missing_reference_is_a_warning_at_the_line_and_column_that_names_it(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    got = api.validate_source("learning_rate: 1.0e-5\nbf16: true\ndeepspeed:   ds_z3.json\n", str(tmp_path / "a.yaml"))
    ref = [f for f in got if f.rule == "file-reference"]
    assert [(f.severity, f.line, f.column) for f in ref] == [("warning", 3, 14)]
    assert "'ds_z3.json'" in ref[0].message and "not found" in ref[0].message


def test_an_unreadable_reference_is_a_warning_not_a_traceback(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "ds.json").write_text('{"zero_optimization": ', encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    got = api.validate_source("learning_rate: 1.0e-5\nbf16: true\ndeepspeed: ds.json\n", "a.yaml")
    assert [(f.rule, f.severity, f.line) for f in got if f.rule == "file-reference"] == [
        ("file-reference", "warning", 3)
    ]


def test_references_that_cannot_be_judged_are_left_alone() -> None:
    doc = load_text("deepspeed: zero3\naccelerate_config: fsdp2\nfsdp_config:\n  version: 2\n", "a.yaml")
    assert in_document(doc) == []
    script = 'torchrun train.py --deepspeed $DS_CONFIG --fsdp_config "${CFG}" --deepspeed --deepspeed_config ds.json\n'
    assert [(r.key, r.value) for r in in_script(script)] == [("deepspeed_config", "ds.json")]


def test_a_launch_script_flag_reference_is_found_across_a_line_continuation() -> None:
    refs = in_script("torchrun train.py \\\n    --deepspeed \\\n    ./scripts/zero3.json\n")
    assert [(r.value, r.line, r.column) for r in refs] == [("./scripts/zero3.json", 3, 5)]


@pytest.mark.parametrize(
    ("name", "text", "rule"),
    [
        ("launch.env", "ACCELERATE_MIXED_PRECISION=fp32\n", "invalid-value"),
        (
            "train.sh",
            "#!/bin/bash\naccelerate launch --fsdp_sharding_strategy HALF_SHARD --use_fsdp train.py\n",
            "invalid-value",
        ),
        (
            "train.py",
            "from accelerate import Accelerator\nacc = Accelerator(mixed_precision='fp32')\n",
            "invalid-value",
        ),
    ],
)
def test_validate_reads_an_env_file_a_launch_script_and_a_python_script_with_their_readers(
    name: str, text: str, rule: str
) -> None:
    got = api.validate_source(text, name)
    assert rule in {f.rule for f in got if f.severity == "error"}
    assert "not-a-mapping" not in {f.rule for f in got}


def test_validate_cli_reads_an_env_file_instead_of_calling_it_a_string(cli, tmp_path: Path) -> None:
    env = tmp_path / "launch.env"
    env.write_text("ACCELERATE_MIXED_PRECISION=fp32\n", encoding="utf-8")
    r = cli("validate", str(env))
    assert r.code == 1 and "invalid-value" in r.out and "not a str" not in r.out


def test_validate_refuses_an_empty_launch_script_as_it_refuses_an_empty_config(cli, tmp_path: Path) -> None:
    (tmp_path / "run.sh").write_text("\n", encoding="utf-8")
    r = cli("validate", str(tmp_path / "run.sh"))
    assert r.code == 2 and "empty document" in (r.out + r.err)


def test_every_trainer_corpus_file_validates_without_a_false_error_or_a_traceback(cli) -> None:
    rows = _manifest()
    files = [str(TRAINER / row["file"]) for row in rows]
    r = cli("validate", "--format", "json", *files)
    assert r.code in (0, 1), r.err
    report = json.loads(r.out)
    wrong = {}
    for entry in report["files"] if isinstance(report, dict) else report:
        rel = str(Path(entry["path"]).relative_to(TRAINER))
        errors = {f["rule"] for f in entry.get("findings", []) if f["severity"] == "error"}
        assert "error" not in entry or not entry["error"], f"{rel}: {entry['error']}"
        if errors - TRUE_ERRORS.get(rel, set()) or (rel in TRUE_ERRORS and not errors):
            wrong[rel] = sorted(errors)
    assert not wrong
    assert len(files) >= 60


def test_the_recipes_are_clean_under_transformers_4_57(cli) -> None:
    """The arguments files refused by 5.24 for removed fields are not false errors: under 4.57, the
    release they were written for, none has an error."""
    files = [str(TRAINER / name) for name in WRITTEN_FOR_4 if name.startswith("args/")]
    r = cli("validate", "--transformers-version", "4.57", "--format", "json", *files)
    report = json.loads(r.out)
    assert [e["path"] for e in report["files"] if any(f["severity"] == "error" for f in e.get("findings", []))] == []
    assert r.code == 0, r.out


def test_every_trainer_corpus_file_is_recognised_as_the_kind_of_its_folder() -> None:
    wrong = {}
    for row in _manifest():
        path = TRAINER / row["file"]
        got = recognise(path.read_text(encoding="utf-8-sig"), str(path)).kind
        if got not in FOLDER_KINDS[row["kind"]]:
            wrong[row["file"]] = got
    assert not wrong


def test_the_accelerate_and_deepspeed_corpora_keep_their_kind() -> None:
    # validate reads "unknown" mappings as accelerate configs, so neither corpus's verdicts move
    for kind, allowed in (("accelerate", {"accelerate", "unknown"}), ("deepspeed", {"deepspeed"})):
        for f in corpus_files(kind):
            if f.suffix in (".yaml", ".yml", ".json"):
                assert recognise(f.read_text(encoding="utf-8-sig"), str(f)).kind in allowed, f.name


def _ref_source(ref: str) -> Path:
    return CORPUS / ref.removeprefix("corpus:") if ref.startswith("corpus:") else TRAINER / ref


def test_the_corpus_references_are_found_and_checked_where_the_repository_has_them(tmp_path: Path, monkeypatch) -> None:
    """Each referencing file laid out as in its repository, the files its MANIFEST row lists at the
    names it gives them: none is reported missing, and each is checked (as validating it alone)."""
    monkeypatch.chdir(tmp_path)
    checked = 0
    for row in _manifest():
        listed = [r for r in row["refs"].split(",") if r and not r.startswith("frameworks/")]
        if not listed:
            continue
        root = tmp_path / row["file"].replace("/", "_")
        src = TRAINER / row["file"]
        dest = root / row["path"]
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(src, dest)
        text = src.read_text(encoding="utf-8")
        refs = in_script(text) if row["kind"] in ("scripts",) else in_document(load_text(text, str(src)))
        values = list(dict.fromkeys(r.value for r in refs))
        assert len(values) == len(listed) or len(listed) == 1, (row["file"], values, listed)
        for value in values:
            ref = next((r for r in listed if Path(_ref_source(r)).name.endswith(Path(value).name)), listed[0])
            (root / value).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(_ref_source(ref), root / value)
        monkeypatch.chdir(root)
        got = api.validate_config(str(row["path"]))
        assert not [f for f in got if f.rule == "file-reference"], row["file"]
        for value in values:
            # a Trainer fsdp_config is named, not checked: nothing is reported against it
            alone = {(f.rule, f.line) for f in api.validate_config(str(root / value)) if f.rule != "file-kind"}
            assert {
                (f.rule, f.line) for f in got if f.path and Path(f.path).resolve() == (root / value).resolve()
            } == alone
            checked += 1
    assert checked >= 10


def test_a_python_script_names_its_deepspeed_json_in_a_keyword_argument() -> None:
    refs = in_script('args = TrainingArguments(\n    output_dir="out",\n    deepspeed="configs/ds_z3.json",\n)\n')
    assert [(r.key, r.value, r.line, r.column) for r in refs] == [("deepspeed", "configs/ds_z3.json", 3, 15)]


@pytest.mark.parametrize(
    "text",
    [
        "stage: sft\nfinetuning_type: full\ndeepspeed: ds.json\nbf16: true\n",
        # an fsdp_config section (an accelerate marker) among Trainer arguments is still not accelerate's
        "fsdp: full_shard auto_wrap\nfsdp_config:\n  version: 2\nlearning_rate: 1.0e-5\nbf16: true\noutput_dir: out\n",
    ],
)
def test_the_editor_leaves_a_training_arguments_file_alone(text: str) -> None:
    from accelconf.assist import document_kind

    assert document_kind("train.yaml", text) is None
    assert recognise(text, "train.yaml").kind in ("llama-factory", "trainer-args")


def test_told_deepspeed_a_json_without_accelerate_keys_is_a_deepspeed_json_whatever_else_it_looks_like() -> None:
    text = '{"output_dir": "out", "learning_rate": 1e-5, "seed": 1, "warmup_steps": 10}'
    assert recognise(text, "x.json").kind == "trainer-args"
    assert recognise(text, "x.json", assume_deepspeed=True).kind == "deepspeed"


def test_python_m_accelerate_launch_is_an_accelerate_launch_line() -> None:
    assert (
        recognise("#!/bin/bash\npython -m accelerate.commands.launch --num_processes 2 train.py\n", "run.sh").kind
        == "launch"
    )


# Functions and literals that decide what a file is, wherever they would be spelled again.
_DETECTOR_NAME = re.compile(r"^_?(is_deepspeed|is_accelerate|looks_like_deepspeed|looks_like_accelerate|detect_kind)")


def test_the_file_kind_is_decided_in_one_place() -> None:
    root = Path(__file__).resolve().parents[3]
    found = []
    for path in [*(root / "accelconf").rglob("*.py"), *(root / "lsp").rglob("*.py")]:
        rel = path.relative_to(root).as_posix()
        if rel.startswith("accelconf/kinds/"):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:  # module functions (a property such as Side.is_deepspeed asks kinds)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and _DETECTOR_NAME.match(node.name):
                found.append(f"{rel}: def {node.name}")
        for node in ast.walk(tree):
            if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
                words = {e.value for e in node.elts if isinstance(e, ast.Constant)}
                if {"zero_optimization", "train_micro_batch_size_per_gpu"} <= words or {
                    "compute_environment",
                    "distributed_type",
                    "fsdp_config",
                } <= words:
                    found.append(f"{rel}:{node.lineno}: a list of marker keys")
    assert not found, "ask accelconf.kinds instead:\n" + "\n".join(found)


def test_a_script_reference_is_placed_on_its_own_line_and_column_and_named_by_its_flag() -> None:
    from accelconf.kinds.references import Reference

    text = "\naccelerate launch --config_file XL_fsdp.yaml \\\n  train.py --deepspeed 'X_zero3.json'\n"
    assert in_script(text) == [
        Reference("config_file", "XL_fsdp.yaml", 2, 33, "accelerate"),
        Reference("deepspeed", "X_zero3.json", 3, 24, "deepspeed"),  # at its opening quote
    ]


def test_locate_looks_beside_the_referrer_then_in_the_working_directory(tmp_path, monkeypatch) -> None:
    from accelconf.kinds.references import locate

    (tmp_path / "work").mkdir()
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "ds.json").write_text("{}")
    (tmp_path / "work" / "here.json").write_text("{}")
    monkeypatch.chdir(tmp_path / "work")
    # beside the referrer, outside the working directory: the full path, not one climbing out with ".."
    assert locate("ds.json", str(tmp_path / "conf" / "run.sh")) == str(tmp_path / "conf" / "ds.json")
    # in the working directory: relative, as written
    assert locate("here.json", str(tmp_path / "conf" / "run.sh")) == "here.json"
    # a buffer with no file name has only the working directory
    (tmp_path / "work" / "<untitled>").mkdir()
    (tmp_path / "work" / "<untitled>" / "only.json").write_text("{}")
    assert locate("only.json", "<untitled>/run.sh") is None
    assert locate("only.json", "") is None
    assert locate(str(tmp_path / "conf" / "ds.json"), "") == str(tmp_path / "conf" / "ds.json")
    assert locate(str(tmp_path / "conf" / "missing.json"), "") is None


def test_a_document_that_is_one_file_name_names_no_file() -> None:
    # no key names it, and list items are not keys either
    assert in_document(load_text("ds.json\n", "x.yaml")) == []
    assert in_document(load_text("deepspeed:\n  - ds.json\n", "x.yaml")) == []
