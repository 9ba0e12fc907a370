"""The autotuner's report that the Python worker writes at EXIT (harness/autotuned.py), from real @triton.autotune
objects made on the CPU (nothing launched: each autotuner's choice is set by hand, as a run's JIT stage leaves it),
bounded and never raising on the submission's objects; and the worker's part: the file opened before the sandbox's
layers where the call layout asks for it, written when the supervisor says EXIT."""

from __future__ import annotations

import json
import os
import socket
import sys
import textwrap
from pathlib import Path
from types import ModuleType

import pytest
from submission_modules import import_from

from harness import autotuned, cuda_vmm, kjp2, landlock, python_frameworks, python_guard, python_worker

triton = pytest.importorskip("triton")

SUBMISSION = """
import triton
import triton.language as tl

CONFIGS = [triton.Config({"BLOCK_M": 64, "BLOCK_N": 64}, num_warps=4, num_stages=3)]


@triton.autotune(configs=CONFIGS, key=["M", "N"])
@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pass


@triton.heuristics(values={"EVEN_N": lambda args: args["N"] % 64 == 0})
@triton.autotune(configs=CONFIGS, key=["N"])
@triton.jit
def softmax_kernel(x_ptr, y_ptr, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, EVEN_N: tl.constexpr):
    pass


@triton.autotune(configs=CONFIGS, key=["N"])
@triton.heuristics(values={"EVEN_N": lambda args: args["N"] % 64 == 0})
@triton.jit
def scale_kernel(x_ptr, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, EVEN_N: tl.constexpr):
    pass


@triton.jit
def plain_kernel(x_ptr, N):
    pass


same_kernel = matmul_kernel


def solve(a, b, c, M, N, K):
    pass
"""


@pytest.fixture
def submission(tmp_path) -> ModuleType:
    """The submission's module, imported from its file as the worker imports it (Triton reads a kernel's source)."""
    return import_from(tmp_path / "submission.py", SUBMISSION)


def reported(module: object) -> list[dict]:
    return json.loads(autotuned.report(module))


def test_each_autotuned_kernel_reports_the_config_it_chose_for_each_key(submission):
    submission.matmul_kernel.cache[(4096, 2048, "torch.float16", "torch.float16", "torch.float32")] = triton.Config(
        {"BLOCK_M": 128, "BLOCK_N": 256}, num_warps=8, num_stages=4
    )
    submission.matmul_kernel.cache[(37, 1013, "torch.float16", "torch.float16", "torch.float32")] = triton.Config(
        {"BLOCK_M": 32, "BLOCK_N": 64}, num_warps=2, num_stages=2, maxnreg=128
    )
    submission.softmax_kernel.fn.cache[(8192, "torch.float32", "torch.float32")] = triton.Config({"BLOCK_N": 1024})
    submission.scale_kernel.cache[(77, "torch.float32")] = triton.Config({"BLOCK_N": 128}, num_warps=1)
    entries = reported(submission)
    assert entries[0] == {
        "kernel": "matmul_kernel",
        "key": {"M": "4096", "N": "2048"},
        "extra": ["torch.float16", "torch.float16", "torch.float32"],
        "config": {
            "kwargs": {"BLOCK_M": 128, "BLOCK_N": 256},
            "num_warps": 8,
            "num_stages": 4,
            "num_ctas": 1,
            "maxnreg": None,
        },
    }
    assert entries[1]["key"] == {"M": "37", "N": "1013"} and entries[1]["config"]["maxnreg"] == 128
    # under @triton.heuristics, or over it; the alias `same_kernel` adds nothing; the plain kernel has no autotuner
    assert [(e["kernel"], e["key"], e["config"]["kwargs"]) for e in entries[2:]] == [
        ("softmax_kernel", {"N": "8192"}, {"BLOCK_N": 1024}),
        ("scale_kernel", {"N": "77"}, {"BLOCK_N": 128}),
    ]


def test_a_kernel_not_yet_tuned_reports_nothing(submission):
    assert autotuned.report(submission) == b"[]"


def test_the_report_is_bounded_in_entries_characters_and_bytes(submission):
    cache = submission.matmul_kernel.cache
    for m in range(65):
        cache[(m, "x" * 1000, "torch.float16")] = triton.Config({"BLOCK_M": 64, "NOTE": "y" * 1000})
    entries = reported(submission)
    assert len(entries) == autotuned.MAX_ENTRIES == 64
    assert entries[0]["key"] == {"M": "0", "N": "'" + "x" * 199} and entries[0]["config"]["kwargs"]["NOTE"] == "y" * 200

    cache.clear()
    for m in range(65):  # 64 kwargs of 200 characters each: about 26 KiB an entry
        cache[(m, 1, "torch.float16")] = triton.Config({f"K{i}_" + "k" * 300: "v" * 300 for i in range(100)})
    data = autotuned.report(submission)
    assert len(data) <= autotuned.MAX_BYTES
    assert all(len(e["config"]["kwargs"]) == 64 for e in json.loads(data))


def test_values_that_are_not_json_scalars_are_shown_as_their_repr_and_control_characters_are_replaced(submission):
    submission.matmul_kernel.cache[(1, 2, "torch.float16")] = triton.Config(
        {"SHAPE": (16, 16), "RATIO": float("nan"), "HUGE": 1 << 70, "LINE": "a\nb\x1b[31m"}
    )
    (entry,) = reported(submission)
    assert entry["config"]["kwargs"] == {
        "SHAPE": "(16, 16)",
        "RATIO": "nan",
        "HUGE": str(1 << 70),
        "LINE": "a\ufffdb\ufffd[31m",
    }


def test_a_config_whose_fields_are_not_tritons_is_left_out(submission):
    odd = triton.Config({"BLOCK_M": 64})
    odd.num_warps = "eight"
    submission.matmul_kernel.cache[(1, 2, "torch.float16")] = odd
    submission.matmul_kernel.cache[(3, 4, "torch.float16")] = triton.Config({"BLOCK_M": 32})
    assert [e["key"] for e in reported(submission)] == [{"M": "3", "N": "4"}]


def test_a_hostile_object_gives_an_empty_report_and_never_an_exception(submission):
    def explode(self, name):
        raise SystemExit(f"{name}: from the submission")

    hostile = type("Autotuner", (), {"__module__": "triton.runtime.autotuner", "__getattribute__": explode})
    submission.matmul_kernel.cache[(1, 2, "torch.float16")] = triton.Config({"BLOCK_M": 64})
    submission.trap = hostile()
    assert autotuned.report(submission) == b"[]"
    assert autotuned.report(None) == b"[]"  # no module loaded


def test_write_puts_the_whole_report_into_the_file_opened_before(tmp_path, submission, monkeypatch):
    monkeypatch.chdir(tmp_path)
    submission.matmul_kernel.cache[(1, 2, "torch.float16")] = triton.Config({"BLOCK_M": 64})
    fd = autotuned.open_file()
    assert fd is not None
    autotuned.write(fd, submission)
    written = Path(tmp_path / autotuned.FILE_NAME).read_bytes()
    assert written == autotuned.report(submission) and json.loads(written)[0]["kernel"] == "matmul_kernel"


class _Layers:
    """The sandbox's layers as the worker's load() installs them, left out (they cannot be undone in the test's
    process); each notes whether the report's file was there by then."""

    def __init__(self, monkeypatch):
        self.report_was_open: list[bool] = []
        monkeypatch.setattr(landlock, "jit_programs", lambda track: [])
        monkeypatch.setattr(landlock, "abi_version", lambda: 0)
        monkeypatch.setattr(python_guard, "install_audit_hook", lambda paths, programs: self.note())
        monkeypatch.setattr(python_worker.ctypes, "CDLL", lambda path: self)  # the seccomp library

    def kerneljudge_install_seccomp_allowing_processes(self) -> int:
        self.note()
        return 0

    def note(self) -> None:
        self.report_was_open.append(os.path.exists(autotuned.FILE_NAME))


class _Exited(Exception):
    """os._exit, raised instead of ending the test's process."""


def _exit(status: int):
    raise _Exited(status)


@pytest.mark.parametrize("reports", [True, False], ids=["triton", "a track that does not report"])
def test_the_worker_writes_the_report_when_the_supervisor_says_exit(tmp_path, monkeypatch, reports):
    monkeypatch.chdir(tmp_path)  # the run's folder is the worker's working folder
    tuned = 'matmul_kernel.cache[(64, 64, "torch.float16")] = CONFIGS[0]  # as the JIT stage leaves it\n'
    (tmp_path / "submission.py").write_text(textwrap.dedent(SUBMISSION) + tuned)
    layers = _Layers(monkeypatch)
    monkeypatch.setattr(python_frameworks, "start", lambda track: _NoDevice())
    monkeypatch.setattr(cuda_vmm, "map_region", lambda fd, size: os.close(fd) or 1 << 40)
    monkeypatch.setattr(os, "_exit", _exit)
    supervisor, control = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    worker = python_worker.Worker(
        "triton", control, "submission.py", {"judge_paths": [], "reports_autotuning": reports}
    )
    with open(tmp_path / "region", "wb") as region:  # stands in for the device memory's file descriptor
        rights = region.fileno().to_bytes(4, sys.byteorder)
        map_go = kjp2.Go(kjp2.MAP, offsets=(64, 128) + (0,) * 14, set_stride=1 << 20)
        supervisor.sendmsg([map_go.pack()], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, rights)])
    for kind in (kjp2.LOAD, kjp2.EXIT):
        supervisor.send(kjp2.Go(kind).pack())
    with pytest.raises(_Exited):
        worker.serve()
    supervisor.close()
    control.close()
    if not reports:
        assert not (tmp_path / autotuned.FILE_NAME).exists()
        return
    assert layers.report_was_open == [True, True]  # before seccomp and before the audit hook
    (entry,) = json.loads((tmp_path / autotuned.FILE_NAME).read_bytes())
    assert (entry["kernel"], entry["key"], entry["config"]["kwargs"]) == (
        "matmul_kernel",
        {"M": "64", "N": "64"},
        {"BLOCK_M": 64, "BLOCK_N": 64},
    )


class _NoDevice:
    """The framework the worker starts, where nothing needs a GPU: the worker asks it for its three events."""

    def event(self) -> object:
        return object()
