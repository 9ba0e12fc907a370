"""Profile one submission: compile it, profile one call of a benchmark under ncu, summarise it (a Profile).

Everything that can go wrong without a profile to show (no GPU, no ncu, a compile error, ncu refused by the
driver or the sandbox, a program that crashed before launching anything) is a ProfileError whose message says
why; a call whose program failed after its kernels ran still gives a profile, with that said in its advice.
"""

from __future__ import annotations

import secrets
from pathlib import Path

from grader.build import compiler
from grader.perf import ceilings
from grader.problems.spec import Problem, SizeSet
from grader.profile import capture, ncu, parse, summary
from grader.profile.model import Profile
from grader.profile.ncu import ProfileError
from grader.toolchain import detect
from grader.tracks import cuda

__all__ = ["ProfileError", "benchmark", "from_csv", "profile_submission"]


def benchmark(problem: Problem, name: str | None) -> SizeSet:
    """The CUDA benchmark called `name` (default: the first); ValueError naming the known ones."""
    known = problem.benchmarks_for(cuda.NAME)
    if not known:
        raise ValueError(f"{problem.slug} has no CUDA benchmark to profile")
    if name is None:
        return known[0]
    found = next((b for b in known if b.name == name), None)
    if found is None:
        raise ValueError(
            f"{problem.slug} has no benchmark {name!r}; its benchmarks: {', '.join(b.name for b in known)}"
        )
    return found


def from_csv(problem: Problem, size_set: SizeSet, raw_csv: str, device_ceilings: ceilings.Ceilings, **facts) -> Profile:
    """The Profile of a recorded `ncu --csv --page raw` export (what the tests and fixtures use)."""
    return summary.profile(
        problem.slug,
        size_set.name,
        dict(size_set.sizes),
        problem.work(size_set.sizes),
        parse.launches(raw_csv),
        device_ceilings,
        **facts,
    )


def profile_submission(
    problem: Problem,
    source: bytes,
    filename: str,
    *,
    benchmark_name: str | None = None,
    raw: Path | None = None,
    unsandboxed: bool = False,
    export_dir: Path | None = None,
) -> Profile:
    size_set = benchmark(problem, benchmark_name)
    tools = detect()
    ncu_path = ncu.require()
    build = compiler.build_submission(problem, source, filename, cuda.NAME)
    if not build.ok or build.library is None:
        raise ProfileError(f"the submission does not compile:\n{build.log}")
    if build.refused:
        raise ProfileError(build.refused)
    got = capture.one_call(
        problem,
        build.library,
        size_set,
        seed=secrets.randbits(64),
        keep_report=raw,
        unsandboxed=unsandboxed,
        export_dir=export_dir,
    )
    quoted = ncu.error_lines(got.log)
    failed = ncu.diagnose(got.log, got.returncode) + (f"\nncu said:\n{quoted}" if quoted else "")
    if tools.gpu is None:
        failed = "this machine has no GPU visible (nvidia-smi found none); " + failed
    if not got.csv.strip():
        raise ProfileError(failed)
    try:
        launched = parse.launches(got.csv)
    except parse.ReportError as error:
        raise ProfileError(f"ncu's CSV could not be read: {error}")
    if got.returncode != 0 and not parse.submissions(launched):
        raise ProfileError(failed)
    result = summary.profile(
        problem.slug,
        size_set.name,
        dict(size_set.sizes),
        problem.work(size_set.sizes),
        launched,
        ceilings.for_track(cuda.NAME).for_inputs(problem.tensor_rate),
        device=tools.gpu.name if tools.gpu else "",
        ncu_version=ncu.version(ncu_path),
        ncu_options=list(ncu.SETTINGS),
        raw_report=str(got.kept_report) if got.kept_report else None,
    )
    if got.returncode != 0:
        result.advice.append(
            f"the profiled call failed (exit status {got.returncode}), so this profile may be incomplete"
        )
    return result
