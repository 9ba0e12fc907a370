"""The web judge at scale: `grader serve --queue celery` over real PostgreSQL and Redis (started here, as
tests/test_distributed.py starts them) with a Celery worker (`grader worker`, CPU track) grading. The same API
flow as the embedded judge: tokens, concurrent submissions from several users, each graded exactly once, the rate
limit's 429 with Retry-After, the verdict as `grader submit --json` gives it, and `grader submit --remote`."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor

import pytest
from test_distributed import Postgres, Redis, Workers, pg_bin
from web_helpers import PROBLEM, Server, call, grader_command, make_user, variant, wait_until, write_mini_problem

pytestmark = pytest.mark.slow  # services and gradings

USERS = ["ann", "ben", "cat"]
EACH = 3


@pytest.fixture
def cluster(tmp_path):
    import shutil

    missing = [name for name in ("redis-server",) if not shutil.which(name)] + [
        name for name in ("initdb", "pg_ctl") if not pg_bin(name)
    ]
    if missing:
        pytest.skip(f"{', '.join(missing)} not found: install redis-server and postgresql (bash .ci/services-setup.sh)")
    postgres, redis_server = Postgres(tmp_path), Redis(tmp_path)
    workers = None
    server = None
    try:
        db_url = postgres.start()
        redis_server.start()
        write_mini_problem(tmp_path / "problems")
        limits = {"KERNELJUDGE_WEB_RATE": f"{EACH}/3600", "KERNELJUDGE_WEB_PENDING": str(EACH)}
        server = Server(tmp_path, db_url, {"KERNELJUDGE_BROKER": redis_server.url, **limits}, queue="celery")
        workers = Workers(tmp_path, {**server.env, "KERNELJUDGE_DB": db_url})
        workers.start("host1@web-test")
        workers.wait_ready(["host1@web-test"])
        server.start()
        yield server
    finally:
        if server:
            server.stop()
        if workers:
            workers.stop_all()
        redis_server.stop()
        postgres.stop()


def test_the_api_through_celery_workers_on_postgresql(cluster):
    server = cluster
    tokens = {}
    for user in USERS:
        password = make_user(server.env, server.db_url, user)
        status, _, answer = call(f"{server.url}api/v1/tokens", "POST", {"label": "ci"}, auth=(user, password))
        assert status == 201, answer
        tokens[user] = answer["token"]

    def submit(work):
        user, n = work
        body = {"problem": PROBLEM, "source": variant(n), "filename": "add.cpp", "mode": "test"}
        return call(f"{server.url}api/v1/submissions", "POST", body, token=tokens[user])

    work = [(user, 10 * USERS.index(user) + k) for k in range(EACH) for user in USERS]
    with ThreadPoolExecutor(len(work)) as pool:
        answers = list(pool.map(submit, work))
    assert [status for status, _, _ in answers] == [202] * len(work), answers
    jobs = {answer["job_id"]: answer["user"] for _, _, answer in answers}
    status, headers, answer = submit((USERS[0], 99))
    assert status == 429 and int(headers["Retry-After"]) > 0, answer

    def all_done() -> bool:
        states = [call(f"{server.url}api/v1/jobs/{j}", token=tokens[u])[2]["state"] for j, u in jobs.items()]
        assert "failed" not in states, states
        return all(state == "done" for state in states)

    wait_until(all_done, 900, "every job graded by the Celery worker", poll_s=1)
    for job_id, user in jobs.items():
        status, _, verdict = call(f"{server.url}api/v1/jobs/{job_id}/verdict", token=tokens[user])
        assert status == 200 and verdict["status"] == "accepted" and verdict["submission_id"] == job_id
        assert verdict["user"] == user
    import psycopg

    with psycopg.connect(server.db_url.replace("postgresql+psycopg", "postgresql")) as connection:
        rows = connection.execute("SELECT submission_id, count(*) FROM submissions GROUP BY submission_id").fetchall()
        workers = connection.execute("SELECT DISTINCT worker FROM grading_jobs").fetchall()
    assert sorted(r[0] for r in rows) == sorted(jobs) and {r[1] for r in rows} == {1}
    assert workers == [("host1@web-test",)] or all("host1" in w[0] for w in workers)

    password = make_user(server.env, server.db_url, "dee")  # under no quota yet
    token = call(f"{server.url}api/v1/tokens", "POST", {"label": "cli"}, auth=("dee", password))[2]["token"]
    source = server.folder / "mine.cpp"
    source.write_text(variant(1000))
    signed = server.folder / "signed.json"
    remote = grader_command(
        server.env,
        "submit", PROBLEM, str(source), "--remote", server.url, "--token", token, "--json", "--signed", str(signed),
    )  # fmt: skip
    assert remote.returncode == 0, remote.stderr
    printed = json.loads(remote.stdout)
    assert printed["status"] == "accepted" and printed["user"] == "dee" and printed["mode"] == "submit"
    status, _, key = call(f"{server.url}api/v1/signing-key")
    (server.folder / "judge.pem").write_text(key["public_key_pem"])
    verified = grader_command(server.env, "verify", str(signed), "--key", str(server.folder / "judge.pem"), "--json")
    assert verified.returncode == 0, verified.stderr
    assert json.loads(verified.stdout) == printed
