"""The defaults of a DeepSpeed pydantic config model that the key table can be compared with.

Shared by the installed-DeepSpeed oracle (tests/oracle/test_deepspeed_oracle.py) and the per-release
worker (tests/oracle/deepspeed_release_worker.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from enum import Enum
from typing import Any


def comparable_defaults(model: Any, section: Any) -> Iterator[tuple[str, Any, Any]]:
    """``(field name, table Key, DeepSpeed's default)`` for each scalar field of ``model`` that the
    table ``section`` has; skips fields without a default, sections, open (kwargs) keys and defaults
    that are not JSON values (torch dtypes, models)."""
    from pydantic_core import PydanticUndefined

    for name, info in model.model_fields.items():
        key = section.children.get(info.alias or name) or section.children.get(name)
        default = info.default
        if default is PydanticUndefined or key is None or key.children is not None or key.open:
            continue
        if isinstance(default, Enum):
            default = default.value
        if isinstance(default, (bool, int, float, str, type(None), list)):
            yield name, key, default
