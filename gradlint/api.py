"""The Python API: check or fix a string of source without touching the file system.

    >>> import gradlint
    >>> [f.code for f in gradlint.check_source("import torch\\nwith torch.no_grad:\\n    pass\\n", "m.py")]
    ['GL402']
    >>> gradlint.fix_source("import torch\\nwith torch.no_grad:\\n    pass\\n", "m.py")
    'import torch\\nwith torch.no_grad():\\n    pass\\n'

No configuration file is read: the rules are the default ones, or those `select`,
`extend_select` and `ignore` name (codes, prefixes such as "GL4", or "ALL").
"""
from __future__ import annotations

import functools
from typing import Iterable, List, Optional, Union

from gradlint.diagnostics import Finding
from gradlint.engine import Linter
from gradlint.frontend import language_for
from gradlint.language import Language
from gradlint.settings import Settings, resolve_selection

Codes = Union[str, Iterable[str], None]


def _codes(value: Codes) -> Optional[List[str]]:
    if value is None:
        return None
    if isinstance(value, str):
        value = value.split(",")
    return [code.strip() for code in value if code.strip()]


@functools.lru_cache(maxsize=32)
def linter_for(settings: Settings) -> Linter:
    """One Linter per distinct settings, kept: editors and loops call in often."""
    return Linter(settings)


def _prepare(filename: str, select: Codes, extend_select: Codes, ignore: Codes,
             unsafe_fixes: bool):
    language: Optional[Language] = language_for(filename)
    if language is None:
        raise ValueError(f"{filename}: not a Python, C++ or notebook file name")
    enabled = resolve_selection(_codes(select), _codes(extend_select) or [], _codes(ignore) or [])
    return language, linter_for(Settings(enabled=enabled, unsafe_fixes=unsafe_fixes))


def check_source(source: str, filename: str = "<string>.py", *, select: Codes = None,
                 extend_select: Codes = None, ignore: Codes = None,
                 unsafe_fixes: bool = False) -> List[Finding]:
    """The findings in `source`, read as the file `filename` (its extension picks the
    language; a notebook is its JSON text). Raises ValueError for an unknown extension
    or rule code, and SourceError for a notebook that is not one."""
    language, linter = _prepare(filename, select, extend_select, ignore, unsafe_fixes)
    return linter.check_text(language.decode_text(source).text, filename, language)


def fix_source(source: str, filename: str = "<string>.py", *, select: Codes = None,
               extend_select: Codes = None, ignore: Codes = None,
               unsafe_fixes: bool = False) -> str:
    """`source` with the safe fixes applied (and the unsafe ones with `unsafe_fixes`);
    the same text back when nothing applies."""
    language, linter = _prepare(filename, select, extend_select, ignore, unsafe_fixes)
    decoded = language.decode_text(source)
    fixed = linter.fix_text(decoded.text, filename, language).text
    return source if fixed == decoded.text else decoded.file_text(fixed)
