"""The rules of every call (grader/problems/call_rules.py) state what the code makes true, and every place a
newcomer reads says them: `grader show`, the site's problem page (through render) and the README."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from grader.cli.main import app
from grader.problems import call_rules
from grader.run import request, supervised
from grader.settings import JIT_BUDGET_S
from grader.tracks.cpu import THREADS as CPU_THREADS

REPO = Path(__file__).resolve().parents[1]


def test_the_figures_are_the_codes():
    assert call_rules.ALIGN == supervised.PAGE
    rules = dict(call_rules.RULES)
    assert request.DRAWS_PER_TEST == 2 and "twice per test" in rules["Many calls, one process"]
    assert f"exactly {CPU_THREADS} threads" in rules["Threads (CPU track)"]
    assert f"{supervised.PAGE}-byte boundary" in rules["Alignment"]
    assert (
        f"({float(JIT_BUDGET_S.default):g} s by default" in rules["Compiling and autotuning (Triton and CuPy tracks)"]
    )


def test_grader_show_states_the_rules():
    result = CliRunner().invoke(app, ["show", "sum-reduction"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    for topic, _ in call_rules.RULES:
        assert topic in result.output
    assert f"OpenMP runs exactly {CPU_THREADS} threads on every host" in result.output


def test_the_readme_and_the_reduction_statements_state_the_thread_count():
    readme = (REPO / "README.md").read_text()
    for topic, _ in call_rules.RULES:
        assert f"**{topic}" in readme
    assert f"OpenMP runs exactly {CPU_THREADS} threads on every host" in readme
    assert f"({float(JIT_BUDGET_S.default):g} s by default" in readme
    for slug in ("sum-reduction", "prefix-sum"):
        assert (
            f"OpenMP runs exactly {CPU_THREADS} threads on every host"
            in (REPO / "problems" / slug / "statement.md").read_text()
        )


def test_formulas_count_from_zero():
    for statement in (REPO / "problems").glob("*/statement.md"):
        assert "=1}^" not in statement.read_text(), f"{statement}: a sum counts from 1"


def test_the_site_problem_page_states_the_rules():
    from grader.problems.catalog import load_problem
    from grader.site import render

    page = render.problem_page(render.environment(), load_problem("sum-reduction"), [], [], [])
    assert f"OpenMP runs exactly {CPU_THREADS} threads on every host" in page
    assert "Scratch memory" in page and "4096-byte boundary" in page
