"""Read fixtures: `fixtures/<language>/<CODE>/<case>.<ext>`, the expected findings
written next to the offending lines, the golden `<case>.fixed.<ext>` and the snapshot
`<case>.<ext>.snap` of the full output.

Expectation markers (a comment, `#` in Python and notebook cells, `//` in C++):
  `expect: GL402:10 "is the class"`   a finding of GL402 starting on this line at column 10
                                       (1-based, in characters) whose message contains the
                                       quoted fragment; several: `GL402:14 "...", GL402:33 "..."`
  `expect-next-line: GL101:3 "..."`   on a line of its own: the finding is on the next line
  `gradlint: unsafe-fixes`             anywhere: the golden file is the result of `fix --unsafe-fixes`
  `gradlint: select GL201,GL203`       anywhere: run these codes instead of just the folder's code
An expectation without its column and fragment is an error: pin what users see.
In a notebook the markers sit in code cells, and lines and columns count within the cell.

Snapshots hold every finding as `line:col CODE message`, its span, its fix's safety and
title; `python -m pytest tests/test_fixtures.py tests/notebook --update-snapshots` rewrites
them (review the diff).
"""
from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, replace
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

import pytest

from gradlint.diagnostics import Finding
from gradlint.engine import Linter
from gradlint.frontend import language_for
from gradlint.notebook.frontend import NOTEBOOK
from gradlint.settings import Settings, resolve_selection

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(ROOT, "fixtures")
NOTEBOOKS = os.path.join(FIXTURES, "notebook")
SNAPSHOT_SUFFIX = ".snap"
UPDATE_COMMAND = "python -m pytest tests/test_fixtures.py tests/notebook --update-snapshots"

_MARKER = re.compile(r"(?:#|//)\s*expect(?P<next>-next-line)?:\s*")
_PINNED = re.compile(r'\s*(?P<code>GL\d{3}):(?P<column>\d+)\s+"(?P<fragment>[^"\n]+)"\s*')
_SELECT = re.compile(r"(?:#|//)\s*gradlint:\s*select\s+(?P<codes>GL\d{3}(?:\s*,\s*GL\d{3})*)")
_UNSAFE = re.compile(r"(?:#|//)\s*gradlint:\s*unsafe-fixes\b")


def each_fixture(fixtures: Sequence) -> pytest.MarkDecorator:
    """Run a test once per fixture, each named by its id."""
    return pytest.mark.parametrize("fixture", fixtures, ids=[fixture.id for fixture in fixtures])


class ExpectationError(ValueError):
    """A marker that does not pin a column and a message fragment."""


@dataclass(frozen=True)
class Expectation:
    line: int
    code: str
    column: int
    fragment: str
    cell: Optional[int] = None  # notebooks: the 0-based cell index
    file: Optional[str] = None  # project fixtures: the module, relative to the fixture's folder

    def __str__(self) -> str:
        where = f"{self.file} " if self.file else ""
        return f'{where}{_place(self.cell, self.line)}: {self.code}:{self.column} "{self.fragment}"'

    def matches(self, finding) -> bool:
        return (finding.cell, finding.start.line, finding.code, finding.start.column) == \
            (self.cell, self.line, self.code, self.column) and self.fragment in finding.message \
            and (self.file is None or _relative_file(finding) == self.file)


def _relative_file(finding) -> Optional[str]:
    """A project fixture's finding: its module, relative to the fixture's folder (set by
    `project_findings`)."""
    return getattr(finding, "fixture_file", None)


def _place(cell: Optional[int], line: int) -> str:
    return f"cell {cell + 1} line {line}" if cell is not None else f"line {line}"


def parse_expectations(text: str, cell: Optional[int] = None) -> List[Expectation]:
    """The pinned expectations in `text`; raises `ExpectationError` for a marker that
    is not pinned (`expect: GL402` without `:column "fragment"`)."""
    found = []
    for number, line in enumerate(text.splitlines(), start=1):
        for marker in _MARKER.finditer(line):
            target = number + 1 if marker.group("next") else number
            position, items = marker.end(), []
            while True:
                item = _PINNED.match(line, position)
                if item is None:
                    break
                items.append(Expectation(target, item.group("code"), int(item.group("column")),
                                         item.group("fragment"), cell))
                position = item.end()
                if not line.startswith(",", position):
                    break
                position += 1
            if not items or re.match(r"\s*(?:,\s*)?GL\d{3}", line[position:]):
                raise ExpectationError(
                    f"{_place(cell, number)}: `{line.strip()}` does not pin the finding: write "
                    f'`expect: GLnnn:COLUMN "message fragment"` (CONTRIBUTING, Fixtures)')
            found.extend(items)
    return found


def mismatches(expected: Sequence[Expectation], findings: Iterable) -> List[str]:
    """What differs between the expectations and the findings, one line each ([] when equal)."""
    unmatched = list(findings)
    problems, missing = [], []
    for expectation in expected:
        match = next((finding for finding in unmatched if expectation.matches(finding)), None)
        if match is None:
            missing.append(expectation)
        else:
            unmatched.remove(match)
    for expectation in missing:
        near = [finding for finding in unmatched
                if (finding.cell, finding.start.line, finding.code) ==
                (expectation.cell, expectation.line, expectation.code)
                and (expectation.file is None or _relative_file(finding) == expectation.file)]
        got = "; got " + " | ".join(f"{finding.code}:{finding.start.column} {finding.message}"
                                    for finding in near) if near else ""
        problems.append(f"missing {expectation}{got}")
    problems.extend(f"unexpected {_relative_file(finding) or ''} {_place(finding.cell, finding.start.line)}: "
                    f"{finding.code}:{finding.start.column} {finding.message}" for finding in unmatched)
    return problems


def snapshot(findings: Iterable) -> str:
    """The full output users see, one finding per paragraph, in TorchFix's `line:col CODE message`."""
    lines = []
    for finding in findings:
        cell = f"cell {finding.cell + 1} " if finding.cell is not None else ""
        module = f"{_relative_file(finding)}:" if _relative_file(finding) else ""
        lines.append(f"{module}{cell}{finding.start.line}:{finding.start.column} {finding.code} {finding.message}")
        for place in getattr(finding, "related", ()) if module else ():  # across modules: where the notes point
            place_module = os.path.basename(place.path) if place.path else _relative_file(finding)
            lines.append(f"  note {place_module}:{place.start.line}:{place.start.column} {place.message}")
        lines.append(f"  span {finding.start.line}:{finding.start.column}-{finding.end.line}:{finding.end.column}")
        fix = finding.fix
        lines.append(f"  fix ({fix.safety.value}) {fix.title}" if fix is not None else "  no fix")
    return "\n".join(lines) + "\n" if lines else "no findings\n"


def check_snapshot(path: str, findings: Iterable, update: bool) -> Optional[str]:
    """Compare (or with `update`, write) the snapshot of `path`; the problem, or None."""
    snapshot_path = path + SNAPSHOT_SUFFIX
    actual = snapshot(findings)
    if update:
        with open(snapshot_path, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(actual)
        return None
    if not os.path.exists(snapshot_path):
        return f"no snapshot {os.path.relpath(snapshot_path, ROOT)}: run `{UPDATE_COMMAND}`"
    with open(snapshot_path, encoding="utf-8") as handle:
        recorded = handle.read()
    if recorded != actual:
        return (f"the output differs from {os.path.relpath(snapshot_path, ROOT)} (run `{UPDATE_COMMAND}` "
                f"and review the diff if the change is meant):\n--- recorded\n{recorded}+++ now\n{actual}")
    return None


def linter_for(fixture) -> Linter:
    """The linter a fixture runs under: its selection, and `--unsafe-fixes` when it says so."""
    return Linter(Settings(enabled=resolve_selection(list(fixture.selection()), [], []),
                           unsafe_fixes=fixture.unsafe_fixes))


def findings_of(fixture) -> list:
    """What `gradlint check` reports for the fixture (a notebook's positions are per cell)."""
    return linter_for(fixture).check_text(fixture.source, fixture.path, fixture.language)


def _codes(match) -> Tuple[str, ...]:
    return tuple(re.split(r"\s*,\s*", match.group("codes")))


@dataclass(frozen=True)
class Fixture:
    path: str
    code: str  # the folder's rule code

    @property
    def id(self) -> str:
        return os.path.relpath(self.path, FIXTURES)

    @property
    def fixed_path(self) -> str:
        stem, extension = os.path.splitext(self.path)
        return f"{stem}.fixed{extension}"

    @property
    def golden(self) -> Optional[str]:
        if not os.path.exists(self.fixed_path):
            return None
        with open(self.fixed_path, "rb") as handle:
            return handle.read().decode("utf-8")

    @property
    def text(self) -> str:
        with open(self.path, "rb") as handle:
            return handle.read().decode("utf-8")

    @property
    def language(self):
        return language_for(self.path)

    @property
    def source(self) -> str:
        return self.text

    def expected(self) -> List[Expectation]:
        return parse_expectations(self.text)

    def selection(self) -> Tuple[str, ...]:
        match = _SELECT.search(self.text)
        return _codes(match) if match else (self.code,)

    @property
    def unsafe_fixes(self) -> bool:
        return bool(_UNSAFE.search(self.text))


def _is_case(name: str) -> bool:
    stem, _ = os.path.splitext(name)
    return not (stem.endswith(".fixed") or name.startswith(".") or name.endswith(SNAPSHOT_SUFFIX))


PROJECT_ENTRY = "main.py"


@dataclass(frozen=True)
class ProjectFixture(Fixture):
    """A folder of modules that import each other (`fixtures/python/<CODE>/<case>/`),
    checked as `gradlint check <folder>` checks them: every module, then the importers of
    modules that export summaries again (`gradlint.python.project`). `path` is its
    `main.py`, the program (the oracle runs it, its modules beside it), which holds the
    `oracle:` and `gradlint:` directives; expectations sit in any module, and the snapshot
    is `<case>.snap` beside the folder."""

    @property
    def folder(self) -> str:
        return os.path.dirname(self.path)

    @property
    def id(self) -> str:
        return os.path.relpath(self.folder, FIXTURES) + "/"

    @property
    def snapshot_path(self) -> str:
        return self.folder  # `check_snapshot` adds the suffix

    @property
    def golden(self) -> Optional[str]:
        return None  # a fix across modules is not applied by `fix` of one file: `goldens()`

    def goldens(self) -> Dict[str, str]:
        """`<module>.fixed.py` of each module the fix changes, by the module's name: what
        `gradlint fix <folder>` makes of it (the fix lands in the module with the finding)."""
        found = {}
        for path in self.files():
            stem, extension = os.path.splitext(path)
            if os.path.exists(f"{stem}.fixed{extension}"):
                with open(f"{stem}.fixed{extension}", "rb") as handle:
                    found[os.path.basename(path)] = handle.read().decode("utf-8")
        return found

    def files(self) -> List[str]:
        return sorted(os.path.join(self.folder, name) for name in os.listdir(self.folder)
                      if name.endswith(".py") and _is_case(name))

    def expected(self) -> List[Expectation]:
        found = []
        for path in self.files():
            with open(path, "rb") as handle:
                text = handle.read().decode("utf-8")
            found += [replace(expectation, file=os.path.basename(path)) for expectation in parse_expectations(text)]
        return found


class _FindingInModule(Finding):
    """A project fixture's finding with its module (`fixture_file`)."""


def project_findings(fixture: ProjectFixture) -> list:
    """What `gradlint check <folder>` reports, in every module; each finding knows its module
    (`fixture_file`, for the expectations and the snapshot)."""
    from gradlint.runner import run_files

    outcome = run_files(fixture.files(), linter_for(fixture).settings, jobs=1, cache_dir=None)
    findings = []
    for report in outcome.reports:
        assert report.error is None, report.error
        for finding in report.findings:
            in_module = _FindingInModule(*finding)
            in_module.fixture_file = os.path.relpath(report.path, fixture.folder)
            findings.append(in_module)
    return findings


def project_fixes(fixture: ProjectFixture, folder: Optional[str] = None) -> Dict[str, str]:
    """What `gradlint fix` (with the fixture's `unsafe-fixes`) makes of the modules of the
    fixture (or of a copy of its modules in `folder`), without writing: the fixed text of
    each module it changes, by the module's name."""
    from gradlint.runner import run_files

    files = fixture.files() if folder is None else sorted(
        os.path.join(folder, os.path.basename(path)) for path in fixture.files())
    outcome = run_files(files, linter_for(fixture).settings, mode="fix", write=False, jobs=1, cache_dir=None)
    fixed = {}
    for report in outcome.reports:
        assert report.error is None, report.error
        if report.changed:
            fixed[os.path.basename(report.path)] = report.fixed
    return fixed


def project_fixtures() -> List[ProjectFixture]:
    found = []
    for code in sorted(os.listdir(os.path.join(FIXTURES, "python"))):
        code_dir = os.path.join(FIXTURES, "python", code)
        if not re.fullmatch(r"GL\d{3}", code) or not os.path.isdir(code_dir):
            continue
        found.extend(ProjectFixture(os.path.join(code_dir, name, PROJECT_ENTRY), code)
                     for name in sorted(os.listdir(code_dir))
                     if os.path.isdir(os.path.join(code_dir, name)) and not name.startswith((".", "_")))
    return found


def _cases(language_dir: str) -> List[Tuple[str, str]]:
    """(path, the folder's rule code) of every case in `fixtures/<language>/<CODE>/`."""
    found = []
    for code in sorted(os.listdir(language_dir)):
        code_dir = os.path.join(language_dir, code)
        if re.fullmatch(r"GL\d{3}", code) and os.path.isdir(code_dir):
            found.extend((os.path.join(code_dir, name), code) for name in sorted(os.listdir(code_dir))
                         if _is_case(name) and os.path.isfile(os.path.join(code_dir, name)))
    return found


def all_fixtures() -> List[Fixture]:
    """The source-file fixtures of every language; notebooks (a JSON document of cells) are
    `notebook_fixtures`."""
    found = []
    for language in sorted(os.listdir(FIXTURES)):
        language_dir = os.path.join(FIXTURES, language)
        if os.path.isdir(language_dir) and language_dir != NOTEBOOKS:
            found.extend(Fixture(path, code) for path, code in _cases(language_dir))
    return found


@dataclass(frozen=True)
class NotebookFixture:
    """A notebook in fixtures/notebook/<CODE>/: expectations and `gradlint:` directives in code cells."""

    path: str
    code: str  # the folder's rule code

    @property
    def name(self) -> str:
        """`GL402/eval_then_finetune.ipynb`"""
        return os.path.relpath(self.path, NOTEBOOKS)

    @property
    def raw(self) -> bytes:
        with open(self.path, "rb") as handle:
            return handle.read()

    @property
    def language(self):
        return NOTEBOOK

    @property
    def source(self) -> str:
        """The notebook as the linter reads it (its code cells joined)."""
        return self.language.decode(self.raw).text

    def code_cells(self):
        return notebook_code_cells(self.raw)

    def expected(self) -> List[Expectation]:
        return [expectation for index, source in self.code_cells()
                for expectation in parse_expectations(source, cell=index)]

    def selection(self) -> Tuple[str, ...]:
        selected = tuple(code for _, source in self.code_cells() for match in _SELECT.finditer(source)
                         for code in _codes(match))
        return selected or (self.code,)

    @property
    def unsafe_fixes(self) -> bool:
        return any(_UNSAFE.search(source) for _, source in self.code_cells())


def notebook_code_cells(raw: bytes):
    """(0-based cell index, source) of a notebook's code cells, read with the standard library."""
    for index, cell in enumerate(json.loads(raw.decode("utf-8"))["cells"]):
        if cell["cell_type"] == "code":
            source = cell["source"]
            yield index, source if isinstance(source, str) else "".join(source)


def notebook_fixtures() -> List[NotebookFixture]:
    return [NotebookFixture(path, code) for path, code in _cases(NOTEBOOKS) if path.endswith(".ipynb")]
