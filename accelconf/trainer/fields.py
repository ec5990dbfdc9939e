"""What ``TrainingArguments`` (and TRL's config classes) take, for the readers and rules: names,
types, choices, removed fields, ``fsdp_config`` keys. The facts live in :mod:`accelconf.trainer.releases`
(generated from each release's own dataclasses); this module only asks it the rules' questions.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import cache
from typing import Any

from accelconf.trainer import releases


def version(requested: str | None = None) -> str:
    """The transformers release judged (its minor): the one asked for, else the installed one."""
    return releases.resolve(requested)


@cache
def names(requested: str | None = None) -> frozenset[str]:
    """The fields an arguments file of that release may hold (``Seq2SeqTrainingArguments``'s)."""
    return frozenset(releases.fields(requested))


@cache
def trl_names(trl_version: str | None = None) -> frozenset[str]:
    """Every field any TRL config class of that TRL release adds (an arguments file may be for any)."""
    out: set[str] = set()
    for cls in releases.trl_classes(trl_version):
        out |= set(releases.trl_fields(cls, trl_version))
    return frozenset(out)


def class_fields(cls: str, requested: str | None = None, trl_version: str | None = None) -> Mapping[str, Any] | None:
    """The fields of a named arguments class (``TrainingArguments``, ``SFTConfig``); None for a
    class the data does not hold."""
    if cls in (releases.BASE_CLASS, releases.SEQ2SEQ_CLASS):
        return releases.fields(requested, cls)
    try:
        return releases.trl_fields(cls, trl_version)
    except KeyError:
        return None


def trl_classes_for(
    keys: Iterable[str], requested: str | None = None, trl_version: str | None = None
) -> tuple[str, ...]:
    """The TRL config classes an arguments file holding ``keys`` is for: those of that TRL release
    taking every key the transformers release's own classes do not, when there is one such key
    (a file of TrainingArguments fields alone is for no TRL class in particular)."""
    extra = set(keys) - names(requested)
    if not extra:
        return ()
    return tuple(c for c in releases.trl_classes(trl_version) if extra <= set(releases.trl_fields(c, trl_version)))


def types(requested: str | None = None) -> dict[str, str]:
    """Field name -> base type (``bool``, ``int``, ``float``, ``enum``, ``str``, ``dict`` ...)."""
    return {n: f.base_type for n, f in releases.fields(requested).items()}


def choices(name: str, requested: str | None = None) -> tuple[Any, ...] | None:
    f = releases.fields(requested).get(name)
    return f.choices if f is not None else None


def removed(name: str, requested: str | None = None) -> str | None:
    """The first transformers release without ``name``, when a known release had it."""
    got = releases.removed(name)
    return got[1] if got else None


def fsdp_keys(requested: str | None = None) -> frozenset[str]:
    return releases.fsdp_config_keys(requested)


# The FSDP1-only keys of ``fsdp_config`` (TrainingArguments._process_fsdp_args: only the version-1
# branch reads them); the tests compare this with the release's own plugin arguments.
FSDP1_ONLY = frozenset(
    {"forward_prefetch", "backward_prefetch", "use_orig_params", "sync_module_states", "limit_all_gathers"}
)


__all__ = [
    "FSDP1_ONLY",
    "choices",
    "class_fields",
    "fsdp_keys",
    "names",
    "removed",
    "trl_classes_for",
    "trl_names",
    "types",
    "version",
]
