"""What ``TrainingArguments`` takes, for the readers and rules: names, types, removed fields.

The facts live in the releases data (:mod:`accelconf.trainer.releases`, generated from each
transformers release); where that data is not present the recogniser's field list
(:mod:`accelconf.kinds.trainer_fields`) gives the names alone, and no type is judged.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from accelconf.kinds import trainer_fields


def _releases() -> Any:
    try:
        from accelconf.trainer import releases  # type: ignore[attr-defined]
    except ImportError:
        return None
    return releases


@lru_cache(maxsize=None)
def names(version: str | None = None) -> frozenset[str]:
    """The ``TrainingArguments`` field names of a transformers release (default: the installed one)."""
    rel = _releases()
    if rel is not None:
        got = _call(rel, "field_names", version)
        if got:
            return frozenset(got)
    return trainer_fields.FIELDS


def version(requested: str | None = None) -> str:
    """The transformers release judged: the one asked for, else the one the field data describes."""
    return requested or trainer_fields.VERSION


@lru_cache(maxsize=None)
def types(version: str | None = None) -> dict[str, str]:
    """Field name -> type (``bool``, ``int``, ``float``, ``str``, ``dict``, ``list``, ``optional bool`` ...);
    empty when no releases data is present."""
    rel = _releases()
    if rel is None:
        return {}
    got = _call(rel, "field_types", version)
    return dict(got or {})


def removed(name: str, version: str | None = None) -> str | None:
    """The transformers release that removed ``name`` (``"5.0"``), when it was a field once."""
    rel = _releases()
    if rel is None:
        return None
    got = _call(rel, "removed_in", name, version)
    return str(got) if got else None


def _call(mod: Any, fn: str, *args: Any) -> Any:
    f = getattr(mod, fn, None)
    if f is None:
        return None
    try:
        return f(*args)
    except (KeyError, ValueError, TypeError):
        return None


# The FSDP1-only and FSDP2-only keys of ``fsdp_config`` (TrainingArguments._process_fsdp_args:
# only the version's branch reads them); the others are read by both.
FSDP1_ONLY = frozenset({"forward_prefetch", "backward_prefetch", "use_orig_params", "sync_module_states", "limit_all_gathers"})
FSDP_KEYS = trainer_fields.FSDP_CONFIG_KEYS


__all__ = ["FSDP1_ONLY", "FSDP_KEYS", "names", "removed", "types", "version"]
