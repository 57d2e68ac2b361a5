"""Which variables carry a tensor made under `c10::InferenceMode` past the guard's
scope, statement by statement through the rest of the function.

A variable declared outside a scope that holds an enabled `InferenceMode` guard and
assigned inside it (after the guard) holds an inference tensor once the scope closes
(torch-semantics §7a). Views of it (`v.view(...)`, `v[0]`, `v.select(...)`, and no-op
conversions, which return `v` itself, §1) carry the taint; `.clone()`, other results
and rebinding clear it. `v.detach()` is an inference tensor that escapes the in-place
check (§7a), so it is not followed.
"""
from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field
from typing import Dict, Iterator, List, Optional, Set, Tuple

from gradlint.cpp.recognisers import GuardDecl
from gradlint.diagnostics import Related
from gradlint.cpp.scopes import Scope

_ASSIGNED = re.compile(r"(?<![\w.>:])(?P<name>[A-Za-z_]\w*)\s*(?:\[[^\];]*\]\s*)*=(?!=)")
_BEFORE_PLAIN_ASSIGNMENT = re.compile(r"(?:^|[;{}(),]|\belse|\breturn|\bdo)\s*$")
_STATEMENT_END = re.compile(r"[;{}()]")
_WORD = re.compile(r"[A-Za-z_]\w*")
VIEW_CHAIN = (
    r"(?:\s*(?:\.\s*(?:view|select|slice|narrow|expand|expand_as|as_strided|transpose|t|permute|"
    r"squeeze|unsqueeze|view_as|contiguous|to|float|alias|diagonal|"
    r"unfold|real|imag|mT|mH|T|H)\s*\((?:[^;()]|\([^;()]*\))*\)|\[[^\];]*\]))*"
)
_DECLARED_WITH = re.compile(
    r"(?P<type>[A-Za-z_][\w:]*)\s*(?:<[^;{}]*>)?\s*[&*]*\s*(?<=[\s&*>])(?P<name>[A-Za-z_]\w*)\s*(?:=(?!=)|\(|\{|;)"
)
_NOT_TYPES = frozenset({"return", "else", "delete", "throw", "co_return", "case", "goto", "new", "do",
                        "co_yield", "sizeof", "typedef", "using"})
_MODULE_VALUE = re.compile(
    r"^\s*(?:(?:torch\s*::\s*)?nn\s*::\s*[A-Z]\w*\s*[({]|std\s*::\s*make_shared\s*<|"
    r"register_module\s*\(|[A-Z]\w*(?:Impl)?\s*\()"
)
_MODULE_DECLARATION = r"(?:(?:torch\s*::\s*)?nn\s*::\s*[A-Z]\w*|std\s*::\s*shared_ptr\s*<[^;{}]*>)\s+{name}\b"


@dataclass
class Region:
    """The code an `InferenceMode` guard covers, and what is tainted when it ends."""

    guard: GuardDecl
    function: Scope
    scope: Scope
    assigned: Dict[str, int] = field(default_factory=dict)  # name -> offset of its assignment


def assigned_outside(code: str, scope: Scope, start: int) -> Dict[str, int]:
    """Variables assigned in code[start:scope.close] but declared before `start`."""
    end = scope.close
    declared_inside = {match.group("name") for match in _DECLARED_WITH.finditer(code, start, end)
                       if match.group("type") not in _NOT_TYPES}
    found: Dict[str, int] = {}
    for match in _ASSIGNED.finditer(code, start, end):
        name = match.group("name")
        if name in declared_inside or name in found:
            continue
        if _BEFORE_PLAIN_ASSIGNMENT.search(code[max(0, match.start() - 40):match.start()]) is None:
            continue  # `Type name = ...` declares
        found[name] = match.start("name")
    return found


def assigns_outer_variable(file, scope: Scope, start: int) -> bool:
    """Does code[start:scope.close] assign a variable it does not declare (one from before
    `start`)? `assigned_outside` as a yes/no, answered for every start in the scope from
    one backward sweep over its declarations and assignments."""
    offsets, answers = file.per_scope("outer_assignments", scope, lambda _: _outer_assignment_sweep(file.code, scope))
    index = bisect.bisect_left(offsets, start)
    return answers[index] if index < len(answers) else False


def _outer_assignment_sweep(code: str, scope: Scope) -> Tuple[List[int], List[bool]]:
    events = [(match.start(), "declared", match.group("name"))
              for match in _DECLARED_WITH.finditer(code, scope.open + 1, scope.close)
              if match.group("type") not in _NOT_TYPES]
    events += [(match.start(), "assigned", match.group("name"))
               for match in _ASSIGNED.finditer(code, scope.open + 1, scope.close)
               if _BEFORE_PLAIN_ASSIGNMENT.search(code[max(0, match.start() - 40):match.start()]) is not None]
    events.sort()
    declared: Set[str] = set()
    assigned: Set[str] = set()
    undeclared = 0  # names assigned in the suffix and declared nowhere in it
    answers = [False] * len(events)
    for index in range(len(events) - 1, -1, -1):
        _, kind, name = events[index]
        if kind == "declared" and name not in declared:
            declared.add(name)
            undeclared -= name in assigned
        elif kind == "assigned" and name not in assigned:
            assigned.add(name)
            undeclared += name not in declared
        answers[index] = undeclared > 0
    return [offset for offset, _, _ in events], answers


def inference_regions(file) -> List[Region]:
    """The regions of the file's `InferenceMode` guards (read as `CppFile.inference_regions`)."""
    regions = []
    for guard in file._inference_mode_guards:
        function = file.function_at(guard.type_start)
        if function is None or guard.scope is function:
            continue  # the guard lives to the end of the function: nothing runs after it there
        assigned = assigned_outside(file.code, guard.scope, guard.statement_end)
        made_before = set(_WORD.findall(file.code, function.start, guard.type_start))
        for name, offset in list(assigned.items()):
            source = _view_source(file.code, offset)
            if source is not None and source in made_before and source not in assigned:
                del assigned[name]  # a view of a normal tensor stays normal (torch-semantics §1c)
        regions.append(Region(guard, function, guard.scope, assigned))
    return regions


def _view_source(code: str, offset: int) -> Optional[str]:
    """`x` when the assignment at `offset` binds a view of `x` (or `x` itself)."""
    value = re.match(r"[A-Za-z_]\w*\s*=\s*(?P<value>[^;]*);", code[offset:code.find(";", offset) + 1])
    if value is None:
        return None
    view = re.fullmatch(r"(?P<source>[A-Za-z_]\w*)" + VIEW_CHAIN, value.group("value").strip())
    return view.group("source") if view is not None else None


@dataclass
class Step:
    """One statement after the region, with the variables tainted when it runs."""

    start: int
    end: int
    text: str
    tainted: Dict[str, int]  # name -> offset of the assignment under the guard


def steps_after(code: str, region: Region) -> Iterator[Step]:
    """The statements from the end of the guard's scope to the end of the function,
    updating the taint as views, clones and rebinding happen."""
    tainted = dict(region.assigned)
    for start, end in statements(code, region.scope.close + 1, region.function.close):
        if not tainted:
            return
        text = code[start:end]
        yield Step(start, end, text, dict(tainted))
        _update(text, tainted)


def statements(code: str, start: int, end: int) -> Iterator[Tuple[int, int]]:
    """(start, end) of each statement in code[start:end]: text up to a `;` or a brace
    outside parentheses (braces inside parentheses are initializer lists)."""
    depth = 0
    for match in _STATEMENT_END.finditer(code, start, end):
        char = match.group(0)
        if char == "(":
            depth += 1
        elif char == ")":
            depth = max(0, depth - 1)
        elif depth == 0:
            yield start, match.end()
            start = match.end()
    if start < end:
        yield start, end


def _update(text: str, tainted: Dict[str, int]) -> None:
    assignment = re.match(
        r"\s*(?:[A-Za-z_][\w:]*\s*(?:<[^;{}]*>)?\s*[&*]*\s+)?(?P<name>[A-Za-z_]\w*)\s*=(?!=)\s*(?P<value>[^;]*);",
        text,
    )
    if assignment is None:
        return
    name, value = assignment.group("name"), assignment.group("value").strip()
    source = re.fullmatch(r"(?P<source>[A-Za-z_]\w*)" + VIEW_CHAIN, value)
    if source is not None and source.group("source") in tainted:
        tainted[name] = tainted[source.group("source")]
    else:
        tainted.pop(name, None)


def module_assignments(code: str, region: Region) -> Dict[str, int]:
    """Variables of the region bound to a `torch::nn` module built inside it."""
    modules = {}
    for name, offset in region.assigned.items():
        value_start = code.index("=", offset) + 1
        value = code[value_start:code.find(";", value_start)]
        declared_as_module = re.search(_MODULE_DECLARATION.replace("{name}", re.escape(name)),
                                       code[region.function.open:region.guard.type_start])
        if _MODULE_VALUE.match(value) and (declared_as_module or re.match(r"\s*(?:torch\s*::\s*)?nn\s*::", value)):
            modules[name] = offset
    return modules


def requires_grad_names(code: str, function: Scope) -> Set[str]:
    """Variables of `function` that are known to require grad."""
    names: Set[str] = set()
    body = code[function.open:function.close]
    for match in re.finditer(r"(?P<name>[A-Za-z_]\w*)\s*=\s*[^;]*requires_grad\s*\(\s*(?:true\s*)?\)", body):
        names.add(match.group("name"))
    for match in re.finditer(r"(?P<name>[A-Za-z_]\w*)\s*(?:\.\s*requires_grad_\s*\(\s*(?:true\s*)?\)|"
                             r"\.\s*set_requires_grad\s*\(\s*true\s*\))", body):
        names.add(match.group("name"))
    for match in re.finditer(r"(?P<name>[A-Za-z_]\w*)\s*=\s*register_parameter\s*\(", body):
        names.add(match.group("name"))
    return names


def module_names(code: str, function: Scope) -> Set[str]:
    """Variables and parameters of `function` holding a `torch::nn` module (their
    parameters require grad)."""
    body = code[function.start:function.close]
    names = {match.group("name") for match in re.finditer(
        r"(?:torch\s*::\s*)?nn\s*::\s*[A-Z]\w*\s*[&*]*\s+(?P<name>[A-Za-z_]\w*)\s*[({;=,)]", body)}
    names |= {match.group("name") for match in re.finditer(
        r"\bauto\s+(?P<name>[A-Za-z_]\w*)\s*=\s*(?:torch\s*::\s*)?nn\s*::\s*[A-Z]\w*\s*[({]", body)}
    return names


def tainted_uses(file, pattern_for) -> Iterator[Tuple[Region, Step, str, "re.Match[str]"]]:
    """Every match of `pattern_for(name)` on a tainted variable after an InferenceMode
    scope, once per place (several regions may taint the same variable)."""
    seen: Set[int] = set()
    for region in file.inference_regions:
        for step in steps_after(file.code, region):
            for name in step.tainted:
                for match in pattern_for(name).finditer(file.code, step.start, step.end):
                    if match.start() not in seen:
                        seen.add(match.start())
                        yield region, step, name, match


_IDENTIFIER = re.compile(r"\w+")


def inference_places(file, region: Region, step: Step, name: str) -> Tuple[Related, ...]:
    """Where the tainted variable's inference tensor came from, as related locations:
    the InferenceMode guard, and the assignment under it."""
    places = [Related(region.guard.type_start, region.guard.type_end, "InferenceMode enabled here")]
    assigned = step.tainted.get(name)
    if assigned is not None:
        word = _IDENTIFIER.match(file.code, assigned)
        end = word.end() if word is not None else assigned
        places.append(Related(assigned, end, "the inference tensor is assigned here"))
    return tuple(places)


def holds_inference_tensor(file, region: Region, step: Step, name: str) -> str:
    """How messages name a tainted variable and where its inference tensor came from."""
    return (f"`{name}` is an inference tensor (line {file.line_of(step.tainted[name])}, "
            f"InferenceMode of line {file.line_of(region.guard.type_start)})")
