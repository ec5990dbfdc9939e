"""Every accelerate minor release 0.20-1.15 against its own launcher (tests/oracle/matrix.py).

Each release is installed beside the others (tests/oracle/releases.py, cached under the venv) and its
``launch_command`` runs as a pure function in its own process (tests/oracle/harness.py) over the corpus
and generated configs. For every release: ``to-env --accelerate-version V`` equals that release's
environment for every config it launches, and ``validate`` reports an error exactly where it refuses
(the training-time errors validate adds on purpose are listed in ``matrix.ON_PURPOSE``); the flags
``to-cli --accelerate-version V`` writes, launched by that release without the file, and the files
``fmt`` and ``migrate --to fsdp2`` write for it launch to the same env (named exceptions:
``matrix.CLI_LOSSY``, ``matrix.FMT_RESPELLED``, migrate's own notes). The table of launcher
differences (``accelconf.accelerate.launch.CHANGES``) is checked against each release's source.

In CI (``CI=true``) the releases are installed when missing; elsewhere the module runs only when
they are all cached (``python tests/oracle/releases.py`` installs them, ``make versions`` too).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from accelconf import formats
from accelconf import releases as release_table
from accelconf.accelerate import registry
from accelconf.accelerate.launch import CHANGES, changed
from tests.oracle import matrix, releases

ROOT = Path(__file__).resolve().parents[2]
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")
MISSING = [m for m in releases.RELEASES if not releases.installed(m)]

pytestmark = pytest.mark.oracle


def test_every_known_version_has_a_pinned_release() -> None:
    assert list(releases.RELEASES) == list(registry.KNOWN_VERSIONS)
    for minor, version in releases.RELEASES.items():
        assert registry.normalize_version(version) == minor


@pytest.fixture(scope="session")
def installed_releases() -> list[str]:
    if MISSING and not IN_CI:
        pytest.skip(
            f"{len(MISSING)} of {len(releases.RELEASES)} accelerate releases are not cached under the venv: "
            "run `python tests/oracle/releases.py` (CI installs them)"
        )
    for minor in MISSING:
        releases.ensure(minor)
    return list(releases.RELEASES)


@pytest.mark.parametrize("name", sorted(release_table.CHANGES))
def test_release_change_matches_each_release_source(name: str, installed_releases: list[str]) -> None:
    """releases.CHANGES[name] (launcher and rule boundaries alike) holds in exactly the releases whose
    own source has its marker."""
    c = release_table.CHANGES[name]
    wrong = _disagreeing(installed_releases, c.file, c.marker, lambda minor: release_table.has(minor, name))
    assert not wrong, f"{name}: the range [{c.since}, {c.until}) disagrees with the source of {wrong}"


@pytest.mark.parametrize("name", sorted(release_table.REQUIREMENTS))
def test_release_requirement_matches_each_release_source(name: str, installed_releases: list[str]) -> None:
    """Each step of releases.REQUIREMENTS[name] is stated by exactly the releases of its range."""
    for r in release_table.REQUIREMENTS[name]:
        wrong = _disagreeing(
            installed_releases, r.file, r.marker, lambda minor, r=r: release_table.requirement(name, minor) == r
        )
        assert not wrong, (
            f"{name} >= {r.version}: the range [{r.since}, {r.until}) disagrees with the source of {wrong}"
        )


def test_launcher_changes_are_the_release_table_launcher_part() -> None:
    assert CHANGES is release_table.LAUNCHER and all(
        changed(m, n) == release_table.has(m, n) for n in CHANGES for m in releases.RELEASES
    )


def _disagreeing(installed: list[str], file: str, marker: str, expected: Callable[[str], bool]) -> list[str]:
    wrong = []
    for minor in installed:
        source = releases.path_of(minor) / "accelerate" / file
        has = re.search(marker, source.read_text(encoding="utf-8")) is not None if source.is_file() else False
        if has != expected(minor):
            wrong.append(f"{minor} ({'has' if has else 'lacks'} the marker)")
    return wrong


@pytest.fixture(scope="session")
def results(installed_releases: list[str]) -> dict[str, matrix.ReleaseResult]:
    """The whole matrix, two releases at a time (one process per release); session-scoped so that a
    random test order computes it once."""
    if not matrix.corpus_configs():
        pytest.skip(f"no corpus at {matrix.CORPUS}: the matrix would only see generated configs")
    return {r.minor: r for r in matrix.run_matrix(installed_releases, jobs=2)}


@pytest.mark.parametrize("minor", list(releases.RELEASES))
def test_release_to_env_and_verdicts(minor: str, results: dict[str, matrix.ReleaseResult]) -> None:
    r = results[minor]
    assert r.launched > 0, f"accelerate {minor} launched nothing: the harness is broken"
    bad = [f"{c.name}: {c.detail}" for c in r.cases if c.detail]
    assert not bad, f"accelerate {r.version}: " + "\n".join(bad)
    assert r.env_exact == r.launched
    assert all(c.verdict_agrees for c in r.cases)


def test_versions_md_is_current(results: dict[str, matrix.ReleaseResult]) -> None:
    """bench/VERSIONS.md (make versions) holds the rows this run computes."""
    rows = [ln for ln in matrix.table(list(results.values()), 0, 2).splitlines() if ln.startswith("| ")]
    committed = [
        ln for ln in (ROOT / "bench" / "VERSIONS.md").read_text(encoding="utf-8").splitlines() if ln.startswith("| ")
    ]
    assert committed == rows, "bench/VERSIONS.md is stale: run `make versions`"


@pytest.mark.parametrize("minor", list(releases.RELEASES))
def test_release_to_cli_fmt_and_migrate_launch_the_same(minor: str, results: dict[str, matrix.ReleaseResult]) -> None:
    """The flags to-cli writes for that release, and the files fmt and migrate write for it, launch
    (by that release, the flags without any config file) to the file's mode and env; every variable
    excepted has its named reason (matrix.CLI_LOSSY, matrix.FMT_RESPELLED, one of migrate's notes)."""
    r = results[minor]
    bad = [f"{c.name}: {c.rewrite_detail}" for c in r.cases if c.rewrite_detail]
    assert not bad, f"accelerate {r.version}: " + "\n".join(bad)
    cli, cli_n = r.count("cli_same")
    assert cli == cli_n and cli_n >= r.launched - 10, "to-cli is checked on (nearly) every config launched locally"
    unnamed = sorted({v for c in r.cases for v in c.cli_lossy if matrix.cli_lossy_reason(v) is None})
    assert not unnamed, f"flags differ in {unnamed} without a reason in matrix.CLI_LOSSY"
    fmt, fmt_n = r.count("fmt_same")
    assert fmt == fmt_n > 0
    assert all(set(c.fmt_respelled) <= set(matrix.FMT_RESPELLED) for c in r.cases)
    mig, mig_n = r.count("migrate_same")
    assert mig == mig_n
    with_fsdp = [
        c for c in r.cases if c.launched and any(n.startswith(("removed", "fsdp_version: 2")) for n in c.migrate_notes)
    ]
    if registry.version_in(minor, "1.6", None):
        assert mig_n == len(with_fsdp) > 0, "migrate's output is launched for every FSDP1 config it changes"
    else:  # no FSDP2 before 1.6: migrate says so and changes nothing
        assert mig_n == 0
        assert any("has no FSDP2" in n for c in r.cases for n in c.migrate_notes)


PRECISION_BOOLEANS = {
    "no.yaml": "distributed_type: MULTI_GPU\nnum_processes: 2\nmixed_precision: no\n",
    "yes.yaml": "distributed_type: MULTI_GPU\nnum_processes: 2\nmixed_precision: yes\n",
    "false.json": '{"distributed_type": "MULTI_GPU", "num_processes": 2, "mixed_precision": false}',
}


@pytest.mark.parametrize("minor", ["0.20", "0.33", "0.34", "1.15"])
def test_a_boolean_mixed_precision_launches_as_the_release_reads_it(minor: str, tmp_path: Path) -> None:
    """Before 0.34 loading a YAML file turns `false` into 'no'; true, a JSON false and every boolean
    from 0.34 on reach .lower() and the launch fails. launch and validate's severity both follow."""
    from accelconf.accelerate.launch import LaunchError, launch_env
    from accelconf.accelerate.validate import validate_document
    from accelconf.text.document import load_file

    if not releases.installed(minor):
        if not IN_CI:
            pytest.skip(
                f"accelerate {minor} is not cached under the venv: run "
                "`python tests/oracle/releases.py` (CI installs it)"
            )
        releases.ensure(minor)
    paths = []
    for name, text in PRECISION_BOOLEANS.items():
        paths.append(tmp_path / name)
        paths[-1].write_text(text, encoding="utf-8")
    _, answers = matrix.run_harness(minor, [{"argv": ["--config_file", str(p), "train.py"]} for p in paths])
    for path, theirs in zip(paths, answers):
        want = (
            ("refused", theirs["error"].split(": ", 1)[1])
            if "error" in theirs
            else theirs["env"]["ACCELERATE_MIXED_PRECISION"]
        )
        cfg = formats.read(path.read_text(encoding="utf-8"), None, str(path), minor)
        try:
            mine: object = launch_env(cfg, version=minor).env["ACCELERATE_MIXED_PRECISION"]
        except LaunchError as exc:
            mine = ("refused", exc.message)
        assert mine == want, (minor, path.name)
        found = [
            f.severity
            for f in validate_document(load_file(path), accelerate_version=minor)
            if f.rule == "yaml-bool-value"
        ]
        assert found == (["error"] if isinstance(want, tuple) else ["info"]), (minor, path.name)


SECTION_ENV_CASES = [
    # parallelism_config's sequence-parallel and cp_backend settings came in 1.12: 1.11 exports none of them
    (
        "1.11",
        "distributed_type: FSDP\nnum_processes: 2\nfsdp_config:\n  fsdp_version: 2\nparallelism_config:\n"
        "  parallelism_config_tp_size: 2\n",
        ("PARALLELISM_CONFIG_", "ACCELERATE_USE_PARALLELISM"),
    ),
    (
        "1.12",
        "distributed_type: FSDP\nnum_processes: 2\nfsdp_config:\n  fsdp_version: 2\nparallelism_config:\n"
        "  parallelism_config_tp_size: 2\n",
        ("PARALLELISM_CONFIG_", "ACCELERATE_USE_PARALLELISM"),
    ),
    # a Megatron-LM degree written as null still reaches the environment (str(None)); an unset optional one does not
    (
        "1.15",
        "distributed_type: MEGATRON_LM\nnum_processes: 2\nmegatron_lm_config:\n  megatron_lm_tp_degree: null\n"
        "  megatron_lm_num_micro_batches: null\n",
        ("MEGATRON_LM_", "ACCELERATE_USE_MEGATRON_LM"),
    ),
]


@pytest.mark.parametrize(
    ("minor", "text", "prefixes"), SECTION_ENV_CASES, ids=lambda v: v if isinstance(v, str) and len(v) < 6 else ""
)
def test_plugin_section_variables_as_the_release_exports_them(
    minor: str, text: str, prefixes: tuple[str, ...], tmp_path: Path
) -> None:
    from accelconf.accelerate.launch import launch_env

    if not releases.installed(minor):
        if not IN_CI:
            pytest.skip(
                f"accelerate {minor} is not cached under the venv: run "
                "`python tests/oracle/releases.py` (CI installs it)"
            )
        releases.ensure(minor)
    path = tmp_path / "c.yaml"
    path.write_text(text, encoding="utf-8")
    _, (theirs,) = matrix.run_harness(minor, [{"argv": ["--config_file", str(path), "train.py"]}])
    want = {k: v for k, v in theirs["env"].items() if k.startswith(prefixes)}
    mine = launch_env(formats.read(text, "yaml", str(path), minor), version=minor).env
    assert want and {k: v for k, v in mine.items() if k.startswith(prefixes)} == want


PARALLEL_TYPES = {
    "MULTI_GPU": "distributed_type: MULTI_GPU\n",
    "FSDP2": "distributed_type: FSDP\nfsdp_config:\n  fsdp_version: 2\n",
    "DEEPSPEED": "distributed_type: DEEPSPEED\ndeepspeed_config:\n  zero_stage: 2\n",
}
PARALLEL_SIZES = ("dp_replicate_size", "dp_shard_size", "tp_size", "cp_size", "sp_size")


def _parallel_configs() -> list[tuple[str, int]]:
    """Every distributed type x every size 1 or 2 (and 3 for tp) x 2 or 4 processes: (YAML text, processes)."""
    out = []
    for _kind, head in PARALLEL_TYPES.items():
        for mask in range(1 << len(PARALLEL_SIZES)):
            sizes = {name: 2 for i, name in enumerate(PARALLEL_SIZES) if mask >> i & 1} or {"tp_size": 3}
            body = "".join(f"  parallelism_config_{name}: {v}\n" for name, v in sizes.items())
            for n in (2, 4):
                out.append((f"{head}num_processes: {n}\nparallelism_config:\n{body}", n))
    return out


@pytest.mark.parametrize("minor", ["1.10", "1.11", "1.12", "1.13", "1.14", "1.15"])
def test_parallelism_findings_are_what_parallelism_config_raises(minor: str, tmp_path: Path) -> None:
    """validate reports a `parallelism` error exactly where the release's own ParallelismConfig raises
    when the Accelerator starts (built from the launch environment, as Accelerator() builds it), and
    says the section has no effect where the launch does not pass it on."""
    from accelconf.accelerate.validate import validate_document
    from accelconf.text.document import load_text

    if not releases.installed(minor):
        if not IN_CI:
            pytest.skip(
                f"accelerate {minor} is not cached under the venv: run "
                "`python tests/oracle/releases.py` (CI installs it)"
            )
        releases.ensure(minor)
    configs = _parallel_configs()
    reqs = []
    for i, (text, n) in enumerate(configs):
        path = tmp_path / f"p{i}.yaml"
        path.write_text(text, encoding="utf-8")
        reqs.append({"argv": ["--config_file", str(path), "train.py"], "parallelism_world": n})
    _, answers = matrix.run_harness(minor, reqs)
    wrong, verdicts = [], set()
    for (text, _), theirs in zip(configs, answers):
        if "error" in theirs:
            continue  # refused at launch: launch-refused, checked by the matrix
        verdict = theirs["parallelism"]
        verdicts.add("raises" if verdict and verdict != "ok" else verdict)
        found = [
            f
            for f in validate_document(load_text(text, "p.yaml"), accelerate_version=minor)
            if f.key == "parallelism_config" and f.rule in ("parallelism", "section-unused")
        ]
        mine = (
            "raises"
            if any(f.severity == "error" for f in found)
            else None
            if any(f.rule == "section-unused" for f in found)
            else "ok"
        )
        if mine != ("raises" if verdict and verdict != "ok" else verdict):
            wrong.append(f"{text!r}: accelerate {verdict!r}, validate {[(f.severity, f.message) for f in found]}")
    assert not wrong, f"accelerate {minor}:\n" + "\n".join(wrong[:8])
    assert {"ok", "raises"} <= verdicts, "the configs reach both verdicts"


def test_boundary_records_are_what_the_releases_do() -> None:
    """tests/data/oracle/boundaries.json (read by the fast launch tests) holds, for every launcher
    difference in CHANGES, what the releases on both sides of its boundaries do: launch each case
    again with its release and compare; every launcher change has its cases on both sides."""
    import json

    from tests.oracle import boundaries

    records = json.loads(boundaries.RECORDS.read_text(encoding="utf-8"))
    assert set(boundaries.CASES) | boundaries.NOT_LAUNCHER == set(CHANGES), "a launcher change without boundary cases"
    wanted = {
        (minor, name, text, tuple(flags))
        for minor, cases in boundaries.requests().items()
        for name, text, flags in cases
    }
    assert {(r["version"], r["change"], r["config"], tuple(r["flags"])) for r in records} == wanted, (
        "record again: python -m tests.oracle.boundaries"
    )
    missing = [m for m in {r["version"] for r in records} if not releases.installed(m)]
    if missing and not IN_CI:
        pytest.skip(
            f"accelerate {', '.join(sorted(missing))} not cached under the venv: run `python tests/oracle/releases.py`"
        )
    wrong = []
    for minor, cases in boundaries.requests().items():
        mine = [r for r in records if r["version"] == minor]
        for record, answer in zip(mine, boundaries.launch(minor, cases)):
            if answer != record["result"]:
                wrong.append(f"{record['change']}@{minor}")
    assert not wrong, f"the releases now answer otherwise: {wrong} (python -m tests.oracle.boundaries records again)"


def _runs_anyway_cases() -> dict[str, list[tuple[str, str, str]]]:
    """release before `since` -> (setting path, config without the key, the same with the key set to
    the value Setting.before_since says that release runs anyway)."""
    from tests.unit.accelerate.test_validate import _SECTION_BASES

    out: dict[str, list[tuple[str, str, str]]] = {}
    for s in registry.SETTINGS:
        for value in s.before_since:
            older = registry.KNOWN_VERSIONS[registry.KNOWN_VERSIONS.index(s.since) - 1]  # type: ignore[arg-type]
            base = _SECTION_BASES[s.section] + "  # keeps the section non-empty\n"
            shown = value if isinstance(value, str) else str(value).lower()
            out.setdefault(older, []).append((s.path, base, f"{base}  {s.key}: {shown}\n"))
    return out


@pytest.mark.parametrize("minor", sorted(_runs_anyway_cases(), key=registry.version_key))
def test_a_key_newer_than_the_release_is_ignored_by_it(minor: str, tmp_path: Path) -> None:
    """What Setting.before_since rests on: the release before `since` launches a config with the key
    exactly as one without it, so what runs is that release's own behaviour (validate: info, not error)."""
    if not releases.installed(minor):
        if not IN_CI:
            pytest.skip(
                f"accelerate {minor} is not cached under the venv: run "
                "`python tests/oracle/releases.py` (CI installs it)"
            )
        releases.ensure(minor)
    cases = _runs_anyway_cases()[minor]
    reqs = []
    for i, (_, without, with_key) in enumerate(cases):
        for j, text in enumerate((without, with_key)):
            path = tmp_path / f"c{i}-{j}.yaml"
            path.write_text(text, encoding="utf-8")
            reqs.append({"argv": ["--config_file", str(path), "train.py"], "plugins": True})
    _, answers = matrix.run_harness(minor, reqs)
    wrong = [name for (name, _, _), a, b in zip(cases, answers[::2], answers[1::2]) if a != b or "error" in a]
    assert not wrong, f"accelerate {minor} does not launch these as if the key were absent: {wrong}"
