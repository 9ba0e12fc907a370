"""How times are shown: one unit per table, and which timings are marked as not trustworthy.

Pure functions of numbers and verdicts (nothing here prints), used by the terminal tables and the site.
The judge flags a benchmark whose time may not be the code's own (grader/perf/stats.py); a flagged time is
still shown and ranked, but marked with DOUBT_MARK and its reasons, never silently.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

DOUBT_MARK = "?"


@dataclass(frozen=True)
class Unit:
    name: str  # "µs", "ms" or "s"
    per_us: float  # how many microseconds one of this unit is
    decimals: int

    def format(self, us: float | None, *, suffix: bool = False) -> str:
        """`us` microseconds in this unit ("" for None); with `suffix`, the unit's name after it."""
        if us is None:
            return ""
        text = f"{us / self.per_us:,.{self.decimals}f}"
        return f"{text} {self.name}" if suffix else text


MICROSECONDS = Unit("µs", 1.0, 2)
MILLISECONDS = Unit("ms", 1e3, 3)
SECONDS = Unit("s", 1e6, 3)


def unit_for(values_us: Iterable[float | None]) -> Unit:
    """One unit for every time in a table: picked by the largest, so no value needs more than 4 integer digits."""
    largest = max((v for v in values_us if v), default=0.0)
    if largest >= 1e7:
        return SECONDS
    return MILLISECONDS if largest >= 1e4 else MICROSECONDS


def doubts(verdict) -> list[str]:
    """Why the verdict's timings should not be trusted blindly: the flags the judge set on its benchmarks
    (grader/perf/stats.py: noisy, or the machine was loaded), each named by its benchmark; [] when none."""
    return [f"{b.name}: {flag}" for b in verdict.benchmarks if not b.trusted for flag in b.flags]


def with_score_in(message: str, score_us: float | None, unit: Unit) -> str:
    """A verdict's message with its score (written "score 1234.56 us" by the judge) in `unit`."""
    if not score_us:
        return message
    for written in (f"score {score_us:.2f} us", f"score {score_us:.2f} µs"):
        message = message.replace(written, f"score {unit.format(score_us, suffix=True)}")
    return message
