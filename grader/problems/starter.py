"""Starter files for `grader init`: the problem's signature, its shapes, and a TODO, per track."""

from grader.problems.spec import Problem

_TRACK_NOTES = {
    "cuda": (
        "#include <cuda_runtime.h>\n",
        "Pointers are device pointers. Launch your kernels here; the judge waits for the device\n"
        "    // after solve returns. Only the CUDA runtime may be used.",
    ),
    "cpu": (
        "#include <cmath>\n#include <omp.h>\n",
        "Pointers are host pointers. OpenMP is available (g++ -O3 -march=native -fopenmp).",
    ),
}


def starter(problem: Problem, track: str) -> str:
    includes, note = _TRACK_NOTES[track]
    shapes = "\n".join(
        f"//   {p.name:<8} {p.role:<6} {' x '.join(str(d) for d in p.dims)}" for p in problem.pointer_params
    )
    return (
        f"// {problem.title} ({track} track): kerneljudge starter.\n"
        f"// Row-major float32 arrays:\n{shapes}\n"
        f"// Check it with: grader test {problem.slug} <this file>; time it with: grader submit ...\n"
        f"{includes}\n"
        f"{problem.prototype()} {{\n"
        f"    // TODO: compute the outputs. {note}\n"
        f"}}\n"
    )
