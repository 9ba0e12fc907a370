"""A result's speed of light (SOL) from its stored fractions of the device's measured ceilings.

roofline time / measured time = max(bytes/s over copy bandwidth, FLOP/s over the compute ceiling), and a stored
benchmark keeps both fractions (`fraction_of_peak`), so its SOL needs no ceiling file (grader/perf/roofline.py
has the maths on ceilings themselves). No imports: the verdict itself derives its SOLs with these.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping


def sol_from_fractions(fraction_of_peak: Mapping[str, float | None]) -> float | None:
    """A stored benchmark's SOL from its fractions of the ceilings: max(bandwidth, min(flops, sgemm, hgemm)); the
    FP16 GEMM fraction is there only for a problem with 16-bit inputs."""
    bandwidth = fraction_of_peak.get("bandwidth")
    compute = [f for f in (fraction_of_peak.get(k) for k in ("flops", "sgemm", "hgemm")) if f]
    parts = [p for p in (bandwidth, min(compute) if compute else None) if p]
    return max(parts) if parts else None


def sol_score(fractions: Iterable[float | None]) -> float | None:
    """The SOL of a whole submission: the geometric mean of its benchmarks' SOLs (None if any is unknown)."""
    values = list(fractions)
    if not values or any(v is None or v <= 0 for v in values):
        return None
    return math.exp(sum(math.log(v) for v in values if v) / len(values))
