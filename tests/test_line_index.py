"""LineIndex answers positions the same whatever order offsets are asked in (it keeps the
line asked last to answer findings that come in order without a search), and the searches
with a hint (gradlint.ordered) agree with bisect for every hint."""
import random

import pytest

from gradlint.diagnostics import LineIndex

TEXTS = ["", "a", "a\n", "a\nb", "\n\n\n", "ab\r\ncd\rxy\n\nz", "x = 1\n" * 40 + "tail", "é\r\n\r\nü"]


def _expected(text: str, offset: int):
    """Line and column counted by hand: 1-based, CR, LF and CRLF ending lines."""
    offset = max(0, min(offset, len(text)))
    line, line_start, index = 1, 0, 0
    while index < offset:
        if text[index] == "\r" and text[index + 1:index + 2] == "\n":
            if index + 1 >= offset:
                break
            index += 1
        if text[index] in "\r\n":
            line, line_start = line + 1, index + 1
        index += 1
    return line, offset - line_start + 1


@pytest.mark.parametrize("text", TEXTS)
@pytest.mark.parametrize("order", ["forward", "backward", "shuffled"])
def test_positions_do_not_depend_on_the_order_asked(text, order):
    offsets = list(range(-2, len(text) + 3))
    if order == "backward":
        offsets.reverse()
    elif order == "shuffled":
        offsets = random.Random(7).sample(offsets, len(offsets)) * 2
    index = LineIndex(text)
    for offset in offsets:
        position = index.position(offset)
        assert (position.line, position.column) == _expected(text, offset), (text, offset)


@pytest.mark.parametrize("values", [[], [5], [1, 3, 3, 3, 9], list(range(0, 60, 3))])
def test_searches_with_a_hint_agree_with_bisect(values):
    import bisect

    from gradlint.ordered import bisect_left_near, bisect_right_near

    for value in range(-2, 64):
        for hint in range(-1, len(values) + 3):
            assert bisect_right_near(values, value, hint) == bisect.bisect_right(values, value)
            assert bisect_left_near(values, value, hint) == bisect.bisect_left(values, value)


def test_line_starts_are_where_each_line_end_ends():
    """A text without CR takes the LF-only shortcut (its lines' lengths added up); every
    text gets the starts a search for CR, LF and CRLF gives."""
    import re

    rng = random.Random(7)
    texts = TEXTS + ["".join(rng.choice("ab\n\r \u2028\x0c") for _ in range(rng.randint(0, 40))) for _ in range(3000)]
    for text in texts:
        expected = [0] + [match.end() for match in re.finditer(r"\r\n|\r|\n", text)]
        assert LineIndex(text).starts == expected, repr(text)
