"""The learning path: the order `grader list` and the site's index show the problems in.

`problems/ORDER` lists slugs, one a line (`#` starts a comment): the path from the hello world to the hardest
kernels. A slug listed there with no problem folder is skipped; a problem the file does not list comes after the
listed ones, easy before hard, then by slug; a missing file orders every problem that way.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any, TypeVar

DIFFICULTY = ("easy", "medium", "hard")
T = TypeVar("T")


def path_file(root: Path) -> Path:
    return root / "ORDER"


def read(root: Path) -> list[str]:
    """The slugs of `root`/ORDER in order, comments and blank lines left out; [] when there is no file."""
    try:
        text = path_file(root).read_text(errors="replace")
    except OSError:
        return []
    return [line.split("#", 1)[0].strip() for line in text.splitlines() if line.split("#", 1)[0].strip()]


def ordered(problems: Iterable[T], root: Path | None = None) -> list[T]:
    """`problems` (anything with .slug and .difficulty) along the learning path of `root` (default: the
    problems folder)."""
    if root is None:
        from grader.problems.catalog import problems_root

        root = problems_root()
    rank = {slug: i for i, slug in enumerate(read(root))}

    def key(problem: Any) -> tuple:
        slug = problem.slug
        difficulty = DIFFICULTY.index(problem.difficulty) if problem.difficulty in DIFFICULTY else len(DIFFICULTY)
        return (rank.get(slug, len(rank)), difficulty, slug)

    return sorted(problems, key=key)
