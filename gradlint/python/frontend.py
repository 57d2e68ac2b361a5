"""Parse a Python file once with libcst and offer rules what they ask of it."""
from __future__ import annotations

from functools import cached_property
from typing import Dict, List, Optional, Tuple, Type, TypeVar

from gradlint.diagnostics import LineIndex
from gradlint.frontend import FrontEndSyntaxError, Language
from gradlint.source import DecodedSource, decode_python
from gradlint.suppression import LineSuppressions, python_suppressions

Node = TypeVar("Node")


class PythonFile:
    """A parsed Python module. Positions are computed only when a rule asks for a
    span, which it does only when it reports something."""

    language = "python"

    def __init__(self, path: str, text: str, module) -> None:
        self.path = path
        self.text = text
        self.module = module

    @cached_property
    def imports(self):
        from gradlint.python.names import ImportTable

        return ImportTable.of_module(self.module)

    def qualified_name(self, node) -> Optional[str]:
        return self.imports.qualified_name(node)

    @cached_property
    def _nodes_by_type(self) -> Dict[type, list]:
        """Every node of the module, grouped by type, in source order (one walk shared by all rules)."""
        by_type: Dict[type, list] = {}
        stack = [self.module]
        while stack:
            node = stack.pop()
            by_type.setdefault(type(node), []).append(node)
            stack.extend(reversed(node.children))
        return by_type

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

    def code_for(self, node) -> str:
        return self.module.code_for_node(node)


class PythonLanguage(Language):
    name = "python"
    extensions = (".py", ".pyi")
    syntax_error_code = "GL001"

    def decode(self, raw: bytes) -> DecodedSource:
        return decode_python(raw)

    def parse(self, path: str, text: str) -> PythonFile:
        import libcst

        try:
            module = libcst.parse_module(text)
        except libcst.ParserSyntaxError as error:
            lines = LineIndex(text)
            offset = lines.offset(error.raw_line, error.raw_column + 1)
            raise FrontEndSyntaxError(f"cannot parse: {error.message}", offset) from None
        except RecursionError:
            raise FrontEndSyntaxError("cannot parse: nesting too deep") from None
        return PythonFile(path, text, module)

    def suppressions(self, text: str, line_index: LineIndex) -> LineSuppressions:
        return python_suppressions(text, line_index)


PYTHON = PythonLanguage()
