"""The Python worker's parts that need no GPU: its KJP2 messages byte for byte against grader/boundary/protocol.h (a
C++ program packs and reads them), a MAP's file descriptor over a real SEQPACKET socket, the checks of a call's
layout, its seccomp filter (processes allowed, sockets and namespaces not) and Landlock (only the named programs
run)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from grader.run import binaries
from grader.toolchain import detect
from harness import kjp2, landlock
from harness.python_frameworks import loaded_library_folder
from harness.python_worker import valid

RUN = Path(binaries.RUN_SOURCES)
BOUNDARY = Path(binaries.BOUNDARY_SOURCES)  # protocol.h
PROBE = r"""
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unistd.h>
#include "protocol.h"
int main(int, char** argv) {  // argv: the fd to write a Go to, the fd to read a Reply from
    kjp::Go go{};
    go.magic = kjp::MAGIC, go.kind = kjp::CALL, go.call = 0x1122334455667788ull, go.buffers = 3, go.ints = 2;
    for (int j = 0; j < kjp::MAX_BUFFERS; ++j) go.offsets[j] = 4096ull * j + 7;
    for (int j = 0; j < kjp::MAX_INTS; ++j) go.values[j] = -j * 1000;
    go.sets = 5, go.outputs = 0b100, go.set_stride = 1ull << 33, go.spin_us = 4000;
    std::printf("%zu %zu %zu %zu %zu %zu\n", sizeof(kjp::Go), sizeof(kjp::Reply), offsetof(kjp::Go, offsets),
                offsetof(kjp::Go, values), offsetof(kjp::Go, set_stride), offsetof(kjp::Reply, call_ms));
    std::fflush(stdout);
    if (write(std::atoi(argv[1]), &go, sizeof go) != sizeof go) return 1;
    kjp::Reply r{};
    if (read(std::atoi(argv[2]), &r, sizeof r) != sizeof r) return 1;
    std::printf("%u %u %llu %.3f %.3f\n", r.magic, r.kind, (unsigned long long)r.call, r.call_ms, r.tail_ms);
}
"""


@pytest.fixture(scope="module")
def probe(tmp_path_factory) -> Path:
    if not detect().gxx:
        pytest.skip("no g++")
    folder = tmp_path_factory.mktemp("probe")
    (folder / "probe.cpp").write_text(PROBE)
    subprocess.run(
        ["g++", "-std=c++17", "-I", str(BOUNDARY), "-o", str(folder / "probe"), str(folder / "probe.cpp")], check=True
    )
    return folder / "probe"


def test_the_messages_have_protocol_h_s_layout_byte_for_byte(probe):
    go_read, go_write = os.pipe()
    reply_read, reply_write = os.pipe()
    os.write(reply_write, kjp2.pack_reply(kjp2.DONE, 41, 1.25, 0.5))
    process = subprocess.run(
        [str(probe), str(go_write), str(reply_read)], pass_fds=(go_write, reply_read), capture_output=True, text=True
    )
    os.close(go_write)
    data = os.read(go_read, 4096)
    sizes, reply = process.stdout.splitlines()
    assert [int(n) for n in sizes.split()] == [kjp2.GO.size, kjp2.REPLY.size, 24, 152, 224, 16]
    assert kjp2.GO.size == 240
    go = kjp2.Go.unpack(data)
    assert (go.kind, go.call, go.buffers, go.ints, go.sets, go.outputs) == (kjp2.CALL, 0x1122334455667788, 3, 2, 5, 4)
    assert go.offsets == tuple(4096 * j + 7 for j in range(16))
    assert go.values == tuple(-j * 1000 for j in range(16))
    assert (go.set_stride, go.spin_us) == (1 << 33, 4000)
    assert go.pack() == data  # and back, to the same bytes
    assert reply.split() == [str(kjp2.MAGIC), str(kjp2.DONE), "41", "1.250", "0.500"]


def test_a_message_of_another_size_or_magic_is_refused():
    with pytest.raises(kjp2.ProtocolError, match="240"):
        kjp2.Go.unpack(b"\0" * 16)
    with pytest.raises(kjp2.ProtocolError, match="magic"):
        kjp2.Go.unpack(b"\0" * kjp2.GO.size)


def test_map_brings_its_file_descriptor_over_the_seqpacket_socket(tmp_path):
    supervisor, worker = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    (tmp_path / "region").write_bytes(b"device memory stands in")
    with open(tmp_path / "region", "rb") as region:
        message = kjp2.Go(kjp2.MAP, set_stride=1 << 20).pack()
        supervisor.sendmsg(
            [message], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, region.fileno().to_bytes(4, sys.byteorder))]
        )
    got = kjp2.receive(worker)
    assert got is not None
    go, fd = got
    assert (go.kind, go.set_stride) == (kjp2.MAP, 1 << 20) and fd >= 0
    assert os.read(fd, 64) == b"device memory stands in"
    os.close(fd)
    supervisor.close()
    assert kjp2.receive(worker) is None  # the supervisor left: the worker ends
    worker.close()


def test_a_call_whose_buffers_leave_the_region_or_their_order_is_malformed():
    call = kjp2.Go(kjp2.CALL, buffers=2, offsets=(0, 4096) + (0,) * 14, sets=2, set_stride=8192)
    assert valid(call, 16384)
    assert not valid(kjp2.Go(kjp2.CALL, buffers=2, offsets=(0, 8192) + (0,) * 14, sets=1, set_stride=8192), 16384)
    assert not valid(kjp2.Go(kjp2.CALL, buffers=2, offsets=(4096, 0) + (0,) * 14, sets=1, set_stride=8192), 16384)
    assert not valid(kjp2.Go(kjp2.CALL, buffers=2, offsets=(0, 4096) + (0,) * 14, sets=3, set_stride=8192), 16384)
    assert not valid(kjp2.Go(kjp2.CALL, buffers=17, sets=1, set_stride=8192), 16384)


def _in_child(code: str, tmp_path: Path) -> subprocess.CompletedProcess:
    script = tmp_path / "child.py"
    script.write_text(textwrap.dedent(code))
    return subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(RUN.parents[1])},
    )


def test_the_python_workers_filter_lets_programs_start_but_no_socket_or_namespace(tmp_path):
    library = binaries.python_seccomp()
    child = _in_child(
        f"""
        import ctypes, socket, subprocess
        assert ctypes.CDLL({str(library)!r}).kerneljudge_install_seccomp_allowing_processes() == 0
        print("true ran:", subprocess.run(["/bin/true"]).returncode)
        try:
            socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        except PermissionError:
            print("socket refused")
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.unshare(0x40000000) != 0 and ctypes.get_errno() == 1:  # CLONE_NEWNET; EPERM
            print("unshare refused")
        """,
        tmp_path,
    )
    assert child.returncode == 0, child.stderr
    assert child.stdout.splitlines() == ["true ran: 0", "socket refused", "unshare refused"]


@pytest.mark.skipif(landlock.abi_version() == 0, reason="this kernel has no Landlock")
def test_landlock_lets_only_the_named_programs_run(tmp_path):
    child = _in_child(
        """
        import subprocess
        from harness import landlock
        landlock.allow_only_executing(["/bin/true"])
        print("true:", subprocess.run(["/bin/true"]).returncode)
        try:
            subprocess.run(["/bin/echo", "escaped"])
        except PermissionError:
            print("echo refused")
        """,
        tmp_path,
    )
    assert child.returncode == 0, child.stderr
    assert child.stdout.splitlines() == ["true: 0", "echo refused"]


@pytest.mark.skipif(landlock.abi_version() < 2, reason="Landlock ABI 2 (the REFER right) is not in this kernel")
def test_under_landlock_files_move_between_folders_only_where_allowed(tmp_path):
    # Triton builds its launcher in a temporary folder and moves it into its cache: on the H100 that rename died
    # with "Invalid cross-device link" (EXDEV) under the worker's Landlock domain until the run's folders allowed it.
    child = _in_child(
        f"""
        import os
        from harness import landlock
        for folder in ("run/tmp", "other/tmp"):
            os.makedirs("{tmp_path}/" + folder)
            open("{tmp_path}/" + folder + "/launcher.so", "w").close()
        landlock.allow_only_executing(["/bin/true"], ["{tmp_path}/run"])
        os.replace("{tmp_path}/run/tmp/launcher.so", "{tmp_path}/run/launcher.so")
        print("moved within the run's folder")
        try:
            os.replace("{tmp_path}/other/tmp/launcher.so", "{tmp_path}/other/launcher.so")
        except OSError as error:
            print("elsewhere:", os.strerror(error.errno))
        """,
        tmp_path,
    )
    assert child.returncode == 0, child.stderr
    assert child.stdout.splitlines() == ["moved within the run's folder", "elsewhere: Invalid cross-device link"]


def test_triton_is_told_where_the_loaded_libcuda_is_so_it_never_runs_ldconfig(tmp_path, monkeypatch):
    # On the H100 the JIT's first compile died on "Permission denied: '/sbin/ldconfig'" (Ubuntu's is a shell
    # script, outside what Landlock lets run): the worker names the folder of the driver it loaded instead.
    maps = tmp_path / "maps"
    maps.write_text(
        "7f0000000000-7f0000001000 rw-p 00000000 00:00 0 \n"
        "7f0000001000-7f0000002000 r-xp 00000000 08:01 42    /usr/local/nvidia/lib64/libcuda.so.580.159.04\n"
        "7f0000002000-7f0000003000 r-xp 00000000 08:01 43    /usr/lib/x86_64-linux-gnu/libc.so.6\n"
    )
    assert loaded_library_folder("libcuda.so", str(maps)) == "/usr/local/nvidia/lib64"
    assert loaded_library_folder("libnvrtc.so", str(maps)) == ""
    libc_folder = loaded_library_folder("libc.so")  # this very process, read from /proc/self/maps
    assert libc_folder and any(name.startswith("libc.so") for name in os.listdir(libc_folder))
    monkeypatch.setenv("TRITON_PTXAS_PATH", "/bin/true")  # no Triton installed here: its ptxas stands in
    assert not any("ldconfig" in program for program in landlock.jit_programs("triton"))


def test_platform_architecture_is_answered_before_solve_so_triton_starts_no_file_program():
    # On the H100 every Triton rung was refused with "starting file is not allowed": Triton keys its launcher's
    # cache by platform.architecture(), which runs `file` on the interpreter. The worker answers it beforehand.
    child = subprocess.run(
        [sys.executable, "-c", textwrap.dedent("""
            import platform, sys
            from harness.python_frameworks import remember_platform_architecture
            remember_platform_architecture()
            started = []
            sys.addaudithook(lambda event, args: started.append(args[0]) if event == "subprocess.Popen" else None)
            from platform import architecture
            print(architecture() == platform.architecture(), architecture()[0], started)
        """)],
        capture_output=True, text=True, cwd=Path(__file__).parent.parent,
    )  # fmt: skip
    assert child.returncode == 0, child.stderr
    assert child.stdout.split(maxsplit=1)[0] == "True"
    assert child.stdout.strip().endswith("[]"), child.stdout  # no program started after the first answer


def test_the_audit_hook_lets_the_jit_spawn_its_compilers_and_nothing_else(tmp_path):
    # Triton runs ptxas with close_fds=False, so subprocess spawns it (audit event os.posix_spawn as well as
    # subprocess.Popen): on the H100 every Triton rung was refused with "os.posix_spawn is not allowed".
    child = _in_child(
        """
        import os, subprocess
        from harness import python_guard
        python_guard.install_audit_hook([], ["/bin/true"])
        print("true:", subprocess.run(["/bin/true"], close_fds=False).returncode)
        for start in (lambda: subprocess.run(["/bin/echo"], close_fds=False), lambda: os.system("true")):
            try:
                start()
            except python_guard.NotAllowed as error:
                print("refused:", error)
        """,
        tmp_path,
    )
    assert child.returncode == 0, child.stderr
    assert child.stdout.splitlines() == [
        "true: 0",
        "refused: starting /bin/echo is not allowed (only the JIT's compilers may run)",
        "refused: os.system is not allowed",
    ]


def test_the_call_layout_gives_solves_arguments_in_signature_order_and_each_size_sets_shapes():
    from grader.problems.catalog import load_problem
    from grader.run import python_layout

    problem = load_problem("softmax")
    told = python_layout.layout(problem, problem.tests_for("triton")[:2])
    assert told["params"] == [{"buffer": 0, "dtype": "f32"}, {"buffer": 1, "dtype": "f32"}, {"size": 0}, {"size": 1}]
    first = problem.tests_for("triton")[0].sizes
    assert told["shapes"][f"{first['M']} {first['N']}"] == [[first["M"], first["N"]]] * 2
    assert str(problem.folder.parent.resolve()) in told["judge_paths"]  # the problems' references are the judge's


class _RecordingFramework:
    """A framework that records what the worker asks of it, in order (no GPU)."""

    def __init__(self, log: list[str]):
        self.log = log

    def event(self):
        return object()

    def array(self, address, shape, token):
        self.log.append(f"array {shape}")
        return address

    def record(self, event):
        self.log.append("event")

    def synchronize_device(self):
        pass

    def wait(self, event):
        pass

    def elapsed_ms(self, start, end):
        return 0.0

    def touch(self, address, words, write):
        self.log.append("touch")

    def spin(self, microseconds):
        pass


def test_a_calibration_call_makes_solves_arrays_before_its_first_event_as_a_call_does(monkeypatch):
    # The rest the supervisor calibrates with EMPTY must hold the Python time a CALL spends before its first event
    # (making solve's arrays): left out, an honest Triton call's clock bound sat 130 us over its claim (H100).
    from grader.problems.catalog import load_problem
    from grader.run import python_layout
    from harness import python_frameworks, python_worker

    problem = load_problem("softmax")
    test = problem.tests_for("triton")[1]
    m, n = test.sizes["M"], test.sizes["N"]
    log: list[str] = []
    monkeypatch.setattr(python_frameworks, "start", lambda track: _RecordingFramework(log))
    supervisor, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    worker = python_worker.Worker("triton", theirs, "submission.py", python_layout.layout(problem, [test]))
    stride = 2 * m * n * 4
    worker.region, worker.region_bytes = 1 << 40, stride
    worker.solve = lambda *arguments: log.append("solve")
    offsets = (0, m * n * 4) + (0,) * (kjp2.MAX_BUFFERS - 2)
    values = (m, n) + (0,) * (kjp2.MAX_INTS - 2)
    runs = {}
    for kind in (kjp2.EMPTY, kjp2.CALL):
        log.clear()
        worker.answer(kjp2.Go(kind, 7, 2, 2, offsets, values, 1, 0b10, stride))
        assert kjp2.unpack_reply(supervisor.recv(64))[:2] == (kjp2.DONE, 7)
        runs[kind] = list(log)
    made_then_timed = [f"array {(m, n)}", f"array {(m, n)}", "event"]
    assert runs[kjp2.EMPTY][:3] == runs[kjp2.CALL][:3] == made_then_timed
    assert "touch" in runs[kjp2.EMPTY] and "solve" in runs[kjp2.CALL]
    supervisor.close()
    theirs.close()
