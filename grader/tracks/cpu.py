"""The CPU track: C++ with OpenMP, compiled by g++ into a shared library that the C++ worker loads; solve
receives host pointers.

It runs OpenMP with THREADS threads on every host, however many cores it has: the number of threads decides how
a `reduction(+:s)` splits a float sum, and so whether it passes the tolerance, so a verdict must not depend on
the machine (times do). 16-bit floats are their raw bits (uint16_t): g++ 12 has no bfloat16 type; fp8 e4m3
ones too (uint8_t).
"""

from __future__ import annotations

from pathlib import Path

from grader.toolchain import Toolchain
from grader.tracks.base import Compiled, Starter, Track
from grader.tracks.devices import CPU

NAME = "cpu"
THREADS = 4  # OpenMP threads of every CPU-track run (stated in `grader show`, the site and the README)


def environment(workdir: Path | None = None) -> dict[str, str]:
    """What a CPU-track run's environment fixes: its OpenMP thread count, and a cap no call can raise."""
    return {"OMP_NUM_THREADS": str(THREADS), "OMP_THREAD_LIMIT": str(THREADS)}


def _command(tools: Toolchain) -> list[str]:
    if not tools.gxx:
        raise RuntimeError("the CPU track needs g++, and none was found")
    return [tools.gxx, "-O3", "-march=native", "-fopenmp", "-std=c++17", "-shared", "-fPIC", "-Wl,-z,defs"]


def _runner_command(tools: Toolchain) -> list[str]:
    return [tools.gxx or "g++", "-O2", "-std=c++17", "-fopenmp", "-ffp-contract=off", "-x", "c++"]


def _headers(tokens: set[str]) -> str:
    """What the helpers that convert raw float bits (grader/problems/dtypes.py CPU_HELPERS, CPU_FP8_HELPERS)
    need first, or an int8 buffer's int8_t."""
    if tokens & {"f16", "bf16", "e4m3"}:
        return "#include <cstdint>\n#include <cstring>\n\n"
    return "#include <cstdint>\n" if "i8" in tokens else ""


TRACK = Track(
    name=NAME,
    title="C++",
    extensions=(".cpp", ".cc", ".cxx"),
    highlight="cpp",
    device=CPU,
    starter=Starter(
        "#include <cmath>\n#include <omp.h>\n",
        "Pointers are host pointers. OpenMP is available (g++ -O3 -march=native -fopenmp).",
    ),
    environment=environment,
    compiled=Compiled(
        program="g++",
        command=_command,
        runner_command=_runner_command,
        version=lambda tools: tools.gxx_version,
        in_image=lambda line, tools: line,
        worker="worker",
        raw_float_bits=True,
        headers=_headers,
    ),
)
