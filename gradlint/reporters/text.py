from __future__ import annotations

import os
import re

from gradlint.diagnostics import LineIndex
from gradlint.reporters import Reporter, RunResult


def location(finding) -> str:
    return f"{shown_path(finding.path)}:{position_text(finding)}"


def position_text(finding) -> str:
    """`line:column`, or `cell N:line:column` in a notebook (of a finding or a related place)."""
    if finding.cell is not None:
        return f"cell {finding.cell + 1}:{finding.start.line}:{finding.start.column}"
    return f"{finding.start.line}:{finding.start.column}"


# What makes a file name unsafe to print as it is: control characters (a newline starts a
# fake finding), quotes and backslashes (the quoting itself), a colon before a digit
# (`a.py:3:4: GL999 b.py` reads as a finding in a.py), and bytes that are not UTF-8.
_UNSAFE_IN_NAME = r'[\x00-\x1f\x7f"\\\ud800-\udfff]|:(?=\d)'  # compiled on first use (`re` keeps it)
_C_ESCAPES = {"\a": "\\a", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\v": "\\v", "\f": "\\f",
              "\r": "\\r", '"': '\\"', "\\": "\\\\", ":": "\\072"}


def shown_path(path: str) -> str:
    """A path as text output prints it: as it is, or, when it holds something a reader of
    `path:line:col:` lines would misread, in double quotes with C escapes (as git quotes
    file names; a byte that is not UTF-8 becomes its octal escape)."""
    if not re.search(_UNSAFE_IN_NAME, path):
        return path
    parts = []
    for char in path:
        if char in _C_ESCAPES:
            parts.append(_C_ESCAPES[char])
        elif char < " " or char == "\x7f" or "\ud800" <= char <= "\udfff":
            raw = char.encode("utf-8", "surrogateescape" if "\udc80" <= char <= "\udcff" else "surrogatepass")
            parts.append("".join(f"\\{byte:03o}" for byte in raw))
        else:
            parts.append(char)
    return '"' + "".join(parts) + '"'


def _near(path):
    """A related place's own path (another file's, absolute), relative when under the
    working directory as the findings' paths are."""
    if path is None or not os.path.isabs(path):
        return path
    relative = os.path.relpath(path)
    return path if relative.startswith("..") else relative


_COLOURS = {"red": "\033[31m", "cyan": "\033[36m"}
_BOLD = "\033[1m"
_RESET = "\033[0m"


class TextReporter(Reporter):
    """`path:line:col: GL123 [rule-name] message`, one finding a line."""

    format_name = "text"

    def __init__(self, stream, options) -> None:
        super().__init__(stream, options)
        self._line_indexes = {}

    def _style(self, text: str, fg: str = "", bold: bool = False) -> str:
        """`text` in a colour and/or bold, as terminals read ANSI escapes (`click.style`'s codes)."""
        if not self.options.color:
            return text
        return f"{_COLOURS[fg] if fg else ''}{_BOLD if bold else ''}{text}{_RESET}"

    def render(self, result: RunResult) -> None:
        for finding in result.findings:
            fixable = ""
            if finding.fix is not None and finding.fix.is_applicable(result.unsafe_fixes):
                fixable = self._style(" [*]", fg="cyan")
            self.stream.write(
                f"{self._style(location(finding), bold=True)}: "
                f"{self._style(finding.code, fg='red', bold=True)}{fixable} "
                f"[{finding.name}] {finding.message}\n"
            )
            if self.options.show_source:
                self._write_source(finding)
            for place in finding.related:
                self.stream.write(f"    {shown_path(_near(place.path) or finding.path)}:{position_text(place)}: "
                                  f"{self._style('note', fg='cyan')}: {place.message}\n")
        if self.options.show_fixes and result.applied_fixes:
            self.stream.write("Applied fixes:\n")
            for finding in result.applied_fixes:
                self.stream.write(f"  {location(finding)}: {finding.code} {finding.fix.title}\n")

    def _write_source(self, finding) -> None:
        text = self.options.sources.get(finding.path)
        if text is None:
            return
        lines = self._line_indexes.get(finding.path)
        if lines is None:
            lines = self._line_indexes[finding.path] = LineIndex(text)
        # Offsets, not line numbers: a notebook's findings count lines within their cell.
        where = lines.position(finding.start_offset)
        line = lines.line_text(where.line)
        start = where.column - 1
        end = min(len(line), start + max(0, finding.end_offset - finding.start_offset))
        marker = self._style("^" * max(1, display_width(line[start:end])), fg="red")
        self.stream.write(f"  {finding.start.line:>5} | {line}\n")
        self.stream.write(f"        | {blank_like(line[:start])}{marker}\n")


def display_width(text: str) -> int:
    """Terminal columns: East Asian wide characters take two, combining marks none."""
    import unicodedata  # only findings shown with their source need it

    return sum(0 if unicodedata.combining(char) else 2 if unicodedata.east_asian_width(char) in "WF" else 1
               for char in text)


def blank_like(text: str) -> str:
    """Spaces as wide as `text`, keeping its tabs, so a caret lands under the right character."""
    return "".join(char if char == "\t" else " " * display_width(char) for char in text)
