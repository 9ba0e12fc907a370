"""DMOJ-style fixtures: each file in tests/fixtures/ states its expected verdict, and must get exactly it.

All fixtures run in one grader process, one after another, so a bad one must not spoil the next good one;
the last test grades a reference solution again to prove the grader still works after all of them.
"""

from pathlib import Path

import pytest
from conftest import fixture_params

from grader.judge import pipeline
from grader.problems import solutions
from grader.problems.catalog import load_problem
from grader.verdict.status import Status

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.mark.parametrize("fixture", fixture_params(FIXTURES))
def test_fixture_gets_its_verdict(fixture):
    verdict = pipeline.grade(
        load_problem(fixture.problem),
        fixture.path.read_bytes(),
        fixture.path.name,
        track=fixture.track,
        mode=fixture.mode,
        time_limit_s=fixture.time_limit_s,
    )
    assert verdict.status == fixture.expect, verdict.message
    assert fixture.message in verdict.message


@pytest.mark.parametrize("track", ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)])
def test_reference_still_accepted_after_bad_fixtures(track):
    best = solutions.best("softmax", track)
    verdict = pipeline.grade(load_problem("softmax"), best.read_bytes(), best.name, track=track)
    assert verdict.status == Status.ACCEPTED, verdict.message
    assert all(t.status == Status.ACCEPTED for t in verdict.tests)
