"""How a class's keyword parameters are read for the committed signatures data (plain classes stand
in for DeepSpeed's and torch's here; tests/oracle/test_deepspeed_signatures_oracle.py regenerates the
data from the real ones)."""

from __future__ import annotations

import json

from accelconf.deepspeed import signatures


class Base:
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), *, weight_decay=0.0):
        pass


class Forwards(Base):
    """Takes its own parameters and forwards the rest to Base (as ZenFlowCPUAdam does)."""

    def __init__(self, params, overlap, lr=1e-3, **kwargs):
        super().__init__(params, lr=lr, **kwargs)


class Closed(Base):
    """Does not forward: Base's parameters are not its own."""

    def __init__(self, params, momentum, *args, nesterov=False):
        pass


class Inherits(Forwards):
    """Has no __init__ of its own."""


class Open:
    def __init__(self, params, lr, **kwargs):
        pass


def test_own_parameters_and_the_required_ones() -> None:
    assert signatures._params(Closed) == {
        "params": ["momentum", "nesterov"],
        "required": ["momentum"],
        "var_kwargs": False,
    }
    assert signatures._params(Base) == {
        "params": ["betas", "lr", "weight_decay"],
        "required": [],
        "var_kwargs": False,
    }


def test_kwargs_are_followed_into_the_base_classes() -> None:
    # required is the class's own: Base's lr has a default anyway, overlap has none
    assert signatures._params(Forwards) == {
        "params": ["betas", "lr", "overlap", "weight_decay"],
        "required": ["overlap"],
        "var_kwargs": False,
    }
    # a class without its own __init__ reads its base's, and nothing is required of it
    assert signatures._params(Inherits) == {
        "params": ["betas", "lr", "overlap", "weight_decay"],
        "required": [],
        "var_kwargs": False,
    }


def test_kwargs_that_reach_object_take_anything() -> None:
    assert signatures._params(Open) == {"params": ["lr"], "required": ["lr"], "var_kwargs": True}


def test_the_committed_data_loads_and_is_written_stably() -> None:
    data = signatures.load()
    assert signatures.load() is data  # read once
    assert data["generated_by"] == "python -m accelconf.deepspeed.signatures"
    assert set(data) >= {
        "deepspeed",
        "torch",
        "torch_optimizers",
        "torch_schedulers",
        "deepspeed_schedulers",
        "classes",
    }
    assert all(c in data["classes"] for c in signatures.DEEPSPEED_OPTIMIZER_CLASSES)
    text = signatures.dumps(data)
    assert text.endswith("}\n") and json.loads(text) == data
    assert text == json.dumps(data, indent=1, sort_keys=True) + "\n"
    with open(signatures.DATA, encoding="utf-8") as fh:
        assert fh.read() == text  # the committed file is in that form
