"""`grader test` on real CPU-track files: the compiler's first error survives a long log and is printed
as the compiler wrote it; what `solve` printed is shown with a wrong answer, in the terminal and in --json.

Each test compiles with g++ and, for the last, runs the harness in the local sandbox (no GPU needed).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from grader.cli.main import app
from grader.sandbox import procfs

runner = CliRunner()
REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def private_folders(tmp_path, monkeypatch):
    for name in ("DATA", "CACHE", "RUNS"):
        (tmp_path / name).mkdir()
        monkeypatch.setenv(f"KERNELJUDGE_{name}", str(tmp_path / name))


def _grade(tmp_path, source: str, *extra: str):
    path = tmp_path / "solve.cpp"
    path.write_text(source)
    return runner.invoke(app, ["test", "softmax", str(path), *extra], env={"COLUMNS": "80"})


def test_the_first_compiler_error_survives_a_long_log(tmp_path):
    undeclared = "\n".join(f"    undeclared_{i:03d} = {i};" for i in range(400))  # far more than 16 KiB of errors
    source = (
        f"void solve(const float* input, float* output, int M, int N) {{\n    first_mistake = 0;\n{undeclared}\n}}\n"
    )
    result = _grade(tmp_path, source, "--json")
    assert result.exit_code == 1, result.output
    message = json.loads(result.stdout)["message"]
    assert "‘first_mistake’ was not declared" in message and "undeclared_399" in message
    assert "bytes of compiler output left out" in message and len(message) < 20_000


def test_compiler_diagnostics_reach_the_terminal_whole(tmp_path):
    source = (
        "void solve(const float* input, float* output, int M, int N) {\n"
        "    for (int i = 0; i < M * N; i++) output[i] = input[i] * the_scale_that_nobody_declared_anywhere[i];\n"
        "}\n"
    )
    result = _grade(tmp_path, source)
    assert result.exit_code == 1
    lines = result.output.splitlines()
    code = next(line for line in lines if "output[i] = input[i]" in line)  # `[i]` kept, the line not re-wrapped
    caret = next(line for line in lines if "^~~~~" in line)
    assert caret.index("^") == code.index("the_scale_that_nobody_declared_anywhere")


def test_what_solve_printed_is_shown_with_a_wrong_answer(tmp_path):
    source = (
        "#include <cstdio>\n"
        "void solve(const float* input, float* output, int M, int N) {\n"
        '    printf("debug: M=%d N=%d\\n", M, N);\n'
        '    fprintf(stderr, "debug on stderr: row[0]\\n");\n'
        "    for (int i = 0; i < M * N; i++) output[i] = 0.5f;\n"
        "}\n"
    )
    result = _grade(tmp_path, source)
    assert result.exit_code == 1, result.output
    assert "wrong answer" in result.output and "program output" in result.output
    assert "debug: M=1 N=1" in result.output and "debug on stderr: row[0]" in result.output

    verdict = json.loads(_grade(tmp_path, source, "--json").stdout)
    assert verdict["status"] == "wrong_answer"
    assert "debug: M=1 N=1" in verdict["output_tail"] and "debug on stderr: row[0]" in verdict["output_tail"]


def test_one_grading_asks_the_docker_engine_once(tmp_path, monkeypatch):
    """The sandbox the CLI chose (and checked, to answer a usage error) is the one the pipeline uses: asking the
    engine again cost a cached submit 0.14 s."""
    from grader.sandbox import docker_engine

    asked = []
    monkeypatch.setattr(docker_engine, "probe", lambda gpu, image: asked.append(gpu) or (None, "no engine here"))
    source = (REPO / "solutions" / "softmax" / "01_naive.cpp").read_text()
    verdict = json.loads(_grade(tmp_path, source, "--json", "--sandbox", "auto").stdout)
    assert (
        verdict["status"] == "accepted"
        and verdict["toolchain"]["sandbox"] == "local sandbox (no container: no engine here)"
    )
    assert asked == [False]


def test_pytorch_is_imported_only_while_the_run_is_waited_for(tmp_path, monkeypatch):
    """Imported in a thread from the start, PyTorch held the GIL against the grading's own file reads and forks
    (the build digest, the sandbox's probes: 0.3-0.7 s each instead of 10-60 ms); it starts once the worker and
    its supervisor run, when they are all that is left to do before the check stage."""
    from grader import identity, torch_import
    from grader.sandbox import layers

    seen = []
    monkeypatch.setattr(
        torch_import,
        "warm",
        lambda: seen.append((identity.grader_build.cache_info().currsize, layers.probe.cache_info().currsize)),
    )
    source = (REPO / "solutions" / "softmax" / "01_naive.cpp").read_text()
    assert json.loads(_grade(tmp_path, source, "--json").stdout)["status"] == "accepted"
    assert seen == [(1, 1)]  # once, with the digest made and the sandbox probed


def _grading_under_way(runs: Path) -> subprocess.Popen:
    """`grader submit` of softmax's naive CPU rung in a process of its own, once its run is under way (its
    trusted folder exists in `runs`)."""
    command = [sys.executable, "-m", "grader.cli.main", "submit", "softmax"]
    command.append(str(REPO / "solutions" / "softmax" / "01_naive.cpp"))
    grading = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 120
    while not list(runs.glob("trusted-*")) and grading.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert grading.poll() is None, "the grading ended before it could be stopped"
    return grading


def test_sigterm_mid_run_kills_the_run_and_leaves_no_folder_behind():
    """Python's own SIGTERM exits on the spot: the grading's trusted folder of outputs stayed in the runs folder
    (over 1 GB for softmax's largest CUDA test), one more for every killed grading."""
    runs = Path(os.environ["KERNELJUDGE_RUNS"])
    grading = _grading_under_way(runs)
    grading.terminate()
    said = grading.communicate(timeout=60)[0]
    assert grading.returncode == 130, said  # as for Ctrl-C
    assert list(runs.iterdir()) == []


def test_what_a_killed_grader_left_is_removed_by_the_next_grading(tmp_path):
    """SIGKILL (or the OOM killer) leaves no time for cleanup: the next grading on the machine removes the
    trusted folder of a grader process that is gone, and leaves a live one's alone."""
    runs = Path(os.environ["KERNELJUDGE_RUNS"])
    killed = _grading_under_way(runs)
    killed.kill()
    killed.communicate()
    (left,) = runs.glob("trusted-*")
    assert left.name.startswith(f"trusted-{killed.pid}-")
    alive = runs / f"trusted-{os.getpid()}-{procfs.start_time(os.getpid())}-x"  # this test's own process
    alive.mkdir()
    source = (REPO / "solutions" / "softmax" / "01_naive.cpp").read_text()
    assert json.loads(_grade(tmp_path, source, "--json").stdout)["status"] == "accepted"
    assert [p.name for p in runs.glob("trusted-*")] == [alive.name]


@pytest.mark.skipif(os.geteuid() != 0, reason="mounts a small tmpfs")
def test_a_full_judge_disk_is_an_internal_error_and_nothing_is_stored(tmp_path, monkeypatch):
    from grader.records import storage
    from grader.run import supervised

    full = tmp_path / "full"
    full.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16k,mode=0700", "kj-full", str(full)], check=True)
    try:
        monkeypatch.setattr(supervised, "new_trusted_folder", lambda: full)
        source = tmp_path / "solve.cpp"
        source.write_bytes((REPO / "solutions" / "softmax" / "01_naive.cpp").read_bytes())
        db = f"sqlite:///{tmp_path / 'results.db'}"
        result = runner.invoke(app, ["test", "softmax", str(source), "--json", "--db", db])
    finally:
        subprocess.run(["umount", "-l", str(full)], check=False)
    assert result.exit_code == 3, result.output
    answer = json.loads(result.stdout)
    assert answer["status"] == "internal_error" and "disk is full" in answer["message"]
    assert not (tmp_path / "results.db").exists() or storage.list_submissions(db_url=db) == []


def test_no_db_shows_the_verdict_and_stores_nothing(tmp_path, monkeypatch):
    from grader.records import storage

    db = f"sqlite:///{tmp_path / 'results.db'}"
    monkeypatch.setenv("KERNELJUDGE_DB", db)
    broken = "void solve(const float* input, float* output, int M, int N) { nope = 0; }\n"
    kept = _grade(tmp_path, broken, "--json")
    assert kept.exit_code == 1 and len(storage.list_submissions(db_url=db)) == 1
    shown = _grade(tmp_path, broken, "--json", "--no-db")
    assert shown.exit_code == 1 and json.loads(shown.stdout)["status"] == "compile_error"
    assert len(storage.list_submissions(db_url=db)) == 1  # still only the first
    both = _grade(tmp_path, broken, "--no-db", "--db", db)
    assert both.exit_code == 2 and "--no-db stores nothing, so it does not go with --db" in both.output


def test_the_database_layer_is_imported_while_the_run_is_waited_for(tmp_path, monkeypatch):
    """A submit that stores its verdict reads the database layer only once the grading is over; importing it then
    added 0.4 s to every CLI grading (2-core VM). It is imported in the background thread that imports PyTorch,
    once the run is under way; a grading with --no-db does not ask for it."""
    from grader import torch_import

    asked: list[tuple[str, ...]] = []
    monkeypatch.setattr(torch_import, "_ALSO", [])
    monkeypatch.setattr(torch_import, "warm", lambda: asked.append(tuple(torch_import._ALSO)))
    source = (REPO / "solutions" / "softmax" / "01_naive.cpp").read_text()
    assert json.loads(_grade(tmp_path, source, "--json", "--no-db").stdout)["status"] == "accepted"
    assert asked == [()]
    assert json.loads(_grade(tmp_path, source, "--json").stdout)["status"] == "accepted"
    assert asked == [(), ("grader.records.storage",)]


def test_warm_imports_pytorch_then_what_was_asked_for_in_one_background_thread(tmp_path, monkeypatch):
    from grader import torch_import

    (tmp_path / "kj_after_the_run.py").write_text("import threading\nTHREAD = threading.current_thread().name\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(torch_import, "_ALSO", [])
    torch_import.also_warm("kj_after_the_run")
    torch_import.also_warm("kj_after_the_run")
    assert torch_import._ALSO == ["kj_after_the_run"]
    torch_import.warm()
    deadline = time.monotonic() + 120
    while "kj_after_the_run" not in sys.modules and time.monotonic() < deadline:
        time.sleep(0.05)
    assert sys.modules["kj_after_the_run"].THREAD == "import torch"
    assert "torch" in sys.modules
