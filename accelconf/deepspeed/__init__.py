"""DeepSpeed JSON configs: the key table, its JSON Schema, validation and the accelerate cross-check.

The public face of the package; the work is in its modules, each owning one job:

- :mod:`.keys`: the key table (:data:`TOP`) of every section and key DeepSpeed 0.15 to 0.19.8
  reads (the recogniser of file kinds, :mod:`accelconf.kinds`, decides from it what is a DeepSpeed file);
- :mod:`.values`: how DeepSpeed reads a value (JSON types, pydantic's lax mode);
- :mod:`.schema`: the JSON Schema generated from the table;
- :mod:`.validate` (key by key) and :mod:`.rules` (between keys): :func:`validate_deepspeed`;
- :mod:`.path`: where a ``deepspeed_config_file`` value points.

The cross-check with an accelerate config and the one DeepSpeed-to-accelerate key mapping compose
this package with accelerate's registry, so they live above both, in
:mod:`accelconf.accelerate.deepspeed_file`; nothing here imports :mod:`accelconf.accelerate`.

Nothing here imports deepspeed, torch or accelerate. Facts come from the installed DeepSpeed 0.19.8
and accelerate 1.15.0 sources; ``tests/oracle/test_deepspeed_oracle.py`` checks them against DeepSpeed's
own parser.
"""

from __future__ import annotations

from accelconf import catalogue
from accelconf.deepspeed.keys import (
    _UNSET,
    BF16,
    FP16,
    NEWEST,
    OFFLOAD_OPTIMIZER,
    OFFLOAD_PARAM,
    OLDEST,
    RUNTIMES,
    SCHEMA_ID,
    TOP,
    ZERO,
    Key,
    canonical_path,
    installed_version,
    iter_keys,
    lookup,
)
from accelconf.deepspeed.path import config_file_path

__all__ = [
    "BF16",
    "FP16",
    "NEWEST",
    "OFFLOAD_OPTIMIZER",
    "OFFLOAD_PARAM",
    "OLDEST",
    "RULES",
    "RUNTIMES",
    "SCHEMA_ID",
    "TOP",
    "ZERO",
    "Key",
    "canonical_path",
    "config_file_path",
    "installed_version",
    "iter_keys",
    "lookup",
    "_UNSET",
]


def __getattr__(name: str) -> tuple[str, ...]:
    """``RULES``: every rule id this package reports (the catalogue's deepspeed area), read when
    asked for: loading the catalogue at import would cost every command's start-up."""
    if name == "RULES":
        return tuple(sorted(catalogue.ids("deepspeed")))
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
