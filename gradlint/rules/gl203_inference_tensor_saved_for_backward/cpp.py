"""GL203, C++ side: a variable assigned under `c10::InferenceMode` used after the
guard's scope in an op that saves it for backward next to a tensor that requires grad,
or passed to `ctx->save_for_backward` (torch-semantics §7a, §8: E_SAVE)."""
from __future__ import annotations

import re
from typing import Iterator, Set

from gradlint.cpp.dataflow import (
    INSIDE, VIEW_CHAIN, holds_inference_tensor, inference_places, module_names, requires_grad_names, steps_after,
)
from gradlint.diagnostics import Diagnostic

_SAVE = re.compile(r"\bsave_for_backward\s*\(")
_SAVING_CALL = re.compile(r"\b(?:torch|at)\s*::\s*(?:matmul|mm|bmm|mul|mv|dot|linear|conv\dd|einsum)\s*\(")
_SAVING_METHOD = r"\s*\.\s*(?:matmul|mm|bmm|mul|mv|dot)\s*\(\s*(?P<other>[A-Za-z_]\w*)"


def check(file) -> Iterator[Diagnostic]:
    seen: Set[int] = set()
    for region in file.flow_regions:
        needs_grad = requires_grad_names(file.code, region.function)
        modules = module_names(file.code, region.function) - set(region.assigned)
        for step in steps_after(file.code, region):
            for name in step.tainted:
                use = _saving_use(file, step, name, needs_grad, modules, region.mode == INSIDE)
                if use is not None and use not in seen:
                    seen.add(use)
                    yield Diagnostic(
                        use, use + len(name),
                        f"{holds_inference_tensor(file, region, step, name)}: saving it "
                        f"for backward throws; "
                        + ("make it outside the guard" if region.mode == INSIDE else "clone it"),
                        related=inference_places(file, region, step, name),
                    )


def _saving_use(file, step, name: str, needs_grad: Set[str], modules: Set[str], inside: bool = False):
    """Where the statement saves `name` for backward; `inside` the guard only
    `save_for_backward` does (autograd records nothing there)."""
    word = re.compile(r"(?<![\w.>:])" + re.escape(name) + r"\b")
    text = step.text
    mention = word.search(text)
    if mention is None:
        return None
    if _SAVE.search(text):
        return step.start + mention.start()
    if inside or file.grad_disabled_at(step.start):
        return None
    other_words = set(re.findall(r"[A-Za-z_]\w*", text)) - {name}
    grad_partner = needs_grad & other_words
    for product in re.finditer(
            r"(?<![\w.>:])" + re.escape(name) + r"\b" + VIEW_CHAIN + r"\s*\*(?!=)\s*(?P<other>[A-Za-z_]\w*)"
            r"|(?P<left>[A-Za-z_]\w*)\s*\*\s*" + re.escape(name) + r"\b", text):
        if (product.group("other") or product.group("left")) in needs_grad:
            return step.start + word.search(text, product.start()).start()
    method = re.search(r"(?<![\w.>:])" + re.escape(name) + r"\b" + VIEW_CHAIN + _SAVING_METHOD, text)
    if method is not None and method.group("other") in needs_grad:
        return step.start + method.start()
    call = _SAVING_CALL.search(text)
    if call is not None and grad_partner and word.search(text, call.end()):
        return step.start + word.search(text, call.end()).start()
    for module in modules:
        forward = re.search(r"(?<![\w.>:])" + re.escape(module) + r"\s*(?:->\s*forward\s*)?\(", text)
        if forward is not None and word.search(text, forward.end()):
            return step.start + word.search(text, forward.end()).start()
    return None
