"""Messages and fixes shared by the rules that read the inference-tensor flow (GL201-GL204).

Everything here reads CPython's `ast` outline: positions come from its nodes, and a fix is
text inserted at such a position, so no libcst parse is needed to report or to fix.
"""
from __future__ import annotations

import ast
import os
from typing import List, Optional, Tuple

from gradlint.diagnostics import Diagnostic, Edit, Fix, Related, Safety
from gradlint.python.flow import FlowEvent, Kind, Taint, inference_flow
from gradlint.python.flow.syntax import contains
from gradlint.python.flow.values import element_of

MAX_SNIPPET = 32
_MAX_CHAIN = 8  # helpers followed back for related locations (summaries may be recursive)


def snippet(outline, node: ast.AST) -> str:
    """The node's code on one line, shortened for a message (`guider.model`, an attribute
    the flow names of an argument, is the argument's code and the attribute)."""
    if isinstance(node, ast.Attribute) and getattr(node, "end_col_offset", None) is None:
        text = f"{' '.join(outline.source(node.value).split())}.{node.attr}"
    else:
        text = " ".join(outline.source(node).split())
    return text if len(text) <= MAX_SNIPPET else text[: MAX_SNIPPET - 3] + "..."


def is_what(taint: Taint) -> str:
    """`is an inference tensor` or, for a list or dict of them or a module made of them,
    `holds inference tensors`."""
    return "holds inference tensors" if taint.kind in (Kind.CONTAINER, Kind.MODULE) else "is an inference tensor"


def origin_of(outline, taint: Taint) -> str:
    """Where the value was made, for a message: ``torch.inference_mode()`, line 12`."""
    if taint.via_call is not None:
        return f"`{snippet(outline, taint.via_call.func)}()`, {outline.place_of(taint.via_call)}"
    where = taint.binding or taint.origin
    # a value made in a function that the region calls: the region is a related location
    if taint.region is not None and contains(taint.region.owner, where):
        guard = snippet(outline, taint.region.guard.node)
        if guard in ("torch.inference_mode()", "inference_mode()"):
            guard = "inference_mode()"  # the usual spelling: the shortest name that says it
        if taint.region.is_decorator:
            return f"`@{guard}` `{taint.region.owner.name}()`, {outline.place_of(where)}"
        return f"`{guard}`, {outline.place_of(where)}"
    return f"inference mode, {outline.place_of(where)}"


def passed_through(outline, event: FlowEvent) -> str:
    """` via `helper()`, line 4` for a call (the line where the helper uses it), else ``."""
    if event.call is None or event.inner is None:
        return ""
    helper = snippet(outline, event.call.func)
    if event.inner.elsewhere is not None:  # a function of another checked module
        return f" via `{helper}()`, {os.path.basename(event.inner.elsewhere.path)}:{event.inner.elsewhere.start.line}"
    return f" via `{helper}()`, {outline.place_of(event.inner.raised)}"


def passed_to(outline, event: FlowEvent) -> str:
    """`; passed at line 35` when the value reaches the reported statement through a call
    (`; used at line 12` when torch raises at the call, for what the helper did), else ``;
    the calls themselves are related locations."""
    if event.call is None or event.inner is None:
        return ""
    if event.inner.elsewhere is not None:  # the operation is in an imported module
        place = event.inner.elsewhere
        return f"; used at {os.path.basename(place.path)}:{place.start.line}"
    if event.raised is not event.inner.node:  # raised at the call, once the helper returns
        return f"; used at {outline.place_of(event.inner.node)}"
    return f"; passed at {outline.place_of(event.call)}"


class _Places:
    """Related locations in order, each span once: of this file (`add`) or another (`add_place`)."""

    def __init__(self, outline) -> None:
        self.outline = outline
        self.found: List[Related] = []

    def add(self, node: Optional[ast.AST], note: str) -> None:
        if node is not None and getattr(node, "lineno", None) is not None:
            start, end = self.outline.span(node)
            if all((start, end, None) != (place.start, place.end, place.path) for place in self.found):
                self.found.append(Related(start, end, note))

    def add_place(self, place) -> None:
        """A `project.Place`: where an imported module made the value, or used it."""
        if all((place.start_offset, place.end_offset, place.path) != (found.start, found.end, found.path)
               for found in self.found):
            self.found.append(Related(place.start_offset, place.end_offset, place.note, place.path,
                                      (place.start, place.end)))


def value_places(outline, taint: Taint, places: Optional[_Places] = None) -> List[Related]:
    """Where a tracked value was made, innermost first: the inference-mode region, the
    statement that made it, the calls that returned it (and, for a function of another
    checked module, its places there)."""
    places = places or _Places(outline)
    chain = [taint]
    while chain[-1].via_call is not None and chain[-1].returned is not None and len(chain) < _MAX_CHAIN:
        chain.append(chain[-1].returned)
    for link in reversed(chain):
        if link.via_call is not None:
            for place in link.elsewhere:
                places.add_place(place)
            places.add(link.via_call, f"returned by `{snippet(outline, link.via_call.func)}()`")
            continue
        if link.region is not None:
            guard = snippet(outline, link.region.guard.node)
            if link.region.is_decorator:
                places.add(link.region.guard.node, f"inference mode: `@{guard}` on `{link.region.owner.name}()`")
            else:
                places.add(link.region.guard.node, f"inference mode entered: `{guard}`")
        places.add(link.binding or link.origin, "the inference tensor is made here")
    return places.found


def origin_places(outline, event: FlowEvent) -> Tuple[Related, ...]:
    """The places that explain an event, as related locations: the inference-mode region
    that made the value, the statement that made it, the call that returned it, the calls
    that carried it to the helper that uses it, and the operation there."""
    places = _Places(outline)
    value_places(outline, event.taint, places)
    if event.call is not None and event.inner is not None:
        for call in (event.call, *event.inner.calls):  # the calls that carried it, outermost first
            places.add(call, f"passed to `{snippet(outline, call.func)}()`")
        places.add(event.inner.node, f"used inside `{snippet(outline, (event.call, *event.inner.calls)[-1].func)}()`")
        if event.inner.elsewhere is not None:
            places.add_place(event.inner.elsewhere)
    report = outline.span(event.raised)
    return tuple(place for place in places.found if place.path is not None or (place.start, place.end) != report)


def clone_fix(outline, flow, taint: Taint, where: ast.AST) -> Optional[Fix]:
    """Clone where the value leaves inference mode: `x = x.clone()` right after the
    `with` block, or `.clone()` on a same-module call that returns it. Always unsafe: a
    clone is neither an inference tensor nor a leaf (`torch.is_inference(x)` and `x.grad`
    change, torch-semantics §1), and code that shares its storage sees a copy."""
    if taint.via_call is not None:
        if taint.kind is not Kind.TENSOR or taint.position is not None or (
                taint.returned is not None and taint.returned.kind is not Kind.TENSOR):
            return None  # a tuple, list, dict or module (`for p in load().parameters()`) has no `.clone()`
        end = outline.span(taint.via_call)[1]
        return Fix((Edit(end, end, ".clone()"),), Safety.UNSAFE,
                   f"Clone the returned value: `{snippet(outline, taint.via_call)}.clone()`")
    region = taint.region
    if region is None or region.is_decorator or taint.binding is None or taint.kind is not Kind.TENSOR:
        return None
    if contains(region.owner, where):
        return None  # updated under a nested `inference_mode(False)`: a clone after the block is too late
    exit_state = flow.region_exits.get(region.owner)
    if exit_state is None:
        return None
    holders = sorted(key for key, held in exit_state.items() if held.origin is taint.origin)
    if not holders or any(exit_state[key].kind is not Kind.TENSOR for key in holders):
        return None  # a container or module holds it: there is no one `.clone()` to add
    text = outline.text
    newline = "\r\n" if "\r\n" in text else "\n"
    insert_at = _line_after(outline, region.owner)
    indent = _indentation(outline, region.owner)
    lines = "".join(f"{indent}{key} = {key}.clone(){newline}" for key in holders)
    if insert_at == len(text) and not text.endswith("\n"):
        lines = newline + lines
    title = "Clone after the inference-mode block: " + "; ".join(f"`{key} = {key}.clone()`" for key in holders)
    return Fix((Edit(insert_at, insert_at, lines),), Safety.UNSAFE, title)


def _line_after(outline, statement: ast.stmt) -> int:
    """The offset where the line after `statement` starts (the end of the text on the last line)."""
    end = outline.span(statement)[1]
    line_end = outline.text.find("\n", end)
    return len(outline.text) if line_end < 0 else line_end + 1


def _indentation(outline, statement: ast.stmt) -> str:
    start = outline.span(statement)[0]
    line_start = outline.text.rfind("\n", 0, start) + 1
    prefix = outline.text[line_start:start]
    return prefix if not prefix.strip() else ""


def flow_diagnostics(file, kind: str, consequence, offer_fix: bool = True):
    """One diagnostic per statement torch rejects (events of `kind`): what the value is and
    where it was made, then `consequence(event)` (the operation and the runtime error), with
    the clone fix unless `offer_fix` is False. A value passed to a helper that does the rejected operation is reported
    inside the helper, as the traceback shows it, once for all the calls that pass one."""
    outline = file.outline
    if outline is None:
        return
    flow = inference_flow(outline)
    by_statement = {}
    for event in sorted(flow.events_of(kind), key=lambda event: outline.span(event.node)):
        by_statement.setdefault(id(event.raised), []).append(event)
    for events in by_statement.values():
        event = events[0]
        reported = event.raised
        subject, taint = event.subject, event.taint
        if reported is not event.node and event.inner is not None:
            subject = event.inner.subject
            if event.inner.element:
                taint = element_of(taint)
        start, end = outline.span(reported)
        places = origin_places(outline, event)
        for other in events[1:]:
            places += tuple(Related(*outline.span(other.call), f"also passed to `{snippet(outline, other.call.func)}()`")
                            for _ in (0,) if other.call is not None)
        yield Diagnostic(
            start, end,
            f"`{snippet(outline, subject)}` {is_what(taint)} ({origin_of(outline, event.taint)}"
            f"{passed_to(outline, event)}): {consequence(event)}",
            clone_fix(outline, flow, event.taint, event.node) if offer_fix else None,
            places,
            carried_by=tuple(outline.span(call)[0] for other in events if other.call is not None
                             for call in (other.call, *other.inner.calls)),
        )
