import json
import re
import os
import xml.etree.ElementTree as ElementTree

import pytest

from ecosystem_samples import BAD_PYTHON
from gradlint.diagnostics import Edit, Finding, Fix, Position, Safety, Severity
from gradlint.engine import FileReport
from gradlint.reporters import ReporterOptions, RunResult, reporters
from gradlint.reporters.github import escape_data, escape_property

GL402_MESSAGE = "`torch.no_grad` is the class, not a guard: this `with` raises TypeError; write `torch.no_grad()`"
FIXED_PYTHON = BAD_PYTHON.replace("with torch.no_grad:", "with torch.no_grad():")


def render(format_name, reports, unsafe_fixes=False, **options):
    import io

    stream = io.StringIO()
    reporters()[format_name](stream, ReporterOptions(**options)).render(
        RunResult(reports, "check", unsafe_fixes))
    return stream.getvalue()


def synthetic(message="guard misused", path="pkg/model.py", cell=None, line=3, severity=Severity.WARNING):
    return Finding(path=path, code="GL402", name="guard-missing-parens", message=message,
                   severity=severity, start=Position(line, 5), end=Position(line, 9),
                   start_offset=40, end_offset=44, cell=cell)


def test_every_issue_format_is_registered():
    assert {"text", "concise", "json", "json-lines", "sarif", "github", "gitlab", "junit"} <= set(reporters())


def test_concise_is_one_line_per_finding(project, run_cli):
    result = run_cli("check", "--output-format", "concise", "model.py", "kernel.cpp")
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert lines[0] == f"model.py:5:10: GL402 [*] {GL402_MESSAGE}"
    assert re.match(r"kernel\.cpp:4:\d+: GL101 \S", lines[1])
    assert len(lines) == 2


def test_json_lines_carries_the_json_objects_one_a_line(project, run_cli):
    listed = json.loads(run_cli("check", "--output-format", "json", ".").stdout)
    streamed = run_cli("check", "--output-format", "json-lines", ".").stdout
    assert [json.loads(line) for line in streamed.splitlines()] == listed
    assert [item["code"] for item in listed] == ["GL101", "GL402"]


def test_json_and_sarif_carry_the_notebook_cell():
    report = FileReport("analysis.ipynb", findings=[synthetic(path="analysis.ipynb", cell=2)])
    assert json.loads(render("json", [report]))[0]["cell"] == 2
    assert json.loads(render("json-lines", [report]))["cell"] == 2
    result = json.loads(render("sarif", [report]))["runs"][0]["results"][0]
    assert result["properties"] == {"cell": 2, "cellNumber": 3, "lineInCell": 3, "columnInCell": 5}
    assert "cell 3, line 3, column 5" in render("github", [report])


def test_github_annotations(project, run_cli):
    result = run_cli("check", "--output-format", "github", "model.py")
    assert result.exit_code == 1
    assert result.stdout == (
        "::error file=model.py,line=5,col=10,endLine=5,endColumn=23,"
        f"title=GL402 [guard-missing-parens]::{GL402_MESSAGE}\n"
    )


def test_github_escapes_messages_and_properties():
    assert escape_data("100% done\r\nnext") == "100%25 done%0D%0Anext"
    assert escape_property("a:b,c%\n") == "a%3Ab%2Cc%25%0A"
    report = FileReport("dir,odd:name.py", findings=[synthetic(message="50%\nof it", path="dir,odd:name.py")])
    assert render("github", [report]) == (
        "::warning file=dir%2Codd%3Aname.py,line=3,col=5,endLine=3,endColumn=9,"
        "title=GL402 [guard-missing-parens]::50%25%0Aof it\n"
    )


def test_gitlab_code_quality(project, run_cli):
    issues = json.loads(run_cli("check", "--output-format", "gitlab", ".").stdout)
    assert [issue["check_name"] for issue in issues] == ["GL101 legacy-guard", "GL402 guard-missing-parens"]
    python_issue = issues[1]
    assert python_issue["description"] == GL402_MESSAGE
    assert python_issue["severity"] == "major"
    assert python_issue["location"] == {
        "path": "model.py", "positions": {"begin": {"line": 5, "column": 10}, "end": {"line": 5, "column": 23}},
    }
    assert issues[0]["severity"] == "minor"  # GL101 is a warning
    assert len({issue["fingerprint"] for issue in issues}) == 2


def test_gitlab_fingerprints_survive_moved_lines_and_tell_repeats_apart(project, run_cli):
    before = json.loads(run_cli("check", "--output-format", "gitlab", "model.py").stdout)
    project.joinpath("model.py").write_text("# a new header line\n\n" + BAD_PYTHON * 2, encoding="utf-8")
    after = json.loads(run_cli("check", "--output-format", "gitlab", "model.py").stdout)
    assert [issue["location"]["positions"]["begin"]["line"] for issue in after] == [7, 13]
    assert after[0]["fingerprint"] == before[0]["fingerprint"]
    assert after[1]["fingerprint"] != after[0]["fingerprint"]


def test_junit_one_case_per_finding_grouped_per_file(project, run_cli):
    result = run_cli("check", "--output-format", "junit", ".")
    root = ElementTree.fromstring(result.stdout.encode("utf-8"))
    assert root.tag == "testsuites" and root.get("failures") == "2"
    suites = root.findall("testsuite")
    assert [suite.get("name") for suite in suites] == ["kernel.cpp", "model.py"]
    case = suites[1].find("testcase")
    assert case.get("name") == "GL402 [guard-missing-parens] at 5:10"
    assert case.find("failure").get("message") == GL402_MESSAGE
    assert case.find("failure").get("type") == "GL402"


def test_junit_clean_run_is_one_passing_case(tmp_path, monkeypatch, run_cli):
    tmp_path.joinpath("clean.py").write_text("import torch\nwith torch.no_grad():\n    pass\n")
    monkeypatch.chdir(tmp_path)
    result = run_cli("check", "--output-format", "junit", ".")
    assert result.exit_code == 0
    root = ElementTree.fromstring(result.stdout)
    cases = root.findall("./testsuite/testcase")
    assert len(cases) == 1 and cases[0].find("failure") is None
    assert root.get("failures") == "0"


def test_junit_replaces_characters_xml_cannot_hold():
    report = FileReport("m.py", findings=[synthetic(message="form\x0cfeed and \x00 nul")])
    root = ElementTree.fromstring(render("junit", [report]))
    assert root.find("./testsuite/testcase/failure").get("message") == "form\ufffdfeed and \ufffd nul"


# The official OASIS schema, kept beside this file (see sarif/README.md for its license).
SARIF_SCHEMA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sarif", "sarif-schema-2.1.0.json")


def _sarif_schema():
    with open(SARIF_SCHEMA, encoding="utf-8") as handle:
        return json.load(handle)


def _schema_errors(document):
    import jsonschema  # in the test extras: a missing one fails, never skips
    schema = _sarif_schema()
    validator = jsonschema.validators.validator_for(schema)(schema)
    return [f"{list(error.absolute_path)}: {error.message}" for error in validator.iter_errors(document)]


def test_sarif_validates_against_the_official_schema(project, run_cli):
    project.joinpath("unreadable.ipynb").write_text("{not json", encoding="utf-8")
    result = run_cli("check", "--output-format", "sarif", ".")
    document = json.loads(result.stdout)
    assert _schema_errors(document) == []
    run = document["runs"][0]
    assert run["invocations"][0]["executionSuccessful"] is False
    assert "unreadable.ipynb" in run["invocations"][0]["toolExecutionNotifications"][0]["message"]["text"]


def test_sarif_of_notebook_and_clean_runs_validates(tmp_path, monkeypatch, run_cli):
    notebook = FileReport("analysis.ipynb", findings=[synthetic(path="analysis.ipynb", cell=0)])
    assert _schema_errors(json.loads(render("sarif", [notebook]))) == []
    monkeypatch.chdir(tmp_path)
    tmp_path.joinpath("clean.py").write_text("x = 1\n")
    clean = json.loads(run_cli("check", "--output-format", "sarif", ".").stdout)
    assert _schema_errors(clean) == []
    assert clean["runs"][0]["results"] == [] and clean["runs"][0]["tool"]["driver"]["rules"] == []


def test_sarif_content(project, run_cli):
    document = json.loads(run_cli("check", "--output-format", "sarif", ".").stdout)
    run = document["runs"][0]
    driver = run["tool"]["driver"]
    assert driver["name"] == "gradlint" and driver["version"]
    assert [rule["id"] for rule in driver["rules"]] == ["GL101", "GL402"]
    gl402 = driver["rules"][1]
    assert gl402["name"] == "guard-missing-parens"
    assert gl402["shortDescription"]["text"] == "Grad-mode guard class used in `with` without calling it"
    assert "§2" in gl402["help"]["text"] and gl402["help"]["markdown"].startswith("# GL402")
    python_result = run["results"][1]
    assert python_result["ruleId"] == "GL402" and python_result["ruleIndex"] == 1
    assert python_result["level"] == "error" and run["results"][0]["level"] == "warning"
    location = python_result["locations"][0]["physicalLocation"]
    assert location["artifactLocation"] == {"uri": "model.py", "uriBaseId": "%SRCROOT%"}
    assert location["region"] == {"startLine": 5, "startColumn": 10, "endLine": 5, "endColumn": 23}
    assert "fixes" not in run["results"][0]  # GL101 offers no fix
    gitlab = json.loads(run_cli("check", "--output-format", "gitlab", ".").stdout)
    assert [r["partialFingerprints"]["gradlint/v1"] for r in run["results"]] == [i["fingerprint"] for i in gitlab]


def test_sarif_fix_replacements_produce_the_fixed_text(project, run_cli):
    document = json.loads(run_cli("check", "--output-format", "sarif", "model.py").stdout)
    (fix,) = document["runs"][0]["results"][0]["fixes"]
    assert "safe fix" in fix["description"]["text"]
    text = BAD_PYTHON
    for change in fix["artifactChanges"]:
        assert change["artifactLocation"]["uri"] == "model.py"
        for replacement in sorted(change["replacements"], key=lambda r: -r["deletedRegion"]["charOffset"]):
            start = replacement["deletedRegion"]["charOffset"]
            end = start + replacement["deletedRegion"]["charLength"]
            text = text[:start] + replacement["insertedContent"]["text"] + text[end:]
    assert text == FIXED_PYTHON


def test_sarif_uri_of_a_path_with_spaces_is_percent_encoded():
    report = FileReport("my dir/model #1.py", findings=[synthetic(path="my dir/model #1.py")])
    location = json.loads(render("sarif", [report]))["runs"][0]["results"][0]["locations"][0]
    assert location["physicalLocation"]["artifactLocation"]["uri"] == "my%20dir/model%20%231.py"


def test_display_only_fixes_are_not_offered_as_sarif_fixes():
    fix = Fix((Edit(44, 44, "(False)"),), Safety.DISPLAY_ONLY, "Call it with a mode")
    finding = synthetic()._replace(fix=fix)
    result = json.loads(render("sarif", [FileReport("m.py", findings=[finding])], unsafe_fixes=True))
    assert "fixes" not in result["runs"][0]["results"][0]
