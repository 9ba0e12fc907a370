"""What every problem's `solve` may count on, in one place: `grader show`, the site's problem pages and the
README's "Tracks" section say the same (tests/test_call_rules.py holds them to these facts).

Each rule is (topic, text); the figures come from the code that makes them true: the thread count from
grader/tracks/cpu.py, the buffers' alignment from the supervisors' layout (grader/run/supervised.py PAGE,
supervision.h), the repeated calls from the request (grader/run/request.py DRAWS_PER_TEST), the JIT stage's budget from
grader/settings.py.
"""

from __future__ import annotations

from grader.settings import JIT_BUDGET_S
from grader.tracks.cpu import THREADS as CPU_THREADS

ALIGN = 4096  # the supervisors' buffer layout (grader/run/supervised.py PAGE, supervision.h): one page each

RULES: tuple[tuple[str, str], ...] = (
    (
        "Many calls, one process",
        "`solve` is called many times in one process: twice per test (fresh inputs each time), then the warm-up "
        "and timed calls of every benchmark, each with new inputs and sizes that change from test to test. "
        "State kept between calls (a static scratch buffer, a cached device attribute) must be valid for every "
        "call; results may not be kept (every call's inputs are new, and timed calls are audited).",
    ),
    (
        "Scratch memory",
        "`solve` may allocate scratch memory (`malloc`/`new`, `cudaMalloc`), and its time counts in the call that "
        "allocates. Allocate once and keep it (a static pointer, grown when a larger size comes): the untimed "
        "calls (the tests, each benchmark's warm-up) then pay for it, the timed calls do not.",
    ),
    (
        "Alignment",
        f"Every buffer starts on its own {ALIGN}-byte boundary (a page), on both tracks: `float4` (16-byte) "
        "loads from the start of a buffer are aligned, and so are those from the start of any row whose length "
        "is a multiple of 4 elements. Rows of other lengths are not: check before you vectorise.",
    ),
    (
        "Threads (CPU track)",
        f"OpenMP runs exactly {CPU_THREADS} threads on every host (OMP_NUM_THREADS and OMP_THREAD_LIMIT are "
        f"{CPU_THREADS}; asking for more gives {CPU_THREADS}), however many cores the machine has, so a verdict "
        f"does not depend on the machine (times do). A float `reduction(+:s)` therefore keeps {CPU_THREADS} "
        "partial sums, each added one element at a time.",
    ),
    (
        "Half precision (CPU track)",
        "16-bit buffers arrive as raw `uint16_t` bits; the starter's helpers convert them (round to nearest "
        "even). `_Float16` may be used too: the judge's g++ (12 and later, x86-64) accepts it in C++, converting "
        "with the same rounding; arithmetic on it is done in float and rounded, unless the CPU has AVX512-FP16.",
    ),
    (
        "Streams (CUDA track)",
        "`solve` is called on the default stream, and a call lasts until the work queued there is done: the judge "
        "times from the moment the call's inputs exist to then. Streams `solve` makes itself wait for the default "
        "stream (the judge makes `cudaStreamNonBlocking` ones blocking, so none starts before its inputs exist); "
        "work on them counts only if `solve` synchronises them, or the default stream waits for them, before it "
        "returns.",
    ),
    (
        "Compiling and autotuning (Triton and CuPy tracks)",
        "A kernel compiles on its first call for a shape, and `@triton.autotune` and `@triton.heuristics` choose "
        "their configuration there. Before the tests, the judge calls `solve` once per distinct set of sizes the "
        "tests and benchmarks use, untimed, on inputs of its own, within a budget of its own "
        f"({float(JIT_BUDGET_S.default):g} s by default, the host's setting): no test or benchmark pays for "
        'compiling or autotuning, and an autotuned kernel keyed on the sizes (`key=["M", "N"]`) is timed '
        "with the configuration it chose.",
    ),
    (
        "Indices",
        "Indices count from 0 in the formulas, the text and the code alike: element (i, j) of an M x N matrix "
        "is at `i * N + j`, with 0 <= i < M and 0 <= j < N.",
    ),
)


def as_markdown() -> str:
    """The rules as a Markdown list (the site's problem page, the README)."""
    return "\n".join(f"- **{topic}.** {text}" for topic, text in RULES)
