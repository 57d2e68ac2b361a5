"""What the documentation cites and links ships in the repository and resolves."""
import json
import os
import re
import stat
import subprocess
import sys

import pytest

from ecosystem_samples import BAD_PYTHON, ROOT

SEMANTICS = os.path.join(ROOT, "docs", "torch-semantics.md")
_LINK = re.compile(r"\]\(([^)\s]+)\)")


def _read(path):
    with open(path, encoding="utf-8") as handle:
        return handle.read()


def _anchors(markdown: str) -> set:
    """Explicit `<a id>` anchors and the ones GitHub makes from headings."""
    anchors = set(re.findall(r'<a id="([^"]+)"></a>', markdown))
    for heading in re.findall(r"^#+ (.+)$", markdown, re.M):
        anchors.add(re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-"))
    return anchors


def _unresolved(markdown: str, base_folder: str) -> list:
    """The relative links of `markdown`, read from `base_folder`, that lead nowhere."""
    broken = []
    for target in _LINK.findall(markdown):
        if re.match(r"[a-z]+:", target):
            continue  # an external URL
        path, _, anchor = target.partition("#")
        full = os.path.normpath(os.path.join(base_folder, path)) if path else None
        if full is not None and not os.path.exists(full):
            broken.append(target)
        elif anchor and (full is None or full.endswith(".md")):
            document = _read(full) if full else markdown
            if anchor not in _anchors(document):
                broken.append(target)
    return broken


def _python_sources():
    for folder, _, names in os.walk(os.path.join(ROOT, "gradlint")):
        for name in names:
            if name.endswith(".py"):
                yield os.path.join(folder, name)


def test_every_section_the_code_cites_is_in_the_semantics_document():
    sections = _anchors(_read(SEMANTICS))
    cited = {}
    for path in _python_sources():
        for section in re.findall(r"§(\d+[a-z]?)\b", _read(path)):
            cited.setdefault(section, os.path.relpath(path, ROOT))
    assert cited, "no citations found: the pattern is wrong"
    missing = {section: where for section, where in cited.items() if f"s{section}" not in sections}
    assert not missing


def test_the_semantics_document_says_what_it_was_measured_on():
    text = _read(SEMANTICS)
    assert "torch **2.13.0+cpu**" in text
    assert "run again on that\ninstalled torch" in text


@pytest.mark.parametrize("document", ["README.md", "docs/rules.md", "docs/torch-semantics.md", "CONTRIBUTING.md"])
def test_relative_links_resolve(document):
    path = os.path.join(ROOT, document)
    assert _unresolved(_read(path), os.path.dirname(path)) == []


def test_the_link_checker_sees_broken_links():
    assert _unresolved("[a](docs/nowhere.md) [b](docs/rules.md#no-such-rule) [c](#gone)", ROOT) == [
        "docs/nowhere.md", "docs/rules.md#no-such-rule", "#gone"]


def test_rule_command_and_sarif_link_their_citations_to_the_document(run_cli, project):
    text = run_cli("rule", "GL402").stdout
    assert "[§2](docs/torch-semantics.md#s2)" in text
    assert _unresolved(text, ROOT) == []
    document = json.loads(run_cli("check", "--output-format", "sarif", ".").stdout)
    driver = document["runs"][0]["tool"]["driver"]
    assert "informationUri" not in driver
    for rule in driver["rules"]:
        markdown = rule["help"]["markdown"]
        assert "](docs/torch-semantics.md#s" in markdown
        assert _unresolved(markdown, ROOT) == []


def test_no_placeholder_homepage_remains():
    for name in ("pyproject.toml", "README.md", os.path.join("gradlint", "reporters", "sarif.py")):
        assert "example.invalid" not in _read(os.path.join(ROOT, name))


def test_license_file_matches_pyproject():
    assert 'license = { text = "MIT" }' in _read(os.path.join(ROOT, "pyproject.toml"))
    license_text = _read(os.path.join(ROOT, "LICENSE"))
    assert license_text.startswith("MIT License\n")
    assert "Permission is hereby granted, free of charge" in license_text
    assert "gradlint" in license_text


def test_the_github_action_installs_from_its_checkout_and_runs_the_arguments(tmp_path):
    """The action's two steps, run by bash as a runner would, with `python` standing in for
    pip (recording what it was asked to install) and the real gradlint."""
    import yaml

    action = yaml.safe_load(_read(os.path.join(ROOT, "action.yml")))
    steps = action["runs"]["steps"]
    assert action["runs"]["using"] == "composite"
    fake_bin = tmp_path / "bin"
    fake_bin.mkdir()
    record = tmp_path / "pip-args"
    fake_python = fake_bin / "python"
    fake_python.write_text(f'#!/bin/sh\necho "$@" > {record}\n')
    fake_python.chmod(fake_python.stat().st_mode | stat.S_IEXEC)
    gradlint = fake_bin / "gradlint"
    gradlint.write_text(f'#!/bin/sh\nexec {sys.executable} -m gradlint "$@"\n')
    gradlint.chmod(gradlint.stat().st_mode | stat.S_IEXEC)
    (tmp_path / "model.py").write_text(BAD_PYTHON, encoding="utf-8")
    env = dict(os.environ, PATH=f"{fake_bin}{os.pathsep}{os.environ['PATH']}", GITHUB_ACTION_PATH=ROOT,
               GRADLINT_ARGS=action["inputs"]["args"]["default"])
    install = subprocess.run(["bash", "-e", "-c", steps[0]["run"]], cwd=tmp_path, env=env,
                             capture_output=True, text=True)
    assert install.returncode == 0, install.stderr
    assert record.read_text().split()[-1] == ROOT
    checked = subprocess.run(["bash", "-e", "-c", steps[1]["run"]], cwd=tmp_path, env=env,
                             capture_output=True, text=True)
    assert checked.returncode == 1
    assert checked.stdout.startswith("::error file=model.py,line=5,col=10,")
    assert steps[1]["env"]["GRADLINT_ARGS"] == "${{ inputs.args }}"


def test_editor_setup_covers_objective_cpp():
    readme = _read(os.path.join(ROOT, "README.md"))
    assert readme.count('"objcpp"') >= 2  # both Neovim recipes
    assert "gradlint-server" in _read(os.path.join(ROOT, "pyproject.toml"))
