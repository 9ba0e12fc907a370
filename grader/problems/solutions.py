"""The reference solutions of a problem: `solutions/<slug>/NN_name.cu|.cpp|.py`, a ladder per track ordered by NN
(a .py rung's track is the framework it imports: triton or cupy).

They live in `solutions/` beside the problems folder (the repository's, or $KERNELJUDGE_PROBLEMS's parent when
that has one), so a problem set kept elsewhere carries its own ladders.
"""

from __future__ import annotations

from pathlib import Path

from grader import tracks
from grader.problems.catalog import REPO_ROOT, problems_root


def root() -> Path:
    """The folder of ladders: solutions/ beside the problems folder, else the repository's."""
    return problems_root().parent / "solutions"


def ladder(slug: str, track: str) -> list[Path]:
    """The rungs for `track`, slowest idea first (from the repository's ladders when root() has none)."""
    found = _rungs(root() / slug, track)
    return found or _rungs(REPO_ROOT / "solutions" / slug, track)


def _rungs(folder: Path, track: str) -> list[Path]:
    extension = tracks.get(track).extension
    return [path for path in sorted(folder.glob(f"[0-9]*{extension}")) if tracks.of_file(path) == track]


def best(slug: str, track: str | None = None) -> Path:
    """The top rung for `track` (default: the track this machine runs best)."""
    track = track or tracks.default()
    rungs = ladder(slug, track)
    if not rungs:
        raise FileNotFoundError(f"no reference solution for {slug} on the {track} track")
    return rungs[-1]
