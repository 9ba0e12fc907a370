"""The request a run reads on stdin: its cases, their secrets, sizes and buffers, as the run's programs parse it.

One text format for the three readers: the CPU track's trusted supervisor (grader/run/supervisor.cpp), the CUDA
track's (grader/run/cuda_supervisor.cu), and the in-process harness (harness/runner.cpp) the profiler still
runs. Each buffer names its element type, so inputs are generated and outputs poisoned in it:
  [jit BUDGET_MS]
  case NAME check SECRET DRAWS | case NAME bench SECRET MIN_SAMPLES MAX_SAMPLES BUDGET_MS AUDITS
  ints K v1..vK   buffers B   then B times: in DTYPE COUNT LOW_BITS SCALE_BITS | out DTYPE COUNT
  (bench only) rows ROWS DRAWN   then, where DRAWN is not 0, OUTER INNER for each output in buffer order
  ... more cases ...   end
`jit` asks a supervisor for the JIT stage (tracks whose Track has `jit_stage`; supervised requests only): one
untimed call per distinct size set before the first case, within BUDGET_MS (docs/timing.md, "The JIT stage").
SECRET is the case's 128-bit key as two hex words for a supervised (keyed) case, a 64-bit hex seed otherwise.
DTYPE is the buffer's element type (grader/problems/dtypes.py; generator.h says how each is drawn and poisoned):
  f32, f16, bf16, e4m3  LOW_BITS and SCALE_BITS are the float32 bits of the input's low end and of its range
                  (high - low); the value is drawn in float32, then rounded to nearest (ties to even) for
                  f16, bf16 and e4m3 (saturating to +-448);
  i32, i8         LOW_BITS is low as a two's-complement 32-bit word, SCALE_BITS the count high - low (>= 1):
                  the value is low + (hash % count), an integer in [low, high).
`rows`: a row-audited benchmark's outputs are each [OUTER, ROWS, INNER], and an audit keeps DRAWN of the rows
(grader/problems/audit_rows.py row_layout; 0 0: outputs kept whole). All numbers are decimal; COUNT is the number of elements (bytes = COUNT * 4 for f32 and i32, * 2 for f16 and bf16,
* 1 for i8 and e4m3).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from grader import settings, tracks
from grader.problems import audit_rows
from grader.problems.spec import Problem, SizeSet
from grader.run import inputs as gen

DRAWS_PER_TEST = 2  # each test runs twice on independent inputs: a cache keyed on anything fails


@dataclass
class Case:
    name: str
    size_set: SizeSet
    kind: str  # "check" or "bench"
    seed: int  # the 64-bit case seed of the in-process harness, or the supervisor's 128-bit key (keyed)
    keyed: bool = False


def dtype_token(param) -> str:
    """The request's name for a buffer's element type: f32, f16, bf16, i32, i8 or e4m3."""
    return param.dtype


def element_bytes(param) -> int:
    """Bytes of one element of a buffer (1 for i8 and e4m3, 2 for f16 and bf16, 4 for f32 and i32)."""
    return int(np.dtype(gen.NUMPY_DTYPES[param.dtype]).itemsize)


def buffer_bytes(problem: Problem, param, sizes: dict[str, int]) -> int:
    """Bytes of one buffer of a call at these sizes."""
    return int(np.prod(problem.shape(param, sizes))) * element_bytes(param)


def jit_budget_s(track: str) -> float:
    """The JIT stage's budget in seconds ($KERNELJUDGE_JIT_BUDGET_S) for a track with the stage, else 0."""
    if not tracks.get(track).jit_stage:
        return 0.0
    text = settings.JIT_BUDGET_S.get()
    try:
        budget = float(text)
    except ValueError:
        budget = math.nan
    if not math.isfinite(budget) or budget <= 0:
        raise ValueError(f"{settings.JIT_BUDGET_S.name} must be a positive number of seconds, not {text!r}")
    return budget


def build(problem: Problem, track: str, cases: list[Case]) -> str:
    """The cases as the supervisors (keyed cases) or the in-process harness read them."""
    keyed = any(case.keyed for case in cases)
    lines = [] if keyed else ["library ./lib.so", "outdir ./out"]
    budget_s = jit_budget_s(track) if keyed else 0.0
    if budget_s:
        lines.append(f"jit {round(budget_s * 1000)}")
    on = tracks.get(track).device  # its budget, samples and audits (grader/tracks/devices.py)
    low, high = on.bench_samples
    for case in cases:
        sizes = case.size_set.sizes
        secret = "{:x} {:x}".format(*gen.key_words(case.seed)) if case.keyed else f"{case.seed:x}"
        if case.kind == "check":
            lines.append(f"case {case.name} check {secret} {DRAWS_PER_TEST}")
        else:
            lines.append(f"case {case.name} bench {secret} {low} {high} {on.bench_budget_ms} {on.audits_per_benchmark}")
        ints = [str(sizes[name]) for name in problem.size_names]
        lines.append(f"ints {len(ints)} {' '.join(ints)}")
        lines.append(f"buffers {len(problem.pointer_params)}")
        for param in problem.pointer_params:
            count = int(np.prod(problem.shape(param, sizes)))
            dtype = dtype_token(param)
            if param.role == "input":
                low_bits, scale_bits = gen.bounds_bits(dtype, *problem.bounds(case.size_set, param.name))
                lines.append(f"in {dtype} {count} {low_bits} {scale_bits}")
            else:
                lines.append(f"out {dtype} {count}")
        if case.kind == "bench":
            outputs = {p.name: problem.shape(p, sizes) for p in problem.pointer_params if p.role == "output"}
            rows, drawn, layout = audit_rows.row_layout(problem.audit_rows, sizes, outputs)
            lines.append(" ".join(["rows", str(rows), str(drawn), *(f"{outer} {inner}" for outer, inner in layout)]))
    lines.append("end")
    return "\n".join(lines) + "\n"
