"""The per-file pipeline: read once, prefilter, parse once, run rules, suppress, stamp.

Data flows one way: text -> (prefilter) -> front end model -> rule diagnostics ->
findings. Fixing is checking in a loop with the fixes applied in between.
"""
from __future__ import annotations

import re

from gradlint.collector import collections_held
from gradlint.diagnostics import Diagnostic, Edit, Finding, LineIndex, RelatedLocation
from gradlint.frontend import language_for
from gradlint.language import FrontEndSyntaxError, Language
from gradlint.record import FrozenRecord, Record
from gradlint.rule import CatalogedRule, Rule, engine_rule, rule_catalog
from gradlint.settings import Settings
from gradlint.suppression import unused as unused_suppressions
from gradlint.source import (
    DecodedSource, SourceError, UndecodableSource, read_bytes, write_atomic,
)
from gradlint.textsearch import TextSearch, gate_plan, required_strings

TYPE_CHECKING = False  # typing's names only annotate here: not imported at run time
if TYPE_CHECKING:
    from typing import Callable, Dict, Iterable, List, Optional, Sequence, Tuple

MAX_FIX_PASSES = 10


class FileReport(Record):
    def __init__(self, path: str, findings: Optional[List[Finding]] = None,
                 # A file that could not be read or written: shown on stderr, exit 2.
                 error: Optional[str] = None,
                 # Shown on stderr without changing the exit code (a fix left unapplied, a skip).
                 notes: Optional[List[str]] = None, applied_fixes: Optional[List[Finding]] = None,
                 original: Optional[str] = None,  # fix mode: the text rules saw, before and after
                 fixed: Optional[str] = None,
                 # fix --diff: the file's own text before and after (differs from the above for notebooks)
                 diff_texts: Optional[Tuple[str, str]] = None,
                 # Across modules (`gradlint.python.project`): what it offers importers, what it imports
                 exports: object = None, imports: Tuple[str, ...] = ()) -> None:
        self._set(path=path, findings=[] if findings is None else findings, error=error,
                  notes=[] if notes is None else notes, applied_fixes=[] if applied_fixes is None else applied_fixes,
                  original=original, fixed=fixed, diff_texts=diff_texts, exports=exports, imports=imports)

    @property
    def changed(self) -> bool:
        return self.fixed is not None and self.fixed != self.original


class _Selection(FrozenRecord):
    """The enabled rules of one language with their prefilters, and the strings one of
    which a file must hold for any of them to run (None: some rule runs on any text), in
    the groups they are looked for in (`textsearch.gate_plan`)."""

    def __init__(self, rules: Tuple[Tuple[CatalogedRule, Tuple["re.Pattern[str]", ...]], ...],
                 gate: Optional[Tuple[str, ...]]) -> None:
        self._set(rules=rules, gate=gate, plan=None if gate is None else gate_plan(gate))


class FixOutcome(Record):
    def __init__(self, text: str, findings: List[Finding], applied: List[Finding], notes: List[str],
                 exports: object = None) -> None:  # of the text as fixed (`Linter.check_module`)
        self._set(text=text, findings=findings, applied=applied, notes=notes, exports=exports)


class Linter:
    """Runs the enabled rules; one instance serves a whole run."""

    def __init__(self, settings: Settings, verbose: bool = False,
                 extra_rules: Sequence[Rule] = ()) -> None:
        self.settings = settings
        self.verbose = verbose
        # Every rule as the catalog knows it; a rule is imported when a file first needs it.
        self._catalog: Dict[str, CatalogedRule] = dict(rule_catalog())
        self._rules: Dict[str, Rule] = {}
        self._text_screens: Dict[Tuple[str, str], Optional[Callable[[str], bool]]] = {}
        # Rules from outside the package (tests, embedding tools); enable them in settings.
        for rule in extra_rules:
            self._catalog[rule.code] = CatalogedRule.of(type(rule))
            self._rules[rule.code] = rule
        self._selections: Dict[Tuple[str, frozenset], _Selection] = {}

    def _rule(self, code: str) -> Rule:
        rule = self._rules.get(code)
        if rule is None:
            rule = self._rules[code] = self._catalog[code].load()()
        return rule

    @property
    def _internal_error_rule(self) -> Rule:
        """What the engine reports itself: the rules say under which code."""
        return self._rule(engine_rule("internal-error").code)

    @property
    def _unused_suppression_rule(self) -> Rule:
        return self._rule(engine_rule("unused-suppression").code)

    # -- checking ---------------------------------------------------------------------------

    def check_text(self, text: str, path: str, language: Language,
                   enabled: Optional[frozenset] = None,
                   decode_error: Optional[UndecodableSource] = None, project=None) -> List[Finding]:
        """`decode_error`: `text` is a lossy decoding; GL001 if a selected rule reads the file.
        `project`: the other checked modules' exports (`gradlint.python.project.ProjectIndex`)."""
        return self.check_module(text, path, language, enabled, decode_error, project)[0]

    def check_module(self, text: str, path: str, language: Language,
                     enabled: Optional[frozenset] = None,
                     decode_error: Optional[UndecodableSource] = None, project=None) -> Tuple[List[Finding], object]:
        """The findings, and what the file exports to its importers (`Language.exports`;
        None for most files). With `project`, the rules that follow imports
        (`Rule.follows_imports`) run on a file that imports an exporting module whatever its
        text says."""
        made: List[object] = []  # the outline and model of the file, released once it is checked
        with collections_held():
            try:
                return self._check_module(text, path, language, enabled, decode_error, project, made)
            finally:
                while made:  # (each freed here, while the collector is held)
                    language.release(made.pop())

    def _check_module(self, text: str, path: str, language: Language, enabled: Optional[frozenset],
                      decode_error: Optional[UndecodableSource], project,
                      made: List[object]) -> Tuple[List[Finding], object]:
        enabled = self.settings.enabled_for(path) if enabled is None else enabled
        selection = self._selection(language.name, enabled)
        # GL003 judges the suppression comments once every other rule has reported.
        audit = engine_rule("unused-suppression").code in enabled and language.may_name_our_codes(text)
        search = TextSearch(text)
        following = [self._rule(entry.code) for entry, _ in selection.rules if entry.follows_imports] \
            if project and language.may_follow(path, text, project) else []
        if selection.gate is not None and not following and not search.has_any_grouped(selection.plan):
            # No selected rule's first prefilter can match: most files end here.
            return self._not_read(text, path, language, audit), None
        matching = [entry for entry, patterns in selection.rules if all(map(search.matches, patterns))
                    # its code, not only comments and strings (an undecodable file is reported by
                    # any rule that would read it)
                    and (decode_error is not None
                         or all(language.matches_in_code(text, pattern) for pattern in patterns))]
        active = [self._rule(entry.code) for entry in matching]
        if decode_error is None:
            active = [rule for rule in active if self._text_screened(rule, language, text)]
        outline = None
        if (active or following) and decode_error is None:
            active, outline = self._screened(active, text, language, following, path, project)
            made.append(outline)
        if not active:
            # the screens' outline (None when CPython cannot parse the text, then every
            # rule is still active) or no selected rule's prefilters matched; what the
            # outline shows may still concern importers (a guard the module defines)
            exports = language.exports(path, outline) if outline is not None else None
            return self._not_read(text, path, language, audit), exports
        reported: List[Tuple[Rule, Diagnostic]] = []
        # what libcst parses serves the rules that read it: outline-only rules need none of it
        parsing = [rule for rule in active if not rule.reads_outline_only]
        focus = [rule.prefilter_for(language.name) for rule in parsing]
        if None in focus or any(rule.needs_whole_module for rule in parsing):
            focus = None
        try:
            if decode_error is not None:
                raise FrontEndSyntaxError(f"cannot decode: {decode_error.message}", decode_error.offset)
            parsed = None
            if outline is not None and all(rule.reads_outline_only for rule in active):
                parsed = language.outline_model(path, text, outline)
            if parsed is None:
                parsed = language.parse(path, text, focus, outline)
                made.append(parsed)
        except FrontEndSyntaxError as error:
            return self._stamp(self._syntax_errors([error], text, language, enabled), text, path, language,
                               audit), None
        # Parts the front end read around (a notebook cell that does not parse): one finding each.
        reported.extend(self._syntax_errors(getattr(parsed, "syntax_errors", ()), text, language, enabled))
        for rule in active:
            try:
                for diagnostic in rule.check(language.name, parsed):
                    reported.append((rule, diagnostic))
            except FrontEndSyntaxError as error:  # the parse a fix needed (libcst's) failed: as when parsing first
                return self._stamp(self._syntax_errors([error], text, language, enabled), text, path, language,
                                   audit), None
            except Exception as error:  # one rule's bug must not stop the others
                reported.append((self._internal_error_rule, self._internal_error(rule, path, error)))
        exports = None
        ran_on = outline if outline is not None else getattr(parsed, "__dict__", {}).get("outline")
        if ran_on is not None:
            try:
                exports = language.exports(path, ran_on)
            except Exception as error:  # an importer then sees an ordinary value
                reported.append((self._internal_error_rule, self._internal_error(active[0], path, error)))
        return self._stamp(_unexpected(reported, language, parsed), text, path, language, audit), exports

    def _not_read(self, text: str, path: str, language: Language, audit: bool) -> List[Finding]:
        """A file no selected rule reads: only GL003's audit has something to say. Its syntax
        is not checked: GL001 covers the files the selected rules read."""
        return self._stamp([], text, path, language, audit) if audit else []

    def _syntax_errors(self, errors: Iterable[FrontEndSyntaxError], text: str, language: Language,
                       enabled: frozenset) -> List[Tuple[Rule, Diagnostic]]:
        code = _syntax_error_code(language)
        if code not in enabled:
            return []
        return [(self._rule(code), Diagnostic(error.offset, min(error.offset + 1, len(text)), error.message))
                for error in errors]

    def _selection(self, language: str, enabled: frozenset) -> "_Selection":
        key = (language, enabled)
        selection = self._selections.get(key)
        if selection is None:
            rules = tuple((entry, entry.prefilters_for(language)) for code, entry in self._catalog.items()
                          if code in enabled and language in entry.languages)
            gate: Optional[set] = set()
            for _, patterns in rules:
                needed = required_strings(patterns[0]) if patterns else None
                if needed is None:
                    gate = None  # a rule that may run on any text
                    break
                gate.update(needed)
            selection = self._selections[key] = _Selection(rules, None if gate is None else tuple(sorted(gate)))
        return selection

    def prepare(self, language: Language, enabled: frozenset) -> None:
        """Import what checking files of `language` will: each enabled rule of it, with its
        text screen, screen and check (the modules beside it), and the language's outline.
        A pool forked afterwards has them, instead of each worker importing them again."""
        rules = self._selection(language.name, enabled).rules
        for entry, _ in rules:
            rule = self._rule(entry.code)
            key = (rule.code, language.name)
            if key not in self._text_screens:
                self._text_screens[key] = rule.text_screen(language.name)
            rule.screen(language.name)
        self._rule(engine_rule("internal-error").code)  # (`_stamp` asks for it)
        language.prepare(any(entry.follows_imports for entry, _ in rules))

    def _text_screened(self, rule: Rule, language: Language, text: str) -> bool:
        key = (rule.code, language.name)
        if key not in self._text_screens:  # asked for every file the prefilter passes
            self._text_screens[key] = rule.text_screen(language.name)
        screen = self._text_screens[key]
        try:
            return screen is None or screen(text)
        except Exception:  # a screen's bug must not hide findings: let the rule run
            return True

    def _screened(self, rules: List[Rule], text: str, language: Language, following: Sequence[Rule] = (),
                  path: str = "", project=None) -> Tuple[List[Rule], object]:
        """The rules whose structural screen passes on the language's outline of `text`, and
        the outline; all of them (and no outline) when one has no screen (the file is parsed
        for it anyway) or there is no outline (a syntax error: the parse reports it).
        `following`: rules that run, unscreened, when the file imports something `project`
        exports (the outline then carries what the imports are bound to)."""
        outline, forced = None, ()
        if following:
            outline = language.outline(text)
            if outline is not None and language.follow_imports(path, outline, project):
                forced = tuple(following)
                rules = rules + [rule for rule in following if rule not in rules]
        screens = [rule.screen(language.name) for rule in rules]
        if None in screens:
            return rules, outline
        if outline is None and self._part_rejects(rules, text, language):
            return [], None
        outline = outline or language.outline(text)
        if outline is None:
            return rules, None
        passing = []
        for rule, screen in zip(rules, screens):
            if rule in forced:
                passing.append(rule)
                continue
            try:
                if screen(outline):
                    passing.append(rule)
            except Exception:  # a screen's bug must not hide findings: let the rule run
                passing.append(rule)
        return passing, outline

    @staticmethod
    def _part_rejects(rules: List[Rule], text: str, language: Language) -> bool:
        """Whether every rule's part screen (`Rule.part_screen`) rejects the outline of the
        part of `text` their first prefilters select: a large module that names a guard in a
        few statements is then not parsed whole for its screens."""
        part_screens = [rule.part_screen(language.name) for rule in rules]
        if not part_screens or None in part_screens:
            return False
        part = language.partial_outline(text, [rule.prefilter_for(language.name) for rule in rules])
        if part is None:
            return False
        try:
            for screen in part_screens:
                try:
                    if screen(part):
                        return False
                except Exception:  # a screen's bug must not hide findings: screen the whole
                    return False
            return True
        finally:
            language.release(part)

    def _internal_error(self, rule: Rule, path: str, error: BaseException) -> Diagnostic:
        message = f"rule {rule.code} ({rule.name}) failed on this file: {type(error).__name__}: {error}"
        if self.verbose:
            import traceback  # a run without a failing rule does not load it

            message += "\n" + "".join(traceback.format_exception(type(error), error, error.__traceback__))
        return Diagnostic(0, 0, message)

    def _stamp(self, reported: Sequence[Tuple[Rule, Diagnostic]], text: str, path: str,
               language: Language, audit: bool = False) -> List[Finding]:
        """Findings from what the rules reported, less the suppressed ones; `audit`: then
        GL003 reports the suppressions that suppressed none of them."""
        if not reported and not audit:
            return []
        lines = LineIndex(text)
        suppressions = language.suppressions(text, lines)
        in_cell = language.cell_positions(text, lines)
        findings = []
        seen = set()
        for rule, diagnostic in reported:
            start = lines.position(diagnostic.start)
            if rule is not self._internal_error_rule and suppressions.is_suppressed(start.line, rule.code):
                continue
            key = (rule.code, diagnostic.start, diagnostic.end, diagnostic.message)
            if key in seen:
                continue
            seen.add(key)
            findings.append(_finding(path, rule, diagnostic, lines, in_cell))
        if audit:
            auditor = self._unused_suppression_rule
            findings.extend(_finding(path, auditor, diagnostic, lines, in_cell)
                            for diagnostic in unused_suppressions(suppressions, text))
        findings.sort(key=lambda finding: finding.sort_key)
        return findings

    def check_path(self, path: str, raw: Optional[bytes] = None, project=None) -> FileReport:
        """`raw`: the file's bytes when the caller has read them already; `project`: the
        exports of the other checked modules (`check_module`)."""
        report = FileReport(path)
        loaded = self._load(path, report, raw)
        if loaded is not None:
            language, source = loaded
            report.findings, report.exports = self.check_module(source.text, path, language, project=project)
            report.imports = language.imports(source.text)
        return report

    def _load(self, path: str, report: FileReport,
              raw: Optional[bytes] = None) -> Optional[Tuple[Language, DecodedSource]]:
        language = language_for(path)
        if language is None:
            report.notes.append(f"{path}: skipped: not a supported file type")
            return None
        try:
            raw = read_bytes(path) if raw is None else raw
            if language.max_bytes is not None and len(raw) > language.max_bytes:
                report.notes.append(f"{path}: skipped: {len(raw) / 2**20:.1f} MB is more than the "
                                    f"{language.max_bytes // 2**20} MB gradlint parses (generated code?)")
                return None
            source = language.decode(raw)
        except UndecodableSource as error:
            if error.binary:
                report.notes.append(f"{path}: skipped: binary file (NUL bytes, not {language.name} text)")
            else:  # never fixed: the lossy text must not be written back
                report.findings = self.check_text(error.text, path, language, decode_error=error)
            return None
        except SourceError as error:
            report.error = f"{path}: cannot read: {error}"
            return None
        report.notes.extend(f"{path}: {note}" for note in getattr(source, "notes", ()))
        return language, source

    # -- fixing -----------------------------------------------------------------------------

    def fix_text(self, text: str, path: str, language: Language, project=None) -> FixOutcome:
        enabled = self.settings.enabled_for(path)
        applied: List[Finding] = []
        notes: List[str] = []
        rejected = set()  # (code, message) of fixes whose result would not parse
        findings, exports = self.check_module(text, path, language, enabled, project=project)
        original = text
        for _ in range(MAX_FIX_PASSES):
            fixable = [
                finding for finding in findings
                if finding.fix is not None and finding.fix.is_applicable(self.settings.unsafe_fixes)
                and (finding.code, finding.message) not in rejected
            ]
            chosen = _non_overlapping(fixable)
            if not chosen:
                break
            new_text = apply_fixes(text, chosen)
            if language.validate(new_text, original) is not None:
                accepted = []
                for finding in chosen:
                    error = language.validate(apply_fixes(text, [finding]), original)
                    if error is None:
                        accepted.append(finding)
                    else:
                        rejected.add((finding.code, finding.message))
                        notes.append(
                            f"{path}:{_cell_prefix(finding)}{finding.start.line}:{finding.start.column}: "
                            f"{finding.code} [{finding.name}] fix not applied: the result would not parse ({error})"
                        )
                if not accepted:
                    break
                new_text = apply_fixes(text, accepted)
                if language.validate(new_text, original) is not None:
                    break
                chosen = accepted
            applied.extend(chosen)
            text = new_text
            findings, exports = self.check_module(text, path, language, enabled, project=project)
        return FixOutcome(text, findings, applied, notes, exports)

    def fix_path(self, path: str, write: bool = True, raw: Optional[bytes] = None, project=None) -> FileReport:
        report = FileReport(path)
        loaded = self._load(path, report, raw)
        if loaded is None:
            return report
        language, source = loaded
        outcome = self.fix_text(source.text, path, language, project)
        report.findings, report.exports = outcome.findings, outcome.exports
        report.imports = language.imports(outcome.text)
        report.notes.extend(outcome.notes)
        report.applied_fixes = outcome.applied
        report.original, report.fixed = source.text, outcome.text
        if not report.changed:
            return report
        try:
            data = source.encode(outcome.text)
            if not write:
                report.diff_texts = (source.file_text(source.text), source.file_text(outcome.text))
                return report
            write_atomic(path, data, expected_old=source.raw)
        except SourceError as error:  # changed meanwhile, read-only, an encoding that does not round-trip
            report.error = f"{path}: {error}"
        except (OSError, UnicodeError, ValueError) as error:
            report.error = f"{path}: cannot write the fixed file: {getattr(error, 'strerror', None) or error}"
        else:
            return report
        # Nothing was written: what is reported is what the file on disk still holds.
        report.findings, report.exports = self.check_module(source.text, path, language, project=project)
        report.imports = language.imports(source.text)
        report.applied_fixes = []
        report.fixed = source.text
        return report


def _unexpected(reported: List[Tuple[Rule, Diagnostic]], language: Language,
                parsed) -> List[Tuple[Rule, Diagnostic]]:
    """`reported` without the findings whose claimed exception the code expects there
    (`Rule.claims` inside `with pytest.raises(E)` and the like): a test asserting the error."""
    if not any(rule.claims for rule, _ in reported):
        return reported
    regions = language.expected_errors(parsed)
    if not regions:
        return reported
    kept = []
    for rule, diagnostic in reported:
        if rule.claims:
            catching = rule.caught_by()
            if any(region.start <= offset < region.end and region.exceptions & catching
                   for region in regions for offset in (diagnostic.start, *diagnostic.carried_by)):
                continue
        kept.append((rule, diagnostic))
    return kept


def _positions(start_offset: int, end_offset: int, lines: LineIndex, in_cell):
    """(start, end, cell) of a span; in a notebook, positions within the cell."""
    if in_cell is None:
        return lines.position(start_offset), lines.position(end_offset), None
    cell, start = in_cell(start_offset)
    return start, in_cell(end_offset)[1], cell


def _finding(path: str, rule: Rule, diagnostic: Diagnostic, lines: LineIndex, in_cell) -> Finding:
    start, end, cell = _positions(diagnostic.start, diagnostic.end, lines, in_cell)
    related = []
    for place in diagnostic.related:
        if place.path is not None:  # in another file: positions there
            related.append(RelatedLocation(place.message, *place.positions, place.start, place.end, None, place.path))
            continue
        place_start, place_end, place_cell = _positions(place.start, place.end, lines, in_cell)
        related.append(RelatedLocation(place.message, place_start, place_end, place.start, place.end, place_cell))
    return Finding(
        path=path, code=rule.code, name=rule.name, message=diagnostic.message,
        severity=rule.severity, start=start, end=end,
        start_offset=diagnostic.start, end_offset=diagnostic.end, fix=diagnostic.fix, cell=cell,
        related=tuple(related),
    )


def _cell_prefix(finding: Finding) -> str:
    return "" if finding.cell is None else f"cell {finding.cell + 1}:"


def _overlaps(first: Edit, second: Edit) -> bool:
    if first.start == first.end == second.start == second.end:
        return True  # two insertions at one point: their order would be a guess
    return first.start < second.end and second.start < first.end


def _non_overlapping(findings: Iterable[Finding]) -> List[Finding]:
    chosen: List[Finding] = []
    taken: List[Edit] = []
    for finding in sorted(findings, key=lambda f: (f.fix.start, f.fix.end, f.code)):
        edits = finding.fix.edits
        if any(_overlaps(edit, other) for edit in edits for other in taken):
            continue
        chosen.append(finding)
        taken.extend(edits)
    return chosen


def apply_fixes(text: str, findings: Iterable[Finding]) -> str:
    edits = sorted((edit for finding in findings for edit in finding.fix.edits),
                   key=lambda edit: (edit.start, edit.end))
    parts = []
    position = 0
    for edit in edits:
        parts.append(text[position:edit.start])
        parts.append(edit.replacement)
        position = max(position, edit.end)
    parts.append(text[position:])
    return "".join(parts)


def _syntax_error_code(language: Language) -> str:
    return engine_rule("syntax-error:" + language.syntax_errors).code


def exit_code(reports: Iterable[FileReport]) -> int:
    internal_error = engine_rule("internal-error").code
    has_findings = False
    for report in reports:
        if report.error is not None:
            return 2
        for finding in report.findings:
            if finding.code == internal_error:
                return 2
            has_findings = True
    return 1 if has_findings else 0

