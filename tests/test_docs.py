import os
import re

import pytest

from gradlint.docs import rule_table, rules_page
from gradlint.rule import REQUIRED_SECTIONS, all_rules

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _read(*parts):
    with open(os.path.join(ROOT, *parts), encoding="utf-8") as handle:
        return handle.read()


def test_docs_rules_md_is_generated_from_the_rules():
    assert _read("docs", "rules.md") == rules_page(), (
        "docs/rules.md is stale: run `python -m gradlint.docs > docs/rules.md`"
    )


def test_readme_rule_table_is_current():
    readme = _read("README.md")
    match = re.search(r"<!-- rules-table -->\n(.*?)<!-- /rules-table -->", readme, re.S)
    assert match, "README.md lacks the generated rule table markers"
    assert match.group(1) == rule_table(), "README rule table is stale: run `python -m gradlint.docs --readme`"


def test_every_rule_documents_every_required_section():
    for code, rule in all_rules().items():
        sections = dict(rule.docs().sections)
        for title in REQUIRED_SECTIONS:
            assert sections.get(title), f"{code} has an empty '{title}' section"


# -- the docs' examples are real code that behaves as labelled (Fixit's VALID/INVALID) ------

_CODE_BLOCK = re.compile(r"```(?P<language>\w+)\n(?P<body>.*?)```", re.S)
_EXAMPLE_PATH = {"python": "example.py", "cpp": "example.cpp"}
PARSE_ERRORS = {"GL001", "GL002"}


def _example_blocks():
    for code, rule in all_rules().items():
        sections = dict(rule.docs().sections)
        for title in ("Example", "Use instead"):
            for index, block in enumerate(_CODE_BLOCK.finditer(sections[title])):
                yield pytest.param(code, title, block.group("language"), block.group("body"),
                                   id=f"{code}-{title.replace(' ', '-')}-{index}")


EXAMPLES = list(_example_blocks())


def _findings(code, language, body):
    from gradlint.engine import Linter
    from gradlint.frontend import language_for
    from gradlint.settings import Settings, resolve_selection

    path = _EXAMPLE_PATH[language]
    problem = None if code in PARSE_ERRORS else language_for(path).validate(body)
    assert problem is None, f"the block is not real code: {problem}"
    # a syntax error is reported in the files the selected rules read: the default ones here
    select = None if code in PARSE_ERRORS else [code]
    return Linter(Settings(enabled=resolve_selection(select, [], []))).check_text(body, path, language_for(path))


def test_every_rule_that_checks_code_shows_it_in_both_sections():
    shown = {(values[0], values[1]) for values in (param.values for param in EXAMPLES)}
    missing = [f"{code} {title}" for code, rule in all_rules().items() if rule.languages()
               for title in ("Example", "Use instead") if (code, title) not in shown]
    assert not missing, f"no code block in: {missing}"


@pytest.mark.parametrize("code, title, language, body", EXAMPLES)
def test_example_fires_and_use_instead_does_not(code, title, language, body):
    findings = _findings(code, language, body)
    broken = [finding for finding in findings if finding.code in PARSE_ERRORS and finding.code != code]
    assert not broken, f"the block is not real code: {broken[0].message}"
    reported = [finding for finding in findings if finding.code == code]
    if title == "Example":
        assert reported, f"{code}'s Example ({language}) does not fire {code}"
    else:
        assert not reported, f"{code}'s Use instead ({language}) fires: {reported[0].message}"


def test_a_mislabelled_example_fails():
    missing_import = "with torch.inference_mode:\n    logits = model(batch)\n"
    with pytest.raises(AssertionError, match="does not fire GL402"):
        test_example_fires_and_use_instead_does_not("GL402", "Example", "python", missing_import)
    with pytest.raises(AssertionError, match="Use instead .* fires"):
        test_example_fires_and_use_instead_does_not("GL402", "Use instead", "python", "import torch\n" + missing_import)
    for indented in ("        with torch.inference_mode():\n            y = 1\n", "    def forward(ctx, x):\n        return x\n"):
        with pytest.raises(AssertionError, match="not real code"):
            test_example_fires_and_use_instead_does_not("GL405", "Use instead", "python", indented)
    outside_a_function = "torch::Tensor scores;\n{\n  c10::InferenceMode guard;\n  scores = f();\n}\nscores.add_(1);\n"
    with pytest.raises(AssertionError, match="does not fire GL201"):
        test_example_fires_and_use_instead_does_not("GL201", "Example", "cpp", outside_a_function)
