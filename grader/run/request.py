"""The request a run reads on stdin: its cases, their secrets, sizes and buffers, as the run's programs parse it.

One text format for the three readers: the CPU track's trusted supervisor (grader/run/supervisor.cpp), the CUDA
track's (grader/run/cuda_supervisor.cu), and the in-process harness (harness/runner.cpp) the container and the
profiler still run. Each buffer names its element type, so inputs are generated and outputs poisoned in it:
  case NAME check SECRET DRAWS | case NAME bench SECRET MIN_SAMPLES MAX_SAMPLES BUDGET_MS AUDITS
  ints K v1..vK   buffers B   then B times: in DTYPE COUNT LOW_BITS SCALE_BITS | out DTYPE COUNT
  ... more cases ...   end
SECRET is the case's 128-bit key as two hex words for a supervised (keyed) case, a 64-bit hex seed otherwise.
DTYPE is f32 (the only one so far); LOW_BITS and SCALE_BITS the float32 bits of the input's low end and range.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from grader.problems.spec import Problem, SizeSet
from grader.run import inputs as gen

DRAWS_PER_TEST = 2  # each test runs twice on independent inputs: a cache keyed on anything fails
BENCH_BUDGET_MS = {"cuda": 2000, "cpu": 3000}
BENCH_SAMPLES = {"cuda": (10, 200), "cpu": (5, 30)}
AUDITS_PER_BENCHMARK = {"cuda": 3, "cpu": 1}  # each costs a float64 reference on the grader's side


@dataclass
class Case:
    name: str
    size_set: SizeSet
    kind: str  # "check" or "bench"
    seed: int  # the 64-bit case seed of the in-process harness, or the supervisor's 128-bit key (keyed)
    keyed: bool = False


def dtype_token(param) -> str:
    """The request's name for a buffer's element type."""
    return "f32"


def build(problem: Problem, track: str, cases: list[Case]) -> str:
    """The cases as the supervisors (keyed cases) or the in-process harness read them."""
    lines = [] if any(case.keyed for case in cases) else ["library ./lib.so", "outdir ./out"]
    low, high = BENCH_SAMPLES[track]
    for case in cases:
        sizes = case.size_set.sizes
        secret = "{:x} {:x}".format(*gen.key_words(case.seed)) if case.keyed else f"{case.seed:x}"
        if case.kind == "check":
            lines.append(f"case {case.name} check {secret} {DRAWS_PER_TEST}")
        else:
            lines.append(
                f"case {case.name} bench {secret} {low} {high} {BENCH_BUDGET_MS[track]} {AUDITS_PER_BENCHMARK[track]}"
            )
        ints = [str(sizes[name]) for name in problem.size_names]
        lines.append(f"ints {len(ints)} {' '.join(ints)}")
        lines.append(f"buffers {len(problem.pointer_params)}")
        for param in problem.pointer_params:
            count = int(np.prod(problem.shape(param, sizes)))
            dtype = dtype_token(param)
            if param.role == "input":
                dist = problem.distribution(case.size_set, param.name)
                lines.append(
                    f"in {dtype} {count} {gen.float32_bits(dist.low)} {gen.float32_bits(dist.high - dist.low)}"
                )
            else:
                lines.append(f"out {dtype} {count}")
    lines.append("end")
    return "\n".join(lines) + "\n"
