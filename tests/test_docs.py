import os
import re

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
