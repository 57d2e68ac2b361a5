"""Equality, hashing and repr by field, as `@dataclass` gives them, for the classes every run
makes: a dataclass compiles its methods at every start (about 1 ms a class here, a third
of a small run's start-up for 18 of them), these are compiled once with the package.
A subclass writes its `__init__`; its parameters, in order, are the fields."""
from __future__ import annotations


class Record:
    """A mutable record: equal to another of its class with equal fields, so unhashable.
    `__init__` sets the fields through `_set`."""

    _fields: tuple = ()

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        init = cls.__dict__.get("__init__")
        if init is not None:
            code = init.__code__
            cls._fields = code.co_varnames[1:code.co_argcount + code.co_kwonlyargcount]

    def _set(self, **values) -> None:
        self.__dict__.update(values)  # not through __setattr__: a frozen record's refuses

    def replaced(self, **changes):
        """A copy with `changes` (`dataclasses.replace`)."""
        return type(self)(**{**{name: getattr(self, name) for name in self._fields}, **changes})

    def _values(self) -> tuple:
        return tuple(getattr(self, name) for name in self._fields)

    def __eq__(self, other):
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() == other._values()

    __hash__ = None

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._fields)
        return f"{type(self).__qualname__}({fields})"


class FrozenRecord(Record):
    """A record whose fields are set once, in `__init__`; hashable."""

    def __hash__(self) -> int:
        return hash(self._values())

    def __setattr__(self, name, value):
        raise AttributeError(f"cannot assign to field {name!r}")

    def __delattr__(self, name):
        raise AttributeError(f"cannot delete field {name!r}")


def named_tuple(cls):
    """The class as `typing.NamedTuple` makes it (its annotated names the fields, in order,
    their values the defaults), without the check typing runs on each annotation: under
    `from __future__ import annotations` it compiles every one (~1M instructions a field,
    a tenth of a small run's start-up for the diagnostics' 45)."""
    from collections import namedtuple

    fields = tuple(cls.__dict__.get("__annotations__", {}))
    defaults = []
    for name in fields:
        if name in cls.__dict__:
            defaults.append(cls.__dict__[name])
        elif defaults:
            raise TypeError(f"Non-default namedtuple field {name} cannot follow default field(s)")
    base = namedtuple(cls.__name__, fields, defaults=defaults, module=cls.__module__)
    namespace = {name: value for name, value in cls.__dict__.items()
                 if name not in fields and name not in ("__dict__", "__weakref__")}
    namespace["__slots__"] = ()
    return type(cls.__name__, (base,), namespace)
