"""Finding the tensors an error is about among the values a frame holds (used only when an
error escaped the mode, so none of this is on the hot path)."""
from __future__ import annotations

import re
from typing import Iterable, Iterator, List

import torch

from gradlint.trace.frames import source_line

_DOTTED = re.compile(r"(?<![\w.])[A-Za-z_]\w*(?:\s*\.\s*[A-Za-z_]\w*)*")
_CONTAINER_LIMIT = 256  # items looked at in one list, tuple or dict


def tensors_within(values: Iterable[object]) -> Iterator[torch.Tensor]:
    """The tensors among `values` and one level inside the lists, tuples and dicts."""
    for value in values:
        if isinstance(value, torch.Tensor):
            yield value
        elif isinstance(value, (list, tuple, dict)):
            items = value.values() if isinstance(value, dict) else value
            for index, item in enumerate(items):
                if index >= _CONTAINER_LIMIT:
                    break
                if isinstance(item, torch.Tensor):
                    yield item


def tensors_named_on_line(frame, line: int) -> List[torch.Tensor]:
    """The tensors that the names and attribute chains on a frame's source line refer to
    (`x`, `self.running`), read from the frame's variables and from the instances' own
    attributes and a module's parameters and buffers: no property or `__getattr__` runs."""
    text = source_line(frame.f_code.co_filename, line).split("#", 1)[0]
    scope = frame.f_locals
    found = []
    for dotted in _DOTTED.findall(text):
        parts = [part.strip() for part in dotted.split(".")]
        if parts[0] in scope:
            value = scope[parts[0]]
        elif parts[0] in frame.f_globals:
            value = frame.f_globals[parts[0]]
        else:
            continue
        found.extend(tensors_within([value]))
        for attribute in parts[1:]:
            value = _own_attribute(value, attribute)
            if value is None:
                break
            found.extend(tensors_within([value]))
    return found


def _own_attribute(value, name: str):
    try:
        own = vars(value)
    except TypeError:
        return None
    if name in own:
        return own[name]
    for table in ("_parameters", "_buffers", "_modules"):  # torch.nn.Module's own storage
        members = own.get(table)
        if isinstance(members, dict) and name in members:
            return members[name]
    return None
