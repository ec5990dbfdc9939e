"""Semantic diff: data-directory pairs, the CLI, and properties that must hold for any config.

Each folder of ``tests/data/diff/`` holds ``a.*``, ``b.*`` and ``expected.json``
(``{"version", "exit", "changes": [...], "notes": [substrings], "ignored": [keys]}``).
Run with ``ACCELCONF_UPDATE_EXPECTED=1`` to rewrite the expected files after a deliberate change,
then read the diff of those files before committing them.
"""

from __future__ import annotations

import importlib
import json
import os
from pathlib import Path

import pytest

from accelconf.accelerate import registry
from accelconf.accelerate.model import Config, from_document
from accelconf.text.document import load_text

# By module path: the package may also export a function named ``diff``.
semdiff = importlib.import_module("accelconf.diff")

CASES = Path(__file__).resolve().parents[2] / "data" / "diff"
VERSION = "1.15"


def _case_dirs() -> list[Path]:
    return sorted(p for p in CASES.iterdir() if p.is_dir())


def _one(folder: Path, stem: str) -> Path:
    found = sorted(folder.glob(f"{stem}.*"))
    assert len(found) == 1, f"{folder}: expected one {stem}.* file, found {found}"
    return found[0]


def _record(c: semdiff.Change) -> dict:
    return c.to_json()


@pytest.mark.parametrize("folder", _case_dirs(), ids=lambda p: p.name)
def test_case(folder: Path, cli) -> None:
    a, b = _one(folder, "a"), _one(folder, "b")
    expected_path = folder / "expected.json"
    expected = json.loads(expected_path.read_text()) if expected_path.exists() else {}
    version = expected.get("version", VERSION)
    result = semdiff.diff_files(a, b, version=version)
    got = {
        "version": version,
        "exit": 0 if result.equivalent else 1,
        "changes": [_record(c) for c in result.changes],
        "notes": result.notes,
        "ignored": [c.key for c in result.ignored],
    }
    if os.environ.get("ACCELCONF_UPDATE_EXPECTED"):
        expected_path.write_text(json.dumps(got, indent=2) + "\n")
        expected = got
    assert got["changes"] == expected["changes"]
    assert got["exit"] == expected["exit"]
    assert got["ignored"] == expected["ignored"]
    for note in expected["notes"]:
        assert any(note in n for n in got["notes"]), (note, got["notes"])
    # The CLI agrees with the library: same exit code, same JSON (its six fields at least).
    r = cli("diff", str(a), str(b), "--accelerate-version", version, "--format", "json")
    assert r.code == expected["exit"], r.err
    printed = json.loads(r.out)
    assert [{k: c[k] for k in ("key", "a", "b", "kind", "a_line", "b_line")} for c in printed] == [
        {k: c[k] for k in ("key", "a", "b", "kind", "a_line", "b_line")} for c in expected["changes"]
    ]


def test_at_least_ten_cases() -> None:
    assert len(_case_dirs()) >= 10


# -- specific meanings --------------------------------------------------------------------------


def _cfg(text: str, version: str = VERSION, path: str = "x.yaml") -> Config:
    return from_document(load_text(text, path), version)


def test_fsdp1_fsdp2_sharding_is_one_change_with_both_spellings() -> None:
    r = semdiff.diff_files(CASES / "fsdp1-to-fsdp2" / "a.yaml", CASES / "fsdp1-to-fsdp2" / "b.yaml", version=VERSION)
    sharding = [c for c in r.changes if "sharding" in c.key or "reshard" in c.key]
    assert len(sharding) == 1
    c = sharding[0]
    assert (c.a_key, c.a, c.b_key, c.b) == (
        "fsdp_config.fsdp_sharding_strategy",
        "FULL_SHARD",
        "fsdp_config.fsdp_reshard_after_forward",
        False,
    )
    assert any("less sharding, more memory per GPU" in n for n in r.notes)


def test_corresponding_fsdp_spellings_are_not_a_change() -> None:
    a = _cfg("distributed_type: FSDP\nfsdp_config:\n  fsdp_sharding_strategy: SHARD_GRAD_OP\n")
    b = _cfg(
        "distributed_type: FSDP\nfsdp_config:\n  fsdp_version: 2\n  fsdp_reshard_after_forward: false\n"
        "  fsdp_state_dict_type: FULL_STATE_DICT\n"
    )
    r = semdiff.diff(a, b, version=VERSION)
    assert [c.key for c in r.changes] == ["fsdp_config.fsdp_version"]
    assert "SHARD_GRAD_OP" in r.changes[0].note


def test_hybrid_shard_maps_to_true_but_is_listed() -> None:
    a = _cfg("distributed_type: FSDP\nfsdp_config:\n  fsdp_sharding_strategy: HYBRID_SHARD\n")
    b = _cfg("distributed_type: FSDP\nfsdp_config:\n  fsdp_version: 2\n")
    r = semdiff.diff(a, b, version=VERSION)
    c = next(c for c in r.changes if c.key == "fsdp_config.fsdp_sharding_strategy")
    assert c.kind == "removed" and "to-fsdp2 maps HYBRID_SHARD" in c.note


@pytest.mark.parametrize("case", ["fsdp1-fsdp2-same-sharding", "fsdp1-to-fsdp2"])
def test_an_fsdp1_to_fsdp2_change_counts_the_same_differences_as_env_files_and_as_yaml(tmp_path, case) -> None:
    from accelconf import api

    a, b = CASES / case / "a.yaml", CASES / case / "b.yaml"
    envs = []
    for side in (a, b):
        out, _ = api.convert_text(side.read_text(), "env", fmt="yaml", path=str(side), version=VERSION)
        envs.append(tmp_path / f"{side.stem}.env")
        envs[-1].write_text(out)
    as_yaml = [c.key for c in semdiff.diff_files(a, b, version=VERSION).differences]
    as_env = [c.key for c in semdiff.diff_files(*envs, version=VERSION).differences]
    assert as_env == as_yaml
    # the launcher exports FSDP_ACTIVATION_CHECKPOINTING_OFFLOAD=false under FSDP1 as well
    assert "FSDP_ACTIVATION_CHECKPOINTING_OFFLOAD=false" in envs[0].read_text()


def test_a_key_only_one_fsdp_version_reads_is_a_change_only_away_from_its_default() -> None:
    fsdp1 = _cfg(
        "distributed_type: FSDP\nfsdp_config:\n  fsdp_activation_checkpointing: true\n  fsdp_use_orig_params: true\n"
    )
    for extra, changed in (
        ("  fsdp_activation_checkpointing_offload: false\n", []),
        ("  fsdp_activation_checkpointing_offload: true\n", ["fsdp_config.fsdp_activation_checkpointing_offload"]),
    ):
        fsdp2 = _cfg(
            "distributed_type: FSDP\nfsdp_config:\n  fsdp_version: 2\n  fsdp_activation_checkpointing: true\n"
            "  fsdp_state_dict_type: FULL_STATE_DICT\n" + extra
        )
        r = semdiff.diff(fsdp1, fsdp2, version=VERSION)
        assert [c.key for c in r.differences] == ["fsdp_config.fsdp_version"] + changed
    # an FSDP1-only key away from its default stays a change
    r = semdiff.diff(
        _cfg("distributed_type: FSDP\nfsdp_config:\n  fsdp_use_orig_params: false\n"),
        _cfg("distributed_type: FSDP\nfsdp_config:\n  fsdp_version: 2\n  fsdp_state_dict_type: FULL_STATE_DICT\n"),
        version=VERSION,
    )
    assert [(c.key, c.a, c.kind, c.note) for c in r.differences][1:] == [
        ("fsdp_config.fsdp_use_orig_params", False, "removed", "FSDP2 has no fsdp_use_orig_params")
    ]


def test_fsdp1_ignores_reshard_after_forward() -> None:
    # The wizard writes the FSDP1 strategy under fsdp_reshard_after_forward, which FSDP1 never reads.
    a = _cfg("distributed_type: FSDP\nfsdp_config:\n  fsdp_reshard_after_forward: SHARD_GRAD_OP\n")
    b = _cfg("distributed_type: FSDP\nfsdp_config:\n  fsdp_reshard_after_forward: FULL_SHARD\n")
    r = semdiff.diff(a, b, version=VERSION)
    assert r.equivalent
    assert [c.key for c in r.ignored] == ["fsdp_config.fsdp_reshard_after_forward"]


def test_versioned_launcher_default() -> None:
    # fsdp_use_orig_params: the launch flag default was false until 0.24, true from 0.25.
    a = _cfg("distributed_type: FSDP\nfsdp_config: {fsdp_use_orig_params: true}\n", "0.24")
    b = _cfg("distributed_type: FSDP\nfsdp_config: {}\n", "0.24")
    assert [c.kind for c in semdiff.diff(a, b, version="0.24").changes] == ["removed"]
    assert semdiff.diff(a, b, version="0.25").equivalent


def test_fsdp2_keys_before_accelerate_1_6() -> None:
    # accelerate 1.5 has no fsdp_version: both configs run FSDP1 with the same strategy.
    a = _cfg("distributed_type: FSDP\nfsdp_config:\n  fsdp_sharding_strategy: SHARD_GRAD_OP\n", "1.5")
    b = _cfg(
        "distributed_type: FSDP\nfsdp_config:\n  fsdp_version: 2\n  fsdp_sharding_strategy: SHARD_GRAD_OP\n"
        "  fsdp_reshard_after_forward: false\n",
        "1.5",
    )
    r = semdiff.diff(a, b, version="1.5")
    assert r.equivalent
    assert {c.key for c in r.ignored} == {"fsdp_config.fsdp_version", "fsdp_config.fsdp_reshard_after_forward"}
    assert not semdiff.diff(a, b, version="1.6").equivalent


def test_launcher_not_plugin_defaults() -> None:
    # Through `accelerate launch` an absent fsdp_min_num_params is 1e8 (the plugin alone says 0).
    a = _cfg("distributed_type: FSDP\nfsdp_config: {fsdp_min_num_params: 100000000}\n")
    b = _cfg("distributed_type: FSDP\nfsdp_config: {}\n")
    assert semdiff.diff(a, b, version=VERSION).equivalent
    c = _cfg("distributed_type: FSDP\nfsdp_config: {fsdp_min_num_params: 0}\n")
    assert not semdiff.diff(c, b, version=VERSION).equivalent


def test_num_processes_default_for_no() -> None:
    a = _cfg("distributed_type: 'NO'\nnum_processes: 1\n")
    b = _cfg("distributed_type: 'NO'\n")
    assert semdiff.diff(a, b, version=VERSION).equivalent


def test_section_no_side_uses_has_no_effect() -> None:
    a = _cfg("distributed_type: MULTI_GPU\nfsdp_config: {fsdp_offload_params: true}\n")
    b = _cfg("distributed_type: MULTI_GPU\n")
    r = semdiff.diff(a, b, version=VERSION)
    assert r.equivalent
    (c,) = r.ignored
    assert c.key == "fsdp_config.fsdp_offload_params" and "no effect on either side" in c.note
    # As soon as one side uses the section, the same difference counts.
    fsdp = _cfg("distributed_type: FSDP\n")
    assert [c.key for c in semdiff.diff(a, fsdp, version=VERSION).changes] == [
        "distributed_type",
        "fsdp_config.fsdp_offload_params",
    ]


def test_not_comparable_across_formats() -> None:
    # An env set cannot say num_processes: listed apart, and it does not make the configs differ.
    a = _cfg("distributed_type: MULTI_GPU\nmixed_precision: bf16\nnum_processes: 8\n")
    env = Config(format="env", source="env")
    env.set("distributed_type", "MULTI_GPU", origin="env", where="ACCELERATE_USE_*")
    env.set("mixed_precision", "bf16", origin="env", where="ACCELERATE_MIXED_PRECISION")
    r = semdiff.diff(a, env, version=VERSION)
    assert r.equivalent
    assert [(c.key, c.kind) for c in r.changes] == [("num_processes", "not_comparable")]
    assert "B (env) cannot express" in r.changes[0].note
    back = semdiff.diff(env, a, version=VERSION)
    assert [c.mirrored() for c in back.changes] == r.changes


def test_mirroring_swaps_the_side_a_note_names() -> None:
    # The side a note names is data (SideRef), so mirroring a change names the other side.
    a = _cfg("distributed_type: MULTI_GPU\nnum_processes: 8\n")
    env = Config(format="env", source="env")
    env.set("distributed_type", "MULTI_GPU", origin="env", where="ACCELERATE_USE_*")
    change = semdiff.diff(a, env, version=VERSION).changes[0]
    assert change.remark.parts == (semdiff.SideRef.B, " (env) cannot express this setting")
    assert change.mirrored().note == "A (env) cannot express this setting"
    assert change.mirrored().mirrored() == change
    both = semdiff.Change(
        "--x",
        1,
        None,
        "not_comparable",
        remark=semdiff.Note.of(semdiff.SideRef.A, " (cli) has it; ", semdiff.SideRef.B, " (yaml) cannot express it"),
    )
    assert both.note == "A (cli) has it; B (yaml) cannot express it"
    assert both.mirrored().note == "B (cli) has it; A (yaml) cannot express it"


@pytest.mark.parametrize(
    "text",
    [
        "launch flag --lora_B (no config-file key)",  # a name ending in B before " ("
        "BATCH (x) and AMP (y): only AMP; DATA (z) holds 80GB (per GPU), only BATCH",
    ],
)
def test_mirroring_leaves_ordinary_words_alone(text: str) -> None:
    # The old text swap turned "DATA (" into "DATB (", "80GB (" into "80GA (" and "only AMP" into "only BMP".
    change = semdiff.Change("k", 1, 2, "changed", remark=semdiff.Note.of(text))
    assert change.mirrored().note == text
    named = change.noted(semdiff.Note.of(semdiff.SideRef.A, " (env) cannot express it"))
    assert named.mirrored().note == f"{text}; B (env) cannot express it"


def test_ignore_option_patterns() -> None:
    a = _cfg("distributed_type: FSDP\nmixed_precision: bf16\nfsdp_config: {fsdp_offload_params: true}\n")
    b = _cfg("distributed_type: FSDP\nmixed_precision: fp16\n")
    assert len(semdiff.diff(a, b, version=VERSION).changes) == 2
    assert [c.key for c in semdiff.diff(a, b, version=VERSION, ignore=["fsdp_config"]).changes] == ["mixed_precision"]
    assert [c.key for c in semdiff.diff(a, b, version=VERSION, ignore=["mixed_precision", "*offload*"]).changes] == []


def test_deepspeed_auto_is_its_own_value() -> None:
    a = load_text('{"gradient_accumulation_steps": "auto", "zero_optimization": {"stage": 2}}', "a.json")
    b = load_text('{"gradient_accumulation_steps": 1, "zero_optimization": {"stage": 2}}', "b.json")
    c = load_text('{"zero_optimization": {"stage": 2}}', "c.json")
    (ch,) = semdiff.diff_deepspeed(a, b).changes
    assert (ch.key, ch.a, ch.b, ch.kind) == ("gradient_accumulation_steps", "auto", 1, "changed")
    (ch,) = semdiff.diff_deepspeed(a, c).changes
    assert ch.kind == "removed"
    # An explicit DeepSpeed default and an absent key are the same; so are the stage3_ aliases.
    d = load_text(
        '{"zero_optimization": {"stage": 2, "contiguous_gradients": true, "prefetch_bucket_size": 7},'
        ' "bfloat16": {"enabled": false}}',
        "d.json",
    )
    e = load_text('{"zero_optimization": {"stage": 2, "stage3_prefetch_bucket_size": 7}}', "e.json")
    assert semdiff.diff_deepspeed(d, e).equivalent


def test_yaml_against_deepspeed_json_either_order() -> None:
    a, b = CASES / "yaml-vs-deepspeed-json" / "a.yaml", CASES / "yaml-vs-deepspeed-json" / "b.json"
    ab = semdiff.diff_files(a, b, version=VERSION)
    ba = semdiff.diff_files(b, a, version=VERSION)
    assert ab.mode == ba.mode == "accelerate-deepspeed"
    assert [c.mirrored() for c in ba.changes] == ab.changes
    assert {c.key for c in ab.changes} <= semdiff.SHARED_WITH_DEEPSPEED | {
        p for p in (f"deepspeed_config.{s.key}" for s in registry.settings_in("deepspeed_config"))
    }


# -- CLI ----------------------------------------------------------------------------------------


def test_cli_text_groups_and_locations(cli) -> None:
    a, b = CASES / "fsdp1-to-fsdp2" / "a.yaml", CASES / "fsdp1-to-fsdp2" / "b.yaml"
    r = cli("diff", str(a), str(b), "--accelerate-version", VERSION)
    assert r.code == 1
    assert "fsdp_config\n" in r.out
    assert f"fsdp_sharding_strategy: FULL_SHARD ({a}:6)  ->  fsdp_reshard_after_forward: false ({b}:6)" in r.out
    assert "\033[" not in r.out  # not a TTY: no color
    colored = cli("diff", str(a), str(b), "--accelerate-version", VERSION, "--color", "always")
    assert "\033[" in colored.out


def test_cli_exit_codes(cli, tmp_path) -> None:
    same = CASES / "legacy-fp16"
    assert cli("diff", str(same / "a.yaml"), str(same / "b.yaml")).code == 0
    bad = tmp_path / "bad.yaml"
    bad.write_text("distributed_type: [unclosed\n")
    r = cli("diff", str(bad), str(same / "b.yaml"))
    assert r.code == 2 and "bad.yaml" in r.err
    assert cli("diff", str(tmp_path / "missing.yaml"), str(same / "b.yaml")).code == 2
    assert cli("diff", str(same / "a.yaml")).code == 2
    for text in ("", "- 1\n- 2\n"):
        (tmp_path / "odd.yaml").write_text(text)
        r = cli("diff", str(tmp_path / "odd.yaml"), str(same / "b.yaml"))
        assert r.code == 2 and "odd.yaml" in r.err


def test_cli_ignore_and_json(cli) -> None:
    folder = CASES / "precision"
    r = cli("diff", str(folder / "a.yaml"), str(folder / "b.yaml"), "--format", "json", "--ignore", "mixed_precision")
    assert r.code == 0 and json.loads(r.out) == []


# -- properties ---------------------------------------------------------------------------------

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_SPECIAL = {"y", "n", "yes", "no", "on", "off", "true", "false", "null", "~", ""}


def _scalar_forms(value: object) -> list[str]:
    """Spellings of one value that PyYAML (YAML 1.1) reads back as the same value."""
    if isinstance(value, bool):
        return ["true", "True", "TRUE", "yes", "on"] if value else ["false", "False", "no", "off"]
    if isinstance(value, int):
        return [str(value)]
    assert isinstance(value, str)
    quoted = [f"'{value}'", f'"{value}"']
    plain_ok = value.lower() not in _SPECIAL and not value[:1].isdigit() and not value.startswith(("-", "*", "&", "!"))
    return ([value] if plain_ok else []) + quoted


_TOP_VALUES = {
    "compute_environment": st.just("LOCAL_MACHINE"),
    "mixed_precision": st.sampled_from(["no", "fp16", "bf16", "FP16", "Bf16"]),
    "num_processes": st.integers(1, 16),
    "num_machines": st.integers(1, 4),
    "machine_rank": st.just(0),
    "gpu_ids": st.sampled_from(["all", "0,1", "0,1,2,3"]),
    "use_cpu": st.booleans(),
    "debug": st.booleans(),
    "main_process_port": st.sampled_from([29500, 29501]),
}
_FSDP_VALUES = {
    "fsdp_version": st.sampled_from([1, 2]),
    "fsdp_sharding_strategy": st.sampled_from(["FULL_SHARD", "SHARD_GRAD_OP", "NO_SHARD", "full_shard", 1, 2, 3, 4]),
    "fsdp_reshard_after_forward": st.booleans(),
    "fsdp_offload_params": st.booleans(),
    "fsdp_auto_wrap_policy": st.sampled_from(["TRANSFORMER_BASED_WRAP", "SIZE_BASED_WRAP", "NO_WRAP"]),
    "fsdp_state_dict_type": st.sampled_from(["FULL_STATE_DICT", "SHARDED_STATE_DICT"]),
    "fsdp_use_orig_params": st.booleans(),
    "fsdp_min_num_params": st.sampled_from([0, 100000000, 2000]),
    "offload_params": st.booleans(),  # unprefixed spelling
}
_DS_VALUES = {
    "zero_stage": st.integers(0, 3),
    "gradient_accumulation_steps": st.integers(1, 8),
    "offload_optimizer_device": st.sampled_from(["none", "cpu"]),
    "zero3_init_flag": st.booleans(),
}


@st.composite
def configs(draw) -> dict:
    data: dict = {"distributed_type": draw(st.sampled_from(["NO", "MULTI_GPU", "FSDP", "DEEPSPEED"]))}
    for key, strat in _TOP_VALUES.items():
        if draw(st.booleans()):
            data[key] = draw(strat)
    if data["distributed_type"] == "FSDP" or draw(st.booleans()):
        sub = {k: draw(s) for k, s in _FSDP_VALUES.items() if draw(st.booleans())}
        if "offload_params" in sub and "fsdp_offload_params" in sub:
            del sub["offload_params"]  # two spellings of one key: the later one would win
        data["fsdp_config"] = sub
    if data["distributed_type"] == "DEEPSPEED":
        data["deepspeed_config"] = {k: draw(s) for k, s in _DS_VALUES.items() if draw(st.booleans())}
    return data


def _emit(data: dict, draw, indent: str = "") -> str:
    """YAML text for ``data`` with a drawn key order, quoting and comments."""
    keys = draw(st.permutations(list(data)))
    lines = []
    if draw(st.booleans()):
        lines.append(f"{indent}# generated")
    for key in keys:
        value = data[key]
        if isinstance(value, dict):
            if not value:
                lines.append(f"{indent}{key}: {{}}")
                continue
            lines.append(f"{indent}{key}:")
            lines.append(_emit(value, draw, indent + "  "))
        else:
            form = draw(st.sampled_from(_scalar_forms(value)))
            comment = "  # note" if draw(st.booleans()) else ""
            lines.append(f"{indent}{key}: {form}{comment}")
    return "\n".join(lines)


_settings = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@_settings
@given(configs(), st.data())
def test_property_reorder_and_requote_is_empty(data: dict, draw) -> None:
    one = _emit(data, draw.draw) + "\n"
    two = _emit(data, draw.draw) + "\n"
    r = semdiff.diff(_cfg(one), _cfg(two), version=VERSION)
    assert r.changes == [], (one, two)
    assert r.ignored == []


@_settings
@given(configs(), configs(), st.data())
def test_property_mirror(x: dict, y: dict, draw) -> None:
    cx, cy = _cfg(_emit(x, draw.draw) + "\n", path="x.yaml"), _cfg(_emit(y, draw.draw) + "\n", path="y.yaml")
    xy = semdiff.diff(cx, cy, version=VERSION)
    yx = semdiff.diff(cy, cx, version=VERSION)
    assert [c.mirrored() for c in yx.changes] == xy.changes
    assert xy.equivalent == yx.equivalent


@_settings
@given(configs(), st.data())
def test_property_fmt_keeps_meaning(data: dict, draw) -> None:
    from accelconf.accelerate import fmt

    text = _emit(data, draw.draw) + "\n"
    formatted = fmt.format_text(text, "x.yaml", VERSION)
    r = semdiff.diff(_cfg(text), _cfg(formatted), version=VERSION)
    assert r.differences == [], (text, formatted)


# -- across formats (needs accelconf.formats) ---------------------------------------------------

_ROUND_TRIP_CASES = (
    "fsdp1-to-fsdp2/a.yaml",
    "fsdp1-to-fsdp2/b.yaml",
    "yaml-vs-deepspeed-json/a.yaml",
    "precision/a.yaml",
    "legacy-sharding-int/a.yaml",
    "unprefixed-keys/a.yaml",
    "batch-size/b.yaml",
    "legacy-fp16/a.yaml",
    "yaml-vs-env/a.yaml",
    "legacy-dynamo-backend/a.yaml",
)


@pytest.mark.parametrize("name", _ROUND_TRIP_CASES)
@pytest.mark.parametrize("fmt", ["env", "cli", "kwargs", "json"])
def test_yaml_and_its_other_forms_mean_the_same(name: str, fmt: str) -> None:
    from accelconf import formats

    path = CASES / name
    cfg = formats.read(path.read_text(), path=str(path), version=VERSION)
    text, _ = formats.write(cfg, fmt, version=VERSION)
    other = formats.read(text, fmt=fmt, path=f"converted.{fmt}", version=VERSION)
    r = semdiff.diff(cfg, other, version=VERSION)
    assert r.differences == [], text
    if fmt in ("env", "kwargs") and "num_processes" in cfg:  # no process count there: listed apart
        assert "num_processes" in {c.key for c in r.not_comparable}
    back = semdiff.diff(other, cfg, version=VERSION)
    assert [c.mirrored() for c in back.changes] == r.changes


@_settings
@given(configs(), st.data())
def test_property_to_env_has_no_changes(data: dict, draw) -> None:
    from accelconf import formats
    from accelconf.errors import AccelconfError

    text = _emit(data, draw.draw) + "\n"
    cfg = formats.read(text, fmt="yaml", path="x.yaml", version=VERSION)
    try:
        env_text, _ = formats.write(cfg, "env", version=VERSION)
    except AccelconfError:  # a config accelerate launch itself refuses has no env form
        hypothesis.assume(False)
        return
    env = formats.read(env_text, fmt="env", path="x.env", version=VERSION)
    r = semdiff.diff(cfg, env, version=VERSION)
    # nothing changed, appeared or disappeared on the way through the environment
    assert r.differences == [], (text, env_text)


def test_launcher_only_flags_are_labelled_as_flags(tmp_path):
    from accelconf.diff import diff_files

    a, b = tmp_path / "a.env", tmp_path / "b.env"
    a.write_text("OMP_NUM_THREADS=4\nACCELERATE_MIXED_PRECISION=bf16\n")
    b.write_text("OMP_NUM_THREADS=8\nACCELERATE_MIXED_PRECISION=bf16\n")
    res = diff_files(str(a), str(b))
    (change,) = res.differences
    assert change.key == "--num_cpu_threads_per_process" and (change.a, change.b) == (4, 8)
    assert "launch flag" in change.note and "refuses" not in change.note


def test_use_cpu_in_a_file_has_no_effect_under_a_torchrun_type() -> None:
    """accelerate launch starts MULTI_GPU through torchrun and exports no ACCELERATE_USE_CPU (the
    oracle, tests/oracle/harness.py, shows it): the written difference is ignored, not a change."""
    a = from_document(load_text("distributed_type: MULTI_GPU\nnum_processes: 2\nuse_cpu: true\n", "a.yaml"), VERSION)
    b = from_document(load_text("distributed_type: MULTI_GPU\nnum_processes: 2\n", "b.yaml"), VERSION)
    r = semdiff.diff(a, b, version=VERSION)
    assert r.changes == [] and [c.key for c in r.ignored] == ["use_cpu"]
    cpu_a = from_document(
        load_text("distributed_type: MULTI_CPU\nnum_processes: 2\nuse_cpu: true\n", "a.yaml"), VERSION
    )
    cpu_b = from_document(load_text("distributed_type: MULTI_CPU\nnum_processes: 2\n", "b.yaml"), VERSION)
    assert [c.key for c in semdiff.diff(cpu_a, cpu_b, version=VERSION).changes] == ["use_cpu"]


def test_single_machine_main_process_ip_defaults_to_the_local_address() -> None:
    a = from_document(load_text("distributed_type: MULTI_CPU\nnum_processes: 2\n", "a.yaml"), VERSION)
    b = from_document(
        load_text("distributed_type: MULTI_CPU\nnum_processes: 2\nmain_process_ip: 127.0.0.1\n", "b.yaml"), VERSION
    )
    assert semdiff.diff(a, b, version=VERSION).changes == []
    c = from_document(
        load_text("distributed_type: MULTI_CPU\nnum_processes: 2\nmain_process_ip: 10.0.0.1\n", "c.yaml"), VERSION
    )
    assert [ch.key for ch in semdiff.diff(a, c, version=VERSION).changes] == ["main_process_ip"]
