"""What `all_rules` accepts as a rule: one shape per number of languages."""
from __future__ import annotations

import pytest

from gradlint.rule import Rule, RuleDefinitionError, _validate, all_rules


def _rule(**methods):
    return type("Probe", (Rule,), {"code": "GL900", "name": "probe", "summary": "a probe",
                                   "__module__": __name__, **methods})


def test_a_one_language_rule_may_be_one_class():
    _validate(_rule(check_python=lambda self, file: (), screen_python=lambda self, outline: True))


def test_a_module_with_two_languages_is_refused():
    with pytest.raises(RuleDefinitionError, match="a package with a module per language"):
        _validate(_rule(check_python=lambda self, file: (), check_cpp=lambda self, file: ()))


def test_every_rule_has_one_shape():
    for rule in all_rules().values():
        _validate(rule)
        if len(rule.languages()) > 1:
            assert not any(name.startswith("check_") for name in dir(rule)), rule.code
