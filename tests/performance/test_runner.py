"""The runner's cache and pool change how fast a run is, never what it reports."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest
from hypothesis import given, settings as hypothesis_settings, strategies as st

from gradlint import result_cache, runner
from gradlint.engine import Linter
from gradlint.result_cache import ResultCache, path_key
from gradlint.runner import run_files
from gradlint.settings import Settings, resolve_selection

MISSING_PARENS = "import torch\n\n\ndef evaluate(model, x):\n    with torch.no_grad:\n        return model(x)\n"
LEGACY_CPP = "torch::Tensor run(const torch::Tensor& x) {\n  at::AutoNonVariableTypeMode guard;\n  return x;\n}\n"
CLEAN = "import torch\n\n\ndef evaluate(model, x):\n    with torch.no_grad():\n        return model(x)\n"


def settings_for(root, select=None, unsafe_fixes=False) -> Settings:
    return Settings(enabled=resolve_selection(select, [], []), root=str(root), unsafe_fixes=unsafe_fixes)


def make_tree(root, count: int):
    paths = []
    for index in range(count):
        name, text = [("bad_{}.py", MISSING_PARENS), ("kernel_{}.cpp", LEGACY_CPP), ("ok_{}.py", CLEAN)][index % 3]
        path = root / name.format(index)
        path.write_text(text)
        paths.append(str(path))
    return paths


def summary(outcome):
    return [(report.path, [(f.code, f.start, f.end, f.message, f.fix) for f in report.findings], report.error)
            for report in outcome.reports]


@pytest.fixture
def count_linted(monkeypatch):
    """How many files the linter itself checked (cache misses)."""
    calls = []
    original = Linter.check_path

    def counting(self, path, raw=None, project=None):
        calls.append(path)
        return original(self, path, raw, project)

    monkeypatch.setattr(Linter, "check_path", counting)
    return calls


def test_warm_run_reports_the_same_findings_without_linting(tmp_path, count_linted):
    paths = make_tree(tmp_path, 6)
    cache = str(tmp_path / "cache")
    cold = run_files(paths, settings_for(tmp_path), jobs=1, cache_dir=cache)
    assert len(count_linted) == 6
    warm = run_files(paths, settings_for(tmp_path), jobs=1, cache_dir=cache)
    assert len(count_linted) == 6  # nothing linted again
    assert summary(warm) == summary(cold)
    assert [r.path for r in warm.reports] == [p for p in paths if "ok_" not in p]
    assert warm.file_count == 6


def test_a_changed_file_is_checked_again(tmp_path, count_linted):
    paths = make_tree(tmp_path, 3)
    cache = str(tmp_path / "cache")
    run_files(paths, settings_for(tmp_path), jobs=1, cache_dir=cache)
    with open(paths[0], "w") as handle:
        handle.write(CLEAN)
    outcome = run_files(paths, settings_for(tmp_path), jobs=1, cache_dir=cache)
    assert count_linted[3:] == [paths[0]]
    assert [report.path for report in outcome.reports] == [paths[1]]


def test_configuration_and_version_are_part_of_the_key(tmp_path, count_linted, monkeypatch):
    paths = make_tree(tmp_path, 3)
    cache = str(tmp_path / "cache")
    run_files(paths, settings_for(tmp_path), jobs=1, cache_dir=cache)
    only_cpp = run_files(paths, settings_for(tmp_path, select=["GL101"]), jobs=1, cache_dir=cache)
    assert len(count_linted) == 6
    assert [f.code for r in only_cpp.reports for f in r.findings] == ["GL101"]
    run_files(paths, settings_for(tmp_path, unsafe_fixes=True), jobs=1, cache_dir=cache)
    assert len(count_linted) == 9
    monkeypatch.setattr(result_cache, "__version__", "999.0")
    run_files(paths, settings_for(tmp_path), jobs=1, cache_dir=cache)
    assert len(count_linted) == 12


@pytest.mark.parametrize("damage", [
    lambda data: data[: len(data) // 2],  # truncated by a crash
    lambda data: data[:60] + bytes([data[60] ^ 1]) + data[61:],  # one flipped bit in the entries
    lambda data: b"not a cache at all",
    lambda data: b"",
])
def test_a_damaged_cache_is_ignored_and_rewritten(tmp_path, count_linted, damage):
    paths = make_tree(tmp_path, 3)
    cache = str(tmp_path / "cache")
    cold = run_files(paths, settings_for(tmp_path), jobs=1, cache_dir=cache)
    [index] = [name for name in os.listdir(cache) if name.endswith(".cache")]
    with open(os.path.join(cache, index), "rb") as handle:
        data = handle.read()
    with open(os.path.join(cache, index), "wb") as handle:
        handle.write(damage(data))
    again = run_files(paths, settings_for(tmp_path), jobs=1, cache_dir=cache)
    assert summary(again) == summary(cold)
    assert len(count_linted) == 6
    run_files(paths, settings_for(tmp_path), jobs=1, cache_dir=cache)
    assert len(count_linted) == 6  # the rewritten index is whole again


def test_damaged_project_facts_are_read_only_by_a_second_pass_which_lints_their_files_again(tmp_path, count_linted,
                                                                                           monkeypatch):
    paths = make_tree(tmp_path, 3)
    with open(paths[2], "w") as handle:  # ok_2.py: a from-import is a project fact
        handle.write("from helpers import scale\n" + CLEAN)
    cache = str(tmp_path / "cache")
    cold = run_files(paths, settings_for(tmp_path), jobs=1, cache_dir=cache)
    [index] = [name for name in os.listdir(cache) if name.endswith(".cache")]
    path = os.path.join(cache, index)
    with open(path, "rb") as handle:
        data = handle.read()
    with open(path, "wb") as handle:
        handle.write(data[:-1] + bytes([data[-1] ^ 1]))  # the facts are the index's last section
    decoded = []
    original = result_cache.ProjectFacts.from_data
    monkeypatch.setattr(result_cache.ProjectFacts, "from_data", lambda data: decoded.append(data) or original(data))
    assert summary(run_files(paths, settings_for(tmp_path), jobs=1, cache_dir=cache)) == summary(cold)
    assert len(count_linted) == 3 and decoded == []  # the second pass is skipped: no facts read
    with open(paths[0], "a") as handle:
        handle.write("# changed\n")
    again = run_files(paths, settings_for(tmp_path), jobs=1, cache_dir=cache)
    assert summary(again) == summary(cold)
    assert count_linted[3:] == [paths[0], paths[2]]  # the changed file, and the one whose facts were lost
    run_files(paths, settings_for(tmp_path), jobs=1, cache_dir=cache)
    assert len(count_linted) == 5


def test_two_runs_sharing_a_cache_keep_both_entries_and_leave_no_temporaries(tmp_path):
    paths = make_tree(tmp_path, 2)
    cache = str(tmp_path / "cache")
    settings = settings_for(tmp_path)
    first, second = ResultCache(cache, settings), ResultCache(cache, settings)
    first.store(path_key(paths[0]), b"a" * 16, ())
    second.store(path_key(paths[1]), b"b" * 16, ())
    assert first.save() is None and second.save() is None
    merged = ResultCache(cache, settings).entries
    assert set(merged) == {path_key(paths[0]), path_key(paths[1])}
    assert sorted(os.listdir(cache)) == [".gitignore", os.path.basename(first.path)]


def test_only_the_newest_indexes_are_kept(tmp_path, monkeypatch):
    paths = make_tree(tmp_path, 3)
    cache = str(tmp_path / "cache")
    for version in range(result_cache.MAX_INDEXES + 3):
        monkeypatch.setattr(result_cache, "__version__", f"0.{version}")
        run_files(paths, settings_for(tmp_path), jobs=1, cache_dir=cache)
    indexes = [name for name in os.listdir(cache) if name.endswith(".cache")]
    assert len(indexes) == result_cache.MAX_INDEXES
    assert os.path.basename(ResultCache(cache, settings_for(tmp_path)).path) in indexes  # the newest


def test_an_unwritable_cache_is_a_warning_not_a_failure(tmp_path):
    paths = make_tree(tmp_path, 3)
    blocker = tmp_path / "blocker"
    blocker.write_text("a file where the cache folder should be")
    outcome = run_files(paths, settings_for(tmp_path), jobs=1, cache_dir=str(blocker / "cache"))
    assert outcome.cache_error is not None and "cannot write the cache" in outcome.cache_error
    assert len(outcome.reports) == 2


def test_the_pool_gives_the_serial_results_in_the_same_order(tmp_path, monkeypatch):
    monkeypatch.setattr(runner, "SERIAL_SECONDS", 0.0)  # the pool takes every file
    paths = make_tree(tmp_path, runner.POOL_MIN_FILES + 25)
    serial = run_files(paths, settings_for(tmp_path), jobs=1, cache_dir=None)
    pooled = run_files(paths, settings_for(tmp_path), jobs=2, cache_dir=str(tmp_path / "cache"))
    assert summary(pooled) == summary(serial)
    assert len(pooled.reports) == 2 * len(paths) // 3 + (len(paths) % 3 > 0)
    warm = run_files(paths, settings_for(tmp_path), jobs=2, cache_dir=str(tmp_path / "cache"))
    assert summary(warm) == summary(serial)


@pytest.mark.parametrize("lazily", [False, True])  # a list; a walk's iterator (clean hits taken as they come)
@pytest.mark.parametrize("serial_seconds", [0.0, 0.01])  # all in the pool; some files before it
def test_cached_and_linted_files_come_back_in_input_order(tmp_path, monkeypatch, serial_seconds, lazily):
    monkeypatch.setattr(runner, "SERIAL_SECONDS", serial_seconds)
    monkeypatch.setattr(result_cache, "SETTLED_NS", 0)  # entries with stamps, as settled files have
    paths = make_tree(tmp_path, 3 * runner.POOL_MIN_FILES)
    cache = str(tmp_path / "cache")
    run_files(paths, settings_for(tmp_path), jobs=2, cache_dir=cache)
    for path in paths[::2]:  # every other file changes: half hits, half misses, interleaved
        with open(path, "a") as handle:
            handle.write("# edited\n")
    mixed = run_files(iter(paths) if lazily else paths, settings_for(tmp_path), jobs=2, cache_dir=cache)
    assert summary(mixed) == summary(run_files(paths, settings_for(tmp_path), jobs=1, cache_dir=None))
    assert mixed.file_count == len(paths)


def test_a_warm_walk_takes_unchanged_clean_files_without_looking_each_up(tmp_path, monkeypatch, count_linted):
    monkeypatch.setattr(result_cache, "SETTLED_NS", 0)  # entries with stamps, as settled files have
    paths = make_tree(tmp_path, 12)
    cache = str(tmp_path / "cache")
    cold = run_files(paths, settings_for(tmp_path), jobs=1, cache_dir=cache)
    looked_up, second_passes = [], []
    original, follow = runner._Job.cached, runner._follow_imports
    monkeypatch.setattr(runner._Job, "cached", lambda job, path: looked_up.append(path) or original(job, path))
    monkeypatch.setattr(runner, "_follow_imports", lambda *args: second_passes.append(args) or follow(*args))
    warm = run_files(iter(paths), settings_for(tmp_path), jobs=1, cache_dir=cache)
    assert summary(warm) == summary(cold) and warm.file_count == 12
    assert len(count_linted) == 12  # the cold run's
    clean = [path for path in paths if os.path.basename(path).startswith("ok_")]
    assert sorted(looked_up) == sorted(set(paths) - set(clean))  # those with findings: their entries decoded
    assert second_passes == []  # the mark the run over a list left holds for the walk over the same files
    looked_up.clear()
    with open(clean[0], "a") as handle:
        handle.write("# edited\n")
    again = run_files(iter(paths), settings_for(tmp_path), jobs=1, cache_dir=cache)
    assert summary(again) == summary(cold)
    assert clean[0] in looked_up and count_linted[12:] == [clean[0]]
    assert summary(run_files(paths, settings_for(tmp_path), jobs=1, cache_dir=cache)) == summary(cold)
    assert len(count_linted) == 13


def test_no_pool_for_a_handful_of_files(tmp_path, monkeypatch):
    def no_pool(*args, **kwargs):
        raise AssertionError("a pool was started for a handful of files")

    import multiprocessing

    monkeypatch.setattr(multiprocessing, "get_context", no_pool)
    paths = make_tree(tmp_path, 5)
    assert len(run_files(paths, settings_for(tmp_path), jobs=8, cache_dir=None).reports) == 4


@pytest.mark.parametrize("lazily", [True, False])
def test_a_pool_started_during_the_walk_gives_the_serial_results_in_order(tmp_path, monkeypatch, lazily):
    monkeypatch.setattr(runner, "SERIAL_FIRST_MAX_FILES", 20)  # the pool starts at the 20th file
    paths = make_tree(tmp_path, 3 * runner.POOL_MIN_FILES)
    cache = str(tmp_path / "cache")
    serial = run_files(paths, settings_for(tmp_path), jobs=1, cache_dir=None)
    streamed = run_files(iter(paths) if lazily else paths, settings_for(tmp_path), jobs=2, cache_dir=cache)
    assert summary(streamed) == summary(serial)
    assert streamed.file_count == len(paths)
    warm = run_files(iter(paths), settings_for(tmp_path), jobs=2, cache_dir=cache)
    assert summary(warm) == summary(serial)


def test_no_pool_when_the_files_are_done_before_one_would_start(tmp_path, monkeypatch):
    def no_pool(*args, **kwargs):
        raise AssertionError("a pool was started for work that was already done")

    import multiprocessing

    monkeypatch.setattr(multiprocessing, "get_context", no_pool)
    monkeypatch.setattr(runner, "SERIAL_SECONDS", 60.0)
    paths = make_tree(tmp_path, 2 * runner.POOL_MIN_FILES)
    outcome = run_files(paths, settings_for(tmp_path), jobs=2, cache_dir=None)
    assert outcome.file_count == len(paths)


def test_fix_applies_fixes_that_a_check_cached_then_caches_the_fixed_file(tmp_path, count_linted):
    paths = make_tree(tmp_path, 3)
    cache = str(tmp_path / "cache")
    run_files(paths, settings_for(tmp_path), jobs=1, cache_dir=cache)
    fixed = run_files(paths, settings_for(tmp_path), mode="fix", jobs=1, cache_dir=cache)
    assert [len(r.applied_fixes) for r in fixed.reports if r.path == paths[0]] == [1]
    assert "with torch.no_grad():" in open(paths[0]).read()
    linted = len(count_linted)
    after = run_files(paths, settings_for(tmp_path), jobs=1, cache_dir=cache)
    assert len(count_linted) == linted  # the fixed file's result was cached by the fix
    assert [r.path for r in after.reports] == [paths[1]]


def test_unreadable_file_is_reported_and_not_cached(tmp_path):
    paths = make_tree(tmp_path, 1)
    missing = str(tmp_path / "gone.py")
    outcome = run_files([missing] + paths, settings_for(tmp_path), jobs=1, cache_dir=str(tmp_path / "c"))
    assert outcome.reports[0].error.startswith(f"{missing}: cannot read")
    assert path_key(os.path.abspath(missing)) not in ResultCache(str(tmp_path / "c"), settings_for(tmp_path)).entries


WARM_RUN = textwrap.dedent("""
    import sys
    from gradlint.cli import main
    try:
        main(["check", "--quiet", "--cache-dir", sys.argv[2], sys.argv[1]])
    except SystemExit as exit:
        code = exit.code
    print(code, "libcst._nodes.module" in sys.modules)
""")


# GL401 renders its fix with libcst (GL402's bad files need only CPython's `ast`).
GUARD_AS_STATEMENT = "import torch\n\n\ndef predict(model, x):\n    torch.inference_mode()\n    return model(x)\n"


def test_a_warm_run_never_loads_libcst(tmp_path):
    make_tree(tmp_path, 6)
    (tmp_path / "statement.py").write_text(GUARD_AS_STATEMENT)
    cache = str(tmp_path / "cache")

    def run():
        done = subprocess.run([sys.executable, "-c", WARM_RUN, str(tmp_path), cache],
                              capture_output=True, text=True, check=True)
        return done.stdout.splitlines()[-1].split()

    assert run() == ["1", "True"]  # cold: the bad files are parsed
    assert run() == ["1", "False"]


def test_a_warm_run_skips_reading_settled_files_but_never_trusts_a_moved_stamp(tmp_path, monkeypatch,
                                                                              count_linted):
    paths = make_tree(tmp_path, 3)
    settled = 1_600_000_000_000_000_000  # long ago: size and time then prove the content
    for path in paths:
        os.utime(path, ns=(settled, settled))
    # The change time (set by that utime) cannot be put back: count it as settled at once,
    # as it is two seconds later.
    monkeypatch.setattr(result_cache, "SETTLED_NS", 0)
    cache = str(tmp_path / "cache")
    run_files(paths, settings_for(tmp_path), jobs=1, cache_dir=cache)
    reads = []
    original_read = runner.read_bytes
    monkeypatch.setattr(runner, "read_bytes", lambda path: reads.append(path) or original_read(path))
    warm = run_files(paths, settings_for(tmp_path), jobs=1, cache_dir=cache)
    assert reads == [] and len(count_linted) == 3
    assert [f.code for report in warm.reports for f in report.findings] == ["GL402", "GL101"]
    # Same size, new content, the old time put back: only a time the file moved away from counts.
    fixed = MISSING_PARENS.replace("model(x)", "model(y)")
    (tmp_path / "bad_0.py").write_text(fixed)
    assert len(fixed) == len(MISSING_PARENS)
    os.utime(paths[0], ns=(settled + 1, settled + 1))
    run_files(paths, settings_for(tmp_path), jobs=1, cache_dir=cache)
    assert set(reads) == {paths[0]} and count_linted[-1] == paths[0]


def test_a_file_changed_just_now_is_hashed_on_the_next_run(tmp_path, monkeypatch):
    paths = make_tree(tmp_path, 1)  # written just now: its time may not have moved yet
    cache = str(tmp_path / "cache")
    run_files(paths, settings_for(tmp_path), jobs=1, cache_dir=cache)
    reads = []
    original_read = runner.read_bytes
    monkeypatch.setattr(runner, "read_bytes", lambda path: reads.append(path) or original_read(path))
    run_files(paths, settings_for(tmp_path), jobs=1, cache_dir=cache)
    assert reads == paths


@hypothesis_settings(max_examples=500, deadline=None)
@given(st.text(alphabet="a/.", max_size=12))
def test_the_fast_path_split_is_posixpath_split(path):
    import posixpath

    from gradlint.discovery import _split_posix

    assert _split_posix(path) == posixpath.split(path)


@hypothesis_settings(max_examples=300, deadline=None)
@given(st.text(alphabet="ab/.", max_size=12).filter(bool))
def test_the_absolute_path_worked_out_per_folder_is_abspath(path):
    job = runner._Job(settings_for("."), False, "check", True, None)
    assert job.absolute(path) == os.path.abspath(path)
    assert job.absolute(path) == os.path.abspath(path)  # the folder's, as kept


FACTS = result_cache.ProjectFacts((("pkg.predict", ("infer", "load as loaded")),), None,
                                  (("/work/pkg/predict.py", b"\x01" * 16),), True)


def test_project_facts_come_back_from_the_index_as_they_were_stored():
    import marshal

    assert result_cache.ProjectFacts.from_data(marshal.loads(marshal.dumps(FACTS.to_data()))) == FACTS


@pytest.mark.parametrize("imports, dependencies", [
    ([("pkg.predict", ("infer",))], ()),  # a list where a tuple was written
    ((("pkg.predict", "infer"),), ()),  # the names as one string
    ((("pkg.predict", ("infer", 3)),), ()),
    ((("pkg.predict", ("infer",), "extra"),), ()),
    ((), (("/work/pkg/predict.py", "not bytes"),)),
    ((), (("/work/pkg/predict.py",),)),
])
def test_project_facts_of_another_shape_are_refused(imports, dependencies):
    with pytest.raises(ValueError):
        result_cache.ProjectFacts.from_data((imports, None, dependencies, False))
