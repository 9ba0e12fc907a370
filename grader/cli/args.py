"""Command-line arguments made into what the commands need (a problem, a track, a source file), or usage errors.

Nothing is imported before it is needed: `grader --help` loads no spec (pydantic) at all.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from grader.cli.output import usage_error

if TYPE_CHECKING:
    from grader.problems.spec import Problem

TRACK_HELP = "cuda, cpu, triton or cupy (default: from the file: .cu, .cpp, or a .py file's import of triton or cupy)"
TRACK_METAVAR = "[cuda|cpu|triton|cupy]"


def _complete_problem(incomplete: str) -> list[str]:
    """The problem names that start with what was typed (shell completion)."""
    from grader.problems.catalog import list_slugs

    return [slug for slug in list_slugs() if slug.startswith(incomplete)]


PROBLEM = typer.Argument(..., help="The problem (see: grader list).", autocompletion=_complete_problem)


def problem(slug: str) -> Problem:
    """The problem named `slug`; an unknown name is a usage error that lists the known ones."""
    from grader.problems.catalog import list_slugs, load_slug
    from grader.problems.spec import SpecError

    known = list_slugs()
    if slug not in known:
        listed = ", ".join(known) or "none (is KERNELJUDGE_PROBLEMS right?)"
        raise usage_error(f"unknown problem {slug!r}; the known problems are: {listed} (see: grader list)")
    try:
        return load_slug(slug)
    except SpecError as error:
        raise usage_error(str(error))


def track(file: Path | None, chosen: str | None) -> str:
    """The track asked for, else the one the file implies (its extension; for a .py file, whether it imports
    triton or cupy), else what this machine runs best."""
    from grader import tracks

    implied = tracks.of_file(file) if file else None
    if not chosen and not implied and file is not None and file.suffix.lower() == ".py":
        raise usage_error(
            f"{file} is Python: say which track with --track triton or --track cupy "
            "(or import triton or cupy in it, not both)"
        )
    picked = chosen or implied or tracks.default()
    if picked not in tracks.names():
        raise usage_error(f"unknown track {picked!r} (tracks: {', '.join(tracks.names())})")
    return picked


def source_file(file: Path) -> Path:
    if not file.is_file():
        raise usage_error(f"no such file: {file}")
    return file
