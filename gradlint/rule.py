"""The rule contract, and discovery of every rule module under `gradlint.rules`.

A rule is one module holding one `Rule` subclass. Its docstring is its documentation,
in markdown sections (see `REQUIRED_SECTIONS`). It implements `check_<language>` for
each language it applies to (`check_python`, `check_cpp`), or, as a package, holds a
`<language>.py` module with a `check(file)` function beside its `__init__.py`; the
languages are derived from those, so nothing is declared twice. Rules hold no state
between files and do no I/O: they read the parsed model a front end hands them.

Before anything is parsed, a file must match the rule's text `prefilter` (and its
`text_screen_<language>`, or the `text_screen` function beside `check`, when it has one),
then pass its `screen_<language>` (or the `screen` function beside `check`), which reads the
language's cheap outline (for Python, CPython's `ast`); all are necessary conditions of a
finding.
"""
from __future__ import annotations

import builtins
import functools
import importlib
import os
import re
import sys
import zlib
from collections.abc import Mapping

from gradlint.diagnostics import Diagnostic, Safety, Severity
from gradlint.record import FrozenRecord

TYPE_CHECKING = False  # typing's names only annotate here: not imported at run time
if TYPE_CHECKING:
    from typing import Callable, ClassVar, Dict, FrozenSet, Iterable, Optional, Tuple, Union

REQUIRED_SECTIONS = ("What it does", "Why is this bad?", "Example", "Use instead", "Fix safety",
                     "Known limitations")
# Compiled when first used (by `re`, which keeps them): a run reads the catalog, not the rules.
_CODE = r"^GL\d{3}$"
_NAME = r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$"
_SECTION = r"(?m)^## (.+)$"


class RuleDocs(FrozenRecord):
    def __init__(self, summary: str, sections: Tuple[Tuple[str, str], ...]) -> None:
        self._set(summary=summary, sections=sections)

    def section(self, title: str) -> str:
        return dict(self.sections).get(title, "")


class Rule:
    code: ClassVar[str]
    name: ClassVar[str]
    summary: ClassVar[str]
    severity: ClassVar[Severity] = Severity.ERROR
    default_enabled: ClassVar[bool] = True
    # The strongest fix the rule can offer, or None when it offers none.
    fix_safety: ClassVar[Optional[Safety]] = None
    # A regex that must match somewhere in a file's text for the rule to find anything
    # there (a necessary condition). One pattern, a tuple of patterns that must all match,
    # or either of those per language; None = always run. Unless `needs_whole_module`, the
    # (first) pattern must also match in the top-level statement that holds a finding, or
    # in an import that names what it uses: partial parsing keeps just those.
    prefilter: ClassVar[Union[str, Tuple[str, ...], Mapping[str, Union[str, Tuple[str, ...]]], None]] = None
    # What the engine itself reports under this rule, instead of checks: "internal-error",
    # "unused-suppression", or "syntax-error:<family>" (a front end's `syntax_errors`).
    # The engine asks `engine_rule(event)`, so no code is written into it.
    engine_reports: ClassVar[Optional[str]] = None
    # True: `select` does not turn the rule off (syntax errors); only `ignore` does.
    kept_by_select: ClassVar[bool] = False
    # False: a Python rule may be handed only part of the module (gradlint.python.partial):
    # the imports, the top-level statements its prefilter (or another active rule's)
    # matches, and those that use a name such a statement defines. True when a finding can
    # depend on other statements (a value made in one function and mutated in another).
    needs_whole_module: ClassVar[bool] = False
    # True: the rule's check reads only the language's outline (`file.outline`: for Python,
    # CPython's `ast`), so a file that only such rules select is never parsed in full. Its
    # fixes, if any, are text edits at the outline's positions (GL201's clone insertions).
    reads_outline_only: ClassVar[bool] = False
    # True: the rule reads other checked modules' summaries (`gradlint.python.project`): a
    # file that imports a module exporting one is checked by it whatever its text and
    # screen say (it may never name a guard itself).
    follows_imports: ClassVar[bool] = False
    # The exception a finding says the code raises (a builtin's name, or a tuple of them):
    # the engine does not report it inside a block that expects that exception or a base
    # of it (`with pytest.raises(RuntimeError):`, `self.assertRaises(Exception)`; see
    # `Language.expected_errors`). None: the finding claims no exception.
    claims: ClassVar[Union[str, Tuple[str, ...], None]] = None

    @classmethod
    def languages(cls) -> Tuple[str, ...]:
        """The `check_<language>` methods, and for a rule that is a package, the
        `<language>.py` modules beside it (each with a `check(file)` function)."""
        return _languages_of(cls)

    @classmethod
    def prefilter_for(cls, language: str) -> Optional["re.Pattern[str]"]:
        """The first (often the only) pattern of `prefilters_for`."""
        patterns = cls.prefilters_for(language)
        return patterns[0] if patterns else None

    @classmethod
    def prefilters_for(cls, language: str) -> Tuple["re.Pattern[str]", ...]:
        """Every pattern that must match (a tuple of patterns is a conjunction: a guard word
        *and* `yield`); empty when the rule always runs."""
        return _prefilters_of(cls, language)

    @classmethod
    def caught_by(cls) -> FrozenSet[str]:
        """The exceptions whose handler catches what a finding claims (`claims`): each claim
        and its bases (`RuntimeError` -> RuntimeError, Exception, BaseException)."""
        return _caught_by(cls)

    @classmethod
    def docs(cls) -> RuleDocs:
        import inspect  # only documentation reads a docstring

        return _parse_docs(inspect.cleandoc(cls.__doc__ or ""), cls.summary)

    def check(self, language: str, parsed) -> Iterable[Diagnostic]:
        method = getattr(self, "check_" + language, None)
        if method is not None:
            return method(parsed)
        return importlib.import_module(f"{type(self).__module__}.{language}").check(parsed)

    def screen(self, language: str) -> Optional[Callable[[object], bool]]:
        """The rule's structural screen for `language`, or None when it has none (then every
        file its prefilter selects is parsed). A screen reads the language's cheap outline
        (`Language.outline`) and answers whether the file can hold a finding: a necessary
        condition of `check`, written as `screen_<language>(outline)` or as a `screen`
        function beside `check` in the rule's `<language>.py`."""
        return self._language_hook("screen", language)

    def part_screen(self, language: str) -> Optional[Callable[[object], bool]]:
        """A screen for the outline of only the part of a file that partial parsing keeps
        (the imports, the top-level statements the rules' first prefilters match, those that
        name what such a statement defines: `gradlint.python.partial.focus`), true wherever
        `screen` is true on the whole outline: a file it rejects is never parsed whole. Written
        as `part_screen_<language>(outline)` or as `part_screen` beside `check`; None (the
        default): the rule's files are screened on the whole outline."""
        return self._language_hook("part_screen", language)

    def text_screen(self, language: str) -> Optional[Callable[[str], bool]]:
        """A look at the text, after the prefilter and before anything is parsed, for a rule
        whose prefilter cannot be sharp enough as a regex: false only where the text alone
        shows that the file holds no finding (`text_screen_<language>(text)`, or a
        `text_screen` function beside `check`). Part of the prefilter: a file it rejects
        is not read, as one whose patterns do not match."""
        return self._language_hook("text_screen", language)

    def _language_hook(self, name: str, language: str) -> Optional[Callable]:
        """The method `<name>_<language>`, or the function `name` in the rule's `<language>.py`."""
        method = getattr(self, f"{name}_{language}", None)
        if method is not None:
            return method
        if language not in _submodules(type(self).__module__):  # (its language module, if any)
            return None
        return getattr(importlib.import_module(f"{type(self).__module__}.{language}"), name, None)


def finds_any(findings: Iterable) -> bool:
    """A screen that is its check's own search: true once the search yields one finding."""
    return any(True for _ in findings)


def found_on(findings: Callable[[object], Iterable], outline) -> list:
    """`list(findings(outline))`, searched once per outline (kept on it): a screen that is
    its check's own search, and then the check, read one list."""
    found_by = vars(outline).setdefault("_found_by", {})
    found = found_by.get(findings)
    if found is None:
        found = found_by[findings] = list(findings(outline))
    return found


def screen_of(findings: Callable[[object], Iterable]) -> Callable[[object], bool]:
    """The screen of a check that is its own search on the outline (`findings(outline)`)."""
    def screen(outline) -> bool:
        return finds_any(findings(outline))

    screen.__doc__ = f"The check itself ({findings.__name__}), without the fix: it reads only the outline."
    return screen


# Asked for every file: computed once per rule class.
@functools.lru_cache(maxsize=None)
def _languages_of(rule: type) -> Tuple[str, ...]:
    methods = {name[len("check_"):] for name in dir(rule)
               if name.startswith("check_") and callable(getattr(rule, name))}
    return tuple(sorted(methods | set(_language_modules(rule.__module__))))


@functools.lru_cache(maxsize=None)
def _caught_by(rule: type) -> FrozenSet[str]:
    claims = rule.claims
    names = set()
    for claim in (claims,) if isinstance(claims, str) else (claims or ()):
        names.add(claim)
        exception = getattr(builtins, claim, None)
        if isinstance(exception, type) and issubclass(exception, BaseException):
            names.update(base.__name__ for base in exception.__mro__ if issubclass(base, BaseException))
        else:  # not a builtin: still an Exception
            names.update(("Exception", "BaseException"))
    return frozenset(names)


@functools.lru_cache(maxsize=None)
def _prefilters_of(rule: type, language: str) -> Tuple["re.Pattern[str]", ...]:
    pattern = rule.prefilter
    if isinstance(pattern, Mapping):
        pattern = pattern.get(language)
    if not pattern:
        return ()
    return tuple(_compiled(part) for part in ((pattern,) if isinstance(pattern, str) else pattern))


@functools.lru_cache(maxsize=None)
def _language_modules(module_name: str) -> Tuple[str, ...]:
    """`python`, `cpp`: the language modules of a rule package (found, not imported)."""
    from gradlint.frontend import languages

    names = {language.name for language in languages()}
    return tuple(name for name in _submodules(module_name) if name in names)


@functools.lru_cache(maxsize=None)
def _submodules(module_name: str) -> Tuple[str, ...]:
    """The modules of a rule package (found, not imported); none for a rule module. A run
    asks whether its language is among them without importing every front end for the
    names of all languages (`_language_modules`)."""
    from gradlint.modules_on_disk import modules_in

    path = getattr(sys.modules.get(module_name), "__path__", None)
    return () if path is None else tuple(name for folder in path for name, _ in modules_in(folder))


@functools.lru_cache(maxsize=None)
def _compiled(pattern: str) -> "re.Pattern[str]":
    return re.compile(pattern)


def _parse_docs(text: str, summary: str) -> RuleDocs:
    sections = []
    matches = list(re.finditer(_SECTION, text))
    for index, match in enumerate(matches):
        end = matches[index + 1].start() if index + 1 < len(matches) else len(text)
        sections.append((match.group(1).strip(), text[match.end():end].strip()))
    return RuleDocs(summary, tuple(sections))


class RuleDefinitionError(Exception):
    pass


@functools.lru_cache(maxsize=1)
def all_rules() -> Dict[str, type]:
    """Every rule class under `gradlint.rules`, by code, found by walking the package."""
    import pkgutil  # (it imports typing: only a catalog out of date walks)

    import gradlint.rules as package

    found: Dict[str, type] = {}
    for module_info in pkgutil.iter_modules(package.__path__, package.__name__ + "."):
        module = importlib.import_module(module_info.name)
        for value in vars(module).values():
            if (isinstance(value, type) and issubclass(value, Rule) and value is not Rule
                    and value.__module__ == module.__name__):
                _validate(value)
                if value.code in found:
                    raise RuleDefinitionError(
                        f"{value.code} is defined twice: {found[value.code].__module__} and {module.__name__}"
                    )
                found[value.code] = value
    return dict(sorted(found.items()))


def _validate(rule: type) -> None:
    where = rule.__module__
    if not re.match(_CODE, getattr(rule, "code", "")):
        raise RuleDefinitionError(f"{where}: code must look like GL123")
    if not re.match(_NAME, getattr(rule, "name", "")):
        raise RuleDefinitionError(f"{where}: name must be kebab-case")
    if not getattr(rule, "summary", ""):
        raise RuleDefinitionError(f"{where}: summary is missing")
    if rule.engine_reports is None and not rule.languages():
        raise RuleDefinitionError(f"{where}: implements no check_<language> method")
    # One way to write each shape: one language in one module's class, several as a package
    # with a module per language (CONTRIBUTING, "A rule").
    methods = [name for name in dir(rule) if name.startswith(("check_", "screen_"))]
    if _language_modules(where) and methods:
        raise RuleDefinitionError(f"{where}: a rule package checks in its <language>.py modules, not in {methods[0]}")
    if len({name.split("_", 1)[1] for name in methods}) > 1:
        raise RuleDefinitionError(f"{where}: a rule for several languages is a package with a module per language")
    # The docstring's sections are checked by tests/test_docs.py, not on every start.


class CatalogedRule:
    """What a run needs to know of a rule before importing it: its identity, what selects
    it, the languages it reads and its prefilters (from `gradlint.catalog`, which
    `python -m gradlint.docs --catalog` writes from `all_rules`). `load()` imports it."""

    __slots__ = ("code", "name", "module", "class_name", "languages", "default_enabled", "kept_by_select",
                 "engine_reports", "follows_imports", "prefilters", "_loaded")

    def __init__(self, code: str, name: str, module: str, class_name: str, languages: Tuple[str, ...],
                 default_enabled: bool, kept_by_select: bool, engine_reports: Optional[str],
                 follows_imports: bool, prefilters: Mapping[str, Tuple[str, ...]], loaded: Optional[type] = None):
        self.code, self.name, self.module, self.class_name = code, name, module, class_name
        self.languages, self.default_enabled, self.kept_by_select = languages, default_enabled, kept_by_select
        self.engine_reports, self.follows_imports, self.prefilters = engine_reports, follows_imports, prefilters
        self._loaded = loaded

    @classmethod
    def of(cls, rule: type) -> "CatalogedRule":
        """A loaded rule's entry (what the catalog records of it)."""
        prefilters = {language: tuple(pattern.pattern for pattern in rule.prefilters_for(language))
                      for language in rule.languages()}
        return cls(rule.code, rule.name, rule.__module__, rule.__qualname__, rule.languages(), rule.default_enabled,
                   rule.kept_by_select, rule.engine_reports, rule.follows_imports, prefilters, rule)

    def record(self) -> tuple:
        """The entry as `gradlint.catalog` writes it."""
        return (self.code, self.name, self.module, self.class_name, self.languages, self.default_enabled,
                self.kept_by_select, self.engine_reports, self.follows_imports, self.prefilters)

    def prefilters_for(self, language: str) -> Tuple["re.Pattern[str]", ...]:
        """`Rule.prefilters_for`, compiled from the recorded patterns."""
        return tuple(_compiled(pattern) for pattern in self.prefilters.get(language, ()))

    def load(self) -> type:
        if self._loaded is None:
            self._loaded = getattr(importlib.import_module(self.module), self.class_name)
        return self._loaded


def rule_sources() -> Tuple[Tuple[str, ...], Optional[int]]:
    """The rule modules on disk (found, not imported), and a checksum of what the catalog
    records of them is read from: each module's file (a package's `__init__.py`, with the
    names of the modules beside it) and the contract's defaults (this file). None when a
    file cannot be read."""
    import gradlint.rules as package

    modules, checksum = [], 0
    try:
        for folder in package.__path__:
            for entry in sorted(os.listdir(folder)):
                name = entry[:-3] if entry.endswith(".py") else entry
                package_file = os.path.join(folder, entry, "__init__.py")
                if not name.isidentifier() or name.startswith("_") or not (
                        entry.endswith(".py") or os.path.isfile(package_file)):
                    continue
                modules.append(f"{package.__name__}.{name}")
                if not entry.endswith(".py"):
                    beside = sorted(part for part in os.listdir(os.path.join(folder, entry)) if part.endswith(".py"))
                    checksum = zlib.crc32(" ".join(beside).encode(), checksum)
                with open(os.path.join(folder, entry) if entry.endswith(".py") else package_file, "rb") as handle:
                    checksum = zlib.crc32(handle.read(), checksum)
        with open(__file__, "rb") as handle:
            checksum = zlib.crc32(handle.read(), checksum)
    except OSError:
        return tuple(modules), None
    return tuple(modules), checksum


@functools.lru_cache(maxsize=1)
def rule_catalog() -> Dict[str, CatalogedRule]:
    """Every rule by code, read from `gradlint.catalog` without importing the rules; when the
    rule modules on disk are not the ones it was written from (a rule added, removed or
    edited since: tests/test_catalog.py says so), from walking the package as `all_rules` does."""
    from gradlint import catalog

    modules, checksum = rule_sources()
    if checksum is not None and checksum == catalog.RULE_SOURCES and \
            set(modules) == {record[2] for record in catalog.RULES}:
        return {record[0]: CatalogedRule(*record) for record in catalog.RULES}
    return {code: CatalogedRule.of(rule) for code, rule in all_rules().items()}


def engine_rule(event: str) -> CatalogedRule:
    """The rule whose `engine_reports` is `event` (`"internal-error"`)."""
    found = _engine_rules().get(event)
    if found is None:
        raise RuleDefinitionError(f"no rule reports {event!r}")
    return found


@functools.lru_cache(maxsize=1)
def _engine_rules() -> Dict[str, CatalogedRule]:
    return {rule.engine_reports: rule for rule in rule_catalog().values() if rule.engine_reports is not None}


def engine_codes() -> FrozenSet[str]:
    """The codes the engine reports itself (syntax, lexing, internal errors, unused suppressions)."""
    return frozenset(rule.code for rule in _engine_rules().values())


def rules_by_name() -> Dict[str, type]:
    return {rule.name: rule for rule in all_rules().values()}
