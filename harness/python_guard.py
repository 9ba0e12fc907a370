"""The Python tracks' rules at run time (the static half is grader/build/python_check.py): what the source's
names cannot show is refused where it happens, with a message that says which rule.

- An audit hook (sys.addaudithook: it cannot be removed once added), installed before the submission is
  imported: no import of the judge's modules (grader, harness, the problems' references), no file opened under
  the judge's folders, no program started but the compilers the JIT needs (Landlock enforces the same in the
  kernel: harness/landlock.py).
- During solve on the triton track, a PyTorch dispatch mode that lets through only the operators that allocate
  or describe memory (empty, zeros, views): `x + y`, `out.copy_(...)` or `torch.softmax` on the buffers raise.
- During solve on the cupy track, CuPy's own elementwise and reduction kernels (named `cupy_*`: `x + y`,
  `out[...] = x`) may not be compiled; the kernels the submission writes may.
A refusal raises NotAllowed; the worker reports it and the verdict is `rejected`.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path

JUDGE_MODULES = ("grader", "harness", "kerneljudge_reference")
# PyTorch operators that allocate or describe memory, by their overload packet's name
TORCH_ALLOWED = frozenset(
    [
        "empty",
        "empty_like",
        "empty_strided",
        "zeros",
        "zeros_like",
        "zero_",
        "view",
        "_unsafe_view",
        "t",
        "transpose",
        "permute",
        "unsqueeze",
        "squeeze",
        "narrow",
        "slice",
        "select",
        "as_strided",
        "alias",
        "detach",
        "expand",
        "unbind",
        "split",
    ]
)
CUPY_OWN_KERNEL = re.compile(r"\bcupy_[A-Za-z0-9_]+\s*\(")


class NotAllowed(Exception):
    """A rule of the track was broken at run time."""


def install_audit_hook(judge_paths: list[str], programs: list[str]) -> None:
    """Refuse imports of the judge's modules, opening files under `judge_paths`, and starting any program
    but `programs` (absolute paths), from now on, in every thread."""
    judged = tuple(os.path.realpath(p) for p in judge_paths)
    allowed = frozenset(os.path.realpath(p) for p in programs)

    def hook(event: str, args: tuple) -> None:
        if event == "import" and args and str(args[0]).split(".")[0].startswith(JUDGE_MODULES):
            raise NotAllowed(f"importing {args[0]} is not allowed: the judge's modules are not part of the track")
        if event == "open" and args and isinstance(args[0], (str, bytes, os.PathLike)):
            path = os.path.realpath(os.fsdecode(args[0]))
            if any(path == j or path.startswith(j + os.sep) for j in judged):
                raise NotAllowed(f"opening {path} is not allowed: it is one of the judge's files")
        # subprocess raises "subprocess.Popen" and, where it spawns (Triton's ptxas: close_fds=False), also
        # "os.posix_spawn"; both name the program first
        if event in ("subprocess.Popen", "os.posix_spawn", "os.exec") and args:
            program = _resolve(args[0])
            if program not in allowed:
                raise NotAllowed(f"starting {args[0]} is not allowed (only the JIT's compilers may run)")
        if event in ("os.system", "os.spawn", "os.fork", "os.forkpty"):
            raise NotAllowed(f"{event} is not allowed")

    sys.addaudithook(hook)


def _resolve(program: object) -> str:
    """The absolute, resolved path `program` (a path or a name looked up in PATH) starts."""
    name = os.fsdecode(program) if isinstance(program, (str, bytes, os.PathLike)) else str(program)
    if os.sep not in name:
        for folder in os.environ.get("PATH", "").split(os.pathsep):
            candidate = Path(folder) / name
            if candidate.is_file():
                return os.path.realpath(candidate)
    return os.path.realpath(name)


def install_cupy_check() -> None:
    """Wrap CuPy's one entry to its kernel compiler, so its own kernels (cupy_*) cannot be built inside solve."""
    from cupy.cuda import compiler

    original = compiler._compile_module_with_cache

    def compile_checked(source, *args, **kwargs):
        found = CUPY_OWN_KERNEL.search(source) if _solving else None
        if found:
            raise NotAllowed(
                f"CuPy's own kernel {found.group(0).rstrip('( ')} was built inside solve (an array operator or "
                "routine outside your kernels): on the cupy track the work must be done in your "
                "RawKernel/ElementwiseKernel/ReductionKernel"
            )
        return original(source, *args, **kwargs)

    compiler._compile_module_with_cache = compile_checked


_solving = False  # inside a call of solve (the cupy check applies only there)


@contextlib.contextmanager
def solving(track: str) -> Iterator[None]:
    """Entered around each call of solve: the track's run-time rule is in force inside."""
    global _solving
    _solving = True
    try:
        if track == "triton":
            with _torch_guard():
                yield
        else:
            yield
    finally:
        _solving = False


@contextlib.contextmanager
def _torch_guard() -> Iterator[None]:
    from torch.utils._python_dispatch import TorchDispatchMode

    class OnlyAllocationAndViews(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            name = func.overloadpacket.__name__
            if name not in TORCH_ALLOWED:
                raise NotAllowed(
                    f"the PyTorch operator {name} computed on the GPU outside your Triton kernels: on the triton "
                    "track PyTorch may only allocate and describe memory"
                )
            return func(*args, **(kwargs or {}))

    with OnlyAllocationAndViews():
        yield
