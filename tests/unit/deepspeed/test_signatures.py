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


def test_the_data_is_written_with_sorted_keys() -> None:
    assert (
        signatures.dumps({"b": {"z": 1, "y": [2]}, "a": 3})
        == '{\n "a": 3,\n "b": {\n  "y": [\n   2\n  ],\n  "z": 1\n }\n}\n'
    )


def test_generate_reads_every_class_a_config_can_name_from_the_modules_it_is_given() -> None:
    """torch's optimizers and schedulers, DeepSpeed's own optimizers and schedulers, and the
    versions, from stand-ins shaped like the real modules."""
    import types

    class Optimizer:
        def __init__(self, params, defaults):
            pass

    class SGD(Optimizer):
        def __init__(self, params, lr=1e-3, momentum=0.0):
            pass

    class AdamW(Optimizer):
        def __init__(self, params, lr=1e-3, *, fused=None):
            pass

    class LRScheduler:
        def __init__(self, optimizer, last_epoch=-1):
            pass

    class ReduceLROnPlateau:
        def __init__(self, optimizer, mode="min", patience=10):
            pass

    class StepLR(LRScheduler):
        def __init__(self, optimizer, step_size, gamma=0.1):
            pass

    class _Private(LRScheduler):
        pass

    lr_scheduler = types.SimpleNamespace(
        LRScheduler=LRScheduler, ReduceLROnPlateau=ReduceLROnPlateau, StepLR=StepLR, _Private=_Private, helper=len
    )
    torch = types.SimpleNamespace(
        optim=types.SimpleNamespace(
            Optimizer=Optimizer, SGD=SGD, AdamW=AdamW, lr_scheduler=lr_scheduler, not_a_class=1, Other=int
        )
    )
    schedules = types.ModuleType("fake_lr_schedules")

    class WarmupLR:
        def __init__(self, optimizer, warmup_num_steps=1000):
            pass

    WarmupLR.__module__ = schedules.__name__
    schedules.WarmupLR = WarmupLR
    schedules.Imported = StepLR  # defined elsewhere: not DeepSpeed's
    deepspeed_classes = {path.rpartition(".")[0] for path in signatures.DEEPSPEED_OPTIMIZER_CLASSES}
    modules = {m: types.SimpleNamespace() for m in deepspeed_classes}
    for path in signatures.DEEPSPEED_OPTIMIZER_CLASSES:
        mod, _, name = path.rpartition(".")
        setattr(modules[mod], name, type(name, (), {"__init__": lambda self, params, lr=1e-3: None}))
    versions = {"deepspeed": "9.9.9", "torch": "3.0.0+cu999"}  # none installed here
    data = signatures.generate(torch, schedules, modules.__getitem__, versions.__getitem__)
    assert {k: v for k, v in data.items() if k != "classes"} == {
        "generated_by": "python -m accelconf.deepspeed.signatures",
        "deepspeed": "9.9.9",
        "torch": "3.0.0",
        "torch_optimizers": ["AdamW", "SGD"],
        "torch_schedulers": ["ReduceLROnPlateau", "StepLR"],
        "deepspeed_schedulers": ["WarmupLR"],
    }
    assert data["classes"] == {
        **{p: {"params": ["lr"], "required": [], "var_kwargs": False} for p in signatures.DEEPSPEED_OPTIMIZER_CLASSES},
        "torch.optim.AdamW": {"params": ["fused", "lr"], "required": [], "var_kwargs": False},
        "torch.optim.SGD": {"params": ["lr", "momentum"], "required": [], "var_kwargs": False},
        "torch.optim.lr_scheduler.ReduceLROnPlateau": {
            "params": ["mode", "patience"],
            "required": [],
            "var_kwargs": False,
        },
        "torch.optim.lr_scheduler.StepLR": {
            "params": ["gamma", "step_size"],
            "required": ["step_size"],
            "var_kwargs": False,
        },
        "deepspeed.runtime.lr_schedules.WarmupLR": {
            "params": ["warmup_num_steps"],
            "required": [],
            "var_kwargs": False,
        },
    }
    assert list(data["classes"]) == [
        *signatures.DEEPSPEED_OPTIMIZER_CLASSES,
        "torch.optim.AdamW",
        "torch.optim.SGD",
        "torch.optim.lr_scheduler.ReduceLROnPlateau",
        "torch.optim.lr_scheduler.StepLR",
        "deepspeed.runtime.lr_schedules.WarmupLR",
    ]
