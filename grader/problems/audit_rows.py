"""Row audits: how a problem says which rows of its outputs can be checked on their own.

A timed call's audit recomputes the float64 reference for that call's inputs, which on a large benchmark costs
more than the call itself many times over. Where every output is row-independent along one size (each row
depends on the same row of some inputs and on the whole of the others), problem.yaml says so:

    audit_rows: {size: M, axes: {A: 0, C: 0}}      # matmul: row i of C needs row i of A and all of B

`axes` names each sliced buffer with the axis that runs over `size` (every output must be named; an input not
named is passed whole). Where an output's rows can be told apart but each needs more than its own rows of the
inputs (a scan, a sort), `reference: whole` says so: the reference runs on the whole call and the drawn rows are
taken from its outputs, which still spares the whole output's way out of the GPU:

    audit_rows: {size: N, axes: {output: 0}, reference: whole}   # prefix-sum: output i needs input[0..i]

Once a benchmark's calls are over, the trusted supervisor draws the rows of each audited call, scans its whole
outputs for elements never written or not finite, and keeps only the drawn rows (grader/run/row_audit.h); the
grader runs the reference on those rows alone, with `size` set to how many were drawn, or on the whole call
(grader/judge/row_audit.py). tests/test_row_audit.py checks, for every problem that declares it, that the
sliced reference gives the full reference's rows.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

# The rows an audit draws: a sixteenth of them, and at least MIN_ROWS (all of them when there are fewer). A call
# wrong on a fraction f of its rows escapes one audit with probability at most (1 - f) ** rows (docs/security.md).
ROW_FRACTION = 16
MIN_ROWS = 64


class AuditRows(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    size: str = Field(min_length=1)  # a size parameter: the number of rows
    axes: dict[str, int] = Field(min_length=1)  # buffer name -> the axis that runs over `size`
    reference: Literal["rows", "whole"] = "rows"  # on the drawn rows' inputs, or on the whole call's


def faults_of(audit: AuditRows, shapes: dict[str, list[str | int]], outputs: list[str], sizes: list[str]) -> list[str]:
    """What is wrong with `audit` for a signature whose buffers have these `shapes` (formulas per dimension):
    one sentence per fault, none when it is sound."""
    faults = []
    if audit.size not in sizes:
        faults.append(f"size {audit.size!r} is not one of the size parameters {sizes}")
    for name, axis in audit.axes.items():
        if name not in shapes:
            faults.append(f"{name!r} is not a buffer of the signature")
        elif not 0 <= axis < len(shapes[name]):
            faults.append(f"{name!r} has no axis {axis} (it has {len(shapes[name])})")
        elif str(shapes[name][axis]).strip() != audit.size:
            faults.append(f"axis {axis} of {name!r} is {shapes[name][axis]!r}, not {audit.size!r}")
    faults += [f"output {name!r} is not named in axes" for name in outputs if name not in audit.axes]
    if audit.reference == "whole":
        faults += [
            f"input {name!r} is named in axes, but a whole reference slices no input"
            for name in audit.axes
            if name in shapes and name not in outputs
        ]
    return faults


def rows_to_draw(rows: int) -> int:
    """How many of `rows` rows an audit checks."""
    return min(rows, max(MIN_ROWS, math.ceil(rows / ROW_FRACTION)))


def row_layout(
    audit: AuditRows | None, sizes: Mapping[str, int], outputs: Mapping[str, Sequence[int]]
) -> tuple[int, int, list[tuple[int, int]]]:
    """(rows, rows drawn, (outer, inner) of each output of `outputs`: name -> shape, in buffer order) of a
    benchmark's audit at these sizes, each output seen as [outer, rows, inner]; (0, 0, []) where the outputs are
    compared whole (no audit_rows, or no more rows than an audit checks)."""
    if audit is None or rows_to_draw(sizes[audit.size]) == sizes[audit.size]:
        return 0, 0, []
    split = [(shape[: audit.axes[name]], shape[audit.axes[name] + 1 :]) for name, shape in outputs.items()]
    rows = sizes[audit.size]
    return rows, rows_to_draw(rows), [(math.prod(before), math.prod(after)) for before, after in split]
