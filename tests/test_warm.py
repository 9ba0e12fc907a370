"""`grader warm`: test and submit hand their grading to a warm worker where one answers, and get the
verdict they would have made themselves, stored once; a worker of another build or settings is refused, a stale
socket is replaced, a second worker refuses to start, and a worker that dies mid-grading costs nothing but time.

Every test has its own data folder (where the socket is), runs folder, build cache and problems (softmax-mini: a
grading takes a second or two on the CPU track). The real worker and its clients are subprocesses; the test that
checks what the client imports talks to a stand-in worker in a thread, so it needs no PyTorch at all.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest
from conftest import MINI_PROBLEM, REPO, write_mini_problem

from grader.scale.warm import wire as warm_wire
from grader.verdict.model import Verdict

NAIVE = REPO / "solutions" / "softmax" / "01_naive.cpp"
HEAVY = ["torch", "numpy", "sqlalchemy", "alembic", "matplotlib", "grader.judge.pipeline", "grader.sandbox.local"]
SLOW_SOLVE = """#include <cmath>
#include <unistd.h>
void solve(const float* input, float* output, int M, int N) {
    usleep(400000);  // slow enough to be killed mid-run
    for (int r = 0; r < M; ++r) {
        const float* x = input + (long)r * N;
        float* y = output + (long)r * N;
        float m = x[0], s = 0;
        for (int j = 1; j < N; ++j) m = std::fmax(m, x[j]);
        for (int j = 0; j < N; ++j) s += std::exp(x[j] - m);
        for (int j = 0; j < N; ++j) y[j] = std::exp(x[j] - m) / s;
    }
}
"""


@pytest.fixture
def private(tmp_path, monkeypatch) -> Path:
    """Private settings for the worker and its clients (they inherit this environment); the data folder is
    short-named in /tmp, as a socket's path is at most 107 bytes, and made by the worker itself."""
    write_mini_problem(tmp_path / "problems")
    short = Path(tempfile.mkdtemp(prefix="kj-warm-"))
    for name, folder in (("DATA", short / "data"), ("CACHE", tmp_path / "cache"), ("RUNS", tmp_path / "runs")):
        monkeypatch.setenv(f"KERNELJUDGE_{name}", str(folder))
    (tmp_path / "runs").mkdir()
    monkeypatch.setenv("KERNELJUDGE_PROBLEMS", str(tmp_path / "problems"))
    monkeypatch.delenv("KERNELJUDGE_DB", raising=False)
    monkeypatch.setenv("COLUMNS", "200")
    shutil.copy(NAIVE, tmp_path / "solve.cpp")  # not a file of the reference ladder: recorded as its user
    yield tmp_path
    shutil.rmtree(short, ignore_errors=True)


class Worker:
    """A `grader warm` subprocess, its log in a file."""

    def __init__(self, log: Path, *argv: str):
        self.log_path = log
        with log.open("w") as out:
            command = [sys.executable, "-m", "grader.cli.main", "warm", *argv]
            self.process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
        self.pid = self.process.pid

    def log(self) -> str:
        return self.log_path.read_text()

    def wait_until_listening(self) -> Worker:
        deadline = time.monotonic() + 120
        while "grading on" not in self.log():
            assert self.process.poll() is None, f"the worker exited: {self.log()}"
            assert time.monotonic() < deadline, f"the worker never listened: {self.log()}"
            time.sleep(0.05)
        return self

    def gradings(self) -> list[str]:
        return [line for line in self.log().splitlines() if "track," in line]


@pytest.fixture
def worker(private):
    started = Worker(private / "warm.log").wait_until_listening()
    yield started
    if started.process.poll() is None:
        started.process.terminate()
        started.process.wait(timeout=60)


def _grader(*argv: str, env: dict | None = None) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "grader.cli.main", *argv]
    return subprocess.run(command, capture_output=True, text=True, timeout=300, env=env)


def _test_json(private: Path, *extra: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return _grader("test", MINI_PROBLEM, str(private / "solve.cpp"), "--json", "--sandbox", "local", *extra, env=env)


def _said(result: subprocess.CompletedProcess) -> str:
    return " ".join(result.stderr.split())


def _outcome(verdict: dict) -> tuple:
    return verdict["status"], [(t["name"], t["status"]) for t in verdict["tests"]], verdict["grader_version"]


@pytest.mark.slow
def test_a_grading_handed_to_the_warm_worker_is_the_one_made_here(worker, private):
    from grader.records import storage

    db = f"sqlite:///{private / 'results.db'}"
    argv = ["submit", MINI_PROBLEM, str(private / "solve.cpp"), "--json", "--sandbox", "local", "--user", "ada"]
    warm = _grader(*argv, "--db", db)
    assert warm.returncode == 0, warm.stderr
    assert len(worker.gradings()) == 1 and "solve.cpp (cpu track, submit): accepted" in worker.log()
    here = _grader(*argv, "--db", db, "--in-process")
    assert here.returncode == 0, here.stderr
    assert len(worker.gradings()) == 1  # --in-process: graded by the client itself
    handed, made = json.loads(warm.stdout), json.loads(here.stdout)
    assert _outcome(handed) == _outcome(made) and handed["benchmarks"] and handed["user"] == "ada"
    rows = storage.list_submissions(db_url=db)
    assert sorted(r.submission_id for r in rows) == sorted([handed["submission_id"], made["submission_id"]])
    assert warm.stderr == "" and here.stderr == ""

    shown = _grader("test", MINI_PROBLEM, str(private / "solve.cpp"), "--sandbox", "local")
    assert shown.returncode == 0 and "accepted  all 3 tests passed" in shown.stdout, shown.stdout + shown.stderr
    assert len(worker.gradings()) == 2 and "solve.cpp (cpu track, test): accepted" in worker.log()
    assert len(storage.list_submissions()) == 1  # the default database: $KERNELJUDGE_DATA's, as the client's


@pytest.mark.slow
def test_a_grading_handed_over_with_no_db_is_shown_and_not_stored(worker, private):
    from grader.records import storage

    shown = _grader("submit", MINI_PROBLEM, str(private / "solve.cpp"), "--json", "--sandbox", "local", "--no-db")
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["status"] == "accepted" and shown.stderr == ""
    assert len(worker.gradings()) == 1  # graded by the worker
    assert storage.list_submissions() == []  # the default database, the worker's and the client's
    kept = _grader("submit", MINI_PROBLEM, str(private / "solve.cpp"), "--json", "--sandbox", "local")
    assert kept.returncode == 0 and len(worker.gradings()) == 2
    assert [row.submission_id for row in storage.list_submissions()] == [json.loads(kept.stdout)["submission_id"]]


@pytest.mark.slow
def test_a_worker_with_other_settings_is_refused_and_the_client_grades_itself(worker, private):
    result = _test_json(private, env={**os.environ, "KERNELJUDGE_CPUS": "1"})
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["status"] == "accepted"
    assert _said(result) == (
        f"the warm worker (pid {worker.pid}) runs with other settings (KERNELJUDGE_CPUS): grading in this process "
        "(start `grader warm` with this shell's settings)"
    )
    assert worker.gradings() == [] and "refused pid" in worker.log()


@pytest.mark.slow
def test_a_stale_socket_is_ignored_by_clients_and_replaced_by_the_next_worker(private):
    path = Path(os.environ["KERNELJUDGE_DATA"]) / warm_wire.SOCKET_NAME
    path.parent.mkdir(mode=0o700)
    bind = f"import socket; s = socket.socket(socket.AF_UNIX); s.bind({str(path)!r}); s.listen()"
    subprocess.run([sys.executable, "-c", bind], check=True)  # bound by a process that is gone
    assert path.is_socket()
    alone = _test_json(private)
    assert alone.returncode == 0 and json.loads(alone.stdout)["status"] == "accepted", alone.stderr
    assert alone.stderr == ""  # no word of a worker when none runs

    worker = Worker(private / "warm.log").wait_until_listening()
    try:
        assert _test_json(private).returncode == 0
        assert len(worker.gradings()) == 1
    finally:
        worker.process.terminate()
        worker.process.wait(timeout=60)


@pytest.mark.slow
def test_one_worker_per_data_folder_behind_a_private_socket(worker, private):
    path = warm_wire.socket_path()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700  # the worker made the folder
    second = _grader("warm")
    assert second.returncode == 2
    assert _said(second) == f"error: a warm worker (pid {worker.pid}) already runs on {path.parent}"
    assert worker.process.poll() is None and path.is_socket()
    doctor = _grader("doctor")
    assert f"pid {worker.pid}, build " in doctor.stdout, doctor.stdout


@pytest.mark.slow
def test_a_worker_killed_mid_grading_leaves_the_client_to_grade_it(worker, private):
    (private / "solve.cpp").write_text(SLOW_SOLVE)
    argv = [sys.executable, "-m", "grader.cli.main", "test", MINI_PROBLEM, str(private / "solve.cpp"), "--json"]
    client = subprocess.Popen([*argv, "--sandbox", "local"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    runs, deadline = Path(os.environ["KERNELJUDGE_RUNS"]), time.monotonic() + 120
    while not list(runs.glob(f"trusted-{worker.pid}-*")):  # the worker's run is under way
        assert client.poll() is None and time.monotonic() < deadline, worker.log()
        time.sleep(0.05)
    worker.process.kill()
    out, err = client.communicate(timeout=300)
    assert client.returncode == 0, err
    assert json.loads(out)["status"] == "accepted"
    said = " ".join(err.split())
    assert said == f"the warm worker (pid {worker.pid}) stopped before it gave a verdict: grading in this process"


@pytest.mark.slow
def test_a_worker_leaves_no_socket_behind(private):
    path = Path(os.environ["KERNELJUDGE_DATA"]) / warm_wire.SOCKET_NAME
    idle = Worker(private / "idle.log", "--idle-exit", "0.01").wait_until_listening()
    assert idle.process.wait(timeout=120) == 0
    assert "no request for 0.01 min: exiting" in idle.log() and not path.exists()
    stopped = Worker(private / "stopped.log").wait_until_listening()
    stopped.process.terminate()  # SIGTERM, as Ctrl-C
    assert stopped.process.wait(timeout=60) == 0
    assert stopped.log().rstrip().endswith("stopped") and not path.exists()


def test_the_client_path_imports_nothing_heavy(private):
    """The whole client side of a grading, against a stand-in worker: no PyTorch, numpy, SQLAlchemy or pipeline
    is imported, and what the worker sends is printed (a storage failure as a warning)."""
    path = warm_wire.socket_path()
    path.parent.mkdir(mode=0o700)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen()
    verdict = Verdict(status="wrong_answer", message="off by one", problem=MINI_PROBLEM, track="cpu", submission_id="x")
    requests = []

    def serve() -> None:
        connection, _ = listener.accept()
        with connection:
            requests.append(warm_wire.receive(connection.makefile("rb")))
            warm_wire.send(connection, {"stage": "compile"})
            warm_wire.send(connection, {"verdict": verdict.to_json(), "store_warning": "the disk is full"})

    stand_in = threading.Thread(target=serve, daemon=True)
    stand_in.start()
    code = (
        "import atexit, sys\n"
        f"atexit.register(lambda: print('heavy:', [m for m in {HEAVY!r} if m in sys.modules], file=sys.stderr))\n"
        "from grader.cli.main import app\n"
        "app()\n"
    )
    client = subprocess.run(
        [sys.executable, "-c", code, "test", MINI_PROBLEM, str(private / "solve.cpp"), "--json", "--db", "sqlite://"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    stand_in.join(timeout=10)
    listener.close()
    assert client.returncode == 1, client.stderr
    assert json.loads(client.stdout) == verdict.to_json()
    assert _said(client) == "warning: the verdict was not stored: the disk is full heavy: []"
    (request,) = requests
    assert request["kind"] == "grade" and warm_wire.mismatch(warm_wire.identity(), request["identity"]) is None
    assert (
        request["source"] == NAIVE.read_text() and request["filename"] == "solve.cpp" and request["db"] == "sqlite://"
    )
    assert (request["problem"], request["track"], request["mode"], request["sandbox"]) == (
        MINI_PROBLEM,
        "cpu",
        "test",
        None,
    )


def test_a_mismatch_names_the_settings_that_differ_never_their_values(monkeypatch):
    ours = warm_wire.identity()
    monkeypatch.setenv("KERNELJUDGE_DB", "postgresql://judge:secret@db/kj")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3")
    why, fix = warm_wire.mismatch(ours, warm_wire.identity()) or ("", "")
    assert why == "runs with other settings (CUDA_VISIBLE_DEVICES, KERNELJUDGE_DB)" and "secret" not in why + fix
    assert warm_wire.mismatch(ours, {**ours, "build": "0.0.0+old"}) == (
        "runs another build of the grader",
        "restart `grader warm`",
    )


def test_an_exclusive_process_gpu_refuses_a_warm_worker(private, monkeypatch):
    """A GPU that takes one CUDA context at a time would be the worker's alone: it refuses before starting CUDA."""
    from typer.testing import CliRunner

    from grader import settings
    from grader.cli.main import app
    from grader.scale.warm import worker as warm_worker

    def nvidia_smi(argv, **_):
        assert argv[:3] == ["nvidia-smi", "-i", settings.GPU.get()]
        return subprocess.CompletedProcess(argv, 0, stdout="Exclusive_Process\n", stderr="")

    monkeypatch.setattr(warm_worker.shutil, "which", lambda name: f"/usr/bin/{name}")
    monkeypatch.setattr(warm_worker.subprocess, "run", nvidia_smi)
    monkeypatch.setattr(warm_worker, "_warm_up", lambda: pytest.fail("CUDA was started"))
    result = CliRunner().invoke(app, ["warm"])
    assert result.exit_code == 2, result.output
    said = " ".join(result.output.split())
    assert f"error: GPU {settings.GPU.get()} is in the Exclusive_Process compute mode" in said
    assert not warm_wire.socket_path().exists()
