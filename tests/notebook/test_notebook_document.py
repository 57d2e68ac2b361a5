"""The notebook JSON reader and writer against the standard library, over notebooks of
any layout: the sources read are the ones `json.loads` sees, and replacing some cell
sources changes exactly those in what `json.loads` sees of the result."""
from __future__ import annotations

import json

from hypothesis import given, settings, strategies as st

from gradlint.notebook.document import read_notebook
from gradlint.notebook.magics import split_lines

_LINE = st.text(alphabet=st.sampled_from(list('ab "\\\t/é€😀\x00\x7f{}[],:') + ["\u2028"]), max_size=8)
_SOURCE_LINES = st.lists(st.tuples(_LINE, st.sampled_from(["\n", "\r\n", ""])), max_size=4).map(
    lambda pairs: [text + ending for text, ending in pairs])
_CELL = st.fixed_dictionaries({
    "cell_type": st.sampled_from(["code", "markdown", "raw"]),
    "metadata": st.sampled_from([{}, {"tags": ["x"]}, {"source": "not this one"}]),
    "source": st.one_of(_SOURCE_LINES, _LINE),
    "outputs": st.sampled_from([[], [{"output_type": "stream", "text": ["\"source\": [\n"]}]]),
})
_LAYOUT = st.fixed_dictionaries({
    "indent": st.sampled_from([None, 0, 1, 2, "\t"]),
    "ensure_ascii": st.booleans(),
    "sort_keys": st.booleans(),
    "separators": st.sampled_from([None, (",", ":"), (", ", ": ")]),
})


@settings(max_examples=200, deadline=None)
@given(st.lists(_CELL, max_size=5), _LAYOUT, st.data())
def test_replaced_sources_are_all_that_changes(cells, layout, data):
    document = {"metadata": {"kernelspec": {"language": "python"}}, "nbformat": 4, "cells": cells}
    text = json.dumps(document, **layout) + data.draw(st.sampled_from(["", "\n"]))
    notebook = read_notebook(text)
    assert [(cell.cell_type, cell.source) for cell in notebook.cells] == [
        (cell["cell_type"], cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"]))
        for cell in cells]

    new_sources = {index: data.draw(_LINE, label=f"cell {index}") + "\nx = 1"
                   for index in data.draw(st.sets(st.integers(0, max(0, len(cells) - 1))))
                   if index < len(cells)}
    written = notebook.with_sources(new_sources)
    expected = json.loads(text)
    for index, source in new_sources.items():
        old = expected["cells"][index]["source"]
        if source != (old if isinstance(old, str) else "".join(old)):
            expected["cells"][index]["source"] = source if isinstance(old, str) else split_lines(source)
    assert json.loads(written) == expected
    if not new_sources:
        assert written == text


def test_unchanged_lines_keep_their_spelling_and_the_list_its_layout():
    text = ('{"cells": [\n  {"cell_type": "code", "source": [\n      "caf\\u00e9 = 1\\n",\n'
            '      "x = 2"\n    ]}\n]}\n')
    notebook = read_notebook(text)
    written = notebook.with_sources({0: "café = 1\ny = 3\n"})
    assert written == ('{"cells": [\n  {"cell_type": "code", "source": [\n      "caf\\u00e9 = 1\\n",\n'
                       '      "y = 3\\n"\n    ]}\n]}\n')
