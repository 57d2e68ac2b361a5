"""Across modules: what the checked modules' functions do with inference tensors, for the
modules that import them (issue 15 item 9).

A module whose flow ran (it enters inference mode) exports a summary of each function and
method that returns an inference tensor or does to a parameter what torch rejects for one
(`ModuleExports`, plain data: it crosses into worker processes and into the result cache),
with the names of the functions of other modules it passed a tracked value to. Every
checked file records its `from X import name` statements (`from_imports`, a search of its
text). Once every file is checked, the modules those names come from that never entered
the mode are summarized for the functions asked of them (`Request`: the flow walks only
those and what they call), and an importer is checked again only when a name it imports
carries something for it (`ProjectIndex.dependencies`): the importer's flow then reads
`from .predict import infer` as the function it is.

Not followed: modules outside the checked paths, a name re-exported through another module
(`from pkg import infer` where `pkg/__init__.py` imports it), `import pkg.predict` used as
`pkg.predict.infer(...)`, calls through `getattr` or dynamic dispatch, a value passed to
another module's function other than by name, and a module's exports that come from what
it imports itself (one hand-off, not a chain).
"""
from __future__ import annotations

import ast
import os
from dataclasses import dataclass
from itertools import chain
from operator import itemgetter
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

from gradlint.diagnostics import Position
from gradlint.python.from_imports import FromImports, from_imports  # noqa: F401 (callers import it from here)


def split_alias(entry: str) -> Tuple[str, str]:
    """(the name a module exports, the name the importer binds) of a `from_imports` entry."""
    name, _, local = entry.partition(" as ")
    return name, local or name


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

# What the importers of a module that never enters inference mode ask of it: the flow then
# summarizes only these functions and methods (and what they call), whatever the module's
# size. (names of it called with a tracked value, names imported from it (a class among
# them: its methods), the method names called with a tracked value)
Request = Tuple[Tuple[str, ...], Tuple[str, ...], Tuple[str, ...]]


def exports_to_data(exports: Optional[ModuleExports], passed: Iterable[str] = (),
                    request: Optional[Request] = None, guards: Iterable[str] = (),
                    unsummarized: Iterable[str] = ()) -> Optional[tuple]:
    """The module's summary as data (it crosses into worker processes and the result cache):
    None: the module's flow did not run and it defines no guard; else (its exported
    functions, possibly none; the names of the functions and methods of other modules it
    passed a tracked value to; the `Request` it was summarized for, None when its own flow
    ran over all of it; the names of its classes and functions a `with` on which turns
    inference mode on, `flow.user_guards`; the exported functions its flow left unwalked,
    `flow.deferred`, summarized when an importer imports them: `unsummarized_asked`)."""
    if exports is None:
        return None
    return (tuple(function.to_data() for function in exports.values()), tuple(sorted(passed)), request,
            tuple(sorted(guards)), tuple(sorted(unsummarized)))


def unsummarized_asked(data: Optional[Sequence], imported: Iterable[str]) -> frozenset:
    """Of the names an importer imports from the module (`from_imports` entries), those that
    name an exported function left unsummarized (a class: one of its methods)."""
    if not data or not data[4]:
        return frozenset()
    owners = {name.partition(".")[0] for name in data[4]}
    return frozenset(name for name in map(itemgetter(0), map(split_alias, imported)) if name in owners)


def exports_from_data(data: Optional[Sequence]) -> Optional[ModuleExports]:
    """The exports `exports_to_data` wrote; ValueError (or TypeError) for another shape."""
    if not data or not data[0]:
        return None
    functions = [ExportedFunction.from_data(item) for item in data[0]]
    return {function.name: function for function in functions}


def exported_guards(data: Optional[Sequence]) -> frozenset:
    """The guards a module defines (`exports_to_data`)."""
    return frozenset(data[3]) if data else frozenset()


def answered(request: Request) -> tuple:
    """The summary of a module that defines nothing a request asks for."""
    return exports_to_data({}, (), request)


def passed_names(data: Optional[Sequence]) -> frozenset:
    """The names the module's flow called with a tracked value (`exports_to_data`)."""
    return frozenset(data[1]) if data else frozenset()


def covers(data: Optional[Sequence], request: Request) -> bool:
    """Whether the summary `data` answers `request` (a module whose own flow ran answers all)."""
    if data is None:
        return False
    done = data[2]
    return done is None or all(set(asked) <= set(had) for asked, had in zip(request, done))


def merged(first: Optional[Request], second: Request) -> Request:
    if first is None:
        return second
    return tuple(tuple(sorted(set(one) | set(other))) for one, other in zip(first, second))


def _module_file_stem(path: str) -> str:
    """The name an import spells a module by: `rotary` for rotary.py, `pkg` for pkg/__init__.py."""
    if _POSIX_PATHS and path.endswith(".py"):  # (every checked module: no splitting calls)
        folder, _, name = path.rpartition("/")
        stem = name[:-3]
        if stem.strip("."):  # (splitext keeps a name of dots and `py` whole)
            return folder.rstrip("/").rpartition("/")[2] if stem == "__init__" else stem
    folder, name = os.path.split(path)
    stem = os.path.splitext(name)[0]
    return os.path.basename(folder) if stem == "__init__" else stem


_POSIX_PATHS = os.sep == "/" and os.altsep is None


class ModuleFinder:
    """Checked modules, found by what an import writes (`.predict`, `pkg.rotary`)."""

    def __init__(self, paths: Iterable[str]) -> None:
        """`paths`: absolute, as `os.path.abspath` gives them (the runner's and the index's)."""
        self._by_stem: Dict[str, List[str]] = {}
        for path in paths:
            self._by_stem.setdefault(_module_file_stem(path), []).append(path)

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


_names_of = itemgetter(1)  # of a `FromImports` entry


def asked_exports(facts_of: Dict[str, tuple], finder: ModuleFinder,
                  modules: Dict[str, Tuple[str, int]]) -> List[Tuple[str, int, frozenset]]:
    """(module's path and position, the names its importers import that name exported functions it left
    unsummarized: `unsummarized_asked`), each module checked again with them asked for
    (`ProjectIndex.asked`). `facts_of`: path -> (position, `ProjectFacts`, digest) of the
    run's files; `modules`: absolute path -> (path, position) of its modules."""
    exports = {path: facts.exports for path, (_, facts, _) in facts_of.items() if facts.exports and facts.exports[4]}
    owners = frozenset(name.partition(".")[0] for data in exports.values() for name in data[4])
    asked: Dict[str, frozenset] = {}
    if not owners:
        return []  # (most runs)
    for importer, (_, facts, _) in facts_of.items():
        for module, names in facts.imports:
            if owners.isdisjoint(name for name, _ in map(split_alias, names)):
                continue  # (most imports: no module to find)
            target = finder.resolve(importer, module)
            if target is None or target == os.path.abspath(importer) or target not in modules:
                continue
            found = unsummarized_asked(exports.get(modules[target][0]), names)
            if found:
                asked[target] = asked.get(target, frozenset()) | found
    return [(*modules[target], names) for target, names in sorted(asked.items())]


class ProjectIndex:
    """The exporting modules of one run, found by the import statements of their importers."""

    def __init__(self, exports: Dict[str, tuple], summarize: Optional[Dict[str, Request]] = None,
                 asked: Optional[Dict[str, frozenset]] = None) -> None:
        """`exports`: path -> the data `Language.exports` gave (`exports_to_data`);
        `summarize`: modules whose flow runs to summarize them though they never enter
        inference mode (what the functions their importers ask for do to their parameters);
        `asked`: modules checked again, their flow walking the exported functions their
        importers import (`unsummarized_asked`)."""
        self.requests = {os.path.abspath(path): request for path, request in (summarize or {}).items()}
        self.asked = {os.path.abspath(path): names for path, names in (asked or {}).items()}
        self.exports: Dict[str, ModuleExports] = {}
        self.guards: Dict[str, frozenset] = {}  # a module -> the guards it defines
        for path, data in exports.items():
            found, guards = exports_from_data(data), exported_guards(data)
            if found:
                self.exports[os.path.abspath(path)] = found
            if guards:
                self.guards[os.path.abspath(path)] = guards
        self._index()

    def _index(self) -> None:
        # what an importer may name: the functions, the classes of the methods, the guards
        self._names = frozenset([name.partition(".")[0] for found in self.exports.values() for name in found]
                                + [name for guards in self.guards.values() for name in guards])
        self._finder = ModuleFinder({*self.exports, *self.guards})

    def __bool__(self) -> bool:
        return bool(self.exports or self.requests or self.guards or self.asked)

    def request_for(self, path: str) -> Optional[Request]:
        return self.requests.get(os.path.abspath(path))

    def asked_for(self, path: str) -> Optional[frozenset]:
        return self.asked.get(os.path.abspath(path)) if self.asked else None

    def resolve(self, importer: str, module: str, level: int = 0) -> Optional[str]:
        return self._finder.resolve(importer, module, level)

    def may_bind(self, path: str, text: str) -> bool:
        """False for a module summarized for a request that defines none of the functions
        and methods asked for (searched in its text: `def name(`, a class's `class Name(`;
        most requests name methods its classes do not have)."""
        request = self.request_for(path)
        if request is None:
            return True
        called, held, methods = request
        if any(f"def {name}(" in text for name in called):
            return True
        classes = [name for name in {*called, *held} if f"class {name}(" in text or f"class {name}:" in text]
        asked = {*methods, *(("__init__",) if set(classes) & set(called) else ())}  # a class called: its `__init__`
        return bool(classes) and any(f"def {name}(" in text for name in asked)

    def dependencies(self, importer: str, imports: FromImports, passed: Optional[frozenset] = None) -> Tuple[str, ...]:
        """The exporting modules whose summaries `importer` reads when checked again: none
        unless one of the names it imports carries something for it (a guard; a function
        that returns an inference tensor; with `passed`, the names the importer's own flow
        called with a tracked value, one that does to that parameter what torch rejects);
        then every exporting module it imports an exported name from."""
        entries = list(chain.from_iterable(map(_names_of, imports)))
        if " as " in "\n".join(entries):
            entries = [entry.partition(" as ")[0] for entry in entries]
        if self._names.isdisjoint(entries):
            return ()  # no name it imports is one of theirs (most files: no loop over the imports)
        found, concerned = set(), False
        for module, names in imports:
            if self._names.isdisjoint(names) and not any(" as " in entry for entry in names):
                continue  # (most imports: a set's test, no name split)
            named = [split_alias(entry) for entry in names]
            named = [(name, local) for name, local in named if name in self._names]
            if not named:
                continue
            target = self.resolve(importer, module)
            if target is None or target == os.path.abspath(importer):  # (asked only here: most files end above)
                continue
            if any(name in self.guards.get(target, ()) for name, _ in named):
                found.add(target)
                concerned = True  # what the importer makes under the guard is an inference tensor
            exports = self.exports.get(target)
            if exports is None:
                continue
            for name, local in named:
                for exported, function in exports.items():
                    owner, _, method = exported.partition(".")
                    if owner != name:
                        continue
                    found.add(target)
                    if function.returns is not None or (passed is not None and function.uses and (
                            (not method and local in passed) or method in passed
                            or (method == "__init__" and local in passed))):
                        concerned = True
        return tuple(sorted(found)) if concerned else ()

    def restricted(self, paths: Iterable[str]) -> "ProjectIndex":
        """The index of only these modules (what a worker is sent for one file)."""
        index = ProjectIndex({})
        index.requests = {path: request for path, request in self.requests.items() if path in paths}
        index.asked = {path: names for path, names in self.asked.items() if path in paths}
        index.exports = {path: self.exports[path] for path in paths if path in self.exports}
        index.guards = {path: self.guards[path] for path in paths if path in self.guards}
        index._index()
        return index

    def imported_names(self, importer: str, module: ast.Module) -> "ImportedNames":
        """What the importer's `from X import name` statements bind to exported summaries."""
        imported = ImportedNames()
        if not self.exports and not self.guards:
            return imported
        for statement in _import_statements(module.body):
            target = self.resolve(importer, statement.module or "", statement.level)
            exports = self.exports.get(target, {}) if target else None
            if exports is None:
                continue
            for alias in statement.names:
                local = alias.asname or alias.name
                if alias.name in self.guards.get(target, ()):
                    imported.guards.add(local)
                if alias.name in exports:
                    imported.functions[local] = exports[alias.name]
                methods = {name.partition(".")[2]: function for name, function in exports.items()
                           if name.partition(".")[0] == alias.name and "." in name}
                if methods:
                    imported.classes[local] = methods
        return imported


def _import_statements(statements: Sequence[ast.stmt]) -> Iterable[ast.ImportFrom]:
    """The `from ... import` statements among `statements` and the blocks they hold (a
    function's, a branch's): statements only, no expression is walked."""
    stack = list(reversed(statements))
    while stack:
        statement = stack.pop()
        if isinstance(statement, ast.ImportFrom):
            yield statement
            continue
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            block = getattr(statement, field, None)
            if block:
                stack.extend(reversed(block))


@dataclass
class ImportedNames:
    """The importer's names bound to other checked modules' summaries."""

    functions: Dict[str, ExportedFunction]
    classes: Dict[str, Dict[str, ExportedFunction]]  # local class name -> method -> summary
    guards: set  # local names of other modules' guards (`flow.user_guards`)

    def __init__(self) -> None:
        self.functions, self.classes, self.guards = {}, {}, set()

    def __bool__(self) -> bool:
        return bool(self.functions or self.classes or self.guards)

    def unique_method(self, name: str) -> Optional[ExportedFunction]:
        """`predictor.predict(x)`: a method name that only one imported class exports."""
        found = [methods[name] for methods in self.classes.values() if name in methods]
        return found[0] if len(found) == 1 else None
