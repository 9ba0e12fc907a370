"""Summary statistics of timing samples: median, quartiles, and the relative standard error of the median."""

import math
import statistics

import numpy as np


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
