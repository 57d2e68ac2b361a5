"""Output formats. Each module here holds one `Reporter` subclass naming its format;
they are found by walking this package, so a new format is a new module."""
from __future__ import annotations

import functools
import importlib
from collections import Counter

from gradlint.diagnostics import Finding
from gradlint.modules_on_disk import modules_in
from gradlint.record import Record

TYPE_CHECKING = False  # typing's names only annotate here: not imported at run time
if TYPE_CHECKING:
    from typing import ClassVar, Dict, List, Optional, TextIO, Tuple


class RunResult(Record):
    def __init__(self, reports: list,  # of gradlint.engine.FileReport, in a deterministic order
                 mode: str = "check",  # or "fix"
                 unsafe_fixes: bool = False,
                 from_stdin: bool = False) -> None:  # the source came from stdin: a file of that name is another text
        self._set(reports=reports, mode=mode, unsafe_fixes=unsafe_fixes, from_stdin=from_stdin)

    @property
    def findings(self) -> List[Finding]:
        return [finding for report in self.reports for finding in report.findings]

    @property
    def applied_fixes(self) -> List[Finding]:
        return [finding for report in self.reports for finding in report.applied_fixes]


class ReporterOptions(Record):
    def __init__(self, color: bool = False, show_source: bool = False, show_fixes: bool = False,
                 # Source text by path, for formats that quote lines (filled only when asked for).
                 sources: Optional[Dict[str, str]] = None) -> None:
        self._set(color=color, show_source=show_source, show_fixes=show_fixes,
                  sources={} if sources is None else sources)


class Reporter:
    format_name: ClassVar[str]

    def __init__(self, stream: TextIO, options: ReporterOptions) -> None:
        self.stream = stream
        self.options = options

    def render(self, result: RunResult) -> None:
        raise NotImplementedError


def path_bytes(path: str) -> bytes:
    """The bytes of a path as the system holds them (a name that is not UTF-8 is held in
    the string as lone surrogates, the way `os.fsdecode` keeps it)."""
    try:
        return path.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a surrogate that stands for no byte
        return path.encode("utf-8", "surrogatepass")


def valid_unicode(text: str) -> str:
    """`text` (a path, or a message naming one) as valid Unicode for JSON: bytes that are
    not UTF-8 become `\\xNN` escapes instead of lone surrogates, which strict UTF-8
    readers refuse."""
    return text if text.isascii() else path_bytes(text).decode("utf-8", "backslashreplace")


def stable_fingerprints(findings: List[Finding]) -> List[str]:
    """One hash per finding that survives edits elsewhere in the file: no line numbers go
    in, and repeats of one message in one file are told apart by their order."""
    import hashlib  # only these formats need SHA-256 (and OpenSSL, which `hashlib` loads)

    seen: Counter = Counter()
    fingerprints = []
    for finding in findings:
        identity = (finding.path, finding.code, finding.message)
        seen[identity] += 1
        key = "\0".join(identity + (str(seen[identity]),))
        fingerprints.append(hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest())
    return fingerprints


class NotebookFiles:
    """For formats that point into the file: a notebook finding's place in the `.ipynb`
    JSON text (each notebook read once), or None when the file cannot be read (stdin)."""

    def __init__(self, result: RunResult) -> None:
        self._files: Dict[str, object] = {}
        self._read = not result.from_stdin

    def span(self, finding: Finding):
        return self.span_in(finding.path, finding)

    def span_in(self, path: str, place):
        """The same for a place with a cell and positions in it (a finding's related location)."""
        if place.cell is None or not self._read:
            return None
        from gradlint.notebook.file_positions import file_span, read_notebook_file

        if path not in self._files:
            self._files[path] = read_notebook_file(path)
        return file_span(self._files[path], place)


def cell_place(finding: Finding) -> str:
    """Where a notebook finding is, as Jupyter shows it: `cell 3, line 2, column 5`."""
    return f"cell {finding.cell + 1}, line {finding.start.line}, column {finding.start.column}"


@functools.lru_cache(maxsize=1)
def reporters() -> Dict[str, type]:
    """Every format's reporter, by format name (importing them all)."""
    import inspect  # only a catalog out of date walks
    import pkgutil

    found = {}
    for module_info in pkgutil.iter_modules(__path__, __name__ + "."):
        module = importlib.import_module(module_info.name)
        for value in vars(module).values():
            if (inspect.isclass(value) and issubclass(value, Reporter) and value is not Reporter
                    and value.__module__ == module.__name__):
                found[value.format_name] = value
    return dict(sorted(found.items()))


@functools.lru_cache(maxsize=1)
def _formats() -> Dict[str, Tuple[str, str]]:
    """format name -> (module, class) of its reporter: from `gradlint.catalog` when it records
    the modules of this package, else from importing them (a format added since)."""
    from gradlint import catalog

    if reporter_modules() == catalog.REPORTER_MODULES:
        return {name: (module, class_name) for name, module, class_name in catalog.REPORTERS}
    return {name: (reporter.__module__, reporter.__qualname__) for name, reporter in reporters().items()}


def reporter_modules() -> Tuple[str, ...]:
    """The modules of this package on disk (not imported)."""
    return tuple(sorted({f"{__name__}.{name}" for folder in __path__ for name, _ in modules_in(folder)}))


def format_names() -> Tuple[str, ...]:
    return tuple(_formats())


def reporter_for(format_name: str) -> type:
    """The reporter of one format, importing only its module."""
    module, class_name = _formats()[format_name]
    return getattr(importlib.import_module(module), class_name)
