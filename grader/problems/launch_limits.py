"""Launch limits: sizes a natural CUDA kernel maps onto a grid axis, and whether a test reaches the limit there.

A CUDA grid holds at most 65,535 blocks on its y and z axes (2^31 - 1 on x). A kernel that puts a size on y
or z, one block per `per_block` units of it, launches nothing past that limit (the launch fails), so it is
accepted until a test crosses it: the textbook transpose grid `dim3(ceil(N/32), ceil(M/32))` fails only once
M > 65,535 * 32 = 2,097,120. problem.yaml's `grid_axes` names such sizes (formulas of the size parameters,
e.g. "M" or "B * H") with the most units one block of a natural kernel covers; `gaps` says which of them the
constraints let past the limit while no CUDA test goes there.

Whether the constraints allow it is found by a heuristic, not a solver: starting from every size at 1 and
from each test's sizes, it raises the names of the formula (one at a time, then all together) to the least
equal value that crosses the limit, and asks whether the constraints hold there. It finds the usual shapes of
constraint (upper bounds, a bound on a product of sizes); a constraint it cannot satisfy this way counts as
forbidding the sizes, so a gap is never reported where none exists, though one may be missed.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

from grader.problems import expr

GRID_YZ_LIMIT = 65_535  # blocks on a grid's y or z axis (CUDA's limit on every GPU so far)
_SEARCH_MAX = 2**31  # no size parameter (an int) goes past this


@dataclass(frozen=True)
class Gap:
    """A grid axis the constraints let past the launch limit but no CUDA test takes there."""

    size: str  # the formula, e.g. "B * H"
    per_block: int
    witness: dict[str, int]  # sizes that satisfy the constraints and cross the limit

    @property
    def message(self) -> str:
        sizes = ", ".join(f"{name}={value}" for name, value in self.witness.items())
        blocks = f"ceil(({self.size}) / {self.per_block})" if self.per_block > 1 else f"{self.size}"
        return (
            f"the constraints allow {self.size} past the launch limit ({sizes}: {blocks} > {GRID_YZ_LIMIT:,} "
            "blocks on a grid's y or z axis) but no CUDA test reaches it: add a test there, the other sizes small"
        )


def blocks(size: expr.Formula, per_block: int, sizes: dict[str, int]) -> int:
    """How many blocks a kernel that covers `per_block` units of `size` per block launches on its axis."""
    return math.ceil(expr.evaluate(size, sizes) / per_block)


def crosses(size: expr.Formula, per_block: int, sizes: dict[str, int]) -> bool:
    return blocks(size, per_block, sizes) > GRID_YZ_LIMIT


def allowed(constraints: list[str], size: expr.Formula, per_block: int, starts: list[dict[str, int]]) -> dict | None:
    """Sizes that satisfy every constraint and put `size` past the limit, found from `starts` (module docstring);
    None when the search finds none."""
    names = sorted(expr.names_in(size))
    for start in starts:
        for count in range(1, len(names) + 1):
            for raised in itertools.combinations(names, count):
                point = _least_crossing(size, per_block, start, raised)
                if point is not None and _holds(constraints, point):
                    return point
    return None


def _least_crossing(size: expr.Formula, per_block: int, start: dict[str, int], raised: tuple[str, ...]) -> dict | None:
    """`start` with the names in `raised` set to the least equal value at which `size` crosses the limit (by
    doubling, then bisection); None when no value up to 2^31 does."""

    def at(value: int) -> dict[str, int]:
        return {**start, **{name: value for name in raised}}

    high = 1
    while not _crosses_safely(size, per_block, at(high)):
        high *= 2
        if high > _SEARCH_MAX:
            return None
    low = high // 2
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (low, middle) if _crosses_safely(size, per_block, at(middle)) else (middle, high)
    return at(high)


def _crosses_safely(size: expr.Formula, per_block: int, sizes: dict[str, int]) -> bool:
    try:
        return crosses(size, per_block, sizes)
    except expr.FormulaError:
        return False


def _holds(constraints: list[str], sizes: dict[str, int]) -> bool:
    try:
        return all(expr.holds(rule, sizes) for rule in constraints)
    except expr.FormulaError:
        return False
