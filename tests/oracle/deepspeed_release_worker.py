"""One DeepSpeed release against accelconf's key table; run in its own process by
tests/oracle/test_deepspeed_releases.py with that release's cache directory first on PYTHONPATH.

Prints one JSON object: the release, and a list of mismatches, each a string:

- ``fields``: a pydantic section of the release has a key the table does not give for that version,
  or the other way round (the table's ``since``/``removed`` against the release's own models);
- ``default``: a pydantic field's default differs from the table's default for that version
  (``default_changes`` included);
- ``verdict``: for every key the table dates (``since``/``removed``, the removed top-level blocks),
  a config setting just that key is rejected by the release's ``DeepSpeedConfig`` exactly when
  accelconf, validating as ``accelconf validate --runtime deepspeed --deepspeed-version V`` does,
  reports an error.
"""

from __future__ import annotations

import copy
import importlib
import json
import logging
import os
import sys
import types
from typing import Any

os.environ.setdefault("DS_ACCELERATOR", "cpu")

# the pydantic section of each table path: (module, class), tried in order (classes moved between releases)
MODELS: dict[str, list[tuple[str, str]]] = {
    "zero_optimization": [("deepspeed.runtime.zero.config", "DeepSpeedZeroConfig")],
    "zero_optimization.offload_param": [("deepspeed.runtime.zero.offload_config", "DeepSpeedZeroOffloadParamConfig")],
    "zero_optimization.offload_optimizer": [
        ("deepspeed.runtime.zero.offload_config", "DeepSpeedZeroOffloadOptimizerConfig")
    ],
    "zero_optimization.zenflow": [("deepspeed.runtime.zenflow.zenflow_config", "ZenFlowConfig")],
    "zero_optimization.leaf_module": [("deepspeed.runtime.zero.leaf_module_config", "DeepSpeedZeroLeafModuleConfig")],
    "fp16": [("deepspeed.runtime.precision_config", "DeepSpeedFP16Config")],
    "bf16": [("deepspeed.runtime.precision_config", "DeepSpeedBF16Config")],
    "compile": [("deepspeed.compile.config", "CompileConfig"), ("deepspeed.runtime.compiler", "CompileConfig")],
    "hybrid_engine": [("deepspeed.runtime.config", "HybridEngineConfig")],
    "weight_quantization": [("deepspeed.inference.config", "WeightQuantConfig")],
    "tensorboard": [("deepspeed.monitor.config", "TensorBoardConfig")],
    "csv_monitor": [("deepspeed.monitor.config", "CSVConfig")],
    "wandb": [("deepspeed.monitor.config", "WandbConfig")],
    "comet": [("deepspeed.monitor.config", "CometConfig")],
    "comms_logger": [("deepspeed.comm.config", "CommsLoggerConfig")],
    "tensor_parallel": [("deepspeed.runtime.tensor_parallel.config", "TPTrainingConfig")],
    "tensor_parallel.tensor_parallel": [("deepspeed.runtime.tensor_parallel.config", "TPConfig")],
    "timers.throughput": [("deepspeed.utils.config", "DeepSpeedThroughputTimerConfig")],
}


def _model(path: str) -> Any:
    for mod, cls in MODELS[path]:
        try:
            return getattr(importlib.import_module(mod), cls)
        except (ImportError, AttributeError):
            continue
    return None


def _good_value(k: Any) -> Any:
    """A value the key accepts: its default when it has a plain one."""
    import math

    from accelconf.deepspeed import _UNSET

    if k.children is not None:
        return {}
    if k.enum:
        return k.enum[0]
    d = k.default
    if d is not _UNSET and d is not None and not (isinstance(d, float) and not math.isfinite(d)):
        return d
    t = k.type if isinstance(k.type, str) else k.type[0]
    return {"boolean": False, "integer": 1, "number": 0.5, "string": "x", "array": [], "object": {}}.get(t)


def main() -> None:
    import deepspeed
    import deepspeed.runtime.config as ds_cfg
    from deepspeed.utils import logger as ds_logger
    from packaging.version import Version
    from pydantic_defaults import comparable_defaults  # beside this script

    from accelconf.api import validate_any
    from accelconf.deepspeed import iter_keys, lookup
    from accelconf.deepspeed.keys import _REMOVED_TOP, _ver
    from accelconf.text.document import load_text

    ds_logger.setLevel(logging.CRITICAL)
    version = deepspeed.__version__.split("+")[0]
    v = Version(version)
    out: list[str] = []

    def active(k: Any) -> bool:
        s, r = _ver(k.since), _ver(k.removed)
        return (s is None or v >= s) and (r is None or v < r)

    def default_at(k: Any) -> Any:
        d = k.default
        for change, before in sorted(k.default_changes, key=lambda c: Version(c[0]), reverse=True):
            if v < Version(change):
                d = before
        return d

    # -- fields and defaults of the pydantic sections ------------------------------------------------
    for path in MODELS:
        section = lookup(path)
        parts = path.split(".")
        if (
            section is None
            or section.children is None
            or not all(active(lookup(".".join(parts[: i + 1]))) for i in range(len(parts)))
        ):
            continue
        if section.strict_since is None or v < Version(section.strict_since):
            continue  # hand-parsed in this release
        model = _model(path)
        if model is None:
            out.append(f"fields {path}: the table says it is a pydantic section in {version}, but no model was found")
            continue
        ours: set[str] = set()
        for name, key in section.children.items():
            if key.removed and v >= Version(key.removed) or key.since and v < Version(key.since):
                continue
            ours |= {name, *key.aliases}
        theirs: set[str] = set()
        for name, info in model.model_fields.items():
            theirs |= {name, info.alias or name}
        if ours != theirs:
            out.append(
                f"fields {path}: only in the table {sorted(ours - theirs)}, only in DeepSpeed {sorted(theirs - ours)}"
            )
        for name, key, default in comparable_defaults(model, section):
            if default_at(key) != default:
                out.append(f"default {path}.{name}: table {default_at(key)!r}, DeepSpeed {default!r}")

    # -- verdicts on the dated keys ---------------------------------------------------------------------
    fake = types.SimpleNamespace(get_rank=lambda *a, **k: 0, get_world_size=lambda *a, **k: 1)
    ds_cfg.dist = fake
    probes: list[tuple[str, dict[str, Any]]] = []
    for path, key in iter_keys():
        parents = path.split(".")[:-1]
        if not (key.since or key.removed or path in _REMOVED_TOP):
            continue
        if any(not active(lookup(".".join(parents[: i + 1]))) for i in range(len(parents))):
            continue  # its section does not exist in this release
        cfg: dict[str, Any] = {"train_batch_size": 1}
        node = cfg
        for part in parents:
            node = node.setdefault(part, {})
        node[path.split(".")[-1]] = _good_value(key)
        probes.append((path, cfg))
    for path, cfg in probes:
        try:
            ds_cfg.DeepSpeedConfig(copy.deepcopy(cfg))
            rejected = None
        except Exception as exc:  # noqa: BLE001 - DeepSpeed raises many kinds
            rejected = f"{type(exc).__name__}: {str(exc)[:160]}"
        doc = load_text(json.dumps(cfg), "probe.json", "json")
        # the path of `accelconf validate --runtime deepspeed --deepspeed-version V`
        errors = [
            f"{f.rule}: {f.message[:160]}"
            for f in validate_any(doc, runtime="deepspeed", deepspeed_version=version)
            if f.severity == "error"
        ]
        if bool(rejected) != bool(errors):
            out.append(
                f"verdict {path} = {json.dumps(cfg)[:120]}: DeepSpeed "
                f"{rejected or 'accepts'}; accelconf {errors or 'no error'}"
            )
    print(json.dumps({"release": version, "probes": len(probes), "mismatches": out}))


if __name__ == "__main__":
    main()
    sys.stdout.flush()
