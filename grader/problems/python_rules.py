"""What a submission on a Python track may use: the rules the statement and the starter state, as data.

The Python tracks are kernel tracks: the work must be done in kernels the submission writes (`@triton.jit`
functions on the triton track; `cupy.RawKernel`, `RawModule`, `ElementwiseKernel` or `ReductionKernel` on the
cupy track). PyTorch and CuPy are there to hand over the buffers, allocate scratch memory and describe arrays
(shape, strides, dtype, pointer, views), not to compute: a library routine would solve most problems outright.

grader/build/python_check.py enforces these rules on the source before it runs (a broken rule is `rejected`,
naming the line); harness/python_guard.py enforces what can only be seen at run time (imports and files of the
judge, PyTorch operators on the triton track).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Rules:
    track: str
    modules: frozenset[str]  # what may be imported (exactly these names)
    allowed: frozenset[str]  # dotted names host code may reach from an imported module
    namespaces: frozenset[str]  # dotted names below which everything may be reached (triton.language)
    kernel_decorators: frozenset[str]  # decorators whose function is a kernel, compiled, not run by Python
    summary: str  # the rules in words, for the statement and the starter


# Python names whose use is never allowed: they reach objects by name at run time, read files, or execute text,
# so no rule about names written in the source could hold.
FORBIDDEN_BUILTINS = frozenset(
    {"eval", "exec", "compile", "__import__", "getattr", "setattr", "delattr", "open", "globals", "locals", "vars"}
    | {"breakpoint"}
)

# Methods of tensors and arrays that compute, copy or move data: on a kernel track a submission's own kernels
# do that. Applies to any object outside a kernel (the source says no types: `d.copy()` of a dict is refused too).
COMPUTE_METHODS = frozenset(
    [
        "matmul",
        "mm",
        "bmm",
        "dot",
        "vdot",
        "inner",
        "outer",
        "einsum",
        "tensordot",
        "addmm",
        "addmv",
        "baddbmm",
        "addbmm",
        "mv",
        "kron",
        "sum",
        "nansum",
        "mean",
        "prod",
        "max",
        "min",
        "amax",
        "amin",
        "argmax",
        "argmin",
        "cumsum",
        "cumprod",
        "cummax",
        "cummin",
        "logsumexp",
        "softmax",
        "log_softmax",
        "norm",
        "var",
        "std",
        "median",
        "sort",
        "argsort",
        "topk",
        "kthvalue",
        "exp",
        "exp2",
        "expm1",
        "log",
        "log2",
        "log10",
        "log1p",
        "sqrt",
        "rsqrt",
        "sigmoid",
        "tanh",
        "relu",
        "relu_",
        "gelu",
        "erf",
        "pow",
        "square",
        "abs",
        "neg",
        "reciprocal",
        "clamp",
        "clamp_",
        "clip",
        "maximum",
        "minimum",
        "where",
        "add",
        "add_",
        "sub",
        "sub_",
        "mul",
        "mul_",
        "div",
        "div_",
        "true_divide",
        "floor_divide",
        "fmod",
        "remainder",
        "addcmul",
        "addcdiv",
        "lerp",
        "copy_",
        "fill_",
        "zero_",
        "fill",
        "index_copy",
        "index_copy_",
        "index_add",
        "index_add_",
        "scatter",
        "scatter_",
        "scatter_add",
        "gather",
        "take",
        "put",
        "put_",
        "index_select",
        "masked_fill",
        "masked_fill_",
        "masked_scatter",
        "clone",
        "contiguous",
        "copy",
        "to",
        "cuda",
        "cpu",
        "numpy",
        "tolist",
        "item",
        "get",
        "set",
        "astype",
        "tobytes",
        "flip",
        "roll",
        "repeat",
        "tile",
        "triu",
        "tril",
        "diag",
        "trace",
        "layer_norm",
        "rms_norm",
        "conv1d",
        "conv2d",
        "linear",
        "cross_entropy",
        "scaled_dot_product_attention",
    ]
)

_TRITON_SUMMARY = """\
Triton track: solve receives PyTorch CUDA tensors and launches @triton.jit kernels, which do the work.
May import: torch, triton, triton.language, math, typing, functools.
From torch, host code may use only: torch.empty, empty_like, empty_strided, zeros, zeros_like, the dtypes
(torch.float32, ...), torch.Tensor, and a tensor's shape, strides, dtype, numel, data_ptr, stride, size,
element_size, is_contiguous, dim, and views (view, t, T, transpose, permute, unsqueeze, squeeze, narrow).
From triton: jit, autotune, heuristics, Config, cdiv, next_power_of_2, and triton.language.
Not allowed: PyTorch operators or routines that compute (torch.matmul, torch.softmax, torch.nn.functional,
x + y on tensors, x.sum(), x.copy_(...)), torch.cuda (streams, events, synchronisation), triton.testing,
reading files, importing anything else (the judge's own modules included), and names reached at run time
(getattr, eval, exec, attributes starting with _)."""

_CUPY_SUMMARY = """\
CuPy track: solve receives CuPy arrays and launches its own kernels (cupy.RawKernel, RawModule,
ElementwiseKernel, ReductionKernel), which do the work.
May import: cupy, math, typing, functools.
From cupy, host code may use only: the kernel classes above, cupy.empty, empty_like, zeros, zeros_like,
cupy.ndarray, the dtypes (cupy.float32, cupy.int32, ...), and an array's shape, strides, dtype, size, nbytes,
itemsize, ndim, data.ptr and views (view, T, transpose).
Not allowed: CuPy routines and operators that compute (cupy.matmul, cupy.linalg, cupy.sum, x @ y, x.sum(),
x + y on arrays), cupy.cuda (streams, events, synchronisation), reading files, importing anything else (the
judge's own modules included), and names reached at run time (getattr, eval, exec, attributes starting
with _). A bfloat16 buffer is its raw bits (cupy.uint16), an fp8 e4m3 one too (cupy.uint8)."""

_DTYPES_TORCH = "float32 float16 bfloat16 float8_e4m3fn float64 int32 int64 int16 int8 uint8 bool"
_DTYPES_CUPY = "float32 float16 float64 int32 int64 int16 int8 uint32 uint16 uint8 uint64 bool_"

RULES = {
    "triton": Rules(
        track="triton",
        modules=frozenset({"torch", "triton", "triton.language", "math", "typing", "functools"}),
        allowed=frozenset(
            [
                f"torch.{name}"
                for name in ["empty", "empty_like", "empty_strided", "zeros", "zeros_like", "Tensor", "dtype"]
            ]
            + [f"torch.{name}" for name in _DTYPES_TORCH.split()]
            + [
                f"triton.{name}"
                for name in ["jit", "autotune", "heuristics", "Config", "cdiv", "next_power_of_2", "language"]
            ]
        ),
        namespaces=frozenset({"triton.language", "math", "typing", "functools"}),
        kernel_decorators=frozenset({"triton.jit", "triton.autotune", "triton.heuristics"}),
        summary=_TRITON_SUMMARY,
    ),
    "cupy": Rules(
        track="cupy",
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
            + [f"cupy.{name}" for name in _DTYPES_CUPY.split()]
        ),
        namespaces=frozenset({"math", "typing", "functools"}),
        kernel_decorators=frozenset(),
        summary=_CUPY_SUMMARY,
    ),
}


def rules_for(track: str) -> Rules:
    return RULES[track]
