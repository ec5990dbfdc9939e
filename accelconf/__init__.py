"""accelconf: check, compare and convert Hugging Face Accelerate, FSDP and DeepSpeed configs.

The public API. Names are imported lazily so that ``import accelconf`` stays fast::

    >>> import accelconf
    >>> doc = accelconf.loads("distributed_type: MULTI_GPU\\nnum_processes: 2\\nmixed_precision: no\\n")
    >>> [f.rule for f in accelconf.validate_config(doc) if f.severity == "error"]
    ['yaml-bool-value']
    >>> accelconf.format_text("distributed_type: multi_gpu\\nnum_processes: 2\\n")
    'distributed_type: MULTI_GPU\\nnum_processes: 2\\n'
"""

from __future__ import annotations

from typing import Any

__version__ = "0.2.0"

_LAZY: dict[str, tuple[str, str]] = {
    "AccelconfError": ("accelconf.errors", "AccelconfError"),
    "Config": ("accelconf.accelerate.model", "Config"),
    "Document": ("accelconf.text.document", "Document"),
    "Environment": ("accelconf.environment.probe", "Environment"),
    "Finding": ("accelconf.findings", "Finding"),
    "InputError": ("accelconf.errors", "InputError"),
    "Setting": ("accelconf.accelerate.registry", "Setting"),
    "UsageError": ("accelconf.errors", "UsageError"),
    "accelerate_schema": ("accelconf.accelerate.schema", "accelerate_schema"),
    "check_config": ("accelconf.api", "check_config"),
    "convert": ("accelconf.api", "convert"),
    "detect_environment": ("accelconf.environment.probe", "probe"),
    "diff_configs": ("accelconf.api", "diff_configs"),
    "estimate_memory": ("accelconf.api", "estimate_memory"),
    "explain": ("accelconf.api", "explain"),
    "fit": ("accelconf.api", "fit"),
    "format_text": ("accelconf.accelerate.fmt", "format_text"),
    "load": ("accelconf.text.document", "load_file"),
    "load_target": ("accelconf.environment.targets", "load_target"),
    "loads": ("accelconf.text.document", "load_text"),
    "migrate_text": ("accelconf.accelerate.migrate", "migrate_text"),
    "read_config": ("accelconf.api", "read_config"),
    "recognise": ("accelconf.kinds", "recognise"),
    "target_from_args": ("accelconf.environment.targets", "target_from_args"),
    "trainer_runs": ("accelconf.api", "trainer_runs"),
    "validate_config": ("accelconf.api", "validate_config"),
}

__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    try:
        module, attr = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'accelconf' has no attribute {name!r}") from None
    import importlib

    value = getattr(importlib.import_module(module), attr)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(list(globals()) + __all__)
