"""Where tensors were made: a table from tensor identity to origin that holds the tensors
only weakly, and the open `inference_mode` regions of each thread.

Tensors compare element-wise, so they cannot be dictionary keys by value (and a
`weakref.WeakKeyDictionary` compares referents on a hash collision). The table is keyed
by `id(tensor)`; each entry holds a weak reference whose callback removes the entry when
the tensor is freed, before its id can be reused. Nothing is set on the tensor.
"""
from __future__ import annotations

import threading
import weakref
from typing import Dict, Iterator, List, Optional, Tuple

from gradlint.trace.frames import Place, decorator_line, place, with_statement_line


class Region:
    """An `inference_mode` region: a `with` statement (the frame's code and the line it
    entered at) or a decorated function (its code object)."""

    __slots__ = ("code", "line", "decorated")

    def __init__(self, code, line: int, decorated: bool):
        self.code = code
        self.line = line
        self.decorated = decorated

    def place(self) -> Place:
        found = place(self.code, self.line)
        if self.decorated:
            line = decorator_line(found.file, self.code.co_firstlineno, self.code.co_name)
        else:
            line = with_statement_line(found.file, self.line)
        return Place(found.file, line, found.function)


class Origin:
    """Where a tensor was made: the innermost frame of the program, the region, and the
    program's frames between the region's frame and that one, outermost first."""

    __slots__ = ("code", "line", "region", "chain")

    def __init__(self, code, line: int, region: Optional[Region],
                 chain: Tuple[Tuple[object, int], ...]):
        self.code = code
        self.line = line
        self.region = region
        self.chain = chain

    def place(self) -> Place:
        return place(self.code, self.line)


class _TensorRef(weakref.ref):
    __slots__ = ("key",)


class OriginTable:
    def __init__(self) -> None:
        self.entries: Dict[int, Tuple[_TensorRef, Origin]] = {}

    def __len__(self) -> int:
        return len(self.entries)

    def get(self, tensor) -> Optional[Origin]:
        entry = self.entries.get(id(tensor))
        if entry is not None and entry[0]() is tensor:
            return entry[1]
        return None

    def add(self, tensor, origin: Origin) -> None:
        ref = _TensorRef(tensor, self._forget)
        ref.key = id(tensor)
        self.entries[ref.key] = (ref, origin)

    def forget(self, tensor) -> None:
        entry = self.entries.get(id(tensor))
        if entry is not None and entry[0]() is tensor:
            del self.entries[id(tensor)]

    def _forget(self, ref: _TensorRef) -> None:
        entry = self.entries.get(ref.key)
        if entry is not None and entry[0] is ref:
            del self.entries[ref.key]

    def live(self) -> Iterator[Tuple[object, Origin]]:
        for ref, origin in list(self.entries.values()):
            tensor = ref()
            if tensor is not None:
                yield tensor, origin


class RegionStacks(threading.local):
    """The `inference_mode` objects entered and not yet exited, per thread: (the context
    manager, its Region or None for `inference_mode(False)`, the frame that entered it)."""

    def __init__(self) -> None:
        self.open: List[Tuple[object, Optional[Region], object]] = []

    def push(self, manager, region: Optional[Region], frame) -> None:
        self.open.append((manager, region, frame))

    def pop(self, manager) -> None:
        for index in range(len(self.open) - 1, -1, -1):
            if self.open[index][0] is manager:
                del self.open[index]
                return

    def innermost(self):
        return self.open[-1] if self.open else None
