"""The build cache is the grader's alone (folders 0700, files 0600, another uid's files ignored) and bounded
(one entry, the whole cache: least recently used first); a compile's memory fits the machine; a compile
that quotes a host file shows none of it."""

from __future__ import annotations

import os
import time

import pytest

from grader.build import cache, compiler
from grader.problems.catalog import load_problem

SOFTMAX = r"""
#include <cmath>
void solve(const float* input, float* output, int M, int N) {
    for (int r = 0; r < M; ++r) {
        const float* x = input + (long)r * N;
        float m = x[0], s = 0;
        for (int i = 1; i < N; ++i) m = std::fmax(m, x[i]);
        for (int i = 0; i < N; ++i) s += std::exp(x[i] - m);
        for (int i = 0; i < N; ++i) output[(long)r * N + i] = std::exp(x[i] - m) / s;
    }
}
"""


@pytest.fixture(autouse=True)
def private_places(tmp_path, monkeypatch):
    monkeypatch.setenv("KERNELJUDGE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("KERNELJUDGE_RUNS", str(tmp_path / "runs"))


def mode(path) -> int:
    return path.stat().st_mode & 0o777


def test_the_cache_is_private_and_loose_modes_are_tightened(tmp_path):
    (tmp_path / "cache").mkdir(mode=0o755)  # as an older version, or a Docker volume, left it
    folder = cache.entry("builds", cache.key("a source"))
    stored = cache.store(folder, "lib.so", b"\x7fELF")
    assert (mode(tmp_path / "cache"), mode(folder.parent), mode(folder), mode(stored)) == (0o700, 0o700, 0o700, 0o600)
    stored.chmod(0o755)
    folder.chmod(0o755)
    assert cache.lookup(folder, "lib.so") == stored
    assert (mode(folder), mode(stored)) == (0o700, 0o600)


@pytest.mark.skipif(os.geteuid() != 0, reason="making a file of another uid needs root")
def test_a_file_another_uid_planted_is_not_used():
    folder = cache.entry("builds", cache.key("planted"))
    planted = cache.store(folder, "lib.so", b"not ours")
    os.chown(planted, 65534, 65534)
    assert cache.lookup(folder, "lib.so") is None


def test_one_entry_is_bounded(monkeypatch):
    monkeypatch.setattr(cache, "MAX_ENTRY_BYTES", 1000)
    with pytest.raises(cache.TooLarge):
        cache.store(cache.entry("builds", "big"), "lib.so", b"x" * 1001)


def test_the_least_recently_used_entries_go_first(monkeypatch):
    folders = [cache.entry("builds", f"entry{i}") for i in range(3)]
    for age, folder in zip((300, 200, 100), folders):
        cache.store(folder, "lib.so", b"x" * 1000)
        os.utime(folder, (time.time() - age,) * 2)
    monkeypatch.setattr(cache, "MAX_CACHE_BYTES", 2500)
    assert cache.lookup(folders[0], "lib.so") is not None  # used just now: the most recent
    cache.store(cache.entry("runners", "new"), "runner", b"x" * 1000)
    assert [f.exists() for f in folders] == [True, False, False]  # 4000 bytes held: 1 and 2 went, oldest first


def test_compile_memory_fits_the_machine():
    physical = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    assert compiler.compile_memory(1) == min(compiler.COMPILE_MEMORY_CAP, physical)
    assert compiler.compile_memory(64) <= max(physical // 64, 256 << 20)
    assert compiler.COMPILE_LIMITS.memory_bytes == compiler.compile_memory()


@pytest.mark.skipif(os.geteuid() != 0, reason="the sandbox's uid needs root")
def test_a_compiled_library_is_cached_privately():
    problem = load_problem("softmax")
    first = compiler.build_submission(problem, SOFTMAX.encode(), "mine.cpp", "cpu")
    assert first.ok and not first.cached, first.log
    assert mode(first.library) == 0o600 and mode(first.library.parent) == 0o700
    again = compiler.build_submission(problem, SOFTMAX.encode(), "mine.cpp", "cpu")
    assert again.ok and again.cached and again.library == first.library


@pytest.mark.skipif(os.geteuid() != 0, reason="the sandbox's uid needs root")
def test_a_compile_error_quotes_no_host_file():
    problem = load_problem("softmax")
    source = '#include "/etc/passwd"\n' + SOFTMAX
    build = compiler.build_submission(problem, source.encode(), "mine.cpp", "cpu")
    assert not build.ok
    assert "root:" not in build.log and "/etc/passwd" not in build.log, build.log
    assert "<host file>" in build.log
    assert mode(next((cache.cache_root() / "builds").iterdir()) / "error.txt") == 0o600
