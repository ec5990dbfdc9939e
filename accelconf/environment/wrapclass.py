"""Does the model have the class ``fsdp_transformer_layer_cls_to_wrap`` names?

This module owns the ``model-wrap-class`` rule: with a local model folder (``check --model DIR``, the
language server's ``accelconf.model``), each class named in ``fsdp_transformer_layer_cls_to_wrap``
under ``TRANSFORMER_BASED_WRAP`` is looked up among the classes of the folder's ``config.json``
model types. accelerate 1.15 splits the value on commas (no trimming) and, at ``prepare``, raises
``ValueError(f"Could not find the transformer layer class {layer_class} in the model.")`` for a
name no module of the model has (``FullyShardedDataParallelPlugin.set_auto_wrap_policy`` in
``utils/dataclasses.py`` for FSDP1, ``fsdp2_prepare_auto_wrap_policy`` in ``utils/fsdp_utils.py``
for FSDP2).

The classes come from ``accelconf/data/transformers_layers.json``, generated from the installed
transformers by ``tests/oracle/layerclasses_gen.py`` (nothing is imported here): per model type its
``_no_split_modules`` (what accelerate wraps when the key is absent, and what is suggested) and
every ``torch.nn.Module`` class its modeling files define or import. A name outside those is an
error only when accelconf is sure: the name has spaces, or it is a class of other transformers
models (a config copied from another model) and the whole model is known (every model type in
``config.json``, nested sub-model configs included, is in the data and no ``auto_map`` brings code
of its own); otherwise (a name no model has, such as torch's ``Linear``) it is a warning. Model sizes are
:mod:`accelconf.environment.modelsize`'s job.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from functools import lru_cache
from typing import Any

from accelconf import catalogue
from accelconf.accelerate.model import Config, config_of, value_reader
from accelconf.accelerate.validate import scalar_text
from accelconf.environment.checks import finding_at
from accelconf.environment.modelsize import model_config
from accelconf.findings import Finding

DATA = os.path.join(os.path.dirname(os.path.dirname(__file__)), "data", "transformers_layers.json")
KEY = "fsdp_config.fsdp_transformer_layer_cls_to_wrap"
_SHAPE_KEYS = frozenset({"hidden_size", "num_hidden_layers", "num_attention_heads", "d_model"})
RULE_IDS: dict[str, str] = {"model-wrap-class": catalogue.describe("environment")["model-wrap-class"]}


@lru_cache(maxsize=1)
def _data() -> dict[str, Any]:
    with open(DATA, encoding="utf-8") as fh:
        loaded: dict[str, Any] = json.load(fh)
    return loaded


@lru_cache(maxsize=1)
def _all_modules() -> frozenset[str]:
    """Every module class of every transformers model in the data."""
    return frozenset(c for names in _data()["modules"].values() for c in names)


def _model_types(config: dict[str, Any], depth: int = 0) -> Iterator[str | None]:
    """The ``model_type`` of a config and of each nested sub-model config (``None`` for a nested
    config that does not say its type)."""
    yield config.get("model_type") if isinstance(config.get("model_type"), str) else None
    if depth > 3:
        return
    for value in config.values():
        # a sub-model's config says its type, or at least its shape (quantization_config is neither)
        if isinstance(value, dict) and ("model_type" in value or _SHAPE_KEYS & value.keys()):
            yield from _model_types(value, depth + 1)


class ModelClasses:
    """The classes a model folder's ``config.json`` implies. ``sure`` is false when some of its code
    is unknown (an ``auto_map``, a model type the data lacks, a sub-config without a type)."""

    def __init__(self, config: dict[str, Any]) -> None:
        data = _data()
        self.types = [t for t in _model_types(config) if t]
        self.main = self.types[0] if self.types and isinstance(config.get("model_type"), str) else None
        known = [t for t in self.types if t in data["package"]]
        self.sure = (
            bool(self.main)
            and len(known) == len(self.types)
            and None not in _model_types(config)
            and "auto_map" not in config
        )
        self.layers = sorted({c for t in known for c in data["layers"].get(t, ())})
        self.modules = {c for t in known for c in data["modules"].get(data["package"][t], ())} | set(self.layers)
        self.transformers = str(data["transformers"])

    @property
    def known(self) -> bool:
        return self.main in _data()["package"]


def model_classes(model: str) -> ModelClasses | None:
    """The classes of ``--model``'s config.json (a local folder's, else a well-known model's), or
    ``None`` without a readable one."""
    config = model_config(model)
    return ModelClasses(config) if config is not None else None


def _wrap_value(data: dict[str, Any] | Config) -> str | None:
    """The class list accelerate will look up, or ``None`` when it wraps no named classes (read from
    the config model, as accelerate reads each value)."""
    read = value_reader(config_of(data), None)
    if read("distributed_type") != "FSDP" or read("fsdp_config.fsdp_auto_wrap_policy") != "TRANSFORMER_BASED_WRAP":
        return None  # NO_WRAP/SIZE_BASED_WRAP ignore it
    value = read("fsdp_config.fsdp_transformer_layer_cls_to_wrap")
    return value if isinstance(value, str) else None  # a YAML list is validate's invalid-type error


def wrap_findings(doc: Any, classes: ModelClasses | None, cfg: Config | None = None) -> list[Finding]:
    """``model-wrap-class`` findings (1-based positions) for one loaded accelerate config (``cfg``:
    its model, when the caller has read it)."""
    data = getattr(doc, "data", None)
    if not isinstance(data, dict):
        return []
    value = _wrap_value(cfg if cfg is not None else data)
    if value is None or classes is None or not classes.known:
        return []
    missing = [name for name in value.split(",") if name not in classes.modules]
    if not missing:
        return []

    shown = ", ".join(repr(n) for n in missing)
    model = "/".join(dict.fromkeys(classes.types))
    spaced = [n for n in missing if n != n.strip()]
    # sure: a class of other transformers models (a copied config), or a name with spaces; a name
    # no model has (torch's Linear, a class of the user's own) may still be in the model
    foreign = all(n in _all_modules() for n in missing if n == n.strip())
    sure = bool(spaced) or (classes.sure and foreign)
    message = (
        f"{shown} {'is' if len(missing) == 1 else 'are'} not a class of this {model} model "
        f"(transformers {classes.transformers})"
    )
    if spaced:
        message += "; accelerate splits the value on commas without trimming spaces"
    message += (
        ": accelerator.prepare raises ValueError('Could not find the transformer layer class "
        f"{missing[0]} in the model.')"
    )
    if not sure:
        message += (
            " if the model has no such module (some of its code is not known to accelconf)"
            if foreign
            else " if the model has no such module (accelconf knows no transformers model with it)"
        )
    names = [n.strip() for n in value.split(",")]
    if all(n in classes.modules for n in names):
        right: str | None = ",".join(names)  # only the spaces were wrong
    else:
        right = ",".join(dict.fromkeys([n for n in names if n in classes.modules] + classes.layers)) or None
    found = finding_at(doc, "model-wrap-class", "error" if sure else "warning", message, KEY, suggestion=right)
    if right is None:
        return [found]
    node = doc.node(KEY)
    fix = (
        ((node.start, node.end, scalar_text(doc, right, like=node)),)
        if node is not None and node.kind == "scalar"
        else ()
    )
    return [found.replace(fix=fix)]
