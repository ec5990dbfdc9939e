"""The transformers releases data against the installed transformers' own dataclasses."""

from __future__ import annotations

import os

import pytest

from accelconf.trainer import releases


def test_the_data_matches_the_installed_transformers_own_dataclasses() -> None:
    """The committed data for the installed release is what its own TrainingArguments gives
    (regenerate on drift: python tests/oracle/transformers_releases_gen.py)."""
    pytest.importorskip("transformers", reason="the drift check compares with the installed transformers")
    from tests.oracle.transformers_releases_gen import run_worker

    theirs = run_worker("fields", [])
    assert "error" not in theirs, theirs
    minor = releases.minor_of(theirs["version"])
    assert minor in releases.RELEASES, f"transformers {theirs['version']} is not in the releases data: regenerate it"
    assert releases.full_version(minor) == theirs["version"], "the data was generated from another patch release"
    for cls in ("TrainingArguments", "Seq2SeqTrainingArguments"):
        ours = releases.fields(minor, cls=cls)
        got = {
            f["name"]: (f["type"], f["default"], f["choices"], bool(f.get("required"))) for f in theirs["classes"][cls]
        }
        mine = {
            n: (f.type, f.default, list(f.choices) if f.choices is not None else None, f.required)
            for n, f in ours.items()
        }
        assert mine == got, f"{cls} of transformers {minor} drifted: python tests/oracle/transformers_releases_gen.py"
    assert releases.fsdp_config_keys(minor) == frozenset(theirs["fsdp_config_keys"])


def test_the_renames_are_what_the_releases_own_deprecation_messages_name() -> None:
    """Each removed field's replacement, read again from the ``training_args.py`` of the last release
    that had it (the cached releases; CI installs them), is the committed one (regenerate on drift:
    python tests/oracle/transformers_releases_gen.py --renames)."""
    import json

    from tests.oracle import transformers_releases as tr
    from tests.oracle.transformers_releases_gen import OUT, release_sources, renames

    data = json.loads(OUT.read_text(encoding="utf-8"))["transformers"]
    table = data["fields"]["TrainingArguments"]
    lasts = {releases.removed(n)[0] for n in table if releases.removed(n)}  # type: ignore[index]
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        for minor in sorted(lasts):  # CI checks every one, whatever order the tests run in
            tr.CACHE.ensure(minor)
    cached = [m for m in sorted(lasts) if tr.CACHE.installed(m)]
    if not cached:
        pytest.skip(
            f"none of the releases before a removal is cached ({', '.join(sorted(lasts))}): "
            "python tests/oracle/transformers_releases.py"
        )
    theirs = renames(table, release_sources(cached))
    ours = {n: r for n, r in data["renames"].items() if releases.removed(n) and releases.removed(n)[0] in cached}  # type: ignore[index]
    assert theirs == ours, "python tests/oracle/transformers_releases_gen.py --renames"
    if "4.50" in cached:  # the rename the Trainer documentation itself gives
        assert theirs["evaluation_strategy"]["new"] == "eval_strategy"
