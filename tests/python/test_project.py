"""Across modules (`gradlint.python.project`, the runner's second pass): what an importer
writes finds the checked module, a file that imports a module whose function returns an
inference tensor is checked with that module's summary, a module that never enters the mode
is summarized (whatever its size) for the functions its importers pass values to, only the
importers a summary concerns are checked again (in the pool when the run has one), and the
result cache keeps each importer's entry tied to the content of the modules whose
summaries it used."""
from __future__ import annotations

import os
import shutil

from gradlint import runner
from gradlint.engine import Linter
from gradlint.python.project import ModuleFinder, ProjectIndex, from_imports
from gradlint.runner import POOL_MIN_FILES, run_files
from gradlint.worker_pool import WorkerPool
from gradlint.settings import Settings, resolve_selection

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PREDICTOR = os.path.join(ROOT, "fixtures", "python", "GL201", "probabilities_sharpened_after_imported_predictor")
# main.py enters inference mode and passes what it made to returns.py's in-place helper
ROLLOUT = os.path.join(ROOT, "fixtures", "python", "GL201", "rollout_returns_standardized_by_imported_helper")
# session.py defines a class whose __enter__ turns inference mode on; main.py uses it
SESSION = os.path.join(ROOT, "fixtures", "python", "GL201", "probabilities_clamped_after_an_imported_session_guard")
SETTINGS = Settings(enabled=resolve_selection(["GL201", "GL202", "GL203", "GL204"], [], []))


def test_from_imports_name_each_module_and_the_names_taken_from_it():
    text = ("import os\nimport torch.nn as nn\nimport pkg.rotary\nfrom torch import nn\n"
            "from .predict import infer, load as load_model  # the helpers\nfrom . import layers\n"
            "from pkg.rotary import (\n    build_cache,  # cos and sin\n    apply,\n)\nfrom os.path import join\n"
            '"""Imports are read from the `from X import y` statements."""\n')
    assert dict(from_imports(text)) == {".predict": ("infer", "load as load_model"), ".": ("layers",),
                                        "pkg.rotary": ("build_cache", "apply")}


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



def test_an_importer_naming_no_exported_name_is_answered_without_reading_its_imports(tmp_path, monkeypatch):
    """The second pass asks every file with from-imports which exporting modules it reads
    (`ProjectIndex.dependencies`): one naming none of their names (after `as`, the name
    imported) is answered without reading its imports one by one (no alias split, no module
    resolved); a name imported under another is followed."""
    from gradlint.python import project
    from gradlint.python.project import ExportedFunction, ExportedReturn, exports_to_data

    predict, importer = str(tmp_path / "predict.py"), str(tmp_path / "main.py")
    infer = ExportedFunction("infer", predict, ("x",), ExportedReturn("tensor", True, ()))
    index = ProjectIndex({predict: exports_to_data({"infer": infer})})
    read = []
    split_alias, resolve = project.split_alias, ProjectIndex.resolve
    monkeypatch.setattr(project, "split_alias", lambda entry: read.append(entry) or split_alias(entry))
    monkeypatch.setattr(ProjectIndex, "resolve", lambda self, *args: read.append(args[1]) or resolve(self, *args))
    assert index.dependencies(importer, ((".predict", ("load", "infer_all as run")), (".other", ("helper",)))) == ()
    assert read == []
    assert index.dependencies(importer, ((".other", ("helper",)), (".predict", ("load", "infer as run")))) == (predict,)
    assert read == ["load", "infer as run", ".predict"]

def _copy_project(tmp_path, fixture=PREDICTOR):
    folder = tmp_path / "project"
    shutil.copytree(fixture, folder, ignore=shutil.ignore_patterns("*.fixed.py"))  # the modules
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


def test_a_module_of_any_size_is_summarized_for_the_functions_its_importers_ask_for(tmp_path):
    folder = _copy_project(tmp_path, ROLLOUT)
    returns = folder / "returns.py"
    padding = "".join(f"\n\ndef clip_{index}_(values, low={index}):\n    values.clamp_(min=low)\n    return values\n"
                      for index in range(200))
    returns.write_text(returns.read_text() + padding)
    assert returns.stat().st_size > 8_000
    assert _findings(folder, jobs=1, cache_dir=None) == [("main.py", 19, "GL201")]
    asked = ProjectIndex({}, {str(returns): (("standardize_",), ("discounted", "standardize_"), ("standardize_",))})
    exports = Linter(SETTINGS).check_path(str(returns), project=asked).exports
    assert [function[0] for function in exports[0]] == ["standardize_"]  # clip_*_ update theirs too, unasked


def test_an_importer_is_checked_again_only_for_a_name_whose_summary_concerns_it(tmp_path, monkeypatch):
    folder = _copy_project(tmp_path, ROLLOUT)
    (folder / "report.py").write_text(  # imports the in-place helper, never passes it a tensor of the mode
        "import torch\n\nfrom returns import discounted, standardize_\n\n\n"
        "def scores(model, batch):\n    with torch.inference_mode():\n        logits = model(batch)\n"
        "    weights = standardize_(torch.ones(3))\n    return logits.argmax(-1), discounted(weights)\n")
    counting = _Counting(monkeypatch)
    assert _findings(folder, jobs=1, cache_dir=None) == [("main.py", 19, "GL201")]
    assert sorted(counting.paths) == ["main.py", "main.py", "report.py", "returns.py", "returns.py"]


def test_a_changed_summarized_module_invalidates_the_cached_results_of_its_importers(tmp_path, monkeypatch):
    folder = _copy_project(tmp_path, ROLLOUT)
    cache = str(tmp_path / "cache")
    assert _findings(folder, jobs=1, cache_dir=cache) == [("main.py", 19, "GL201")]
    counting = _Counting(monkeypatch)
    assert _findings(folder, jobs=1, cache_dir=cache) == [("main.py", 19, "GL201")]
    assert counting.paths == []  # a warm run stays warm: returns.py's summary is in the cache
    returns = folder / "returns.py"
    original = returns.read_text()
    returns.write_text(original.replace("values.sub_(values.mean()).div_(values.std() + 1e-8)",
                                        "values = (values - values.mean()) / (values.std() + 1e-8)"))
    assert _findings(folder, jobs=1, cache_dir=cache) == []  # main.py's bytes did not change
    assert sorted(counting.paths) == ["main.py", "returns.py", "returns.py"]
    returns.write_text(original)
    assert _findings(folder, jobs=1, cache_dir=cache) == [("main.py", 19, "GL201")]


def test_the_second_pass_runs_in_the_worker_pool_with_the_same_findings(tmp_path, monkeypatch):
    folder = _copy_project(tmp_path, ROLLOUT)
    shutil.copy(folder / "main.py", folder / "evaluate.py")  # two importers to check again
    for index in range(POOL_MIN_FILES):
        (folder / f"filler_{index}.py").write_text(f"import torch\n\nVALUE = {index}\n")
    serial = _findings(folder, jobs=1, cache_dir=None)
    assert serial == [("evaluate.py", 19, "GL201"), ("main.py", 19, "GL201")]
    sent = []
    lint_again = WorkerPool.lint_again
    monkeypatch.setattr(WorkerPool, "lint_again", lambda pool, calls: sent.append(
        sorted(os.path.basename(call[0]) for call in calls)) or lint_again(pool, calls))
    monkeypatch.setattr(runner, "SERIAL_FIRST_MAX_FILES", 8)  # the run's own pool, still open for the second pass
    assert _findings(folder, jobs=2, cache_dir=None) == serial
    assert sent == [["evaluate.py", "main.py"]]


def test_a_guard_of_another_module_is_followed_and_its_change_reaches_the_cached_importer(tmp_path, monkeypatch):
    folder = _copy_project(tmp_path, SESSION)
    cache = str(tmp_path / "cache")
    assert "inference_mode" not in (folder / "main.py").read_text()
    assert _findings(folder, jobs=1, cache_dir=cache) == [("main.py", 14, "GL201")]
    counting = _Counting(monkeypatch)
    assert _findings(folder, jobs=1, cache_dir=cache) == [("main.py", 14, "GL201")]
    assert counting.paths == []
    session = folder / "session.py"
    session.write_text(session.read_text().replace("torch.inference_mode()", "torch.no_grad()"))
    assert _findings(folder, jobs=1, cache_dir=cache) == []  # a no_grad session makes normal tensors
    assert sorted(counting.paths) == ["main.py", "session.py"]


class _CountingPasses:
    """Counts the runs of the second pass (`runner._follow_imports`)."""

    def __init__(self, monkeypatch):
        self.count = 0
        original = runner._follow_imports

        def counting(*args):
            self.count += 1
            return original(*args)

        monkeypatch.setattr(runner, "_follow_imports", counting)


def test_a_warm_run_over_the_same_files_skips_the_second_pass_and_a_change_brings_it_back(tmp_path, monkeypatch):
    folder = _copy_project(tmp_path)
    cache = str(tmp_path / "cache")
    passes = _CountingPasses(monkeypatch)
    assert _findings(folder, jobs=1, cache_dir=cache) == [("main.py", 13, "GL201")]
    assert passes.count == 1
    assert _findings(folder, jobs=1, cache_dir=cache) == [("main.py", 13, "GL201")]
    assert passes.count == 1  # every file cached, the index the result of a pass over them
    predict = folder / "predict.py"
    original = predict.read_text()
    predict.write_text(original.replace("@torch.inference_mode()", "@torch.no_grad()"))
    assert _findings(folder, jobs=1, cache_dir=cache) == []
    assert passes.count == 2
    predict.write_text(original)
    assert _findings(folder, jobs=1, cache_dir=cache) == [("main.py", 13, "GL201")]
    assert _findings(folder, jobs=1, cache_dir=cache) == [("main.py", 13, "GL201")]
    assert passes.count == 3


def test_a_run_over_other_files_in_between_brings_the_second_pass_back(tmp_path, monkeypatch):
    """main.py checked alone has no summary of predict.py to read, and its entry says so:
    the next run over both, every file cached, must follow the import again."""
    folder = _copy_project(tmp_path)
    cache = str(tmp_path / "cache")
    assert _findings(folder, jobs=1, cache_dir=cache) == [("main.py", 13, "GL201")]
    main = str(folder / "main.py")
    alone = run_files([main], SETTINGS, jobs=1, cache_dir=cache)
    assert [finding.code for report in alone.reports for finding in report.findings] == []
    passes = _CountingPasses(monkeypatch)
    assert _findings(folder, jobs=1, cache_dir=cache) == [("main.py", 13, "GL201")]
    assert passes.count == 1


def test_the_second_pass_mark_is_dropped_when_another_run_wrote_the_index(tmp_path):
    from gradlint.result_cache import ResultCache

    directory = str(tmp_path / "cache")
    first = ResultCache(directory, SETTINGS)
    first.store(b"k" * 16, b"d" * 16, ())
    first.note_second_pass(b"f" * 16)
    assert first.save() is None
    assert ResultCache(directory, SETTINGS).second_pass_fingerprint() == b"f" * 16
    ours, theirs = ResultCache(directory, SETTINGS), ResultCache(directory, SETTINGS)
    theirs.store(b"m" * 16, b"e" * 16, ())
    assert theirs.save() is None  # (it leaves no mark: it noted no pass)
    ours.store(b"k" * 16, b"x" * 16, ())
    ours.note_second_pass(b"g" * 16)
    assert ours.save() is None
    merged = ResultCache(directory, SETTINGS)
    assert merged.second_pass_fingerprint() is None  # their entry may not be what our pass read
    assert {b"k" * 16, b"m" * 16} <= set(merged.entries)


def test_cached_facts_of_another_shape_make_their_file_checked_again_when_a_second_pass_reads_them(
        tmp_path, monkeypatch):
    from gradlint import result_cache

    folder = _copy_project(tmp_path)
    cache_dir = str(tmp_path / "cache")
    assert _findings(folder, jobs=1, cache_dir=cache_dir) == [("main.py", 13, "GL201")]
    cache = result_cache.ResultCache(cache_dir, SETTINGS)
    key = result_cache.path_key(str(folder / "main.py"))
    cache.updates[key] = cache.entries[key]
    cache.fact_updates[key] = ("not", "facts")  # written by no version of gradlint
    assert cache.save() is None
    (folder / "unrelated.py").write_text("import torch\n")  # a file to lint: the second pass runs
    counting = _Counting(monkeypatch)
    assert _findings(folder, jobs=1, cache_dir=cache_dir) == [("main.py", 13, "GL201")]
    assert counting.paths.count("main.py") >= 1
    facts = result_cache.ResultCache(cache_dir, SETTINGS).facts()[key]
    assert result_cache.ProjectFacts.from_data(facts)  # its facts rewritten, and they decode


def test_a_walk_that_takes_the_imported_module_from_the_cache_still_follows_the_import(tmp_path, monkeypatch):
    """A warm walk takes unchanged clean files without looking each up (returns.py here):
    the second pass of a changed importer must still find the module, read its facts, and
    summarize it again for a function it did not ask for before."""
    from gradlint import result_cache

    monkeypatch.setattr(result_cache, "SETTLED_NS", 0)  # entries with stamps, as settled files have
    folder = _copy_project(tmp_path, ROLLOUT)
    main = folder / "main.py"
    original = main.read_text()
    main.write_text(original.replace("return standardize_(rewards)", "return discounted(rewards)"))
    cache = str(tmp_path / "cache")
    assert _findings(folder, jobs=1, cache_dir=cache) == []
    main.write_text(original)
    expected = _findings(folder, jobs=1, cache_dir=None)
    looked_up = []
    cached = runner._Job.cached
    monkeypatch.setattr(runner._Job, "cached", lambda job, path: looked_up.append(os.path.basename(path))
                        or cached(job, path))
    outcome = run_files(iter(sorted(str(path) for path in folder.rglob("*.py"))), SETTINGS, jobs=1, cache_dir=cache)
    assert sorted((os.path.basename(report.path), finding.start.line, finding.code) for report in outcome.reports
                  for finding in report.findings) == expected != []
    assert looked_up == ["main.py"]  # returns.py was taken as it came
    # main.py checked alone has no summary to read; a walk over both then reads returns.py's
    # facts from the cache (it is taken as it comes) and checks only main.py again
    run_files([str(main)], SETTINGS, jobs=1, cache_dir=cache)
    counting = _Counting(monkeypatch)
    outcome = run_files(iter(sorted(str(path) for path in folder.rglob("*.py"))), SETTINGS, jobs=1, cache_dir=cache)
    assert sorted((os.path.basename(report.path), finding.start.line, finding.code) for report in outcome.reports
                  for finding in report.findings) == expected
    assert counting.paths == ["main.py"]


PATH_SHAPES = ["rotary.py", "pkg/rotary.py", "/abs/pkg/__init__.py", "pkg//__init__.py", "a//b//__init__.py",
               "/__init__.py", "__init__.py", "..py", "pkg/...py", "pkg/.hidden.py", "pkg/x.pyi", "pkg/notes.txt",
               "pkg/", "./model.py", "../up/__init__.py", "pkg/__init__.py/inner.py"]


def test_module_stems_read_as_os_path_reads_them():
    """The fast reading of a `.py` path's module stem (no `os.path` calls) gives what the
    general reading gives, for every shape of path."""
    from gradlint.python import project

    def by_os_path(path):
        folder, name = os.path.split(path)
        stem = os.path.splitext(name)[0]
        return os.path.basename(folder) if stem == "__init__" else stem

    assert [project._module_file_stem(path) for path in PATH_SHAPES] == [by_os_path(path) for path in PATH_SHAPES]


def test_absolute_paths_of_a_run_of_paths_are_each_paths_own(tmp_path, monkeypatch):
    """`_Job.absolute_all` (one prefix per run of paths in a folder) equals `abspath` of each."""
    monkeypatch.chdir(tmp_path)
    job = runner._Job(SETTINGS, verbose=False, mode="check", write=False, cache_dir=None)
    paths = [path for path in PATH_SHAPES if not path.endswith("/")] + ["pkg/a.py", "pkg/b.py", "other/c.py", "pkg/d.py"]
    assert job.absolute_all(paths) == [os.path.abspath(path) for path in paths]


def test_an_exported_helper_its_own_module_left_unwalked_is_summarized_when_an_importer_imports_it(
        tmp_path, monkeypatch):
    """returns.py enters inference mode itself, so its flow runs over all of it, and defers its
    helpers that only their parameters can reach (`flow.deferred`): its exports name them
    unsummarized; the second pass checks it again with those main.py imports asked for, and
    the findings are those of the flow that walks every scope, cold, warm, and in
    the language server's check of one file."""
    from gradlint.imported import check_with_imports
    from gradlint.python.flow import untracked
    from gradlint.python.frontend import PYTHON

    folder = _copy_project(tmp_path, ROLLOUT)
    returns = folder / "returns.py"
    returns.write_text(returns.read_text() + "\n\ndef evaluate(policy):\n    with torch.inference_mode():\n"
                       "        return policy(torch.randn(4)).sum()\n")
    first = Linter(SETTINGS).check_path(str(returns)).exports
    assert [function[0] for function in first[0]] == ["evaluate"]  # (what it returns is made under the mode)
    assert first[2] is None and first[4] == ("discounted", "standardize_")
    asked = ProjectIndex({}, None, {str(returns): frozenset({"standardize_"})})
    again = Linter(SETTINGS).check_path(str(returns), project=asked).exports
    assert sorted(function[0] for function in again[0]) == ["evaluate", "standardize_"] and again[4] == ("discounted",)
    expected = [("main.py", 19, "GL201")]
    cache = str(tmp_path / "cache")
    assert _findings(folder, jobs=1, cache_dir=None) == expected
    assert _findings(folder, jobs=1, cache_dir=cache) == expected
    assert _findings(folder, jobs=1, cache_dir=cache) == expected
    main = folder / "main.py"
    found = check_with_imports(Linter(SETTINGS), str(main), main.read_text(), PYTHON)
    assert [(finding.start.line, finding.code) for finding in found] == [(19, "GL201")]
    monkeypatch.setattr(untracked.UntrackedSources, "sources", lambda self, function, klass: untracked.SOMETHING)
    assert Linter(SETTINGS).check_path(str(returns)).exports[4] == ()
    assert _findings(folder, jobs=1, cache_dir=None) == expected
