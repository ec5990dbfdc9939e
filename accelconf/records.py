"""The base of the mutable value classes every command builds (a document, its nodes, a config,
its entries, a launch): equality and repr over the fields a class names, as ``@dataclass`` gave.

Those classes are on the start-up path of every command, and ``dataclasses`` is not cheap there:
importing it imports ``inspect`` (and ``ast``, ``dis``, ``tokenize``), about 7 ms, and each class it
decorates compiles its methods, about 0.4 ms more. A class here writes its own ``__init__``. Frozen
value classes are ``typing.NamedTuple`` instead; :class:`accelconf.findings.Finding` is its own.
"""

from __future__ import annotations

from typing import Any, ClassVar, TypeVar


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

    def as_dict(self) -> dict[str, Any]:
        """Field name -> value, every field (``dataclasses.asdict`` of a record that holds no records)."""
        return {name: getattr(self, name) for name in self._fields}

    def __repr__(self) -> str:
        shown = (f"{name}={getattr(self, name)!r}" for name in self._fields if name not in self._unshown)
        return f"{type(self).__qualname__}({', '.join(shown)})"


_Frozen = TypeVar("_Frozen", bound="FrozenRecord")


class FrozenRecord(Record):
    """A :class:`Record` whose fields ``__init__`` sets once (through :meth:`_set`) and nothing
    changes after: equal and hashed on its fields, as a frozen dataclass; :meth:`replace` makes a
    changed copy (``dataclasses.replace``). Not a ``NamedTuple`` where the value must not pass for
    a tuple (readers that walk tuples of values meet it)."""

    def _set(self, **values: Any) -> None:
        self.__dict__.update(values)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"cannot assign to field {name!r}: a {type(self).__name__} is frozen")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r}: a {type(self).__name__} is frozen")

    def __hash__(self) -> int:
        return hash(self._values())

    def replace(self: _Frozen, **changes: Any) -> _Frozen:
        """A copy with the fields named changed; ``__init__`` takes every field by its name."""
        return type(self)(**{**{name: getattr(self, name) for name in self._fields}, **changes})
