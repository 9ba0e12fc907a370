"""The tracks a submission can be written for, and what each one is: its language, the device it runs on, the
file it is written in, and how a track is told from a file.

    track    language        device  file   solve receives
    cuda     CUDA C++        cuda    .cu    device pointers
    cpu      C++ (OpenMP)    cpu     .cpp   host pointers
    triton   Python, Triton  cuda    .py    PyTorch CUDA tensors
    cupy     Python, CuPy    cuda    .py    CuPy arrays

A problem's tests and benchmarks are written per device (`tracks: [cuda]` in problem.yaml): the Python tracks
run the CUDA device's tests and benchmarks, so their verdicts and scores compare with the CUDA track's. A .py
file's track follows what it imports (triton or cupy); `--track` overrides it.

The CPU track runs OpenMP with CPU_THREADS threads on every host, however many cores it has: the number of
threads decides how a `reduction(+:s)` splits a float sum, and so whether it passes the tolerance, so a verdict
must not depend on the machine (times do).
"""

from __future__ import annotations

import ast
from pathlib import Path

TRACKS: tuple[str, ...] = ("cuda", "cpu", "triton", "cupy")
PYTHON_TRACKS: tuple[str, ...] = ("triton", "cupy")
DEVICES = {"cuda": "cuda", "cpu": "cpu", "triton": "cuda", "cupy": "cuda"}
EXTENSIONS = {"cuda": ".cu", "cpu": ".cpp", "triton": ".py", "cupy": ".py"}
LANGUAGES = {"cuda": "cuda", "cpu": "cpp", "triton": "python", "cupy": "python"}  # for highlighting the source
CPU_THREADS = 4  # OpenMP threads of every CPU-track run (stated in `grader show`, the site and the README)


def cpu_environment() -> dict[str, str]:
    """What a CPU-track run's environment fixes: its OpenMP thread count, and a cap no call can raise."""
    return {"OMP_NUM_THREADS": str(CPU_THREADS), "OMP_THREAD_LIMIT": str(CPU_THREADS)}


def device(track: str) -> str:
    """The device a track runs on ("cuda" or "cpu"): the problem's tests and benchmarks for it."""
    return DEVICES[track]


def is_python(track: str) -> bool:
    return track in PYTHON_TRACKS


def track_of(path: Path, source: bytes | None = None) -> str | None:
    """The track a file implies: .cu -> cuda, .cpp/.cc/.cxx -> cpu, a .py file -> the framework it imports
    (triton or cupy; None when it imports neither, or both, or does not parse)."""
    suffix = path.suffix.lower()
    if suffix == ".cu":
        return "cuda"
    if suffix in (".cpp", ".cc", ".cxx"):
        return "cpu"
    if suffix != ".py":
        return None
    text = source if source is not None else _read(path)
    found = imported_frameworks(text) if text is not None else set()
    return found.pop() if len(found) == 1 else None


def imported_frameworks(source: bytes) -> set[str]:
    """Which of the Python tracks' frameworks (triton, cupy) a source imports at any depth."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return set()
    roots: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            roots.add(node.module.split(".")[0])
    return roots & set(PYTHON_TRACKS)


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None
