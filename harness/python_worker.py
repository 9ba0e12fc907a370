"""kerneljudge Python worker: the untrusted half of a run on the triton and cupy tracks, in place of
harness/gpu_worker.cu and answering the same trusted supervisor (grader/run/cuda_supervisor.cu) with the same
messages (harness/kjp2.py; grader/boundary/protocol.h): MAP -> MAPPED; EMPTY -> READY, DONE (calibration, before
any submission code exists in the process); LOAD -> LOADED; then CALL/EMPTY -> READY, DONE ... EXIT.

It runs in the sandbox. It starts CUDA through the track's framework (harness/python_frameworks.py), maps the device
memory whose file descriptor came with MAP (harness/cuda_vmm.py), and answers EMPTY with a stand-in that reads every
input and writes every output, after making the arrays a CALL would (their cost is part of the rest the supervisor
calibrates). On LOAD it installs the seccomp filter (processes allowed, for the JIT: harness/python_seccomp.cpp),
Landlock (only the JIT's compilers may run: harness/landlock.py) and the audit hook (harness/python_guard.py), then
imports the submission and says LOADED. For each CALL it makes each set's arrays first; then, on the stream it calls on
(the framework's current stream), it queues a wait for the GATE word (a word of the shared device memory, named by MAP)
to hold the call's mark, calls `solve` once per set between two CUDA events, inside the track's run-time rules, and
queues the mark's write into the DONE word; then it says READY. The supervisor's own events, around raising GATE and the
DONE word, are the call's time, and the interpreter's launches were all made before it: none of their gaps is inside. It
waits for the whole device and answers DONE with its events' times: from the first event to the second and from there
until the device was idle (work left on another stream). EMPTY goes the same way with its stand-in. The first call of
each kernel compiles it (Triton, NVRTC): the supervisor's first calls are its JIT stage's, one per size set, on inputs
no test or benchmark sees, untimed and on a budget of their own (each a CALL like a test's first draw). On EXIT,
where the call layout says the track reports it, it writes what its autotuners chose (harness/autotuned.py) into the
file it opened before the sandbox's layers.

Usage (in the run folder, which holds call_layout.json, python_seccomp.so and the submission, and gets autotuned.json):
    python -E -s -m harness.python_worker TRACK CONTROL_FD SUBMISSION
"""

from __future__ import annotations

import ctypes
import functools
import importlib.util
import json
import os
import socket
import sys
from collections.abc import Callable
from types import ModuleType
from typing import Any, NoReturn

from harness import autotuned, cuda_vmm, kjp2, landlock, python_errors, python_frameworks, python_guard

LAYOUT_FILE = "call_layout.json"  # the grader's: how solve's arguments are made of a call's buffers and sizes
SECCOMP_LIBRARY = "./python_seccomp.so"


def fail(what: str) -> NoReturn:
    """End the worker with the harness's message (the verdict's detail) and status 3, as gpu_worker.cu does."""
    sys.stderr.write(f"kerneljudge harness: {what}\n")
    sys.stderr.flush()
    os._exit(3)


class Worker:
    def __init__(self, track: str, control: socket.socket, submission: str, layout: dict):
        self.track, self.control, self.submission, self.layout = track, control, submission, layout
        self.framework = python_frameworks.start(track)
        self.start, self.returned, self.idle = (self.framework.event() for _ in range(3))
        self.region = 0
        self.region_bytes = 0
        self.gate = 0  # the GATE word's device address: the supervisor's GPU raises it
        self.done = 0  # the DONE word's device address
        self.solve: Callable[..., Any] | None = None
        self.module: ModuleType | None = None  # the submission's, once loaded: its autotuners are reported at EXIT
        self.report_fd: int | None = None  # harness/autotuned.py's file, where the track reports autotuning

    def receive(self) -> tuple[kjp2.Go, tuple[int, ...]]:
        try:
            got = kjp2.receive(self.control)
        except kjp2.ProtocolError:
            fail("malformed message from the supervisor")
        if got is None:
            os._exit(0)  # the supervisor left
        return got

    def reply(self, kind: int, call: int, call_ms: float = 0.0, tail_ms: float = 0.0) -> None:
        if not kjp2.send_reply(self.control, kind, call, call_ms, tail_ms):
            os._exit(0)  # the supervisor left

    def serve(self) -> None:
        go, fds = self.receive()
        if go.kind != kjp2.MAP or len(fds) != 1 or max(go.offsets[0], go.offsets[1]) + 4 > go.set_stride:
            fail("expected the shared buffers from the supervisor")
        self.region_bytes = go.set_stride
        self.region = cuda_vmm.map_region(fds[0], go.set_stride)
        self.done, self.gate = self.region + go.offsets[0], self.region + go.offsets[1]
        self.reply(kjp2.MAPPED, 0)
        while True:
            go, fds = self.receive()
            if fds:
                fail("an unexpected file descriptor from the supervisor")
            if go.kind == kjp2.EXIT:
                self.end()
            elif go.kind == kjp2.LOAD and self.solve is None:
                self.load()
                self.reply(kjp2.LOADED, 0)
            elif go.kind == kjp2.EMPTY or (go.kind == kjp2.CALL and self.solve is not None):
                self.answer(go)
            else:
                fail("a message out of order from the supervisor")

    def answer(self, go: kjp2.Go) -> None:
        """A CALL (solve on each set) or an EMPTY (the calibration's stand-in), timed and answered. Both
        make solve's arrays before the first event and hold them until the call ends, so that the rest the
        supervisor calibrates with EMPTY includes the same steps."""
        if go.ints > kjp2.MAX_INTS or not valid(go, self.region_bytes):
            fail("malformed call")
        made = [self.arguments(go, s) for s in range(go.sets if go.buffers or go.kind == kjp2.CALL else 0)]
        work = self.call_solve if go.kind == kjp2.CALL else functools.partial(self.touch, go)
        self.timed(go, functools.partial(work, made))

    def end(self) -> NoReturn:
        """EXIT: the autotuner's report written (where the track reports it), what solve printed flushed (it
        reaches the verdict's output tail), and the worker's end."""
        if self.report_fd is not None:
            autotuned.write(self.report_fd, self.module)
        sys.stdout.flush()
        os._exit(0)

    def load(self) -> None:
        """The report's file where the track reports autotuning (opened now: once the layers are on, an open
        may be refused), the sandbox's last layers, then the submission; its solve."""
        if self.layout["reports_autotuning"]:
            self.report_fd = autotuned.open_file()
        programs = landlock.jit_programs(self.track)
        if ctypes.CDLL(SECCOMP_LIBRARY).kerneljudge_install_seccomp_allowing_processes() != 0:
            fail("cannot install the seccomp filter")
        if landlock.abi_version() > 0:
            # the JIT caches live in the run's own folders (HOME, TMPDIR): files move within them
            landlock.allow_only_executing(programs, [os.environ.get("HOME", ""), os.environ.get("TMPDIR", "")])
        python_guard.install_audit_hook(self.layout["judge_paths"], programs)
        if self.track == "cupy":
            python_guard.install_cupy_check()
        spec = importlib.util.spec_from_file_location("submission", self.submission)
        if spec is None or spec.loader is None:
            fail(f"cannot load the submission {self.submission}")
        module = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(module)
        except python_guard.NotAllowed as error:
            fail(f"not allowed: {error}")
        except BaseException as error:
            self.failed(error, "while loading")
        self.module = module
        solve = getattr(module, "solve", None)
        if not callable(solve):
            fail("the submission has no function solve")
        self.solve = solve

    def arguments(self, go: kjp2.Go, set_index: int) -> list[Any]:
        """solve's arguments for one set of a call: each buffer as an array of its shape, each size an int."""
        values = list(go.values[: go.ints])
        shapes = self.layout["shapes"].get(" ".join(map(str, values)))
        if shapes is None or len(shapes) != go.buffers:
            fail("a call with sizes the grader did not announce")
        base = self.region + set_index * go.set_stride
        made: list[Any] = []
        for param in self.layout["params"]:
            if "size" in param:
                made.append(values[param["size"]])
            else:
                j = param["buffer"]
                made.append(self.framework.array(base + go.offsets[j], tuple(shapes[j]), param["dtype"]))
        return made

    def call_solve(self, calls: list[list[Any]]) -> None:
        assert self.solve is not None
        try:
            with python_guard.solving(self.track):
                for arguments in calls:
                    self.solve(*arguments)
        except python_guard.NotAllowed as error:
            fail(f"not allowed: {error}")
        except BaseException as error:
            self.failed(error, "in solve")

    def failed(self, error: BaseException, during: str) -> NoReturn:
        """End the worker for an exception of the submission's code: its frames of the submission (for the run's
        output), then the message in the user's terms (harness/python_errors.py)."""
        sys.stderr.write(python_errors.user_traceback(error, self.submission))
        fail(python_errors.describe(error, self.submission, during))

    def touch(self, go: kjp2.Go, made: list[list[Any]]) -> None:
        """The calibration's stand-in for a submission: every input word read, every output word written; then,
        if asked, the GPU kept busy a while (the calibration's longer calls). `made`, the arrays a CALL would
        get, is not used: see `answer`."""
        for s in range(go.sets):
            for j in range(go.buffers):
                end = go.offsets[j + 1] if j + 1 < go.buffers else go.set_stride
                address = self.region + go.offsets[j] + s * go.set_stride
                self.framework.touch(address, (end - go.offsets[j]) // 4, bool((go.outputs >> j) & 1))
        if go.spin_us:
            self.framework.spin(go.spin_us)

    def timed(self, go: kjp2.Go, work: Callable[[], None]) -> None:
        """On the stream solve is called on: a wait for the GATE word to hold the call's mark (the supervisor's GPU
        raises it once its stream has recorded its first event), an event, `work`, an event, and the mark written
        into the DONE word (the supervisor's stream waits for it to record its second event); READY once all of it
        is queued. A solve that waits for its own work cannot return before GATE is raised: the supervisor goes on
        without READY after a few milliseconds (cuda_supervisor.cu, READY_WAIT_MS), and READY comes when it
        returns. Then the whole device is waited for and a third event measures how long work outlived the call.
        DONE carries the worker's two times."""
        framework = self.framework
        try:
            framework.wait_word(self.gate, go.mark)
            framework.record(self.start)
            work()
            framework.record(self.returned)
            framework.write_word(self.done, go.mark)
            self.reply(kjp2.READY, go.call)
            framework.synchronize_device()
            framework.record(self.idle)
            framework.wait(self.idle)
            call_ms = framework.elapsed_ms(self.start, self.returned)
            tail_ms = framework.elapsed_ms(self.returned, self.idle)
        except cuda_vmm.DriverError as error:  # the GATE word's wait, the DONE word's write
            fail(str(error))
        except Exception as error:  # a kernel that faulted surfaces at an event or the wait
            fail(f"CUDA error during the submission's solve: {error}")
        self.reply(kjp2.DONE, go.call, call_ms, tail_ms)


def valid(go: kjp2.Go, region_bytes: int) -> bool:
    """Every set's buffers lie inside the region, in order (as gpu_worker.cu's check)."""
    if go.buffers > kjp2.MAX_BUFFERS or go.sets == 0 or go.set_stride > region_bytes:
        return False
    if go.sets > region_bytes // max(go.set_stride, 1):
        return False
    offsets = go.offsets[: go.buffers]
    return all(o < go.set_stride for o in offsets) and all(a <= b for a, b in zip(offsets, offsets[1:]))


def main(argv: list[str]) -> None:
    if len(argv) != 4 or argv[1] not in ("triton", "cupy"):
        fail("usage: python -m harness.python_worker triton|cupy CONTROL_FD SUBMISSION")
    with open(LAYOUT_FILE) as file:
        layout = json.load(file)
    control = socket.socket(fileno=int(argv[2]))
    Worker(argv[1], control, argv[3], layout).serve()


if __name__ == "__main__":
    main(sys.argv)
