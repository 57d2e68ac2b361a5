from __future__ import annotations

import functools
import re
from itertools import groupby

from gradlint.reporters import Reporter, RunResult
from gradlint.reporters.text import location, position_text

@functools.lru_cache(maxsize=1)
def _not_xml() -> "re.Pattern[str]":
    """Characters XML 1.0 cannot hold even escaped (source snippets may carry them);
    compiled on first use, since every run imports this module to list the formats."""
    return re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _xml_text(text: str) -> str:
    return _not_xml().sub("\ufffd", text)


class JunitReporter(Reporter):
    """JUnit XML: one failing test case per finding, a test suite per file; a clean run
    is one passing case, so CI dashboards show that the check ran."""

    format_name = "junit"

    def render(self, result: RunResult) -> None:
        import xml.etree.ElementTree as ElementTree  # loaded for this format only

        findings = result.findings
        root = ElementTree.Element("testsuites", name="gradlint", tests=str(max(1, len(findings))),
                                   failures=str(len(findings)), errors="0")
        if not findings:
            suite = ElementTree.SubElement(root, "testsuite", name="gradlint", tests="1",
                                           failures="0", errors="0", skipped="0")
            ElementTree.SubElement(suite, "testcase", name="gradlint", classname="gradlint")
        for path, group in groupby(findings, key=lambda finding: finding.path):
            group = list(group)
            suite = ElementTree.SubElement(root, "testsuite", name=_xml_text(path), tests=str(len(group)),
                                           failures=str(len(group)), errors="0", skipped="0")
            for finding in group:
                where = position_text(finding)
                case = ElementTree.SubElement(
                    suite, "testcase", classname=_xml_text(path),
                    name=_xml_text(f"{finding.code} [{finding.name}] at {where}"),
                )
                failure = ElementTree.SubElement(case, "failure", type=finding.code,
                                                 message=_xml_text(finding.message))
                failure.text = _xml_text(f"{location(finding)}: {finding.code} {finding.message}")
        ElementTree.indent(root)
        self.stream.write('<?xml version="1.0" encoding="UTF-8"?>\n')
        self.stream.write(ElementTree.tostring(root, encoding="unicode"))
        self.stream.write("\n")
