"""DeepSpeed's own config unit tests as a data-directory suite (issue 12 item 10).

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

import copy
import inspect
import json
import logging
import os
import types
from pathlib import Path
from typing import Any

import pytest

from accelconf.deepspeed import validate_deepspeed
from accelconf.text.document import load_text

PEER = Path(__file__).parent / "data" / "deepspeed" / "peer"
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
    errors = [f"{f.rule} {f.key}: {f.message}" for f in validate_deepspeed(
        doc, runtime="deepspeed", deepspeed_version="0.19.8", world_size=case["world_size"]) if f.severity == "error"]
    if case["deepspeed"] == "rejects":
        assert errors, f"DeepSpeed rejects {path.name} ({case['test']}) but accelconf reports no error"
    else:
        assert not errors, f"DeepSpeed accepts {path.name} ({case['test']}) but accelconf reports {errors}"


# -- the installed DeepSpeed -----------------------------------------------------------------------

@pytest.fixture(scope="module")
def deepspeed_verdict():
    os.environ.setdefault("DS_ACCELERATOR", "cpu")
    try:
        import deepspeed
        import deepspeed.ops.adagrad
        import deepspeed.ops.adam
        import deepspeed.ops.lamb
        import deepspeed.ops.lion
        import deepspeed.runtime.config as ds_cfg
        import deepspeed.runtime.zero.utils as zero_utils
        import torch
        from deepspeed.runtime.engine import DeepSpeedEngine
        from deepspeed.utils import logger as ds_logger
    except Exception as exc:  # noqa: BLE001 - any import failure means no oracle
        pytest.skip(f"DeepSpeed cannot be imported here ({type(exc).__name__}: {exc}); install the test extras")
    ds_logger.setLevel(logging.CRITICAL)
    if deepspeed.__version__.split("+")[0] != "0.19.8":
        pytest.skip(f"the verdicts are recorded for DeepSpeed 0.19.8, not {deepspeed.__version__}")
    ops = (deepspeed.ops.adam, deepspeed.ops.lamb, deepspeed.ops.lion, deepspeed.ops.adagrad)

    def binder(real: type) -> Any:
        class Stub(torch.optim.Optimizer):
            # binds the arguments to the real class's signature; its kernels cannot be built on a CPU
            def __init__(self, *args: Any, **kwargs: Any) -> None:
                inspect.signature(real).bind(*args, **kwargs)
                super().__init__(args[0], {"lr": kwargs.get("lr", 1e-3)})
        Stub.__name__ = real.__name__
        return Stub

    def run(case: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str | None:
        world = case["world_size"]
        fake = types.SimpleNamespace(get_rank=lambda *a, **k: 0, get_world_size=lambda *a, **k: world)
        monkeypatch.setattr(ds_cfg, "dist", fake)
        monkeypatch.setattr(zero_utils, "dist", fake)
        stubs = {}
        for mod in ops:
            for name in ("FusedAdam", "DeepSpeedCPUAdam", "ZenFlowCPUAdam", "FusedLamb", "FusedLion", "DeepSpeedCPULion",
                         "DeepSpeedCPUAdagrad"):
                if hasattr(mod, name):
                    stubs[name] = stubs.get(name) or binder(getattr(mod, name))
                    monkeypatch.setattr(mod, name, stubs[name])
        # ZeRO's supported-optimizer list holds the real classes: add the stubs that stand for them
        monkeypatch.setattr(zero_utils, "ZERO_SUPPORTED_OPTIMIZERS",
                            list(zero_utils.ZERO_SUPPORTED_OPTIMIZERS) + [s for n, s in stubs.items() if n != "FusedLamb"])
        try:
            if "text" in case:
                p = tmp_path / "ds_config.json"
                p.write_text(case["text"])
                config = ds_cfg.DeepSpeedConfig(str(p))
            else:
                config = ds_cfg.DeepSpeedConfig(copy.deepcopy(case["config"]))
            # deepspeed.initialize's config-only checks, on an engine that holds nothing but the config
            engine = DeepSpeedEngine.__new__(DeepSpeedEngine)
            torch.nn.Module.__init__(engine)
            engine._config = config
            engine.global_rank, engine.pipeline_parallelism, engine.has_moe_layers = 0, False, False
            engine.client_optimizer = None
            engine.zenflow = config.zero_config.zenflow is not None
            engine._assert_valid_mixed_precision_config()
            params = [torch.nn.Parameter(torch.zeros(2))]
            optimizer = None
            if config.optimizer_name is not None:
                optimizer = engine._configure_basic_optimizer(params)
                engine._do_optimizer_sanity_check(optimizer)
            if config.scheduler_name is not None:
                engine._scheduler_from_config(optimizer or torch.optim.SGD(params, lr=0.1))
        except Exception as exc:  # noqa: BLE001 - DeepSpeed raises many kinds
            return f"{type(exc).__name__}: {str(exc)[:300]}"
        return None

    return run


@pytest.mark.oracle
@pytest.mark.parametrize("path", CASES, ids=lambda p: p.stem)
def test_installed_deepspeed_agrees_with_the_recorded_verdict(deepspeed_verdict, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch, path: Path) -> None:
    case = _case(path)
    raised = deepspeed_verdict(case, tmp_path, monkeypatch)
    if case["deepspeed"] == "rejects":
        assert raised, f"{path.name}: the recorded verdict is rejects, but DeepSpeed accepts it"
    else:
        assert raised is None, f"{path.name}: the recorded verdict is accepts, but DeepSpeed raises {raised}"
