"""How DeepSpeed reads a JSON value: JSON types, pydantic v2 lax-mode coercion, and the few values
the cross-field rules need (the ZeRO stage, whether a block is enabled).

DeepSpeed's pydantic models (``deepspeed/runtime/config_utils.py`` ``DeepSpeedConfigModel``) run in
lax mode: ``"3"`` is an int, ``"yes"`` a bool. Hand-parsed sections (``get_scalar_param``) keep the
value as written. Nothing here knows a key name except :func:`_stage`.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

# pydantic-core's words for a boolean, matched in any case but not stripped (" yes" is refused)
_TRUE_STR = {"1", "on", "t", "true", "y", "yes"}
_FALSE_STR = {"0", "off", "f", "false", "n", "no"}
# pydantic-core's integer text, once stripped: ASCII digits, single underscores between them, and a
# fraction of zeros ("3.0", "1_0.00"); no exponent ("1e3"), no bare point ("3.")
_INT_TEXT = re.compile(r"[+-]?[0-9](?:_?[0-9])*(?:\.0+)?")


def _json_type(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int):
        return "integer"
    if isinstance(v, float):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    return "object"


def _strict_ok(v: Any, t: str) -> bool:
    jt = _json_type(v)
    if t == "number":
        return jt in ("integer", "number")
    if t == "integer":
        # pydantic converts integral floats only below 2**63 (int_parsing_size)
        return jt == "integer" or (jt == "number" and math.isfinite(v) and float(v).is_integer() and abs(v) < 2.0**63)
    return jt == t


def _lax_ok(v: Any, t: str) -> bool:
    """Whether pydantic v2's lax mode turns ``v`` into type ``t`` (what DeepSpeed's models accept)."""
    if _strict_ok(v, t):
        return True
    if t == "boolean":
        return lax_bool(v) is not None
    if t == "integer":
        return isinstance(v, bool) or isinstance(v, str) and _INT_TEXT.fullmatch(v.strip()) is not None
    if t == "number":
        return isinstance(v, bool) or _lax_num(v) is not None
    return False


def _coerce(v: Any, t: str) -> Any:
    """The value pydantic's lax mode produces (for range checks); ``v`` itself if unknown."""
    if t == "integer" and isinstance(v, str):
        s = v.strip()
        return int(s.partition(".")[0]) if _INT_TEXT.fullmatch(s) else v  # exact, however long
    if t == "number" and isinstance(v, str):
        n = _lax_num(v)
        return v if n is None else n
    if t in ("integer", "number") and isinstance(v, bool):
        return int(v)
    return v


def _fmt(v: Any) -> str:
    return json.dumps(v) if not isinstance(v, float) or math.isfinite(v) else str(v)


def _int_or_none(v: Any) -> int | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, float) and v.is_integer():
        return int(v)
    return None


def lax_bool(v: Any) -> bool | None:
    """The boolean pydantic's lax mode makes of ``v`` (None when it rejects it or it is "auto")."""
    if isinstance(v, bool):
        return v
    if isinstance(v, (int, float)) and v in (0, 1):
        return bool(v)
    if isinstance(v, str):
        low = v.lower()
        if low in _TRUE_STR:
            return True
        if low in _FALSE_STR:
            return False
    return None


def _lax_num(v: Any) -> float | None:
    """The number pydantic's lax mode makes of ``v`` (None when it rejects it)."""
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, str) and v.isascii():  # Python's float() takes other digits ("١"), pydantic does not
        try:
            return float(v)
        except ValueError:
            return None
    return None


def _enabled(block: Any) -> bool:
    if not isinstance(block, dict):
        return False
    return lax_bool(block.get("enabled")) is True


def _stage(data: dict[str, Any]) -> int | None:
    """The ZeRO stage DeepSpeed will use, or None when unknown ("auto" under accelerate)."""
    z = data.get("zero_optimization")
    if z is True:
        return 1
    if not isinstance(z, dict):
        return 0
    s = z.get("stage", 0)  # "auto" (and any other word) falls through to None
    if isinstance(s, bool):
        return int(s)
    if isinstance(s, (int, float)) and float(s).is_integer():
        return int(s)
    if isinstance(s, str) and s.strip().isdigit():
        return int(s.strip())
    return None
