"""What the flow computes once per file and keeps on the object it is about (the outline,
the module's flow), so that the rules and passes that ask again get the same answer."""
from __future__ import annotations

from typing import Callable, TypeVar

Value = TypeVar("Value")


def kept_on(owner: object, name: str, make: Callable[[], Value]) -> Value:
    """`owner`'s value called `name`, made by `make()` the first time it is asked."""
    found = owner.__dict__.get(name)
    if found is None:
        found = owner.__dict__[name] = make()
    return found
