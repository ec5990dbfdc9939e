"""Reading the two inputs of a diff and choosing the comparison: accelerate config against
accelerate config, DeepSpeed JSON against DeepSpeed JSON, or one of each.

This module owns telling the two apart for a diff (:func:`read_side`); reading a format is
:mod:`accelconf.formats`'s job.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from accelconf.accelerate.model import Config
from accelconf.diff.configs import diff
from accelconf.diff.deepspeed import diff_accelerate_deepspeed, diff_deepspeed
from accelconf.diff.result import DiffResult
from accelconf.errors import InputError
from accelconf.formats import read
from accelconf.kinds import is_deepspeed_data
from accelconf.text.document import decode, load_file, load_text, read_bytes


@dataclass
class Side:
    """One input of a diff: an accelerate :class:`Config`, or a DeepSpeed JSON document."""

    path: str
    config: Config | None = None
    document: Any = None  # accelconf.text.document.Document for DeepSpeed JSON

    @property
    def is_deepspeed(self) -> bool:
        return self.config is None


def read_side(path: str | os.PathLike[str], version: str | None = None, text: str | None = None) -> Side:
    """Read one input in any format: yaml, json, env, cli, kwargs, or DeepSpeed JSON.

    Raises :class:`accelconf.errors.InputError` for unreadable input.
    """
    p = os.fspath(path)
    try:
        doc = load_file(p) if text is None else load_text(text, p)
    except Exception:  # noqa: BLE001 - maybe an env, cli or kwargs text: the formats reader decides
        doc = None
    if doc is not None and is_deepspeed_data(doc.data):
        return Side(p, None, doc)
    if doc is not None and doc.format in ("yaml", "json") and _yaml_or_json_name(p) and not isinstance(doc.data, dict):
        what = "empty" if doc.data is None else f"a {type(doc.data).__name__}, not a mapping of settings"
        raise InputError(f"the document is {what}", p)
    return Side(p, _read(p, version, text), None)


def _yaml_or_json_name(path: str) -> bool:
    return os.path.splitext(path)[1].lower() in (".yaml", ".yml", ".json")


def _read(path: str, version: str | None = None, text: str | None = None) -> Config:
    """A Config from a file in any readable format (:func:`accelconf.formats.read`)."""
    if text is None:
        text, _ = decode(read_bytes(path), path)
    return read(text, path=path, version=version)  # every reader sets the Config's source to the path


def diff_files(
    a: str | os.PathLike[str], b: str | os.PathLike[str], *, version: str | None = None, ignore: Iterable[str] = ()
) -> DiffResult:
    """Read two files (any formats, DeepSpeed JSON too) and diff them."""
    sa, sb = read_side(a, version), read_side(b, version)
    return diff_sides(sa, sb, version=version, ignore=ignore)


def diff_sides(sa: Side, sb: Side, *, version: str | None = None, ignore: Iterable[str] = ()) -> DiffResult:
    """Diff two inputs read by :func:`read_side`, picking the right kind of comparison."""
    if sa.is_deepspeed and sb.is_deepspeed:
        return diff_deepspeed(sa.document, sb.document, ignore=ignore)
    if sa.is_deepspeed or sb.is_deepspeed:
        return diff_accelerate_deepspeed(
            sa.config if sa.config is not None else sa.document,
            sb.config if sb.config is not None else sb.document,
            version=version,
            ignore=ignore,
        )
    assert sa.config is not None and sb.config is not None
    return diff(sa.config, sb.config, version=version, ignore=ignore)
