"""The CUDA track: CUDA C++, compiled by nvcc for the GPU's own feature set into a shared library that the GPU
worker loads; solve receives device pointers. The only track profiled under Nsight Compute.
"""

from __future__ import annotations

import os
from pathlib import Path

from grader.toolchain import Toolchain, detect
from grader.tracks.base import Compiled, Starter, Track
from grader.tracks.devices import CUDA

NAME = "cuda"
HEADERS = {
    "f16": "#include <cuda_fp16.h>\n",
    "bf16": "#include <cuda_bf16.h>\n",
    "e4m3": "#include <cuda_fp8.h>\n",
    "i8": "#include <cstdint>\n",
}  # what a buffer of each element type needs, in this order


def environment(workdir: Path) -> dict[str, str]:
    """What the CUDA runtime needs in the sandbox: its libraries, a JIT cache of the run's own, and the GPU the
    grader itself was given (a worker pinned to one GPU)."""
    env = {"LD_LIBRARY_PATH": detect().cuda_lib_dir, "CUDA_CACHE_PATH": str(workdir / ".nv")}
    if os.environ.get("CUDA_VISIBLE_DEVICES"):
        env["CUDA_VISIBLE_DEVICES"] = os.environ["CUDA_VISIBLE_DEVICES"]
    return env


def _command(tools: Toolchain) -> list[str]:
    if not tools.nvcc:
        raise RuntimeError("the CUDA track needs nvcc, and none was found")
    return [
        tools.nvcc,
        "-O3",
        "-std=c++17",
        *tools.arch_flags,
        "-shared",
        "-Xcompiler",
        "-fPIC",
        "-cudart",
        "shared",
        "-Xlinker",
        "-z",
        "-Xlinker",
        "defs",
        "-lineinfo",
    ]


def _runner_command(tools: Toolchain) -> list[str]:
    flags = [tools.nvcc or "nvcc", "-O2", "-std=c++17", *tools.arch_flags, "-x", "cu", "-DKJ_CUDA"]
    return flags + ["-cudart", "shared", "-Xcompiler", "-ffp-contract=off"]


def _with_arch(line: str, tools: Toolchain) -> str:
    """nvcc's version line with the -arch it compiles for ('' where there is no nvcc)."""
    return f"{line}, -arch={tools.cuda_arch}" if line else ""


TRACK = Track(
    name=NAME,
    title="CUDA",
    extensions=(".cu",),
    highlight="cuda",
    device=CUDA,
    starter=Starter(
        "#include <cuda_runtime.h>\n",
        "Pointers are device pointers. Launch your kernels here; the judge waits for the device\n"
        "    // after solve returns. Only the CUDA runtime may be used.",
    ),
    environment=environment,
    compiled=Compiled(
        program="nvcc",
        command=_command,
        runner_command=_runner_command,
        version=lambda tools: _with_arch(tools.nvcc_version, tools),
        in_image=_with_arch,
        worker="gpu_worker",
        headers=lambda tokens: "".join(HEADERS[t] for t in HEADERS if t in tokens),
    ),
    profiled=True,
)
