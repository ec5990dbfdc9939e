"""The transformers releases data against the installed transformers' own dataclasses."""

from __future__ import annotations

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
