"""The reference solutions of a problem: `solutions/<slug>/NN_name.cu|.cpp`, a ladder ordered by NN."""

from __future__ import annotations

import sys
from pathlib import Path

from grader.build.compiler import EXTENSIONS
from grader.build.toolchain import default_track
from grader.problems.spec import REPO_ROOT


def ladder(slug: str, track: str) -> list[Path]:
    """The rungs for `track`, slowest idea first."""
    return sorted((REPO_ROOT / "solutions" / slug).glob(f"[0-9]*{EXTENSIONS[track]}"))


def best(slug: str, track: str | None = None) -> Path:
    """The top rung for `track` (default: the track this machine runs best)."""
    rungs = ladder(slug, track or default_track())
    if not rungs:
        raise FileNotFoundError(f"no reference solution for {slug} on the {track or default_track()} track")
    return rungs[-1]


if __name__ == "__main__":  # `python -m grader.problems.solutions SLUG` prints the best rung, for the Makefile
    from grader.problems.spec import list_slugs

    slug = sys.argv[1] if len(sys.argv) > 1 else ""
    if slug not in list_slugs():  # said as `grader submit` says it (grader/cli/args.py), without a traceback
        sys.exit(
            f"error: unknown problem {slug!r}; the known problems are: {', '.join(list_slugs())} (see: grader list)"
        )
    try:
        print(best(slug))
    except FileNotFoundError as error:
        sys.exit(f"error: {error}")
