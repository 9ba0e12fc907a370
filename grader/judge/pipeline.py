"""One submission, start to end: compile -> run the harness in the sandbox -> check -> time -> verdict.

`grade` is a pure function of (problem, track, source, user, mode) to a Verdict: it never raises for the
submission's sake, and nothing the untrusted harness wrote is believed without a check made here, after it
has exited (docs/architecture.md, "One submission, start to end").

Every run is supervised, on every track and in either sandbox (grader/run/supervised.py): a trusted supervisor on
the host holds the keys, times every call (on the GPU: bounds the worker's own event times by its clock) and
writes every record into a folder the sandbox cannot reach, and that folder is all this module reads. The Python
tracks (triton, cupy) run under the CUDA supervisor too, with the Python worker (harness/python_worker.py) in
place of the compiled one; they are judged exactly as the CUDA track.

Longer than 300 lines because it is the one place where a verdict is decided, read top to bottom: the run, the
tests, the benchmarks and their audits, in the order they are judged. The run's machinery lives elsewhere
(grader/run/supervised.py, grader/sandbox/); what is left here is the judgement and its messages.
"""

from __future__ import annotations

import hashlib
import math
import os
import secrets
import shutil
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import numpy as np

from grader import identity, torch_import
from grader.build import compiler
from grader.judge import check, guards, run_phases
from grader.perf import ceilings, stats, telemetry
from grader.problems.spec import Problem, SizeSet, describe_sizes
from grader.problems.tracks import cpu_environment, device, is_python
from grader.run import binaries, python_interpreter, python_layout, request, supervised
from grader.run import inputs as gen
from grader.sandbox import base, container, runtime_libraries, views
from grader.sandbox import local as sandbox
from grader.toolchain import detect
from grader.verdict.model import BenchmarkResult, TestResult, Verdict, geometric_mean, output_tail, summary_test
from grader.verdict.status import Status

SIDE_STREAM_TAIL_MS = 2.0  # work still running this long after solve returned, in every call of a test,
SIDE_STREAM_TAIL_FRACTION = 0.5  # or this fraction of the call if that is longer
TAIL_SLACK_MS = 0.05  # timed calls: allowed excess of the tail over an empty call's tail
# CUDA: a benchmark's claimed median (the worker's own events) is believed only if it is at least the lower
# quartile of the supervisor's per-call lower bounds less this slack (docs/timing.md, "The CUDA track's clock").
BOUND_SLACK_MIN_MS = 0.12  # H100: calibrated and real CPU rests of a call differ by up to ~70 us (docs/timing.md)
BOUND_SLACK_FRACTION = 0.10  # of the claimed median; the slack is also never under the calibration's spread
# The Python tracks' worker (harness/python_worker.py) spends Python time around each call, and the rest of its
# timed calls strayed from the calibrated one by up to ~170 us either way on the H100 (docs/timing.md): a wider
# floor. Their first defence against a forged time is that solve cannot reach the timer (harness/python_guard.py).
BOUND_SLACK_MIN_MS_PYTHON = 0.3
# Resident memory of the harness: 32 GiB, or half the machine where that is less (a limit above the RAM
# lets a memory hog thrash into the wall clock instead of being stopped).
NOT_ALLOWED = "not allowed:"  # how harness/python_worker.py names a rule broken at run time (harness/python_guard.py)
HARNESS_MEMORY = min(32 << 30, os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2)

Progress = Callable[[str], None]


def grade(
    problem: Problem,
    source: bytes,
    filename: str,
    *,
    track: str,
    mode: str = "test",
    user: str = "",
    progress: Progress | None = None,
    time_limit_s: float | None = None,
    sandbox_kind: str | None = None,
    backend: container.Backend | None = None,
) -> Verdict:
    """Grade one submission; `mode` "test" checks correctness, "submit" also times the benchmarks.

    `time_limit_s` replaces the problem's own limit on the tests (benchmarks add their budgets to it).
    `backend` is the sandbox a caller already chose for `track` (container.choose, which asks the Docker engine);
    without it, `sandbox_kind` is chosen here: auto, docker or local (None: $KERNELJUDGE_SANDBOX, else auto).
    """
    say = progress or (lambda _stage: None)
    tools = detect()
    run = backend or container.choose(sandbox_kind, track)[0]
    how = run.description
    in_container = base.in_container(run)
    verdict = Verdict(
        status=Status.ACCEPTED,
        message="",
        problem=problem.slug,
        track=track,
        mode=mode,
        user=user,
        submission_id=uuid.uuid4().hex[:12],
        source_sha256=hashlib.sha256(source).hexdigest(),
        toolchain={
            "compiler": run.compiler(track),
            "sandbox": how,
            "flags": "" if is_python(track) else " ".join(compiler.submission_flags(track, tools, in_container)[1:]),
        },
        device=_device(track, tools),
        grader_version=identity.grader_build(),
    )
    started = time.monotonic()

    say("compile")
    build = compiler.build_submission(problem, source, filename, track, run=run)
    verdict.stages_s["compile"] = round(build.seconds, 3)
    if not build.ok:
        return _finish(verdict, Status.COMPILE_ERROR, build.log, started)
    if build.refused:
        return _finish(verdict, Status.REJECTED, build.refused, started)
    assert build.library is not None  # compiled and not refused

    cases = [request.Case(t.name, t, "check", secrets.randbits(128), True) for t in problem.tests_for(track)]
    if mode == "submit":
        cases += [request.Case(b.name, b, "bench", secrets.randbits(128), True) for b in problem.benchmarks_for(track)]

    say("run")
    run_started = time.monotonic()
    limit = time_limit_s or problem.time_limit_s
    verdict.time_limit_s = _wall_limit_s(limit, track, cases)
    load_before = telemetry.load_average()
    run_began = time.time()  # wall clock, as the progress record's times
    workdir, out, outcome, samples = _run_harness(problem, track, build.library, cases, limit, run)
    load_after = telemetry.load_average()
    verdict.stages_s["run"] = round(time.monotonic() - run_started, 3)
    run_ended = time.time()
    verdict.output_tail = output_tail(outcome.stdout, outcome.stderr)
    try:
        say("check")
        check_started = time.monotonic()
        try:
            _judge(verdict, problem, track, cases, out, outcome, samples)
            kinds = {c.name: c.kind for c in cases}
            verdict.stages_s.update(run_phases.parts(_progress(out), kinds, run_began, run_ended))
        except check.TamperedOutput as error:
            verdict.status, verdict.message = Status.REJECTED, f"result files tampered with: {error}"
        stats.mark_trust(verdict.benchmarks, load_before, load_after)
        verdict.stages_s["check"] = round(time.monotonic() - check_started, 3)
    finally:
        sandbox.remove_workdir(workdir)
        supervised.remove_trusted(out)
    return _finish(verdict, verdict.status, verdict.message, started)


def _finish(verdict: Verdict, status: str, message: str, started: float) -> Verdict:
    verdict.status, verdict.message = status, message
    verdict.stages_s["total"] = round(time.monotonic() - started, 3)
    return verdict


def _device(track: str, tools) -> dict:
    if device(track) == "cuda" and tools.gpu:
        return {"name": tools.gpu.name, "driver": tools.gpu.driver, "compute_capability": tools.gpu.compute_capability}
    return {"name": tools.cpu_model, "driver": "", "compute_capability": ""}


# --- running the harness -------------------------------------------------------------------------------------


def _wall_limit_s(tests_limit_s: float, track: str, cases: list[request.Case]) -> float:
    benches = sum(1 for c in cases if c.kind == "bench")
    return tests_limit_s + benches * (3 * request.BENCH_BUDGET_MS[device(track)] / 1000 + 20)


def _run_harness(
    problem: Problem, track: str, library: Path, cases: list[request.Case], tests_limit_s: float, run: container.Backend
):
    """(working folder, trusted folder of the records to judge, the sandbox's outcome, telemetry samples)."""
    in_container = base.in_container(run)
    if is_python(track):
        if in_container:
            raise supervised.JudgeError(
                f"the {track} track runs in the local sandbox only: its worker is not in the image yet"
            )
        why = python_interpreter.unreachable(track) if sandbox.is_root() else ""  # root: a uid of no group
        if why:
            raise supervised.JudgeError(
                f"the {track} track runs this interpreter ({sys.executable}) as the sandbox's uid, which cannot "
                f"reach it: {why}; {python_interpreter.FIX}"
            )
        uid, workdir = _new_python_run_folder(problem, library, cases)
        worker, library_name = python_interpreter.worker_command(track), compiler.PYTHON_SOURCE
    else:
        uid, workdir = _new_run_folder(((binaries.worker(track, run), "worker"), (library, "lib.so")))
        worker, library_name = ("./worker",), "lib.so"
    sizes = [[request.buffer_bytes(problem, p, c.size_set.sizes) for p in problem.pointer_params] for c in cases]
    env = _python_env(workdir) if is_python(track) else _cuda_env(workdir) if track == "cuda" else cpu_environment()
    if in_container:
        env.pop("CUDA_VISIBLE_DEVICES", None)  # the container sees the one GPU it was given
    sampler = _sampler(track, cases)
    try:
        with sampler or telemetry.NullSampler():
            result = supervised.run(
                request.build(problem, track, cases),
                supervised.region_bytes(sizes),
                library_name,
                workdir,
                sandbox_run=run,
                limits=_limits(tests_limit_s, track, cases, _worker_view(track, run)),
                uid=uid,
                env=env,
                track=track,
                gpu=container.gpu_index() if track == "cuda" and in_container else None,
                worker=worker,
                # The check stage needs PyTorch: import it while the run is only waited for. Started sooner, the
                # import holds the GIL against this thread's file reads and forks (the build digest, the
                # sandbox's probes), which then took 0.3-0.7 s each instead of 10-60 ms.
                while_running=torch_import.warm,
            )
    except BaseException:
        sandbox.remove_workdir(workdir)
        raise
    return workdir, result.trusted, result.outcome, (sampler.samples if sampler else [])


def _new_run_folder(programs: tuple[tuple[Path, str], ...]) -> tuple[int | None, Path]:
    """(the run's fresh sandbox uid, its working folder), with these (file, name) programs copied in read-only."""
    uid = sandbox.sandbox_uid()
    workdir = sandbox.new_workdir(uid)
    for source, name in programs:
        shutil.copyfile(source, workdir / name)
        (workdir / name).chmod(0o555)
    return uid, workdir


def _new_python_run_folder(problem: Problem, source: Path, cases: list[request.Case]) -> tuple[int | None, Path]:
    """A run folder for the Python worker: the checked submission, the worker's own modules (a copy of the
    harness package's Python files, so the run imports the grader's version of them), its seccomp library and
    the call layout (grader/run/python_layout.py)."""
    uid, workdir = _new_run_folder(((source, compiler.PYTHON_SOURCE), (binaries.python_seccomp(), "python_seccomp.so")))
    package = workdir / "harness"
    package.mkdir()
    for module in sorted(binaries.HARNESS_SOURCES.glob("*.py")):
        shutil.copyfile(module, package / module.name)
        (package / module.name).chmod(0o444)
    package.chmod(0o555)
    python_layout.write(workdir, problem, [c.size_set for c in cases])
    return uid, workdir


def _worker_view(track: str, run: container.Backend) -> views.View | None:
    """The minimal root of a compiled worker in the local sandbox (docs/security.md); None where the view stays
    the host's, read-only: the Python tracks (their interpreter and frameworks) and the container (its image)."""
    if is_python(track) or base.in_container(run):
        return None
    tools = detect()
    try:
        return runtime_libraries.worker_view(
            track,
            binaries.worker(track, run),
            tuple(compiler.submission_flags(track, tools)),
            tools.cuda_lib_dir if track == "cuda" else "",
        )
    except runtime_libraries.ViewError as error:
        raise supervised.JudgeError(f"the worker's minimal root could not be found on this host: {error}") from None


def _limits(
    tests_limit_s: float, track: str, cases: list[request.Case], view: views.View | None = None
) -> sandbox.Limits:
    return sandbox.Limits(
        view=view,
        wall_s=_wall_limit_s(tests_limit_s, track, cases),
        memory_bytes=HARNESS_MEMORY,
        address_space_bytes=HARNESS_MEMORY if device(track) == "cpu" else None,  # CUDA reserves far more than it uses
    )


def _sampler(track: str, cases: list[request.Case]) -> telemetry.Sampler | None:
    """NVML samples during a run that times benchmarks on the GPU (clocks, power, throttling), else none."""
    return telemetry.Sampler() if device(track) == "cuda" and any(c.kind == "bench" for c in cases) else None


def _cuda_env(workdir: Path) -> dict[str, str]:
    """What the CUDA runtime needs in the sandbox: its libraries, a JIT cache of the run's own, and the GPU the
    grader itself was given (a worker pinned to one GPU)."""
    env = {"LD_LIBRARY_PATH": detect().cuda_lib_dir, "CUDA_CACHE_PATH": str(workdir / ".nv")}
    if os.environ.get("CUDA_VISIBLE_DEVICES"):
        env["CUDA_VISIBLE_DEVICES"] = os.environ["CUDA_VISIBLE_DEVICES"]
    return env


def _python_env(workdir: Path) -> dict[str, str]:
    """The CUDA environment, and the JIT caches of Triton and CuPy in the run's own bounded folder: nothing one
    submission compiles is seen by another."""
    cuda = _cuda_env(workdir)
    root = str(Path(cuda["LD_LIBRARY_PATH"]).parent) if cuda["LD_LIBRARY_PATH"] else ""
    caches = {"TRITON_CACHE_DIR": str(workdir / ".triton"), "CUPY_CACHE_DIR": str(workdir / ".cupy")}
    return {**cuda, **caches, **({"CUDA_PATH": root} if root else {})}


# --- judging what came back ----------------------------------------------------------------------------------


def _progress(out: Path) -> list[str]:
    return (check.read_record(out / "progress") or "").splitlines()


def _crash_message(outcome: sandbox.Outcome, where: str) -> tuple[str, str]:
    """(status, message) for a harness that did not finish."""
    if outcome.timed_out:
        return Status.TIMEOUT, f"time limit ({outcome.wall_s:.1f} s) exceeded {where}"
    if outcome.killed_for == "memory":
        return Status.RUNTIME_ERROR, f"memory limit exceeded {where}"
    if outcome.killed_for == "disk":
        return Status.RUNTIME_ERROR, f"disk limit exceeded {where} (too much written to the working directory)"
    how = f"killed by {outcome.signal_name}" if outcome.signal_name else f"exited with status {outcome.returncode}"
    harness_said = [line for line in outcome.stderr.splitlines() if line.startswith("kerneljudge harness:")]
    said = harness_said[-1].split(":", 1)[1].strip() if harness_said else ""
    if said.startswith(NOT_ALLOWED):  # the Python worker refused a rule of the track at run time
        return (
            Status.REJECTED,
            f"the submission broke its track's rules {where}: {said.removeprefix(NOT_ALLOWED).strip()}",
        )
    detail = f": {said}" if said else ""
    tail = outcome.stderr.strip()[-600:]
    shown = f"\nprogram output (stderr, last lines):\n{tail}" if tail and not harness_said else ""
    return Status.RUNTIME_ERROR, f"{how} {where}{detail}{shown}"


def _judge(
    verdict: Verdict,
    problem: Problem,
    track: str,
    cases: list[request.Case],
    out: Path,
    outcome: sandbox.Outcome,
    samples: list[dict],
) -> None:
    lines = _progress(out)
    finished = bool(lines) and lines[-1].startswith("done") and outcome.returncode == 0
    violation = check.read_record(out / "violation")
    if violation:
        verdict.status = Status.REJECTED
        verdict.message = f"the program broke the harness's protocol: {violation.strip()}"
        return
    try:
        overrun = guards.read(out, problem, cases)  # the run ended at that call
    except guards.Malformed as error:
        verdict.status, verdict.message = Status.REJECTED, f"the judge's guard record is malformed: {error}"
        return
    failure: tuple[str, str] | None = None

    for case in cases:
        if case.kind != "check":
            continue
        if overrun and overrun.case == case.name:
            wrote = overrun.describe() + (" (second input draw)" if overrun.call > 0 else "")
            verdict.tests.append(TestResult(case.name, case.size_set.sizes, Status.WRONG_ANSWER, message=wrote))
            failure = failure or (
                Status.WRONG_ANSWER,
                f"test {case.name} ({describe_sizes(case.size_set.sizes)}): {wrote}",
            )
            break
        result = _check_case(problem, case, out)
        if result is None:  # the harness never finished this case
            started_case = any(line.split()[:2] == ["case", case.name] for line in lines)
            where = (
                f"in test {case.name} ({describe_sizes(case.size_set.sizes)})"
                if started_case
                else _where_it_stopped(lines)
            )
            status, message = (
                _crash_message(outcome, where)
                if not finished
                else (Status.RUNTIME_ERROR, f"results of test {case.name} are missing")
            )
            verdict.tests.append(TestResult(case.name, case.size_set.sizes, status, message=message))
            failure = failure or (status, message)
            break
        verdict.tests.append(result)
        if result.status != Status.ACCEPTED and failure is None:
            failure = (result.status, f"test {case.name} ({describe_sizes(case.size_set.sizes)}): {result.message}")
    named = summary_test(verdict.tests)  # of the wrong answers, the most telling (NaN written) names the verdict
    if failure and failure[0] == Status.WRONG_ANSWER and named is not None:
        failure = (named.status, f"test {named.name} ({describe_sizes(named.sizes)}): {named.message}")

    if failure is None and overrun:  # in a benchmark: every test passed
        sizes = describe_sizes(next(c for c in cases if c.name == overrun.case).size_set.sizes)
        failure = (
            Status.WRONG_ANSWER,
            f"benchmark {overrun.case} ({sizes}): timed call {overrun.call} {overrun.describe()}",
        )

    if failure is None and not finished:  # the first failure in run order: a benchmark the run finished first
        completed = run_phases.case_windows(lines)
        benchmarks_before = [case for case in cases if case.kind == "bench" and case.name in completed]
        failure = _judge_benchmarks(verdict, problem, track, benchmarks_before, out, outcome, samples)
        failure = failure or _crash_message(outcome, _where_it_stopped(lines))
    if failure is None:
        failure = _judge_benchmarks(verdict, problem, track, cases, out, outcome, samples)
    if failure:
        verdict.status, verdict.message = failure
        return
    verdict.status = Status.ACCEPTED
    verdict.score_us = geometric_mean([b.median_us for b in verdict.benchmarks])
    passed = f"all {len(verdict.tests)} tests passed"
    verdict.message = passed + (f"; score {verdict.score_us:.2f} us" if verdict.score_us else "")


def _where_it_stopped(lines: list[str]) -> str:
    cases = [line.split()[1] for line in lines if line.startswith("case ")]
    if cases:
        return f"in {cases[-1]}"
    return "while loading the library" if lines and lines[-1] == "loading" else "before running any test"


def _check_case(problem: Problem, case: request.Case, out: Path) -> TestResult | None:
    size_set = case.size_set
    atol, rtol = problem.tolerances_for(size_set)
    worst_abs = worst_rel = 0.0
    for draw in range(request.DRAWS_PER_TEST):
        try:
            got = check.read_call(problem, size_set, out, f"{case.name}.d{draw}")
        except check.TamperedOutput as error:
            return TestResult(
                case.name, size_set.sizes, Status.REJECTED, message=f"result files tampered with: {error}"
            )
        if got is None:
            return None
        expected_inputs = _inputs(problem, case, draw)
        for name, values in expected_inputs.items():
            changed = check.first_difference(got[name], values)
            if changed is not None:
                return TestResult(
                    case.name,
                    size_set.sizes,
                    Status.WRONG_ANSWER,
                    message=(f"input {name} was modified (first change at flat index {changed}): inputs are read-only"),
                )
        reference = check.reference_outputs(problem, size_set, expected_inputs)
        for param in problem.output_params:
            result = check.compare(got[param.name], reference[param.name], atol, rtol)
            worst_abs, worst_rel = max(worst_abs, result.max_abs_err), max(worst_rel, result.max_rel_err)
            if not result.ok:
                return check.wrong_output(case.name, size_set.sizes, param.name, result, second_draw=draw > 0)
    tail = _side_stream_tail_ms(out / f"{case.name}.calls")
    if tail is not None:
        return TestResult(
            case.name,
            size_set.sizes,
            Status.REJECTED,
            message=(
                f"device work went on for {tail:.2f} ms after solve returned, in every call (a side stream or "
                "thread?): solve must finish or enqueue all its work on the stream it was called on"
            ),
        )
    return TestResult(case.name, size_set.sizes, Status.ACCEPTED, worst_abs, worst_rel)


def _inputs(problem: Problem, case: request.Case, call: int):
    """The inputs of call number `call` of a case, regenerated here from its secret key."""
    return check.make_inputs(problem, case.size_set, gen.call_seed(case.seed, call), 0)


def _side_stream_tail_ms(path: Path) -> float | None:
    """How long device work outlived solve in a test's calls, if it did so by more than allowed in every draw
    (the least of them); None if not, or if the record is odd. Every draw, not one: a worker the machine kept
    off its core for a moment stretches one call's tail (an honest 5 ms naive softmax showed 2.4 ms once on the
    H100), a side stream stretches them all."""
    tails = {}
    try:
        for line in (check.read_record(path) or "").splitlines():
            draw, call_ms, tail_ms = (float(field) for field in line.split())
            tails[int(draw)] = (tail_ms, max(SIDE_STREAM_TAIL_MS, SIDE_STREAM_TAIL_FRACTION * call_ms))
    except ValueError:
        return None
    if len(tails) < request.DRAWS_PER_TEST or any(tail <= allowed for tail, allowed in tails.values()):
        return None
    return min(tail for tail, _ in tails.values())


def _judge_benchmarks(
    verdict: Verdict,
    problem: Problem,
    track: str,
    cases: list[request.Case],
    out: Path,
    outcome: sandbox.Outcome,
    samples: list[dict],
) -> tuple[str, str] | None:
    peaks = ceilings.for_track(track).for_inputs(problem.tensor_rate)
    windows = run_phases.case_windows(_progress(out))
    claimed_ms = 0.0
    for case in cases:
        if case.kind != "bench":
            continue
        parsed = _read_times(out / f"{case.name}.times")
        if parsed is None:
            return Status.REJECTED, f"benchmark {case.name}: the timing record is missing or malformed"
        header, rows = parsed
        times = [row[1] for row in rows]
        batch = int(header["batch"])
        claimed_ms += sum(times) * batch
        summary = stats.summarise_ms(times)
        median_ms = summary["median_us"] * 1e-3
        flops, nbytes = problem.work(case.size_set.sizes)
        floor_s = peaks.floor_s(flops, nbytes)
        name = f"benchmark {case.name} ({describe_sizes(case.size_set.sizes)})"
        if median_ms * 1e-3 < floor_s:
            return Status.REJECTED, (
                f"{name}: {median_ms * 1e3:.2f} us is below the physical floor of "
                f"{floor_s * 1e6:.2f} us for this much work on this device"
            )
        tail_overhead = header["tail_overhead_ms"]
        median_tail = float(np.median([row[2] for row in rows]))
        if device(track) == "cuda" and median_tail > tail_overhead + max(TAIL_SLACK_MS, 0.5 * median_ms):
            return Status.REJECTED, (
                f"{name}: device work went on {median_tail:.3f} ms after solve returned "
                f"(an empty call: {tail_overhead:.3f} ms): work on a side stream is not timed, "
                "so it is not allowed"
            )
        on_gpu = device(track) == "cuda"
        bound_ms = _clock_bound_ms(out / f"{case.name}.bound") if on_gpu else None
        if on_gpu:
            if bound_ms is None:
                return Status.REJECTED, f"{name}: the judge's clock record is missing or malformed"
            least_ms = least_believed_ms(bound_ms, median_ms, header["bound_spread_ms"], is_python(track))
            if median_ms < least_ms:
                return Status.REJECTED, (
                    f"{name}: the program's own timer claims {median_ms * 1e3:.2f} us per call, but the judge's "
                    f"clock allows no less than {least_ms * 1e3:.2f} us (a forged or patched timer)"
                )
        audit = _audit(problem, case, out, _sampled_calls(rows, batch), request.AUDITS_PER_BENCHMARK[device(track)])
        if audit:
            return Status.WRONG_ANSWER, f"{name}: {audit}"
        mode = str(header["mode"]) + (f" {batch}" if batch > 1 else "")
        mode += f", clock bound {bound_ms * 1e3:.1f} us" if bound_ms is not None else ""
        verdict.benchmarks.append(
            benchmark_result(
                problem,
                case.size_set,
                track,
                summary,
                len(times),
                mode,
                header["overhead_ms"] * 1e3,
                telemetry.summarise(samples, *windows.get(case.name, (None, None))),
            )
        )
    if claimed_ms > outcome.wall_s * 1e3 * 1.05:
        return Status.REJECTED, (
            f"the timings add up to {claimed_ms / 1e3:.2f} s, more than the "
            f"{outcome.wall_s:.2f} s the whole run took: the timing record was tampered with"
        )
    return None


def benchmark_result(
    problem: Problem,
    size_set: SizeSet,
    track: str,
    summary: dict,
    samples: int,
    mode: str,
    overhead_us: float,
    telemetry_summary: dict,
) -> BenchmarkResult:
    """A benchmark's record: the timing summary with its rates, fractions of the ceilings and floor."""
    peaks = ceilings.for_track(track).for_inputs(problem.tensor_rate)
    flops, nbytes = problem.work(size_set.sizes)
    seconds = summary["median_us"] * 1e-6
    return BenchmarkResult(
        name=size_set.name,
        sizes=size_set.sizes,
        median_us=summary["median_us"],
        spread={k: v for k, v in summary.items() if k != "median_us"},
        samples=samples,
        mode=mode,
        gflops=flops / seconds / 1e9,
        gbps=nbytes / seconds / 1e9,
        fraction_of_peak=_fractions(peaks, flops / seconds, nbytes / seconds),
        floor_us=peaks.floor_s(flops, nbytes) * 1e6,
        overhead_us=overhead_us,
        telemetry=telemetry_summary,
    )


def _fractions(peaks: ceilings.Ceilings, flops_s: float, bytes_s: float) -> dict:
    """Achieved rates over the measured ceilings (None where the track has none)."""
    ratio = lambda achieved, ceiling: achieved / ceiling if ceiling else None  # noqa: E731
    return {
        "bandwidth": ratio(bytes_s, peaks.copy_bytes_s),
        "flops": ratio(flops_s, peaks.fp32_flops_s),
        "sgemm": ratio(flops_s, peaks.sgemm_flops_s),
        **({"hgemm": ratio(flops_s, peaks.hgemm_flops_s)} if peaks.hgemm_flops_s else {}),
    }


def _read_times(path: Path) -> tuple[dict, list[tuple[int, float, float]]] | None:
    """(header, rows) of a timing record, None if anything in it is not what the harness writes (total: a
    rewritten or truncated record is a verdict, never an exception)."""
    try:
        lines = (check.read_record(path) or "").splitlines()
        words = lines[0].split()
        found = dict(zip(words[::2], words[1::2]))
        header: dict = {
            "mode": found.get("mode", "single"),
            "batch": int(found.get("batch", "1")),
            "overhead_ms": float(found.get("overhead_ms", "0")),
            "tail_overhead_ms": float(found.get("tail_overhead_ms", "0")),
            "bound_spread_ms": float(found.get("bound_spread_ms", "0")),  # CUDA: the calibration's spread
        }
        rows = [(int(a), float(b), float(c)) for a, b, c in (line.split() for line in lines[1:])]
    except (ValueError, IndexError):
        return None
    numbers = [header["overhead_ms"], header["tail_overhead_ms"], header["bound_spread_ms"]]
    numbers += [x for _, t, tail in rows for x in (t, tail)]
    if header["mode"] not in ("single", "batch") or not 1 <= header["batch"] <= 1 << 20 or len(rows) < 1:
        return None
    if any(not (math.isfinite(x) and x >= 0) for x in numbers) or any(t <= 0 for _, t, _ in rows):
        return None  # a call takes time: zero is a clock that stood still
    return header, rows


def least_believed_ms(bound_ms: float, claimed_ms: float, spread_ms: float, python: bool = False) -> float:
    """The least median a GPU benchmark may claim: the summary of the supervisor's bounds less the slack."""
    least_slack = BOUND_SLACK_MIN_MS_PYTHON if python else BOUND_SLACK_MIN_MS
    return bound_ms - max(least_slack, BOUND_SLACK_FRACTION * claimed_ms, spread_ms)


def _clock_bound_ms(path: Path) -> float | None:
    """The supervisor's per-call lower bounds (CUDA track), summarised by their lower quartile: a call the
    machine's load stretched raises its own bound, never lowers it, so the quartile is the least stretched
    figure that a few calls still agree on. None if the record is absent or odd."""
    try:
        lines = (check.read_record(path) or "").splitlines()[1:]
        bounds = [float(line.split()[2]) for line in lines]
    except (ValueError, IndexError):
        return None
    if not bounds or not all(math.isfinite(b) for b in bounds):
        return None
    return float(np.percentile(bounds, 25))


def _sampled_calls(rows: list[tuple[int, float, float]], batch: int) -> set[int]:
    """The call numbers of a benchmark's samples: each row's first call and the rest of its batch."""
    return {first + k for first, _, _ in rows for k in range(batch)}


def _audit(problem: Problem, case: request.Case, out: Path, sampled: set[int], size: int) -> str:
    """Check the outputs of the samples the supervisor drew for the audit (`size` of them, or every one if there
    were fewer: grader/run/supervision.h, Audits); '' when all are right."""
    record = check.read_record(out / f"{case.name}.audits")
    if record is None:
        return "no timed call was kept for the audit"
    try:
        calls = [int(w) for w in record.split()]
    except ValueError:
        return "the audit record is malformed"
    if len(calls) != min(size, len(sampled)) or len(set(calls)) != len(calls) or not set(calls) <= sampled:
        return "the audit record is malformed (not a draw of the benchmark's samples)"
    atol, rtol = problem.tolerances_for(case.size_set)
    for call in calls:
        try:
            got = check.read_call(problem, case.size_set, out, f"{case.name}.a{call}", only_outputs=True)
        except check.TamperedOutput as error:
            return f"audit files tampered with: {error}"
        if got is None:
            return f"the output of timed call {call} is missing"
        arrays = _inputs(problem, case, call)
        reference = check.reference_outputs(problem, case.size_set, arrays)
        for param in problem.output_params:
            result = check.compare(got[param.name], reference[param.name], atol, rtol)
            if not result.ok:
                return f"timed call {call} returned a wrong {param.name}: {result.message}"
    return ""
