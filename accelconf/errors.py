"""The one exception tree of accelconf.

    AccelconfError
    ├── InputError          a file or text could not be read or parsed (exit code 2)
    └── UsageError          a command was called with arguments that make no sense (exit code 2)

Problems *inside* a configuration are not exceptions: they are :class:`accelconf.findings.Finding`
values returned as data. Exceptions from third-party libraries are translated at the boundary
where they are raised, with ``raise ... from exc``.
"""

from __future__ import annotations


class AccelconfError(Exception):
    """Base class of every error accelconf raises on purpose."""


class InputError(AccelconfError):
    """A document could not be read or parsed.

    ``line`` and ``column`` are 1-based; 0 means the position is unknown.
    """

    def __init__(self, message: str, path: str = "<text>", line: int = 0, column: int = 0) -> None:
        super().__init__(message)
        self.message = message
        self.path = path
        self.line = line
        self.column = column

    def __str__(self) -> str:
        if self.line:
            return f"{self.path}:{self.line}:{self.column}: {self.message}"
        return f"{self.path}: {self.message}"


class UsageError(AccelconfError):
    """The caller asked for something impossible (unknown format, bad option value)."""
