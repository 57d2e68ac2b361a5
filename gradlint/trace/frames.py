"""Frames: which belong to the traced program (not torch, not gradlint), and the source
lines a frame or a region points at.

The hot path is `user_frame`: one dict look-up per frame walked, keyed by code object.
Everything that reads source (the `with` statement's first line, the decorator's line)
runs only when an error is annotated.
"""
from __future__ import annotations

import ast
import functools
import io
import keyword
import linecache
import os
import re
import tokenize
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

GRADLINT_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_LIBRARY_DIRS: List[str] = [GRADLINT_DIR + os.sep]
LIBRARY_BY_CODE: Dict[object, bool] = {}  # code object -> torch's or gradlint's (a cache)


def add_library_dir(path: str) -> None:
    """Frames from files under `path` are skipped like torch's own (torch's dir is added
    when the tracer starts)."""
    directory = os.path.abspath(path) + os.sep
    if directory not in _LIBRARY_DIRS:
        _LIBRARY_DIRS.append(directory)
        LIBRARY_BY_CODE.clear()


def is_library(code) -> bool:
    known = LIBRARY_BY_CODE.get(code)
    if known is None:
        filename = code.co_filename
        known = LIBRARY_BY_CODE[code] = (filename.startswith(tuple(_LIBRARY_DIRS))
                                     or filename.startswith("<frozen "))
    return known


def user_frame(frame):
    """The innermost frame at or outside `frame` that is not torch's or gradlint's."""
    library = LIBRARY_BY_CODE
    while frame is not None:
        code = frame.f_code
        skip = library.get(code)
        if skip is None:
            skip = is_library(code)
        if not skip:
            return frame
        frame = frame.f_back
    return None


@dataclass(frozen=True)
class Place:
    """A line of the traced program."""
    file: str
    line: int
    function: str

    def to_dict(self) -> dict:
        return {"file": self.file, "line": self.line, "function": self.function}

    @classmethod
    def from_dict(cls, data: dict) -> "Place":
        return cls(data["file"], int(data["line"]), data["function"])

    def shown(self) -> str:
        return f"{display_path(self.file)}:{self.line} in {self.function}()" \
            if self.function != "<module>" else f"{display_path(self.file)}:{self.line}"


def place(code, line: int) -> Place:
    filename = code.co_filename
    return Place(filename if filename.startswith("<") else os.path.abspath(filename), line,
                 getattr(code, "co_qualname", code.co_name))  # Python 3.11+: Class.method


def display_path(path: str) -> str:
    try:
        relative = os.path.relpath(path)
    except ValueError:  # another drive
        return path
    return path if relative.startswith(os.pardir) else relative


def user_stack(frames: Sequence[Tuple[object, int]]) -> List[Place]:
    """The program's own frames of (code, line) pairs, in the order given."""
    return [place(code, line) for code, line in frames if not is_library(code)]


def frame_chain(frame) -> List[Tuple[object, int]]:
    """(code, line) of `frame` and its callers, outermost first."""
    chain = []
    while frame is not None:
        chain.append((frame.f_code, frame.f_lineno))
        frame = frame.f_back
    chain.reverse()
    return chain


# --- source, read only when an error is annotated ---------------------------------------

@functools.lru_cache(maxsize=64)
def _module_ast(filename: str) -> Optional[ast.Module]:
    text = "".join(linecache.getlines(filename))
    if not text:
        return None
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError):
        return None


def with_statement_line(filename: str, line: int) -> int:
    """The first line of the `with` statement whose header holds `line` (a parenthesised
    `with` spans lines, and the frame points at the item it was entering)."""
    tree = _module_ast(filename)
    if tree is None:
        return line
    best = line
    for node in ast.walk(tree):
        if isinstance(node, (ast.With, ast.AsyncWith)) and node.body:
            if node.lineno <= line < node.body[0].lineno and node.lineno <= best:
                best = node.lineno
    return best


def decorator_line(filename: str, first_line: int, name: str) -> int:
    """The line of the inference_mode decorator of the function `name` that starts at
    `first_line` (its first decorator), or `first_line`."""
    tree = _module_ast(filename)
    if tree is None:
        return first_line
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            lines = [decorator.lineno for decorator in node.decorator_list]
            if lines and min(lines) == first_line:
                for decorator in node.decorator_list:
                    if "inference_mode" in ast.unparse(decorator):
                        return decorator.lineno
                return first_line
    return first_line


def source_line(filename: str, line: int) -> str:
    return linecache.getline(filename, line).strip()


def code_of_line(filename: str, line: int) -> str:
    """The source line without its comment."""
    text = source_line(filename, line)
    try:
        for token in tokenize.generate_tokens(io.StringIO(text + "\n").readline):
            if token.type == tokenize.COMMENT:
                return text[:token.start[1]].rstrip()
    except (tokenize.TokenError, SyntaxError):
        pass
    return text


_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def names_on_line(filename: str, line: int) -> List[str]:
    """The identifiers the source line mentions, keywords left out (best effort)."""
    text = source_line(filename, line).split("#", 1)[0]
    return [name for name in _IDENTIFIER.findall(text) if not keyword.iskeyword(name)]
