"""Rule documentation, rendered from the rules' own docstrings, so docs cannot drift.

`python -m gradlint.docs > docs/rules.md` regenerates the checked-in page and
`python -m gradlint.docs --readme` the README's rule table; tests fail when either is stale.
"""
from __future__ import annotations

import os
import re
from typing import Dict

from gradlint.rule import all_rules

# Where the measured torch behaviour lives, from the repository's root; rules cite its
# sections as "torch-semantics §N" (anchor `sN`).
SEMANTICS_DOCUMENT = "docs/torch-semantics.md"
_CITATION = re.compile(r"§(\d+[a-z]?)\b")


def link_citations(text: str, document: str = SEMANTICS_DOCUMENT) -> str:
    """Each `§N` in `text` as a Markdown link to section N of the torch-semantics document
    (`document`: its path from where the Markdown is read)."""
    return _CITATION.sub(lambda match: f"[§{match.group(1)}]({document}#s{match.group(1)})", text)


def cited_sections(text: str) -> set:
    return set(_CITATION.findall(text))


def fix_label(rule) -> str:
    return rule.fix_safety.value if rule.fix_safety is not None else "none"


def rule_markdown(rule, heading: str = "#", semantics: str = SEMANTICS_DOCUMENT) -> str:
    """The rule's documentation as Markdown; `semantics`: the torch-semantics document's
    path from where it is read (the repository's root by default)."""
    docs = rule.docs()
    lines = [f"{heading} {rule.code} `{rule.name}`", "", docs.summary, ""]
    lines.append(
        f"Languages: {', '.join(rule.languages()) or 'any'} · "
        f"default: {'on' if rule.default_enabled else 'off'} · "
        f"severity: {rule.severity.value} · fix: {fix_label(rule)}"
    )
    lines.append("")
    if rule.claims:
        claims = (rule.claims,) if isinstance(rule.claims, str) else rule.claims
        lines.append(f"Claims: {', '.join(f'`{claim}`' for claim in claims)}: not reported inside "
                     "`with pytest.raises(...)` or `self.assertRaises(...)` expecting it or a base of it "
                     "(README, Expected errors).")
        lines.append("")
    for title, body in docs.sections:
        lines += [f"{heading}# {title}", "", link_citations(body, semantics), ""]
    return "\n".join(lines).rstrip() + "\n"


def rule_table(page: str = "docs/rules.md") -> str:
    """The table of rules, each code linking to its section of `page` ("" within the page)."""
    lines = ["| code | name | languages | default | fix | summary |", "|---|---|---|---|---|---|"]
    for code, rule in all_rules().items():
        lines.append(
            f"| [{code}]({page}#{code.lower()}-{rule.name}) | `{rule.name}` | {', '.join(rule.languages()) or 'any'} "
            f"| {'on' if rule.default_enabled else 'off'} | {fix_label(rule)} | {rule.summary} |"
        )
    return "\n".join(lines) + "\n"


def rules_page() -> str:
    parts = [
        "# gradlint rules",
        "",
        "Generated from the rules' own documentation by `python -m gradlint.docs`; do not edit by hand.",
        "",
        "What rules say about PyTorch was measured: [torch-semantics](torch-semantics.md) "
        "holds each fact and how it was measured.",
        "",
        rule_table(page=""),
    ]
    for rule in all_rules().values():
        parts.append(rule_markdown(rule, heading="##", semantics="torch-semantics.md"))
    return "\n".join(parts)


def rule_json(rule) -> Dict[str, object]:
    docs = rule.docs()
    return {
        "code": rule.code,
        "name": rule.name,
        "summary": rule.summary,
        "languages": list(rule.languages()),
        "default_enabled": rule.default_enabled,
        "severity": rule.severity.value,
        "fix_safety": rule.fix_safety.value if rule.fix_safety is not None else None,
        "claims": [rule.claims] if isinstance(rule.claims, str) else list(rule.claims or ()),
        "sections": dict(docs.sections),
    }


def update_readme(path: str) -> None:
    """Rewrite the rule table between the README's `rules-table` markers."""
    import re

    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    block = "<!-- rules-table -->\n" + rule_table() + "<!-- /rules-table -->\n"
    text = re.sub(r"<!-- rules-table -->\n(?:.*?<!-- /rules-table -->\n)?", lambda _: block, text, count=1, flags=re.S)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)


CATALOG_MODULE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "catalog.py")


def catalog_source() -> str:
    """`gradlint/catalog.py`: what the package walks find (every rule, front end and output
    format), so that a run imports only those it uses; tests/test_catalog.py holds it current."""
    from gradlint.frontend import walk_frontends
    from gradlint.reporters import reporter_modules, reporters
    from gradlint.rule import CatalogedRule, rule_sources

    def rows(records) -> str:
        return "".join(f"    {record!r},\n" for record in records)

    rules = [CatalogedRule.of(rule).record() for rule in all_rules().values()]
    languages = [(extension, *place) for extension, place in walk_frontends().items()]
    formats = [(name, reporter.__module__, reporter.__qualname__) for name, reporter in reporters().items()]
    return (
        '"""What the package walks find, written down so that a run imports only the rules, front\n'
        "ends and output formats it uses. Generated by `python -m gradlint.docs --catalog` from the\n"
        "walks (`gradlint.rule.all_rules`, `gradlint.frontend.walk_frontends`,\n"
        "`gradlint.reporters.reporters`); do not edit by hand. A module added or removed since is\n"
        'seen on disk, and the walk is used instead; tests/test_catalog.py fails while it is stale."""\n\n'
        "# (code, name, module, class, languages, default_enabled, kept_by_select, engine_reports,\n"
        "#  follows_imports, prefilter patterns by language): gradlint.rule.CatalogedRule\n"
        f"RULES = (\n{rows(rules)})\n"
        "# checksum of the files these were read from (`gradlint.rule.rule_sources`): another\n"
        "# makes a run walk the rules instead\n"
        f"RULE_SOURCES = {rule_sources()[1]!r}\n\n"
        "# (extension, module, name of its Language)\n"
        f"LANGUAGES = (\n{rows(languages)})\n\n"
        "# (format, module, reporter class)\n"
        f"REPORTERS = (\n{rows(formats)})\n"
        "# every module of gradlint.reporters (those holding no reporter too)\n"
        f"REPORTER_MODULES = (\n{rows(reporter_modules())})\n"
    )


if __name__ == "__main__":
    import sys

    if sys.argv[1:] == ["--readme"]:
        update_readme("README.md")
    elif sys.argv[1:] == ["--catalog"]:
        text = catalog_source()  # before the file is emptied: the walk reads it
        with open(CATALOG_MODULE, "w", encoding="utf-8") as handle:
            handle.write(text)
    else:
        sys.stdout.write(rules_page())
