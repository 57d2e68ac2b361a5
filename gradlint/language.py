"""What a language front end offers the engine: how to decode a file, how to parse
it once into the model its rules read, how suppression comments are written, and
whether fixed source still parses. (Which front end reads a file: `gradlint.frontend`.)"""
from __future__ import annotations

import re

from gradlint.source import DecodedSource

TYPE_CHECKING = False  # typing's names only annotate here: not imported at run time
if TYPE_CHECKING:
    from typing import Callable, Optional, Sequence, Tuple

    Suppressions = Callable[[int, str], bool]  # (line, code) -> suppressed?


class FrontEndSyntaxError(Exception):
    """The file cannot be parsed; `offset` is where (character offset), if known."""

    def __init__(self, message: str, offset: int = 0) -> None:
        super().__init__(message)
        self.message = message
        self.offset = offset


class Language:
    name: str
    extensions: Tuple[str, ...]
    # The syntax errors it reports: the rule whose `engine_reports` is
    # `"syntax-error:<this>"` holds them (GL001 for the Python family).
    syntax_errors: str
    def decode(self, raw: bytes) -> DecodedSource:
        raise NotImplementedError

    def decode_text(self, text: str) -> DecodedSource:
        """A file's contents already held as a string (the Python API, editors)."""
        return DecodedSource(text, "utf-8", False, text.encode("utf-8", "surrogatepass"))

    # Files larger than this many bytes are skipped with a note (None: no limit).
    max_bytes: Optional[int] = None

    def parse(self, path: str, text: str, focus: Optional[Sequence] = None, outline=None):
        """The model the rules read; raises FrontEndSyntaxError. `focus`: the prefilter
        patterns of the rules to run, when none needs the whole file; a language may
        then parse only the parts they match. `outline`: the language's outline of `text`
        when the screens made one (the model keeps it rather than make it again)."""
        raise NotImplementedError

    def matches_in_code(self, text: str, pattern: "re.Pattern[str]") -> bool:
        """Whether a rule's prefilter `pattern` (which matches `text`) matches its code: the
        text with its comments and string literals blanked; True when the language cannot
        tell (the default). A rule runs only on files whose code each of its prefilters
        matches: a finding is made of code."""
        return True

    def outline(self, text: str):
        """A cheap structural view of `text` that rules' screens read before anything is
        parsed (`Rule.screen`); None when the language has none or `text` does not allow
        one: then the rules run on the full parse."""
        return None

    def partial_outline(self, text: str, patterns: Sequence):
        """The outline of only the part of `text` that `parse` with focus `patterns` would read,
        for the rules' part screens (`Rule.part_screen`); None when the language makes none, or
        the whole text must be screened."""
        return None

    def outline_model(self, path: str, text: str, outline):
        """The model for rules that read only the outline (`Rule.reads_outline_only`): what
        `parse` would give when every rule to run is such a rule; None to parse anyway."""
        return None

    def prepare(self, follows_imports: bool) -> None:
        """Import the modules checking a file reads (its outline, its imports and exports;
        with `follows_imports`, some enabled rule follows imports: what they run), before a
        pool forks: its workers then inherit them (`Linter.prepare`)."""

    def imports(self, text: str) -> Tuple[str, ...]:
        """The modules `text` may import from other checked files (a cheap text search; the
        run checks it again when one of them exports something, `gradlint.python.project`)."""
        return ()

    def may_follow(self, path: str, text: str, project) -> bool:
        """False when `text` surely binds nothing of `project` (a cheap search, before the
        outline is parsed for `follow_imports`)."""
        return False

    def follow_imports(self, path: str, outline, project) -> bool:
        """Bind the outline's imports to `project`'s exports (a `ProjectIndex`) for the rules
        that follow them; whether any name is bound."""
        return False

    def exports(self, path: str, outline):
        """What the checked file offers its importers, read from what the rules computed on
        its outline; None: nothing."""
        return None

    def release(self, model) -> None:
        """Called once the engine is done with a file's outline or parsed model (`parse`): a
        front end whose models hold reference cycles breaks them here, so that a file's trees
        are freed at once rather than by the cycle collector walking them. Nothing by default."""

    def expected_errors(self, parsed) -> Sequence:
        """The regions of the parsed file that expect an exception (objects with `start`,
        `end` offsets and the `exceptions` they catch, by name): where a rule's claimed
        exception (`Rule.claims`) is what the code is tested to raise. None by default (C++:
        gtest's `EXPECT_THROW` is not read)."""
        return ()

    def suppressions(self, text: str, line_index) -> "Suppressions":
        raise NotImplementedError

    def may_name_our_codes(self, text: str) -> bool:
        """Whether a suppression comment `suppressions` reads in `text` may name a gradlint
        code (GL003 audits those; asked of every file): `suppression.may_name_our_codes`, or
        a cheaper test that knows which comments the language reads."""
        raise NotImplementedError

    def cell_positions(self, text: str, line_index) -> Optional[Callable]:
        """For languages made of cells (notebooks): a function from an offset in `text`
        to (0-based cell index, Position within the cell); None for plain files."""
        return None

    def validate(self, text: str, original: Optional[str] = None) -> Optional[str]:
        """None when `text` may be written as the fixed form of `original`, else why
        not. Here: when it parses (an original with a finding to fix always did)."""
        try:
            self.parse("<fixed>", text)
        except FrontEndSyntaxError as error:
            return error.message
        return None

