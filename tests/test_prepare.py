"""`grader prepare` (grader/judge/prepare.py): a machine made ready to grade. The harness a first grading would
build is in the build cache afterwards, where that grading finds it; a track the machine cannot run is named and
skipped; a step that fails is named, the others still run, and the exit status says so."""

from __future__ import annotations

import shutil

import pytest
from typer.testing import CliRunner

from grader.cli.main import app
from grader.run import binaries
from grader.tracks import cpu

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++ (the CPU track's harness)")


def _lines(output: str) -> dict[str, str]:
    """Each printed step by its name: 'ready', 'failed' or '-' and what it said."""
    found = {}
    for line in output.splitlines():
        mark, _, rest = line.partition(" ")
        found[rest.strip().split(":")[0]] = f"{mark} {rest.strip()}"
    return found


@pytest.fixture
def folders(folders, monkeypatch):
    monkeypatch.setenv("KERNELJUDGE_SANDBOX", "local")  # the worker built for the local sandbox, never an image
    return folders


def test_prepare_builds_the_cpu_tracks_harness_where_a_grading_then_finds_it(folders):
    result = CliRunner().invoke(app, ["prepare"], env={"COLUMNS": "250"})
    assert result.exit_code == 0, result.output
    steps = _lines(result.output)
    assert steps["supervisor"].startswith("ready") and steps["worker (local sandbox)"].startswith("ready")
    assert steps["cpu ceilings"].startswith("ready")
    supervisor = binaries.supervisor(cpu.NAME)
    assert str(folders / "cache") in str(supervisor) and str(supervisor) in steps["supervisor"]


def test_a_step_that_fails_is_named_and_the_others_still_run(folders, monkeypatch):
    def broken(*_args, **_kwargs):
        raise RuntimeError("g++: internal compiler error")

    monkeypatch.setattr(binaries, "worker", broken)
    result = CliRunner().invoke(app, ["prepare"], env={"COLUMNS": "250"})
    assert result.exit_code == 1
    steps = _lines(result.output)
    assert steps["worker (local sandbox)"].startswith("failed")
    assert "failed: g++: internal compiler error" in steps["worker (local sandbox)"]
    assert steps["supervisor"].startswith("ready") and steps["cpu ceilings"].startswith("ready")
