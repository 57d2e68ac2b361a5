"""A Python file as the rules read it: CPython's `ast` outline, which every check reads, and
libcst's tree, parsed only when a fix that libcst renders is made."""
from __future__ import annotations

from functools import cached_property

from gradlint.diagnostics import Diagnostic, LineIndex
from gradlint.language import FrontEndSyntaxError, Language
# every checked Python file's from-imports are read: imported here, not by a statement in
# `imports` (a `from module import name` run again costs microseconds: `__path__` is looked
# up on the module, and the AttributeError made and dropped)
from gradlint.python.from_imports import from_imports
from gradlint.source import MAX_PYTHON_BYTES, DecodedSource, decode_python, python_gate
from gradlint.suppression import LineSuppressions, python_may_name_our_codes, python_suppressions

TYPE_CHECKING = False  # typing's names only annotate here: not imported at run time
if TYPE_CHECKING:
    from typing import Dict, List, Optional, Sequence, Tuple, Type, TypeVar

    Node = TypeVar("Node")


class PythonFile:
    """A Python module: its outline, and its libcst tree on demand. libcst positions are
    computed only when a rule asks for a span, which it does only for a fix."""

    language = "python"

    def __init__(self, path: str, text: str, module, outline=None, parse_module=None) -> None:
        self.path = path
        self.text = text
        self._module = module
        self._parse_module = parse_module  # when `module` is None: libcst parses on first use
        if outline is not None:
            self.outline = outline  # made by the screens already

    @property
    def module(self):
        """libcst's tree of the file, parsed when a rule first asks (for a fix it renders);
        raises FrontEndSyntaxError when libcst cannot read what CPython compiled."""
        if self._module is None:
            self._module = self._parse_module()
        return self._module

    @cached_property
    def outline(self):
        """CPython's `ast` view of the file (`gradlint.python.outline.Outline`), for rules
        that read it; None when CPython cannot parse the text."""
        from gradlint.python.outline import parse_outline

        return parse_outline(self.text)

    def children(self, node):
        """The node's children in source order, trivia left out (from the shared walk)."""
        found = self._walk[3].get(node)
        if found is None:
            from gradlint.python.children import code_children

            return code_children(node)
        return found

    def libcst_twin(self, node):
        """The libcst expression spanning what the outline's expression `node` spans (the
        outermost, when several do), or None: a check that reads the outline comes here only
        to write a fix that libcst renders. Positions are computed, so only for a finding."""
        return self._expressions_by_span.get(self.outline.span(node))

    @cached_property
    def _expressions_by_span(self) -> Dict[Tuple[int, int], object]:
        import libcst as cst

        found: Dict[Tuple[int, int], object] = {}
        for node in self._order:  # every node, in source order
            if isinstance(node, cst.BaseExpression):
                found.setdefault(self.span(node), node)
        return found

    def parent(self, node):
        """The node's parent, None for the module."""
        return self._walk[1].get(node)

    @cached_property
    def _walk(self):
        """One walk shared by all rules: every node grouped by type in source order, each
        node's parent, and each node's rank in source order. Whitespace, comments and
        punctuation are left out (gradlint.python.children.code_children)."""
        from gradlint.python.children import code_children as child_nodes

        by_type: Dict[type, list] = {}
        parents: Dict[object, object] = {}
        order: Dict[object, int] = {}
        children_of: Dict[object, Sequence[object]] = {}
        stack = [self.module]
        while stack:
            node = stack.pop()
            order[node] = len(order)
            by_type.setdefault(type(node), []).append(node)
            children = child_nodes(node)
            children_of[node] = children
            for child in children:
                parents[child] = node
            stack.extend(reversed(children))
        return by_type, parents, order, children_of

    @property
    def _nodes_by_type(self) -> Dict[type, list]:
        return self._walk[0]

    @property
    def _order(self) -> Dict[object, int]:
        return self._walk[2]

    def nodes(self, node_type: Type[Node]) -> List[Node]:
        return self._nodes_by_type.get(node_type, [])

    @cached_property
    def _lines(self) -> LineIndex:
        return LineIndex(self.text)

    @cached_property
    def _positions(self):
        from libcst.metadata import MetadataWrapper, PositionProvider

        wrapper = MetadataWrapper(self.module, unsafe_skip_copy=True)
        return wrapper.resolve(PositionProvider)

    def span(self, node) -> Tuple[int, int]:
        """Character offsets of `node` in the file (without its surrounding whitespace)."""
        code_range = self._positions[node]
        return (
            self._lines.offset(code_range.start.line, code_range.start.column + 1),
            self._lines.offset(code_range.end.line, code_range.end.column + 1),
        )

    def line_of(self, node) -> int:
        """The 1-based line `node` starts on."""
        return self._lines.position(self.span(node)[0]).line

    def place_of(self, node) -> str:
        """Where `node` starts, for a message that points elsewhere: `line 12`, or in a
        notebook the line a user sees, `cell 3, line 2`."""
        from gradlint.python.outline import place

        return place(self.text, self._lines, self.span(node)[0])

    def indentation_of(self, node) -> str:
        """The whitespace before `node` on its first line (a statement's indentation)."""
        start = self.span(node)[0]
        line_start = self._lines.starts[self._lines.position(start).line - 1]
        prefix = self.text[line_start:start]
        return prefix if not prefix.strip() else ""

    def diagnostic(self, node, message: str, fix=None) -> Diagnostic:
        """A finding at `node`: its position is computed here, for what is reported only."""
        start, end = self.span(node)
        return Diagnostic(start, end, message, fix)

    def code_for(self, node) -> str:
        return self.module.code_for_node(node)


# Smaller modules are screened whole: their parse costs little more than choosing the part.
PART_SCREEN_MIN_CHARS = 16_384
# Where a module's own inference-mode guard is made (GL201-GL204's prefilter).
_INFERENCE_MODE_WORDS = r"\b(?:inference_mode|_InferenceMode)\b"


class PythonLanguage(Language):
    name = "python"
    extensions = (".py",)
    syntax_errors = "python"

    def decode(self, raw: bytes) -> DecodedSource:
        return decode_python(raw)

    # libcst parses about 2-15 s per MB, worst on long generated lines: such files are
    # data rather than code someone guards.
    max_bytes = MAX_PYTHON_BYTES

    def parse(self, path: str, text: str, focus=None, outline=None) -> PythonFile:
        """With `outline` (CPython compiled the whole file, and the rules check on it), libcst
        parses the whole file only when a rule first asks for its tree, to render a fix (which
        may move any statement of a block). Else with `focus`, only the imports and the
        top-level statements the patterns select (gradlint.python.partial), once CPython has
        compiled the whole file: a syntax error in a statement left out must still be reported."""
        if outline is not None:
            return PythonFile(path, text, None, outline, lambda: self._parsed_module(text, None))
        return PythonFile(path, text, self._parsed_module(text, focus), outline)

    def _parsed_module(self, text: str, focus):
        blocker, compiles = python_gate(text)
        if blocker is not None:  # libcst would crash or take minutes
            raise FrontEndSyntaxError(f"cannot parse: {blocker[0]}", blocker[1])
        if focus and compiles:
            from gradlint.python.partial import focus as focused_text

            focused = focused_text(text, focus)
            if focused is not None:
                try:
                    return self._libcst_parse(focused)
                except FrontEndSyntaxError:
                    pass  # parsed whole, so that the error is reported where it is
        return self._libcst_parse(text)

    def prepare(self, follows_imports: bool) -> None:
        import gradlint.python.expected_errors  # noqa: F401
        import gradlint.python.flow_exports  # noqa: F401 (with the outline and the project's summaries)
        import gradlint.python.outline  # noqa: F401

        if follows_imports:  # the flow GL201-GL204 read
            import gradlint.python.flow.analysis  # noqa: F401

    def matches_in_code(self, text: str, pattern) -> bool:
        from gradlint.python.partial import matches_in_code

        return matches_in_code(text, pattern)

    def outline(self, text: str):
        from gradlint.python.outline import parse_outline

        return parse_outline(text)

    def partial_outline(self, text: str, patterns):
        """A module that may define a guard of its own (a class with `__enter__`, a
        `@contextmanager`) keeps every statement naming inference mode, where such a guard
        is made; one that defines one is screened whole: it exports its guards whatever its
        screens say (`flow_exports.module_summary`)."""
        import re

        from gradlint.python.partial import focus

        if len(text) < PART_SCREEN_MIN_CHARS:
            return None
        may_define_guards = "__enter__" in text or "contextmanager" in text
        if may_define_guards:
            patterns = [*patterns, re.compile(_INFERENCE_MODE_WORDS)]
        focused = focus(text, patterns, members=True)
        part = None if focused is None else self.outline(focused)
        if part is not None and may_define_guards:
            from gradlint.python.flow.user_guards import user_guard_names

            if user_guard_names(part):
                self.release(part)
                return None
        return part

    def outline_model(self, path: str, text: str, outline):
        from gradlint.python.outline import OutlineFile

        return OutlineFile(path, text, outline)

    def imports(self, text: str):
        return from_imports(text)

    def may_follow(self, path: str, text: str, project) -> bool:
        return project.may_bind(path, text)

    def follow_imports(self, path: str, outline, project) -> bool:
        imported = project.imported_names(path, outline.module)
        outline.imported_names = imported  # read by the flow (`flow.analysis`)
        outline.summarized = project.request_for(path)  # the flow runs to summarize these functions
        outline.exports_asked = project.asked_for(path)  # and walks these (`flow.deferred`)
        return bool(imported) or outline.summarized is not None

    def exports(self, path: str, outline):
        from gradlint.python.flow_exports import module_summary

        return module_summary(outline, path)  # data: it crosses processes and the cache

    def release(self, model) -> None:
        """The outline (`Outline.release`), the screens' or the one a parsed file made."""
        outline = model.__dict__.get("outline") if isinstance(model, PythonFile) else model
        release = getattr(outline, "release", None)
        if release is not None:
            release()

    def expected_errors(self, parsed):
        """`with pytest.raises(E)`, `with self.assertRaises(E)` and the like
        (`gradlint.python.expected_errors`), read from the parsed file's `ast` outline."""
        from gradlint.python.expected_errors import expected_errors

        return expected_errors(getattr(parsed, "outline", None))

    @staticmethod
    def _libcst_parse(text: str):
        import libcst

        try:
            return libcst.parse_module(text)
        except libcst.ParserSyntaxError as error:
            lines = LineIndex(text)
            stated = _cpython_syntax_error(text, lines)
            if stated is not None:  # CPython's words are the ones users know from Python itself
                raise FrontEndSyntaxError(f"cannot parse: {stated[0]}", stated[1]) from None
            offset = lines.offset(error.raw_line, error.raw_column + 1)
            raise FrontEndSyntaxError(f"cannot parse: {_short_parser_message(error.message)}", offset) from None
        except RecursionError:
            raise FrontEndSyntaxError("cannot parse: nesting too deep") from None

    def suppressions(self, text: str, line_index: LineIndex) -> LineSuppressions:
        return python_suppressions(text, line_index)

    def may_name_our_codes(self, text: str) -> bool:
        return python_may_name_our_codes(text)


def _cpython_syntax_error(text: str, lines: LineIndex) -> Optional[Tuple[str, int]]:
    """CPython's message for the first syntax error in `text` and its offset, or None when
    CPython compiles the text (libcst refuses syntax CPython accepts)."""
    try:
        compile(text, "<gradlint>", "exec", dont_inherit=True)
    except SyntaxError as error:
        if not error.lineno:
            return None
        line = max(1, min(error.lineno, len(lines.starts)))
        column = max(1, min(error.offset or 1, len(lines.line_text(line)) + 1))
        return error.msg, lines.offset(line, column)
    except (ValueError, RecursionError, MemoryError):
        return None
    return None


_MOST_TOKENS = 6  # libcst lists every token it expected: the first few say enough


def _short_parser_message(message: str) -> str:
    head, separator, tokens = message.partition("expected one of ")
    listed = tokens.split(", ")
    if not separator or len(listed) <= _MOST_TOKENS:
        return message
    return f"{head}expected one of {', '.join(listed[:_MOST_TOKENS])}, ... ({len(listed) - _MOST_TOKENS} more)"


class PythonStubLanguage(PythonLanguage):
    """`.pyi` type stubs: Python syntax, but nothing in a stub runs, so no rule (each is
    about what happens at run time) applies to one; no rule implements this language."""

    name = "python-stub"
    extensions = (".pyi",)


PYTHON = PythonLanguage()
PYTHON_STUB = PythonStubLanguage()
