"""C++ function signatures read from a scope's header: the name, the return type and the
parameters (type, name), for functions, methods written out of line, operators, trailing
return types and Objective-C methods. Text only: templates and macros may defeat it, and
then there is no signature (None) rather than a wrong one."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional, Tuple

from gradlint.cpp.scopes import OBJC_METHOD, Scope, matching_close

_OBJC_PARAMETER = re.compile(r":\s*\((?P<type>[^()]*)\)\s*(?P<name>\w+)")
# What may stand before a function's return type in its header.
_PREFIX = re.compile(
    r"^(?:\s*(?:(?:public|private|protected)\s*:(?!:)|template\s*<(?:[^<>]|<(?:[^<>]|<[^<>]*>)*>)*>"
    r"|\[\[.*?\]\]|__attribute__\s*\(\((?:[^()]|\([^()]*\))*\)\)))*\s*"
)
_SPECIFIERS = re.compile(r"\b(?:static|inline|virtual|constexpr|consteval|explicit|extern|friend|__forceinline)\b")
_TRAILING_RETURN = re.compile(r"\)\s*(?:const\s*|noexcept\s*|override\s*|final\s*|&&?\s*)*->\s*(?P<type>[^{;]+?)\s*$")


@dataclass(frozen=True)
class Signature:
    name: str
    return_type: Optional[str]  # None: a constructor, destructor or macro-made body
    parameters: Tuple[Tuple[str, str], ...]  # (type, name)


def signature_of(function: Scope) -> Optional[Signature]:
    header = function.header
    if function.kind == "method":
        objc = None
        for objc in OBJC_METHOD.finditer(header):
            pass
        if objc is None:
            return None
        parameters = tuple((m.group("type"), m.group("name"))
                           for m in _OBJC_PARAMETER.finditer(header, objc.end()))
        return Signature(function.name, objc.group("type"), parameters)
    text = header[_PREFIX.match(header).end():]
    paren = _first_top_level_paren(text)
    closing = matching_close(text, paren) if paren is not None else None
    if closing is None:
        return None
    name = re.search(r"((?:~?\w+\s*::\s*)*(?:operator\s*\S+?|~?\w+))\s*$", text[:paren])
    if name is None:
        return None
    return_type = _SPECIFIERS.sub(" ", text[:name.start()]).strip() or None
    trailing = _TRAILING_RETURN.search(text, closing)
    if trailing is not None:
        return_type = trailing.group("type")
    parameters = tuple(filter(None, map(_split_parameter, split_top_level(text[paren + 1:closing]))))
    return Signature(name.group(1).split("::")[-1].strip(), return_type, parameters)


def _first_top_level_paren(text: str) -> Optional[int]:
    angle = 0
    for position, char in enumerate(text):
        if char == "<":
            angle += 1
        elif char == ">" and angle:
            angle -= 1
        elif char == "(" and angle == 0:
            if re.search(r"\boperator\s*$", text[:position]):
                continue  # `operator()`: the parameters follow the next paren
            return position
    return None



def split_top_level(text: str) -> list:
    parts, depth, start = [], 0, 0
    for position, char in enumerate(text):
        if char in "(<[{":
            depth += 1
        elif char in ")>]}":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(text[start:position])
            start = position + 1
    parts.append(text[start:])
    return [part.strip() for part in parts if part.strip()]


def _split_parameter(text: str) -> Optional[Tuple[str, str]]:
    text = re.split(r"=(?!=)", text, maxsplit=1)[0].strip()  # drop a default argument
    text = re.sub(r"(?:\[[^\]]*\])+$", "", text).strip()  # `char* argv[]`
    match = re.search(r"[A-Za-z_]\w*$", text)
    if match is None or text == "void":
        return None
    if not re.search(r"[\w>&*]\s*$", text[:match.start()]):
        return (text, "")  # a type with no name
    return (text[:match.start()].strip(), match.group())
