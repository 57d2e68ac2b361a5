"""A fix is all or nothing: killed at any moment, racing another run, or racing an edit,
every file holds exactly its old bytes or exactly its new ones."""
from __future__ import annotations

import os
import random
import signal
import time

import pytest

from reliability_support import GUARDED, GUARDED_FIXED, TEST_RULE_DOCS, gradlint_process, install_rules
from gradlint.python.frontend import PYTHON
from gradlint.source import ConcurrentModification, write_atomic

# Enough files for the process pool (48 and more) to be used, each with three fixes.
TREE_SIZE = 50


def _module(index: int) -> bytes:
    body = "".join(
        f"\n\ndef step_{index}_{n}(model, batch):\n"
        f"    with torch.{guard}:\n"
        f"        return model(batch) * {n}\n"
        for n, guard in enumerate(["no_grad", "enable_grad", "inference_mode"])
    )
    padding = "".join(f"CONSTANT_{index}_{n} = {n} * {index}  # padding\n" for n in range(10))
    return f"import torch\n{padding}{body}".encode()


def _fixed(data: bytes) -> bytes:
    for guard in (b"no_grad", b"enable_grad", b"inference_mode"):
        data = data.replace(b"torch." + guard + b":", b"torch." + guard + b"():")
    return data


def _write_tree(root, contents):
    for index, data in contents.items():
        (root / f"module_{index:03d}.py").write_bytes(data)


def _read_tree(root):
    return {int(path.stem.split("_")[1]): path.read_bytes() for path in root.glob("module_*.py")}


def _fixed_count(root, new) -> int:
    """How many files hold their fixed bytes now (each read whole: old, new, or torn)."""
    return sum(path.read_bytes() == new[index] for index, path in
               ((int(path.stem.split("_")[1]), path) for path in root.glob("module_*.py")))


def test_killed_fix_leaves_every_file_old_or_new(tmp_path):
    """Each run is killed once a chosen number of files have been replaced, so the kill
    lands inside the fixing whatever the machine's speed: meanwhile the test holds the
    lock a run takes on a file it replaces (`source._exclusive_lock`) of the last file, so
    the run cannot finish before the kill (it would wait there, that file's temporary
    written), and the others are still being written as the kill comes."""
    import fcntl

    old = {index: _module(index) for index in range(TREE_SIZE)}
    new = {index: _fixed(data) for index, data in old.items()}
    root = tmp_path / "tree"
    root.mkdir()

    _write_tree(root, old)
    process = gradlint_process(root, ["fix", "--no-cache", "--jobs", "1", "."])
    process.communicate(timeout=120)
    assert process.returncode == 0
    assert _read_tree(root) == new, "an uninterrupted run fixes everything"

    rng = random.Random(8)
    runs = 12
    for run in range(runs):
        _write_tree(root, old)
        held = TREE_SIZE - 1  # the last one a run replaces (files go in name order)
        # after this many files are replaced (every file but the held one is, in time)
        kill_after = rng.randint(1, TREE_SIZE - 1)
        lock = os.open(root / f"module_{held:03d}.py", os.O_RDONLY)
        try:
            fcntl.flock(lock, fcntl.LOCK_EX)
            jobs = "1" if run % 2 == 0 else "2"
            process = gradlint_process(root, ["fix", "--no-cache", "--jobs", jobs, "."], start_new_session=True)
            give_up = time.monotonic() + 600  # only a run stuck elsewhere than the held file reaches it
            while _fixed_count(root, new) < kill_after:
                assert process.poll() is None, process.communicate()
                assert time.monotonic() < give_up, "the run stopped writing before the held file"
                time.sleep(0.002)
            os.killpg(process.pid, signal.SIGKILL)  # the pool's workers too
            process.communicate()
        finally:
            os.close(lock)
        after = _read_tree(root)
        assert set(after) == set(old)
        for index, data in after.items():
            assert data in (old[index], new[index]), f"run {run}: module_{index:03d}.py is torn"
        assert after[held] == old[held]
        assert sum(after[index] == new[index] for index in after) >= kill_after
        for leftover in root.iterdir():  # a kill may leave a temporary file, never a source
            assert leftover.name.startswith(("module_", ".gradlint-")), leftover.name


def test_two_concurrent_fix_runs_leave_every_file_valid_and_fixed(tmp_path):
    old = {index: _module(index) for index in range(TREE_SIZE)}
    root = tmp_path / "tree"
    root.mkdir()
    _write_tree(root, old)
    first = gradlint_process(root, ["fix", "."])
    second = gradlint_process(root, ["fix", "--jobs", "1", "."])
    outputs = [process.communicate(timeout=180) for process in (first, second)]
    for process, (stdout, stderr) in zip((first, second), outputs):
        assert b"Traceback" not in stderr
        assert process.returncode == 0, stderr.decode()
    after = _read_tree(root)
    for index, data in after.items():
        assert data == _fixed(old[index])
        assert PYTHON.validate(data.decode()) is None


def test_a_file_changed_between_reading_and_writing_is_not_overwritten(tmp_path, cli, monkeypatch):
    import gradlint.engine

    (tmp_path / "good.py").write_bytes(GUARDED)
    (tmp_path / "edited.py").write_bytes(GUARDED)
    users_version = GUARDED + b"# typed by the user meanwhile\n"
    real_write = gradlint.engine.write_atomic

    def write_after_an_edit(path, data, expected_old=None):
        if os.path.basename(path) == "edited.py":
            with open(path, "wb") as handle:
                handle.write(users_version)
        return real_write(path, data, expected_old=expected_old)

    monkeypatch.setattr(gradlint.engine, "write_atomic", write_after_an_edit)
    run = cli(tmp_path, "fix", "--no-cache", ".")
    run.assert_no_traceback()
    assert (tmp_path / "edited.py").read_bytes() == users_version
    assert (tmp_path / "good.py").read_bytes() == GUARDED_FIXED
    assert "gradlint: error: edited.py: changed on disk since it was read; not overwritten" in run.stderr
    assert "edited.py:5:10: GL402" in run.stdout  # still reported, since not fixed
    assert run.exit_code == 2


def test_the_change_check_runs_after_the_slow_part_of_the_write(tmp_path, monkeypatch):
    """An edit made while the temporary file is being synced is still noticed."""
    import gradlint.source

    path = tmp_path / "m.py"
    path.write_bytes(b"old\n")
    real_fsync = os.fsync

    def edit_during_sync(descriptor):
        real_fsync(descriptor)
        if path.read_bytes() == b"old\n":
            path.write_bytes(b"edited\n")

    monkeypatch.setattr(gradlint.source.os, "fsync", edit_during_sync)
    with pytest.raises(ConcurrentModification):
        write_atomic(str(path), b"new\n", expected_old=b"old\n")
    assert path.read_bytes() == b"edited\n"
    assert [p.name for p in tmp_path.iterdir()] == ["m.py"], "the temporary file is removed"


def test_a_file_that_already_holds_the_fix_is_left_alone(tmp_path):
    path = tmp_path / "m.py"
    path.write_bytes(b"new\n")
    before = path.stat().st_ino
    write_atomic(str(path), b"new\n", expected_old=b"old\n")  # another run got there first
    assert path.read_bytes() == b"new\n"
    assert path.stat().st_ino == before, "not rewritten"


def test_the_write_keeps_mode_and_writes_through_a_symbolic_link(tmp_path):
    target = tmp_path / "real.py"
    target.write_bytes(b"old\n")
    target.chmod(0o640)
    link = tmp_path / "link.py"
    os.symlink("real.py", link)
    write_atomic(str(link), b"new\n", expected_old=b"old\n")
    assert os.path.islink(link)
    assert target.read_bytes() == b"new\n"
    assert target.stat().st_mode & 0o777 == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.py", "real.py"]


def test_a_fix_whose_result_does_not_parse_is_never_written(tmp_path, cli, monkeypatch):
    from gradlint.diagnostics import Diagnostic, Edit, Fix, Safety
    from gradlint.rule import Rule

    class BreaksSyntax(Rule):
        __doc__ = TEST_RULE_DOCS
        code = "GL982"
        name = "breaks-syntax"
        summary = "a fix that opens a bracket it never closes"
        fix_safety = Safety.SAFE
        prefilter = r"\bimport torch\b"

        def check_python(self, file):
            start = file.text.index("import torch")
            yield Diagnostic(start, start + 6, "bad", Fix((Edit(start, start, "("),), Safety.SAFE, "open"))

    install_rules(monkeypatch, BreaksSyntax)
    (tmp_path / "m.py").write_bytes(GUARDED)

    run = cli(tmp_path, "fix", "--no-cache", "--extend-select", "GL982", "m.py")
    run.assert_no_traceback()
    # The other rule's fix still applies; the breaking one is named and left out.
    assert (tmp_path / "m.py").read_bytes() == GUARDED_FIXED
    assert "m.py:1:1: GL982 [breaks-syntax] fix not applied: the result would not parse" in run.stderr
    assert "m.py:1:1: GL982 [*] [breaks-syntax] bad" in run.stdout
    assert run.exit_code == 1

    (tmp_path / "m.py").write_bytes(GUARDED)
    only = cli(tmp_path, "fix", "--no-cache", "--select", "GL982", "m.py")
    assert (tmp_path / "m.py").read_bytes() == GUARDED
    assert only.exit_code == 1


# -- bytes outside the edits ------------------------------------------------------------------

@pytest.mark.parametrize("raw", [
    b"# -*- coding: latin-1 -*-\nimport torch\nname = 'caf\xe9'\nwith torch.no_grad:\n    pass\n",
    b"\xef\xbb\xbfimport torch\nname = '\xc3\xa9\xe2\x82\xac'\nwith torch.no_grad:\n    pass\n",
    b"import torch\r\n\r\nwith torch.no_grad:\r\n    pass\r\n",
    b"import torch\n\r\nx = 1\r\nwith torch.no_grad:\n    pass\r\n",
    b"import torch\rx = 1\r\rwith torch.no_grad:\r    pass\r",
    b"import torch   \n\t\nx = 1 \t \nwith torch.no_grad:  \n    pass    \n",
    b"import torch\nwith torch.no_grad: pass",
    b"import torch\n\x0c\nwith torch.no_grad:\n    pass\n\n\n\n",
    b"\xef\xbb\xbf# coding: utf-8\r\nimport torch\r\nwith torch.no_grad:\r\n  pass",
], ids=["latin-1-cookie", "bom", "crlf", "mixed-endings", "lone-cr", "trailing-blanks", "no-final-newline",
        "form-feed-and-blank-tail", "bom-cookie-crlf-no-newline"])
def test_bytes_outside_the_edit_survive_a_real_fix(tmp_path, subprocess_cli, raw):
    path = tmp_path / "m.py"
    path.write_bytes(raw)
    path.chmod(0o754)
    run = subprocess_cli(tmp_path, "fix", "--no-cache", "m.py")
    run.assert_no_traceback()
    assert run.exit_code == 0, run.stderr
    assert path.read_bytes() == raw.replace(b"torch.no_grad:", b"torch.no_grad():")
    assert path.stat().st_mode & 0o777 == 0o754
    assert [p.name for p in tmp_path.iterdir() if not p.name.startswith(".gradlint_cache")] == ["m.py"]


def test_diff_writes_nothing(tmp_path, subprocess_cli):
    path = tmp_path / "m.py"
    path.write_bytes(GUARDED)
    run = subprocess_cli(tmp_path, "fix", "--no-cache", "--diff", "m.py")
    assert path.read_bytes() == GUARDED
    assert "+    with torch.no_grad():" in run.stdout
    assert run.exit_code == 1

