"""A module's exports for its importers (`gradlint.python.project`), read from the flow
GL201-GL204 ran over it: the functions and methods that return an inference tensor, and
those that do to a parameter what torch rejects for one; and the names of other modules'
functions it passed a tracked value to (what it asks of the modules it imports)."""
from __future__ import annotations

import os
from typing import Optional

from gradlint.diagnostics import Related
from gradlint.python.flow import Kind
from gradlint.python.flow.deferred import exported_functions, left_deferred
from gradlint.python.flow.syntax import parameter_names
from gradlint.python.flow.user_guards import user_guard_names
from gradlint.python.flow_report import snippet, value_places
from gradlint.python.project import ExportedFunction, ExportedReturn, ModuleExports, Place, exports_to_data


def module_summary(outline, path: str) -> Optional[tuple]:
    """`module_exports` as data (`project.exports_to_data`), with what the module asks of
    the modules it imports, the request it was summarized for, and the guards it defines
    (read whether its flow ran or not: a module that only defines a guard exports it)."""
    guards = ()
    if path.endswith(".py") and ("__enter__" in outline.text or "contextmanager" in outline.text):
        guards = tuple(user_guard_names(outline))
    exports = module_exports(outline, path)
    if exports is None:
        return exports_to_data({}, request=((), (), ()), guards=guards) if guards else None  # (nothing summarized)
    flow = outline.__dict__["_inference_flow"]
    return exports_to_data(exports, flow.passed_out, getattr(outline, "summarized", None), guards,
                           unsummarized_exports(flow))


def unsummarized_exports(flow) -> tuple:
    """The exported functions the flow deferred and nothing read (`flow.deferred`): what
    they do to their parameters is not in the exports until an importer asks."""
    return tuple(sorted(name for name, function in exported_functions(flow) if left_deferred(flow.summaries, function)))


def module_exports(outline, path: str) -> Optional[ModuleExports]:
    """The exports of the module at `path` (empty when nothing in it concerns an importer),
    or None when its flow did not run (it never enters inference mode)."""
    flow = outline.__dict__.get("_inference_flow") if outline is not None else None
    if flow is None or not path.endswith(".py"):
        return None
    path = os.path.abspath(path)  # read from importers anywhere, and kept in the cache

    def place(related: Related) -> Place:
        if related.path is not None:  # made in a module this one imports
            return Place(related.path, *related.positions, related.start, related.end, related.message)
        lines = outline.lines  # (made once for the file, not for its exports)
        return Place(path, lines.position(related.start), lines.position(related.end),
                     related.start, related.end, related.message)

    exports: ModuleExports = {}
    for name, function in exported_functions(flow):
        summary = dict.get(flow.summaries, function)  # (not a deferred one's walk: `unsummarized_exports`)
        if summary is None:
            continue
        returns = None
        returned = summary.returns
        if returned is not None and returned.param is None and returned.kind is not Kind.UNKNOWN:
            returns = ExportedReturn(returned.kind.value, returned.certain,
                                     tuple(place(found) for found in value_places(outline, returned)))
        uses = []
        for kind, used in sorted(summary.uses.items()):
            for parameter, use in sorted(used.items()):
                if "." in parameter:
                    continue  # an attribute of a parameter (`guider.model`): importers do not read it
                if use.elsewhere is not None:
                    uses.append((kind, parameter, use.elsewhere))
                    continue
                start, end = outline.span(use.raised)
                note = f"`{snippet(outline, use.subject)}` used here, in `{name}()`"
                uses.append((kind, parameter, place(Related(start, end, note))))
        if returns is None and not uses:
            continue
        parameters = parameter_names(function)
        if "." in name and parameters and parameters[0] in ("self", "cls"):
            parameters = parameters[1:]
        exports[name] = ExportedFunction(name, path, tuple(parameters), returns, tuple(uses))
    return exports
