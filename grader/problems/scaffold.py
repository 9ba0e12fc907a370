"""`grader new SLUG`: a problem folder that loads and passes its own selftest on the CPU track as written.

It copies grader/problems/templates/ (a matrix-vector product: a spec with tests that say what they catch and a
calibration set, a statement with math, a float64 reference with baseline and null answers, a naive CPU and a
naive CUDA rung) into problems/SLUG/ and solutions/SLUG/, filling in the slug and the title. The author then
replaces the problem and runs `grader calibrate SLUG` and `grader selftest SLUG`; docs/authoring.md says how.
"""

from __future__ import annotations

from pathlib import Path

from grader.problems import solutions
from grader.problems.catalog import SLUG, problems_root

TEMPLATES = Path(__file__).resolve().parent / "templates"
PROBLEM_FILES = ("problem.yaml", "statement.md", "reference.py")
SOLUTION_FILES = ("01_naive.cpp", "01_naive.cu")


class ScaffoldError(Exception):
    """The slug is not a valid name, or its folders exist."""


def _fill(text: str, slug: str, title: str) -> str:
    return text.replace("{slug}", slug).replace("{title}", title)


def create(slug: str, title: str | None = None) -> list[Path]:
    """Write the new problem's files; returns their paths. Nothing is overwritten."""
    if not SLUG.match(slug):
        raise ScaffoldError(f"{slug!r} is not a problem name: lowercase letters, digits and single dashes")
    title = title or slug.replace("-", " ").capitalize()
    problem_folder = problems_root() / slug
    solution_folder = solutions.root() / slug
    for folder in (problem_folder, solution_folder):
        if folder.exists():
            raise ScaffoldError(f"{folder} exists: choose another name")
    written = []
    for names, folder in ((PROBLEM_FILES, problem_folder), (SOLUTION_FILES, solution_folder)):
        folder.mkdir(parents=True)
        for name in names:
            path = folder / name
            path.write_text(_fill((TEMPLATES / name).read_text(), slug, title))
            written.append(path)
    return written
