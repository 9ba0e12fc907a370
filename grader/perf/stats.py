"""Summary statistics of timing samples (median, quartiles, the relative standard error of the median), and
the flags that mark a benchmark's time as not trustworthy.

A time is flagged, not dropped: the verdict keeps it with `trusted` False and the reasons in `flags`.
- noisy, by the median's relative standard error: over NOISY_RSE = 2 %, four times the 0.5 % at which the
  supervisors stop sampling (supervision.h TARGET_RSE), so only a run that spent its whole budget without settling gets
  it; its median is uncertain by about +-4 % (95 %), more than many differences a leaderboard ranks;
- noisy, by the spread itself: an interquartile range over NOISY_IQR = 20 % of the median. A kernel on an
  idle device repeats to within a few percent; a middle half of the calls this wide means something else
  (clock changes, another process, a cache state that flips) moved the times, however many samples pinned
  the median;
- machine loaded: the 1-minute load average over the number of cores, read before or after the run, over
  LOADED_PER_CORE = 1: more threads wanted to run than there were cores, so the harness waited for a core
  too (the run's own threads count, but a run of at most one thread per core cannot take it over 1).
"""

from __future__ import annotations

import math
import os
import statistics

import numpy as np

from grader.verdict.model import BenchmarkResult

NOISY_RSE = 0.02
NOISY_IQR = 0.20
LOADED_PER_CORE = 1.0


def summarise_ms(times_ms: list[float]) -> dict:
    """Median and spread in microseconds; rse_of_median from the interquartile range (robust to outliers)."""
    median = statistics.median(times_ms)
    q1, q3 = (float(q) for q in np.percentile(times_ms, [25, 75]))
    rse = 1.2533 * ((q3 - q1) / 1.349) / math.sqrt(len(times_ms)) / median if median > 0 else float("inf")
    return {
        "median_us": median * 1e3,
        "q1_us": q1 * 1e3,
        "q3_us": q3 * 1e3,
        "iqr_us": (q3 - q1) * 1e3,
        "rse_of_median": rse,
    }


def timing_flags(
    result: BenchmarkResult, load_before: float | None, load_after: float | None, cores: int | None = None
) -> list[str]:
    """Why this benchmark's time may not be the code's own ([] when it is trustworthy); loads may be None."""
    flags = []
    rse = result.spread.get("rse_of_median")
    if rse is not None and not rse <= NOISY_RSE:
        flags.append(f"noisy: the median is uncertain by {rse:.1%} (relative standard error; over {NOISY_RSE:.0%})")
    iqr = result.spread.get("iqr_us")
    if iqr is not None and result.median_us > 0 and iqr / result.median_us > NOISY_IQR:
        flags.append(
            f"noisy: the middle half of the samples spans {iqr / result.median_us:.0%} of the median "
            f"(over {NOISY_IQR:.0%})"
        )
    cores = cores or os.cpu_count() or 1
    loads = [(when, load) for when, load in (("before", load_before), ("after", load_after)) if load is not None]
    busy = [f"{load:.1f} {when}" for when, load in loads if load / cores > LOADED_PER_CORE]
    if busy:
        flags.append(f"machine loaded: load average {' and '.join(busy)} the run, on {cores} cores")
    return flags


def mark_trust(results: list[BenchmarkResult], load_before: float | None, load_after: float | None) -> None:
    """Sets each result's `flags` (timing_flags) and `trusted` (no flag)."""
    for result in results:
        result.flags = timing_flags(result, load_before, load_after)
        result.trusted = not result.flags
