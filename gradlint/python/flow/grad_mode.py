"""Where the code shows grad mode on.

An op that saves an operand for backward does so whenever another operand requires grad
and grad mode is on, in training code or not: calling a layer built normally (its weights
require grad) with an inference tensor raises E_SAVE in a plain forward too (torch-semantics
§1b, §1e), and runs under `no_grad`. Grad mode is on at the module's top level and in a
function every call of which in this module runs with it on, outside any guard region; a
region of `enable_grad` turns it on, `inference_mode(False)` leaves it as it is, any other
guard is taken to turn it off. A function no call of this module runs, or that is named
other than by its calls (a callback), is not known to run with grad on; nor is anything in
a file that switches grad mode off with `set_grad_enabled` or freezes parameters
(`requires_grad_(False)`, `.requires_grad = False`), whose layers may need no grad.
"""
from __future__ import annotations

import ast
import re
from functools import cached_property
from typing import Dict, List, Optional

from gradlint.python.flow.contexts import innermost_region
from gradlint.python.flow.syntax import FUNCTION_DEFINITIONS
from gradlint.python.outline import ScreenRegion

_SWITCHED_OFF = re.compile(r"set_grad_enabled|requires_grad_\(\s*False|\.requires_grad\s*=\s*False")
_TURNS_ON = ("enable_grad",)


def _function(scope: ast.AST) -> Optional[ast.AST]:
    return scope if isinstance(scope, FUNCTION_DEFINITIONS) else None


class GradMode:
    def __init__(self, flow) -> None:
        self.flow = flow
        self._answers: Dict[int, bool] = {}
        self._visiting: set = set()

    @cached_property
    def _regions_of(self) -> Dict[int, List[ScreenRegion]]:
        found: Dict[int, List[ScreenRegion]] = {}
        for region in [*self.flow.outline.regions, *self.flow.user_regions]:
            if not region.is_decorator and region.guard.inference is not False:
                # (`inference_mode(False)` leaves grad mode as it is: the guards around it decide)
                found.setdefault(id(region.function), []).append(region)
        return found

    @cached_property
    def _switched_off(self) -> bool:
        return _SWITCHED_OFF.search(self.flow.outline.text) is not None

    def locally_on(self, function: Optional[ast.AST], node: ast.AST) -> Optional[bool]:
        """What the guards of `function` (None: the top level) around `node` make grad mode:
        on, off, or None where no guard of its own decides."""
        innermost = innermost_region(self._regions_of.get(id(function), ()), node)
        if innermost is not None:
            return innermost.guard.kind in _TURNS_ON
        if function is not None:
            for region in self.flow.outline.regions:
                if region.is_decorator and region.owner is function:
                    return region.guard.kind in _TURNS_ON
        return None

    def surely_on(self, function: Optional[ast.AST], node: ast.AST) -> bool:
        """Whether grad mode is surely on where `node` (in `function`) runs."""
        if self._switched_off:
            return False
        local = self.locally_on(function, node)
        if local is not None:
            return local
        return function is None or self._runs_on(function)

    def _runs_on(self, function: ast.AST) -> bool:
        found = self._answers.get(id(function))
        if found is not None:
            return found
        if id(function) in self._visiting:
            return False  # a recursive chain: the other call sites decide
        self._visiting.add(id(function))
        contexts = self.flow.contexts
        sites = contexts.call_sites(function)
        found = bool(sites) and not contexts.named_elsewhere(function, len(sites)) and all(
            self.surely_on(_function(scope), call) for scope, call in sites)
        self._visiting.discard(id(function))
        self._answers[id(function)] = found
        return found
