"""Across modules: what the checked modules' functions do with inference tensors, for the
modules that import them (issue 15 item 9).

A module whose flow ran (it enters inference mode) exports a summary of each function and
method that returns an inference tensor or does to a parameter what torch rejects for one
(`ModuleExports`, plain data: it crosses into worker processes and into the result cache).
Every checked file records the modules it imports (`import_strings`, read from its text, so
a file no rule parses costs a regular-expression search). Once every file is checked, the
importers of exporting modules are checked again with those summaries (`ProjectIndex`):
the importer's flow then reads `from .predict import infer` as the function it is.

Not followed: modules outside the checked paths, a name re-exported through another module
(`from pkg import infer` where `pkg/__init__.py` imports it), `import pkg.predict` used as
`pkg.predict.infer(...)`, calls through `getattr` or dynamic dispatch, and a module's
exports that come from what it imports itself (one hand-off, not a chain).
"""
from __future__ import annotations

import ast
import os
import re
import sys
from dataclasses import dataclass
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

from gradlint.diagnostics import Position

# The lines that start an import: one cheap search of the text, the rest read in Python.
_IMPORT_LINE = re.compile(r"^[ \t]*(?:from|import)[ \t][^\n]*", re.M)
# Top-level packages never among the checked modules' exports worth recording.
_NEVER_CHECKED = frozenset(getattr(sys, "stdlib_module_names", ())) | {"torch", "numpy", "__future__"}


def import_strings(text: str) -> Tuple[str, ...]:
    """The modules `text` may import from another checked module: `.predict`, `pkg.rotary`,
    each a module or (after `from X import name`) `X.name`, a submodule it may be."""
    if "import" not in text:
        return ()
    found: List[str] = []
    for match in _IMPORT_LINE.finditer(text):
        words = match.group().split(None, 1)
        rest = words[1] if len(words) > 1 else ""
        if words[0] == "import":
            for part in rest.split("#")[0].split(","):
                module = part.split()[0] if part.split() else ""
                if module and module.partition(".")[0] not in _NEVER_CHECKED:
                    found.append(module)
            continue
        module, _, names = rest.partition(" import")
        module = module.strip()
        if not module or (not module.startswith(".") and module.partition(".")[0] in _NEVER_CHECKED):
            continue
        names = names.split("#")[0].strip()
        if names.startswith("("):  # the names up to the closing parenthesis, on later lines too
            close = text.find(")", match.start())
            names = text[match.start():close if close >= 0 else match.end()].partition("(")[2]
            names = " ".join(line.split("#")[0] for line in names.splitlines())
        found.append(module)
        separator = "" if module.endswith(".") else "."
        found.extend(module + separator + name.split()[0] for name in names.replace("\\", " ").split(",")
                     if name.split() and name.split()[0].isidentifier())
    return tuple(dict.fromkeys(found))


@dataclass(frozen=True)
class Place:
    """A span of another checked file, with its note (a related location there)."""

    path: str
    start: Position
    end: Position
    start_offset: int
    end_offset: int
    note: str

    def to_data(self) -> tuple:
        return (self.path, self.start.line, self.start.column, self.end.line, self.end.column,
                self.start_offset, self.end_offset, self.note)

    @classmethod
    def from_data(cls, data: Sequence) -> "Place":
        path, start_line, start_column, end_line, end_column, start_offset, end_offset, note = data
        return cls(path, Position(start_line, start_column), Position(end_line, end_column),
                   start_offset, end_offset, note)


@dataclass(frozen=True)
class ExportedReturn:
    """What a function returns: an inference tensor (or a container or module of them)
    whatever mode its caller runs in, with the places that made it."""

    kind: str  # a `flow.Kind` value
    certain: bool
    places: Tuple[Place, ...]  # innermost first: the region, the statement that made it


@dataclass(frozen=True)
class ExportedFunction:
    """A function's summary as its importers read it."""

    name: str  # `infer`, `Predictor.predict`
    path: str  # the module it is defined in
    parameters: Tuple[str, ...]  # positional, as a call fills them (a method's without `self`)
    returns: Optional[ExportedReturn] = None
    uses: Tuple[Tuple[str, str, Place], ...] = ()  # (event kind, parameter, the operation)

    def to_data(self) -> tuple:
        returned = None if self.returns is None else (
            self.returns.kind, self.returns.certain, tuple(place.to_data() for place in self.returns.places))
        return (self.name, self.path, self.parameters, returned,
                tuple((kind, parameter, place.to_data()) for kind, parameter, place in self.uses))

    @classmethod
    def from_data(cls, data: Sequence) -> "ExportedFunction":
        name, path, parameters, returned, uses = data
        returns = None
        if returned is not None:
            kind, certain, places = returned
            returns = ExportedReturn(kind, bool(certain), tuple(Place.from_data(place) for place in places))
        return cls(name, path, tuple(parameters), returns,
                   tuple((kind, parameter, Place.from_data(place)) for kind, parameter, place in uses))


ModuleExports = Dict[str, ExportedFunction]  # `infer` or `Predictor.predict` -> its summary


def exports_to_data(exports: Optional[ModuleExports]) -> Optional[tuple]:
    """None: the module's flow did not run; `()`: it ran and exports nothing (what the
    module's imports do with its values may still matter: `ProjectFacts.entered`)."""
    return None if exports is None else tuple(function.to_data() for function in exports.values())


def exports_from_data(data: Optional[Sequence]) -> Optional[ModuleExports]:
    """The exports `exports_to_data` wrote; ValueError (or TypeError) for another shape."""
    if not data:
        return None
    functions = [ExportedFunction.from_data(item) for item in data]
    return {function.name: function for function in functions}


def _module_file_stem(path: str) -> str:
    """The name an import spells a module by: `rotary` for rotary.py, `pkg` for pkg/__init__.py."""
    folder, name = os.path.split(path)
    stem = os.path.splitext(name)[0]
    return os.path.basename(folder) if stem == "__init__" else stem


class ModuleFinder:
    """Checked modules, found by what an import writes (`.predict`, `pkg.rotary`)."""

    def __init__(self, paths: Iterable[str]) -> None:
        self._by_stem: Dict[str, List[str]] = {}
        for path in paths:
            self._by_stem.setdefault(_module_file_stem(path), []).append(os.path.abspath(path))

    def resolve(self, importer: str, module: str, level: int = 0) -> Optional[str]:
        """The module that `from <dots><module> import ...` in `importer` names (`level`
        dots, or written in `module` itself), or None."""
        dots = len(module) - len(module.lstrip("."))
        module, level = module[dots:], level or dots
        stem = module.rpartition(".")[2] or None
        candidates = self._by_stem.get(stem) if stem else None
        if level:
            base = os.path.dirname(os.path.abspath(importer))
            for _ in range(level - 1):
                base = os.path.dirname(base)
            if stem is None:
                candidates = self._by_stem.get(os.path.basename(base))
            target = os.path.join(base, *module.split(".")) if module else base
            for path in candidates or ():
                if path in (target + ".py", os.path.join(target, "__init__.py")):
                    return path
            return None
        if not candidates:
            return None
        suffixes = (os.sep + os.path.join(*module.split(".")) + ".py",
                    os.sep + os.path.join(*module.split("."), "__init__.py"))
        matching = [path for path in candidates if path.endswith(suffixes)]
        # `from predict import infer` beside the script first, then a unique match anywhere
        beside = [path for path in matching if os.path.dirname(path) == os.path.dirname(os.path.abspath(importer))]
        if beside:
            return beside[0]
        return matching[0] if len(matching) == 1 else None

    def imported_by(self, importer: str, imports: Iterable[str]) -> Tuple[str, ...]:
        """The modules among those `importer` imports (not itself)."""
        own = os.path.abspath(importer)
        found = {self.resolve(importer, module) for module in imports}
        return tuple(sorted(path for path in found if path is not None and path != own))


class ProjectIndex:
    """The exporting modules of one run, found by the import strings of their importers."""

    def __init__(self, exports: Dict[str, tuple], summarize: Iterable[str] = ()) -> None:
        """`exports`: path -> the data `Language.exports` gave (`exports_to_data`);
        `summarize`: modules whose flow runs to summarize them though they never enter
        inference mode (what they do to the parameters of their functions)."""
        self.summarized = frozenset(os.path.abspath(path) for path in summarize)
        self.exports: Dict[str, ModuleExports] = {}
        for path, data in exports.items():
            found = exports_from_data(data)
            if found:
                self.exports[os.path.abspath(path)] = found
        self._finder = ModuleFinder(self.exports)

    def __bool__(self) -> bool:
        return bool(self.exports or self.summarized)

    def summarizes(self, path: str) -> bool:
        return os.path.abspath(path) in self.summarized

    def resolve(self, importer: str, module: str, level: int = 0) -> Optional[str]:
        return self._finder.resolve(importer, module, level)

    def dependencies(self, importer: str, imports: Iterable[str]) -> Tuple[str, ...]:
        """The exporting modules among those `importer` imports (not itself)."""
        return self._finder.imported_by(importer, imports)

    def imported_names(self, importer: str, module: ast.Module) -> "ImportedNames":
        """What the importer's `from X import name` statements bind to exported summaries."""
        imported = ImportedNames()
        for statement in ast.walk(module):
            if not isinstance(statement, ast.ImportFrom):
                continue
            for alias in statement.names:
                local = alias.asname or alias.name
                target = self.resolve(importer, statement.module or "", statement.level)
                exports = self.exports.get(target) if target else None
                if exports is None:
                    continue
                if alias.name in exports:
                    imported.functions[local] = exports[alias.name]
                methods = {name.partition(".")[2]: function for name, function in exports.items()
                           if name.partition(".")[0] == alias.name and "." in name}
                if methods:
                    imported.classes[local] = methods
        return imported


@dataclass
class ImportedNames:
    """The importer's names bound to other checked modules' summaries."""

    functions: Dict[str, ExportedFunction]
    classes: Dict[str, Dict[str, ExportedFunction]]  # local class name -> method -> summary

    def __init__(self) -> None:
        self.functions, self.classes = {}, {}

    def __bool__(self) -> bool:
        return bool(self.functions or self.classes)

    def unique_method(self, name: str) -> Optional[ExportedFunction]:
        """`predictor.predict(x)`: a method name that only one imported class exports."""
        found = [methods[name] for methods in self.classes.values() if name in methods]
        return found[0] if len(found) == 1 else None
