"""What the registry says about accelerate versions: which enum values exist in which release,
which default a flag had, and how a flag spelling finds its setting."""

from __future__ import annotations

import pytest

from accelconf.accelerate import registry

DTYPE = registry.get("", "distributed_type")
DYNAMO = registry.get("dynamo_config", "dynamo_backend")
PRECISION = registry.get("", "mixed_precision")


@pytest.mark.parametrize(
    "value,version,exists",
    [
        ("XLA", "0.27", False),
        ("XLA", "0.28", True),  # added in 0.28 ...
        ("TPU", "0.27", True),
        ("TPU", "0.28", False),  # ... replacing TPU
        ("TP", "1.9", True),
        ("TP", "1.10", False),  # removed, never in the current list
        ("MULTI_NEURON", "1.12", False),
        ("MULTI_NEURON", "1.13", True),
        ("MULTI_GPU", "0.20", True),
        ("MULTI_GPU", "1.15", True),
        (False, "0.20", True),  # not a string: another rule's business
    ],
)
def test_distributed_types_exist_from_their_release(value, version, exists):
    assert registry.enum_exists(DTYPE, value, version) is exists


@pytest.mark.parametrize(
    "value,version,exists",
    [
        ("nvfuser", "0.23", True),
        ("NVFUSER", "0.24", False),  # any case: accelerate upper-cases backends
        ("neuron", "1.14", False),
        ("Neuron", "1.15", True),
        ("ipex", "1.12", True),
        ("ipex", "1.13", False),
        ("inductor", "0.20", True),
        (None, "0.20", True),
    ],
)
def test_dynamo_backends_exist_from_their_release(value, version, exists):
    assert registry.enum_exists(DYNAMO, value, version) is exists


@pytest.mark.parametrize("value", ["XLA", "neuron", "TPU", "nvfuser"])
def test_other_settings_are_not_checked_against_those_tables(value):
    assert registry.enum_exists(PRECISION, value, "0.20") is True
    assert registry.enum_exists(PRECISION, value, "1.15") is True


def test_the_first_older_default_that_covers_the_version_wins():
    s = registry.get("fsdp_config", "fsdp_use_orig_params")._replace(
        older_launcher_defaults=(("0.20", "oldest"), ("0.30", "old")),
        launcher_default="now",
    )
    assert s.launcher_default_for("0.19") == "oldest"
    assert s.launcher_default_for("0.25") == "old"
    assert s.launcher_default_for("1.0") == "now" and s.launcher_default_for(None) == "now"


@pytest.mark.parametrize(
    "flag,key",
    [
        ("--num_processes", "num_processes"),
        ("--num-processes", "num_processes"),
        ("num_processes", "num_processes"),
        ("--cpu", "use_cpu"),
        ("-cpu", "use_cpu"),
        ("--main-process-port", "main_process_port"),
    ],
)
def test_a_flag_is_found_however_it_is_spelled(flag, key):
    s = registry.by_flag(flag)
    assert s is not None and s.key == key


def test_an_unknown_flag_is_none():
    assert registry.by_flag("--no-such-flag") is None
    assert registry.by_flag("cpu-") is None  # only leading dashes are stripped


def test_settings_can_be_listed_by_section():
    fp8 = list(registry.iter_settings(["fp8_config"]))
    assert fp8 and {s.section for s in fp8} == {"fp8_config"}
    both = list(registry.iter_settings(("fp8_config", "dynamo_config")))
    assert {s.section for s in both} == {"fp8_config", "dynamo_config"}
    assert list(registry.iter_settings()) == list(registry.SETTINGS)
    assert list(registry.iter_settings([])) == []
    assert registry.all_keys("dynamo_config") == [s.key for s in registry.SETTINGS if s.section == "dynamo_config"]
    assert "dynamo_backend" in registry.all_keys("dynamo_config") and "num_processes" not in registry.all_keys(
        "dynamo_config"
    )


def test_versions_sort_as_releases_not_as_text():
    assert sorted(["1.10", "0.9", "1.2"], key=registry.version_key) == ["0.9", "1.2", "1.10"]


def test_every_setting_holds_its_fields_in_their_declared_types():
    # the table is written with strings and lists for brevity; Setting promises frozensets and tuples
    for s in registry.SETTINGS:
        assert isinstance(s.env_paths, frozenset), s.key
        for name in ("choices", "legacy_values", "aliases"):
            value = getattr(s, name)
            assert value is None or isinstance(value, tuple), (s.key, name)
        assert s.flag is None or isinstance(s.flag, str)
    assert registry.get("", "num_processes").flag == "num_processes"  # the flag defaults to the key
    assert registry.get("", "compute_environment").flag is None  # unless the table says none


# -- canonical spellings and key lookup (from mutmut survivors, bench/MUTANTS.md) ------------------------


@pytest.mark.parametrize(
    "path, value, canon",
    [
        ("dynamo_config.dynamo_backend", "inductor", "INDUCTOR"),  # a known value: accelerate's own spelling
        (
            "dynamo_config.dynamo_backend",
            "Bogus",
            "BOGUS",
        ),  # unknown: upper-cased, as accelerate does before the lookup
        ("mixed_precision", "BF16", "bf16"),
        ("mixed_precision", "Fp32", "fp32"),  # unknown: lower-cased (all choices are lower case)
        ("distributed_type", "multi_gpu", "MULTI_GPU"),
        ("distributed_type", "bogus", "bogus"),  # not case-insensitive: left as written
        ("deepspeed_config.zero_stage", "3", 3),  # integer enums arrive as strings from env and flags
        ("deepspeed_config.zero_stage", " 2", 2),
        ("deepspeed_config.zero_stage", "x", "x"),
        ("fsdp_config.fsdp_version", "2", 2),  # a legacy value
        ("fsdp_config.fsdp_sharding_strategy", 1, "FULL_SHARD"),  # legacy integer
        ("fsdp_config.fsdp_sharding_strategy", True, True),  # True == 1 but is not the legacy int
        ("fsdp_config.fsdp_sharding_strategy", "shard_grad_op", "SHARD_GRAD_OP"),
    ],
)
def test_canonical_value(path: str, value, canon) -> None:
    section, _, key = path.rpartition(".")
    got = registry.get(section, key).canonical_value(value)
    assert got == canon and type(got) is type(canon)


@pytest.mark.parametrize(
    "section, key, version, how",
    [
        ("fsdp_config", "fsdp_version", None, "canonical"),
        ("fsdp_config", "version", "1.6", "alias"),
        ("dynamo_config", "backend", "1.14", "alias"),
        ("dynamo_config", "backend", None, "alias"),  # no version: every alias counts
        ("dynamo_config", "backend", "1.13", "alias-too-new"),  # this alias is read from 1.14 on
        ("fsdp_config", "nope", None, "unknown"),
    ],
)
def test_lookup_says_how_a_key_was_found(section: str, key: str, version, how: str) -> None:
    setting, found = registry.lookup(section, key, version)
    assert found == how
    assert (setting is None) == (how == "unknown")


@pytest.mark.parametrize(
    "requested, resolved",
    [
        ("1.4.0", "1.4"),
        ("1.4", "1.4"),
        ("9.0", registry.NEWEST),
        ("0.1", registry.OLDEST),
        ("0.20.3", "0.20"),
    ],
)
def test_resolve_version_clamps_to_the_known_releases(requested: str, resolved: str) -> None:
    assert registry.resolve_version(requested) == resolved


def test_resolve_version_without_a_request_is_the_installed_release(monkeypatch) -> None:
    monkeypatch.setattr(registry, "installed_accelerate_version", lambda: "1.7.0")
    assert registry.resolve_version(None) == registry.resolve_version("") == "1.7"
    monkeypatch.setattr(registry, "installed_accelerate_version", lambda: None)
    assert registry.resolve_version(None) == registry.NEWEST


def test_table_builder_normalises_collections() -> None:
    """``_s`` turns ``env_paths`` strings into sets and list-valued choices into tuples: a Setting is
    frozen and hashable, and ``"T" in env_paths`` must test membership, not a substring."""
    for s in registry.SETTINGS:
        hash(s)
        assert isinstance(s.env_paths, frozenset), s.path
        for name in ("choices", "legacy_values", "aliases"):
            assert getattr(s, name) is None or isinstance(getattr(s, name), tuple), (s.path, name)
    made = registry._s(
        "x", "k", "enum", "doc", env_paths="TS", choices=["a", "b"], legacy_values=[("A", "a")], aliases=["kk"]
    )
    assert made.env_paths == frozenset("TS") and made.flag == "k"
    assert (made.choices, made.legacy_values, made.aliases) == (("a", "b"), (("A", "a"),), ("kk",))
    assert registry._s("x", "k", "str", "doc", flag=None).flag is None


@pytest.mark.parametrize(
    "version, since, until, inside",
    [
        (None, None, None, True),
        (None, "1.6", None, True),
        (None, None, "1.10", False),  # no version: the newest
        ("1.6.0", "1.6", None, True),
        ("1.5.2", "1.6", None, False),
        ("1.10.0.dev0", None, "1.10", False),
        ("1.9.1", None, "1.10", True),
    ],
)
def test_version_in(version, since, until, inside) -> None:
    assert registry.version_in(version, since, until) is inside


@pytest.mark.parametrize(
    "section, data, active",
    [
        ("fp8_config", {"mixed_precision": "fp8"}, True),
        ("fp8_config", {"mixed_precision": "FP8"}, True),  # accelerate lower-cases the precision
        ("fp8_config", {"mixed_precision": "bf16"}, False),
        ("fsdp_config", {"distributed_type": "FSDP"}, True),
        ("fsdp_config", {"distributed_type": "fsdp"}, False),  # the paradigm is compared exactly
        ("fsdp_config", ["not", "a", "mapping"], False),
        ("no_such_section", {}, True),
    ],
)
def test_section_active(section: str, data, active: bool) -> None:
    assert registry.section_active(section, data) is active


# Plain releases are compared without packaging (its import costs start-up time); everything else
# is packaging's. Both must agree with packaging's Version on every spelling.
VERSION_SPELLINGS = [
    "1.15", "1.15.0", "1.15.0.0", "1.6", "1.10", "0.9", "1", "1.0", "01.05", "0.34.2", "2", "2.0.0",
    "1.15.0.dev0", "1.15rc1", "1.15.0+cu121", " 1.15 ", "v1.15", "1!0.1", "1.15.post1", "1.6a0",
    "not a version", "1.15.x", "", "١.٢",
]  # fmt: skip


@pytest.mark.parametrize("a", VERSION_SPELLINGS)
def test_minor_release_is_packagings_major_and_minor(a: str) -> None:
    from packaging.version import InvalidVersion, Version

    from accelconf import versions

    try:
        parsed = Version(a)
    except InvalidVersion:
        assert versions.minor(a) is None and registry.normalize_version(a) is None
    else:
        assert versions.minor(a) == registry.normalize_version(a) == f"{parsed.major}.{parsed.minor}"


@pytest.mark.parametrize("a", VERSION_SPELLINGS)
def test_version_comparison_is_packagings(a: str) -> None:
    from packaging.version import InvalidVersion, Version

    from accelconf import versions

    for b in VERSION_SPELLINGS:
        try:
            va, vb = Version(a), Version(b)
        except InvalidVersion:
            with pytest.raises(InvalidVersion):
                versions.compare(a, b)
            continue
        assert versions.compare(a, b) == (va > vb) - (va < vb), (a, b)
