"""A fix changes a file's bytes inside the edits and nothing else: not the bytes around
them, not its owner, group, mode or extended attributes, not its other hard links; and
what cannot be written is said, with the findings still in the file."""
from __future__ import annotations

import os
import resource
import time

import pytest

from reliability_support import GUARDED, GUARDED_FIXED, gradlint_process
from gradlint import source as source_module
from gradlint.source import ReadOnlyFile, UndecodableSource, decode_python, remove_stale_temporaries, write_atomic


def _run(cwd, *args, **kwargs):
    process = gradlint_process(cwd, args, **kwargs)
    stdout, stderr = process.communicate(timeout=120)
    return process.returncode, stdout.decode(), stderr.decode()


# -- encodings --------------------------------------------------------------------------------

# Each decodes to a program with a GL402 finding, but writing the fixed text back with
# the same codec would change bytes outside the fix.
_NO_ROUND_TRIP = {
    # unicode_escape turns every line break into `\n`: the program would become one comment.
    "unicode_escape": b"# coding: unicode_escape\nimport torch\nwith torch.no_grad:\n    pass\n",
    # utf-7 spells the same text two ways: `+AOk-'` comes back as `+AOk'`.
    "utf-7": b"# coding: utf-7\nimport torch\nprint('+AOk-')\nwith torch.no_grad:\n    pass\n",
}


@pytest.mark.parametrize("codec", sorted(_NO_ROUND_TRIP))
def test_a_file_whose_encoding_does_not_round_trip_is_reported_and_left_untouched(tmp_path, codec):
    raw = _NO_ROUND_TRIP[codec]
    (tmp_path / "m.py").write_bytes(raw)
    (tmp_path / "other.py").write_bytes(GUARDED)
    code, stdout, stderr = _run(tmp_path, "fix", "--no-cache", ".")
    assert (tmp_path / "m.py").read_bytes() == raw
    assert (tmp_path / "other.py").read_bytes() == GUARDED_FIXED, "the run goes on"
    assert f"m.py: not written: its encoding {codec} would change bytes outside the fix" in stderr
    assert "m.py:" in stdout and "GL402" in stdout, "the finding is still there"
    assert "1 remaining" in stderr
    assert code == 2


def test_an_edit_in_a_legacy_encoding_is_spliced_into_the_original_bytes(tmp_path):
    raw = b"# coding: cp1252\nimport torch\nprint('\xe9')\nwith torch.no_grad:\n    pass\n"
    (tmp_path / "m.py").write_bytes(raw)
    code, _, stderr = _run(tmp_path, "fix", "--no-cache", "m.py")
    assert (tmp_path / "m.py").read_bytes() == raw.replace(b"no_grad:", b"no_grad():")
    assert code == 0, stderr


def test_splicing_keeps_bytes_that_decode_to_the_same_text_two_ways():
    """utf-7 with the edit before the non-ASCII text: only the edited bytes change."""
    raw = b"# coding: utf-7\nimport torch\nwith torch.no_grad:\n    pass\nprint('+AOk-')\n"
    decoded = decode_python(raw)
    fixed = decoded.text.replace("no_grad:", "no_grad():")
    with pytest.raises(source_module.NoRoundTrip):
        # The text after the edit would come back as `+AOk'`, so this is refused too...
        decoded.encode(fixed)
    ascii_only = decode_python(b"# coding: utf-7\nimport torch\nwith torch.no_grad:\n    pass\n")
    # ...while an edit among characters utf-7 spells one way only is written.
    assert ascii_only.encode(ascii_only.text.replace("no_grad:", "no_grad():")).endswith(b"no_grad():\n    pass\n")


# -- identity ---------------------------------------------------------------------------------

def test_a_hard_linked_file_is_fixed_for_every_link(tmp_path):
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "m.py").write_bytes(GUARDED)
    os.link(tree / "m.py", tmp_path / "elsewhere.py")
    inode = (tree / "m.py").stat().st_ino
    code, _, stderr = _run(tree, "fix", "--no-cache", ".")
    assert code == 0, stderr
    assert (tmp_path / "elsewhere.py").read_bytes() == GUARDED_FIXED
    assert (tree / "m.py").stat().st_ino == inode
    assert (tree / "m.py").stat().st_nlink == 2
    assert [path.name for path in tree.iterdir()] == ["m.py"], "no temporary left"


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another user needs root")
def test_owner_group_mode_and_extended_attributes_survive_the_fix(tmp_path):
    path = tmp_path / "m.py"
    path.write_bytes(GUARDED)
    os.chown(path, 65534, 65534)
    path.chmod(0o640)
    try:
        os.setxattr(path, "user.origin", b"reviewed")
    except OSError:
        pytest.skip("this file system keeps no user extended attributes")
    code, _, stderr = _run(tmp_path, "fix", "--no-cache", "m.py")
    assert code == 0, stderr
    status = path.stat()
    assert path.read_bytes() == GUARDED_FIXED
    assert (status.st_uid, status.st_gid, status.st_mode & 0o7777) == (65534, 65534, 0o640)
    assert os.getxattr(path, "user.origin") == b"reviewed"


def test_an_owner_this_user_cannot_give_makes_the_write_go_in_place(tmp_path, monkeypatch):
    """Not root: a new file would be ours; the original keeps its owner only if written in place."""
    path = tmp_path / "m.py"
    path.write_bytes(b"old\n")
    inode = path.stat().st_ino

    def refuse(*args, **kwargs):
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(source_module.os, "geteuid", lambda: path.stat().st_uid + 1)
    monkeypatch.setattr(source_module.os, "chown", refuse)
    write_atomic(str(path), b"new and longer\n", expected_old=b"old\n")
    assert path.read_bytes() == b"new and longer\n"
    assert path.stat().st_ino == inode
    assert [p.name for p in tmp_path.iterdir()] == ["m.py"]


def test_a_read_only_file_is_reported_and_not_written(tmp_path):
    (tmp_path / "locked.py").write_bytes(GUARDED)
    (tmp_path / "locked.py").chmod(0o444)
    (tmp_path / "open.py").write_bytes(GUARDED)
    code, stdout, stderr = _run(tmp_path, "fix", "--no-cache", ".")
    assert (tmp_path / "locked.py").read_bytes() == GUARDED
    assert (tmp_path / "open.py").read_bytes() == GUARDED_FIXED
    assert "locked.py: read-only file: not written" in stderr
    assert "locked.py:5:10: GL402" in stdout
    assert "Fixed 1 finding in 1 file (2 files checked); 1 remaining." in stderr
    assert code == 2
    with pytest.raises(ReadOnlyFile):
        write_atomic(str(tmp_path / "locked.py"), b"x\n")


def test_a_failed_write_reports_what_is_really_left(tmp_path):
    """A file size limit makes the write fail as a full disk does (EFBIG instead of ENOSPC)."""
    big = GUARDED + b"".join(b"PADDING_%d = %d\n" % (n, n) for n in range(400))
    (tmp_path / "m.py").write_bytes(big)
    limit = len(big) // 2

    def limit_file_size():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    code, stdout, stderr = _run(tmp_path, "fix", "--no-cache", "m.py", preexec_fn=limit_file_size)
    assert (tmp_path / "m.py").read_bytes() == big
    assert "m.py: cannot write the fixed file: File too large" in stderr
    assert "m.py:5:10: GL402" in stdout
    assert "Fixed 0 findings (1 file checked); 1 remaining." in stderr
    assert code == 2
    assert [p.name for p in tmp_path.iterdir()] == ["m.py"]


# -- temporaries ------------------------------------------------------------------------------

def test_a_run_removes_the_temporaries_a_killed_run_left_and_only_those(tmp_path):
    (tmp_path / "m.py").write_bytes(GUARDED)
    stale = tmp_path / ".gradlint-k1ll3d_x.tmp"
    fresh = tmp_path / ".gradlint-inflight.tmp"  # another run is writing it right now
    not_ours = tmp_path / ".gradlint-notes.tmp.bak"
    for path in (stale, fresh, not_ours):
        path.write_bytes(b"partial")
    long_ago = time.time() - 2 * source_module.STALE_TEMPORARY_SECONDS
    os.utime(stale, (long_ago, long_ago))
    os.utime(not_ours, (long_ago, long_ago))
    code, _, stderr = _run(tmp_path, "fix", "--no-cache", ".")
    assert code == 0, stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["m.py", fresh.name, not_ours.name])
    remove_stale_temporaries(str(tmp_path))  # nothing stale left: nothing else goes
    assert fresh.exists() and not_ours.exists()



def test_ascii_sources_decode_as_the_cookie_search_reads_them():
    """decode_python reads plain ASCII without tokenize's search for a cookie: the same
    text, codec and bytes as the search gives, or the same refusal (a cookie in the first
    two lines may name another codec, or one Python refuses)."""
    import random

    def outcome(decode, raw):
        try:
            decoded = decode(raw)
        except UndecodableSource as error:
            return "refused", error.message, error.text, error.offset, error.binary
        return decoded.text, decoded.encoding, decoded.bom, decoded.raw

    generator = random.Random(4)
    lines = ["import torch", "# -*- coding: latin-1 -*-", "# coding=utf-16", "#!/usr/bin/env python",
             "# vim: set fileencoding=ascii :", "x = 'coding'", "", "# coding: rot13", "# coding: nonesuch",
             "with torch.no_grad():", "\tpass  # \x00"]
    for _ in range(1000):
        raw = "\n".join(generator.choice(lines) for _ in range(generator.randint(0, 4))).encode()
        raw = raw.replace(b"\n", generator.choice([b"\n", b"\r\n", b"\r"]))
        assert outcome(decode_python, raw) == outcome(source_module._decode_python_searched, raw), raw
