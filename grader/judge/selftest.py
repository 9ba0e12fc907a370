"""The judge checks itself: every reference solution must be accepted, every null answer rejected.

Call it as

    from grader.judge.selftest import selftest
    from grader.problems.catalog import load_all
    rows = selftest(load_all(), ["cpu"], progress=print)
    ok = all(row.ok for row in rows)

For each problem and track, every rung of the ladder in solutions/<slug>/ (grader.problems.solutions.ladder) is graded
in "test" mode and must be `accepted`. Every null answer of the problem (`null_answers` in its reference.py)
is fed straight to the checker on each of the track's tests and must be rejected: it is when at least one
test fails it. A problem with no solution for a track gets a failing row too.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch

from grader.judge import check, pipeline
from grader.problems import solutions
from grader.problems.spec import Problem
from grader.verdict.status import Status

REJECTED = "rejected"


@dataclass
class SelftestRow:
    problem: str
    track: str
    what: str  # a solution's path, or "null answer: <name>"
    expected: str  # "accepted" for solutions, "rejected" for null answers
    got: str
    ok: bool
    detail: str = ""  # why a solution went wrong; on how many tests a null answer fails


def selftest(
    problems: list[Problem], tracks: list[str], progress: Callable[[str], None] | None = None
) -> list[SelftestRow]:
    say = progress or (lambda _message: None)
    rows = []
    for problem in problems:
        for track in tracks:
            try:
                rows += _solutions(problem, track, say)
                say(f"{problem.slug} ({track}): null answers")
                rows += _null_answers(problem, track)
            except Exception as error:  # a broken reference.py: say so and go on to the other problems
                detail = f"{type(error).__name__}: {error}"
                rows.append(SelftestRow(problem.slug, track, "reference.py", "", "error", False, detail))
    return rows


def _solutions(problem: Problem, track: str, say: Callable[[str], None]) -> list[SelftestRow]:
    files = solutions.ladder(problem.slug, track)
    if not files:
        return [
            SelftestRow(
                problem.slug,
                track,
                f"solutions/{problem.slug}/",
                Status.ACCEPTED,
                "no such file",
                False,
                "every problem needs reference solutions on every track",
            )
        ]
    rows = []
    for path in files:
        what = str(path.relative_to(path.parents[2])) if len(path.parents) > 2 else str(path)  # solutions/SLUG/FILE
        say(f"{problem.slug} ({track}): {what}")
        verdict = pipeline.grade(problem, path.read_bytes(), path.name, track=track, mode="test")
        rows.append(
            SelftestRow(
                problem.slug,
                track,
                what,
                Status.ACCEPTED,
                verdict.status,
                verdict.accepted,
                "" if verdict.accepted else verdict.message,
            )
        )
    return rows


def by_output(problem: Problem, answer) -> dict:
    """A null answer as {output name: tensor}: a problem with one output gives a tensor, one with several a tuple
    (in signature order) or a dict by name; an answer wrong in any output is a wrong answer."""
    names = [p.name for p in problem.output_params]
    if isinstance(answer, dict):
        return answer
    if isinstance(answer, (tuple, list)):
        if len(answer) != len(names):
            raise ValueError(
                f"a null answer of {problem.slug} gives {len(answer)} outputs, the signature has {len(names)}"
            )
        return dict(zip(names, answer))
    if len(names) != 1:
        raise ValueError(f"a null answer of {problem.slug} must give each of its outputs {names}")
    return {names[0]: answer}


def _as_output(answer: torch.Tensor) -> np.ndarray:
    """A null answer as the buffer a kernel would write: int32 for an integer answer (exact past 2^24), else
    float32."""
    return answer.to(torch.float32 if answer.is_floating_point() else torch.int32).cpu().numpy().reshape(-1)


def _null_answers(problem: Problem, track: str) -> list[SelftestRow]:
    """One row per null answer, saying on how many of the tests it was tried it fails."""
    failed: dict[str, list[str]] = {}
    tried: dict[str, int] = {}
    for size_set in problem.tests_for(track):
        arrays = check.make_inputs(problem, size_set, secrets.randbits(64), 0)
        expected = check.reference_outputs(problem, size_set, arrays)
        inputs = check.reference_inputs(problem, size_set, arrays)
        with torch.no_grad():
            answers = problem.reference_module.null_answers(**inputs, **size_set.sizes)
        atol, rtol = problem.tolerances_for(size_set)
        for name, answer in answers.items():
            tried[name] = tried.get(name, 0) + 1
            failed.setdefault(name, [])
            outputs = by_output(problem, answer)
            if any(not check.compare(_as_output(outputs[out]), ref, atol, rtol).ok for out, ref in expected.items()):
                failed[name].append(size_set.name)
    return [
        SelftestRow(
            problem.slug,
            track,
            f"null answer: {name}",
            REJECTED,
            REJECTED if failed[name] else Status.ACCEPTED,
            bool(failed[name]),
            f"fails {len(failed[name])} of the {tried[name]} tests it was tried on"
            if failed[name]
            else "passes every test: the tolerance is too loose",
        )
        for name in tried
    ]
