"""The dispatcher's structure as one translation unit shows it: the ops it registers (by
name and dispatch key; the names are string literals, read from the text the lexer keeps
beside the blanked code), the wrappers that call ops through `c10::Dispatcher`, and which
calls in a stretch of code may reach the dispatcher.

A call may reach the dispatcher when it is an `at::`/`torch::` op, a tensor method (other
than the metadata accessors of `_NO_DISPATCH_METHODS`), an op this file registers or a
wrapper of one, a call into `c10::Dispatcher`, a function declared but not defined here
(it may do anything), or a function defined here whose body may. Only code where every
call is shown not to may lose a guard."""
from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

from gradlint.cpp.scopes import Scope, ScopeTree

# Calls that never reach the dispatcher: language words, std/c10 helpers, checks.
_NOT_CALLS = frozenset({
    "if", "for", "while", "switch", "return", "sizeof", "catch", "decltype", "alignof", "typeid",
    "static_cast", "dynamic_cast", "reinterpret_cast", "const_cast", "static_assert", "throw", "new",
    "delete", "noexcept", "operator", "defined",
})
_NO_DISPATCH_NAMESPACES = frozenset({"std", "c10", "caffe2", "fmt", "detail_std"})
# Qualified torch names that build values without an op: types, indices, options.
_NO_DISPATCH_TORCH_NAMES = frozenset({
    "Tensor", "Variable", "IntArrayRef", "ArrayRef", "Slice", "TensorOptions", "Scalar", "IValue",
    "variable_list", "tensor_list", "optional", "nullopt", "make_optional", "Device", "TensorList",
    "MemoryFormat", "ScalarType", "Layout", "kFloat", "kCPU", "None", "Ellipsis", "dtype", "device",
    "requires_grad", "get", "make_tuple", "tie", "move", "forward", "intrusive_ptr", "make_intrusive",
})
# Tensor/IValue/container methods that read metadata or plain values: no op runs.
_NO_DISPATCH_METHODS = frozenset({
    "size", "sizes", "sym_size", "sym_sizes", "dim", "ndimension", "numel", "stride", "strides",
    "scalar_type", "dtype", "device", "options", "layout", "is_contiguous", "defined", "data_ptr",
    "const_data_ptr", "mutable_data_ptr", "requires_grad", "is_cuda", "is_cpu", "element_size", "nbytes",
    "itemsize", "get_device", "has_storage", "storage_offset", "unsafeGetTensorImpl", "is_sparse",
    "toInt", "toDouble", "toBool", "toIntList", "toTensor", "toTensorList", "toTuple", "toList", "toString",
    "toCustomClass", "toIntVector", "toDoubleVector", "isTensor", "isInt", "isNone", "vec", "value",
    "value_or", "has_value", "push_back", "emplace_back", "reserve", "begin", "end", "empty", "at",
    "front", "back", "c_str", "str", "first", "second", "count", "find", "insert", "emplace", "length",
    "save_for_backward", "get_saved_variables", "mark_non_differentiable", "mark_dirty",
    "set_materialize_grads", "needs_input_grad", "name", "what", "get", "reset", "use_count",
})
_CALL = re.compile(
    r"(?P<member>\.|->)?\s*(?P<qualifier>(?:::\s*)?(?:[A-Za-z_]\w*\s*::\s*)*)(?P<name>[A-Za-z_]\w*)\s*"
    r"(?:<[^;{}()<>]*(?:<[^;{}()<>]*>[^;{}()<>]*)*>)?\s*\(")
_DISPATCHER_API = re.compile(
    r"Dispatcher\s*::\s*singleton\s*\(|findSchemaOrThrow\s*\(|\bredispatch(?:Boxed)?\s*\(|"
    r"\bcallBoxed\s*\(|_ops\s*::\s*\w+\s*::\s*(?:call|redispatch)\b")
# A binary arithmetic operator between operands: on tensors it runs an op.
_ARITHMETIC = re.compile(r"(?:[\w)\]])\s*(?P<operator>[*/%]|\+(?![+=])|-(?![->=]))\s*(?=[\w(])")
_SCHEMA = re.compile(r'findSchemaOrThrow\s*\(\s*"(?P<op>[^"]+)"')
_IMPL = re.compile(
    r'\.\s*impl\s*\(\s*(?:TORCH_SELECTIVE_NAME\s*\(\s*)?"(?P<op>[^"]+)"\s*\)?\s*,\s*'
    r'(?:(?:c10\s*::\s*)?DispatchKey\s*::\s*(?P<key>\w+)\s*,\s*)?'
    r'(?:torch\s*::\s*dispatch\s*\(\s*(?:c10\s*::\s*)?DispatchKey\s*::\s*(?P<dkey>\w+)\s*,\s*)?'
    r'(?:TORCH_FN\s*\(\s*)?&?\s*(?:(?P<lambda>\[)|(?:[A-Za-z_]\w*\s*::\s*)*(?P<kernel>[A-Za-z_]\w*))')
_DEF = re.compile(
    r'\.\s*def\s*\(\s*(?:TORCH_SELECTIVE_SCHEMA\s*\(\s*)?"(?P<op>[^"(]+)[^"]*"\s*\)?\s*'
    r'(?:,\s*(?:torch\s*::\s*dispatch\s*\(\s*(?:c10\s*::\s*)?DispatchKey\s*::\s*(?P<key>\w+)\s*,\s*)?'
    r'(?:TORCH_FN\s*\(\s*)?&?\s*(?:(?P<lambda>\[)|(?:[A-Za-z_]\w*\s*::\s*)*(?P<kernel>[A-Za-z_]\w*)))?')
_LIBRARY_ARGUMENTS = re.compile(r"^\s*(?P<ns>\w+)\s*(?:,\s*(?:c10\s*::\s*)?(?:DispatchKey\s*::\s*)?(?P<key>\w+))?")


@dataclass(frozen=True)
class Registration:
    op: str  # unqualified: "roi_align"
    namespace: str  # "torchvision"
    key: str  # "Autograd", "CPU", ...; "" for a schema-only `m.def`
    kernel: str  # the registered function's name; "" for a lambda or none
    offset: int

    @property
    def qualified(self) -> str:
        return f"{self.namespace}::{self.op}" if self.namespace else self.op

    @property
    def autograd(self) -> bool:
        return self.key.startswith("Autograd")


@dataclass(frozen=True)
class Reach:
    """One call that may reach the dispatcher, and why."""

    call: str  # the callee as written: "roi_align", "x.mul"
    offset: int
    why: str  # registered, dispatcher, local, undeclared, op, method, operator
    registration: Optional[Registration] = None
    through: str = ""  # for `local`: the callee's own reason
    through_why: str = ""  # for `local`: the kind of the callee's own reason

    @property
    def may_come_back(self) -> bool:
        """Can the call come back to an Autograd kernel of this program (its own op, a
        wrapper through the dispatcher, a function defined elsewhere), not only to ATen's?
        Plain `at::` ops, tensor methods and operators go to ATen's kernels."""
        why = self.through_why if self.why == "local" else self.why
        return why in ("registered", "dispatcher", "undeclared")


_STRENGTH = ("registered", "dispatcher", "local", "undeclared", "op", "method", "operator")


def strongest(reaches: Sequence[Reach]) -> Optional[Reach]:
    return min(reaches, key=lambda reach: (_STRENGTH.index(reach.why), reach.offset), default=None)


class DispatchModel:
    """Built once per file from its text, blanked code and scope tree."""

    def __init__(self, text: str, code: str, tree: ScopeTree) -> None:
        self.text, self.code, self.tree = text, code, tree
        self.registrations: List[Registration] = []
        for scope in tree.scopes:
            if scope.kind == "registration":
                self._read_registration(scope)
        self.by_op: Dict[str, List[Registration]] = {}
        for registration in self.registrations:
            self.by_op.setdefault(registration.op, []).append(registration)
        self.definitions: Dict[str, List[Scope]] = {}
        for scope in tree.scopes:
            if scope.kind in ("function", "method") and scope.name:
                self.definitions.setdefault(scope.name, []).append(scope)
        self._summaries: Dict[int, Optional[Reach]] = {}
        self._index: Optional[Tuple[List[int], List[Reach], List[Tuple[int, int]]]] = None
        self._best_before: Dict[int, List[int]] = {}  # range end (as an index) -> suffix bests

    def _read_registration(self, scope: Scope) -> None:
        arguments = _LIBRARY_ARGUMENTS.match(scope.arguments or "")
        namespace = arguments.group("ns") if arguments else ""
        library_key = (arguments.group("key") or "") if arguments and scope.name == "TORCH_LIBRARY_IMPL" else ""
        body = self.text[scope.open:scope.close]
        pattern = _IMPL if scope.name == "TORCH_LIBRARY_IMPL" else _DEF
        for match in pattern.finditer(body):
            offset = scope.open + match.start()
            if self.code[offset] != ".":
                continue  # inside a comment or literal
            name = match.group("op")
            op_namespace, _, op = name.rpartition("::")
            key = (match.groupdict().get("dkey") or match.group("key") or library_key) if pattern is _IMPL else (
                match.group("key") or "")
            kernel = match.group("kernel") or ""
            self.registrations.append(Registration(op, op_namespace or namespace, key, kernel, offset))

    def registered_at_autograd(self, name: str) -> Optional[Registration]:
        return next((registration for registration in self.by_op.get(name, ()) if registration.autograd), None)

    def wrapper_op(self, function: Scope) -> Optional[str]:
        """The op a function defined here calls through `findSchemaOrThrow("ns::op")`."""
        match = _SCHEMA.search(self.text, function.open, function.close)
        return match.group("op") if match is not None else None

    def reaches(self, start: int, end: int, exclude: Tuple[int, ...] = ()) -> List[Reach]:
        """The calls in code[start:end] that may reach the dispatcher (`exclude`: opens of
        functions already being summarised, so recursion ends)."""
        found: List[Reach] = []
        for match in _DISPATCHER_API.finditer(self.code, start, end):
            found.append(Reach(match.group(0).rstrip("( "), match.start(), "dispatcher"))
        for match in _CALL.finditer(self.code, start, end):
            reach = self._classify(match, exclude)
            if reach is not None:
                found.append(reach)
        for match in _ARITHMETIC.finditer(self.code, start, end):
            found.append(Reach(match.group("operator"), match.start("operator"), "operator"))
        return found

    def _classify(self, match: "re.Match[str]", exclude: Tuple[int, ...]) -> Optional[Reach]:
        name = match.group("name")
        qualifier = re.sub(r"\s+", "", match.group("qualifier")).lstrip(":")
        head = qualifier.split("::", 1)[0] if qualifier else ""
        offset = match.start("name")
        if name in _NOT_CALLS or (name.isupper() and len(name) > 1) or name.startswith("AT_"):
            return None  # keywords and macros (their arguments are scanned on their own)
        if match.group("member"):
            before = self.code[max(0, match.start() - 8):match.start()]
            if name in _NO_DISPATCH_METHODS or re.search(r"\bctx\s*$", before):
                return None
            return Reach(f".{name}", offset, "method")
        if head in _NO_DISPATCH_NAMESPACES:
            return None
        registration = self.registered_at_autograd(name) or next(iter(self.by_op.get(name, ())), None)
        if registration is not None:
            return Reach(name, offset, "registered", registration)
        if head in ("at", "torch"):
            if name in _NO_DISPATCH_TORCH_NAMES or "autograd" in qualifier.split("::")[1:2]:
                return None
            return Reach(f"{qualifier}{name}", offset, "op")
        definitions = self.definitions.get(name)
        if not definitions:
            if name[:1].isupper() and not qualifier:
                return None  # a type's constructor (`Result r = ...`, `Tensor()`)
            return Reach(f"{qualifier}{name}", offset, "undeclared")
        for definition in definitions:
            if definition.open in exclude:
                continue
            inner = self.summary(definition, exclude)
            if inner is not None:
                op = self.wrapper_op(definition)
                if op is not None:
                    registration = self.registered_at_autograd(op.rpartition("::")[2])
                    if registration is not None:
                        return Reach(name, offset, "registered", registration)
                return Reach(name, offset, "local", through=_describe(inner),
                             through_why=inner.through_why if inner.why == "local" else inner.why)
        return None

    def strongest_in(self, start: int, end: int) -> Optional[Reach]:
        """The strongest call in code[start:end] that may reach the dispatcher: a range
        query on the file's calls, classified once. The bests of the ranges that end at
        one place (the guards of one scope all end at its close) are one list, extended
        backwards as far as the earliest start asked: each scope's calls are ranked once
        however many guards it holds."""
        if self._index is None:
            every = sorted(self.reaches(0, len(self.code)), key=lambda reach: reach.offset)
            self._index = ([reach.offset for reach in every], every, [_rank(reach) for reach in every])
        offsets, every, ranks = self._index
        low, high = bisect.bisect_left(offsets, start), bisect.bisect_left(offsets, end)
        if low >= high:
            return None
        best = self._best_before.setdefault(high, [])
        extend_suffix_bests(best, ranks, high, high - low)
        return every[best[high - low - 1]]

    def summary(self, function: Scope, exclude: Tuple[int, ...] = ()) -> Optional[Reach]:
        """The strongest reason `function`'s body may reach the dispatcher, or None."""
        if function.open not in self._summaries:
            self._summaries[function.open] = None  # a recursive call adds nothing new
            reaches = self.reaches(function.open, function.close, exclude + (function.open,))
            self._summaries[function.open] = strongest(reaches)
        return self._summaries[function.open]


def _rank(reach: Reach) -> Tuple[int, int]:
    return (_STRENGTH.index(reach.why), reach.offset)


def extend_suffix_bests(best: List[int], ranks: List[Tuple[int, int]], high: int, length: int) -> None:
    """Grow `best` to `length` entries, best[j] being the index of the best rank in
    ranks[high - 1 - j:high] (each entry computed once, from the one before it)."""
    for index in range(high - 1 - len(best), high - 1 - length, -1):
        if not best or ranks[index] < ranks[best[-1]]:
            best.append(index)
        else:
            best.append(best[-1])


def _describe(reach: Reach) -> str:
    if reach.why == "registered" and reach.registration is not None:
        return f"`{reach.registration.qualified}`"
    if reach.why == "local":
        return reach.through
    return f"`{reach.call}()`"
