"""`gradlint.python.code_lines` reads brackets, separators and `=` by searching for them;
each answer must be what reading the code a character at a time gives."""
from hypothesis import given, settings as hypothesis_settings, strategies as st

from gradlint.python.code_lines import (
    CodeLines, bracket_end, first_assignment, last_assignment, top_level_parts,
)

OPENING, CLOSING = "([{", ")]}"


def parts_read_a_character_at_a_time(code, separator):
    parts, depth, last = [], 0, 0
    for index, character in enumerate(code):
        if character in OPENING:
            depth += 1
        elif character in CLOSING:
            depth -= 1
        elif character == separator and depth == 0:
            parts.append(code[last:index])
            last = index + 1
    parts.append(code[last:])
    return parts


def first_assignment_read_a_character_at_a_time(statement):
    depth = 0
    for index, character in enumerate(statement):
        if character in OPENING:
            depth += 1
        elif character in CLOSING:
            depth -= 1
        elif depth:
            continue
        elif character == ":":
            return "colon", index
        elif character == "=":
            before = statement[index - 1] if index else ""
            if statement.startswith("==", index) or (before and before in "=!<>"):
                continue
            return ("augmented" if before and before in "+-*/%@&|^" else "assignment"), index
    return "expression", -1


def last_assignment_read_a_character_at_a_time(statement):
    found, depth = 0, 0
    for index, character in enumerate(statement):
        if character in OPENING:
            depth += 1
        elif character in CLOSING:
            depth -= 1
        elif character == "=" and not depth:
            before = statement[index - 1] if index else ""
            if not statement.startswith("==", index) and before not in "=!<>+-*/%@&|^:" or not before:
                found = index + 1
    return found


def header_end_read_a_character_at_a_time(lines, index):
    depth = 0
    for line in range(index, len(lines.code)):
        code = lines.code[line]
        for column, character in enumerate(code):
            if character in OPENING:
                depth += 1
            elif character in CLOSING:
                depth -= 1
            elif character == ":" and depth == 0:
                return None if code.startswith(":=", column) else (line, column)
        if depth == 0 and not code.endswith("\\"):
            return None
    return None


def bracket_end_read_a_character_at_a_time(code, opening):
    depth = 0
    for index in range(opening, len(code)):
        if code[index] in OPENING:
            depth += 1
        elif code[index] in CLOSING:
            depth -= 1
            if depth == 0:
                return index + 1
    return None


PIECES = ["x", "y", " ", "(", ")", "[", "]", "{", "}", ",", ";", ":", "=", "==", "+=", "!=", "<=", ":=", "-", "*",
          "\\", "\n", "'s'", "# c", "é", "lambda"]


@hypothesis_settings(max_examples=1000, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=20))
def test_statement_reading_matches_reading_a_character_at_a_time(pieces):
    code = "".join(pieces)
    for separator in ",;":
        assert top_level_parts(code, separator) == parts_read_a_character_at_a_time(code, separator)
    assert first_assignment(code) == first_assignment_read_a_character_at_a_time(code)
    assert last_assignment(code) == last_assignment_read_a_character_at_a_time(code)
    for opening in (index for index, character in enumerate(code) if character in OPENING):
        assert bracket_end(code, opening) == bracket_end_read_a_character_at_a_time(code, opening)


@hypothesis_settings(max_examples=1000, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=20))
def test_header_end_matches_reading_a_character_at_a_time(pieces):
    lines = CodeLines("with " + "".join(pieces))
    for index in range(len(lines.code)):
        assert lines.header_end(index) == header_end_read_a_character_at_a_time(lines, index)
