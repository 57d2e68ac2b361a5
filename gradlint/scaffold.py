"""Start a new rule: `python -m gradlint.scaffold GL408 some-rule-name --languages python,cpp`.

Writes the rule (one module for one language, a package with a module per language for
several), its docstring with every section the docs require, a fixture folder per language
and a first fixture that expects the rule on a line. The rule finds nothing yet, so that
fixture fails in `tests/test_fixtures.py` until the check is written: the first step of
CONTRIBUTING's "Adding a rule". Nothing is registered anywhere: the rule is found by walking
`gradlint/rules/`.
"""
from __future__ import annotations

import argparse
import os
import re
import sys
from typing import Dict, List, Optional, Sequence

from gradlint.exit_status import USAGE_ERROR
from gradlint.rule import REQUIRED_SECTIONS

# The first fixture's pinned message fragment: replace it with the claim the message makes.
FRAGMENT = "TODO: the claim the message makes"
_CODE = re.compile(r"^GL\d{3}$")
_NAME = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")
_PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Per language: the fixture's extension, a prefilter and a first case to edit, matching each other.
_LANGUAGES: Dict[str, dict] = {
    "python": {
        "extension": "py",
        "prefilter": r"\bno_grad\b",
        "fixture": "import torch\n\n\ndef evaluate(model, batch):\n"
                   "    with torch.no_grad():  # expect: {code}:10 \"{fragment}\"\n"
                   "        return model(batch)\n",
        "example": "```python\n{indent}with torch.no_grad():\n{indent}    logits = model(batch)\n{indent}```",
    },
    "cpp": {
        "extension": "cpp",
        "prefilter": r"NoGradGuard",
        "fixture": "#include <torch/extension.h>\n\n"
                   "torch::Tensor evaluate(torch::nn::Linear& model, const torch::Tensor& batch) {{\n"
                   "  torch::NoGradGuard no_grad;  // expect: {code}:3 \"{fragment}\"\n"
                   "  return model->forward(batch);\n}}\n",
        "example": "```cpp\n{indent}void evaluate(torch::nn::Linear& model, const torch::Tensor& batch) {{\n"
                   "{indent}  torch::NoGradGuard no_grad;\n{indent}  model->forward(batch);\n{indent}}}\n{indent}```",
    },
}


class ScaffoldError(Exception):
    pass


def class_name(rule_name: str) -> str:
    """`some-rule-name` -> `SomeRuleName`."""
    return "".join(part.capitalize() for part in rule_name.split("-"))


def module_name(code: str, rule_name: str) -> str:
    """`GL408`, `some-rule-name` -> `gl408_some_rule_name` (the file or package name)."""
    return f"{code.lower()}_{rule_name.replace('-', '_')}"


def _docstring(languages: Sequence[str]) -> str:
    indent = " " * 4
    bodies = {
        "What it does": "TODO: what the rule finds, in one or two sentences.",
        "Why is this bad?": "TODO: the runtime fact, measured and cited as torch-semantics §N\n"
                            f"{indent}(docs/torch-semantics.md).",
        "Example": f"\n\n{indent}".join(_LANGUAGES[language]["example"].format(indent=indent)
                                         for language in languages),
        "Use instead": "TODO: the code as it should be written, for each language above.",
        "Fix safety": "No fix yet.",
    }
    sections = []
    for title in REQUIRED_SECTIONS:
        sections.append(f"{indent}## {title}\n{indent}{bodies.get(title, 'TODO')}")
    return f'{indent}"""\n' + "\n\n".join(sections) + f'\n{indent}"""'


def _rule_class(code: str, rule_name: str, languages: Sequence[str], methods: bool) -> str:
    lines = [
        f"class {class_name(rule_name)}(Rule):",
        _docstring(languages),
        "",
        f'    code = "{code}"',
        f'    name = "{rule_name}"',
        '    summary = "TODO: one line, as the rule table shows it"',
        "    severity = Severity.ERROR  # WARNING for legacy code, INFO for advice",
        "    fix_safety = None  # the strongest fix it offers (Safety.SAFE, ...), or None",
        "    # TODO: a regex every file with a finding matches (a necessary condition): files",
        "    # that do not match are never parsed.",
        f"    prefilter = {_prefilter(languages)}",
    ]
    if methods:
        language = languages[0]
        lines += ["", f"    def check_{language}(self, file):", _check_body(language, " " * 8)]
        return "\n".join(lines)
    return "\n".join(lines) + "\n"


def _prefilter(languages: Sequence[str]) -> str:
    if len(languages) == 1:
        return f'r"{_LANGUAGES[languages[0]]["prefilter"]}"'
    return "{" + ", ".join(f'"{language}": r"{_LANGUAGES[language]["prefilter"]}"' for language in languages) + "}"


def _check_body(language: str, indent: str) -> str:
    model = "PythonFile (gradlint/python/frontend.py)" if language == "python" else "CppFile (gradlint/cpp/model.py)"
    return (f"{indent}# TODO: yield Diagnostic(start, end, message, fix) per finding; `file` is a {model}.\n"
            f"{indent}return\n{indent}yield\n")


def _language_module(code: str, language: str) -> str:
    return (f'"""{code}, {language} side."""\n\n\n'
            f"def check(file):\n{_check_body(language, ' ' * 4)}")


def plan(code: str, rule_name: str, languages: Sequence[str], root: str) -> Dict[str, str]:
    """Path (relative to `root`) -> the text to write there."""
    if not _CODE.match(code):
        raise ScaffoldError(f"{code!r}: a code looks like GL408")
    if not _NAME.match(rule_name):
        raise ScaffoldError(f"{rule_name!r}: a name is kebab-case, like guard-missing-parens")
    unknown = [language for language in languages if language not in _LANGUAGES]
    if unknown or not languages:
        raise ScaffoldError(f"--languages: choose from {', '.join(_LANGUAGES)} (comma-separated)")
    rules_folder = os.path.join(root, "gradlint", "rules")
    if not os.path.isdir(rules_folder):
        raise ScaffoldError(f"{root}: not a gradlint checkout (no gradlint/rules/)")
    for entry in os.listdir(rules_folder):
        if entry.startswith(code.lower() + "_"):
            raise ScaffoldError(f"{code} is taken: gradlint/rules/{entry}")
        if entry.split("_", 1)[-1].split(".")[0] == rule_name.replace("-", "_"):
            raise ScaffoldError(f"{rule_name} is taken: gradlint/rules/{entry}")
    module = module_name(code, rule_name)
    header = "from gradlint.diagnostics import Severity\nfrom gradlint.rule import Rule\n\n\n"
    files: Dict[str, str] = {}
    if len(languages) == 1:
        files[f"gradlint/rules/{module}.py"] = header + _rule_class(code, rule_name, languages, methods=True)
    else:
        files[f"gradlint/rules/{module}/__init__.py"] = header + _rule_class(code, rule_name, languages, methods=False)
        for language in languages:
            files[f"gradlint/rules/{module}/{language}.py"] = _language_module(code, language)
    for language in languages:
        spec = _LANGUAGES[language]
        case = f"fixtures/{language}/{code}/first_case.{spec['extension']}"
        files[case] = spec["fixture"].format(code=code, fragment=FRAGMENT)
    return files


def write(files: Dict[str, str], root: str) -> List[str]:
    written = []
    for relative, text in files.items():
        path = os.path.join(root, relative)
        if os.path.exists(path):
            raise ScaffoldError(f"{relative} exists already")
    for relative, text in files.items():
        path = os.path.join(root, relative)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "x", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
        written.append(relative)
    return written


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m gradlint.scaffold", description=__doc__.split("\n\n")[0])
    parser.add_argument("code", help="the new rule's code, GL followed by three digits")
    parser.add_argument("name", help="its kebab-case name")
    parser.add_argument("--languages", default="python", help="comma-separated: python, cpp (default: python)")
    parser.add_argument("--root", default=_PACKAGE_ROOT, help="the checkout to write into (default: this one)")
    options = parser.parse_args(argv)
    languages = [language.strip() for language in options.languages.split(",") if language.strip()]
    try:
        written = write(plan(options.code, options.name, languages, options.root), options.root)
    except (ScaffoldError, OSError) as error:
        print(f"gradlint.scaffold: error: {error}", file=sys.stderr)
        return USAGE_ERROR
    for relative in written:
        print(f"wrote {relative}")
    print(f"next: write the check until `python -m pytest tests/test_fixtures.py -k {options.code}` passes "
          "(its first fixture fails now; pin the real column and message, then `--update-snapshots`), "
          "fill in the docstring's TODOs, then run `python -m gradlint.docs > docs/rules.md`, "
          "`python -m gradlint.docs --readme` and `python -m gradlint.docs --catalog` "
          "(CONTRIBUTING, \"Adding a rule\")")
    return 0


if __name__ == "__main__":
    sys.exit(main())
