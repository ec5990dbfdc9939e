"""Every suggestion accelconf prints, applied, validates clean.

The "cheapest change that fits" of ``check --params/--model`` (:mod:`accelconf.environment.memory`)
is made with :func:`~accelconf.environment.memory.apply_change` on configs of every strategy (a YAML
with its DeepSpeed settings inline, a YAML naming a ``deepspeed_config_file``, a DeepSpeed JSON
itself, DDP, FSDP1, FSDP2, one process), models and GPUs that do not fit, and on every config of the
corpus: the result has no error it did not have, its own estimate fits, and every line the change
does not set is kept byte for byte (comments included). The quick fixes (``Finding.fix``) of validate, fmt and
the language server's code actions are the same edits; applied, the finding they target is gone and
no new error appears.
"""

from __future__ import annotations

import difflib
import json
from pathlib import Path
from typing import Any

import pytest

from accelconf.accelerate import registry
from accelconf.api import check_document
from accelconf.deepspeed import keys as ds_keys
from accelconf.environment import memory, modelsize
from accelconf.environment.targets import target_from_args
from accelconf.errors import InputError
from accelconf.text.document import load_file
from tests.conftest import corpus_files

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "memory"
DS_JSON = {
    "zero_optimization": {"stage": 2},
    "bf16": {"enabled": True},
    "train_micro_batch_size_per_gpu": "auto",
    "gradient_accumulation_steps": "auto",
}
CONFIGS: dict[str, tuple[dict[str, Any], dict[str, Any] | None]] = {
    "ddp-bf16": (
        {"distributed_type": "MULTI_GPU", "mixed_precision": "bf16", "num_machines": 1, "num_processes": 8},
        None,
    ),
    "ddp-fp32": (
        {"distributed_type": "MULTI_GPU", "mixed_precision": "no", "num_machines": 1, "num_processes": 8},
        None,
    ),
    "one-gpu": ({"distributed_type": "NO", "mixed_precision": "bf16"}, None),
    "zero2-inline": (
        {
            "distributed_type": "DEEPSPEED",
            "mixed_precision": "bf16",
            "num_machines": 1,
            "num_processes": 8,
            "deepspeed_config": {"zero_stage": 2, "offload_optimizer_device": "none"},
        },
        None,
    ),
    "zero2-file": (
        {
            "distributed_type": "DEEPSPEED",
            "num_machines": 1,
            "num_processes": 8,
            "deepspeed_config": {"deepspeed_config_file": "ds.json"},
        },
        DS_JSON,
    ),
    "fsdp1": (
        {
            "distributed_type": "FSDP",
            "mixed_precision": "bf16",
            "num_machines": 1,
            "num_processes": 8,
            "fsdp_config": {
                "fsdp_sharding_strategy": "SHARD_GRAD_OP",
                "fsdp_auto_wrap_policy": "TRANSFORMER_BASED_WRAP",
            },
        },
        None,
    ),
    "fsdp2": (
        {
            "distributed_type": "FSDP",
            "mixed_precision": "bf16",
            "num_machines": 1,
            "num_processes": 8,
            "fsdp_config": {
                "fsdp_version": 2,
                "fsdp_reshard_after_forward": False,
                "fsdp_auto_wrap_policy": "TRANSFORMER_BASED_WRAP",
            },
        },
        None,
    ),
}
MACHINES = [("H100-80GB", 8, None), ("A100-40GB", 8, 2000.0), ("V100-32GB", 8, 512.0)]
MODELS = ["8B", "70B", "405B"]


def write(folder: Path, data: dict[str, Any], ds: dict[str, Any] | None) -> Path:
    """The config as a YAML file (a DeepSpeed JSON alone as ds.json), its JSON beside it."""
    folder.mkdir(parents=True, exist_ok=True)
    if ds is not None:
        (folder / "ds.json").write_text(json.dumps(ds, indent=2))
    if memory._standalone_ds_json(data):
        (folder / "ds.json").write_text(json.dumps(data, indent=2))
        return folder / "ds.json"
    path = folder / "c.yaml"
    path.write_text("".join(f"{k}: {json.dumps(v)}\n" for k, v in data.items()))
    return path


def errors(path: Path, env: Any) -> set[tuple[str, str, str]]:
    return {(f.rule, f.key, f.path) for f in check_document(load_file(path), env) if f.severity == "error"}


def suggestions(
    tmp: Path,
) -> list[tuple[str, dict[str, Any], dict[str, Any] | None, Any, Any, float | None, memory.Change]]:
    out = []
    configs = dict(CONFIGS, **{"zero2-json": (DS_JSON, None)})
    for name, (data, ds) in configs.items():
        for gpu, n, host in MACHINES:
            env = target_from_args(
                n,
                gpu,
                torch_version="2.7.1+cu126",
                accelerate_version="1.15.0",
                deepspeed_version="0.17.2",
                transformers_version="4.57.1",
            )
            for params in MODELS:
                path = write(tmp / name, data, ds)
                size = modelsize.from_count(params)
                report, _ = memory.check_memory(load_file(path), env, size, host_ram_gib=host)
                for pair in (report.suggestion, report.without_offload):
                    if pair is not None:
                        out.append((f"{name} {params} on {n}x {gpu}", data, ds, env, size, host, pair[0]))
    return out


def applied(change: memory.Change, before: Path, folder: Path) -> Path:
    """``change`` made by :func:`memory.apply_change` to the file ``before`` (and the ``ds.json``
    beside it, when the change goes there), written into ``folder``; each text keeps every line
    the change does not set. Returns the config's new path."""
    doc = load_file(before)
    ds_path = before.parent / "ds.json"
    ds_doc = load_file(ds_path) if ds_path.exists() and ds_path != before else None
    text, ds_text = memory.apply_change(change, doc, ds_doc)
    folder.mkdir(parents=True, exist_ok=True)
    after = folder / before.name
    after.write_text(text)
    assert not foreign_lines(doc.text, text, change), (before.name, change.words, text)
    if ds_doc is not None:
        (folder / "ds.json").write_text(ds_text if ds_text is not None else ds_doc.text)
        if ds_text is not None:
            assert not foreign_lines(ds_doc.text, ds_text, change), (before.name, change.words, ds_text)
    return after


def foreign_lines(before: str, after: str, change: memory.Change) -> list[str]:
    """The lines of ``before`` that ``after`` does not keep byte for byte and that hold no key the
    change sets (nor a section above one, nor another spelling of one, DeepSpeed's deprecated one
    included). A JSON line that only gains
    the comma before a new entry is kept, and so is a last line that only gains the line break
    before new lines."""
    edits = [(k, v) for group in change.edits for k, v in group if k]
    paths = {k for k, _ in edits} | {p for k, v in edits for p, _ in memory._json_edits(k, v) or ()}
    parts = {part for p in paths for part in p.split(".")}
    sections = {p.rpartition(".")[0] for p in paths}
    a, b = before.splitlines(keepends=True), after.splitlines(keepends=True)
    out = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag not in ("replace", "delete"):
            continue
        for line in a[i1:i2]:
            body = line.rstrip("\r\n")
            if body + "," + line[len(body) :] in b[j1:j2] or (line == body and body + "\n" in b[j1:j2]):
                continue
            key = body.split(":", 1)[0].strip().strip('"')
            spelled = {s.path for sec in sections if (s := registry.lookup(sec, key)[0]) is not None}
            old = ds_keys.lookup(("zero_optimization", key))  # DeepSpeed's deprecated spelling (cpu_offload)
            spelled |= {old.replaced_by} if old is not None and old.replaced_by else set()
            if key not in parts and not spelled & (paths | {p.rsplit(".", 1)[0] for p in paths}):
                out.append(line)
    return out


def test_a_change_keeps_comments_and_every_line_it_does_not_set(tmp_path: Path) -> None:
    """A config written by hand, with comments and an unprefixed FSDP key: the suggestion sets the
    key where it is written, adds the rest, and nothing else moves."""
    before = tmp_path / "c.yaml"
    before.write_text(
        "# an FSDP config, commented\n"
        "distributed_type: FSDP   # sharded\n"
        "mixed_precision: bf16\n"
        "num_processes: 8\n"
        "fsdp_config:\n"
        "  sharding_strategy: NO_SHARD  # the unprefixed spelling\n"
        "# the end\n"
    )
    env = target_from_args(8, "H100-80GB", accelerate_version="1.15.0")
    report, _ = memory.check_memory(load_file(before), env, modelsize.from_count("13B"), host_ram_gib=2000)
    assert report.suggestion is not None
    assert "fsdp_sharding_strategy: SHARD_GRAD_OP" in report.suggestion[0].words, report.suggestion[0].words
    after = applied(report.suggestion[0], before, tmp_path / "after")
    text = after.read_text()
    assert text.startswith("# an FSDP config, commented\ndistributed_type: FSDP   # sharded\n"), text
    assert "  sharding_strategy: SHARD_GRAD_OP # the unprefixed spelling\n" in text and text.endswith("# the end\n")
    # (the spaces before its comment absorb the longer value, as fmt keeps comments aligned)
    assert "fsdp_sharding_strategy" not in text  # set at the spelling the file uses, never written twice
    assert not errors(after, env)


@pytest.mark.parametrize("model", ["8B", "70B"])
def test_every_suggestion_for_the_corpus_configs_applied_validates_clean(model: str, tmp_path: Path) -> None:
    """Every corpus config (accelerate YAML, DeepSpeed JSON) that does not fit on the machine gets a
    change; made, it adds no error, its lines are kept but those it sets, and its estimate fits."""
    files = corpus_files("accelerate") + corpus_files("deepspeed")
    if not files:
        pytest.skip("the shared corpus is not there")
    env = target_from_args(
        8, "A100-40GB", torch_version="2.7.1+cu126", accelerate_version="1.15.0", deepspeed_version="0.17.2"
    )
    size = modelsize.from_count(model)
    made = 0
    for i, path in enumerate(files):
        try:
            doc = load_file(path)
        except InputError:
            continue  # a template with placeholders, not JSON: validate reports it
        if not isinstance(doc.data, dict) or memory._ds_json_ref(memory.config_of(doc.data)):
            continue  # a deepspeed_config_file the corpus does not hold: its JSON cannot be edited here
        report, _ = memory.check_memory(doc, env, size, host_ram_gib=2000)
        for pair in (report.suggestion, report.without_offload):
            if pair is None:
                continue
            change = pair[0]
            after = applied(change, path, tmp_path / f"{i}-{made}")
            added = errors(after, env) - errors(path, env)
            assert not added, f"{path.name}: {'; '.join(change.words)} adds {added}\n{after.read_text()}"
            machine = env
            if memory._standalone_ds_json(doc.data):
                machine = target_from_args(num_machines=change.layout.nodes, base=env)
            assert memory.check_memory(load_file(after), machine, size, host_ram_gib=2000)[0].verdict == "fits"
            made += 1
    assert made > 20


def test_every_fit_suggestion_applied_validates_clean_and_fits(tmp_path: Path) -> None:
    found = suggestions(tmp_path / "before")
    assert len(found) > 30
    names = {title.split()[0] for title, *_ in found}
    assert {"zero2-file", "zero2-json", "ddp-fp32", "fsdp1", "fsdp2"} <= names
    for i, (title, data, ds, env, size, host, change) in enumerate(found):
        before = write(tmp_path / "before" / title.split()[0], data, ds)
        after = applied(change, before, tmp_path / f"after{i}")
        added = errors(after, env) - errors(before, env)
        assert not added, f"{title}: {'; '.join(change.words)} adds {added}\n{after.read_text()}"
        if memory._standalone_ds_json(data):  # the machines are the launch command's: the target's
            env = target_from_args(num_machines=change.layout.nodes, base=env)
        report, mem = memory.check_memory(load_file(after), env, size, host_ram_gib=host)
        assert report.verdict == "fits", f"{title}: {'; '.join(change.words)} -> {report.verdict}"
        assert not [f for f in mem if f.rule == "mem-gpu"], title


def test_a_config_with_deepspeed_config_file_is_told_the_json_key_and_path(tmp_path: Path) -> None:
    data, ds = CONFIGS["zero2-file"]
    path = write(tmp_path, data, ds)
    env = target_from_args(8, "H100-80GB")
    report, [finding] = memory.check_memory(load_file(path), env, modelsize.from_count("70B"), host_ram_gib=2000)
    assert report.suggestion is not None
    words = report.suggestion[0].words
    assert words[0].startswith(f"in {tmp_path / 'ds.json'}: zero_optimization.stage: 3")
    assert 'zero_optimization.offload_optimizer.device: "cpu"' in words[0]
    assert "offload_optimizer_device" not in (finding.suggestion or "")
    inline = write(tmp_path / "inline", CONFIGS["zero2-inline"][0], None)
    report, _ = memory.check_memory(load_file(inline), env, modelsize.from_count("70B"), host_ram_gib=2000)
    assert report.suggestion is not None and report.suggestion[0].words == (
        "zero_stage: 3",
        "offload_optimizer_device: cpu",
    )


@pytest.mark.parametrize("example", sorted(EXAMPLES.glob("*.yaml")), ids=lambda p: p.stem)
def test_the_readme_memory_examples_suggest_changes_that_validate_clean(example: Path, tmp_path: Path) -> None:
    from accelconf.text.document import load_file as load

    doc = load(example)
    env = target_from_args(
        8, "A100-80GB", torch_version="2.7.1+cu126", accelerate_version="1.15.0", deepspeed_version="0.17.2"
    )
    for model in ("llama-3.1-8b", "llama-3.1-70b"):
        size = modelsize.from_model_dir(str(EXAMPLES / model))
        report, _ = memory.check_memory(doc, env, size, seq_len=4096, micro_batch=1)
        if report.suggestion is None:
            continue
        after = applied(report.suggestion[0], example, tmp_path / model)
        assert not errors(after, env) - errors(example, env), (example.name, model, report.suggestion[0].words)


def test_every_quick_fix_applied_adds_no_error_and_removes_its_finding() -> None:
    """validate's fixes over its cases, the severity table and the corpus (the inputs of the
    reviewed records); fmt and the language server's code actions apply these same edits."""
    from accelconf.accelerate.fmt import apply_edits
    from accelconf.accelerate.validate import validate_document
    from accelconf.text.document import load_text
    from tests.unit.accelerate.test_validate_findings import _inputs

    def errs(found: list[Any]) -> set[tuple[str, str]]:
        return {(f.rule, f.key) for f in found if f.severity == "error"}

    checked = 0
    for title, text, name, version in _inputs():
        doc = load_text(text, name)
        before = validate_document(doc, accelerate_version=version)
        for f in before:
            if not f.fix:
                continue
            after = validate_document(load_text(apply_edits(doc.text, list(f.fix)), name), accelerate_version=version)
            # the repaired key may show the next problem its value had, which the first one hid
            # (`gpu_ids: 0` quoted is one GPU for MULTI_GPU); anywhere else an error is new
            added = {e for e in errs(after) - errs(before) if e[1] != f.key}
            assert not added, f"{title} @ {version}: the fix of {f.rule} at {f.key} adds {added}"
            assert not [g for g in after if (g.rule, g.key, g.message) == (f.rule, f.key, f.message)], (title, f)
            checked += 1
    assert checked > 20


def test_fmt_applied_to_every_input_adds_no_error() -> None:
    from accelconf.accelerate.fmt import format_document
    from accelconf.accelerate.validate import validate_document
    from accelconf.text.document import load_text
    from tests.unit.accelerate.test_validate_findings import _inputs

    def errs(doc: Any, version: str) -> set[tuple[str, str]]:
        # by the key's last part: fmt moves a legacy top-level key into its section (dynamo_backend)
        return {
            (f.rule, f.key.rsplit(".", 1)[-1])
            for f in validate_document(doc, accelerate_version=version)
            if f.severity == "error"
        }

    changed = 0
    for title, text, name, version in _inputs():
        doc = load_text(text, name)
        if not isinstance(doc.data, dict):
            continue
        result = format_document(doc, version)
        if not result.changed:
            continue
        after = load_text(result.text, name)
        # a repaired key may show the next problem its value had (as for the quick fixes)
        fixed = {f.key.rsplit(".", 1)[-1] for f in validate_document(doc, accelerate_version=version) if f.fix}
        added = {e for e in errs(after, version) - errs(doc, version) if e[1] not in fixed}
        assert not added, f"{title} @ {version}: fmt adds {added}\n{result.text}"
        changed += 1
    assert changed > 10


def test_the_migrate_to_fsdp2_action_applied_to_every_fsdp1_config_adds_no_error() -> None:
    """The language server's "Migrate to FSDP2" rewrite (``migrate_text``) over the FSDP1 configs of
    validate's cases and the corpus."""
    from accelconf.accelerate import registry
    from accelconf.accelerate.migrate import migrate_text
    from accelconf.accelerate.validate import validate_document
    from accelconf.errors import InputError
    from accelconf.text.document import load_text
    from tests.unit.accelerate.test_validate_findings import _inputs

    def errs(doc: Any) -> set[str]:
        return {f.rule for f in validate_document(doc, accelerate_version="1.15.0") if f.severity == "error"}

    migrated = 0
    for title, text, name, version in _inputs():
        doc = load_text(text, name)
        data = doc.data
        if (
            version != "1.15.0"
            or not isinstance(data, dict)
            or not isinstance(data.get("fsdp_config"), dict)
            or not registry.section_active("fsdp_config", data)
            or str(data["fsdp_config"].get("fsdp_version", 1)) == "2"
        ):
            continue
        try:
            new, _ = migrate_text(text, name)
        except InputError:
            continue
        added = errs(load_text(new, name)) - errs(doc)
        assert not added, f"{title}: Migrate to FSDP2 adds {added}\n{new}"
        migrated += 1
    assert migrated > 5
