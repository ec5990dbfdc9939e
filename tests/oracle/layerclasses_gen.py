"""The generator of ``accelconf/data/transformers_layers.json``, the layer classes of transformers'
models per ``model_type``, for the check that ``fsdp_transformer_layer_cls_to_wrap`` names a class
the model has: run ``python tests/oracle/layerclasses_gen.py > accelconf/data/transformers_layers.json``
with transformers and torch installed (the library itself never imports them).

For each ``model_type`` transformers knows (``CONFIG_MAPPING_NAMES``) it records its package
(``package``), the ``_no_split_modules`` of its ``PreTrainedModel`` classes (``layers``: what
accelerate wraps when the key is absent, and so the class to suggest), and per package every
``torch.nn.Module`` class its modeling files define or import (``modules``: a superset of the classes
an instance of that model type can hold, sub-models built from a nested config aside). A model type
whose modeling files do not import is left out.
"""

from __future__ import annotations

import json
from typing import Any


def _modeling_modules(package: str) -> list[Any]:  # pragma: no cover - needs transformers
    import importlib
    import os

    pkg = importlib.import_module(package)
    folder = os.path.dirname(pkg.__file__ or "")
    names = sorted(
        f[:-3]
        for f in os.listdir(folder)
        if f.startswith("modeling_") and f.endswith(".py") and not f.startswith(("modeling_tf_", "modeling_flax_"))
    )
    out = []
    for name in names:
        try:
            out.append(importlib.import_module(f"{package}.{name}"))
        except Exception:  # noqa: BLE001 - an optional dependency missing: that file's classes are unknown
            continue
    return out


def generate() -> str:  # pragma: no cover - needs transformers and torch
    import warnings

    warnings.simplefilter("ignore")
    import torch
    import transformers
    from transformers.modeling_utils import PreTrainedModel
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING_NAMES, model_type_to_module_name

    layers: dict[str, list[str]] = {}
    modules: dict[str, list[str]] = {}
    package_of: dict[str, str] = {}
    for model_type in sorted(CONFIG_MAPPING_NAMES):
        package = model_type_to_module_name(model_type)
        found: set[str] = set()
        mine: set[str] = set()
        for mod in _modeling_modules(f"transformers.models.{package}"):
            for obj in vars(mod).values():
                if not isinstance(obj, type) or not issubclass(obj, torch.nn.Module):
                    continue
                found.add(obj.__name__)
                config_class = getattr(obj, "config_class", None)
                if issubclass(obj, PreTrainedModel) and getattr(config_class, "model_type", None) == model_type:
                    mine.update(obj._no_split_modules or ())
        if not found:
            continue
        package_of[model_type] = package
        modules[package] = sorted(found | set(modules.get(package, ())))
        if mine:
            layers[model_type] = sorted(mine)
    return dump({"transformers": transformers.__version__, "package": package_of, "layers": layers, "modules": modules})


def dump(data: dict[str, Any]) -> str:
    """JSON with one line per model type or package, so that a regeneration's diff is readable."""

    def one(v: Any) -> str:
        return json.dumps(v, separators=(",", ":"), sort_keys=True)

    parts = []
    for key in sorted(data):
        value = data[key]
        if isinstance(value, dict) and key != "package":
            rows = ",\n".join(f"{one(k)}:{one(value[k])}" for k in sorted(value))
            parts.append(f"{one(key)}:{{\n{rows}\n}}")
        else:
            parts.append(f"{one(key)}:{one(value)}")
    return "{\n" + ",\n".join(parts) + "\n}\n"


if __name__ == "__main__":  # pragma: no cover
    print(generate(), end="")
