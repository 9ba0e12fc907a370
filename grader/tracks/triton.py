"""The Triton track: Python that launches @triton.jit kernels on PyTorch CUDA tensors, which do the work;
checked against its rules (below) and run by the Python worker on the GPU.
"""

from __future__ import annotations

from grader.tracks import python
from grader.tracks.base import PythonFramework, PythonRules, Starter, Track
from grader.tracks.devices import CUDA

NAME = "triton"

SUMMARY = """\
Triton track: solve receives PyTorch CUDA tensors and launches @triton.jit kernels, which do the work.
May import: torch, triton, triton.language, triton.runtime, triton.testing, math, typing, functools.
From torch, host code may use only: torch.empty, empty_like, empty_strided, zeros, zeros_like, the dtypes
(torch.float32, ...), torch.Tensor, torch.device, and a tensor's shape, strides, dtype, numel, data_ptr, stride,
size, element_size, is_contiguous, dim, and views (view, t, T, transpose, permute, unsqueeze, squeeze, narrow);
torch.cuda's streams, events, synchronisation and device queries (Event, Stream, current_stream, synchronize,
get_device_properties, ...).
From triton: jit, autotune, heuristics, Config, cdiv, next_power_of_2, triton.language, triton.runtime.driver
(device properties), triton.testing (do_bench), and a compiled kernel's warmup and _init_handles.
Not allowed: PyTorch operators or routines that compute (torch.matmul, torch.softmax, torch.nn.functional,
x + y on tensors, x.sum(), x.copy_(...)), reading files, importing anything else (the judge's own modules
included), and names reached at run time (getattr, eval, exec, other attributes starting with _)."""

# The starter shows autotuning as an accepted pattern: the judge tunes in the JIT stage, before the tests
AUTOTUNE_EXAMPLE = """
# Autotuning works as on your own machine; for example, above a kernel:
#     @triton.autotune(configs=[triton.Config({"BLOCK": 1024}, num_warps=4),
#                               triton.Config({"BLOCK": 4096}, num_warps=8)], key=["N"])
#     @triton.jit
#     def kernel(x, y, N, BLOCK: tl.constexpr):
# launched as kernel[lambda meta: (triton.cdiv(N, meta["BLOCK"]),)](x, y, N). The judge compiles and tunes it in
# an untimed stage before the tests, on a budget of its own (grader show PROBLEM: "Compiling and autotuning").
"""

DTYPES = "float32 float16 bfloat16 float8_e4m3fn float64 int32 int64 int16 int8 uint8 bool"
# torch.cuda's streams, events, synchronisation and device queries: the judge's clock is not in the worker, so
# timing or synchronising one's own work forges nothing (docs/timing.md, "The judge's clock")
TORCH_CUDA = (
    "Event Stream current_stream default_stream stream set_stream synchronize get_device_properties "
    "current_device device_count is_available get_device_name get_device_capability"
)

RULES = PythonRules(
    track=NAME,
    modules=frozenset(
        {"torch", "triton", "triton.language", "triton.runtime", "triton.testing", "math", "typing", "functools"}
    ),
    allowed=frozenset(
        [
            f"torch.{name}"
            for name in ["empty", "empty_like", "empty_strided", "zeros", "zeros_like", "Tensor", "dtype", "device"]
        ]
        + [f"torch.{name}" for name in DTYPES.split()]
        + [f"torch.cuda.{name}" for name in TORCH_CUDA.split()]
        + [
            f"triton.{name}"
            for name in ["jit", "autotune", "heuristics", "Config", "cdiv", "next_power_of_2", "language", "testing"]
        ]
        + ["triton.runtime", "triton.runtime.driver"]
    ),
    namespaces=frozenset({"triton.language", "triton.runtime.driver", "triton.testing", "math", "typing", "functools"}),
    kernel_decorators=frozenset({"triton.jit", "triton.autotune", "triton.heuristics"}),
    summary=SUMMARY,
)

TRACK = Track(
    name=NAME,
    title="Triton",
    extensions=(".py",),
    highlight="python",
    device=CUDA,
    starter=Starter(
        "import torch\nimport triton\nimport triton.language as tl\n" + AUTOTUNE_EXAMPLE,
        "launch your @triton.jit kernels on the outputs (the judge waits for the device after solve returns)",
    ),
    environment=python.environment,
    jit_stage=True,
    jit_caches=(python.TRITON_CACHE,),
    python=PythonFramework(
        module="triton",
        reached=("torch", "triton"),
        distributions=("triton",),
        array_type="torch.Tensor",
        dtypes={
            "f32": "torch.float32",
            "f16": "torch.float16",
            "bf16": "torch.bfloat16",
            "i32": "torch.int32",
            "i8": "torch.int8",
            "e4m3": "torch.float8_e4m3fn",
        },
        rules=RULES,
        reports_autotuning=True,
    ),
)
