"""One submission, start to end: compile -> run the harness in the sandbox -> check -> time -> verdict.

`grade` is a pure function of (problem, track, source, user, mode) to a Verdict: it never raises for the
submission's sake, and nothing the untrusted harness wrote is believed without a check made here, begun once
the supervisor's records are final and kept only once the worker has exited cleanly (check_at_done.py;
docs/architecture.md, "One submission, start to end").

Every run is supervised, on every track and in either sandbox (grader/run/supervised.py): a trusted supervisor on
the host holds the keys, times every call (on the GPU: bounds the worker's own event times by its clock) and
writes every record into a folder the sandbox cannot reach, and that folder is all the judgement reads. The Python
tracks (triton, cupy) run under the CUDA supervisor too, with the Python worker (harness/python_worker.py) in
place of the compiled one; they are judged exactly as the CUDA track.

Longer than 300 lines because it is the one place where a verdict is decided, read top to bottom: the run, then
the tests and their messages, then the benchmarks, in the order they are judged. The rest lives beside it: the
run's folder and environment (run_folder.py), the supervisor's records (supervisor_records.py, the only reader of
that folder's records), the benchmarks' judgement (benchmarks.py), the comparison (check.py), and the run's
machinery (grader/run/supervised.py, grader/sandbox/).
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import secrets
import time
import uuid
from collections.abc import Callable
from contextlib import nullcontext
from pathlib import Path

from grader import identity, torch_import, tracks
from grader.build import compiler
from grader.judge import benchmarks, check, check_at_done, gpu_turn, run_folder, run_phases, supervisor_records
from grader.perf import stats, telemetry
from grader.problems.spec import Problem, describe_sizes
from grader.run import autotuned, binaries, jit_cache, request, supervised
from grader.sandbox import base, container, runtime_libraries, views
from grader.sandbox import local as sandbox
from grader.toolchain import detect
from grader.verdict.model import TestResult, Verdict, geometric_mean, output_tail, summary_test
from grader.verdict.status import Status

# Beyond three budgets, what a benchmark of calls longer than its budget may take: a warm-up call, three samples
# and a random tail of a few more (supervision.h one_more_sample) of the slowest naive rung's 4.3 s calls.
BENCH_ROOM_S = 23
SIDE_STREAM_TAIL_MS = 2.0  # work still running this long after solve returned, in every call of a test,
SIDE_STREAM_TAIL_FRACTION = 0.5  # or this fraction of the call if that is longer
NOT_ALLOWED = "not allowed:"  # how harness/python_worker.py names a rule broken at run time (harness/python_guard.py)
# Resident memory of the harness: 32 GiB, or half the machine where that is less (a limit above the RAM
# lets a memory hog thrash into the wall clock instead of being stopped).
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
    turn: gpu_turn.GpuTurn | None = None,
) -> Verdict:
    """Grade one submission; `mode` "test" checks correctness, "submit" also times the benchmarks.

    `time_limit_s` replaces the problem's own limit on the tests (benchmarks add their budgets to it).
    `backend` is the sandbox a caller already chose for `track` (container.choose, which asks the Docker engine);
    without it, `sandbox_kind` is chosen here: auto, docker or local (None: $KERNELJUDGE_SANDBOX, else auto).
    `turn`: the GPU's turns where two gradings share it (gpu_turn.py: this one's check may overlap the next
    one's start, never its calibration or timed calls).
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
            "flags": ""
            if tracks.get(track).is_python
            else " ".join(compiler.submission_flags(track, tools, in_container)[1:]),
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
    limit = time_limit_s or problem.time_limit_s
    verdict.time_limit_s = _wall_limit_s(limit, track, cases)
    jit_key = jit_cache.key(track, verdict.source_sha256, tools) if tracks.get(track).jit_caches else ""
    waited = []

    def quiet() -> None:  # the wait for the GPU's last check, before the calibration: reported as its own stage
        assert turn is not None
        began = time.monotonic()
        turn.quiet()
        waited.append(time.monotonic() - began)
        torch_import.start_on_gpu()  # the check's CUDA context, while nothing is timed on this GPU

    def judge_at_done(trusted: Path, samples: list[dict]) -> Verdict | None:  # check_at_done.py
        try:
            if not supervisor_records.progress(trusted).done:
                return None
        except check.TamperedOutput:
            return None  # judged once the run has ended, as any record out of place
        early = dataclasses.replace(verdict, tests=[], benchmarks=[], stages_s={})
        clean_end = sandbox.Outcome(returncode=0, wall_s=time.monotonic() - run_started)
        _judge(early, problem, track, cases, trusted, clean_end, samples)
        return early

    at_done = check_at_done.CheckAtDone(judge_at_done, turn.hand_over if turn else lambda: None)
    # a runner waiting for its GPU imports the check's PyTorch meanwhile: nothing else is done in its process then
    with turn.running(while_waiting=torch_import.warm) if turn else nullcontext():
        run_started = time.monotonic()
        load_before = telemetry.load_average()
        run_began = time.time()  # wall clock, as the progress record's times
        try:
            workdir, out, outcome, samples = _run_harness(
                problem, track, build.library, cases, limit, run, jit_key, quiet if turn else None, at_done.start
            )
        except BaseException:
            at_done.wait()
            raise
    if waited:
        verdict.stages_s["run wait"] = round(waited[0], 3)
    try:
        load_after = telemetry.load_average()
        verdict.stages_s["run"] = round(time.monotonic() - run_started, 3)
        run_ended = time.time()
        verdict.output_tail = output_tail(outcome.stdout, outcome.stderr)
        verdict.autotuned = _autotuned(track, workdir)
        say("check")
        check_started = time.monotonic()
        early = at_done.result(outcome)
        if early is not None:  # judged while the run ended: the check's own time is its stage
            _take_judgement(verdict, early)
            check_s = at_done.seconds
        else:
            _judge(verdict, problem, track, cases, out, outcome, samples)
            check_s = time.monotonic() - check_started
        kinds = {c.name: c.kind for c in cases}
        try:
            verdict.stages_s.update(run_phases.parts(supervisor_records.progress(out), kinds, run_began, run_ended))
        except check.TamperedOutput:
            pass  # the verdict already says so; the run's parts are not told
        stats.mark_trust(verdict.benchmarks, load_before, load_after)
        verdict.stages_s["check"] = round(check_s, 3)
    finally:
        if turn:
            turn.checked()
        sandbox.remove_workdir(workdir)
        supervised.remove_trusted(out)
    return _finish(verdict, verdict.status, verdict.message, started)


def _take_judgement(verdict: Verdict, judged: Verdict) -> None:
    """What _judge decided on `judged` (a copy of `verdict` made for the early check), now `verdict`'s."""
    verdict.tests, verdict.benchmarks, verdict.score_us = judged.tests, judged.benchmarks, judged.score_us
    verdict.status, verdict.message = judged.status, judged.message


def _finish(verdict: Verdict, status: str, message: str, started: float) -> Verdict:
    verdict.status, verdict.message = status, message
    verdict.stages_s["total"] = round(time.monotonic() - started, 3)
    return verdict


def _device(track: str, tools) -> dict:
    return tracks.get(track).device.describe(tools)


def _autotuned(track: str, workdir: Path) -> list[dict]:
    """What the submission's autotuners chose, as it reported them in its run folder, on a track whose framework
    reports it: untrusted, read bounded (grader/run/autotuned.py), shown with the verdict and never judged."""
    framework = tracks.get(track).python
    if framework is None or not framework.reports_autotuning:
        return []
    return [entry.model_dump() for entry in autotuned.read(workdir)]


# --- running the harness -------------------------------------------------------------------------------------


def _wall_limit_s(tests_limit_s: float, track: str, cases: list[request.Case]) -> float:
    """The run's wall limit: the tests' limit, each benchmark's budget with room (BENCH_ROOM_S), and the JIT
    stage's budget (a track with the stage: its compiles and autotuning are not the tests' time)."""
    benches = sum(1 for c in cases if c.kind == "bench")
    bench_s = benches * (3 * tracks.get(track).device.bench_budget_ms / 1000 + BENCH_ROOM_S)
    return tests_limit_s + bench_s + request.jit_budget_s(track)


def _run_harness(
    problem: Problem,
    track: str,
    library: Path,
    cases: list[request.Case],
    tests_limit_s: float,
    run: container.Backend,
    jit_key: str = "",
    quiet: Callable[[], None] | None = None,
    on_done: Callable[[Path, list[dict]], None] | None = None,
):
    """(working folder, trusted folder of the records to judge, the sandbox's outcome, telemetry samples). With a
    `jit_key` (grader/run/jit_cache.py), the run starts with that entry's JIT caches and leaves its own in it;
    with `quiet`, its supervisor calibrates only once that has returned (gpu_turn.py); `on_done` is given the
    trusted folder and the telemetry so far once the records are final (supervised.run)."""
    folder = run_folder.make(problem, track, library, cases, run)
    if jit_key:
        jit_cache.copy_in(track, jit_key, folder.path, folder.uid)
    sizes = [[request.buffer_bytes(problem, p, c.size_set.sizes) for p in problem.pointer_params] for c in cases]
    sampler = _sampler(track, cases)
    try:
        with sampler or telemetry.NullSampler():
            result = supervised.run(
                request.build(problem, track, cases),
                supervised.region_bytes(sizes),
                folder.library,
                folder.path,
                sandbox_run=run,
                limits=_limits(tests_limit_s, track, cases, _worker_view(track, run)),
                uid=folder.uid,
                env=folder.env,
                track=track,
                gpu=container.gpu_index() if tracks.get(track).device.gpu and base.in_container(run) else None,
                worker=folder.worker,
                # The check stage needs PyTorch: import it while the run is only waited for. Started sooner, the
                # import holds the GIL against this thread's file reads and forks (the build digest, the
                # sandbox's probes), which then took 0.3-0.7 s each instead of 10-60 ms.
                while_running=torch_import.warm,
                quiet=quiet,
                on_done=(lambda trusted: on_done(trusted, list(sampler.samples) if sampler else []))
                if on_done
                else None,
            )
    except BaseException:
        sandbox.remove_workdir(folder.path)
        raise
    if jit_key:
        jit_cache.copy_out(track, jit_key, folder.path)
    return folder.path, result.trusted, result.outcome, (sampler.samples if sampler else [])


def _sampler(track: str, cases: list[request.Case]) -> telemetry.Sampler | None:
    """NVML samples during a run that times benchmarks on the GPU (clocks, power, throttling), else none."""
    return telemetry.Sampler() if tracks.get(track).device.gpu and any(c.kind == "bench" for c in cases) else None


def _worker_view(track: str, run: container.Backend) -> views.View | None:
    """The minimal root of a compiled worker in the local sandbox (docs/security.md); None where the view stays
    the host's, read-only: the Python tracks (their interpreter and frameworks) and the container (its image)."""
    if tracks.get(track).is_python or base.in_container(run):
        return None
    tools = detect()
    try:
        return runtime_libraries.worker_view(
            track,
            binaries.worker(track, run),
            tuple(compiler.submission_flags(track, tools)),
            tools.cuda_lib_dir if tracks.get(track).device.gpu else "",
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
        address_space_bytes=None if tracks.get(track).device.gpu else HARNESS_MEMORY,  # CUDA reserves far more
    )


# --- judging what came back ----------------------------------------------------------------------------------


def _crash_message(
    outcome: sandbox.Outcome,
    where: str,
    progress: supervisor_records.Progress | None = None,
    cases: list[request.Case] | None = None,
    track: str = "",
) -> tuple[str, str]:
    """(status, message) for a harness that did not finish; one that ended in the JIT stage, past its budget
    (the supervisor's, or the run's wall limit there), is a timeout of the stage."""
    sizes = _jit_sizes(progress, cases or []) if progress is not None else None
    if sizes is not None and progress is not None and (progress.jit_over_budget or outcome.timed_out):
        return (
            Status.TIMEOUT,
            f"the JIT/autotune stage exceeded its budget ({request.jit_budget_s(track):g} s) in its untimed call at "
            f"{sizes}: kernels compile and autotune there, once per size set, before the tests",
        )
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
    """The verdict from the run's records; result files that are not what the harness writes are tampering."""
    try:
        progress = supervisor_records.progress(out)
        finished = progress.done and outcome.returncode == 0
        violation = supervisor_records.violation(out)
        if violation is not None:
            verdict.status = Status.REJECTED
            verdict.message = f"the program broke the harness's protocol: {violation}"
            if progress.jit_stopped():
                verdict.message += f" ({_where_it_stopped(progress, cases)})"
            return
        try:
            overrun = supervisor_records.overrun(out, problem, cases)  # the run ended at that call
        except supervisor_records.Malformed as error:
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
                where = (
                    f"in test {case.name} ({describe_sizes(case.size_set.sizes)})"
                    if progress.has_started(case.name)
                    else _where_it_stopped(progress, cases)
                )
                status, message = (
                    _crash_message(outcome, where, progress, cases, track)
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
            completed = progress.case_windows()
            benchmarks_before = [case for case in cases if case.kind == "bench" and case.name in completed]
            failure = benchmarks.judge(verdict, problem, track, benchmarks_before, out, outcome, samples)
            failure = failure or _crash_message(outcome, _where_it_stopped(progress, cases), progress, cases, track)
        if failure is None:
            failure = benchmarks.judge(verdict, problem, track, cases, out, outcome, samples)
        if failure:
            verdict.status, verdict.message = failure
            return
        verdict.status = Status.ACCEPTED
        verdict.score_us = geometric_mean([b.median_us for b in verdict.benchmarks])
        passed = f"all {len(verdict.tests)} tests passed"
        verdict.message = passed + (f"; score {verdict.score_us:.2f} us" if verdict.score_us else "")
    except check.TamperedOutput as error:
        verdict.status, verdict.message = Status.REJECTED, f"result files tampered with: {error}"


def _where_it_stopped(progress: supervisor_records.Progress, cases: list[request.Case]) -> str:
    started = progress.started()
    if started:
        return f"in {started[-1]}"
    sizes = _jit_sizes(progress, cases)
    if sizes is not None:
        return f"in the JIT/autotune stage (the untimed first call at {sizes}, before the tests)"
    return "while loading the library" if progress.loading else "before running any test"


def _jit_sizes(progress: supervisor_records.Progress, cases: list[request.Case]) -> str | None:
    """The sizes of the JIT stage's call the run ended in ("M=3, N=5"), None if it did not end there."""
    stopped = progress.jit_stopped()
    return next((describe_sizes(c.size_set.sizes) for c in cases if stopped and c.name == stopped), None)


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
        changes = supervisor_records.input_changes(out, f"{case.name}.d{draw}")
        inputs = [(index, param) for index, param in enumerate(problem.pointer_params) if param.role == "input"]
        if got is None or changes is None or any(index not in changes for index, _ in inputs):
            return None
        for index, param in inputs:
            count, first = changes[index]
            if count:
                return TestResult(
                    case.name,
                    size_set.sizes,
                    Status.WRONG_ANSWER,
                    message=(
                        f"input {param.name} was modified ({count} elements, the first at flat index {first}): "
                        "inputs are read-only"
                    ),
                )
        expected_inputs = check.call_inputs(problem, case, draw)
        reference = check.reference_outputs(problem, size_set, expected_inputs)
        for param in problem.output_params:
            result = check.compare(got[param.name], reference[param.name], atol, rtol)
            worst_abs, worst_rel = max(worst_abs, result.max_abs_err), max(worst_rel, result.max_rel_err)
            if not result.ok:
                return check.wrong_output(case.name, size_set.sizes, param.name, result, second_draw=draw > 0)
    tail = _side_stream_tail_ms(out, case.name)
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


def _side_stream_tail_ms(out: Path, case: str) -> float | None:
    """How long device work outlived solve in a test's calls, if it did so by more than allowed in every draw
    (the least of them); None if not, or if the record is odd. Every draw, not one: a worker the machine kept
    off its core for a moment stretches one call's tail (an honest 5 ms naive softmax showed 2.4 ms once on the
    H100), a side stream stretches them all."""
    calls = supervisor_records.call_tails(out, case)
    if calls is None:
        return None
    tails = {
        draw: (tail_ms, max(SIDE_STREAM_TAIL_MS, SIDE_STREAM_TAIL_FRACTION * call_ms))
        for draw, (call_ms, tail_ms) in calls.items()
    }
    if len(tails) < request.DRAWS_PER_TEST or any(tail <= allowed for tail, allowed in tails.values()):
        return None
    return min(tail for tail, _ in tails.values())
