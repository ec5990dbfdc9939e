"""DeepSpeed's own config unit tests as a data-directory suite.

Each file in ``tests/data/deepspeed/peer/`` is one case taken from DeepSpeed's test suite, citing the
test file and line (``source``) of deepspeedai/DeepSpeed at the commit named there; only the config
and the verdict are copied, never DeepSpeed's code. ``deepspeed`` is the verdict of the installed
DeepSpeed 0.19.8 (``upstream`` keeps the test's own verdict where a later release changed it).

Each case asserts two things: the installed DeepSpeed agrees with the recorded verdict (its
``DeepSpeedConfig``, then the config-only checks of ``deepspeed.initialize``: the mixed-precision
assertion, building the optimizer and scheduler from the config, and the optimizer sanity check),
and accelconf reports an error exactly when DeepSpeed rejects.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from accelconf.deepspeed.validate import validate_deepspeed
from accelconf.text.document import load_text

PEER = Path(__file__).parents[2] / "data" / "deepspeed" / "peer"
CASES = sorted(PEER.glob("*.json"))


def _case(path: Path) -> dict[str, Any]:
    case: dict[str, Any] = json.loads(path.read_text())
    return case


def _text(case: dict[str, Any]) -> str:
    return case["text"] if "text" in case else json.dumps(case["config"], indent=1)


def test_peer_cases_cite_their_source() -> None:
    assert len(CASES) >= 120
    for path in CASES:
        case = _case(path)
        assert case["deepspeed"] in ("accepts", "rejects"), path.name
        repo, _, where = case["source"].partition(" ")
        assert repo.startswith("deepspeedai/DeepSpeed@") and where.startswith("tests/unit/") and ":" in where, path.name
        assert int(where.rsplit(":", 1)[1]) > 0


@pytest.mark.parametrize("path", CASES, ids=lambda p: p.stem)
def test_accelconf_agrees_with_the_recorded_verdict(path: Path) -> None:
    case = _case(path)
    doc = load_text(_text(case), path.name, "json")
    errors = [
        f"{f.rule} {f.key}: {f.message}"
        for f in validate_deepspeed(doc, runtime="deepspeed", deepspeed_version="0.19.8", world_size=case["world_size"])
        if f.severity == "error"
    ]
    if case["deepspeed"] == "rejects":
        assert errors, f"DeepSpeed rejects {path.name} ({case['test']}) but accelconf reports no error"
    else:
        assert not errors, f"DeepSpeed accepts {path.name} ({case['test']}) but accelconf reports {errors}"


# -- the installed DeepSpeed -----------------------------------------------------------------------
