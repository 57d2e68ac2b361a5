"""Brace matching into a scope tree over blanked C++ code.

Every `{ ... }` becomes a `Scope` whose kind comes from the text before the brace (its
header): namespace, class, function, lambda, registration (`TORCH_LIBRARY_IMPL(...)`),
block (plain, control statements), init (a braced initializer). Objective-C++ method
bodies (`- (NSArray*)predict:(void*)buffer { ... }`) are functions.

`#if/#elif/#else` chains whose branches leave different brace balances (a function
header written twice, once per configuration) would unbalance the tree, so in such a
chain only the first branch counts; chains whose branches are each balanced count in
full. Unbalanced or truncated input still gives a tree, plus warnings.
"""
from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field
from typing import List, Optional, Sequence, Tuple

from gradlint.cpp.lexer import Directive
from gradlint.ordered import bisect_left_near

_BRACE = re.compile(r"[{}]")
_ACCESS = re.compile(r"^\s*(?:(?:public|private|protected|signals|slots|Q_SLOTS)\s*:(?!:)\s*)+")
_TEMPLATE = re.compile(r"^\s*template\s*<")
_CASE_LABEL = re.compile(r"^\s*(?:case\b[^;]*?|default\s*):(?!:)\s*$", re.DOTALL)
_TYPE_HEAD = re.compile(
    r"^\s*(?:(?:typedef|export|inline|alignas\s*\([^)]*\)|\[\[[^\]]*\]\])\s+)*"
    r"(?P<kind>namespace|class|struct|union|enum(?:\s+(?:class|struct))?)\b(?P<rest>[\s\S]*)$"
)
_NAME_BEFORE_BASES = re.compile(
    r"^\s*(?:(?:__attribute__\s*\(\([^)]*\)\)|\[\[[^\]]*\]\]|alignas\s*\([^)]*\)|[A-Z][A-Z0-9_]*_API|"
    r"C10_API|TORCH_API)\s*)*(?P<name>[A-Za-z_][\w:<>, ]*?)?\s*(?:\bfinal\b\s*)?(?::(?!:)(?P<bases>[\s\S]*))?$"
)
_CONTROL = re.compile(r"^\s*(?:else\s+)?(?:if|for|while|switch|catch|__try|@catch|BOOST_FOREACH|Q_FOREACH)\b")
_BLOCK_WORDS = re.compile(r"(?:^|[^\w])(?:else|do|try|__finally|@autoreleasepool|@try|@finally|@synchronized\s*\([^)]*\))\s*$")
# An Objective-C method header, `- (NSString *)name` (the type may hold parentheses: blocks).
OBJC_METHOD = re.compile(r"(?m)^[ \t]*[-+][ \t]*\((?P<type>[^()]*(?:\([^()]*\)[^()]*)*)\)\s*(?P<name>[A-Za-z_]\w*)")
_OBJC_CONTAINER = re.compile(r"@(?:implementation|interface|protocol)\b[^\n]*")
_TRAILING_SPECIFIERS = re.compile(
    r"(?:\s*(?:const|volatile|override|final|noexcept|mutable|constexpr|consteval|try|&&|&|"
    r"__attribute__\s*\(\([^()]*\)\)|C10_NOEXCEPT))+\s*$"
)
_IDENTIFIER_BEFORE = re.compile(
    r"(?P<name>(?:(?:::)?\s*[A-Za-z_]\w*(?:\s*<[^;{}()]*>)?\s*::\s*)*~?\s*"
    r"(?:operator\s*(?:\(\s*\)|\[\s*\]|[^\s\w(]+|\s\w[\w:\s*&<>]*)|[A-Za-z_]\w*))\s*$"
)
_NOT_FUNCTION_NAMES = frozenset({
    "if", "for", "while", "switch", "catch", "return", "sizeof", "decltype", "alignas",
    "__attribute__", "__declspec", "noexcept", "static_assert", "throw", "new", "delete",
    "typeid", "alignof",
})
REGISTRATION_MACROS = frozenset({"TORCH_LIBRARY_IMPL", "TORCH_LIBRARY", "TORCH_LIBRARY_FRAGMENT"})
_ENDS_LIKE_EXPRESSION = re.compile(r"(?:[=,(\[{?:!~^%*/+\-<|&]|\breturn|\bco_return|\bthrow)\s*$")

_MAX_HEADER = 2000
_PAREN = re.compile(r"[()]")
FUNCTION_KINDS = ("function", "lambda", "method")


class Scope:
    """One `{...}`. Its kind and names come from its header, read on first use: most
    scopes of a file are never asked about."""

    _LAZY = frozenset({"kind", "start", "header", "name", "qualifier", "bases", "arguments"})
    # kind: file, namespace, class, function, method (Objective-C), lambda, registration,
    # block, init. start: where the header starts. name: function/class/namespace name,
    # unqualified; qualifier: `Foo` in an out-of-line `Foo::forward`; bases: a class's base
    # list; arguments: a registration macro's arguments.

    def __init__(self, open: int, close: int, parent: Optional["Scope"] = None, kind: Optional[str] = None,
                 source: str = "", boundary: int = 0) -> None:
        self.open = open  # offset of `{` (-1 for the file)
        self.close = close  # offset of the matching `}` (end of text when missing)
        self.parent = parent
        self.children: List[Scope] = []
        if kind is None:
            self._source, self._boundary = source, boundary
        else:
            self.kind, self.start, self.header = kind, 0, ""
            self.name = self.qualifier = self.bases = self.arguments = ""

    def __getattr__(self, attribute: str):
        if attribute in Scope._LAZY and "_source" in self.__dict__:
            # Classifying reads the parent's kind: classify unread ancestors top-down,
            # in a loop, so a thousand nested blocks do not recurse a thousand deep.
            unread = [self]
            while unread[-1].parent is not None and "_source" in unread[-1].parent.__dict__:
                unread.append(unread[-1].parent)
            for scope in reversed(unread):
                _classify(scope)
            return self.__dict__[attribute]
        raise AttributeError(attribute)

    def __repr__(self) -> str:
        return f"Scope({self.kind!r}, {self.name!r}, open={self.open}, close={self.close})"

    @property
    def is_function(self) -> bool:
        return self.kind in FUNCTION_KINDS

    def contains(self, offset: int) -> bool:
        return self.open < offset < self.close or self.open == -1  # the file holds everything

    def ancestors(self):
        scope = self.parent
        while scope is not None:
            yield scope
            scope = scope.parent

    def enclosing_function(self) -> Optional["Scope"]:
        scope: Optional[Scope] = self
        while scope is not None and not scope.is_function:
            scope = scope.parent
        return scope


@dataclass
class ScopeTree:
    root: Scope
    scopes: List[Scope]  # every scope but the root, in order of `open`
    warnings: List[Tuple[int, str]]
    structure: str  # the code with ignored preprocessor branches blanked
    _opens: List[int] = field(default_factory=list)
    _last_index: int = field(default=0, repr=False, compare=False)  # where `scope_at` looked last

    def __post_init__(self) -> None:
        self._opens = [scope.open for scope in self.scopes]

    def scope_at(self, offset: int) -> Scope:
        """The innermost scope whose braces enclose `offset`."""
        self._last_index = bisect_left_near(self._opens, offset, self._last_index)
        index = self._last_index - 1
        if index < 0:
            return self.root
        scope: Optional[Scope] = self.scopes[index]
        while scope is not None and not scope.contains(offset):
            scope = scope.parent
        return scope or self.root

    def scope_opened_after(self, offset: int) -> Optional[Scope]:
        """The first scope whose `{` comes after `offset` (the one a header at `offset` opens)."""
        index = bisect.bisect_right(self._opens, offset)
        return self.scopes[index] if index < len(self.scopes) else None


_CONSTANT_CONDITION = re.compile(r"#\s*(?:el)?if\s+(?P<value>0+|1|false|true)\s*(?://.*|/\*.*)?$", re.DOTALL)


def dead_branches(directives: Sequence[Directive]) -> List[Tuple[int, int]]:
    """Ranges of code the preprocessor always drops: a `#if 0` (`#elif 0`, `#if false`)
    branch, and what follows a `#if 1` branch up to its `#endif`. Such code never
    compiles, so no rule reads it."""
    dead: List[Tuple[int, int]] = []
    stack: List[dict] = []  # per open chain: where a dead stretch began, and whether a branch was taken
    for directive in directives:
        name = directive.name
        if name in ("if", "ifdef", "ifndef", "elif", "else", "endif") and stack and stack[-1]["dead_from"] is not None:
            chain = stack[-1]
            if name in ("if", "ifdef", "ifndef"):
                chain["depth"] += 1
                continue
            if chain["depth"]:
                chain["depth"] -= name == "endif"
                continue
            dead.append((chain["dead_from"], directive.start))
            chain["dead_from"] = None
        if name in ("if", "ifdef", "ifndef"):
            stack.append({"dead_from": None, "taken": False, "depth": 0})
            value = _constant(directive) if name == "if" else None
            if value is False:
                stack[-1]["dead_from"] = directive.end
            elif value is True:
                stack[-1]["taken"] = True
        elif name in ("elif", "else") and stack:
            chain = stack[-1]
            value = _constant(directive) if name == "elif" else True
            if chain["taken"] or value is False:
                chain["dead_from"] = directive.end
            elif value is True and name == "elif":
                chain["taken"] = True
        elif name == "endif" and stack:
            stack.pop()
    for chain in stack:
        if chain["dead_from"] is not None:
            dead.append((chain["dead_from"], directives[-1].end if directives else chain["dead_from"]))
    return dead


def _constant(directive: Directive) -> Optional[bool]:
    match = _CONSTANT_CONDITION.match(directive.text.strip())
    if match is None:
        return None
    return match.group("value") in ("1", "true")


def blank_dead_branches(code: str, directives: Sequence[Directive]) -> str:
    return _blank_ranges(code, dead_branches(directives))


def ignored_branches(code: str, directives: Sequence[Directive]) -> List[Tuple[int, int]]:
    """Ranges of `#elif/#else` branches not to count because their chain's branches
    leave different brace balances."""
    ignored: List[Tuple[int, int]] = []
    stack: List[dict] = []

    def close_branch(chain: dict, end: int) -> None:
        raw = code.count("{", chain["from"], end) - code.count("}", chain["from"], end)
        chain["branches"].append((chain["from"], end, raw, raw - chain["adjust"]))
        chain["adjust"] = 0

    for directive in directives:
        name = directive.name
        if name in ("if", "ifdef", "ifndef"):
            stack.append({"from": directive.end, "branches": [], "adjust": 0})
        elif name in ("elif", "else", "elifdef", "elifndef") and stack:
            chain = stack[-1]
            close_branch(chain, directive.start)
            chain["from"] = directive.end
        elif name == "endif" and stack:
            chain = stack.pop()
            close_branch(chain, directive.start)
            _settle(chain, ignored, stack)
    while stack:
        chain = stack.pop()
        close_branch(chain, len(code))
        _settle(chain, ignored, stack)
    return sorted(ignored)


def _settle(chain: dict, ignored: List[Tuple[int, int]], stack: List[dict]) -> None:
    branches = chain["branches"]
    deltas = [delta for _, _, _, delta in branches]
    effective = 0
    if any(deltas):
        effective = deltas[0]
        ignored.extend((start, end) for start, end, _, _ in branches[1:])
    if stack:
        stack[-1]["adjust"] += sum(raw for _, _, raw, _ in branches) - effective


def _blank_ranges(code: str, ranges: Sequence[Tuple[int, int]]) -> str:
    if not ranges:
        return code
    parts = []
    last = 0
    for start, end in ranges:
        if end <= last:
            continue
        start = max(start, last)
        parts.append(code[last:start])
        parts.append(re.sub(r"[^\r\n]", " ", code[start:end]))
        last = end
    parts.append(code[last:])
    return "".join(parts)


def build(code: str, directives: Sequence[Directive]) -> ScopeTree:
    structure = _blank_ranges(code, ignored_branches(code, directives))
    root = Scope(-1, len(code), kind="file")
    scopes: List[Scope] = []
    warnings: List[Tuple[int, str]] = []
    stack: List[Scope] = []
    current = root
    previous = 0  # just after the previous brace
    for match in _BRACE.finditer(structure):
        offset = match.start()
        if structure[offset] == "{":
            scope = Scope(offset, len(code), current, source=structure,
                          boundary=_statement_start(structure, previous, offset))
            current.children.append(scope)
            scopes.append(scope)
            stack.append(current)
            current = scope
        elif not stack:
            warnings.append((offset, "unbalanced `}`: no matching `{`"))
        else:
            current.close = offset
            current = stack.pop()
        previous = offset + 1
    while stack:
        warnings.append((current.open, "unclosed `{` at the end of the file"))
        current.close = len(code)
        current = stack.pop()
    return ScopeTree(root, scopes, warnings, structure)


def _statement_start(code: str, previous: int, brace: int) -> int:
    """Just after the last `;` before `brace` that is not inside parentheses (`for (;;)`),
    or `previous` (just after the previous brace)."""
    semicolon = code.rfind(";", previous, brace)
    while semicolon >= 0:
        if code.count(")", semicolon, brace) <= code.count("(", semicolon, brace):
            return semicolon + 1
        semicolon = code.rfind(";", previous, semicolon)
    return previous


def _classify(scope: Scope) -> None:
    code, boundary, brace, parent = scope._source, scope._boundary, scope.open, scope.parent
    del scope._source
    # A header longer than this is macro soup; its tail is all that classification needs.
    header = code[max(boundary, brace - _MAX_HEADER):brace]
    stripped_header = header.strip()
    scope.start = max(boundary, brace - _MAX_HEADER) + (len(header) - len(header.lstrip()))
    scope.kind, scope.header = "init", stripped_header
    scope.name = scope.qualifier = scope.bases = scope.arguments = ""
    if parent.kind in ("init",):
        return
    text = _ACCESS.sub("", stripped_header) if ":" in stripped_header else stripped_header
    if "@" in text:
        objc_container = None
        for objc_container in _OBJC_CONTAINER.finditer(text):
            pass
        if objc_container is not None:
            text = text[objc_container.end():].strip()
    if parent.kind in ("file", "namespace") and ("-" in text or "+" in text):
        method = OBJC_METHOD.search(text)
        if method is not None:
            scope.kind, scope.name = "method", method.group("name")
            return
    if not text or _CASE_LABEL.match(text) or _BLOCK_WORDS.search(text):
        scope.kind = "block"
        return
    while _TEMPLATE.match(text):
        text = _skip_template(text)
    type_head = _TYPE_HEAD.match(text)
    if type_head is not None and "(" not in type_head.group("rest"):
        kind = type_head.group("kind")
        rest = type_head.group("rest")
        if kind == "namespace":
            scope.kind, scope.name = "namespace", rest.strip()
        elif kind.startswith("enum"):
            scope.kind = "init"
        else:
            scope.kind = "class"
            head = _NAME_BEFORE_BASES.match(rest)
            if head is not None:
                scope.name = re.sub(r"<.*", "", (head.group("name") or "")).strip().split("::")[-1]
                scope.bases = (head.group("bases") or "").strip()
        return
    if re.match(r'^\s*extern\b[^()]*$', text):
        scope.kind = "namespace"  # `extern "C" {`: transparent; `extern "C" T f(...) {` is a function
        return
    if _CONTROL.search(text):
        scope.kind = "block"
        return
    body = _strip_trailing(text)
    if _ENDS_LIKE_EXPRESSION.search(body):
        return
    if body.endswith("]") or body.endswith(")"):
        close = len(body) - 1
        if body.endswith(")"):
            open_paren = _matching_open(body, close)
            if open_paren is None:
                return
            before = body[:open_paren].rstrip()
            if before.endswith("]"):
                scope.kind = "lambda"
                return
        else:
            scope.kind = "lambda"
            return
    open_paren = _first_call_paren(body)
    if open_paren is None:
        return
    name_match = _IDENTIFIER_BEFORE.search(body, max(0, open_paren - 300), open_paren)
    if name_match is None:
        return
    full_name = re.sub(r"\s+", "", name_match.group("name"))
    if full_name in REGISTRATION_MACROS:
        close_paren = matching_close(body, open_paren)
        scope.kind, scope.name = "registration", full_name
        scope.arguments = body[open_paren + 1:close_paren if close_paren is not None else len(body)]
        return
    if full_name.split("::")[-1] in _NOT_FUNCTION_NAMES:
        return
    if not body.endswith(")"):
        return  # `T x(args) {...}`-like initializers, constructor init lists with braces
    parts = re.sub(r"<[^<>]*>", "", full_name).split("::")
    scope.kind = "function"
    scope.name = parts[-1]
    scope.qualifier = parts[-2] if len(parts) > 1 else ""
    return


def _skip_template(text: str) -> str:
    close = matching_close(text, text.index("<"), "<", ">")
    return "" if close is None else text[close + 1:].lstrip()


def _strip_trailing(text: str) -> str:
    """Drop trailing qualifiers, `noexcept(...)` and a trailing return type."""
    body = text.rstrip()
    for _ in range(4):
        if body[-1:].isalpha() or body[-1:] in "&)":
            body = _TRAILING_SPECIFIERS.sub("", body)
        if body.endswith(")"):
            open_paren = _matching_open(body, len(body) - 1)
            if open_paren is not None and re.search(r"\b(?:noexcept|throw|requires)\s*$", body[:open_paren]):
                body = body[:open_paren].rstrip()
                body = re.sub(r"\b(?:noexcept|throw|requires)$", "", body).rstrip()
                continue
        arrow = _top_level_arrow(body)
        if arrow is not None:
            body = body[:arrow].rstrip()
            continue
        break
    return body


def _top_level_arrow(text: str) -> Optional[int]:
    if "->" not in text:
        return None
    depth = 0
    for index in range(len(text) - 1, 0, -1):
        char = text[index]
        if char == ")":
            depth += 1
        elif char == "(":
            depth -= 1
        elif depth == 0 and char == ">" and text[index - 1] == "-":
            return index - 1
        if depth < 0:
            return None
    return None


def _matching_open(text: str, close: int) -> Optional[int]:
    depth = 0
    index = close
    while index >= 0:
        open_index = text.rfind("(", 0, index + 1)
        close_index = text.rfind(")", 0, index + 1)
        if close_index > open_index:
            depth += 1
            index = close_index - 1
        elif open_index >= 0:
            depth -= 1
            if depth == 0:
                return open_index
            index = open_index - 1
        else:
            return None
    return None


def matching_close(text: str, opening: int, opener: str = "(", closer: str = ")",
                   end: Optional[int] = None) -> Optional[int]:
    """The offset of the `closer` that balances the `opener` at `opening` (before `end`)."""
    depth = 0
    for index in range(opening, len(text) if end is None else end):
        char = text[index]
        if char == opener:
            depth += 1
        elif char == closer:
            depth -= 1
            if depth == 0:
                return index
    return None


def _first_call_paren(text: str) -> Optional[int]:
    """The first `(` at depth zero that follows a name (not `__attribute__((...))`)."""
    depth = 0
    for match in _PAREN.finditer(text):
        index = match.start()
        if text[index] == "(":
            if depth == 0:
                name = _IDENTIFIER_BEFORE.search(text, max(0, index - 300), index)
                if name is not None and re.sub(r"\s+", "", name.group("name")).split("::")[-1] not in (
                        "__attribute__", "__declspec", "alignas", "decltype"):
                    return index
            depth += 1
        else:
            depth = max(0, depth - 1)
    return None
