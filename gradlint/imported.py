"""One file checked with the modules it imports (the language server's open documents,
`gradlint.python.project`): the same answer as `gradlint check` gives for the file in its
tree, as far as the modules beside it tell.

The modules the file imports are found on disk (relative imports beside it, absolute ones
under the folders above it), each checked for its exports; when the file itself enters
inference mode, the modules that export nothing of their own are summarized too. Then the
file is checked with those exports. Only the file's own imports are read: a module those
modules import is not (as in `gradlint check`, one hand-off).
"""
from __future__ import annotations

import os
from typing import List, Optional

from gradlint.engine import Linter
from gradlint.language import Language

MAX_FOLDERS_UP = 6  # where an absolute import's package may start, above the file


def _candidates(path: str, module: str) -> List[str]:
    """The files `module` (as `Language.imports` writes it) may be, for a file at `path`."""
    dots = len(module) - len(module.lstrip("."))
    parts = [part for part in module[dots:].split(".") if part]
    folders = []
    if dots:
        base = os.path.dirname(os.path.abspath(path))
        for _ in range(dots - 1):
            base = os.path.dirname(base)
        folders.append(base)
    else:
        base = os.path.dirname(os.path.abspath(path))
        for _ in range(MAX_FOLDERS_UP):
            folders.append(base)
            parent = os.path.dirname(base)
            if parent == base:
                break
            base = parent
    found = []
    for folder in folders:
        target = os.path.join(folder, *parts)
        for candidate in (target + ".py", os.path.join(target, "__init__.py")):
            if parts and os.path.isfile(candidate):
                found.append(candidate)
    return found


def check_with_imports(linter: Linter, path: str, text: str, language: Language):
    """The findings of `text` (the file at `path`), checked with the exports of the modules
    it imports."""
    findings, own_exports = linter.check_module(text, path, language)
    imports = language.imports(text)
    if not imports or not os.path.isabs(path):
        return findings
    modules = sorted({os.path.abspath(candidate) for module, _ in imports for candidate in _candidates(path, module)}
                     - {os.path.abspath(path)})
    if not modules:
        return findings
    from gradlint.python.project import ProjectIndex, passed_names, split_alias, unsummarized_asked

    exports = {}
    quiet = []
    for module in modules:
        report = linter.check_path(module)
        asked = report.exports and report.exports[4] and unsummarized_asked(report.exports, [
            entry for imported, names in imports for entry in names if module in _candidates(path, imported)])
        if asked:  # exported functions its flow left unsummarized (`flow.deferred`): walked now
            report = linter.check_path(module, project=ProjectIndex({}, None, {module: asked}))
        if report.exports is not None:
            exports[module] = report.exports
        else:
            quiet.append(module)
    passed = passed_names(own_exports) if own_exports is not None else None
    if passed and quiet:  # the file passes values of the mode on: what do its imports do with them
        named = [split_alias(entry) for _, names in imports for entry in names]
        request = (tuple(sorted({name for name, local in named if local in passed})),
                   tuple(sorted({name for name, _ in named})), tuple(sorted(passed)))
        summarizing = ProjectIndex({}, {module: request for module in quiet})
        for module in quiet:
            report = linter.check_path(module, project=summarizing)
            if report.exports:
                exports[module] = report.exports
    index: Optional[ProjectIndex] = ProjectIndex(exports)
    if not index or not index.dependencies(path, imports, passed):
        return findings
    return linter.check_module(text, path, language, project=index)[0]
