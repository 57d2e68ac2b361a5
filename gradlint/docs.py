"""Rule documentation, rendered from the rules' own docstrings, so docs cannot drift.

`python -m gradlint.docs > docs/rules.md` regenerates the checked-in page and
`python -m gradlint.docs --readme` the README's rule table; tests fail when either is stale.
"""
from __future__ import annotations

from typing import Dict

from gradlint.rule import all_rules


def fix_label(rule) -> str:
    return rule.fix_safety.value if rule.fix_safety is not None else "none"


def rule_markdown(rule, heading: str = "#") -> str:
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
        lines += [f"{heading}# {title}", "", body, ""]
    return "\n".join(lines).rstrip() + "\n"


def rule_table() -> str:
    lines = ["| code | name | languages | default | fix | summary |", "|---|---|---|---|---|---|"]
    for code, rule in all_rules().items():
        lines.append(
            f"| [{code}](docs/rules.md#{code.lower()}-{rule.name}) | `{rule.name}` | {', '.join(rule.languages()) or 'any'} "
            f"| {'on' if rule.default_enabled else 'off'} | {fix_label(rule)} | {rule.summary} |"
        )
    return "\n".join(lines) + "\n"


def rules_page() -> str:
    parts = [
        "# gradlint rules",
        "",
        "Generated from the rules' own documentation by `python -m gradlint.docs`; do not edit by hand.",
        "",
        rule_table(),
    ]
    for rule in all_rules().values():
        parts.append(rule_markdown(rule, heading="##"))
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


if __name__ == "__main__":
    import sys

    if sys.argv[1:] == ["--readme"]:
        update_readme("README.md")
    else:
        sys.stdout.write(rules_page())
