"""`gradlint.record`: the records every run makes compare, hash, print and pickle as the
dataclasses they replace did."""
from __future__ import annotations

import dataclasses
import pickle
from typing import Optional

import pytest

from gradlint.engine import FileReport
from gradlint.record import FrozenRecord, Record
from gradlint.settings import Settings
from gradlint.source import DecodedSource


class Point(FrozenRecord):
    def __init__(self, x: int, y: Optional[int] = None) -> None:
        self._set(x=x, y=y)


class Box(Record):
    def __init__(self, items: list) -> None:
        self._set(items=items)


@dataclasses.dataclass(frozen=True)
class PointAsDataclass:
    x: int
    y: Optional[int] = None


@dataclasses.dataclass
class BoxAsDataclass:
    items: list


def test_a_frozen_record_is_what_a_frozen_dataclass_is():
    ours, theirs = Point(1, (2,)), PointAsDataclass(1, (2,))
    assert ours == Point(1, (2,)) and ours != Point(1, (3,)) and ours != Point(2, (2,))
    assert hash(ours) == hash(Point(1, (2,))) == hash((1, (2,)))
    assert repr(ours) == repr(theirs).replace("PointAsDataclass", "Point")
    assert (ours == theirs) is False  # another class, with the same fields
    with pytest.raises(AttributeError):
        ours.x = 3
    with pytest.raises(AttributeError):
        del ours.y
    assert pickle.loads(pickle.dumps(ours)) == ours
    assert {ours: 1}[Point(1, (2,))] == 1
    assert ours.replaced(y=None) == Point(1) and ours == Point(1, (2,))


def test_a_mutable_record_is_what_a_dataclass_is():
    ours = Box([1])
    assert ours == Box([1]) and ours != Box([2])
    assert repr(ours) == repr(BoxAsDataclass([1])).replace("BoxAsDataclass", "Box")
    with pytest.raises(TypeError):
        hash(ours)
    ours.items = [2]
    assert ours == Box([2])
    assert pickle.loads(pickle.dumps(ours)) == ours


def test_the_run_records_take_their_fields_and_defaults():
    report = FileReport("a.py", error="gone")
    assert (report.path, report.findings, report.error, report.notes, report.applied_fixes) == \
        ("a.py", [], "gone", [], [])
    assert report.findings is not FileReport("b.py").findings  # a list of its own, as default_factory gave
    settings = Settings(frozenset({"GL402"}), root="/project")
    assert settings == Settings(frozenset({"GL402"}), root="/project") != Settings(frozenset(), root="/project")
    assert Settings(frozenset()).root  # the working folder
    source = DecodedSource("x", "utf-8", False, b"x")
    assert pickle.loads(pickle.dumps(source)) == source


def test_named_tuple_is_what_typing_named_tuple_makes():
    from typing import NamedTuple

    from gradlint.record import named_tuple

    class Typed(NamedTuple):
        """A place."""
        line: int
        column: int = 1

        @property
        def both(self):
            return self.line, self.column

    @named_tuple
    class Place:
        """A place."""
        line: int
        column: int = 1

        @property
        def both(self):
            return self.line, self.column

    assert Place._fields == Typed._fields and Place._field_defaults == Typed._field_defaults
    assert Place(3) == Typed(3) == (3, 1) and Place(3).both == (3, 1) and Place.__doc__ == "A place."
    assert repr(Place(3, 4)) == repr(Typed(3, 4)).replace("Typed", "Place")
    assert type(Place(3)._replace(column=2)) is Place and Place._make((5, 6)) == Place(5, 6)
    with pytest.raises(AttributeError):
        Place(3).line = 4
    with pytest.raises(AttributeError):
        Place(3).other = 4  # no instance dict, as typing's
    with pytest.raises(TypeError):
        named_tuple(type("Wrong", (), {"__annotations__": {"a": "int", "b": "int"}, "a": 1}))


def test_the_diagnostics_pickle_as_themselves():
    from gradlint.diagnostics import Finding, Position, Severity

    finding = Finding("a.py", "GL402", "guard-missing-parens", "m", Severity.ERROR, Position(1, 2), Position(1, 3), 1, 2)
    again = pickle.loads(pickle.dumps(finding))
    assert again == finding and type(again) is Finding and type(again.start) is Position


def test_the_fields_are_the_parameters_of_init_in_order_keyword_only_ones_included():
    class Labelled(Point):
        def __init__(self, x: int, y: Optional[int] = None, *, label: str = "") -> None:
            scratch = label.upper()  # a local of __init__ is not a field, nor what else it sets
            self._set(x=x, y=y, label=label, shown=scratch)

    class Unchanged(Point):
        pass

    assert Point._fields == ("x", "y") and Labelled._fields == ("x", "y", "label")
    assert Unchanged._fields == ("x", "y")
    assert Labelled(1, label="a") != Labelled(1, label="b") and Labelled(1, label="a").shown == "A"
    assert repr(Labelled(1, 2, label="a")) == "test_the_fields_are_the_parameters_of_init_in_order_keyword_only_ones_included.<locals>.Labelled(x=1, y=2, label='a')"
