"""torch knowledge is data (gradlint/knowledge/*.toml): every row cites a measured section
of docs/torch-semantics.md, and both languages read the rows."""
from __future__ import annotations

import os
import re

import pytest

from gradlint.cpp.model import CppFile
from gradlint.knowledge import cpp_guard_classes, names, rows, table, table_names
from gradlint.python.guards import STAR_EXPORTS, canonical_guard

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
with open(os.path.join(ROOT, "docs", "torch-semantics.md"), encoding="utf-8") as _handle:
    SECTIONS = set(re.findall(r"^#{2,3} (§\d+[a-z]?)\b", _handle.read(), re.MULTILINE))

ALL_ROWS = [(name, kind, index, row) for name in table_names() for kind, kind_rows in table(name).items()
            for index, row in enumerate(kind_rows)]


def test_the_tables_are_found():
    assert {"guards", "autograd_function"} <= set(table_names())
    assert len(ALL_ROWS) > 20


@pytest.mark.parametrize("name, kind, index, row", ALL_ROWS, ids=lambda value: str(value)[:40])
def test_every_row_cites_a_measured_section(name, kind, index, row):
    assert row.get("cites") in SECTIONS, f"{name}.toml {kind}[{index}] cites {row.get('cites')!r}"


def test_python_reads_every_guard_row():
    for row in rows("guards", "python_guard"):
        for qualified in row["names"]:
            assert canonical_guard(qualified) == row["kind"]
    assert set(STAR_EXPORTS["torch"]) == {row["kind"] for row in rows("guards", "python_guard") if row["star_exported"]}
    assert "set_grad_enabled" not in STAR_EXPORTS["torch"]


@pytest.mark.parametrize("guard_class", cpp_guard_classes())
def test_cpp_reads_every_guard_row(guard_class):
    file = CppFile("probe.cpp", f"void f() {{\n  at::{guard_class} guard;\n}}\n")
    assert [decl.guard for decl in file.guards] == [guard_class]


def test_autograd_function_rows_are_what_python_checks():
    assert "torch.autograd.Function" in names("autograd_function", "python_base")
    assert {"forward", "backward"} <= names("autograd_function", "python_method")
