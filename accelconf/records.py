"""The base of the mutable value classes every command builds (a document, its nodes, a config,
its entries, a launch): equality and repr over the fields a class names, as ``@dataclass`` gave.

Those classes are on the start-up path of every command, and ``dataclasses`` is not cheap there:
importing it imports ``inspect`` (and ``ast``, ``dis``, ``tokenize``), about 7 ms, and each class it
decorates compiles its methods, about 0.4 ms more. A class here writes its own ``__init__``. Frozen
value classes are ``typing.NamedTuple`` instead; :class:`accelconf.findings.Finding` is its own.
"""

from __future__ import annotations

from typing import Any, ClassVar


class Record:
    """Fields named by ``_fields`` (in order), compared by ``==`` in that order and shown by ``repr``;
    a field in ``_unshown`` is left out of both (it holds a large or circular object). Mutable, hence
    unhashable, as a ``@dataclass`` with ``eq=True``."""

    _fields: ClassVar[tuple[str, ...]] = ()
    _unshown: ClassVar[frozenset[str]] = frozenset()
    __hash__: ClassVar[Any] = None  # mutable

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self._fields if name not in self._unshown)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() == other._values()

    def __repr__(self) -> str:
        shown = (f"{name}={getattr(self, name)!r}" for name in self._fields if name not in self._unshown)
        return f"{type(self).__qualname__}({', '.join(shown)})"
