"""Validation rules, as data: each ``tests/data/validate/NAME.yaml`` comes with ``NAME.expected``,
one line per expected finding: ``RULE[@VERSION] SEVERITY LINE:COL SUGGESTION`` (``-`` for none).
The file must produce exactly those errors and warnings (info findings may come on top)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from accelconf.accelerate import registry
from accelconf.accelerate.validate import did_you_mean, validate_document
from accelconf.text.document import load_file, load_text

DATA = Path(__file__).parents[2] / "data" / "validate"
CASES = sorted(DATA.glob("*.yaml"))


def _expected(path: Path) -> tuple[str | None, list[tuple[str, str, int, int, str | None]]]:
    version = None
    rows = []
    for line in path.with_suffix(".expected").read_text().splitlines():
        if not line.strip():
            continue
        rule, sev, pos, sugg = line.split(" ", 3)
        if "@" in rule:
            rule, version = rule.split("@")
        ln, col = pos.split(":")
        rows.append((rule, sev, int(ln), int(col), None if sugg == "-" else sugg))
    return version, rows


@pytest.mark.parametrize("path", CASES, ids=lambda p: p.stem)
def test_validate_case(path: Path):
    version, expected = _expected(path)
    got = validate_document(load_file(path), accelerate_version=version)
    serious = [(f.rule, f.severity, f.line, f.column) for f in got if f.severity in ("error", "warning")]
    assert sorted(serious) == sorted((r, s, ln, c) for r, s, ln, c, _ in expected), "\n".join(map(str, got))
    for rule, _sev, ln, col, sugg in expected:
        if sugg is not None:
            match = next(f for f in got if (f.rule, f.line, f.column) == (rule, ln, col))
            assert match.suggestion == sugg


def test_every_finding_has_a_position_and_a_known_severity():
    for path in CASES:
        for f in validate_document(load_file(path)):
            assert f.line >= 1 and f.column >= 1 and f.severity in ("error", "warning", "info"), f


def test_version_awareness():
    text = (
        "distributed_type: FSDP\nnum_processes: 2\nfsdp_config:\n  fsdp_version: 2\n"
        "  fsdp_activation_checkpointing_offload: true\n  fsdp_activation_checkpointing: true\n"
    )
    new = validate_document(load_text(text), accelerate_version="1.15.0")
    old = validate_document(load_text(text), accelerate_version="1.14")
    assert not [f for f in new if f.severity != "info"]
    assert {f.rule for f in old} >= {"key-too-new"}
    mp = "distributed_type: MULTI_GPU\nnum_processes: 2\nmixed_precision: no\n"
    assert [
        f.severity for f in validate_document(load_text(mp), accelerate_version="0.33") if f.rule == "yaml-bool-value"
    ] == ["info"]
    assert [
        f.severity for f in validate_document(load_text(mp), accelerate_version="0.34") if f.rule == "yaml-bool-value"
    ] == ["error"]


def test_did_you_mean_is_ranked_and_section_aware():
    assert did_you_mean("fsdp_config", "fsdp_cpu_offload") == "fsdp_offload_params"
    assert did_you_mean("fsdp_config", "fsdp_state_dict_typ") == "fsdp_state_dict_type"
    assert did_you_mean("", "mixed_precison") == "mixed_precision"
    assert did_you_mean("deepspeed_config", "zero_stag") == "zero_stage"
    assert did_you_mean("", "zzzzzz") is None


def test_fixes_are_edits_that_resolve_the_finding():
    from accelconf.accelerate.fmt import apply_edits

    text = (
        "distributed_type: MULTI_GPU\nnum_processes: 2\nmixed_precision: no\nfsdp_config:\n  fsdp_cpu_offload: true\n"
    )
    for f in validate_document(load_text(text)):
        if f.fix and f.severity != "info":
            fixed = apply_edits(text, list(f.fix))
            assert f.rule not in {
                g.rule for g in validate_document(load_text(fixed)) if (g.line, g.column) == (f.line, f.column)
            }


# Hypothesis: any config built from registry values never crashes the validator, and valid
# top-level enum values in canonical spelling never produce an error for their own key.
_enum_settings = [
    s
    for s in registry.SETTINGS
    if s.section == "" and s.type == "enum" and s.choices and not s.deprecated and s.key not in ("compute_environment",)
]


@settings(max_examples=80, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from([s.key for s in registry.SETTINGS if s.section == ""]),
        st.one_of(
            st.none(), st.booleans(), st.integers(-3, 10), st.sampled_from(["no", "NO", "bf16", "all", "x", "0,1"])
        ),
        max_size=8,
    )
)
def test_validator_never_crashes(data):
    import json

    doc = load_text(json.dumps(data), "gen.json")
    for f in validate_document(doc):
        assert f.line >= 1


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(_enum_settings).flatmap(lambda s: st.tuples(st.just(s), st.sampled_from(s.choices))))
def test_canonical_enum_values_are_accepted(pair):
    s, value = pair
    if s.key == "distributed_type":
        text = f"distributed_type: '{value}'\nnum_processes: 2\nnum_machines: 1\n"
    else:
        text = f"distributed_type: 'NO'\n{s.key}: '{value}'\n"
    errors = [f for f in validate_document(load_text(text)) if f.severity == "error" and f.key == s.key]
    assert not errors, errors


# -- verdicts that match accelerate's launcher -------------------------------------------


def _found(text: str, version: str | None = None):
    return validate_document(load_text(text), accelerate_version=version)


NULL_COUNTS = {
    "machines-null": ("distributed_type: MULTI_GPU\nnum_machines: null\nnum_processes: 2\n", ["num_machines"]),
    "machines-null-no": ("distributed_type: 'NO'\nnum_machines: null\n", ["num_machines"]),
    "processes-null-gpu": ("distributed_type: MULTI_GPU\nnum_processes: null\n", ["num_processes"]),
    "processes-null-ds": (
        "distributed_type: DEEPSPEED\nnum_processes: null\ndeepspeed_config:\n  zero_stage: 2\n",
        ["num_processes"],
    ),
    "processes-null-no": ("distributed_type: 'NO'\nnum_processes: null\n", []),  # the simple launcher runs one process
    "cpu-null-no": ("distributed_type: 'NO'\nnum_processes: 1\nuse_cpu: null\n", ["use_cpu"]),
    "cpu-null-cpu": ("distributed_type: MULTI_CPU\nnum_processes: 2\nuse_cpu:\n", ["use_cpu"]),
    "cpu-null-gpu": ("distributed_type: MULTI_GPU\nnum_processes: 2\nuse_cpu: null\n", []),  # torchrun: not exported
}


NODE0 = "machine_rank: 0\nmain_process_ip: 10.0.0.1\nmain_process_port: 29500\n"
DS2 = "deepspeed_config:\n  zero_stage: 2\n"
# name: (text, the keys quoted-count reports at the newest release, at 1.7)
QUOTED_COUNTS = {
    "machines-one": ("distributed_type: MULTI_GPU\nnum_processes: 2\nnum_machines: '1'\n", ["num_machines"]),
    "machines-no": ("distributed_type: 'NO'\nnum_processes: 1\nnum_machines: \"1\"\n", ["num_machines"]),
    "processes-one-machine": ("distributed_type: MULTI_GPU\nnum_processes: '8'\nnum_machines: 1\n", []),
    "processes-fsdp-one": ("distributed_type: FSDP\nnum_processes: '8'\n", []),
    "processes-two-machines": (
        "distributed_type: MULTI_GPU\nnum_processes: '16'\nnum_machines: 2\n" + NODE0,
        ["num_processes"],
    ),
    "processes-ds-two": (
        "distributed_type: DEEPSPEED\nnum_processes: '16'\nnum_machines: 2\n" + NODE0 + DS2,
        ["num_processes"],
    ),
    "processes-ds-filtered": (
        "distributed_type: DEEPSPEED\nnum_processes: '16'\nnum_machines: 2\n"
        + NODE0
        + DS2
        + "  deepspeed_hostfile: /job/hostfile\n  deepspeed_inclusion_filter: host1\n",
        [],
    ),
    "processes-ds-filtered-standard": (
        "distributed_type: DEEPSPEED\nnum_processes: '16'\nnum_machines: 2\n"
        + NODE0
        + DS2
        + "  deepspeed_multinode_launcher: standard\n  deepspeed_exclusion_filter: host1\n",
        ["num_processes"],
    ),
    "processes-no": ("distributed_type: 'NO'\nnum_processes: '1'\n", ["num_processes"]),
    "processes-no-two-machines": (
        "distributed_type: 'NO'\nnum_processes: '2'\nnum_machines: 2\n" + NODE0,
        ["num_processes"],
        [],  # before 1.8 the simple launcher tests num_machines first and never compares the count
    ),
    "processes-cpu": ("distributed_type: MULTI_CPU\nnum_processes: '2'\nuse_cpu: true\n", ["num_processes"]),
    "processes-cpu-gpu-type": ("distributed_type: MULTI_GPU\nnum_processes: '2'\nuse_cpu: true\n", ["num_processes"]),
    "both": (
        "distributed_type: MULTI_GPU\nnum_processes: '16'\nnum_machines: '2'\n" + NODE0,
        ["num_processes", "num_machines"],
    ),
    "port-one-machine": (
        "distributed_type: MULTI_GPU\nnum_processes: 2\nmain_process_port: '29500'\n",
        ["main_process_port"],
    ),
    "port-main-machine": (
        "distributed_type: MULTI_GPU\nnum_processes: 16\nnum_machines: 2\n" + NODE0.replace("29500", "'29500'"),
        ["main_process_port"],
    ),
    "port-other-machine": (
        "distributed_type: MULTI_GPU\nnum_processes: 16\nnum_machines: 2\n"
        + NODE0.replace("29500", "'29500'").replace("rank: 0", "rank: 1"),
        [],
    ),
    "port-simple": ("distributed_type: 'NO'\nnum_processes: 1\nmain_process_port: '29500'\n", []),
    "unquoted": ("distributed_type: MULTI_GPU\nnum_processes: 16\nnum_machines: 2\n" + NODE0, []),
    "words": ("distributed_type: MULTI_GPU\nnum_processes: 'eight'\n", []),  # invalid-type says that
}


@pytest.mark.parametrize("case", sorted(QUOTED_COUNTS))
def test_quoted_counts_that_stop_the_launcher_are_errors(case: str) -> None:
    text, keys, *old = QUOTED_COUNTS[case]
    for version, expected in (("1.15", keys), ("1.7", old[0] if old else keys)):
        found = [f for f in _found(text, version) if f.rule == "quoted-count"]
        assert [(f.key, f.severity) for f in found] == [(k, "error") for k in expected], version
    for f in [f for f in _found(text) if f.rule == "quoted-count"]:
        number = f.suggestion.split(": ")[1]
        assert f.suggestion == f"{f.key}: {number}" and number.isdigit()
        assert f.message == (
            f"`{f.key}: '{number}'` is a string to accelerate (the quotes): accelerate launch raises TypeError "
            + {
                "num_machines": "where it compares the count with 1",
                "main_process_port": "in the main machine's check that the port is free",
            }.get(
                f.key,
                "where it compares the count with 1 to set the CPU threads"
                if "use_cpu" in text
                else "where it divides the count by num_machines"
                if "'NO'" not in text
                else "where it compares the count with 1",
            )
            + "; write the number unquoted"
        )
        # the quick fix unquotes the value in place, and the finding is gone
        [(start, end, new)] = f.fix
        fixed = text[:start] + new + text[end:]
        assert new == number and fixed.count("\n") == text.count("\n")
        assert f.key not in {g.key for g in _found(fixed) if g.rule == "quoted-count"}


def test_quoted_counts_are_judged_in_files_only(tmp_path: Path, cli) -> None:
    """Env vars are strings by nature: the launcher's parser makes them numbers."""
    env = tmp_path / "job.env"
    env.write_text("ACCELERATE_NUM_PROCESSES=16\nACCELERATE_NUM_MACHINES=2\n")
    r = cli("validate", "--format", "json", str(env))
    assert "quoted-count" not in r.out
    # a JSON file is a file: its "2" is a string too
    js = tmp_path / "c.json"
    js.write_text('{"distributed_type": "MULTI_GPU", "num_processes": 2, "num_machines": "1"}\n')
    r = cli("validate", str(js))
    column = js.read_text().index('"1"') + 1
    assert r.code == 1 and f"c.json:1:{column}: error: `num_machines: '1'` is a string to accelerate" in r.out


@pytest.mark.parametrize("command", ["to-env", "to-cli", "to-kwargs"])
@pytest.mark.parametrize("case", ["machines-one", "processes-two-machines", "port-one-machine"])
def test_converters_refuse_quoted_counts_that_stop_the_launcher(command: str, case: str, tmp_path: Path, cli) -> None:
    """What the launch gives does not exist for these files: the converters say why, at the value."""
    text, [key] = QUOTED_COUNTS[case]
    path = tmp_path / "c.yaml"
    path.write_text(text)
    r = cli(command, str(path))
    line = 1 + text.split(f"{key}:")[0].count("\n")
    assert r.code == 2 and r.out == ""
    assert f"c.yaml:{line}:1: accelerate launch would fail: `{key}: '" in r.err and "unquoted" in r.err
    # the same count unquoted converts
    fixed = tmp_path / "fixed.yaml"
    fixed.write_text(text.replace(f"{key}: '", f"{key}: ").replace("'\n", "\n").replace('"1"', "1"))
    assert cli(command, str(fixed)).code == 0


@pytest.mark.parametrize("command", ["to-env", "to-cli", "to-kwargs"])
@pytest.mark.parametrize("case", ["machines-null", "processes-null-gpu"])
def test_converters_refuse_null_counts_with_exit_2(command: str, case: str, tmp_path: Path, cli) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(NULL_COUNTS[case][0])
    r = cli(command, str(path))
    assert r.code == 2 and r.out == ""
    assert "null" in r.err and ":2:1:" in r.err


def test_process_counts_that_do_not_fit_are_warnings_with_the_count_that_fits(tmp_path: Path, cli) -> None:
    odd = "distributed_type: MULTI_GPU\nnum_processes: 12\nnum_machines: 8\nmain_process_ip: 10.0.0.1\n"
    [f] = [f for f in _found(odd) if f.rule == "process-layout"]
    assert (f.severity, f.suggestion) == ("warning", "8")
    ids = "distributed_type: MULTI_GPU\nnum_processes: 2\ngpu_ids: '0,1,2,3'\n"
    [g] = [f for f in _found(ids) if f.rule == "gpu-ids"]
    assert g.severity == "warning" and g.suggestion == "num_processes: 4" and "idle" in g.message
    # check: 8 processes on 2 machines x 8 GPUs leave half the GPUs idle
    path = tmp_path / "c.yaml"
    path.write_text("distributed_type: MULTI_GPU\nnum_processes: 8\nnum_machines: 2\nmain_process_ip: 10.0.0.1\n")
    r = cli("check", "--gpus", "8", "--gpu", "H100", "--format", "json", str(path))
    import json

    found = [f for f in json.loads(r.out)["files"][0]["findings"] if f["rule"] == "env-num-processes"]
    assert [(f["severity"], f["suggestion"]) for f in found] == [("warning", "num_processes: 16")]
    odd_path = tmp_path / "odd.yaml"
    odd_path.write_text(odd)
    r = cli("check", "--gpus", "8", "--gpu", "H100", "--format", "json", str(odd_path))
    sev = {(f["rule"], f["severity"]) for f in json.loads(r.out)["files"][0]["findings"]}
    assert ("process-layout", "warning") in sev and r.code == 0


NO_EFFECT = {
    # key removed in 1.15, with a value no version accepted
    "removed": (
        "distributed_type: FSDP\nnum_processes: 2\nfsdp_config:\n  fsdp_backward_prefetch_policy: NONE\n",
        "removed-key",
    ),
    # a section the distributed_type does not use
    "unused-section": (
        "distributed_type: MULTI_GPU\nnum_processes: 2\nfsdp_config:\n  fsdp_sharding_strategy: HALF_SHARD\n",
        None,
    ),
    # FSDP2 never parses sharding_strategy
    "fsdp2-unread": (
        "distributed_type: FSDP\nnum_processes: 2\nfsdp_config:\n  fsdp_version: 2\n"
        "  fsdp_sharding_strategy: HALF_SHARD\n",
        "fsdp1-key-in-fsdp2",
    ),
    # ignored in a config file: the flag default wins
    "file-ignored": ("distributed_type: MULTI_GPU\nnum_processes: 2\nrdzv_backend: bogus\n", "no-effect"),
}


@pytest.mark.parametrize("case", sorted(NO_EFFECT))
def test_a_key_with_no_effect_gets_one_finding_never_a_value_error(case: str, tmp_path: Path) -> None:
    text, rule = NO_EFFECT[case]
    last = text.strip().splitlines()[-1].strip().split(":")[0]
    got = [f for f in _found(text) if f.key.endswith(last)]
    assert [f.rule for f in got] == ([rule] if rule else []), got  # one finding, about having no effect
    assert not [f for f in _found(text) if f.severity == "error"]
    # the oracle: accelerate launches it and builds its plugins without looking at the value
    from tests.oracle.test_oracle_launch import Oracle

    path = tmp_path / "c.yaml"
    path.write_text(text)
    o = Oracle()
    try:
        ans = o(["--config_file", str(path), "train.py"], plugins=True)
    finally:
        o.close()
    assert "error" not in ans and not any("error" in p for p in ans.get("plugins", {}).values()), ans


SECTION_SHAPES = {
    "deepspeed_config: ds.json": (
        "distributed_type: MULTI_GPU\nnum_processes: 2\ndeepspeed_config: ds.json\n",
        "section-unused",
        "warning",
    ),
    "fsdp_config as a list": (
        "distributed_type: MULTI_GPU\nnum_processes: 2\nfsdp_config: [a, b]\n",
        "section-unused",
        "warning",
    ),
    "fp8_config without fp8": (
        "distributed_type: MULTI_GPU\nnum_processes: 2\nfp8_config: te\n",
        "section-unused",
        "warning",
    ),
    "used deepspeed_config": (
        "distributed_type: DEEPSPEED\nnum_processes: 2\ndeepspeed_config: ds.json\n",
        "invalid-type",
        "error",
    ),
    "used dynamo_config": (
        "distributed_type: MULTI_GPU\nnum_processes: 2\ndynamo_config: inductor\n",
        "invalid-type",
        "error",
    ),
}


@pytest.mark.parametrize("case", sorted(SECTION_SHAPES))
def test_unused_section_written_as_non_mapping_is_a_warning(case: str) -> None:
    text, rule, severity = SECTION_SHAPES[case]
    got = [f for f in _found(text) if f.severity != "info"]
    assert [(f.rule, f.severity) for f in got] == [(rule, severity)], got
    if severity == "warning":
        assert "no effect" in got[0].message and "must be a mapping" in got[0].message


@pytest.mark.parametrize(
    "fmt,text,lines",
    [
        ("yaml", "distributed_type: MULTI_GPU\nnum_processes: 2\nmixed_precision: fp16\nnum_processes: 4\n", (2, 4)),
        ("json", '{"distributed_type": "MULTI_GPU",\n "num_processes": 2,\n "num_processes": 4}\n', (2, 3)),
        (
            "yaml",
            "distributed_type: FSDP\nnum_processes: 2\nfsdp_config:\n  fsdp_version: 2\n  fsdp_version: 1\n",
            (4, 5),
        ),
    ],
)
def test_duplicate_keys_are_errors_naming_both_lines(fmt: str, text: str, lines: tuple[int, int]) -> None:
    [f] = [f for f in validate_document(load_text(text, "<t>", fmt)) if f.rule == "duplicate-key"]
    assert f.severity == "error" and f.line == lines[1]
    assert f"lines {lines[0]} and {lines[1]}" in f.message


def test_key_too_new_is_an_error_only_when_ignoring_it_changes_what_runs() -> None:
    import json

    from tests.conftest import CORPUS
    from tests.conftest import DATA as TESTDATA

    # the registry decides, per setting
    assert registry.get("fsdp_config", "fsdp_version").too_new == "error"  # type: ignore[union-attr]
    assert registry.get("dynamo_config", "dynamo_use_regional_compilation").too_new == "warning"  # type: ignore[union-attr]
    fsdp2 = "distributed_type: FSDP\nnum_processes: 2\nfsdp_config:\n  fsdp_version: 2\n"
    assert [(f.rule, f.severity) for f in _found(fsdp2, "1.2") if f.rule == "key-too-new"] == [("key-too-new", "error")]
    regional = (
        "distributed_type: MULTI_GPU\nnum_processes: 2\ndynamo_config:\n  dynamo_backend: INDUCTOR\n"
        "  dynamo_use_regional_compilation: true\n"
    )
    assert [(f.rule, f.severity) for f in _found(regional, "1.4") if f.rule == "key-too-new"] == [
        ("key-too-new", "warning")
    ]
    for s in registry.SETTINGS:
        assert s.too_new in ("error", "warning"), s.path
    # the oracle (accelerate 1.4.0, recorded): an fsdp_version: 2 file launches FSDP without FSDP_VERSION, i.e. FSDP1
    name = "huggingface__trl__examples__accelerate_configs__fsdp2.yaml"
    recorded = json.loads((TESTDATA / "oracle" / "corpus-1.4.0.json").read_text())[name]
    assert recorded["env"]["ACCELERATE_USE_FSDP"] == "true" and "FSDP_VERSION" not in recorded["env"]
    path = CORPUS / "accelerate" / name
    if path.exists():
        got = validate_document(load_file(path), accelerate_version="1.4")
        assert ("key-too-new", "error") in {(f.rule, f.severity) for f in got if f.key.endswith("fsdp_version")}


# a config in which each section is read, for the key-too-new cases below
_SECTION_BASES = {
    "fsdp_config": "distributed_type: FSDP\nnum_processes: 2\nfsdp_config:\n",
    "megatron_lm_config": "distributed_type: MEGATRON_LM\nnum_processes: 2\nmegatron_lm_config:\n",
    "dynamo_config": "distributed_type: MULTI_GPU\nnum_processes: 2\ndynamo_config:\n  dynamo_backend: INDUCTOR\n",
    "parallelism_config": "distributed_type: FSDP\nnum_processes: 2\nfsdp_config:\n  fsdp_version: 2\n"
    "parallelism_config:\n  parallelism_config_dp_shard_size: 2\n",
}
_RUNS_ANYWAY = [s for s in registry.SETTINGS if s.before_since]


def _other_value(value: object) -> object:
    return (not value) if isinstance(value, bool) else value + 1 if isinstance(value, int) else value + "x"  # type: ignore[operator]


@pytest.mark.parametrize("setting", _RUNS_ANYWAY, ids=lambda s: s.path)
def test_key_too_new_is_info_where_the_value_is_what_the_older_release_runs_anyway(setting: registry.Setting) -> None:
    """Judged per value: the release before `since` ignores the key; written with the value that
    release runs without it, nothing changes (info); any other value gets the setting's severity."""
    older = registry.KNOWN_VERSIONS[registry.KNOWN_VERSIONS.index(setting.since) - 1]  # type: ignore[arg-type]
    base = _SECTION_BASES[setting.section]
    from accelconf.text.scalars import json_scalar

    def severity(value: object) -> list[str]:
        shown = json_scalar(value) if not isinstance(value, str) else value
        got = _found(f"{base}  {setting.key}: {shown}\n", older)
        return [f.severity for f in got if f.rule == "key-too-new" and f.key == setting.path]

    for value in setting.before_since:
        assert severity(value) == ["info"], (setting.path, value)
    if setting.choices is None or len(setting.choices) > 1:
        assert severity(_other_value(setting.before_since[0])) == [setting.too_new], setting.path


def test_fsdp_version_1_before_fsdp2_existed_is_no_error_on_any_release() -> None:
    """accelerate before 1.6 has no fsdp_version and runs FSDP1: `fsdp_version: 1` (TRL's fsdp1.yaml)
    is what runs, `fsdp_version: 2` is not."""
    fsdp1 = "distributed_type: FSDP\nnum_processes: 2\nfsdp_config:\n  fsdp_version: 1\n"
    fsdp2 = fsdp1.replace("fsdp_version: 1", "fsdp_version: 2")
    for version in registry.KNOWN_VERSIONS:
        assert not [f for f in _found(fsdp1, version) if f.severity == "error"], version
        expected = [] if registry.version_in(version, "1.6", None) else ["error"]
        assert [f.severity for f in _found(fsdp2, version) if f.rule == "key-too-new"] == expected, version
    from tests.conftest import CORPUS

    trl = CORPUS / "accelerate" / "huggingface__trl__examples__accelerate_configs__fsdp1.yaml"
    if trl.exists():  # older releases refuse its top-level keys (debug, enable_cpu_affinity) on their own
        for version in registry.KNOWN_VERSIONS[registry.KNOWN_VERSIONS.index("0.29") :]:
            assert not [
                f for f in validate_document(load_file(trl), accelerate_version=version) if f.severity == "error"
            ], version


def test_zero3_without_zero3_save_16bit_model_warns_with_the_key_to_set(tmp_path) -> None:
    """An inline ZeRO-3 deepspeed_config without zero3_save_16bit_model: true saves no consolidated
    weights; with a deepspeed_config_file the JSON's own setting is what counts (checked in it)."""
    head = "distributed_type: DEEPSPEED\nnum_processes: 2\ndeepspeed_config:\n"

    def found(body: str, path: str = "<t>") -> list[tuple[str, str, str]]:
        got = validate_document(load_text(head + body, path))
        return [(f.rule, f.severity, f.key) for f in got if f.rule in ("zero3-save-16bit", "ds-zero3-save")]

    assert found("  zero_stage: 3\n") == [("zero3-save-16bit", "warning", "deepspeed_config.zero_stage")]
    off = [
        f for f in _found(head + "  zero_stage: 3\n  zero3_save_16bit_model: false\n") if f.rule == "zero3-save-16bit"
    ]
    assert [(f.severity, f.key, f.suggestion) for f in off] == [
        ("warning", "deepspeed_config.zero3_save_16bit_model", "zero3_save_16bit_model: true")
    ]
    fixed = off[0].fix[0]
    text = head + "  zero_stage: 3\n  zero3_save_16bit_model: false\n"
    assert found(text[len(head) : fixed[0]] + fixed[2] + text[fixed[1] :]) == []
    assert found("  zero_stage: 3\n  zero3_save_16bit_model: true\n") == found("  zero_stage: 2\n") == []
    (tmp_path / "ds.json").write_text('{"train_micro_batch_size_per_gpu": "auto", "zero_optimization": {"stage": 3}}')
    assert found("  deepspeed_config_file: ds.json\n", str(tmp_path / "c.yaml")) == [
        ("ds-zero3-save", "warning", "zero_optimization.stage")
    ]
