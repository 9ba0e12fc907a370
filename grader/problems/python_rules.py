"""What a submission on a Python track may use: the rules the statement and the starter state, as data (what
every Python track refuses here; each track's own allowances in its file under grader/tracks/).

The Python tracks are kernel tracks: the work must be done in kernels the submission writes (`@triton.jit`
functions on the triton track; `cupy.RawKernel`, `RawModule`, `ElementwiseKernel` or `ReductionKernel` on the
cupy track). PyTorch and CuPy are there to hand over the buffers, allocate scratch memory and describe arrays
(shape, strides, dtype, pointer, views), not to compute: a library routine would solve most problems outright.

grader/build/python_check.py enforces these rules on the source before it runs (a broken rule is `rejected`,
naming the line); harness/python_guard.py enforces what can only be seen at run time (imports and files of the
judge, PyTorch operators on the triton track).
"""

from __future__ import annotations

from grader import tracks
from grader.tracks.base import PythonRules as Rules

# Python names whose use is never allowed: they reach objects by name at run time, read files, or execute text,
# so no rule about names written in the source could hold.
FORBIDDEN_BUILTINS = frozenset(
    {"eval", "exec", "compile", "__import__", "getattr", "setattr", "delattr", "open", "globals", "locals", "vars"}
    | {"breakpoint"}
)

# The attributes starting with `_` a Triton user's code ordinarily calls (the official fused-softmax tutorial
# loads a warmed-up kernel's handles to read its registers and shared memory).
ALLOWED_PRIVATE_ATTRIBUTES = frozenset({"_init_handles"})

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


def rules_for(track: str) -> Rules:
    """The rules of a Python track (its file in grader/tracks/ holds them)."""
    framework = tracks.get(track).python
    if framework is None:
        raise ValueError(f"the {track} track is not a Python track")
    return framework.rules
