"""The gate's searches in groups (`textsearch.gate_plan`) answer as one search per literal."""
from __future__ import annotations

from hypothesis import given, strategies as st

from gradlint.engine import Linter
from gradlint.frontend import language_for
from gradlint.settings import Settings, resolve_selection
from gradlint.textsearch import TextSearch, gate_plan

CPP_GUARDS = ("AutoDispatchBelowADInplaceOrView", "AutoDispatchBelowAutograd", "AutoFwGradMode", "AutoGradMode",
              "AutoNonVariableTypeMode", "InferenceMode", "NoGradGuard")


def _gates():
    linter = Linter(Settings(enabled=resolve_selection(["ALL"], [], [])))
    default = Linter(Settings(enabled=resolve_selection(None, [], [])))
    return [found._selection(language_for(name).name, found.settings.enabled).gate
            for found in (linter, default) for name in ("x.py", "x.cpp")]


GATES = [gate for gate in _gates() if gate]


def test_each_literal_is_in_one_group_under_a_string_it_holds():
    for gate in GATES + [CPP_GUARDS]:
        plan = gate_plan(gate)
        grouped = [literal for shared, literals in plan for literal in (literals or (shared,))]
        assert sorted(grouped) == sorted(set(gate))
        assert all(shared in literal for shared, literals in plan for literal in literals)


def test_the_five_auto_guards_are_one_search():
    assert gate_plan(CPP_GUARDS)[0] == ("Auto", CPP_GUARDS[:5])
    assert len(gate_plan(CPP_GUARDS)) == 3


@st.composite
def texts(draw):
    gate = draw(st.sampled_from(GATES + [CPP_GUARDS]))
    pieces = [literal[start:end] for literal in gate for start, end in ((0, 4), (1, None), (0, -1), (2, 9))]
    words = draw(st.lists(st.sampled_from(pieces + list(gate) + ["grad", "_", " ", "\n", "Mode", "é"]), max_size=12))
    return gate, "".join(words)


@given(texts())
def test_grouped_search_answers_as_the_flat_one(gate_and_text):
    gate, text = gate_and_text
    assert TextSearch(text).has_any_grouped(gate_plan(gate)) == TextSearch(text).has_any(gate)
