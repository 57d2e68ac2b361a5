"""The rule contract, and discovery of every rule module under `gradlint.rules`.

A rule is one module holding one `Rule` subclass. Its docstring is its documentation,
in markdown sections (see `REQUIRED_SECTIONS`). It implements `check_<language>` for
each language it applies to (`check_python`, `check_cpp`), or, as a package, holds a
`<language>.py` module with a `check(file)` function beside its `__init__.py`; the
languages are derived from those, so nothing is declared twice. Rules hold no state
between files and do no I/O: they read the parsed model a front end hands them.

Before anything is parsed, a file must match the rule's text `prefilter`, then pass its
`screen_<language>` (or the `screen` function beside `check`), which reads the language's
cheap outline (for Python, CPython's `ast`); both are necessary conditions of a finding.
"""
from __future__ import annotations

import builtins
import functools
import importlib
import inspect
import pkgutil
import re
import sys
from dataclasses import dataclass
from typing import Callable, ClassVar, Dict, FrozenSet, Iterable, List, Mapping, Optional, Tuple, Union

from gradlint.diagnostics import Diagnostic, Safety, Severity

try:  # the regex parser, to read the literal strings a prefilter requires
    from re import _constants as _sre, _parser as _sre_parse
except ImportError:  # Python < 3.11
    import sre_constants as _sre
    import sre_parse as _sre_parse

REQUIRED_SECTIONS = ("What it does", "Why is this bad?", "Example", "Use instead", "Fix safety")
_CODE = re.compile(r"^GL\d{3}$")
_NAME = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")
_SECTION = re.compile(r"^## (.+)$", re.MULTILINE)


@dataclass(frozen=True)
class RuleDocs:
    summary: str
    sections: Tuple[Tuple[str, str], ...]

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
    # Findings the engine itself reports (syntax errors, internal errors).
    reported_by_engine: ClassVar[bool] = False
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
        method = getattr(self, "screen_" + language, None)
        if method is not None:
            return method
        if language not in _language_modules(type(self).__module__):
            return None
        return getattr(importlib.import_module(f"{type(self).__module__}.{language}"), "screen", None)


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

    path = getattr(sys.modules.get(module_name), "__path__", None)
    if path is None:
        return ()
    names = {language.name for language in languages()}
    return tuple(info.name for info in pkgutil.iter_modules(path) if info.name in names)


@functools.lru_cache(maxsize=None)
def _compiled(pattern: str) -> "re.Pattern[str]":
    return re.compile(pattern)


def prefilter_matches(pattern: "re.Pattern[str]", text: str) -> bool:
    """Whether `pattern.search(text)` finds anything (see `TextSearch.matches`)."""
    return TextSearch(text).matches(pattern)


class TextSearch:
    """One file's text, asked by many prefilters: each string they require is looked for
    once, each pattern run once."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._has: Dict[str, bool] = {}
        self._matches: Dict["re.Pattern[str]", bool] = {}

    def has(self, literal: str) -> bool:
        found = self._has.get(literal)
        if found is None:
            found = self._has[literal] = literal in self.text
        return found

    def has_any(self, literals: Iterable[str]) -> bool:
        return any(map(self.has, literals))

    def matches(self, pattern: "re.Pattern[str]") -> bool:
        """Whether `pattern.search(text)` finds anything, first asking `in` for strings
        every match contains (far faster than the regex can fail), then running the regex
        only where those strings are: anchored at them when every match starts with one,
        on their lines when no match can span a line break, over the whole text otherwise."""
        found = self._matches.get(pattern)
        if found is None:
            found = self._matches[pattern] = self._search(pattern)
        return found

    def _search(self, pattern: "re.Pattern[str]") -> bool:
        text = self.text
        literals = _required_literals(pattern.pattern, pattern.flags)
        if literals is None:
            return pattern.search(text) is not None
        if not self.has_any(literals):
            return False
        leading, line_local = _search_plan(pattern.pattern, pattern.flags)
        if leading is not None:
            return any(pattern.match(text, start) for start in _occurrences(text, leading))
        if line_local:
            searched_to = -1
            for start in _occurrences(text, [literal for literal in literals if self.has(literal)]):
                if start < searched_to:
                    continue  # its line was searched already
                line_start = text.rfind("\n", 0, start) + 1
                line_end = text.find("\n", start)
                searched_to = len(text) if line_end < 0 else line_end
                if pattern.search(text, line_start, searched_to):
                    return True
            return False
        return pattern.search(text) is not None


def required_strings(pattern: "re.Pattern[str]") -> Optional[Tuple[str, ...]]:
    """Strings one of which every match of `pattern` contains; None when there are none
    worth a search."""
    return _required_literals(pattern.pattern, pattern.flags)


def _occurrences(text: str, literals: Iterable[str]) -> List[int]:
    found = []
    for literal in literals:
        start = text.find(literal)
        while start >= 0:
            found.append(start)
            start = text.find(literal, start + 1)
    found.sort()
    return found


@functools.lru_cache(maxsize=None)
def _search_plan(pattern: str, flags: int) -> Tuple[Optional[Tuple[str, ...]], bool]:
    """(strings one of which every match starts with, or None; whether no match can
    contain a line break)."""
    items = _sre_parse.parse(pattern, flags)
    leading = _leading_literals(items)
    if leading is not None and min(map(len, leading)) < _MIN_LITERAL:
        leading = None
    return leading, not _may_cross_line(items, bool(flags & re.DOTALL), bool(flags & re.MULTILINE))


_MIN_LITERAL = 3  # shorter strings occur in nearly every file: no use as a first test


@functools.lru_cache(maxsize=None)
def _required_literals(pattern: str, flags: int) -> Optional[Tuple[str, ...]]:
    if flags & re.IGNORECASE:
        return None
    try:
        found = _literals_of_sequence(_sre_parse.parse(pattern, flags))
    except (re.error, RecursionError):
        return None
    if not found or min(map(len, found)) < _MIN_LITERAL:
        return None
    # `Pool` in the text is needed for `ThreadPool` to be: the longer needs no search of its own.
    return tuple(sorted(literal for literal in found
                        if not any(other != literal and other in literal for other in found)))


def _literals_of_sequence(items) -> Optional[frozenset]:
    """A set of strings one of which every match of `items` (parsed regex nodes) contains,
    preferring the set whose shortest string is longest; None when there is none."""
    best: Optional[frozenset] = None

    def consider(candidates: Optional[frozenset]) -> None:
        nonlocal best
        if candidates and (best is None or min(map(len, candidates)) > min(map(len, best))):
            best = candidates

    run = []
    for op, argument in items:
        if op is _sre.LITERAL:
            run.append(chr(argument))
            continue
        consider(frozenset(["".join(run)]) if run else None)
        run = []
        if op is _sre.SUBPATTERN and not argument[1] & re.IGNORECASE:
            consider(_literals_of_sequence(argument[3]))
        elif op is _sre.BRANCH:
            branches = [_literals_of_sequence(branch) for branch in argument[1]]
            if all(branches):
                consider(frozenset().union(*branches))
        elif op in (_sre.MAX_REPEAT, _sre.MIN_REPEAT) and argument[0] >= 1:
            consider(_literals_of_sequence(argument[2]))
    consider(frozenset(["".join(run)]) if run else None)
    return best


def _leading_literals(items) -> Optional[Tuple[str, ...]]:
    """The strings one of which every match of `items` starts with (after zero-width
    anchors such as `\\b`, which an anchored match checks in place), or None."""
    items = list(items)
    while items and items[0][0] is _sre.AT:
        items = items[1:]
    if not items:
        return None
    op, argument = items[0]
    if op is _sre.LITERAL:
        run = []
        for op, argument in items:
            if op is not _sre.LITERAL:
                break
            run.append(chr(argument))
        return ("".join(run),)
    if op is _sre.SUBPATTERN and not argument[1] & re.IGNORECASE:
        return _leading_literals(argument[3])
    if op is _sre.BRANCH:
        branches = [_leading_literals(branch) for branch in argument[1]]
        if all(branches):
            return tuple(sorted({literal for branch in branches for literal in branch}))
    return None


_NEWLINE = ord("\n")
# Character classes that hold a line break.
_CATEGORIES_WITH_NEWLINE = {_sre.CATEGORY_SPACE, _sre.CATEGORY_NOT_DIGIT, _sre.CATEGORY_NOT_WORD,
                            _sre.CATEGORY_LINEBREAK}
_CATEGORIES_WITHOUT_NEWLINE = {_sre.CATEGORY_DIGIT, _sre.CATEGORY_WORD, _sre.CATEGORY_NOT_SPACE,
                               _sre.CATEGORY_NOT_LINEBREAK}


def _may_cross_line(items, dotall: bool, multiline: bool) -> bool:
    """Whether a match of `items` may hold a line break or be decided by the end of the
    text (`$` outside multi-line mode, `\\Z`): then it cannot be searched line by line.
    Anything not understood counts as crossing."""
    for op, argument in items:
        if op is _sre.LITERAL:
            if argument == _NEWLINE:
                return True
        elif op is _sre.NOT_LITERAL:
            if argument != _NEWLINE:
                return True
        elif op is _sre.ANY:
            if dotall:
                return True
        elif op is _sre.IN:
            if _set_holds_newline(argument):
                return True
        elif op is _sre.AT:
            if argument is _sre.AT_END_STRING or (argument is _sre.AT_END and not multiline):
                return True
        elif op is _sre.SUBPATTERN:
            add_flags = argument[1]
            if _may_cross_line(argument[3], (dotall or bool(add_flags & re.DOTALL))
                               and not argument[2] & re.DOTALL, multiline and not argument[2] & re.MULTILINE):
                return True
        elif op is _sre.BRANCH:
            if any(_may_cross_line(branch, dotall, multiline) for branch in argument[1]):
                return True
        elif op in (_sre.MAX_REPEAT, _sre.MIN_REPEAT) or op is getattr(_sre, "POSSESSIVE_REPEAT", None):
            if _may_cross_line(argument[2], dotall, multiline):
                return True
        elif op in (_sre.ASSERT, _sre.ASSERT_NOT):
            if _may_cross_line(argument[1], dotall, multiline):
                return True
        else:
            return True
    return False


def _set_holds_newline(members) -> bool:
    negated = False
    holds = False
    for op, argument in members:
        if op is _sre.NEGATE:
            negated = True
        elif op is _sre.LITERAL:
            holds = holds or argument == _NEWLINE
        elif op is _sre.RANGE:
            holds = holds or argument[0] <= _NEWLINE <= argument[1]
        elif op is _sre.CATEGORY and argument in _CATEGORIES_WITHOUT_NEWLINE:
            continue
        elif op is _sre.CATEGORY and argument in _CATEGORIES_WITH_NEWLINE:
            holds = True
        else:
            return True  # not understood
    return holds != negated


def _parse_docs(text: str, summary: str) -> RuleDocs:
    sections = []
    matches = list(_SECTION.finditer(text))
    for index, match in enumerate(matches):
        end = matches[index + 1].start() if index + 1 < len(matches) else len(text)
        sections.append((match.group(1).strip(), text[match.end():end].strip()))
    return RuleDocs(summary, tuple(sections))


class RuleDefinitionError(Exception):
    pass


@functools.lru_cache(maxsize=1)
def all_rules() -> Dict[str, type]:
    """Every rule class under `gradlint.rules`, by code, found by walking the package."""
    import gradlint.rules as package

    found: Dict[str, type] = {}
    for module_info in pkgutil.iter_modules(package.__path__, package.__name__ + "."):
        module = importlib.import_module(module_info.name)
        for value in vars(module).values():
            if (inspect.isclass(value) and issubclass(value, Rule) and value is not Rule
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
    if not _CODE.match(getattr(rule, "code", "")):
        raise RuleDefinitionError(f"{where}: code must look like GL123")
    if not _NAME.match(getattr(rule, "name", "")):
        raise RuleDefinitionError(f"{where}: name must be kebab-case")
    if not getattr(rule, "summary", ""):
        raise RuleDefinitionError(f"{where}: summary is missing")
    if not rule.reported_by_engine and not rule.languages():
        raise RuleDefinitionError(f"{where}: implements no check_<language> method")
    # The docstring's sections are checked by tests/test_docs.py, not on every start.


def rules_by_name() -> Dict[str, type]:
    return {rule.name: rule for rule in all_rules().values()}
