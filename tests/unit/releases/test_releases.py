"""The releases table's lookups: which accelerate release has a behaviour, and which requirement it states."""

from __future__ import annotations

import pytest

from accelconf import releases


@pytest.mark.parametrize(
    ("version", "name", "expected"),
    [
        # a behaviour with a last release: the newest (None) and an unreadable version lack it
        (None, "backward-prefetch-policy", False),
        ("main", "backward-prefetch-policy", False),
        ("0.34", "backward-prefetch-policy", True),
        ("1.0", "backward-prefetch-policy", False),
        # a behaviour still in the newest release
        (None, "fsdp2", True),
        ("main", "fsdp2", True),
        ("1.5.2", "fsdp2", False),
        ("1.6.0", "fsdp2", True),
        # one release wide: since is in, until is out
        ("0.20", "ze-mask-inverted", False),
        ("0.21.0", "ze-mask-inverted", True),
        ("0.22", "ze-mask-inverted", False),
    ],
)
def test_has_reads_since_as_in_and_until_as_out(version, name, expected):
    assert releases.has(version, name) is expected


def test_since_names_the_first_release():
    assert releases.since("fsdp2") == "1.6"


def test_since_refuses_a_behaviour_older_than_every_release():
    with pytest.raises(ValueError, match="^backward-prefetch-policy has no first release: it is older"):
        releases.since("backward-prefetch-policy")


@pytest.mark.parametrize(
    ("written", "version", "runs"),
    [(2, None, 2), ("2", "1.6", 2), ("2", "1.5", 1), (2, "1.5", 1), (1, None, 1), ("1", "1.6", 1), (None, None, 1)],
)
def test_fsdp_version_runs(written, version, runs):
    assert releases.fsdp_version_runs(written, version) == runs


@pytest.mark.parametrize(
    ("version", "minimum"),
    [
        ("0.20", "1.12.0"),
        ("0.21", "2.0.1"),
        ("0.24.1", "2.0.1"),
        ("0.25", "2.1.0"),
        ("1.0", "2.1.0a0"),
        (None, "2.1.0a0"),
    ],
)
def test_requirement_is_the_one_of_that_release(version, minimum):
    assert releases.requirement("fsdp1-torch", version).version == minimum
    assert releases.minimum("fsdp1-torch", version) == minimum


def test_a_release_before_a_requirement_has_none():
    assert releases.requirement("deepspeed-nossh", "1.5") is None
    assert releases.minimum("deepspeed-nossh", "1.5") is None
    assert releases.minimum("deepspeed-nossh", "1.6") == "0.14.5"
