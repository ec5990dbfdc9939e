"""Two accelerate configs compared, each with the DeepSpeed JSON file it names.

The one entry point that composes both halves of the package: :mod:`~accelconf.diff.accelerate`
compares the settings of two sides, :mod:`~accelconf.diff.deepspeed` reads each side's
``deepspeed_config_file`` and adds what those files change. It sits above both so neither
imports the other back.
"""

from __future__ import annotations

from collections.abc import Iterable

from accelconf.accelerate import registry
from accelconf.accelerate.model import Config
from accelconf.diff.accelerate import _diff, _Side
from accelconf.diff.deepspeed import add_file_changes, with_deepspeed_files
from accelconf.diff.result import DiffResult


def diff(a: Config, b: Config, *, version: str | None = None, ignore: Iterable[str] = ()) -> DiffResult:
    """What A and B mean differently for accelerate ``version`` (see the module docstring)."""
    ver = registry.resolve_version(version)
    sa, sb = with_deepspeed_files(_Side(a, ver), _Side(b, ver))
    result = _diff(sa, sb, ver, tuple(ignore))
    add_file_changes(result, sa, sb, tuple(ignore))
    return result
