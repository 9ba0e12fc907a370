"""The supervised run of the CPU track (grader/run/supervised.py, supervisor.cpp, harness/worker.cpp), driven
directly with small libraries written here: the inputs it makes are the grader's bit for bit, the audited calls
are a draw of the samples and only theirs are kept, the worker's seccomp filter refuses what it must, a reply
out of turn is a protocol violation, a full trusted disk is the judge's error, and a malformed timing record is
a verdict, not a crash. The guards around the buffers are tests/test_guards.py's.

Each test builds its own library and uses its own cache and runs folders (tmp_path); nothing is written into
the repository. Needs g++; the sandbox's uid switch and the tmpfs test need root (skipped otherwise).
"""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from supervised_runs import assert_a_copys_tests_kept, row_audits

from grader.judge import benchmarks, supervisor_records
from grader.run import binaries, supervised
from grader.run import inputs as gen
from grader.sandbox import local as sandbox

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")

COPY = r"""
#include <cstring>
extern "C" void kerneljudge_entry(void** p, const int* n) {
    std::memcpy(p[1], p[0], sizeof(float) * n[0]);
}
"""

# Each probe's result goes to output[i]: 0 if the call was refused with the expected errno, else 1.
PROBES = r"""
#include <cerrno>
#include <csignal>
#include <sched.h>
#include <sys/ipc.h>
#include <sys/ptrace.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>
static float refused(long result, int expected) { return result < 0 && errno == expected ? 0.0f : 1.0f; }
extern "C" void kerneljudge_entry(void** p, const int*) {
    float* out = static_cast<float*>(p[1]);
    cpu_set_t all;
    CPU_ZERO(&all);
    CPU_SET(0, &all);
    out[0] = refused(ptrace(PTRACE_ATTACH, 1, nullptr, nullptr), EPERM);
    out[1] = refused(syscall(SYS_fork), EPERM);
    out[2] = refused(socket(AF_UNIX, SOCK_STREAM, 0), EPERM);
    out[3] = refused(shmget(0x4b4a0099, 4096, IPC_CREAT | 0600), EPERM);
    out[4] = refused(syscall(SYS_add_key, "user", "kj-test", "x", 1, -4), EPERM);
    out[5] = refused(sched_setaffinity(0, sizeof all, &all), EPERM);
    out[6] = refused(kill(1, 0), EPERM);
    out[7] = refused(syscall(SYS_clone3, nullptr, 0), ENOSYS);
    out[8] = refused(syscall(SYS_unshare, 0x40000000), EPERM);
    out[9] = refused(syscall(SYS_io_uring_setup, 1, nullptr), EPERM);
}
"""

# Sends a DONE for the next call ahead of time, so that call would end at once: a protocol violation.
EARLY_REPLY = r"""
#include <cstdint>
#include <cstring>
#include <sys/socket.h>
extern "C" void kerneljudge_entry(void** p, const int* n) {
    static uint64_t call = 0;
    std::memcpy(p[1], p[0], sizeof(float) * n[0]);
    for (int fd = 3; fd < 4096; ++fd) {  // the grader passes its own fd number, which may be high
        int type = 0;
        socklen_t size = sizeof type;
        if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &size) == 0 && type == SOCK_SEQPACKET) {
            struct { uint32_t magic, kind; uint64_t call; double ms, tail; } reply{0x4b4a5032, 4, call + 1, 0, 0};
            send(fd, &reply, sizeof reply, 0);
        }
    }
    ++call;
}
"""


def _library(folder: Path, source: str) -> Path:
    (folder / "lib.cpp").write_text(source)
    subprocess.run(
        ["g++", "-O2", "-shared", "-fPIC", "-o", str(folder / "lib.so"), str(folder / "lib.cpp")], check=True
    )
    return folder / "lib.so"


def _request(key: int, count: int, mode: str = "check 2", rows: str = "rows 0 0") -> str:
    """One case "t" of `count` floats in and out; a benchmark's `rows`: its row audit's line (request.py)."""
    k0, k1 = gen.key_words(key)
    low, scale = gen.float32_bits(-1.0), gen.float32_bits(2.0)
    return (
        f"case t {mode.split()[0]} {k0:x} {k1:x} {' '.join(mode.split()[1:])}\nints 1 {count}\nbuffers 2\n"
        f"in f32 {count} {low} {scale}\nout f32 {count}\n" + (f"{rows}\n" if mode.startswith("bench") else "") + "end\n"
    )


def _run(
    folder: Path, source: str, request: str, count: int, wall_s: float = 60.0, quiet=None, on_done=None
) -> supervised.Result:
    library = _library(folder, source)
    uid = sandbox.sandbox_uid()
    workdir = sandbox.new_workdir(uid)
    for path, name in ((binaries.worker(), "worker"), (library, "lib.so")):
        shutil.copyfile(path, workdir / name)
        (workdir / name).chmod(0o555)
    limits = sandbox.Limits(wall_s=wall_s, memory_bytes=4 << 30)
    try:
        return supervised.run(
            request,
            supervised.region_bytes([[4 * count, 4 * count]]),
            "lib.so",
            workdir,
            sandbox_run=sandbox.run,
            limits=limits,
            uid=uid,
            env={},
            quiet=quiet,
            on_done=on_done,
        )
    finally:
        sandbox.remove_workdir(workdir)


def _floats(path: Path) -> np.ndarray:
    return np.fromfile(path, dtype=np.float32)


def test_siphash_matches_the_reference_vector():
    assert gen.siphash24(bytes(range(16)), bytes(range(15))) == 0xA129CA6149BE45E5


# The copy, then two elements of the input changed (5 and 9).
COPY_WRITING_INPUT = r"""
#include <cstring>
extern "C" void kerneljudge_entry(void** p, const int* n) {
    std::memcpy(p[1], p[0], sizeof(float) * n[0]);
    static_cast<float*>(p[0])[9] += 1.0f;
    static_cast<float*>(p[0])[5] = 0.0f;
}
"""


def test_inputs_are_the_graders_bit_for_bit_and_differ_per_call(folders):
    key, count = secrets.randbits(128), 10007
    result = _run(folders, COPY, _request(key, count), count)
    try:
        assert result.outcome.returncode == 0, result.outcome.stderr
        assert (result.trusted / "progress").read_text().splitlines()[-1].startswith("done")
        assert_a_copys_tests_kept(result.trusted, key, count)
    finally:
        supervised.remove_trusted(result.trusted)


def test_a_call_that_writes_its_input_is_recorded_with_how_many_elements_and_the_first(folders):
    key, count = secrets.randbits(128), 10007
    result = _run(folders, COPY_WRITING_INPUT, _request(key, count), count)
    try:
        assert result.outcome.returncode == 0, result.outcome.stderr
        for draw in range(2):
            assert supervisor_records.input_changes(result.trusted, f"t.d{draw}") == {0: (2, 5)}
    finally:
        supervised.remove_trusted(result.trusted)


def test_the_audited_calls_are_a_draw_of_the_samples_and_only_theirs_are_kept(folders):
    count = 1 << 16
    result = _run(folders, COPY, _request(secrets.randbits(128), count, "bench 10 12 20000 3"), count)
    try:
        parsed = supervisor_records.times(result.trusted, "t")
        assert parsed is not None
        header, rows = parsed
        assert header["mode"] == "single" and header["overhead_ms"] > 0
        assert 10 <= len(rows) <= 12 + 8  # the stop rule's minimum and maximum, then its random tail
        audits = [int(w) for w in (result.trusted / "t.audits").read_text().split()]
        sampled = benchmarks._sampled_calls(rows, 1)
        assert len(audits) == 3 and len(set(audits)) == 3 and set(audits) <= sampled, (audits, sampled)
        kept = sorted(int(p.name.split(".")[1][1:]) for p in result.trusted.glob("t.a*.1.bin"))
        assert kept == audits  # the calls a later sample took the place of were removed
        for call in audits:
            assert (result.trusted / f"t.a{call}.1.bin").stat().st_size == count * 4
    finally:
        supervised.remove_trusted(result.trusted)


# A copy that leaves the last element unwritten and writes +Inf at element 70 000 (row 1093 of 64-element rows).
COPY_UNFINISHED = r"""
#include <cmath>
#include <cstring>
extern "C" void kerneljudge_entry(void** p, const int* n) {
    std::memcpy(p[1], p[0], sizeof(float) * (n[0] - 1));
    static_cast<float*>(p[1])[70000] = INFINITY;
}
"""


@pytest.mark.parametrize("unfinished", [False, True])
def test_a_row_audit_keeps_one_drawn_row_a_run_and_scans_every_element(folders, unfinished):
    count, rows, width = 1 << 17, 2048, 64  # the output as [1, 2048, 64]: an audit keeps 128 rows, one in 16
    key = secrets.randbits(128)
    request = _request(key, count, "bench 10 12 20000 3", f"rows {rows} 128 1 {width}")
    result = _run(folders, COPY_UNFINISHED if unfinished else COPY, request, count)
    try:
        assert result.outcome.returncode == 0, result.outcome.stderr
        for scan, got, expected, drawn in row_audits(result.trusted, key, count, rows, width, 128):
            if unfinished:
                assert scan == {1: supervisor_records.Scan(1, count - 1, 1, 70000)}
                expected[drawn == 70000 // width, 70000 % width] = np.inf
                expected[drawn == rows - 1, width - 1] = got[drawn == rows - 1, width - 1]  # the poison, if drawn
            else:
                assert scan == {1: supervisor_records.Scan(0, -1, 0, -1)}
            assert np.array_equal(got.view(np.uint32), expected.view(np.uint32))
        assert not list(result.trusted.glob("t.a*.0.bin"))  # outputs only
    finally:
        supervised.remove_trusted(result.trusted)


def test_a_supervisor_told_to_wait_runs_no_case_until_the_grader_says_go(folders):
    returned = []

    def quiet() -> None:  # another grading's check, of half a second
        threading.Event().wait(0.5)
        returned.append(time.time())

    count = 1000
    result = _run(folders, COPY, _request(secrets.randbits(128), count), count, quiet=quiet)
    try:
        assert result.outcome.returncode == 0, result.outcome.stderr
        progress = supervisor_records.progress(result.trusted)
        assert progress.done and returned
        first_case = progress.marks()[0][1]
        assert first_case >= returned[0], (first_case, returned)
    finally:
        supervised.remove_trusted(result.trusted)


def _records(trusted: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(trusted.iterdir())}


def test_the_grader_is_told_once_the_records_are_final_and_they_do_not_change_after(folders):
    seen = []

    def on_done(trusted: Path) -> None:
        seen.append((supervisor_records.progress(trusted).done, _records(trusted)))

    count = 1000
    result = _run(folders, COPY, _request(secrets.randbits(128), count), count, on_done=on_done)
    try:
        assert result.outcome.returncode == 0, result.outcome.stderr
        assert len(seen) == 1
        done, records = seen[0]
        assert done and "t.d1.1.bin" in records
        assert records == _records(result.trusted)
    finally:
        supervised.remove_trusted(result.trusted)


def test_a_run_that_ends_without_done_still_tells_the_grader_once(folders):
    seen = []
    count = 64
    result = _run(
        folders,
        EARLY_REPLY,
        _request(secrets.randbits(128), count),
        count,
        on_done=lambda trusted: seen.append(supervisor_records.progress(trusted).done),
    )
    try:
        assert supervisor_records.violation(result.trusted) is not None
        assert seen == [False]
    finally:
        supervised.remove_trusted(result.trusted)


def test_a_done_pipe_held_open_elsewhere_does_not_outlive_the_supervisor(tmp_path):
    read, write = os.pipe()  # its write end stays open here, as in a process forked while it was open
    supervisor = subprocess.Popen([sys.executable, "-c", "pass"])
    seen: list[Path] = []
    watch = (read, os.pidfd_open(supervisor.pid), tmp_path, seen.append)
    watcher = threading.Thread(target=supervised._when_done, args=watch)
    watcher.start()
    try:
        watcher.join(30)
        assert not watcher.is_alive() and seen == [tmp_path]
    finally:
        os.close(write)
        supervisor.wait()


def test_the_seccomp_filter_refuses_what_a_kernel_never_needs(folders):
    count = 16
    result = _run(folders, PROBES, _request(secrets.randbits(128), count, "check 1"), count)
    try:
        assert result.outcome.returncode == 0, result.outcome.stderr
        got = _floats(result.trusted / "t.d0.1.bin")[:10]
        names = [
            "ptrace",
            "fork",
            "socket",
            "shmget",
            "add_key",
            "sched_setaffinity",
            "kill(1)",
            "clone3",
            "unshare",
            "io_uring_setup",
        ]
        assert [n for n, v in zip(names, got) if v != 0.0] == []
    finally:
        supervised.remove_trusted(result.trusted)


def test_a_reply_out_of_turn_is_a_protocol_violation(folders):
    count = 64
    result = _run(folders, EARLY_REPLY, _request(secrets.randbits(128), count, "check 2"), count)
    try:
        assert "out of turn" in (result.trusted / "violation").read_text()
        assert not (result.trusted / "t.d1.1.bin").exists()
    finally:
        supervised.remove_trusted(result.trusted)


@pytest.mark.skipif(os.geteuid() != 0, reason="mounts a small tmpfs")
def test_a_full_trusted_disk_is_the_judges_error_not_a_verdict(folders, monkeypatch):
    full = folders / "full"
    full.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k,mode=0700", "kj-full", str(full)], check=True)
    try:
        monkeypatch.setattr(supervised, "new_trusted_folder", lambda: full)
        count = 1 << 16  # 256 KiB per buffer: more than the disk holds
        started = time.monotonic()
        with pytest.raises(supervised.JudgeError, match="disk is full"):
            _run(folders, COPY, _request(secrets.randbits(128), count), count, wall_s=120.0)
        # the frozen worker is ended with its supervisor, not left until the wall-clock limit
        assert time.monotonic() - started < 60
    finally:
        subprocess.run(["umount", "-l", str(full)], check=False)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "mode single batch x overhead_ms 0.1\n0 1.0 0.0\n",
        "mode single batch 1 overhead_ms nan\n0 1.0 0.0\n",
        "mode weird batch 1\n0 1.0 0.0\n",
        "mode single batch 1\n0 1.0\n",
        "mode single batch 1\n0 0.0 0.0\n",
        "mode single batch 1\n0 -1.0 0.0\n",
        "mode single batch 1\n",
        "\x00\xff garbage",
    ],
)
def test_a_malformed_timing_record_is_refused_not_a_crash(tmp_path, text):
    (tmp_path / "t.times").write_bytes(text.encode("utf-8", "surrogateescape"))
    assert supervisor_records.times(tmp_path, "t") is None
