"""What rules read of a C++ file: the blanked code, the scope tree and what the
recognisers found, each computed on first use from one lexing of the text."""
from __future__ import annotations

import bisect
import re
from functools import cached_property
from typing import TYPE_CHECKING, Dict, FrozenSet, List, Optional, Tuple

from gradlint.cpp import recognisers
from gradlint.cpp.edits import include_edit
from gradlint.cpp.lexer import Lexed, lex
from gradlint.cpp.scopes import Scope, ScopeTree, build
from gradlint.cpp.signatures import Signature, signature_of
from gradlint.ordered import bisect_left_near

if TYPE_CHECKING:
    from gradlint.cpp.dataflow import Region

_LINE_END = re.compile(r"\r\n|\r|\n")
_INCLUDE = re.compile(r'#\s*(?:include|import)\s*[<"](?P<path>[^>"]+)[>"]')
_MACRO_HEAD = re.compile(r"#\s*define\s+(?P<name>[A-Za-z_]\w*)(?:\([^)]*\))?")
_CONTINUATION = re.compile(r"\\(?=\r?\n|\r)")


class CppFile:
    language = "cpp"

    def __init__(self, path: str, text: str) -> None:
        self.path = path
        self.text = text
        self._include_edits: Dict[str, object] = {}
        self._scoped: Dict[str, dict] = {}

    @cached_property
    def lexed(self) -> Lexed:
        return lex(self.text)

    @cached_property
    def code(self) -> str:
        """The source with comments, literals and preprocessor lines blanked, and code under
        `#if 0` too, since it never compiles (same offsets)."""
        from gradlint.cpp.scopes import blank_dead_branches

        return blank_dead_branches(self.lexed.code, self.lexed.directives)

    @cached_property
    def tree(self) -> ScopeTree:
        return build(self.code, self.lexed.directives)

    @cached_property
    def aliases(self) -> Dict[str, str]:
        return recognisers.namespace_aliases(self.code)

    @cached_property
    def guards(self) -> List[recognisers.GuardDecl]:
        return recognisers.find_guards(self.code, self.tree, self.aliases)

    @cached_property
    def _guards_by_scope(self) -> Dict[int, List[recognisers.GuardDecl]]:
        by_scope: Dict[int, List[recognisers.GuardDecl]] = {}
        for guard in self.guards:
            by_scope.setdefault(id(guard.scope), []).append(guard)
        return by_scope

    def guards_in(self, scope: Scope) -> List[recognisers.GuardDecl]:
        """The guards written directly in `scope` (not in scopes nested in it)."""
        return self._guards_by_scope.get(id(scope), [])

    @cached_property
    def macro_views(self) -> List["MacroView"]:
        """One view per `#define` whose body writes a guard type: the body as code (the
        lexer blanks directives whole), with the file's includes, at the file's offsets."""
        views = []
        for directive in self.lexed.directives:
            if directive.name != "define" or not recognisers.GUARD_PATTERN.search(directive.text):
                continue
            head = _MACRO_HEAD.match(self.text, directive.start, directive.end)
            if head is None:
                continue
            views.append(MacroView(head.group("name"), head.end(), directive.end, self))
        return views

    @cached_property
    def recognised(self) -> recognisers.Recognised:
        return recognisers.recognise(self.code, self.tree, self.aliases)

    @cached_property
    def include_ends(self) -> List[Tuple[str, int]]:
        """(path, end of the directive) of each `#include` (and Objective-C `#import`)."""
        return [(match.group("path"), directive.end) for directive in self.lexed.directives
                if directive.name in ("include", "import")
                for match in [_INCLUDE.match(directive.text)] if match]

    @cached_property
    def includes(self) -> List[str]:
        return [path for path, _ in self.include_ends]

    @cached_property
    def last_include_end(self) -> Optional[int]:
        """The end of the last `#include` line (where a new include goes by default)."""
        return self.include_ends[-1][1] if self.include_ends else None

    def include_for(self, guard_type: str):
        """The edit adding the header `guard_type` needs, or None when it is there."""
        if guard_type not in self._include_edits:
            newline = "\r\n" if "\r\n" in self.text else "\n"
            self._include_edits[guard_type] = include_edit(
                self.text, self.includes, self.last_include_end, guard_type, self.include_ends, newline)
        return self._include_edits[guard_type]

    @cached_property
    def _line_starts(self) -> List[int]:
        return [0] + [match.end() for match in _LINE_END.finditer(self.text)]

    def line_of(self, offset: int) -> int:
        """The 1-based line of `offset` (for messages that name another line)."""
        return bisect.bisect_right(self._line_starts, offset)

    @cached_property
    def _grad_disabled(self) -> Tuple[List[int], List[int]]:
        """Starts of the ranges where a grad-disabling guard is alive, sorted, and the
        furthest end of any range starting at or before each."""
        ranges = sorted((guard.statement_end, guard.scope.close) for guard in self.guards if guard.disables_grad)
        furthest, ends = -1, []
        for _, end in ranges:
            furthest = max(furthest, end)
            ends.append(furthest)
        return [start for start, _ in ranges], ends

    def grad_disabled_at(self, offset: int) -> bool:
        """Is a guard that turns grad mode off alive at `offset`?"""
        starts, ends = self._grad_disabled
        index = bisect.bisect_right(starts, offset) - 1
        return index >= 0 and ends[index] > offset

    def inference_mode_guards_around(self, offset: int) -> List[recognisers.GuardDecl]:
        """The `InferenceMode` guards that turn it on, declared in a scope that holds
        `offset` (anywhere in that scope: before or after `offset`)."""
        return [guard for guard in self.enabled_inference_guards if guard.scope.open < offset < guard.scope.close]

    @cached_property
    def enabled_inference_guards(self) -> List[recognisers.GuardDecl]:
        """The `InferenceMode` guards that turn it on (named or `auto`)."""
        return [guard for guard in self.guards
                if guard.guard == "InferenceMode" and guard.form in ("named", "auto") and guard.turns_autograd_off]

    @cached_property
    def disabled_inference_guards(self) -> List[recognisers.GuardDecl]:
        """`InferenceMode(false)` guards: normal mode again in their scope."""
        return [guard for guard in self.guards
                if guard.guard == "InferenceMode" and guard.form in ("named", "auto") and not guard.turns_autograd_off]

    @cached_property
    def inference_regions(self) -> List[Region]:
        """Each `InferenceMode` guard's region: what it assigns that outlives it (GL201-GL204)."""
        from gradlint.cpp.dataflow import inference_regions

        return inference_regions(self)

    @cached_property
    def guard_regions(self) -> List[Region]:
        """The regions after the guards, and the code under them and under the
        `InferenceMode(false)` guards nested in them."""
        from gradlint.cpp.dataflow import inside_regions

        return self.inference_regions + inside_regions(self)

    @cached_property
    def inference_returning(self) -> Dict[str, recognisers.GuardDecl]:
        """Function name -> the guard under which it makes the tensor it returns (a summary
        of each function of the file that returns an inference tensor)."""
        from gradlint.cpp.dataflow import inference_returning

        return inference_returning(self)

    @cached_property
    def flow_regions(self) -> List[Region]:
        """Every region GL201-GL203 follow: the guard regions, and the code after calls of
        functions that return an inference tensor."""
        from gradlint.cpp.dataflow import call_regions

        return self.guard_regions + call_regions(self)

    @cached_property
    def words_outside_functions(self) -> FrozenSet[str]:
        """Words written outside every function body (globals, members, types): a new local
        with one of these names would shadow it."""
        parts, last = [], 0
        for scope in self.tree.scopes:
            if scope.open < last or not scope.is_function:
                continue
            parts.append(self.code[last:scope.open])
            last = scope.close
        parts.append(self.code[last:])
        return frozenset(re.findall(r"[A-Za-z_]\w*", "".join(parts)))

    def signature_of(self, function: Scope) -> Optional[Signature]:
        """The name, return type and parameters of `function` read from its header."""
        return signature_of(function)

    def function_at(self, offset: int) -> Optional[Scope]:
        return self.tree.scope_at(offset).enclosing_function()

    @cached_property
    def dispatch(self):
        """Registrations by op name and key, and which calls may reach the dispatcher."""
        from gradlint.cpp.dispatch import DispatchModel

        return DispatchModel(self.text, self.code, self.tree)

    @cached_property
    def module_names(self):
        """Names declared as modules here (what `.forward(` runs a model on)."""
        return recognisers.module_names(self.code, self.tree)

    def per_scope(self, key: str, scope: Scope, compute):
        """`compute(scope)`, once per scope and key: a file with many guards in one function
        asks about that function once, not once per guard."""
        cache = self._scoped.setdefault(key, {})
        if scope.open not in cache:
            cache[scope.open] = compute(scope)
        return cache[scope.open]

    def is_kernel(self, function: Scope) -> bool:
        return self.per_scope("is_kernel", function,
                              lambda scope: recognisers.is_kernel(self.code, scope, self.recognised))

    def is_inference(self, function: Scope) -> bool:
        return self.per_scope("is_inference", function,
                              lambda scope: recognisers.is_inference(self.code, scope, self.module_names))

    def autograd_method(self, function: Scope) -> Optional[str]:
        """"forward"/"backward" of a custom Function (a lambda's: of the function around it)."""
        named = recognisers.named_function(function)
        if named is None:
            return None
        return self.per_scope("autograd_method", named,
                              lambda scope: recognisers.autograd_method(self.code, scope, self.recognised))

    def offsets(self, pattern: "re.Pattern[str]") -> List[int]:
        """The sorted start offsets of every match of `pattern` in the blanked code."""
        cache = self._scoped.setdefault("offsets", {})
        if pattern not in cache:
            cache[pattern] = [match.start() for match in pattern.finditer(self.code)]
        return cache[pattern]

    def first_model_call(self, start: int, end: int) -> Optional[int]:
        """The first place in [start, end) that runs a module (not one that loads it)."""
        if "model_calls" not in self._scoped:
            calls = [match.start() for match in recognisers.RUNS_METHOD.finditer(self.code)]
            calls += [match.start() for match in recognisers.FORWARD_CALL.finditer(self.code)
                      if recognisers.forward_object(self.code, match) in self.module_names]
            self._scoped["model_calls"] = sorted(calls)
        calls = self._scoped["model_calls"]
        index = bisect.bisect_left(calls, start)
        return calls[index] if index < len(calls) and calls[index] < end else None

    def first_match(self, pattern: "re.Pattern[str]", start: int, end: int) -> Optional[int]:
        """The first offset in [start, end) where `pattern` matches (one bisect, no scan)."""
        found = self.offsets(pattern)
        hints = self._scoped.setdefault("first_match_hints", {})
        index = hints[pattern] = bisect_left_near(found, start, hints.get(pattern, 0))
        return found[index] if index < len(found) and found[index] < end else None

    def redispatches(self, function: Scope) -> bool:
        return self.per_scope("redispatches", function,
                              lambda scope: recognisers.redispatches(self.code, scope, self.recognised))


class MacroView(CppFile):
    """A macro body read as code: the file's text with everything but the body and the
    include lines blanked (line continuations too), so offsets are the file's and a
    fix's edits apply to it."""

    def __init__(self, name: str, start: int, end: int, file: CppFile) -> None:
        self.macro = name
        self.body_start, self.body_end = start, end
        keep = [(directive.start, directive.end) for directive in file.lexed.directives
                if directive.name in ("include", "import")] + [(start, end)]
        parts, last = [], 0
        for keep_start, keep_end in sorted(keep):
            parts.append(_blank(file.text[last:keep_start]))
            kept = file.text[keep_start:keep_end]
            parts.append(_CONTINUATION.sub(" ", kept) if keep_start == start else kept)
            last = keep_end
        parts.append(_blank(file.text[last:]))
        super().__init__(file.path, "".join(parts))
        self.original_text = file.text


def _blank(text: str) -> str:
    return re.sub(r"[^\r\n]", " ", text)
