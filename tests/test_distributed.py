"""Grading across hosts against the real services: Debian's redis-server and PostgreSQL, started here.

The fixtures start a throwaway PostgreSQL cluster (initdb + pg_ctl, as the postgres user when run as root)
and a Redis with its append-only file, both on loopback on free ports in a temporary folder, and three
Celery workers (`python -m grader.cli.scale worker`, CPU track) standing in for three hosts, each with
its own build cache. Everything is stopped afterwards. The tests skip, saying why, where the binaries or
the Python packages (celery, redis, psycopg) are missing: `.ci/services-setup.sh` installs the binaries.

The jobs are tiny: conftest's softmax-mini (three little tests) and small .cpp sources, with a short time
limit for the ones that hang, so the whole module takes a few minutes on two cores. Each test stands alone:
none counts on what another left in the database or the broker, so they pass in any order.
"""

from __future__ import annotations

import glob
import json
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from conftest import MINI_PROBLEM as PROBLEM
from conftest import write_mini_problem

pytestmark = pytest.mark.slow  # full gradings: `make test-fast` leaves them out

pytest.importorskip("celery", reason="celery is not installed (pip install 'kerneljudge[distributed]')")
pytest.importorskip("redis", reason="the redis client is not installed (pip install 'kerneljudge[distributed]')")
pytest.importorskip("psycopg", reason="psycopg is not installed (pip install 'kerneljudge[distributed]')")

REPO = Path(__file__).resolve().parents[1]
VISIBILITY_TIMEOUT_S = 12  # a dead worker's job goes back to the queue after this long
SWEEP_S = 2  # how often the workers look for jobs the broker lost
HANG_LIMIT_S = 1.5
WORKERS = 3

ACCEPTED = r"""// job {n}: a right softmax
#include <cmath>
#include <unistd.h>
void solve(const float* input, float* output, int M, int N) {
    for (int i = 0; i < M; ++i) {
        const float* x = input + (long)i * N;
        float m = -INFINITY;
        double s = 0;
        for (int j = 0; j < N; ++j) m = fmaxf(m, x[j]);
        for (int j = 0; j < N; ++j) s += std::exp((double)x[j] - m);
        for (int j = 0; j < N; ++j) output[(long)i * N + j] = (float)(std::exp((double)x[j] - m) / s);
        {slow}
    }
}
"""
WRONG = r"""// job {n}: forgets to divide by the row sum
#include <cmath>
void solve(const float* input, float* output, int M, int N) {
    for (int i = 0; i < M; ++i) {
        float m = -INFINITY;
        for (int j = 0; j < N; ++j) m = fmaxf(m, input[(long)i * N + j]);
        for (int j = 0; j < N; ++j) output[(long)i * N + j] = expf(input[(long)i * N + j] - m);
    }
}
"""
CRASHING = r"""// job {n}: dereferences null
void solve(const float* input, float* output, int M, int N) {
    volatile float* nowhere = nullptr;
    *nowhere = input[0];
}
"""
HANGING = r"""// job {n}: never returns
void solve(const float* input, float* output, int M, int N) {
    volatile long spin = 0;
    while (true) spin = spin + 1;
}
"""
KINDS = {"accepted": ACCEPTED, "wrong_answer": WRONG, "runtime_error": CRASHING, "timeout": HANGING}


# --- the services ----------------------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def pg_bin(name: str) -> str | None:
    found = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"), key=lambda p: int(p.split("/")[4]))
    return found[-1] if found else shutil.which(name)


def wait_until(check, timeout_s: float, what: str, poll_s: float = 0.2, explain=None):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(poll_s)
    raise AssertionError(
        f"timed out after {timeout_s:.0f} s waiting for {what}" + (f"\n{explain()}" if explain else "")
    )


class Postgres:
    def __init__(self, folder: Path):
        self.initdb, self.pg_ctl = pg_bin("initdb"), pg_bin("pg_ctl")
        self.port, self.as_user = free_port(), []
        owner = None
        if os.geteuid() == 0:  # initdb refuses to run as root
            try:
                owner = pwd.getpwnam("postgres")
            except KeyError:
                pytest.skip("running as root and there is no postgres user to run PostgreSQL as")
            self.as_user = ["runuser", "-u", "postgres", "--"]
        # its own folder, outside pytest's private (0700) temporary tree, which the postgres user cannot enter
        self.home = Path(tempfile.mkdtemp(prefix="kerneljudge-pg-"))
        self.home.chmod(0o755)
        self.data = self.home / "data"
        self.data.mkdir()
        if owner:
            os.chown(self.data, owner.pw_uid, owner.pw_gid)

    def run(self, *argv: str) -> None:
        result = subprocess.run(self.as_user + list(argv), capture_output=True, text=True, timeout=120)
        assert result.returncode == 0, f"{argv[0]} failed:\n{result.stdout}\n{result.stderr}"

    def start(self) -> str:
        self.run(self.initdb, "-D", str(self.data), "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8")
        options = f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.data} -c fsync=off"
        self.run(self.pg_ctl, "-D", str(self.data), "-o", options, "-l", str(self.data / "log"), "-w", "start")
        import psycopg

        with psycopg.connect(
            f"host=127.0.0.1 port={self.port} user=postgres dbname=postgres", autocommit=True
        ) as connection:
            connection.execute("CREATE DATABASE kerneljudge")
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/kerneljudge"

    def stop(self) -> None:
        subprocess.run(
            self.as_user + [self.pg_ctl, "-D", str(self.data), "-m", "immediate", "stop"],
            capture_output=True,
            timeout=60,
        )
        shutil.rmtree(self.home, ignore_errors=True)


class Redis:
    """redis-server with its append-only file fsynced on every write, as deploy/compose.yaml runs it."""

    def __init__(self, folder: Path):
        self.binary, self.folder, self.port = shutil.which("redis-server"), folder, free_port()
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        log = open(self.folder / "redis.log", "a")
        self.process = subprocess.Popen(
            [
                self.binary,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--dir",
                str(self.folder),
                "--appendonly",
                "yes",
                "--appendfsync",
                "always",
                "--save",
                "",
                "--daemonize",
                "no",
                "--protected-mode",
                "no",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        import redis

        client = redis.Redis(port=self.port, socket_connect_timeout=1)

        def answers():
            try:
                return client.ping()
            except redis.RedisError:
                assert self.process.poll() is None, (self.folder / "redis.log").read_text()[-2000:]
                return False

        wait_until(answers, 30, "redis-server to answer")

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()  # SHUTDOWN: the append-only file is complete on disk
            self.process.wait(30)

    def restart(self) -> None:
        self.stop()
        self.start()


class Workers:
    """`python -m grader.cli.scale worker` processes, one per pretend host, each its own process group."""

    def __init__(self, folder: Path, env: dict):
        self.folder, self.env = folder, env
        self.processes: dict[str, subprocess.Popen] = {}

    def start(self, name: str) -> None:
        host = self.folder / name.split("@")[0]
        host.mkdir(exist_ok=True)
        env = {**self.env, "KERNELJUDGE_CACHE": str(host / "cache"), "KERNELJUDGE_DATA": str(host / "data")}
        log = open(host / "worker.log", "a")
        self.processes[name] = subprocess.Popen(
            [sys.executable, "-m", "grader.cli.scale", "worker", "--queue", "cpu", "--name", name],
            cwd=REPO,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def log(self, name: str) -> str:
        return (self.folder / name.split("@")[0] / "worker.log").read_text(errors="replace")

    def wait_ready(self, names) -> None:
        for name in names:
            wait_until(lambda name=name: f"{name} ready." in self.log(name) or self._died(name), 90, f"worker {name}")
            assert not self._died(name), self.log(name)[-3000:]

    def _died(self, name: str) -> bool:
        return self.processes[name].poll() is not None

    def kill(self, name: str) -> None:
        """SIGKILL the whole worker: its main process and the pool process running the job."""
        os.killpg(self.processes[name].pid, signal.SIGKILL)
        self.processes[name].wait(10)

    def stop_all(self) -> None:
        for process in self.processes.values():
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
        deadline = time.monotonic() + 30
        for process in self.processes.values():
            try:
                process.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(10)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    missing = [
        name
        for name, found in (
            ("redis-server", shutil.which("redis-server")),
            ("initdb", pg_bin("initdb")),
            ("pg_ctl", pg_bin("pg_ctl")),
        )
        if not found
    ]
    if missing:
        pytest.skip(
            f"{', '.join(missing)} not found: install Debian's redis-server and postgresql (bash .ci/services-setup.sh)"
        )
    folder = tmp_path_factory.mktemp("cluster")
    postgres, redis_server = Postgres(folder), Redis(folder)
    workers = None
    saved = dict(os.environ)
    try:
        db_url = postgres.start()
        redis_server.start()
        write_mini_problem(folder / "problems")
        env = {
            "KERNELJUDGE_BROKER": redis_server.url,
            "KERNELJUDGE_DB": db_url,
            "KERNELJUDGE_PROBLEMS": str(folder / "problems"),
            "KERNELJUDGE_VISIBILITY_TIMEOUT": str(VISIBILITY_TIMEOUT_S),
            "KERNELJUDGE_SWEEP_S": str(SWEEP_S),
            "PYTHONPATH": os.pathsep.join(
                [str(REPO)] + ([os.environ["PYTHONPATH"]] if os.environ.get("PYTHONPATH") else [])
            ),
        }
        os.environ.update(env)
        from grader.scale.distributed import celery_app

        celery_app.configure()
        workers = Workers(folder, {**os.environ, **env})
        names = [f"host{i}@kerneljudge-test" for i in range(1, WORKERS + 1)]
        for name in names:
            workers.start(name)
        workers.wait_ready(names)
        yield {
            "db": db_url,
            "redis": redis_server,
            "workers": workers,
            "names": names,
            "folder": folder,
        }
    finally:
        if workers:
            workers.stop_all()
        redis_server.stop()
        postgres.stop()
        os.environ.clear()
        os.environ.update(saved)


# --- helpers ---------------------------------------------------------------------------------------------------


def make_job(kind: str, n: int, user: str = "tester", slow_ms: int = 0):
    from grader.scale.jobs import Job

    slow = f"if (i == 0) usleep({slow_ms * 1000});" if slow_ms else ""
    source = KINDS[kind].replace("{n}", str(n)).replace("{slow}", slow)
    return Job(
        problem=PROBLEM,
        track="cpu",
        filename=f"{kind}_{n}.cpp",
        source=source,
        user=user,
        mode="test",
        time_limit_s=HANG_LIMIT_S if kind == "timeout" else None,
    )


def job_rows(db_url: str, ids) -> dict[str, dict]:
    from sqlalchemy import select

    from grader.records import storage
    from grader.records.schema import grading_jobs

    with storage.engine(db_url).connect() as connection:
        rows = connection.execute(select(grading_jobs).where(grading_jobs.c.job_id.in_(list(ids)))).all()
    return {row.job_id: dict(row._mapping) for row in rows}


def submission_counts(db_url: str, ids) -> dict[str, int]:
    from sqlalchemy import func, select

    from grader.records import storage
    from grader.records.schema import submissions

    with storage.engine(db_url).connect() as connection:
        rows = connection.execute(
            select(submissions.c.submission_id, func.count())
            .where(submissions.c.submission_id.in_(list(ids)))
            .group_by(submissions.c.submission_id)
        ).all()
    return dict(rows)


def explain(cluster, ids) -> str:
    """What the unfinished jobs, the broker and the workers were doing (for a failure message)."""
    import redis

    rows = job_rows(cluster["db"], ids)
    lines = [
        f"unfinished: {job_id} {row['state'] if row else 'no row'} "
        f"worker={row and row['worker']} attempts={row and row['attempts']}"
        for job_id in ids
        for row in [rows.get(job_id)]
        if not row or row["state"] not in ("done", "failed")
    ]
    try:
        client = redis.Redis(port=cluster["redis"].port)
        lines.append(
            f"broker: cpu list {client.llen('cpu')}, unacked {client.hlen('unacked')}: "
            f"{[v[:300] for v in client.hvals('unacked')]}"
        )
    except redis.RedisError as error:
        lines.append(f"broker: {error}")
    for name in cluster["names"]:
        lines.append(f"--- {name}:\n" + "\n".join(cluster["workers"].log(name).splitlines()[-25:]))
    return "\n".join(lines)


def finished(db_url: str, ids) -> int:
    return sum(1 for row in job_rows(db_url, ids).values() if row["state"] in ("done", "failed"))


# --- the tests -------------------------------------------------------------------------------------------------


def runs_logged(cluster, job_id: str) -> int:
    """How many runs of the job the workers have finished (each logs one line naming it)."""
    return sum(log.count(f"job {job_id} ") for log in map(cluster["workers"].log, cluster["names"]))


def test_sixty_mixed_jobs_recorded_once_each_through_a_broker_restart(cluster):
    from grader.scale.distributed import client, monitor

    db = cluster["db"]
    plan = ["accepted"] * 27 + ["wrong_answer"] * 15 + ["runtime_error"] * 12 + ["timeout"] * 6
    jobs = [make_job(kind, n, user=f"user{n % 7}") for n, kind in enumerate(plan)]
    expected = {job.id: kind for job, kind in zip(jobs, plan)}
    started = time.monotonic()
    for job in jobs:
        client.enqueue(job, "cpu")

    wait_until(
        lambda: finished(db, expected) >= 15, 180, "15 jobs to finish", explain=lambda: explain(cluster, expected)
    )
    before_restart = finished(db, expected)
    cluster["redis"].restart()  # the broker goes away mid-run and comes back
    assert before_restart < len(jobs), "every job finished before the broker restart: nothing was tested"
    wait_until(
        lambda: finished(db, expected) == len(jobs),
        300,
        "all 60 jobs to finish",
        poll_s=0.5,
        explain=lambda: explain(cluster, expected),
    )
    wall = time.monotonic() - started

    rows = job_rows(db, expected)
    counts = submission_counts(db, expected)
    wrong = {
        job_id: (row["state"], row["status"], kind)
        for job_id, kind in expected.items()
        for row in [rows[job_id]]
        if row["state"] != "done" or row["status"] != kind
    }
    assert not wrong, f"jobs without the right verdict: {wrong}"
    assert counts == {job_id: 1 for job_id in expected}, "every job recorded exactly once"
    from grader.records import storage

    for job in jobs[:3] + jobs[-3:]:
        stored = storage.load_submission(rows[job.id]["submission"], db)
        assert stored.verdict.submission_id == job.id and stored.verdict.user == job.user
        assert stored.source == job.source and stored.verdict.status == expected[job.id]
    assert {row["worker"] for row in rows.values()} == set(cluster["names"]), "all three hosts took jobs"

    status = {row["queue"]: row for row in monitor.queue_status(db)}
    assert status["cpu"]["queued"] == 0 and status["cpu"]["running"] == 0
    assert status["cpu"]["done"] >= len(jobs) and status["cpu"]["workers"] == WORKERS
    print(
        f"\n60 jobs on {WORKERS} workers (2 cores): {wall:.1f} s, {3600 * len(jobs) / wall:.0f} gradings/h; "
        f"{before_restart} done before the broker restart"
    )


def test_a_job_delivered_twice_is_graded_where_needed_and_recorded_once(cluster):
    from grader.scale.distributed import client
    from grader.scale.distributed.celery_app import TASK, celery_app

    db = cluster["db"]
    job = make_job("accepted", 1000, user="twice", slow_ms=300)
    client.enqueue(job, "cpu")
    celery_app.send_task(TASK, args=[job.to_dict()], queue="cpu")  # a second delivery of the same job
    row = client.wait_for(job.id, timeout_s=60, db_url=db)
    assert row and row["state"] == "done" and row["status"] == "accepted"
    wait_until(lambda: runs_logged(cluster, job.id) >= 2, 60, "the second run to finish (or find the record)")
    celery_app.send_task(TASK, args=[job.to_dict()], queue="cpu")  # and a third, long after
    wait_until(lambda: runs_logged(cluster, job.id) >= 3, 60, "three runs of the job")
    assert submission_counts(db, [job.id]) == {job.id: 1}
    logs = "".join(map(cluster["workers"].log, cluster["names"]))
    assert f"job {job.id} was recorded already" in logs, "a redelivered job whose verdict is stored is not graded"


def test_a_killed_workers_job_finishes_on_another_worker_recorded_once(cluster):
    from grader.scale.distributed import client

    db, workers = cluster["db"], cluster["workers"]
    job = make_job("accepted", 2000, user="survivor", slow_ms=1000)  # about 6 s of running
    client.enqueue(job, "cpu")
    running = wait_until(
        lambda: (job_rows(db, [job.id]).get(job.id) or {}).get("state") == "running" and job_rows(db, [job.id])[job.id],
        60,
        "a worker to start the job",
        poll_s=0.1,
    )
    victim = running["worker"]
    workers.kill(victim)  # while it grades: the row says running from just before the grading starts
    try:
        row = client.wait_for(job.id, timeout_s=VISIBILITY_TIMEOUT_S + 90, db_url=db)
        assert row is not None, "the killed worker's job never finished"
        assert row["state"] == "done" and row["status"] == "accepted"
        assert row["worker"] != victim and row["attempts"] == 2
        assert submission_counts(db, [job.id]) == {job.id: 1}
    finally:
        workers.start(victim)
        workers.wait_ready([victim])


def test_a_job_the_broker_lost_is_sent_again(cluster):
    """The broker can lose a message (Redis stopping between handing it out and recording it as unacknowledged):
    the job table still has it as queued, and the workers' sweeper sends it again."""
    from grader.scale.distributed import client, job_table

    db = cluster["db"]
    job = make_job("wrong_answer", 3000, user="lost")
    job_table.mark(job, "cpu", db, state="queued")  # recorded as queued, never published
    row = client.wait_for(job.id, timeout_s=60 + 4 * SWEEP_S, db_url=db)
    assert row is not None, "the lost job was never sent again"
    assert row["state"] == "done" and row["status"] == "wrong_answer" and row["attempts"] == 1
    assert submission_counts(db, [job.id]) == {job.id: 1}
    logs = "".join(map(cluster["workers"].log, cluster["names"]))
    assert f"job {job.id} (cpu) was queued but the broker no longer held it: sent it again" in logs


def test_a_job_whose_verdict_cannot_be_recorded_is_marked_failed_not_left_running(cluster):
    """A database that refuses the verdict (here a CHECK constraint; in life, a value PostgreSQL cannot hold)
    fails the job with the reason, instead of leaving it running for the sweeper to send again forever."""
    import psycopg

    from grader.scale.distributed import client

    db = cluster["db"]
    server = db.replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(server, autocommit=True) as connection:
        connection.execute("""ALTER TABLE submissions ADD CONSTRAINT test_refuses CHECK ("user" <> 'unrecordable')""")
    try:
        job = make_job("wrong_answer", 4000, user="unrecordable")
        client.enqueue(job, "cpu")
        row = client.wait_for(job.id, timeout_s=90, db_url=db)
    finally:
        with psycopg.connect(server, autocommit=True) as connection:
            connection.execute("ALTER TABLE submissions DROP CONSTRAINT test_refuses")
    assert row is not None, f"the job never finished: {job_rows(db, [job.id]).get(job.id)}"
    assert row["state"] == "failed" and row["attempts"] == 1
    assert row["error"].startswith("recording its verdict (wrong_answer): IntegrityError"), row["error"]
    assert submission_counts(db, [job.id]) == {}


def test_a_job_with_a_source_that_is_not_text_is_refused_by_the_worker(cluster):
    """A job published without the client's checks (an old client, a hand-made message) with a NUL byte in its
    source: PostgreSQL could not store it, so the worker refuses it and says why."""
    from sqlalchemy import insert

    from grader.records import storage
    from grader.records.schema import grading_jobs
    from grader.scale import jobs
    from grader.scale.distributed import client
    from grader.scale.distributed.celery_app import send

    db = cluster["db"]
    payload = {**make_job("accepted", 5000).to_dict(), "id": jobs.new_id(), "filename": "nul.cpp"}
    payload["source"] += "// \x00\n"
    row = {k: payload[k] for k in ("problem", "track", "mode", "user", "filename")}
    with storage.engine(db).begin() as connection:
        connection.execute(
            insert(grading_jobs).values(job_id=payload["id"], queue="cpu", state="queued", attempts=0, worker="", **row)
        )
    send(payload, "cpu", payload["id"])
    done = client.wait_for(payload["id"], timeout_s=60, db_url=db)
    assert done is not None and done["state"] == "failed", job_rows(db, [payload["id"]])
    assert done["error"].startswith("refused: SourceError: nul.cpp: a NUL byte at line"), done["error"]
    assert submission_counts(db, [payload["id"]]) == {}


def test_enqueue_wait_and_queue_status_commands(cluster, tmp_path):
    from grader.scale.distributed import monitor

    done_before = {row["queue"]: row for row in monitor.queue_status(cluster["db"], with_workers=False)}
    source = tmp_path / "wrong.cpp"
    source.write_text(WRONG.replace("{n}", "cli"))
    command = [
        sys.executable,
        "-m",
        "grader.cli.scale",
        "enqueue",
        PROBLEM,
        str(source),
        "--mode",
        "test",
        "--user",
        "cli",
        "--wait",
        "--timeout",
        "90",
        "--json",
    ]
    result = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=150)
    assert result.returncode == 1, result.stderr  # graded, not accepted
    verdict = json.loads(result.stdout)
    assert verdict["status"] == "wrong_answer" and verdict["user"] == "cli"
    status = subprocess.run(
        [sys.executable, "-m", "grader.cli.scale", "queue", "status", "--json"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert status.returncode == 0, status.stderr
    cpu = {row["queue"]: row for row in json.loads(status.stdout)}["cpu"]
    assert cpu["done"] >= done_before.get("cpu", {}).get("done", 0) + 1
    assert cpu["queued"] == 0 and cpu["workers"] == WORKERS


def test_waiting_gives_up_after_its_timeout_and_says_where_the_job_is(cluster, tmp_path):
    from grader.scale.distributed import client

    assert client.DEFAULT_WAIT_S == 3600 and client.wait_for.__defaults__[0] == client.DEFAULT_WAIT_S
    source = tmp_path / "k.cpp"
    source.write_text(WRONG.replace("{n}", "nobody"))
    command = [sys.executable, "-m", "grader.cli.scale", "enqueue", PROBLEM, str(source), "--queue", "nobody"]
    result = subprocess.run(
        [*command, "--wait", "--timeout", "2"], cwd=REPO, capture_output=True, text=True, timeout=120
    )
    said = " ".join(result.stderr.split())
    assert result.returncode == 1, result.stderr
    assert "no verdict within 2 s: job " in said and " stays queued on nobody and will be graded" in said, said
    assert "`grader show-submission " in said
