"""PyTorch's baseline timed fairly: kernel time to kernel time, as a compiled submission is timed.

A submission's `solve` is one C call that enqueues its kernels back to back; PyTorch's reference, called from
Python, leaves gaps between its kernels while the interpreter dispatches the next op (Nsight Compute put
kerneljudge/ncu at 1.04-1.32 for PyTorch against 0.97-1.01 for compiled submissions, so "x PyTorch" read 3-30%
high). So the baseline is captured once into a CUDA graph and the graph is replayed, timed by the same method as
everything else (grader/perf/timing.py: fresh inputs copied into the graph's input tensors before each call, L2
flushed, events around the replay). The eager call, dispatch gaps included, is timed too and kept as `eager_us`,
so both figures can be shown where they differ; the faster of the two is the baseline's time (a one-kernel op
gains nothing from a graph, whose own launch then lies inside the timed interval). A baseline that cannot be
captured (an op that synchronises or allocates on the host) is timed eagerly, and its mode says why.

Batches (calls under 20 us) replay the graph several times on the last inputs copied in: such inputs fit in L2
anyway, and the L2 is flushed before each batch as before each single call.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from grader.perf.timing import Timing, time_callable
from grader.problems.spec import Problem, SizeSet
from grader.tracks import cuda
from grader.verdict.model import BenchmarkResult

WARMUP_CALLS = 3  # before capture: lets cuBLAS/cuDNN pick algorithms and allocate their workspaces
DIFFERENT = 0.02  # the eager and graph figures are shown apart when they differ by more than this


def capture(fn: Callable[..., object], inputs: dict[str, torch.Tensor], sizes: dict[str, int]) -> torch.cuda.CUDAGraph:
    """`fn(**inputs, **sizes)` captured into a CUDA graph that reads `inputs` (refill them, then replay)."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(WARMUP_CALLS):
            fn(**inputs, **sizes)
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        fn(**inputs, **sizes)
    torch.cuda.synchronize()
    return graph


def time_graph(
    fn: Callable[..., object], make_inputs: Callable[[int], dict[str, torch.Tensor]], sizes: dict[str, int]
) -> Timing:
    """Replays of the captured call, each after fresh inputs were copied into the graph's own input tensors."""
    static = make_inputs(0)
    graph = capture(fn, static, sizes)

    def refill(call: int) -> tuple:
        for name, fresh in make_inputs(call + 1).items():
            static[name].copy_(fresh)
        return ()

    return time_callable(graph.replay, refill)


def time_eager(
    fn: Callable[..., object], make_inputs: Callable[[int], dict[str, torch.Tensor]], sizes: dict[str, int]
) -> Timing:
    """The call as Python makes it, dispatch gaps between its kernels included."""
    return time_callable(lambda kwargs: fn(**kwargs, **sizes), lambda call: (make_inputs(call),))


def fair_timings(
    fn: Callable[..., object], make_inputs: Callable[[int], dict[str, torch.Tensor]], sizes: dict[str, int]
) -> tuple[Timing, Timing | None, str]:
    """(eager timing, graph timing or None, why there is no graph timing)."""
    with torch.no_grad():
        eager = time_eager(fn, make_inputs, sizes)
        try:
            graph = time_graph(fn, make_inputs, sizes)
        except Exception as error:  # capture refused: an op that syncs, allocates on the host, or is not capturable
            torch.cuda.synchronize()
            return eager, None, f"no CUDA graph: {type(error).__name__}: {str(error)[:200]}"
    return eager, graph, ""


def as_result(
    problem: Problem,
    size_set: SizeSet,
    eager: Timing,
    graph: Timing | None,
    why: str,
    make_result: Callable[..., BenchmarkResult],
) -> BenchmarkResult:
    """The baseline's BenchmarkResult: the faster of the graph's and the eager median as its time (PyTorch's best
    way to run it), the eager median as `eager_us`; `make_result` is the judge's benchmark_result (rates,
    fractions of the ceilings, floor)."""
    eager_us = eager.summary["median_us"]
    if graph is None:
        chosen, mode = eager, f"eager {eager.mode} ({why})"
    elif graph.summary["median_us"] <= eager_us:
        chosen, mode = graph, f"graph {graph.mode}"
    else:  # one kernel: nothing to save, and the graph's own launch is in its interval
        chosen, mode = eager, f"eager {eager.mode} (its CUDA graph replayed in {graph.summary['median_us']:.2f} us)"
    result = make_result(problem, size_set, cuda.NAME, chosen.summary, len(chosen.samples_ms), mode, 0.0, {})
    result.eager_us = eager_us
    return result


def differs(result: BenchmarkResult) -> bool:
    """Whether a baseline's eager time is far enough from its kernel time to show both."""
    return result.eager_us is not None and abs(result.eager_us - result.median_us) > DIFFERENT * result.median_us
