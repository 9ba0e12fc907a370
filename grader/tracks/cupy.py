"""The CuPy track: Python that launches its own kernels (cupy.RawKernel, RawModule, ElementwiseKernel,
ReductionKernel) on CuPy arrays, which do the work; checked against its rules (below) and run by the Python
worker on the GPU. CuPy has no bfloat16 nor fp8: such a buffer is its raw bits (cupy.uint16, cupy.uint8).
"""

from __future__ import annotations

from typing import Any

from grader.tracks import python
from grader.tracks.base import PythonFramework, PythonRules, Starter, Track
from grader.tracks.devices import CUDA

NAME = "cupy"

SUMMARY = """\
CuPy track: solve receives CuPy arrays and launches its own kernels (cupy.RawKernel, RawModule,
ElementwiseKernel, ReductionKernel), which do the work.
May import: cupy, math, typing, functools.
From cupy, host code may use only: the kernel classes above, cupy.empty, empty_like, zeros, zeros_like,
cupy.ndarray, the dtypes (cupy.float32, cupy.int32, ...), and an array's shape, strides, dtype, size, nbytes,
itemsize, ndim, data.ptr and views (view, T, transpose).
From cupy.cuda: Device, Stream, Event, get_current_stream, get_elapsed_time and cupy.cuda.runtime's device
queries (getDeviceProperties, getDevice, getDeviceCount, deviceSynchronize).
Not allowed: CuPy routines and operators that compute (cupy.matmul, cupy.linalg, cupy.sum, x @ y, x.sum(),
x + y on arrays), reading files, importing anything else (the judge's own modules included), and names
reached at run time (getattr, eval, exec, attributes starting with _). A bfloat16 buffer is its raw bits (cupy.uint16), an fp8 e4m3 one too (cupy.uint8)."""

DTYPES = "float32 float16 float64 int32 int64 int16 int8 uint32 uint16 uint8 uint64 bool_"
# cupy.cuda's devices, streams, events and device queries: the judge's clock is not in the worker, so timing or
# synchronising one's own work forges nothing (docs/timing.md, "The judge's clock")
CUPY_CUDA = "Device Stream Event get_current_stream get_elapsed_time"
CUPY_RUNTIME = "getDeviceProperties getDevice getDeviceCount deviceSynchronize"

RULES = PythonRules(
    track=NAME,
    modules=frozenset({"cupy", "math", "typing", "functools"}),
    allowed=frozenset(
        [
            f"cupy.{name}"
            for name in [
                "RawKernel",
                "RawModule",
                "ElementwiseKernel",
                "ReductionKernel",
                "empty",
                "empty_like",
                "zeros",
                "zeros_like",
                "ndarray",
                "dtype",
            ]
        ]
        + [f"cupy.{name}" for name in DTYPES.split()]
        + [f"cupy.cuda.{name}" for name in CUPY_CUDA.split()]
        + [f"cupy.cuda.runtime.{name}" for name in CUPY_RUNTIME.split()]
    ),
    namespaces=frozenset({"math", "typing", "functools"}),
    kernel_decorators=frozenset(),
    summary=SUMMARY,
)


def _from_torch(tensor: Any) -> Any:
    """A PyTorch CUDA tensor as a CuPy array over the same memory."""
    import cupy

    return cupy.from_dlpack(tensor)


TRACK = Track(
    name=NAME,
    title="CuPy",
    extensions=(".py",),
    highlight="python",
    device=CUDA,
    starter=Starter(
        "import cupy\n",
        "launch your cupy.RawKernel (or Elementwise/ReductionKernel) kernels on the outputs",
    ),
    environment=python.environment,
    jit_stage=True,
    jit_caches=(python.CUPY_CACHE,),
    python=PythonFramework(
        module="cupy",
        reached=("cupy",),
        distributions=("cupy-cuda13x", "cupy-cuda12x", "cupy"),
        array_type="cupy.ndarray",
        dtypes={
            "f32": "cupy.float32",
            "f16": "cupy.float16",
            "bf16": "cupy.uint16",
            "i32": "cupy.int32",
            "i8": "cupy.int8",
            "e4m3": "cupy.uint8",
        },
        rules=RULES,
        from_torch=_from_torch,
    ),
)
