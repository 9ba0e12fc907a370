"""The Python worker's parts that need no GPU: its KJP2 messages byte for byte against grader/boundary/protocol.h (a
C++ program packs and reads them), a MAP's two file descriptors over a real SEQPACKET socket, the checks of a
call's layout, the order of a call's steps around the GATE and DONE words and READY, its seccomp
filter (processes allowed, sockets and namespaces not) and Landlock (only the named programs run)."""

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
    go.sets = 5, go.outputs = 0b100, go.set_stride = 1ull << 33, go.spin_us = 4000, go.mark = 0xcafef00d;
    std::printf("%zu %zu %zu %zu %zu %zu %zu %u\n", sizeof(kjp::Go), sizeof(kjp::Reply), offsetof(kjp::Go, offsets),
                offsetof(kjp::Go, values), offsetof(kjp::Go, set_stride), offsetof(kjp::Go, mark),
                offsetof(kjp::Reply, call_ms), (unsigned)kjp::READY);
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
    assert [int(n) for n in sizes.split()] == [kjp2.GO.size, kjp2.REPLY.size, 24, 152, 224, 236, 16, kjp2.READY]
    assert kjp2.GO.size == 240
    go = kjp2.Go.unpack(data)
    assert (go.kind, go.call, go.buffers, go.ints, go.sets, go.outputs) == (kjp2.CALL, 0x1122334455667788, 3, 2, 5, 4)
    assert go.offsets == tuple(4096 * j + 7 for j in range(16))
    assert go.values == tuple(-j * 1000 for j in range(16))
    assert (go.set_stride, go.spin_us, go.mark) == (1 << 33, 4000, 0xCAFEF00D)
    assert go.pack() == data  # and back, to the same bytes
    assert reply.split() == [str(kjp2.MAGIC), str(kjp2.DONE), "41", "1.250", "0.500"]


def test_a_message_of_another_size_or_magic_is_refused():
    with pytest.raises(kjp2.ProtocolError, match="240"):
        kjp2.Go.unpack(b"\0" * 16)
    with pytest.raises(kjp2.ProtocolError, match="magic"):
        kjp2.Go.unpack(b"\0" * kjp2.GO.size)


def _send(control: socket.socket, go: kjp2.Go, fds: list[int]) -> None:
    rights = b"".join(fd.to_bytes(4, sys.byteorder) for fd in fds)
    control.sendmsg([go.pack()], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, rights)] if fds else [])


def test_map_brings_the_device_memorys_file_descriptor_and_a_call_brings_none(tmp_path):
    supervisor, worker = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    (tmp_path / "region").write_bytes(b"device memory stands in")
    with open(tmp_path / "region", "rb") as region:
        map_go = kjp2.Go(kjp2.MAP, offsets=(64, 128) + (0,) * 14, set_stride=1 << 20)
        _send(supervisor, map_go, [region.fileno()])
    got = kjp2.receive(worker)
    assert got is not None
    go, fds = got
    assert (go.kind, go.set_stride, go.offsets[:2], len(fds)) == (kjp2.MAP, 1 << 20, (64, 128), 1)
    assert os.read(fds[0], 64) == b"device memory stands in"
    os.close(fds[0])
    _send(supervisor, kjp2.Go(kjp2.CALL, 3), [])
    assert kjp2.receive(worker) == (kjp2.Go(kjp2.CALL, 3), ())  # a call brings none
    supervisor.close()
    assert kjp2.receive(worker) is None  # the supervisor left: the worker ends
    worker.close()


def test_a_message_with_more_file_descriptors_than_map_brings_is_refused(tmp_path):
    supervisor, worker = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    files = [open(tmp_path / f"f{k}", "wb") for k in range(kjp2.MAX_FDS + 1)]
    _send(supervisor, kjp2.Go(kjp2.MAP, set_stride=1 << 20), [f.fileno() for f in files])
    with pytest.raises(kjp2.ProtocolError, match=r"more than 1 file descriptor\(s\)"):
        kjp2.receive(worker)
    for f in files:
        f.close()
    supervisor.close()
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
    told = python_layout.layout(problem, problem.tests_for("triton")[:2], reports_autotuning=True)
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

    def wait_word(self, address, value):
        self.log.append(f"wait for {value} at {address:#x}")

    def write_word(self, address, value):
        self.log.append(f"write {value} at {address:#x}")

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


class _Softmax:
    """A worker with a recording framework, mapped (its region an address only) and loaded, and the supervisor's
    end of its socket; a call on one set of a softmax test. Its replies are logged with the framework's steps."""

    REGION, DONE_OFFSET, GATE_OFFSET = 1 << 40, 64, 128

    def __init__(self, monkeypatch):
        from grader.problems.catalog import load_problem
        from grader.run import python_layout
        from harness import python_frameworks, python_worker

        problem = load_problem("softmax")
        test = problem.tests_for("triton")[1]
        m, n = test.sizes["M"], test.sizes["N"]
        self.shape = (m, n)
        self.log: list[str] = []
        monkeypatch.setattr(python_frameworks, "start", lambda track: _RecordingFramework(self.log))
        self.supervisor, self.theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.supervisor.settimeout(30)  # a worker that never answers fails the test instead of hanging it
        layout = python_layout.layout(problem, [test], reports_autotuning=True)
        self.worker = python_worker.Worker("triton", self.theirs, "submission.py", layout)
        self.stride = 2 * m * n * 4
        self.worker.region, self.worker.region_bytes = self.REGION, self.stride
        self.worker.done = self.REGION + self.DONE_OFFSET
        self.worker.gate = self.REGION + self.GATE_OFFSET
        reply = self.worker.reply

        def logged_reply(kind: int, call: int, *times: float) -> None:
            self.log.append("READY" if kind == kjp2.READY else "DONE")
            reply(kind, call, *times)

        self.worker.reply = logged_reply  # type: ignore[method-assign]
        self.worker.solve = lambda *arguments: self.log.append("solve")
        self.offsets = (0, m * n * 4) + (0,) * (kjp2.MAX_BUFFERS - 2)
        self.values = (m, n) + (0,) * (kjp2.MAX_INTS - 2)

    def go(self, kind: int, mark: int) -> kjp2.Go:
        return kjp2.Go(kind, 7, 2, 2, self.offsets, self.values, 1, 0b10, self.stride, mark=mark)

    def replies(self) -> tuple[int, int]:
        return kjp2.unpack_reply(self.supervisor.recv(64))[:2]

    def close(self) -> None:
        for end in (self.supervisor, self.theirs):
            end.close()


def test_a_calibration_call_makes_solves_arrays_before_its_first_event_as_a_call_does(monkeypatch):
    # The rest the supervisor calibrates with EMPTY must hold the same steps as a CALL's: left out, an honest
    # Triton call's clock bound sat 130 us over its claim (H100).
    softmax = _Softmax(monkeypatch)
    runs = {}
    for mark, kind in enumerate((kjp2.EMPTY, kjp2.CALL), start=1):
        softmax.log.clear()
        softmax.worker.answer(softmax.go(kind, mark))
        assert [softmax.replies(), softmax.replies()] == [(kjp2.READY, 7), (kjp2.DONE, 7)]
        runs[kind] = [step.replace(f"wait for {mark} ", "wait ") for step in softmax.log]
    gate = f"wait at {softmax.REGION + softmax.GATE_OFFSET:#x}"
    made_then_timed = [f"array {softmax.shape}", f"array {softmax.shape}", gate, "event"]
    assert runs[kjp2.EMPTY][:4] == runs[kjp2.CALL][:4] == made_then_timed
    assert "touch" in runs[kjp2.EMPTY] and "solve" in runs[kjp2.CALL]
    softmax.close()


def test_a_call_queues_its_work_behind_the_gate_and_says_ready_once_done_is_queued(monkeypatch):
    # The supervisor's first event is recorded before its GPU raises GATE to the call's mark, and its second waits
    # for the DONE word: the stream holds solve's work until GATE holds this call's mark, and DONE is written after
    # solve's "returned" event on the same stream. READY comes only once all of it is queued, so no launch of
    # the interpreter's is left for the supervisor's interval; DONE once the device is idle.
    softmax = _Softmax(monkeypatch)
    softmax.worker.answer(softmax.go(kjp2.CALL, 5))
    assert [softmax.replies(), softmax.replies()] == [(kjp2.READY, 7), (kjp2.DONE, 7)]
    gate = f"wait for 5 at {softmax.REGION + softmax.GATE_OFFSET:#x}"
    done = f"write 5 at {softmax.REGION + softmax.DONE_OFFSET:#x}"
    made = [f"array {softmax.shape}"] * 2
    assert softmax.log == [*made, gate, "event", "solve", "event", done, "READY", "event", "DONE"]
    softmax.close()
