"""Binary search with a hint: queries that come in order (findings by offset, guards by
position) ask about the same place as the last one or the next, so trying the hint and
the place after it first answers them without a search, and a file with many of them
costs the same per query as a file with few."""
from __future__ import annotations

import bisect

TYPE_CHECKING = False  # typing's names only annotate here: not imported at run time
if TYPE_CHECKING:
    from typing import Sequence


def bisect_right_near(values: Sequence[int], value: int, hint: int) -> int:
    """`bisect.bisect_right(values, value)`, trying `hint` and `hint + 1` first."""
    size = len(values)
    for index in (hint, hint + 1):
        if 0 <= index <= size and (index == 0 or values[index - 1] <= value) and (index == size or value < values[index]):
            return index
    return bisect.bisect_right(values, value)


def bisect_left_near(values: Sequence[int], value: int, hint: int) -> int:
    """`bisect.bisect_left(values, value)`, trying `hint` and `hint + 1` first."""
    size = len(values)
    for index in (hint, hint + 1):
        if 0 <= index <= size and (index == 0 or values[index - 1] < value) and (index == size or value <= values[index]):
            return index
    return bisect.bisect_left(values, value)
