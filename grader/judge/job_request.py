"""One grading as `grader test` and `grader submit` ask for it: problem, source text, file name, track, mode, user
and the sandbox named (or None: the default). The sandbox is chosen, then the pipeline grades, in whichever
process holds the job: the command's own (grader/cli/grading.py) or the warm worker it was handed to
(grader/scale/warm_worker.py), so both give the same verdict by the same code.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from grader.judge import pipeline
from grader.problems.spec import Problem
from grader.sandbox import container
from grader.verdict.model import Verdict


class SandboxUnavailable(Exception):
    """The sandbox the job names cannot be used here; str() says why (a usage error, not a verdict)."""


def grade(problem: Problem, job: Mapping[str, Any], progress: Callable[[str], None]) -> Verdict:
    """The verdict of `job` on `problem`; a SandboxUnavailable, or the pipeline's JudgeError when the judge fails."""
    try:
        backend, _ = container.choose(job["sandbox"], job["track"])
    except (ValueError, RuntimeError) as error:
        raise SandboxUnavailable(str(error)) from error
    return pipeline.grade(
        problem,
        job["source"].encode(),
        job["filename"],
        track=job["track"],
        mode=job["mode"],
        user=job["user"],
        backend=backend,
        progress=progress,
    )
