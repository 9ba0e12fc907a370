"""One grading request graded: its sandbox chosen, then the pipeline, in whichever process holds it: `grader test`
and `grader submit`'s own (grader/cli/grading.py), the warm worker they hand it to (grader/scale/warm/worker.py),
the web judge's embedded worker, and the grade-many and Celery workers (grader/scale/jobs.py), so every way in
gives the same verdict by the same code. The request was validated when it was made
(grader/judge/grading_request.py).
"""

from __future__ import annotations

from collections.abc import Callable

from grader.judge import pipeline
from grader.judge.gpu_turn import GpuTurn
from grader.judge.grading_request import GradingRequest
from grader.sandbox import container
from grader.verdict.model import Verdict


class SandboxUnavailable(Exception):
    """The sandbox the job names cannot be used here; str() says why (a usage error, not a verdict)."""


def grade(
    request: GradingRequest,
    progress: Callable[[str], None] | None = None,
    sandbox: str | None = None,
    turn: GpuTurn | None = None,
) -> Verdict:
    """The verdict of `request`, its submission_id the request's id, graded in `sandbox` (auto, docker, local;
    None: $KERNELJUDGE_SANDBOX, else auto), taking `turn`s on a GPU another grading shares (pipeline.grade); a
    SandboxUnavailable, or the pipeline's JudgeError when the judge fails."""
    try:
        backend, _ = container.choose(sandbox, request.track)
    except (ValueError, RuntimeError) as error:
        raise SandboxUnavailable(str(error)) from error
    verdict = pipeline.grade(
        request.spec(),
        request.source_bytes,
        request.filename,
        track=request.track,
        mode=request.mode,
        user=request.user,
        time_limit_s=request.time_limit_s,
        backend=backend,
        progress=progress,
        turn=turn,
    )
    verdict.submission_id = request.id
    return verdict
