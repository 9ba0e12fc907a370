"""The four programs of a supervised run build on a machine without a GPU (nvcc compiles, nothing runs): the CPU
track's supervisor and worker with g++, the CUDA track's with nvcc, none linking libcuda at build time. A broken
supervisor then fails CI here, not on the next GPU machine.
"""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from grader.run import binaries


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("KERNELJUDGE_CACHE", str(tmp_path / "cache"))
    return tmp_path


@pytest.mark.parametrize("track", ["cpu", "cuda"])
def test_the_supervisor_and_worker_build_and_are_cached(cache, track):
    if track == "cuda" and shutil.which("nvcc") is None:
        pytest.skip("no nvcc")
    supervisor, worker = binaries.supervisor(track), binaries.worker(track)
    for program in (supervisor, worker):
        assert program.is_file() and os.access(program, os.X_OK)
        assert (program.parent.stat().st_mode & 0o777) == 0o755 and (
            program.parent.parent.stat().st_mode & 0o777
        ) == 0o700
    assert binaries.supervisor(track) == supervisor  # the second call finds it in the cache
    if track == "cuda":
        needed = subprocess.run(["readelf", "-d", str(worker)], capture_output=True, text=True).stdout
        assert "libcudart.so" in needed and "libcuda.so" not in needed  # the driver comes through the runtime


def test_the_cuda_worker_makes_the_submissions_streams_itself(cache):
    """A submission loaded into the CUDA worker finds the worker's stream creation before the runtime's, which
    keeps every stream it makes waiting for the gate of its call (harness/gpu_worker.cu)."""
    if shutil.which("nvcc") is None:
        pytest.skip("no nvcc")
    exported = subprocess.run(
        ["nm", "-D", "--defined-only", str(binaries.worker("cuda"))], capture_output=True, text=True
    )
    names = {line.split()[-1] for line in exported.stdout.splitlines() if line.split()[1:2] == ["T"]}
    assert {"cudaStreamCreateWithFlags", "cudaStreamCreateWithPriority"} <= names
