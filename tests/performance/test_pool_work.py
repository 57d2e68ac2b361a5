"""The work a pool run does beside checking files: how many batches go out, what each
worker imports for itself, how often a file's settings are hashed."""
from __future__ import annotations

import subprocess
import sys
import textwrap

from gradlint import runner
from gradlint.runner import run_files
from gradlint.settings import Settings
from gradlint.worker_pool import FILES_PER_TASK, MAX_FILES_PER_TASK, WorkerPool

from tests.performance.test_runner import make_tree, settings_for, summary


def test_batches_grow_from_the_first_size_to_the_largest(tmp_path, monkeypatch):
    sizes = []
    submit = WorkerPool._submit

    def recording(pool):
        sizes.append(len(pool._batch))
        submit(pool)

    monkeypatch.setattr(WorkerPool, "_submit", recording)
    monkeypatch.setattr(runner, "SERIAL_FIRST_MAX_FILES", 20)  # the pool starts at the 20th file
    paths = make_tree(tmp_path, 300)
    pooled = run_files(paths, settings_for(tmp_path), jobs=2, cache_dir=None)
    assert (FILES_PER_TASK, MAX_FILES_PER_TASK) == (16, 64)
    assert sizes == [16, 32, 64, 64, 64, 60]  # 300 files in 6 batches, not 19
    assert summary(pooled) == summary(run_files(paths, settings_for(tmp_path), jobs=1, cache_dir=None))


PREPARED = textwrap.dedent("""
    import sys
    from gradlint import commands, runner
    from gradlint.settings import Settings, resolve_selection

    commands.start()  # as a run: libcst deferred
    job = runner._Job(Settings(enabled=resolve_selection(None, [], [])), False, "check", False, None)
    job.prepare(sys.argv[1:])
    before = set(sys.modules)
    findings = [len(job.lint(path)[0].findings) for path in sys.argv[1:]]
    print(findings, sorted(name for name in set(sys.modules) - before if name.startswith("gradlint")))
""")
# GL201 (the flow, across a call) and GL101 (the C++ model): one finding each.
ENTERS_AND_MUTATES = textwrap.dedent("""
    import torch


    def predict(model, x):
        with torch.inference_mode():
            y = model(x)
        return y


    def train(model, x):
        y = predict(model, x)
        y.add_(1)
        return y
""")
LEGACY_CPP = "torch::Tensor run(const torch::Tensor& x) {\n  at::AutoNonVariableTypeMode guard;\n  return x;\n}\n"


def test_a_prepared_job_imports_nothing_of_gradlint_to_check_files(tmp_path):
    """What a pool's workers would import each for itself, the main process imported once
    before forking them (`WorkerPool`: `job.prepare`)."""
    (tmp_path / "train.py").write_text(ENTERS_AND_MUTATES)
    (tmp_path / "kernel.cpp").write_text(LEGACY_CPP)
    done = subprocess.run([sys.executable, "-c", PREPARED, str(tmp_path / "train.py"), str(tmp_path / "kernel.cpp")],
                          capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[1, 1] []"


def test_a_run_hashes_its_settings_once_not_per_file(tmp_path, monkeypatch):
    hashed = []
    settings = settings_for(tmp_path)
    monkeypatch.setattr(Settings, "__hash__", lambda self: hashed.append(1) or 0)
    paths = make_tree(tmp_path, 30)
    outcome = run_files(paths, settings, jobs=1, cache_dir=None)
    assert outcome.file_count == 30
    assert len(hashed) <= 2  # the linter's and its selection's first lookups, not one per file



def test_a_file_no_rule_reads_is_checked_without_running_an_import_statement(tmp_path):
    """Every checked Python file's from-imports are read (`Language.imports`): no import
    statement runs for it (each costs microseconds: the module's `__path__` is looked up,
    and the AttributeError made and dropped), nor anywhere else for a file no rule reads."""
    import builtins

    paths = []
    for index in range(10):
        path = tmp_path / f"model_{index}.py"
        path.write_text(f"from .layers import Block{index}, Head as head\n\n\ndef build():\n    return Block{index}()\n")
        paths.append(str(path))
    job = runner._Job(settings_for(tmp_path), False, "check", False, None)
    job.prepare(paths)
    job.lint(paths[0])  # what a first file imports, once
    statements = []
    real_import = builtins.__import__

    def recording(name, *args, **kwargs):
        statements.append((sys._getframe(1).f_code.co_filename, name))
        return real_import(name, *args, **kwargs)

    builtins.__import__ = recording
    try:
        facts = [job.lint(path)[2][0] for path in paths]
    finally:
        builtins.__import__ = real_import
    assert [fact.imports for fact in facts] == [((".layers", (f"Block{index}", "Head as head")),) for index in range(10)]
    assert statements == []
