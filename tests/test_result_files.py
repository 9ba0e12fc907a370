"""The checker's reading of the supervisor's result files: the same elements whether a root grader maps the file
or another one reads it, arrays the check may change without touching the file, and odd files refused."""

from __future__ import annotations

import os
import re

import numpy as np
import pytest

from grader.judge import check
from grader.run import inputs as gen
from grader.sandbox import workspace


@pytest.mark.parametrize("root", [True, False])
@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16", "i32"])
def test_an_output_reads_the_same_mapped_or_read_and_stays_as_written(tmp_path, monkeypatch, root, dtype):
    monkeypatch.setattr(workspace, "is_root", lambda: root)
    written = np.arange(1000).astype(gen.NUMPY_DTYPES[dtype])
    path = tmp_path / "case.d0.1.bin"
    written.tofile(path)
    got = check.read_buffer(path, 1000, dtype)
    assert got is not None and got.dtype == written.dtype
    assert np.array_equal(got, written)
    got[:10] = 0  # the check's array is its own: the file keeps what the supervisor wrote
    assert np.array_equal(np.fromfile(path, dtype=written.dtype), written)
    os.unlink(path)  # the trusted folder is removed while a verdict may still hold the array
    assert int(got[10]) == 10


@pytest.mark.parametrize("root", [True, False])
def test_an_empty_output_and_a_file_of_another_size(tmp_path, monkeypatch, root):
    monkeypatch.setattr(workspace, "is_root", lambda: root)
    (tmp_path / "empty.bin").write_bytes(b"")
    empty = check.read_buffer(tmp_path / "empty.bin", 0)
    assert empty is not None and empty.size == 0
    (tmp_path / "short.bin").write_bytes(b"\0" * 12)
    with pytest.raises(check.TamperedOutput, match=re.escape("short.bin: not a file of 4 f32 elements")):
        check.read_buffer(tmp_path / "short.bin", 4)
    assert check.read_buffer(tmp_path / "absent.bin", 4) is None


def test_a_link_or_a_fifo_in_place_of_an_output_is_refused(tmp_path):
    np.zeros(4, np.float32).tofile(tmp_path / "real.bin")
    (tmp_path / "link.bin").symlink_to(tmp_path / "real.bin")
    with pytest.raises(check.TamperedOutput, match=re.escape("link.bin")):
        check.read_buffer(tmp_path / "link.bin", 4)
    os.mkfifo(tmp_path / "fifo.bin")
    with pytest.raises(check.TamperedOutput, match=re.escape("fifo.bin: not a regular file")):
        check.read_buffer(tmp_path / "fifo.bin", 4)
