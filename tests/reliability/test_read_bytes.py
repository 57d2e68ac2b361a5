"""`read_bytes_and_status` returns every byte whichever read ends it: the one read that gets
all the bytes fstat counted, or reads to the end of a file that says nothing of its size."""
from __future__ import annotations

import os

import pytest

from gradlint import source
from gradlint.source import read_bytes_and_status


@pytest.mark.parametrize("size", [0, 1, 4095, 1 << 16, (1 << 16) + 1, 300_000])
def test_every_size_is_read_whole_and_in_one_read(tmp_path, monkeypatch, size):
    data = bytes(range(256)) * (size // 256) + bytes(size % 256)
    path = tmp_path / "m.py"
    path.write_bytes(data)
    reads = []
    real_read = os.read
    monkeypatch.setattr(source.os, "read", lambda fd, n: reads.append(n) or real_read(fd, n))
    got, status = read_bytes_and_status(str(path))
    assert got == data
    assert status.st_size == size
    assert len(reads) == 1, "the bytes fstat counted end the read"


def test_a_file_longer_than_its_status_says_is_read_to_its_end(tmp_path, monkeypatch):
    """A file that grew after fstat (or one whose size the kernel does not know, as under
    /proc) is read until a read returns nothing."""
    path = tmp_path / "m.py"
    path.write_bytes(b"x = 1\n" * 20_000)
    real_fstat = os.fstat

    def stale_fstat(descriptor):
        status = real_fstat(descriptor)
        shrunk = list(status)
        shrunk[6] = 6  # st_size: the first line only
        return os.stat_result(shrunk)

    monkeypatch.setattr(source.os, "fstat", stale_fstat)
    got, _ = read_bytes_and_status(str(path))
    assert got == path.read_bytes()


def test_a_proc_file_of_size_zero_is_read_whole():
    if not os.path.exists("/proc/self/status"):
        pytest.skip("no /proc here")
    got, status = read_bytes_and_status("/proc/self/status")
    assert status.st_size == 0 and b"Name:" in got
