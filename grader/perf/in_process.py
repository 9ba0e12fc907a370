"""A reference solution called in the grader's own process, for the timing studies that must call it directly
(triton.testing.do_bench, ncu): a compiled CUDA rung through its kerneljudge_entry, or a Python rung's `solve` on
PyTorch tensors (triton track) or on CuPy arrays over the same memory (cupy track, through DLPack).

Never used to grade: it runs outside the sandbox, so it only ever loads the project's own solutions.
"""

from __future__ import annotations

import ctypes
import importlib.util
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from grader import tracks
from grader.build import compiler
from grader.problems.spec import Problem, SizeSet
from grader.run import inputs as gen


def _buffers(problem: Problem, size_set: SizeSet, inputs: dict[str, torch.Tensor]) -> list[torch.Tensor]:
    """The call's buffers in signature order: the given inputs, and fresh outputs of the right shapes."""
    outputs = {
        p.name: torch.empty(problem.shape(p, size_set.sizes), dtype=gen.torch_dtype(p.dtype), device="cuda")
        for p in problem.output_params
    }
    return [inputs[p.name] if p.role == "input" else outputs[p.name] for p in problem.pointer_params]


@dataclass
class CompiledSolution:
    problem: Problem
    entry: Callable[[Any, Any], Any]  # kerneljudge_entry(pointers, sizes) of the loaded library

    def call_args(self, size_set: SizeSet, inputs: dict[str, torch.Tensor]) -> tuple:
        buffers = _buffers(self.problem, size_set, inputs)
        pointers = (ctypes.c_void_p * len(buffers))(*[b.data_ptr() for b in buffers])
        sizes = (ctypes.c_int * len(self.problem.size_names))(*[size_set.sizes[n] for n in self.problem.size_names])
        return pointers, sizes, buffers  # buffers keep the tensors alive

    def __call__(self, pointers, sizes, _buffers=None):
        self.entry(pointers, sizes)


@dataclass
class PythonSolution:
    problem: Problem
    solve: Callable[..., Any]
    track: str  # triton (PyTorch tensors) or cupy (CuPy arrays)

    def call_args(self, size_set: SizeSet, inputs: dict[str, torch.Tensor]) -> tuple:
        framework = tracks.get(self.track).python
        assert framework is not None
        buffers = iter([framework.from_torch(b) for b in _buffers(self.problem, size_set, inputs)])
        return tuple(
            size_set.sizes[p.name] if p.role == "size" else next(buffers) for p in self.problem.signature
        )  # fmt: skip

    def __call__(self, *args):
        self.solve(*args)


def load(problem: Problem, path: Path, track: str) -> CompiledSolution | PythonSolution:
    """The solution at `path`, built (cuda) or imported (triton, cupy), ready to call."""
    if tracks.get(track).compiled is not None:
        build = compiler.build_submission(problem, path.read_bytes(), path.name, track)
        if not build.ok:
            raise RuntimeError(f"{path} does not compile:\n{build.log}")
        entry = ctypes.CDLL(str(build.library)).kerneljudge_entry
        entry.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
        return CompiledSolution(problem, entry)
    spec = importlib.util.spec_from_file_location(f"kerneljudge_rung_{path.stem}", path)
    if spec is None or spec.loader is None:
        raise RuntimeError(f"{path} cannot be imported")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return PythonSolution(problem, module.solve, track)
