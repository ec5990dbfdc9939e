"""Every transformers release 4.46 to the newest (and the TRL releases) against the releases data
(tests/oracle/transformers_matrix.py).

Each release is installed beside the others (tests/oracle/transformers_releases.py, cached under the
venv) and builds its own ``TrainingArguments`` / TRL configs in one process per release over the
corpus arguments files and generated cases (a field some release lacks, an unknown field, a
wrong-type value, an enum value outside its choices, every documented choice). For every release the
verdict of :mod:`accelconf.trainer.releases` (unknown field, removed in which release, required
field missing) equals what the release raised, and every documented enum choice is one the release
accepts. In CI (``CI=true``) the releases are installed when missing; elsewhere the module runs
only when they are all cached (``python tests/oracle/transformers_releases.py`` installs them).
"""

from __future__ import annotations

import os

import pytest

from accelconf.trainer import releases as data
from tests.oracle import transformers_matrix as matrix
from tests.oracle import transformers_releases as tr

IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")
pytestmark = pytest.mark.oracle


def _ready(cache: tr.ReleaseCache, minor: str) -> bool:
    return cache.installed(minor) and (cache is not tr.CACHE or (cache.path_of(minor) / tr.DEPS / tr.DONE).is_file())


def test_every_release_the_data_knows_or_lists_is_pinned() -> None:
    assert set(data.RELEASES) | set(data.unavailable()) == set(tr.RELEASES)
    for minor in data.RELEASES:
        assert data.full_version(minor) == tr.RELEASES[minor]
    assert set(data.TRL_RELEASES) | set(data.unavailable("trl")) == set(tr.TRL_RELEASES)


@pytest.fixture(scope="session")
def installed() -> None:
    missing = [m for m in data.RELEASES if not _ready(tr.CACHE, m)]
    missing += [f"trl {m}" for m in data.TRL_RELEASES if not _ready(tr.TRL_CACHE, m)]
    if missing and not IN_CI:
        pytest.skip(
            f"{len(missing)} transformers/TRL releases are not cached under the venv ({', '.join(missing[:4])}...): "
            "run `python tests/oracle/transformers_releases.py` and `... --trl` (CI installs them)"
        )
    for m in data.RELEASES:
        tr.CACHE.ensure(m)
    for m in data.TRL_RELEASES:
        tr.TRL_CACHE.ensure(m)


@pytest.fixture(scope="session")
def results(installed: None) -> dict[str, matrix.ReleaseResult]:
    """The whole matrix, two releases at a time (one process per release, not per case)."""
    if not matrix.corpus_args():
        pytest.skip(f"no corpus at {matrix.CORPUS}: the matrix would only see generated cases")
    return {r.minor: r for r in matrix.run_matrix(list(data.RELEASES), jobs=2)}


@pytest.mark.parametrize("minor", list(data.RELEASES))
def test_each_release_raises_exactly_what_the_data_predicts(
    minor: str, results: dict[str, matrix.ReleaseResult]
) -> None:
    r = results[minor]
    assert not r.error, f"transformers {minor} no longer imports: {r.error}"
    assert r.count("corpus")[1] == len(matrix.corpus_args()) and r.count("unknown")[1] >= 2
    assert r.count("bad-choice")[1] >= 5 and r.count("choice")[1] >= 20
    bad = [f"{o.case.id}: {o.problem}" for o in r.outcomes if o.problem]
    assert not bad, f"transformers {r.version}:\n" + "\n".join(bad)


def test_a_removed_field_is_refused_from_the_release_the_data_names(results: dict[str, matrix.ReleaseResult]) -> None:
    gone = [n for n in matrix.dated_fields() if data.removed(n)]
    assert gone, "the releases data knows no removed field: the oldest releases are missing from it"
    for name in gone:
        last, first_without = data.removed(name) or ("", "")
        had = results[last].outcomes
        lacks = results[first_without].outcomes
        assert next(o for o in had if o.case.id == f"dated/{name}").got["unused"] in (None, [])
        assert next(o for o in lacks if o.case.id == f"dated/{name}").got["unused"] == [name]


def test_each_trl_release_agrees_with_the_data(installed: None) -> None:
    bad = []
    for r in matrix.run_trl_matrix(list(data.TRL_RELEASES), jobs=2):
        assert not r.error, f"TRL {r.minor} no longer imports: {r.error}"
        assert sum(1 for o in r.outcomes if o.case.group == "unknown") == len(data.trl_classes(r.minor))
        bad += [f"TRL {r.minor} {o.case.id}: {o.problem}" for o in r.outcomes if o.problem]
    assert not bad, "\n".join(bad)
