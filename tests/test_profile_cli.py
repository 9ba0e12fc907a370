"""`grader profile` end to end with a fake `ncu` on PATH (no GPU needed, nvcc is): what a user reads when the driver
refuses the counters, when ncu is missing, and a whole profile (table, advice, --json valid against the schema)
when ncu answers with a recorded CSV. The fake runs on a reference rung with --unsandboxed, because a program under
/tmp is not visible inside the sandbox; the sandboxed run is checked on a GPU host (`make gpu-check STEPS=profile`)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from grader.cli.main import app
from grader.profile.model import Profile
from grader.toolchain import detect

REPO = Path(__file__).resolve().parents[1]
NAIVE = REPO / "solutions" / "softmax" / "01_naive.cu"
FIXTURE = REPO / "tests" / "fixtures" / "profile" / "softmax-01_naive-square_8k.csv"
REFUSAL = (
    "==PROF== Connected to process 4242 (/run/runner)\n"
    "==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance Counters on "
    "the target device 0. For instructions on enabling permissions and to get more information see "
    "https://developer.nvidia.com/ERR_NVGPUCTRPERM"
)
runner = CliRunner()
pytestmark = pytest.mark.skipif(detect().nvcc is None, reason="needs nvcc to build the harness and the submission")


@pytest.fixture(scope="module")
def cache(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("cache")  # one build of the harness and the rung for the whole module


@pytest.fixture(autouse=True)
def private_folders(tmp_path, monkeypatch, cache):
    for name in ("DATA", "RUNS"):
        (tmp_path / name).mkdir()
        monkeypatch.setenv(f"KERNELJUDGE_{name}", str(tmp_path / name))
    monkeypatch.setenv("KERNELJUDGE_CACHE", str(cache))


def _fake_ncu(folder: Path, record: str) -> dict[str, str]:
    """An `ncu` whose profiling run does `record` (shell) and whose --import prints the recorded CSV."""
    folder.mkdir(exist_ok=True)
    script = folder / "ncu"
    script.write_text(
        "#!/bin/sh\n"
        'case "$*" in\n'
        '  *--version*) echo "NVIDIA (R) Nsight Compute Command Line Profiler"; echo "Version 2025.3.1.0 (fake)"; exit 0;;\n'
        f'  *--import*) cat "{FIXTURE}"; exit 0;;\n'
        "esac\n"
        f"{record}\n"
    )
    script.chmod(0o755)
    return {"PATH": f"{folder}:{os.environ['PATH']}", "COLUMNS": "200"}


def _refusing(tmp_path: Path) -> dict[str, str]:
    return _fake_ncu(tmp_path / "bin", f"cat <<'EOF'\n{REFUSAL}\nEOF\nexit 1")


def _answering(tmp_path: Path) -> dict[str, str]:
    # the profiling run writes the report named after --export, as ncu does
    record = 'while [ $# -gt 0 ]; do [ "$1" = --export ] && echo report > "$2"; shift; done\nexit 0'
    return _fake_ncu(tmp_path / "bin", record)


def test_counters_refused_by_the_driver_are_explained(tmp_path):
    result = runner.invoke(app, ["profile", "softmax", str(NAIVE), "--unsandboxed"], env=_refusing(tmp_path))
    assert result.exit_code == 1, result.output
    assert "cannot profile" in result.output
    assert "ERR_NVGPUCTRPERM" in result.output
    assert "NVreg_RestrictProfilingToAdminUsers=0" in result.output


def test_counters_refused_under_json_is_a_json_error(tmp_path):
    result = runner.invoke(app, ["profile", "softmax", str(NAIVE), "--unsandboxed", "--json"], env=_refusing(tmp_path))
    assert result.exit_code == 1
    first = json.loads(result.stdout[: result.stdout.rindex("}") + 1])
    assert first["status"] == "profile_error" and "ERR_NVGPUCTRPERM" in first["message"]


def test_no_ncu_is_explained(tmp_path, monkeypatch):
    monkeypatch.setattr("grader.profile.ncu.binary", lambda: None)
    result = runner.invoke(app, ["profile", "softmax", str(NAIVE), "--unsandboxed"], env={"COLUMNS": "200"})
    assert result.exit_code == 1
    assert "Nsight Compute (ncu) was not found" in result.output


def test_a_whole_profile_in_the_terminal(tmp_path):
    raw = tmp_path / "kept" / "naive.ncu-rep"
    result = runner.invoke(
        app,
        ["profile", "softmax", str(NAIVE), "--unsandboxed", "--benchmark", "square_8k", "--raw", str(raw)],
        env=_answering(tmp_path),
    )
    assert result.exit_code == 0, result.output
    assert "softmax_naive" in result.output
    assert "advice:" in result.output and "the grid has 32 blocks" in result.output
    assert "2 harness kernel(s) left out" in result.output
    assert raw.read_text().strip() == "report"
    assert str(raw) in result.output


def test_json_output_is_valid_against_the_schema(tmp_path):
    result = runner.invoke(app, ["profile", "softmax", str(NAIVE), "--unsandboxed", "--json"], env=_answering(tmp_path))
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    profile = Profile.model_validate(data)
    assert profile.benchmark == "square_8k" and profile.ncu_version == "Version 2025.3.1.0 (fake)"
    assert "--clock-control" in profile.ncu_options


def test_unsandboxed_is_for_reference_solutions_only(tmp_path):
    mine = tmp_path / "mine.cu"
    mine.write_bytes(NAIVE.read_bytes())
    result = runner.invoke(app, ["profile", "softmax", str(mine), "--unsandboxed"], env=_answering(tmp_path))
    assert result.exit_code == 2
    assert "only reference solutions" in result.output


def test_an_unknown_benchmark_is_a_usage_error(tmp_path):
    result = runner.invoke(app, ["profile", "softmax", str(NAIVE), "--benchmark", "nope"], env=_answering(tmp_path))
    assert result.exit_code == 2
    assert "square_8k" in result.output


def test_a_saved_profile_is_shown_again_and_the_run_exported(tmp_path):
    exported = tmp_path / "run"
    result = runner.invoke(
        app,
        ["profile", "softmax", str(NAIVE), "--unsandboxed", "--json", "--export-run", str(exported)],
        env=_answering(tmp_path),
    )
    assert result.exit_code == 0, result.output
    assert {p.name for p in exported.iterdir()} >= {"runner", "lib.so", "request.txt", "raw.csv", "ncu.log"}
    assert "case square_8k check" in (exported / "request.txt").read_text()
    saved = tmp_path / "naive.json"
    saved.write_text(result.stdout)
    shown = runner.invoke(app, ["profile", "--show", str(saved)], env={"COLUMNS": "200"})
    assert shown.exit_code == 0 and "softmax_naive" in shown.output and "advice:" in shown.output
    bad = runner.invoke(app, ["profile", "--show", str(exported / "request.txt")])
    assert bad.exit_code == 2


def test_submit_profile_keeps_the_profile_and_retries_a_reference_outside_the_sandbox(monkeypatch, capsys):
    from verdicts import verdict

    from grader.cli import grading
    from grader.perf.ceilings import Ceilings
    from grader.problems.catalog import load_problem
    from grader.profile import session

    problem = load_problem("softmax")
    recorded = session.from_csv(
        problem, session.benchmark(problem, None), FIXTURE.read_text(), Ceilings(3e12, 5e13, 5e13, None, None, "t")
    )
    calls = []

    def refused_in_the_sandbox(spec, source, filename, *, unsandboxed=False, **_):
        calls.append(unsandboxed)
        if not unsandboxed:
            raise session.ProfileError("ncu could not talk to the profiled process")
        return recorded

    monkeypatch.setattr(session, "profile_submission", refused_in_the_sandbox)
    accepted = verdict("ref:01_naive.cu", [100.0, 200.0])
    grading._attach_profile(problem, NAIVE.read_bytes(), NAIVE, accepted, quiet=True)
    assert calls == [False, True]
    assert accepted.profile is not None and accepted.profile["kernels"][0]["name"].startswith("softmax_naive")
    assert "profiling it again outside the sandbox" in capsys.readouterr().err

    calls.clear()
    mine = verdict("ann", [100.0, 200.0])
    grading._attach_profile(problem, NAIVE.read_bytes(), Path("/elsewhere/mine.cu"), mine, quiet=True)
    assert calls == [False] and mine.profile is None  # not a reference: never outside the sandbox
