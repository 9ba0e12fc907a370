"""The audit of one timed call: its outputs against the float64 reference for its inputs.

Where the problem declares its rows (problem.yaml's audit_rows, grader/problems/audit_rows.py) and a benchmark
has more of them than an audit checks, every element of every output must still be written and finite, and the
reference runs on rows drawn here, after the run, with the operating system's randomness: the submission's
processes are gone before the draw, so no call can know which of its rows will be read. Elsewhere the whole
output is compared, as in a test.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence

import numpy as np

from grader.judge import check
from grader.problems.audit_rows import rows_to_draw
from grader.problems.spec import Problem, SizeSet
from grader.torch_import import torch


def draw_rows(count: int) -> np.ndarray:
    """The rows (of `count`) an audit checks, in order: the rows are cut into R runs of consecutive rows (R =
    rows_to_draw, runs of equal length but for one row) and one row is drawn uniformly in each, by a generator
    seeded with 128 bits of the operating system's randomness. Every row is drawn with probability 1/(its run's
    length), at least R/rows rounded down a row, and the draw costs O(R): a sample of R = rows/16 rows through
    SystemRandom, a system call per random number, took 6 s on a 67-million-element output."""
    drawn = rows_to_draw(count)  # as many as there are rows: runs of one, every row
    edges = np.arange(drawn + 1, dtype=np.int64) * count // drawn
    return edges[:-1] + np.random.default_rng(secrets.randbits(128)).integers(0, edges[1:] - edges[:-1])


def wrong_output(
    problem: Problem, size_set: SizeSet, got: dict[str, np.ndarray], arrays: dict[str, torch.Tensor]
) -> str:
    """'' when the call's outputs `got` are right for its inputs `arrays`; else "PARAM...: what is wrong"."""
    atol, rtol = problem.tolerances_for(size_set)
    sizes = size_set.sizes
    audit = problem.audit_rows
    if audit is None or rows_to_draw(sizes[audit.size]) == sizes[audit.size]:
        reference = check.reference_outputs(problem, size_set, arrays)
        for param in problem.output_params:
            result = check.compare(got[param.name], reference[param.name], atol, rtol)
            if not result.ok:
                return f"{param.name}: {result.message}"
        return ""
    for param in problem.output_params:
        unfinished = _unfinished(got[param.name].reshape(problem.shape(param, sizes)))
        if unfinished:
            return f"{param.name}: {unfinished}"
    rows = draw_rows(sizes[audit.size])
    reference = reference_on_rows(problem, size_set, arrays, rows)
    for param in problem.output_params:
        mine = np.take(got[param.name].reshape(problem.shape(param, sizes)), rows, axis=audit.axes[param.name])
        result = check.compare(np.ascontiguousarray(mine), reference[param.name], atol, rtol)
        if not result.ok:
            shown = ", ".join(map(str, rows[:8])) + (", ..." if len(rows) > 8 else "")
            return (
                f"{param.name} in the {len(rows)} rows audited ({audit.size} = {shown}; the indices below count "
                f"within them): {result.message}"
            )
    return ""


def _unfinished(values: np.ndarray) -> str:
    """What of an output is not a finished number: elements never written (the judge's poison), NaN, Inf. Every
    int32 is a number: an unwritten one shows in the rows compared."""
    bad = ~np.isfinite(check.widened(values.reshape(-1)))
    if not bad.any():
        return ""
    unwritten = check.poisoned(values)
    parts = [
        f"{int(mask.sum())} {what}, first at {check.index_text(int(mask.argmax()), values.shape)}"
        for mask, what in ((unwritten, "never written"), (bad & ~unwritten, "NaN or Inf"))
        if mask.any()
    ]
    return f"{int(bad.sum())} of {values.size} elements are not a result: " + "; ".join(parts)


def reference_on_rows(
    problem: Problem, size_set: SizeSet, arrays: dict[str, torch.Tensor], rows: Sequence[int] | np.ndarray
) -> dict[str, torch.Tensor]:
    """The float64 reference for only these rows of a call (problem.audit_rows): the inputs sliced along their
    axes, the row size set to how many rows there are."""
    audit = problem.audit_rows
    assert audit is not None, f"{problem.slug} declares no audit_rows"
    tensors = check.reference_inputs(problem, size_set, arrays)
    index = torch.from_numpy(np.asarray(rows, dtype=np.int64)).to(next(iter(tensors.values())).device)
    sliced = {name: t.index_select(audit.axes[name], index) if name in audit.axes else t for name, t in tensors.items()}
    return check.run_reference(problem, sliced, {**size_set.sizes, audit.size: len(rows)})
