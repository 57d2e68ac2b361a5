"""Across modules (`gradlint.python.project`, the runner's second pass): what an importer
writes finds the checked module, a file that imports a module whose function returns an
inference tensor is checked with that module's summary, and the result cache keeps each
importer's entry tied to the content of the modules whose summaries it used."""
from __future__ import annotations

import os
import shutil

import pytest

from gradlint.engine import Linter
from gradlint.python.project import ModuleFinder, import_strings
from gradlint.runner import POOL_MIN_FILES, run_files
from gradlint.settings import Settings, resolve_selection

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PREDICTOR = os.path.join(ROOT, "fixtures", "python", "GL201", "probabilities_sharpened_after_imported_predictor")
SETTINGS = Settings(enabled=resolve_selection(["GL201", "GL202", "GL203", "GL204"], [], []))


def test_import_strings_name_modules_and_what_may_be_submodules():
    text = ("import os\nimport torch.nn as nn\nimport pkg.rotary\nfrom torch import nn\n"
            "from .predict import infer, load\nfrom . import layers\nfrom pkg.rotary import (\n    build_cache,\n)\n")
    found = import_strings(text)
    assert {".predict", ".predict.infer", ".layers", "pkg.rotary", "pkg.rotary.build_cache"} <= set(found)
    assert not [name for name in found if name.startswith(("os", "torch"))]


def test_an_import_finds_its_module_relative_or_beside_the_importer(tmp_path):
    paths = [tmp_path / "pkg" / "__init__.py", tmp_path / "pkg" / "rotary.py", tmp_path / "pkg" / "sub" / "main.py",
             tmp_path / "predict.py", tmp_path / "other" / "predict.py"]
    finder = ModuleFinder([str(path) for path in paths])
    main = str(tmp_path / "pkg" / "sub" / "main.py")
    assert finder.resolve(main, "..rotary") == str(paths[1])
    assert finder.resolve(main, "pkg.rotary") == str(paths[1])
    assert finder.resolve(main, ".rotary") is None  # not in pkg/sub
    assert finder.resolve(str(tmp_path / "script.py"), "predict") == str(paths[3])  # beside it, of the two
    assert finder.resolve(str(tmp_path / "pkg" / "x.py"), "predict") is None  # two match, neither beside


def _copy_project(tmp_path):
    folder = tmp_path / "project"
    shutil.copytree(PREDICTOR, folder)
    return folder


def _findings(folder, **options):
    files = sorted(str(path) for path in folder.rglob("*.py"))
    outcome = run_files(files, SETTINGS, **options)
    return sorted((os.path.basename(report.path), finding.start.line, finding.code)
                  for report in outcome.reports for finding in report.findings)


def test_an_importer_that_never_names_a_guard_is_checked_with_the_module_it_imports(tmp_path):
    folder = _copy_project(tmp_path)
    assert "inference_mode" not in (folder / "main.py").read_text()
    assert _findings(folder, jobs=1, cache_dir=None) == [("main.py", 13, "GL201")]


class _Counting:
    """Counts the files the linter checks (each call of `Linter.check_module`)."""

    def __init__(self, monkeypatch):
        self.paths = []
        original = Linter.check_module

        def counting(linter, text, path, *args, **kwargs):
            self.paths.append(os.path.basename(path))
            return original(linter, text, path, *args, **kwargs)

        monkeypatch.setattr(Linter, "check_module", counting)


def test_only_the_importers_of_exporting_modules_are_checked_again(tmp_path, monkeypatch):
    folder = _copy_project(tmp_path)
    for index in range(5):  # modules that import nothing that exports
        (folder / f"unrelated_{index}.py").write_text("import torch\n\nfrom helpers import scale\n")
    counting = _Counting(monkeypatch)
    _findings(folder, jobs=1, cache_dir=None)
    assert sorted(counting.paths) == sorted(["main.py", "main.py", "predict.py"] +
                                            [f"unrelated_{index}.py" for index in range(5)])


def test_the_cache_ties_an_importer_to_the_content_of_the_module_it_imports(tmp_path, monkeypatch):
    folder = _copy_project(tmp_path)
    cache = str(tmp_path / "cache")
    assert _findings(folder, jobs=1, cache_dir=cache) == [("main.py", 13, "GL201")]
    counting = _Counting(monkeypatch)
    assert _findings(folder, jobs=1, cache_dir=cache) == [("main.py", 13, "GL201")]
    assert counting.paths == []  # a warm run stays warm
    predict = folder / "predict.py"
    original = predict.read_text()
    predict.write_text(original.replace("@torch.inference_mode()", "@torch.no_grad()"))
    assert _findings(folder, jobs=1, cache_dir=cache) == []  # main.py's bytes did not change
    assert "main.py" in counting.paths
    predict.write_text(original)
    assert _findings(folder, jobs=1, cache_dir=cache) == [("main.py", 13, "GL201")]


def test_the_worker_pool_gives_the_same_findings(tmp_path):
    folder = _copy_project(tmp_path)
    for index in range(POOL_MIN_FILES):
        (folder / f"filler_{index}.py").write_text(f"import torch\n\nVALUE = {index}\n")
    serial = _findings(folder, jobs=1, cache_dir=None)
    assert serial == [("main.py", 13, "GL201")]
    assert _findings(folder, jobs=2, cache_dir=None) == serial
