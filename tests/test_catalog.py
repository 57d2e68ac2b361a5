"""gradlint/catalog.py is what the package walks find: a run reads it instead of importing
every rule, front end and output format, so it must say what the walks say."""
import os
import subprocess
import sys

from gradlint.docs import CATALOG_MODULE, catalog_source
from gradlint.frontend import language_for, supported_extensions, walk_frontends
from gradlint.reporters import format_names, reporter_for, reporters
from gradlint.rule import CatalogedRule, all_rules, rule_catalog

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_catalog_is_generated_from_the_walks():
    with open(CATALOG_MODULE, encoding="utf-8") as handle:
        assert handle.read() == catalog_source(), "gradlint/catalog.py is stale: run `python -m gradlint.docs --catalog`"


def test_cataloged_rules_say_what_the_loaded_rules_say():
    walked = all_rules()
    cataloged = rule_catalog()
    assert list(cataloged) == list(walked)
    for code, entry in cataloged.items():
        rule = walked[code]
        assert entry.load() is rule
        assert entry.record() == CatalogedRule.of(rule).record()
        for language in rule.languages():
            assert entry.prefilters_for(language) == rule.prefilters_for(language)


def test_front_ends_and_formats_come_from_the_catalog():
    assert supported_extensions() == tuple(sorted(walk_frontends()))
    for extension, (module, name) in walk_frontends().items():
        assert language_for("file" + extension.upper()) is getattr(sys.modules[module], name)
    assert language_for("file.txt") is None
    assert format_names() == tuple(reporters())
    assert all(reporter_for(name) is reporters()[name] for name in format_names())


def _run(code: str, cwd: str) -> str:
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, env=dict(os.environ, PYTHONPATH=cwd),
                          capture_output=True, text=True, check=True).stdout


def test_a_check_imports_only_the_rules_front_ends_and_format_it_needs(tmp_path):
    """No rule's prefilter matches a file without guard words: `gradlint check` imports no
    rule, one front end and one reporter."""
    plain = tmp_path / "plain.py"
    plain.write_text("def add(a, b):\n    return a + b\n")
    code = ("import atexit, sys\n"
            "def imported(part): return sorted(name for name in sys.modules if name.startswith('gradlint.' + part))\n"
            "atexit.register(lambda: print(imported('rules.'), imported('reporters'), imported('python.'),\n"
            "                              imported('cpp'), imported('notebook'), file=sys.stderr))\n"
            f"sys.argv = ['gradlint', 'check', '--no-cache', {str(plain)!r}]\n"
            "from gradlint.console import main\nmain()")
    run = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=dict(os.environ, PYTHONPATH=ROOT),
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert run.stderr.splitlines()[-1] == (
        "[] ['gradlint.reporters', 'gradlint.reporters.progress', 'gradlint.reporters.text'] "
        "['gradlint.python.from_imports', 'gradlint.python.frontend'] [] []")


def test_a_rule_module_the_catalog_lacks_is_found_by_the_walk(tmp_path):
    """A rule added since the catalog was written still runs (and this module's first test fails)."""
    import shutil

    copy = tmp_path / "gradlint"
    shutil.copytree(os.path.join(ROOT, "gradlint"), copy, ignore=shutil.ignore_patterns("__pycache__"))
    source = (copy / "rules" / "gl407_set_grad_enabled_as_scope.py").read_text()
    added = source.replace('code = "GL407"', 'code = "GL408"').replace('"set-grad-enabled-as-scope"',
                                                                      '"set-grad-enabled-as-scope-copy"')
    assert added != source
    (copy / "rules" / "gl408_copy.py").write_text(added)
    listed = _run("from gradlint.rule import rule_catalog\nprint(sorted(rule_catalog()))", str(tmp_path))
    assert "'GL408'" in listed and "'GL407'" in listed


def test_a_rule_edited_since_the_catalog_was_written_is_read_from_its_module(tmp_path):
    """A prefilter changed without regenerating the catalog: the run reads the rule itself."""
    import shutil

    copy = tmp_path / "gradlint"
    shutil.copytree(os.path.join(ROOT, "gradlint"), copy, ignore=shutil.ignore_patterns("__pycache__"))
    module = copy / "rules" / "gl407_set_grad_enabled_as_scope.py"
    source = module.read_text()
    edited = source.replace('prefilter = r"\\bset_grad_enabled\\b"', 'prefilter = r"\\bset_grad_enabled_edited\\b"')
    assert edited != source
    module.write_text(edited)
    listed = _run("from gradlint.rule import rule_catalog\nprint(rule_catalog()['GL407'].prefilters)", str(tmp_path))
    assert "set_grad_enabled_edited" in listed


def test_the_modules_on_disk_are_those_pkgutil_lists(tmp_path):
    """The catalog checks list a folder's modules as `pkgutil.iter_modules` does, without
    importing `inspect`: packages (a folder with an `__init__`), compiled and extension
    modules, each name once."""
    import pkgutil

    from gradlint.modules_on_disk import modules_in

    for name in ("plain.py", "compiled.pyc", "native.cpython-311-x86_64-linux-gnu.so", "native.py",
                 "notes.txt", "dotted.name.py", "__init__.py", "_private.py"):
        (tmp_path / name).write_text("")
    for folder, inside in (("package", "__init__.py"), ("compiled_package", "__init__.pyc"),
                           ("folder", "module.py"), ("with.dot", "__init__.py")):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / inside).write_text("")
    for folder in (tmp_path, *(os.path.join(ROOT, "gradlint", part) for part in ("", "reporters", "rules", "python"))):
        assert modules_in(str(folder)) == [(info.name, info.ispkg) for info in pkgutil.iter_modules([str(folder)])]
