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


def _plan_by_search(literals):
    """The plan as first written: each candidate string's holders found by searching every
    literal left (the definition `gate_plan` counts its way to)."""
    left, plan = list(dict.fromkeys(literals)), []
    while left:
        best, holding = None, [left[0]]
        for literal in left:
            for start in range(len(literal)):
                for end in range(start + 4, min(start + 12, len(literal)) + 1):
                    shared = literal[start:end]
                    held = [other for other in left if shared in other]
                    if len(held) > len(holding) or (len(held) == len(holding) > 1 and len(shared) > len(best)):
                        best, holding = shared, held
        if best is None:
            plan.extend((literal, ()) for literal in left)
            break
        plan.append((best, tuple(holding)))
        left = [literal for literal in left if literal not in holding]
    return tuple(plan)


def test_the_plan_is_the_searched_one_for_the_real_gates():
    for gate in GATES + [CPP_GUARDS]:
        assert gate_plan(gate) == _plan_by_search(gate)


@given(st.lists(st.text(alphabet="abcdAB_é", max_size=16), max_size=8).map(tuple))
def test_the_plan_is_the_searched_one(literals):
    assert gate_plan.__wrapped__(literals) == _plan_by_search(literals)
