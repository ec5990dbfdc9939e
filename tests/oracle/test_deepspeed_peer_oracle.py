"""DeepSpeed's own config unit tests (tests/data/deepspeed/peer/) against the installed DeepSpeed: its verdict is
the recorded one."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.oracle.ds_oracle import make_oracle
from tests.unit.deepspeed.test_deepspeed_peer import CASES, _case


@pytest.fixture(scope="module")
def deepspeed_verdict():
    try:
        oracle = make_oracle()
    except Exception as exc:  # noqa: BLE001 - any import failure means no oracle
        pytest.skip(f"DeepSpeed cannot be imported here ({type(exc).__name__}: {exc}); install the test extras")
    if oracle.version != "0.19.8":  # type: ignore[attr-defined]
        pytest.skip(f"the verdicts are recorded for DeepSpeed 0.19.8, not {oracle.version}")  # type: ignore[attr-defined]
    return oracle


@pytest.mark.oracle
@pytest.mark.parametrize("path", CASES, ids=lambda p: p.stem)
def test_installed_deepspeed_agrees_with_the_recorded_verdict(deepspeed_verdict, path: Path) -> None:
    case = _case(path)
    raised = deepspeed_verdict(case.get("config"), case["world_size"], text=case.get("text"))
    if case["deepspeed"] == "rejects":
        assert raised, f"{path.name}: the recorded verdict is rejects, but DeepSpeed accepts it"
    else:
        assert raised is None, f"{path.name}: the recorded verdict is accepts, but DeepSpeed raises {raised}"
