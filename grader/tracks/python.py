"""What the Python tracks (triton, cupy) share: the run's environment, and the rule of which track a .py
file is (the framework it imports).

A Python track's source is byte-compiled and checked against its rules (grader/build/python_check.py), then run
by the Python worker (harness/python_worker.py) under the CUDA supervisor: Triton and NVRTC compile its kernels
in the run, in its JIT stage (one untimed call per size set before the tests, on a budget of its own), and what
they compiled is kept for the next run of the same source (grader/run/jit_cache.py).
"""

from __future__ import annotations

import ast
from pathlib import Path

from grader import python_ast
from grader.tracks import cuda

TRITON_CACHE, CUPY_CACHE = ".triton", ".cupy"  # the JIT caches' folders in the run's working folder


def environment(workdir: Path) -> dict[str, str]:
    """The CUDA environment, and the JIT caches of Triton and CuPy in the run's own bounded folder: it starts with
    what earlier runs of the same source compiled (grader/run/jit_cache.py), never with another source's. Triton's
    autotuner keeps its timings there too (TRITON_CACHE_AUTOTUNING), so a source graded again picks its configs
    from its own earlier run instead of timing every one of them in the JIT stage again."""
    env = cuda.environment(workdir)
    root = str(Path(env["LD_LIBRARY_PATH"]).parent) if env["LD_LIBRARY_PATH"] else ""
    caches = {
        "TRITON_CACHE_DIR": str(workdir / TRITON_CACHE),
        "TRITON_CACHE_AUTOTUNING": "1",
        "CUPY_CACHE_DIR": str(workdir / CUPY_CACHE),
    }
    return {**env, **caches, **({"CUDA_PATH": root} if root else {})}


def imported_modules(source: bytes) -> set[str]:
    """The top-level names of the modules a source imports at any depth (none when it does not parse)."""
    try:
        tree = python_ast.parse_module(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return set()
    roots: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            roots.add(node.module.split(".")[0])
    return roots
