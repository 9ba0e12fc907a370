"""The embedded web judge under load, through its API with tokens: 50 concurrent submissions from 5 users (CPU
track, test mode), the server killed (SIGKILL, its worker with it) mid-batch and started again.

Shown: every job is graded exactly once (one stored verdict each, one "graded" line each across both server
runs) and none is lost; the users take turns (no user waits for all of another's jobs); a submission over
the rate limit gets 429 with a Retry-After.
"""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor

import pytest
from web_helpers import PROBLEM, Server, call, make_user, variant, wait_until, write_mini_problem

from grader.records import storage

pytestmark = pytest.mark.slow  # 50 gradings on the CPU track

USERS = [f"student{i}" for i in range(5)]
EACH = 10
GRADE_ALL_S = 1200


def _done(server: Server, tokens: dict, jobs: dict[str, str]) -> int:
    done = 0
    for job_id, user in jobs.items():
        status, _, answer = call(f"{server.url}api/v1/jobs/{job_id}", token=tokens[user])
        assert status == 200, answer
        assert answer["state"] != "failed", answer
        done += answer["state"] == "done"
    return done


def test_fifty_jobs_from_five_users_graded_once_in_turns_across_a_kill(tmp_path):
    write_mini_problem(tmp_path / "problems")
    limits = {"KERNELJUDGE_WEB_RATE": f"{EACH}/3600", "KERNELJUDGE_WEB_PENDING": str(2 * EACH)}
    server = Server(tmp_path, extra_env=limits)
    server.start()
    try:
        tokens = {}
        for user in USERS:
            password = make_user(server.env, server.db_url, user)
            status, _, answer = call(f"{server.url}api/v1/tokens", "POST", {"label": "test"}, auth=(user, password))
            assert status == 201, answer
            tokens[user] = answer["token"]

        def submit(work: tuple[str, int]):
            user, n = work
            body = {"problem": PROBLEM, "source": variant(n), "filename": f"add_{n}.cpp", "mode": "test"}
            return call(f"{server.url}api/v1/submissions", "POST", body, token=tokens[user])

        work = [(user, USERS.index(user) * 100 + k) for k in range(EACH) for user in USERS]
        with ThreadPoolExecutor(len(work)) as pool:
            answers = list(pool.map(submit, work))
        assert [status for status, _, _ in answers] == [202] * len(work), answers
        jobs = {answer["job_id"]: answer["user"] for _, _, answer in answers}
        assert len(jobs) == len(work)

        status, headers, answer = submit((USERS[0], 999))  # an 11th within the hour
        assert status == 429, answer
        assert 0 < int(headers["Retry-After"]) <= 3600 and f"at most {EACH} submissions" in answer["detail"]

        done_before = wait_until(lambda: _done(server, tokens, jobs) >= 8, GRADE_ALL_S, "8 gradings", poll_s=1)
        server.kill()  # mid-batch: the server and its worker, with a grading under way
        assert done_before < len(jobs)
        server.start()
        wait_until(lambda: _done(server, tokens, jobs) == len(jobs), GRADE_ALL_S, "every job graded", poll_s=1)

        stored = storage.list_submissions(db_url=server.db_url)
        assert sorted(s.submission_id for s in stored) == sorted(jobs), "a job lost or recorded twice"
        assert {s.status for s in stored} == {"accepted"}
        for job_id, user in jobs.items():
            status, _, verdict = call(f"{server.url}api/v1/jobs/{job_id}/verdict", token=tokens[user])
            assert status == 200 and verdict["submission_id"] == job_id and verdict["user"] == user

        graded = re.findall(r"graded (\w+) (\S+) accepted", server.logs())
        assert sorted(job for job, _ in graded) == sorted(jobs), "a grading finished twice, or never"
        _assert_turns([user for _, user in graded])
    finally:
        server.stop()


def _assert_turns(order: list[str]) -> None:
    """Round-robin by user: for any two users, the k-th grading of one comes before the (k+2)-th of the other
    (one of slack: the grading a kill interrupted is done again after the others' turn)."""
    position = {user: [i for i, u in enumerate(order) if u == user] for user in USERS}
    assert all(len(p) == EACH for p in position.values()), position
    for a in USERS:
        for b in USERS:
            for k in range(EACH - 2):
                assert position[b][k] < position[a][k + 2], f"{b} waited for {a}'s jobs: {order}"
