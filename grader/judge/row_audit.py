"""The audit of one timed call: its outputs against the float64 reference for its inputs.

Where the problem declares its rows (problem.yaml's audit_rows, grader/problems/audit_rows.py) and a benchmark
has more of them than an audit checks, the trusted supervisor drew a seed once the benchmark's calls were over,
scanned every element of every output, and kept only the rows the seed picks (grader/run/row_audit.h): every
element must still be written and finite, and the reference runs on the drawn rows alone (or, for a problem whose
rows need the whole call, on the whole call, of which the drawn rows are compared). Elsewhere the whole
output was kept and is compared, as in a test.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

from grader.judge import check, supervisor_records
from grader.problems.audit_rows import rows_to_draw
from grader.problems.spec import Problem, SizeSet
from grader.run import inputs as gen
from grader.torch_import import torch


def row_audited(problem: Problem, size_set: SizeSet) -> bool:
    """Whether a benchmark's audits keep drawn rows rather than whole outputs."""
    audit = problem.audit_rows
    return audit is not None and rows_to_draw(size_set.sizes[audit.size]) < size_set.sizes[audit.size]


def wrong_call(problem: Problem, size_set: SizeSet, out: Path, stem: str, call_seed: int) -> str:
    """'' when the audited call STEM's outputs in `out` are right for its inputs, those of `call_seed`
    (grader/run/inputs.py call_seed); else what the call did, as "returned a wrong PARAM...: what" or "left no
    output" (its records missing). TamperedOutput if an output file is odd."""
    if not row_audited(problem, size_set):
        got = check.read_call(problem, size_set, out, stem)
        if got is None:
            return "left no output"
        reference = _whole_reference(problem, size_set, call_seed)
        for param in problem.output_params:
            result = check.compare(got[param.name], reference[param.name], *problem.tolerances_for(size_set))
            if not result.ok:
                return f"returned a wrong {param.name}: {result.message}"
        return ""
    return _wrong_rows(problem, size_set, out, stem, call_seed)


def _wrong_rows(problem: Problem, size_set: SizeSet, out: Path, stem: str, call_seed: int) -> str:
    """wrong_call for a row-audited benchmark: the scan of the whole outputs, then the drawn rows."""
    audit = problem.audit_rows
    assert audit is not None
    sizes = size_set.sizes
    record = supervisor_records.audit_scan(out, stem)
    if record is None:
        return "left no output (the audit's scan is missing or malformed)"
    seed, scans = record
    rows = drawn_rows(seed, sizes[audit.size], rows_to_draw(sizes[audit.size]))
    got = {}
    for index, param in enumerate(problem.pointer_params):
        if param.role != "output":
            continue
        shape = problem.shape(param, sizes)
        scan = scans.get(index)
        if scan is None:
            return f"left no output (the audit's scan of {param.name} is missing)"
        unfinished = _unfinished(scan, shape)
        if unfinished:
            return f"returned a wrong {param.name}: {unfinished}"
        drawn_shape = list(shape)
        drawn_shape[audit.axes[param.name]] = len(rows)
        values = check.read_buffer(out / f"{stem}.{index}.bin", math.prod(drawn_shape), param.dtype)
        if values is None:
            return "left no output"
        got[param.name] = values.reshape(drawn_shape)
    reference = reference_on_rows(problem, size_set, call_seed, rows)
    for param in problem.output_params:
        result = check.compare(got[param.name].reshape(-1), reference[param.name], *problem.tolerances_for(size_set))
        if not result.ok:
            shown = ", ".join(map(str, rows[:8].tolist())) + (", ..." if len(rows) > 8 else "")
            return (
                f"returned a wrong {param.name} in the {len(rows)} rows audited ({audit.size} = {shown}; the indices "
                f"below count within them): {result.message}"
            )
    return ""


def drawn_rows(seed: int, rows: int, drawn: int) -> torch.Tensor:
    """The rows an audit under `seed` checks, ascending, on the checker's device: run k of `drawn` is the rows
    [k*rows/drawn, (k+1)*rows/drawn), and the elements' hash of k picks one (grader/boundary/generator.h
    drawn_row). int64 holds k*rows: the supervisor takes fewer than 2^32 rows, and drawn is a sixteenth."""
    k = torch.arange(drawn, dtype=torch.int64, device=check.device())
    low, high = k * rows // drawn, (k + 1) * rows // drawn
    return low + gen.hashes(seed, drawn, check.device()) % (high - low)


def _unfinished(scan: supervisor_records.Scan, shape: tuple[int, ...]) -> str:
    """What the supervisor's scan found of an output that is not a finished number: elements never written (the
    judge's poison), NaN, Inf. Every int32 is a number: an unwritten one shows in the rows compared."""
    if not scan.unwritten and not scan.bad:
        return ""
    parts = [
        f"{count} {what}, first at {check.index_text(first, shape)}"
        for count, first, what in (
            (scan.unwritten, scan.first_unwritten, "never written"),
            (scan.bad, scan.first_bad, "NaN or Inf"),
        )
        if count
    ]
    return f"{scan.unwritten + scan.bad} of {math.prod(shape)} elements are not a result: " + "; ".join(parts)


def reference_on_rows(
    problem: Problem, size_set: SizeSet, call_seed: int, rows: Sequence[int] | torch.Tensor
) -> dict[str, torch.Tensor]:
    """The float64 reference for only these rows of the call whose inputs are `call_seed`'s (problem.audit_rows):
    the inputs named in its axes made on those rows alone, the row size set to how many rows there are; or, for
    a whole reference, the call's reference with only these rows kept."""
    audit = problem.audit_rows
    assert audit is not None, f"{problem.slug} declares no audit_rows"
    drawn = torch.as_tensor(rows, dtype=torch.int64).to(check.device())
    if audit.reference == "whole":
        whole = _whole_reference(problem, size_set, call_seed)
        return {name: out.index_select(audit.axes[name], drawn.to(out.device)) for name, out in whole.items()}
    sliced = {**size_set.sizes, audit.size: len(drawn)}
    indices = {
        p.name: _row_elements(problem.shape(p, size_set.sizes), audit.axes[p.name], drawn)
        for p in problem.input_params
        if p.name in audit.axes
    }
    arrays = check.make_inputs(problem, size_set, call_seed, 0, indices)
    tensors = {
        p.name: check.reference_input(
            p, arrays[p.name], problem.shape(p, sliced if p.name in indices else size_set.sizes)
        )
        for p in problem.input_params
    }
    return check.run_reference(problem, tensors, sliced)


def _whole_reference(problem: Problem, size_set: SizeSet, call_seed: int) -> dict[str, torch.Tensor]:
    """The float64 reference of the whole call whose inputs are `call_seed`'s."""
    return check.reference_outputs(problem, size_set, check.make_inputs(problem, size_set, call_seed, 0))


def _row_elements(shape: tuple[int, ...], axis: int, rows: torch.Tensor) -> torch.Tensor:
    """The flat indices of a buffer of `shape` that lie in `rows` along `axis`, in the order index_select along
    that axis would give them."""
    outer, inner = math.prod(shape[:axis]), math.prod(shape[axis + 1 :])
    first = torch.arange(outer, dtype=torch.int64, device=rows.device)[:, None, None] * shape[axis]
    within = torch.arange(inner, dtype=torch.int64, device=rows.device)[None, None, :]
    return ((first + rows[None, :, None]) * inner + within).reshape(-1)
