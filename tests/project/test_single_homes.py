"""Facts with one home stay there: release boundaries in accelconf/releases.py (and the registry's
per-setting since/until), truth words and distributed types in the registry, the FSDP version rule
in the releases table."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from accelconf import releases
from accelconf.accelerate import registry
from accelconf.environment import checks, memory

ROOT = Path(__file__).resolve().parents[2]
VERSION = re.compile(r"\d+\.\d+(\.\d+)?([a-z]+\d*)?(\+\w+)?")
# The homes of release numbers: the releases tables and the registry's per-setting facts.
HOMES = {
    "accelconf/releases.py",
    "accelconf/accelerate/registry.py",
    "accelconf/deepspeed/keys.py",
    "accelconf/trainer/releases.py",
}
# Not release boundaries: accelconf's own version, and the release that generated data files were read from.
OWN_VERSION = {
    "accelconf/__init__.py",
    "accelconf/formats/pynames.py",
    "accelconf/sarif.py",  # the SARIF format version it writes
}
# Examples that name the release they are checked against (tests/unit/catalogue/test_catalogue.py runs each), not
# boundaries. An exemption for a file that is gone fails below.
PENDING = {"accelconf/catalogue/accelerate.py", "accelconf/catalogue/deepspeed.py"}


def _sources() -> list[Path]:
    return sorted(p for d in ("accelconf", "lsp") for p in (ROOT / d).rglob("*.py"))


def _version_literals(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [
        f"{node.lineno}: {node.value!r}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and VERSION.fullmatch(node.value)
    ]


def test_no_release_number_outside_the_releases_table_and_the_registry() -> None:
    found = {}
    for path in _sources():
        rel = path.relative_to(ROOT).as_posix()
        if rel in HOMES | OWN_VERSION | PENDING:
            continue
        hits = _version_literals(path)
        if hits:
            found[rel] = hits
    assert not found, f"release numbers outside accelconf/releases.py (add a named entry there): {found}"


def test_the_guard_finds_a_version_literal() -> None:
    assert _version_literals(ROOT / "accelconf/releases.py"), "the scan sees no literal even in the table"


def test_every_exemption_names_a_file_that_exists() -> None:
    missing = [p for p in HOMES - {"accelconf/trainer/releases.py"} | OWN_VERSION | PENDING if not (ROOT / p).is_file()]
    assert not missing, f"exempt files that no longer exist (drop them from the lists): {missing}"


def test_fsdp2_starts_where_the_registry_key_starts() -> None:
    s = registry.get("fsdp_config", "fsdp_version")
    assert s is not None and s.since == releases.since("fsdp2")


def test_fsdp_version_rule_reads_the_key_only_from_its_first_release() -> None:
    assert releases.fsdp_version_runs(2, "1.5") == 1
    assert releases.fsdp_version_runs("2", "1.6.0") == 2
    assert releases.fsdp_version_runs(2, None) == 2
    assert releases.fsdp_version_runs(1, "1.15") == 1


def test_memory_estimates_fsdp1_for_a_release_that_ignores_fsdp_version() -> None:
    data = {"distributed_type": "FSDP", "fsdp_config": {"fsdp_version": 2}}
    assert memory.strategy_of(data, None, "1.5")[0].kind == "fsdp1"
    assert memory.strategy_of(data, None, "1.6")[0].kind == "fsdp2"
    assert memory.strategy_of(data)[0].kind == "fsdp2"


def test_memory_reads_truth_words_as_accelerate_does() -> None:
    for word in registry.TRUE_WORDS:
        assert memory._bool(word, False) is True
    for word in registry.FALSE_WORDS:
        assert memory._bool(word, True) is False


def test_gpu_and_non_gpu_types_split_the_registry_types() -> None:
    known = set(registry.DISTRIBUTED_TYPES)
    assert checks.GPU_TYPES <= known
    assert (checks.GPU_TYPES | checks.NON_GPU_TYPES | {"NO"}) - {"TPU"} == known
    assert not checks.GPU_TYPES & checks.NON_GPU_TYPES


def test_requirements_follow_the_release() -> None:
    assert (
        checks.fsdp2_torch_min("1.6") == "2.5.1"
        and checks.fsdp2_torch_min("1.7") == checks.fsdp2_torch_min(None) == "2.6.0"
    )
    assert checks.fsdp1_torch_min("0.24") == "2.0.1" and checks.fsdp1_torch_min("0.33") == "2.1.0"
    assert releases.minimum("deepspeed-nossh", "1.5") is None and releases.minimum("deepspeed-nossh", "1.6") == "0.14.5"


def test_sharding_facts_have_one_table_for_memory_and_diff() -> None:
    import importlib

    consequences = importlib.import_module("accelconf.diff.consequences")  # the package exports a function of that name
    assert set(registry.SHARDING) == set(registry.SHARDING_STRATEGIES)
    assert memory.SHARDED_GROUP == {name: group for name, (_, group) in registry.SHARDING.items()}
    assert {k: v for k, v in consequences._SHARD_LEVEL.items() if isinstance(k, str)} == {
        n: lv for n, (lv, _) in registry.SHARDING.items()
    }


def test_deepspeed_paths_named_outside_the_key_table_are_keys_of_it() -> None:
    from accelconf.deepspeed.keys import Paths, lookup

    names = {n: v for n, v in vars(Paths).items() if n.isupper()}
    assert names and all(lookup(path) is not None for path in names.values()), names
