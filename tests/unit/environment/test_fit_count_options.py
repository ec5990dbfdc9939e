"""``accelconf fit``'s count options at their lower edge: 1 is the smallest accepted value, 0 and
a negative one are bad input (exit 2, a message naming the option, no traceback).

Every count option is tried at 1, 0 and -1 with the others valid, so a check that lets 0 through
(a fit table for zero GPUs, a division by zero) or refuses 1 fails for the option concerned.
"""

from __future__ import annotations

import pytest

BASE = ["fit", "--params", "1B", "--gpu", "H100-80GB", "--gpus", "1", "--nodes", "1"]
COUNTS = {
    "--gpus": [],
    "--nodes": [],
    "--seq-len": ["--micro-batch", "1"],
    "--micro-batch": ["--seq-len", "128"],
}


def _argv(flag: str, value: str) -> list[str]:
    argv = list(BASE)
    if flag in argv:
        argv[argv.index(flag) + 1] = value
    else:
        argv += [flag, value]
    return argv + COUNTS[flag]


@pytest.mark.parametrize("flag", COUNTS)
def test_one_is_accepted(cli, flag: str) -> None:
    r = cli(*_argv(flag, "1"))
    assert r.code == 0, r.err


@pytest.mark.parametrize("value", ["0", "-1"])
@pytest.mark.parametrize("flag", COUNTS)
def test_zero_and_below_are_bad_input_naming_the_option(cli, flag: str, value: str) -> None:
    r = cli(*_argv(flag, value))
    assert r.code == 2, (r.out, r.err)
    assert flag in r.err and "must be 1 or more" in r.err and "Traceback" not in r.err
