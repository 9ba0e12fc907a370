"""Benchmark commands: repeat a submission's timing, rank the solution ladders against PyTorch, and validate
the timer against triton.testing.do_bench and Nsight Compute, all measured in one run on one GPU.
"""

from __future__ import annotations

import csv
import io
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import torch

from grader import tracks
from grader.judge import benchmarks, pipeline
from grader.perf import baseline, in_process, stats, telemetry
from grader.problems import solutions
from grader.problems.catalog import load_problem
from grader.problems.spec import Problem, SizeSet
from grader.run import inputs as gen
from grader.tracks import cuda
from grader.verdict.model import BenchmarkResult, Verdict, geometric_mean

NCU_CALLS = 5


def fp32_only() -> None:
    """PyTorch baselines in true float32: no TF32 on matmul or convolutions."""
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False


def baseline_inputs(problem: Problem, size_set: SizeSet, call: int, seed: int = 1) -> dict[str, torch.Tensor]:
    """Fresh CUDA inputs for call `call`, shaped, in their element types, from the generator the harness uses."""
    tensors = {}
    for index, param in enumerate(problem.pointer_params):
        if param.role == "input":
            low, high = problem.bounds(size_set, param.name)
            shape = problem.shape(param, size_set.sizes)
            flat = gen.generate(
                param.dtype, gen.tensor_seed(seed, call, index), int(np.prod(shape)), low, high, device="cuda"
            )
            tensors[param.name] = flat.reshape(shape)
    return tensors


def baseline_fn(problem: Problem):
    """What PyTorch itself runs for the problem: reference.py's `baseline`, else its `reference`."""
    module = problem.reference_module
    return getattr(module, "baseline", module.reference)


def time_baseline(problem: Problem, size_set: SizeSet) -> BenchmarkResult:
    """PyTorch's own kernels for this benchmark, kernel time to kernel time: CUDA-graph replay as its time, the
    eager call (Python dispatch gaps included) as `eager_us` (grader/perf/baseline.py)."""
    fp32_only()
    load_before = telemetry.load_average()
    eager, graph, why = baseline.fair_timings(
        baseline_fn(problem), lambda call: baseline_inputs(problem, size_set, call), size_set.sizes
    )
    result = baseline.as_result(problem, size_set, eager, graph, why, benchmarks.benchmark_result)
    stats.mark_trust([result], load_before, telemetry.load_average())
    return result


# --- commands ----------------------------------------------------------------------------------------------


def repeat(problem: Problem, path: Path, track: str, times: int, progress=None) -> list[Verdict]:
    """Grade the same file `times` times (the build is cached after the first)."""
    verdicts = []
    for i in range(times):
        if progress:
            progress(i)
        verdicts.append(
            pipeline.grade(problem, path.read_bytes(), path.name, track=track, mode="submit", user=f"bench:{path.name}")
        )
    return verdicts


def ladder_rows(problem: Problem, track: str, progress=None) -> tuple[list[dict], dict]:
    """Each rung graded in submit mode, and PyTorch's time on the same benchmarks (the GPU's tracks)."""
    rows = []
    for path in solutions.ladder(problem.slug, track):
        if progress:
            progress(f"{problem.slug}: {path.name}")
        verdict = pipeline.grade(
            problem, path.read_bytes(), path.name, track=track, mode="submit", user=f"ref:{path.name}"
        )
        rows.append(
            {
                "problem": problem.slug,
                "solution": path.name,
                "status": verdict.status,
                "message": verdict.message,
                "score_us": verdict.score_us,
                "verdict": verdict,
                "benchmarks": {b.name: b.median_us for b in verdict.benchmarks},
            }
        )
    baseline = {}
    if tracks.get(track).device.gpu:  # PyTorch's row beside every GPU track's (triton and cupy too)
        if progress:
            progress(f"{problem.slug}: PyTorch")
        timed = [time_baseline(problem, b) for b in problem.benchmarks_for(track)]
        baseline = {
            "benchmarks": {b.name: b.median_us for b in timed},
            "results": timed,
            "score_us": geometric_mean([b.median_us for b in timed]),
        }
    return rows, baseline


def validate_rows(problem: Problem, track: str = cuda.NAME, progress=None, solution: Path | None = None) -> list[dict]:
    """`solution` (a file of `track`; by default the track's top rung) and PyTorch timed three ways: kerneljudge,
    triton's do_bench, ncu's kernel duration; the solution's rows, named after its file, also carry the judge's
    clock (bound_us), for its fidelity against ncu."""
    import triton.testing

    fp32_only()
    timed = (solution or solutions.best(problem.slug, track)).resolve()  # resolved: ncu's child process loads it
    verdict = pipeline.grade(problem, timed.read_bytes(), timed.name, track=track, mode="submit")
    if not verdict.accepted:
        raise RuntimeError(f"{problem.slug}: {timed.name} was not accepted: {verdict.message}")
    ours = {b.name: b.median_us for b in verdict.benchmarks}
    bounds = {b.name: b.bound_us for b in verdict.benchmarks}
    loaded = in_process.load(problem, timed, track)
    rows = []
    for size_set in problem.benchmarks_for(track):
        if progress:
            progress(f"{problem.slug}: {size_set.name}")
        inputs = baseline_inputs(problem, size_set, 0)
        args = loaded.call_args(size_set, inputs)
        fn = baseline_fn(problem)
        with torch.no_grad():
            torch_ours = time_baseline(problem, size_set).median_us
            for who, ours_us, call in (
                (timed.name, ours.get(size_set.name), lambda args=args: loaded(*args)),
                ("pytorch", torch_ours, lambda fn=fn, inputs=inputs, sizes=size_set.sizes: fn(**inputs, **sizes)),
            ):
                do_bench_us = triton.testing.do_bench(call, warmup=100, rep=500, return_mode="median") * 1e3
                ncu_us = ncu_duration_us(problem, size_set, timed if who != "pytorch" else None, track)
                rows.append(
                    {
                        "problem": problem.slug,
                        "benchmark": size_set.name,
                        "who": who,
                        "track": track if who != "pytorch" else "pytorch",
                        "kerneljudge_us": ours_us,
                        "bound_us": bounds.get(size_set.name) if who != "pytorch" else None,
                        "do_bench_us": do_bench_us,
                        "ncu_us": ncu_us,
                    }
                )
    return rows


def ncu_binary() -> str | None:
    found = shutil.which("ncu")
    if found:
        return found
    candidates = sorted(Path("/opt/nvidia").glob("nsight-compute/*/ncu")) + [Path("/usr/local/cuda/bin/ncu")]
    return next((str(c) for c in candidates if c.exists()), None)


def ncu_duration_us(problem: Problem, size_set: SizeSet, solution: Path | None, track: str = cuda.NAME) -> float | None:
    """Sum of gpu__time_duration over the kernels of one call, averaged over NCU_CALLS profiled calls."""
    ncu = ncu_binary()
    if ncu is None:
        return None
    which = str(solution or "pytorch")
    target = [sys.executable, "-m", "grader.study.bench", problem.slug, size_set.name, which, track]
    result = subprocess.run(
        [
            ncu,
            "--metrics",
            "gpu__time_duration.sum",
            "--csv",
            "--clock-control",
            "none",
            "--cache-control",
            "all",
            "--profile-from-start",
            "off",
            "--print-units",
            "base",
        ]
        + target,
        capture_output=True,
        text=True,
        timeout=600,
        env=os.environ,
    )
    lines = [line for line in result.stdout.splitlines() if line.startswith('"')]
    if not lines:
        return None
    total_ns = sum(
        float(row["Metric Value"].replace(",", ""))
        for row in csv.DictReader(io.StringIO("\n".join(lines)))
        if row.get("Metric Name") == "gpu__time_duration.sum"
    )
    return total_ns / NCU_CALLS / 1e3


def _ncu_target(slug: str, benchmark: str, which: str, track: str) -> None:
    """Run under ncu: warm up, then NCU_CALLS profiled calls of a solution (of `track`) or of PyTorch's baseline."""
    fp32_only()
    problem = load_problem(slug)
    size_set = next(b for b in problem.benchmarks_for(track) if b.name == benchmark)
    inputs = baseline_inputs(problem, size_set, 0)
    if which == "pytorch":
        fn = baseline_fn(problem)
        call = lambda: fn(**inputs, **size_set.sizes)  # noqa: E731
    else:
        solution = in_process.load(problem, Path(which), track)
        args = solution.call_args(size_set, inputs)
        call = lambda: solution(*args)  # noqa: E731
    with torch.no_grad():
        for _ in range(3):
            call()
        torch.cuda.synchronize()
        torch.cuda.profiler.start()
        for _ in range(NCU_CALLS):
            call()
        torch.cuda.synchronize()
        torch.cuda.profiler.stop()


if __name__ == "__main__":
    _ncu_target(*sys.argv[1:5])
