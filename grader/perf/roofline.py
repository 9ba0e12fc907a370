"""Roofline and speed-of-light (SOL) maths: a benchmark's roofline time and the fraction of it a result reached.

The roofline time of a benchmark is max(FLOPs / compute ceiling, bytes / copy bandwidth), from the problem's own
`flops` and `bytes` formulas and the device's *measured* ceilings (grader/perf/ceilings.py): the time the work
would take if the kernel ran at this GPU's speed of light. A result's SOL is that time over its measured time,
so 1.0 is as fast as the hardware allows and 0.25 is four times slower. Because it is a fraction of the device's
own ceilings it can be compared across GPUs: an H100 and an H200 result stand on one board.

The compute ceiling is the higher of the measured FP32 FMA rate and cuBLAS SGEMM (a float32 problem's fastest
honest path); a solution on tensor cores (3xTF32) can still pass it, and then SOL is above 1 (docs/profile.md).
For a problem with 16-bit inputs, the ceilings' view `for_inputs(2)` adds cuBLAS FP16 GEMM, and that roof binds.

A stored result carries its fractions of the ceilings (`fraction_of_peak`: bandwidth, flops, sgemm, hgemm), and
roofline time / time = max(bytes/s over copy bandwidth, FLOP/s over the compute ceiling), so SOL is computed from
those alone (grader/verdict/sol.py, which the verdict uses too): old records get one too, and no ceiling of another
machine is needed to rank them.
"""

from __future__ import annotations

from collections.abc import Mapping

from grader.perf.ceilings import Ceilings
from grader.verdict.sol import sol_from_fractions as sol_from_fractions
from grader.verdict.sol import sol_score as sol_score


def compute_ceiling(ceilings: Ceilings) -> float | None:
    """The FLOP/s roof: the highest of the measured FP32 FMA rate, cuBLAS SGEMM and (in a 16-bit problem's view)
    FP16 GEMM; None if none is known."""
    rates = [r for r in (ceilings.fp32_flops_s, ceilings.sgemm_flops_s, ceilings.hgemm_flops_s) if r]
    return max(rates) if rates else None


def roofline_s(flops: float, nbytes: float, ceilings: Ceilings) -> float | None:
    """max(flops / compute ceiling, bytes / copy bandwidth) in seconds; None where no ceiling is known."""
    times = []
    if ceilings.copy_bytes_s and nbytes:
        times.append(nbytes / ceilings.copy_bytes_s)
    roof = compute_ceiling(ceilings)
    if roof and flops:
        times.append(flops / roof)
    return max(times) if times else None


def attainable_flops_s(intensity: float, ceilings: Ceilings) -> float | None:
    """The roofline itself: min(compute ceiling, intensity x copy bandwidth) at `intensity` FLOP/byte."""
    roof = compute_ceiling(ceilings)
    if roof is None or not ceilings.copy_bytes_s:
        return roof
    return min(roof, intensity * ceilings.copy_bytes_s)


def bound_by(flops: float, nbytes: float, ceilings: Ceilings) -> str:
    """ "memory" or "compute": which roof the work meets first on this device (the ridge point decides)."""
    roof = compute_ceiling(ceilings)
    if not roof or not ceilings.copy_bytes_s:
        return "memory" if nbytes else "compute"
    return "compute" if flops / roof > nbytes / ceilings.copy_bytes_s else "memory"


def ceilings_from_result(gflops: float, gbps: float, fraction_of_peak: Mapping[str, float | None]) -> Ceilings:
    """The ceilings a stored result was measured against, recovered from its rates and fractions (for a roofline
    drawn where that device's ceilings file is not)."""

    def back(rate: float, fraction: float | None) -> float | None:
        return rate / fraction if fraction and rate else None

    return Ceilings(
        copy_bytes_s=back(gbps * 1e9, fraction_of_peak.get("bandwidth")),
        fp32_flops_s=back(gflops * 1e9, fraction_of_peak.get("flops")),
        sgemm_flops_s=back(gflops * 1e9, fraction_of_peak.get("sgemm")),
        peak_bytes_s=None,
        peak_flops_s=None,
        source="recovered from a stored result",
        hgemm_flops_s=back(gflops * 1e9, fraction_of_peak.get("hgemm")),
    )
