"""The problem catalog: where problems live, and loading one by slug or every one.

Loading validates a spec (grader/problems/spec.py) and then its files: reference.py is compiled but not run
(grader/problems/reference_file.py: a syntax error is named with its line, a missing `reference` function too;
the import, and PyTorch's, waits for the first use, so listing, showing and starting a problem never pay for it)
and statement.md must exist. `scan` loads every problem and returns the broken ones' errors beside the good ones,
so one broken problem hides no other. A job names a problem by its slug alone (`load_slug`).
"""

from __future__ import annotations

import re
from pathlib import Path

import yaml
from pydantic import ValidationError

from grader import settings
from grader.problems import reference_file
from grader.problems.errors import SpecError
from grader.problems.spec import Problem

REPO_ROOT = Path(__file__).resolve().parents[2]


def problems_root() -> Path:
    """Where problem folders live: $KERNELJUDGE_PROBLEMS or the repository's `problems/`."""
    return Path(settings.PROBLEMS.get() or REPO_ROOT / "problems")


def load_problem(slug_or_path: str | Path) -> Problem:
    """Load and validate one problem by slug (a folder under problems_root()) or by folder path."""
    folder = Path(slug_or_path)
    if not folder.is_dir():
        folder = problems_root() / str(slug_or_path)
    path = folder / "problem.yaml"
    if not path.is_file():
        known = ", ".join(list_slugs()) or "none"
        raise SpecError(f"no problem {str(slug_or_path)!r} (known: {known})")
    try:
        data = yaml.safe_load(path.read_text())
    except (yaml.YAMLError, UnicodeDecodeError) as error:
        raise SpecError(f"{path}: not valid YAML: {error}") from error
    if not isinstance(data, dict):
        raise SpecError(f"{path}: expected a mapping at the top level")
    try:
        problem = Problem(slug=folder.name, folder=folder, **data)
    except ValidationError as error:
        first = error.errors()[0]
        field = ".".join(str(part) for part in first["loc"])
        message = first["msg"].removeprefix("Value error, ")
        raise SpecError(f"{path}: " + (f"field {field}: " if field else "") + message) from error
    except (ValueError, TypeError) as error:
        raise SpecError(f"{path}: {error}") from error
    statement = problem.statement_path
    if not statement.is_file() or not statement.read_text(errors="replace").strip():
        raise SpecError(
            f"{statement}: {'empty' if statement.is_file() else 'missing'}: every problem needs a statement"
        )
    reference_file.check(problem.folder / "reference.py")
    return problem


SLUG = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")  # a problem's name: lowercase letters, digits, inner dashes


def load_slug(name: object) -> Problem:
    """The problem a job names: a slug of a problem under problems_root() and nothing else. A folder path, a
    name with `/` or `..`, or an unknown slug is a SpecError, so that no job can make the grader import a
    reference.py from a folder of its choosing."""
    if not isinstance(name, str) or not SLUG.fullmatch(name) or name not in list_slugs():
        known = ", ".join(list_slugs()) or "none"
        raise SpecError(f"unknown problem {str(name)[:200]!r}: a problem is named by its slug (known: {known})")
    return load_problem(problems_root() / name)


def list_slugs() -> list[str]:
    root = problems_root()
    return sorted(p.name for p in root.iterdir() if (p / "problem.yaml").is_file()) if root.is_dir() else []


def load_all() -> list[Problem]:
    """Every problem; the first broken one raises its SpecError (`scan` carries on past it)."""
    return [load_problem(slug) for slug in list_slugs()]


def scan() -> tuple[list[Problem], list[SpecError]]:
    """Every problem that loads, and the SpecError of each one that does not, both in slug order."""
    problems: list[Problem] = []
    errors: list[SpecError] = []
    for slug in list_slugs():
        try:
            problems.append(load_problem(slug))
        except SpecError as error:
            errors.append(error)
    return problems, errors
