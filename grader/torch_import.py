"""PyTorch, imported on first use: `from grader.torch_import import torch` gives a stand-in that imports the real
module the first time one of its attributes is read, so the modules of a grading (the request, the checker)
can be loaded without paying for PyTorch until the check stage needs it. `warm()` starts that import in a
background thread, then the modules a caller named with `also_warm` (those it reads only once the grading is
over, as the CLI's database layer); the pipeline calls it once the sandboxed run is under way, when its own
thread only waits:
an import running beside the grading's file reads and forks holds the GIL against them (each read waits for
the import to give the GIL up), which made a 10 ms digest of the grader's code take half a second.
"""

from __future__ import annotations

import importlib
import logging  # noqa: F401  (imported with this module, in its importer's thread: see warm)
import threading
from typing import TYPE_CHECKING, Any


class _Torch:
    """Reads through to the real `torch`, importing it the first time (Python's import lock makes a read in
    one thread wait for an import under way in another)."""

    def __getattr__(self, name: str) -> Any:
        return getattr(importlib.import_module("torch"), name)


if TYPE_CHECKING:
    import torch as torch
else:
    torch = _Torch()


_ALSO: list[str] = []  # imported by warm() after PyTorch (also_warm)


def also_warm(module: str) -> None:
    """Have `warm()` import `module` too, after PyTorch: one this process reads only once the grading is over."""
    if module not in _ALSO:
        _ALSO.append(module)


_imported = threading.Event()  # set once a warm() thread has imported PyTorch


def _import_all(modules: tuple[str, ...]) -> None:
    for name in modules:
        importlib.import_module(name)
        if name == "torch":
            _imported.set()


def warm() -> None:
    """Import PyTorch, then the modules `also_warm` named, in a daemon thread now; whoever reads one of them later
    finds it loaded or waits for it.

    `logging` is imported with this module, in its importer's thread. Its import registers a pair of fork hooks
    (take its lock before a fork, release it after in the parent); imported by PyTorch's import in the thread
    while another one forks (the sandbox, /proc readers), the pair can be registered between the fork's two
    halves, and the parent's half releases a lock it never took: "RuntimeError: cannot release un-acquired lock"
    on stderr. start_on_gpu, which may import PyTorch from a thread of its own, relies on it too.
    """
    modules = ("torch", *_ALSO)
    threading.Thread(target=_import_all, args=(modules,), daemon=True, name="import torch").start()


def start_on_gpu() -> None:
    """PyTorch's CUDA context on this process's GPU, made now where a warm() thread has imported PyTorch and the
    context does not exist yet. A grade-many runner makes it before its run calibrates, while nothing is timed on
    its GPU, rather than in its check, which the GPU's next run waits for: a first check that made the context
    took 2-3 s where four GPUs' runners made theirs at once, against 0.3 s. Where the import is still under way,
    the check makes it: waiting here would hold the calibration back by the rest of the import."""
    if not _imported.is_set():
        return
    real = importlib.import_module("torch")
    if real.cuda.is_available() and not real.cuda.is_initialized():
        real.zeros(1, device="cuda")
