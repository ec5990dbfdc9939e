"""Scalars as accelerate reads and writes them: the YAML 1.1 reader PyYAML ``safe_load`` applies to a
plain scalar (what accelerate sees: an unquoted ``no`` is ``False``), the YAML 1.2 reader most
editors apply, and the one writer that spells a value so that both read it back unchanged.

Every module that writes a scalar into YAML (validate's and migrate's fixes, editor help, the
YAML writer of :mod:`accelconf.formats.yamljson`) calls :func:`yaml_scalar`; nothing here knows a setting.
"""

from __future__ import annotations

import math
import re
from typing import Any

# PyYAML's YAML 1.1 implicit resolvers (yaml/resolver.py), which accelerate's safe_load uses.
_Y11_BOOL = re.compile(r"^(?:yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF)$")
_Y11_INT = re.compile(
    r"^(?:[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)$"
)
_Y11_FLOAT = re.compile(
    r"^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?"
    r"|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"
)
_Y11_NULL = re.compile(r"^(?:~|null|Null|NULL|)$")
# YAML 1.2 core schema (what ruamel.yaml and most editors read).
_Y12_BOOL = re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$")
_Y12_INT = re.compile(r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$")
_Y12_FLOAT = re.compile(
    r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"
)
_Y12_NULL = re.compile(r"^(?:~|null|Null|NULL|)$")


def _y11_int(raw: str) -> int:
    s = raw.replace("_", "")
    sign = -1 if s.startswith("-") else 1
    s = s.lstrip("+-")
    if s == "0":
        return 0
    if s.startswith("0b"):
        return sign * int(s[2:], 2)
    if s.startswith("0x"):
        return sign * int(s[2:], 16)
    if s.startswith("0"):
        return sign * int(s, 8)
    if ":" in s:
        value = 0
        for part in s.split(":"):
            value = value * 60 + int(part)
        return sign * value
    return sign * int(s)


def _y11_float(raw: str) -> float:
    s = raw.replace("_", "").lower()
    if s.endswith(".inf"):
        return -math.inf if s.startswith("-") else math.inf
    if s.endswith(".nan"):
        return math.nan
    if ":" in s:
        sign = -1.0 if s.startswith("-") else 1.0
        value = 0.0
        for part in s.lstrip("+-").split(":"):
            value = value * 60 + float(part)
        return sign * value
    return float(s)


def resolve_yaml11(raw: str) -> Any:
    """The value PyYAML ``safe_load`` gives an unquoted plain scalar."""
    if _Y11_NULL.match(raw):
        return None
    if _Y11_BOOL.match(raw):
        return raw.lower() in ("yes", "true", "on")
    if _Y11_INT.match(raw):
        return _y11_int(raw)
    if _Y11_FLOAT.match(raw):
        return _y11_float(raw)
    return raw


def resolve_yaml12(raw: str) -> Any:
    """The value a YAML 1.2 core-schema reader gives an unquoted plain scalar."""
    if _Y12_NULL.match(raw):
        return None
    if _Y12_BOOL.match(raw):
        return raw.lower() == "true"
    if _Y12_INT.match(raw):
        if raw.startswith("0o"):
            return int(raw[2:], 8)
        if raw.startswith("0x"):
            return int(raw[2:], 16)
        return int(raw)
    if _Y12_FLOAT.match(raw):
        return _y11_float(raw)
    return raw


# Plain (unquoted) only for these characters: enough for names, class lists and paths, and
# nothing PyYAML's scanner treats specially in block or flow context (``,`` only in block context).
_PLAIN = re.compile(r"^[A-Za-z0-9_./][A-Za-z0-9_ ,./+=@()'-]*$")


def plain_ok(s: str, *, flow: bool = False) -> bool:
    """Whether ``s`` can be written unquoted and be read back as this string by YAML 1.1 and 1.2
    readers (``flow``: inside ``{...}`` or ``[...]``, where ``,`` ends a scalar)."""
    if not _PLAIN.match(s) or s.endswith(" ") or (flow and "," in s):
        return False
    return bool(resolve_yaml11(s) == s and resolve_yaml12(s) == s)


def yaml_scalar(value: Any, *, quote: str | None = None, flow: bool = False) -> str:
    """How ``value`` is written in YAML so that accelerate (YAML 1.1) and YAML 1.2 readers read it back
    as is: plain when that is safe, else quoted (``quote``: ``'`` or ``"`` to keep a style;
    single quotes by default)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, float) and not math.isfinite(value):
        return ".nan" if math.isnan(value) else (".inf" if value > 0 else "-.inf")
    if isinstance(value, float):
        text = repr(value)
        if "e" in text and "." not in text:  # YAML 1.1 needs a dot: 1e-05 would be a string to PyYAML
            mantissa, exponent = text.split("e")
            text = f"{mantissa}.0e{exponent}"
        return text
    if isinstance(value, int):
        return repr(value)
    s = str(value)
    if quote not in ("'", '"') and plain_ok(s, flow=flow):
        return s
    if quote == '"':
        import json  # json loads when a command writes or parses JSON, not on `to-env` of a YAML config

        return json.dumps(s)
    return "'" + s.replace("'", "''") + "'"


def json_scalar(value: Any) -> str:
    """A JSON literal."""
    import json  # json loads when a command writes or parses JSON, not on `to-env` of a YAML config

    return json.dumps(value)
