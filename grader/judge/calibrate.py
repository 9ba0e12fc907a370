"""`grader calibrate`: does a problem's tolerance admit every right answer and reject every wrong one?

On each test of the problem (and each `calibration:` size set of its spec) small enough for the CPU, it draws the
inputs from the judge's generator, computes the float64 reference, and measures three kinds of answer by their
margin, the worst error as a multiple of the allowance (|got - ref| / (atol + rtol |ref|); NaN counts as
infinite):
- admitted: what a correct kernel may compute: reference.py's `admitted(...)` (a dict of named answers), else the
  reference itself run in float32. Each must pass everywhere.
- low precision: reference.py's `low_precision(...)`, else the reference on inputs rounded to TF32, FP16 and
  BF16 (those that change the inputs: half inputs are already FP16), computed in float32. Each must fail on
  every size set marked `reject_low_precision: true`; elsewhere it may pass.
- null answers: reference.py's `null_answers(...)`. Each must fail on at least one size set.
Since atol and rtol scale the allowance together, the figures give the range of scales s that separate them:
s >= every admitted margin, s < every low-precision margin where it must fail, s < each null answer's largest
margin. A scale of 1 inside that range is the proof; outside it, the proposal is the range's geometric middle.
It also warns (a note) where the constraints let a size of `grid_axes` past the launch limit and no CUDA test
goes there (grader/problems/launch_limits.py).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import torch

from grader.judge import check, precision
from grader.problems.spec import Problem, SizeSet, describe_sizes

SEED = 0x5EED
MAX_FLOPS = 4e9  # size sets above this (the float64 reference and the emulations on the CPU) are left out
MAX_BYTES = 300e6  # by the problem's bytes formula: prefix-sum's 400 MB test took 11.6 GB of float64 work here
ADMITTED, LOW, NULL = "admitted", "low precision", "null answer"


@dataclass
class Row:
    size_set: str
    sizes: dict
    kind: str  # ADMITTED, LOW or NULL
    answer: str
    margin: float  # worst error / allowance
    passes: bool  # what the checker says
    must: str  # "pass", "fail", "may pass" (low precision off the marked sets), "fail somewhere" (null)


@dataclass
class Calibration:
    problem: str
    rows: list[Row] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # size sets too large for the CPU
    failures: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    scale_low: float = 0.0  # the allowance may be scaled by any s in [scale_low, scale_high)
    scale_high: float = math.inf

    @property
    def ok(self) -> bool:
        return not self.failures

    @property
    def proposal(self) -> float | None:
        """The scale of atol and rtol the figures propose (None when none separates them)."""
        if self.scale_low >= self.scale_high:
            return None
        if self.scale_low <= 1 < self.scale_high:
            return 1.0
        if math.isinf(self.scale_high):
            return max(2 * self.scale_low, 1e-300)
        return math.sqrt(max(self.scale_low, 1e-300) * self.scale_high)


def size_sets(
    problem: Problem, max_flops: float = MAX_FLOPS, max_bytes: float = MAX_BYTES
) -> tuple[list[SizeSet], list[str]]:
    """The tests (every track) and calibration sets small enough for the CPU, and the names of those left out: a
    memory-bound problem's large set does little arithmetic but its float64 copies and emulations take tens of
    times its bytes in memory, so both its work and its bytes are bounded."""
    kept: list[SizeSet] = []
    skipped: list[SizeSet] = []
    for size_set in problem.tests + problem.calibration:
        flops, nbytes = problem.work(size_set.sizes)
        (kept if flops <= max_flops and nbytes <= max_bytes else skipped).append(size_set)
    return kept, [s.name for s in skipped]


def margin(got: torch.Tensor, expected: torch.Tensor, atol: float, rtol: float) -> float:
    """The worst error as a multiple of the allowance (NaN and Inf count as infinitely wrong)."""
    got = got.detach().cpu().to(torch.float64).reshape(expected.shape)
    err = (got - expected.cpu()).abs()
    if not bool(torch.isfinite(got).all()):
        return math.inf
    allowance = atol + rtol * expected.cpu().abs()
    ratio = torch.where(err == 0, torch.zeros_like(err), err / allowance)
    return float(ratio.max()) if ratio.numel() else 0.0


def _judge(answer, expected: dict[str, torch.Tensor], atol: float, rtol: float) -> tuple[float, bool]:
    """(worst margin over the outputs, whether the checker passes every output) of one answer."""
    answers = answer if isinstance(answer, (tuple, list)) else (answer,)
    worst, passes = 0.0, True
    for got, (_, ref) in zip(answers, expected.items()):
        flat = got.detach().cpu().to(torch.float32 if got.is_floating_point() else torch.int32).reshape(-1).numpy()
        passes = passes and check.compare(flat, ref.cpu(), atol, rtol).ok
        worst = max(worst, margin(got, ref, atol, rtol))
    return worst, passes


def answers(problem: Problem, inputs64: dict[str, torch.Tensor], sizes: dict) -> dict[str, dict]:
    """The named answers of each kind for these inputs (float64 and int64, shaped)."""
    module = problem.reference_module
    inputs32 = {n: t.to(torch.float32) if t.is_floating_point() else t for n, t in inputs64.items()}
    with torch.no_grad():
        if hasattr(module, "admitted"):
            admitted = module.admitted(**inputs32, **sizes)
        else:
            admitted = {"reference in float32": module.reference(**inputs32, **sizes)}
        if hasattr(module, "low_precision"):
            low = module.low_precision(**inputs32, **sizes)
        else:
            low = {
                f"{name} inputs": module.reference(**precision.rounded_inputs(inputs32, rounding), **sizes)
                for name, rounding in precision.ROUNDINGS.items()
                if precision.changes(inputs32, rounding)
            }
        null = module.null_answers(**inputs64, **sizes)
    return {ADMITTED: admitted, LOW: low, NULL: null}


def calibrate(
    problem: Problem,
    max_flops: float = MAX_FLOPS,
    progress: Callable[[str], None] | None = None,
    max_bytes: float = MAX_BYTES,
) -> Calibration:
    result = Calibration(problem.slug)
    sets, result.skipped = size_sets(problem, max_flops, max_bytes)
    low_margins: list[float] = []
    null_worst: dict[str, float] = {}
    for size_set in sets:
        if progress:
            progress(f"{problem.slug}: {size_set.name} ({describe_sizes(size_set.sizes)})")
        arrays = {n: t.cpu() for n, t in check.make_inputs(problem, size_set, SEED, 0).items()}
        expected = check.reference_outputs(problem, size_set, arrays)
        inputs64 = check.reference_inputs(problem, size_set, arrays)
        atol, rtol = problem.tolerances_for(size_set)
        for kind, named in answers(problem, inputs64, size_set.sizes).items():
            for name, answer in named.items():
                worst, passes = _judge(answer, expected, atol, rtol)
                must = {ADMITTED: "pass", NULL: "fail somewhere"}.get(
                    kind, "fail" if size_set.reject_low_precision else "may pass"
                )
                result.rows.append(Row(size_set.name, size_set.sizes, kind, name, worst, passes, must))
                where = f"{size_set.name} ({describe_sizes(size_set.sizes)})"
                if kind == ADMITTED:
                    result.scale_low = max(result.scale_low, worst)
                    if not passes:
                        result.failures.append(f"{name} is rejected on {where}: {worst:.3g} times the allowance")
                elif kind == LOW and size_set.reject_low_precision:
                    low_margins.append(worst)
                    if passes:
                        result.failures.append(f"{name} is admitted on {where}: {worst:.3g} of the allowance")
                elif kind == NULL:
                    null_worst[name] = max(null_worst.get(name, 0.0), worst)
    for name in null_worst:
        if not any(r.kind == NULL and r.answer == name and not r.passes for r in result.rows):
            result.failures.append(f"null answer {name!r} passes every size set tried")
    result.scale_high = min(low_margins + list(null_worst.values()), default=math.inf)
    if not any(s.reject_low_precision for s in sets) and any(r.kind == LOW for r in result.rows):
        result.notes.append("no size set is marked reject_low_precision: nothing shows reduced precision fails")
    result.notes += [gap.message for gap in problem.launch_limit_gaps()]
    return result
