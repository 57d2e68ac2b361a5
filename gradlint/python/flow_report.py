"""Messages and fixes shared by the rules that read the inference-tensor flow (GL201-GL204)."""
from __future__ import annotations

from typing import List, Optional

import libcst as cst

from gradlint.diagnostics import Edit, Fix, Safety
from gradlint.python.flow import FlowEvent, Taint

MAX_SNIPPET = 48


def snippet(file, node: cst.CSTNode) -> str:
    """The node's code on one line, shortened for a message."""
    text = " ".join(file.code_for(node).split())
    return text if len(text) <= MAX_SNIPPET else text[: MAX_SNIPPET - 3] + "..."


def is_what(taint: Taint) -> str:
    """`is an inference tensor` or, for a list or dict of them, `holds inference tensors`."""
    return "holds inference tensors" if taint.kind == "container" else "is an inference tensor"


def origin_of(file, taint: Taint) -> str:
    """Where the value was made, for a message: `made under `torch.inference_mode()` (line 12)`."""
    if taint.via_call is not None:
        return f"returned by `{snippet(file, taint.via_call.func)}()` (line {file.line_of(taint.via_call)})"
    where = taint.binding or taint.origin
    if taint.region is not None:
        guard = snippet(file, taint.region.guard.node)
        if taint.region.is_decorator:
            return f"made in `{taint.region.owner.name.value}()`, decorated with `@{guard}` (line {file.line_of(where)})"
        return f"made under `{guard}` (line {file.line_of(where)})"
    return f"made under inference mode (line {file.line_of(where)})"


def passed_through(file, event: FlowEvent) -> str:
    """`, passed to `helper()`, which does `t.add_(1)` (line 4)` for a call, else ``."""
    if event.call is None or event.inner is None:
        return ""
    return (f", passed to `{snippet(file, event.call.func)}()`, which does "
            f"`{snippet(file, event.inner)}` (line {file.line_of(event.inner)})")


def clone_fix(file, taint: Taint, where: cst.CSTNode) -> Optional[Fix]:
    """Clone where the value leaves inference mode: `x = x.clone()` right after the
    `with` block, or `.clone()` on a same-module call that returns it. Safe only when the
    analysis sees every alias of the value."""
    if taint.via_call is not None:
        if taint.kind != "tensor":
            return None  # a list or a module has no `.clone()` that means the same
        end = file.span(taint.via_call)[1]
        return Fix((Edit(end, end, ".clone()"),), Safety.UNSAFE,
                   f"Clone the returned value: `{snippet(file, taint.via_call)}.clone()`")
    region = taint.region
    if region is None or region.is_decorator or taint.binding is None or taint.kind != "tensor":
        return None
    if _inside(file, where, region.owner):
        return None  # updated under a nested `inference_mode(False)`: a clone after the block is too late
    exit_state = file.inference_flow.region_exits.get(region.owner)
    if exit_state is None:
        return None
    holders = sorted(key for key, held in exit_state.items() if held.origin is taint.origin)
    if not holders or any(exit_state[key].kind != "tensor" for key in holders):
        return None  # a container or module holds it: there is no one `.clone()` to add
    insert_at, newline = _after_statement(file, region.owner)
    indent = file.indentation_of(region.owner)
    lines = "".join(f"{indent}{key} = {key}.clone(){newline}" for key in holders)
    if insert_at == len(file.text) and not file.text.endswith("\n"):
        lines = newline + lines
    safe = len(holders) == 1 and _directly_in(file, taint.binding, region.owner.body)
    title = "Clone after the inference-mode block: " + "; ".join(f"`{key} = {key}.clone()`" for key in holders)
    return Fix((Edit(insert_at, insert_at, lines),), Safety.SAFE if safe else Safety.UNSAFE, title)


def _inside(file, node: cst.CSTNode, ancestor: cst.CSTNode) -> bool:
    while node is not None:
        if node is ancestor:
            return True
        node = file.parent(node)
    return False


def _after_statement(file, statement: cst.CSTNode):
    """The offset where the line after `statement` starts, and the file's line ending."""
    text = file.text
    newline = "\r\n" if "\r\n" in text else "\n"
    end = file.span(statement)[1]
    line_end = text.find("\n", end)
    if line_end < 0:
        return len(text), newline
    return line_end + 1, newline


def _directly_in(file, binding: cst.CSTNode, body: cst.CSTNode) -> bool:
    """Whether `binding` runs unconditionally in `body` (not under an `if`, a loop or a `try`)."""
    current = binding
    parents: List[cst.CSTNode] = []
    while current is not None and current is not body:
        current = file.parent(current)
        parents.append(current)
    if current is None:
        return False
    return not any(isinstance(node, (cst.If, cst.For, cst.While, cst.Try, cst.TryStar, cst.With, cst.Match))
                   for node in parents[:-1])


def flow_diagnostics(file, kind: str, consequence):
    """One diagnostic per flow event of `kind`: what the value is and where it was made,
    then `consequence(event)` (the operation and the runtime error), with the clone fix."""
    for event in file.inference_flow.events_of(kind):
        yield file.diagnostic(
            event.node,
            f"`{snippet(file, event.subject)}` {is_what(event.taint)} ({origin_of(file, event.taint)})"
            f"{passed_through(file, event)}; {consequence(event)}",
            clone_fix(file, event.taint, event.node),
        )
