"""The web judge's pages and API in-process (FastAPI's test client, no worker: jobs stay queued): accounts and
tokens, CSRF and cookie flags, who sees what, hostile names and sources escaped, the quotas' answers, the fair
order in which the embedded worker takes jobs, and admins hiding a submission from the leaderboards."""

from __future__ import annotations

import logging
import re

import pytest
from verdicts import verdict

pytest.importorskip("fastapi", reason="the web judge needs fastapi (pip install -e .)")

from fastapi.testclient import TestClient

from grader.records import leaderboard, storage
from grader.web import accounts, job_queue, local_worker
from grader.web.app import create_app
from grader.web.config import WebConfig

SOURCE = (
    "void solve(const float* A, const float* B, float* C, int N) { for (int i = 0; i < N; ++i) C[i] = A[i] + B[i]; }\n"
)
HOSTILE = "<script>alert(1)</script>\u202egnp.exe"


@pytest.fixture
def judge(tmp_path, monkeypatch):
    monkeypatch.setenv("KERNELJUDGE_DATA", str(tmp_path / "data"))
    monkeypatch.delenv("KERNELJUDGE_SIGNING_KEY", raising=False)
    config = WebConfig(db_url=f"sqlite:///{tmp_path / 'judge.db'}", data_dir=tmp_path / "data", rate_count=3, pending=5)
    return config, create_app(config, judge="test-judge")


def browser(app) -> TestClient:
    return TestClient(app, base_url="http://testserver")


def csrf(client: TestClient, path: str = "/login") -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', client.get(path).text)
    assert found, path
    return found.group(1)


def register(client: TestClient, name: str, password: str = "password-123"):
    return client.post(
        "/register",
        data={"csrf": csrf(client, "/register"), "name": name, "password": password, "next": "/"},
        follow_redirects=False,
    )


def token_for(client: TestClient, name: str, password: str = "password-123") -> str:
    answer = client.post("/api/v1/tokens", auth=(name, password), json={"label": "t"})
    assert answer.status_code == 201, answer.text
    return answer.json()["token"]


def api_submit(client: TestClient, token: str, source: str = SOURCE, **extra):
    body = {"problem": "vector-add", "source": source, "filename": "add.cpp", "mode": "test", **extra}
    return client.post("/api/v1/submissions", json=body, headers={"Authorization": f"Bearer {token}"})


def test_register_log_in_and_out_with_secure_cookie_flags(judge):
    config, app = judge
    client = browser(app)
    first = client.get("/register")
    assert "HttpOnly" in first.headers["set-cookie"] and "SameSite=lax" in first.headers["set-cookie"]
    assert "default-src 'self'" in first.headers["content-security-policy"]
    made = register(client, "alice")
    assert made.status_code == 303
    session = made.headers["set-cookie"]
    assert session.startswith("kj_session=") and "HttpOnly" in session and "SameSite=lax" in session
    assert "Secure" not in session  # plain http here; over https (or KERNELJUDGE_WEB_SECURE_COOKIES=always) it is
    assert ">alice</a>" in client.get("/").text
    client.post("/logout", data={"csrf": csrf(client, "/")})
    assert "log in" in client.get("/").text
    for elsewhere in ("//evil.example/", "/\\evil.example", "https://evil.example/"):
        back = client.post(
            "/login",
            data={"csrf": csrf(client), "name": "alice", "password": "password-123", "next": elsewhere},
            follow_redirects=False,
        )
        assert back.status_code == 303 and back.headers["location"] == "/", elsewhere
    wrong = client.post("/login", data={"csrf": csrf(client), "name": "alice", "password": "nope-nope"})
    assert wrong.status_code == 401 and "Wrong name or password" in wrong.text
    stored = storage.transact(lambda c: c.exec_driver_sql("SELECT password_hash FROM users").scalar(), config.db_url)
    assert stored.startswith("$argon2id$") and "password-123" not in stored


def test_https_cookies_are_secure(judge):
    _, app = judge
    client = TestClient(app, base_url="https://testserver")
    assert "Secure" in register(client, "alice").headers["set-cookie"]


def test_a_form_without_the_right_csrf_token_is_refused(judge):
    _, app = judge
    client = browser(app)
    register(client, "alice")
    for token in ("", "0" * 64):
        refused = client.post("/problems/vector-add/submit", data={"csrf": token, "track": "cpu", "source": SOURCE})
        assert refused.status_code == 403 and "form" in refused.text.lower()
    elsewhere = client.post(
        "/problems/vector-add/submit",
        data={"csrf": csrf(client, "/"), "track": "cpu", "source": SOURCE},
        headers={"Origin": "https://evil.example"},
    )
    assert elsewhere.status_code == 403 and "another site" in elsewhere.text
    fresh = browser(app)  # another browser's token does not work with this one's cookie
    fresh.get("/login")
    assert (
        fresh.post("/login", data={"csrf": csrf(client), "name": "alice", "password": "password-123"}).status_code
        == 403
    )


@pytest.mark.parametrize(
    "name", ["<script>x</script>", "alice\u202e", "a" * 41, "", "ref:cheat", "pytorch", "two words"]
)
def test_hostile_names_are_refused_at_registration(judge, name):
    _, app = judge
    refused = register(browser(app), name)
    assert refused.status_code == 422
    assert "<script>x</script>" not in refused.text


def test_hostile_names_and_sources_are_escaped_on_every_page(judge):
    config, app = judge
    hostile = verdict(HOSTILE + "x" * 300, [50.0, 100.0])
    hostile.message = "<img src=x onerror=alert(1)>"
    storage.save_verdict(hostile, "// <script>alert('src')</script>\n/* \u202e } if (admin) { */\n", config.db_url)
    storage.save_verdict(verdict("bob", [100.0, 200.0]), "// bob", config.db_url)
    from grader.web import verdicts

    verdicts.set_public(hostile.submission_id, True, config.db_url)
    client = browser(app)
    for path in ("/", "/problems/softmax.html", f"/submissions/{hostile.submission_id}.html"):
        page = client.get(path)
        assert page.status_code == 200, path
        assert "<script>alert" not in page.text and "<img src=x" not in page.text, path
        assert "\u202e" not in page.text, path
        assert "&lt;script&gt;alert(1)&lt;/script&gt;⟦U+202E⟧gnp.exe" in page.text, path
    source = client.get(f"/submissions/{hostile.submission_id}.html").text
    assert "⟦U+202E⟧" in source[source.index('id="source"') :]


def test_an_uploaded_file_name_is_made_safe(judge):
    config, app = judge
    client = browser(app)
    register(client, "alice")
    answer = client.post(
        "/problems/vector-add/submit",
        data={"csrf": csrf(client, "/"), "track": "cpu", "mode": "test", "source": ""},
        files={"upload": ("../../etc/<b>\u202epasswd.cpp", SOURCE.encode(), "text/plain")},
        follow_redirects=False,
    )
    assert answer.status_code == 303, answer.text
    job = job_queue.row(answer.headers["location"].rsplit("/", 1)[1], config.db_url)
    assert job is not None and job["filename"] == "_b__passwd.cpp"


def test_nobody_else_sees_a_private_verdict_or_job(judge):
    config, app = judge
    alice, bob = browser(app), browser(app)
    register(alice, "alice")
    register(bob, "bob")
    mine = verdict("alice", [120.0, 240.0])
    storage.save_verdict(mine, "// alice's secret kernel", config.db_url)
    page = f"/submissions/{mine.submission_id}.html"
    assert "alice&#39;s secret kernel" in alice.get(page).text
    for client in (bob, browser(app)):
        hidden = client.get(page)
        assert hidden.status_code == 404 and "secret" not in hidden.text
        assert client.get(f"/api/v1/submissions/{mine.submission_id}/signed").status_code == 404
    assert "secret" not in bob.get("/problems/softmax.html").text
    assert f"/submissions/{mine.submission_id}.html" in bob.get("/problems/softmax.html").text  # on the board
    job = api_submit(alice, token_for(alice, "alice")).json()["job_id"]
    bob_token = token_for(bob, "bob")
    assert bob.get(f"/api/v1/jobs/{job}", headers={"Authorization": f"Bearer {bob_token}"}).status_code == 404
    assert bob.get(f"/jobs/{job}").status_code == 404
    alice.post(f"/submissions/{mine.submission_id}/public", data={"csrf": csrf(alice, "/"), "public": "yes"})
    assert "secret kernel" in bob.get(page).text


def test_api_tokens_are_shown_once_stored_hashed_and_revocable(judge):
    config, app = judge
    client = browser(app)
    register(client, "alice")
    made = client.post("/account/tokens", data={"csrf": csrf(client, "/account"), "label": "laptop"})
    token = re.search(r'id="new-token">([^<]+)<', made.text).group(1)
    assert token not in client.get("/account").text
    rows = storage.transact(lambda c: c.exec_driver_sql("SELECT token_sha256 FROM api_tokens").all(), config.db_url)
    assert token not in str(rows) and accounts.sha256(token) in str(rows)
    auth = {"Authorization": f"Bearer {token}"}
    assert client.get("/api/v1/tokens", headers=auth).status_code == 200
    token_id = client.get("/api/v1/tokens", headers=auth).json()[0]["id"]
    assert client.delete(f"/api/v1/tokens/{token_id}", headers=auth).status_code == 200
    assert client.get("/api/v1/tokens", headers=auth).status_code == 401
    assert api_submit(client, token).status_code == 401


def test_quotas_answer_409_413_422_and_429_with_retry_after(judge):
    _, app = judge
    client = browser(app)
    register(client, "alice")
    token = token_for(client, "alice")
    assert api_submit(client, token).status_code == 202
    duplicate = api_submit(client, token)
    assert duplicate.status_code == 409 and duplicate.json()["job_id"]
    assert api_submit(client, token, source="x" * ((1 << 20) + 1)).status_code == 413
    huge = client.post("/api/v1/submissions", content=b"x" * (4 << 20), headers={"Authorization": f"Bearer {token}"})
    assert huge.status_code == 413
    assert api_submit(client, token, source="int main() {\0}").status_code == 422
    assert api_submit(client, token, track="cuda").status_code == 422  # no GPU here: said so, not queued
    assert api_submit(client, token, problem="no-such-problem").status_code == 404
    for n in (1, 2):
        assert api_submit(client, token, source=f"// {n}\n" + SOURCE).status_code == 202
    limited = api_submit(client, token, source="// 3\n" + SOURCE)
    assert limited.status_code == 429 and 0 < int(limited.headers["retry-after"]) <= 600
    assert "at most 3 submissions" in limited.json()["detail"]
    assert client.post("/api/v1/submissions", json={"problem": "vector-add", "source": SOURCE}).status_code == 401


def test_the_worker_takes_jobs_in_turns_by_user(judge):
    config, app = judge
    client = browser(app)
    tokens = {}
    for name in ("ann", "ben", "cat"):
        register(browser(app), name)
        tokens[name] = token_for(client, name)
    for name, count in (("ann", 3), ("ben", 2), ("cat", 1)):
        for n in range(count):
            assert api_submit(client, tokens[name], source=f"// {name} {n}\n" + SOURCE).status_code == 202
    order = []
    while (job := job_queue.claim_next("test", config.db_url)) is not None:
        order.append(job.user)
        job_queue.finish(job.id, 0, "accepted", "test", config.db_url)
    assert order == ["ann", "ben", "cat", "ann", "ben", "ann"]


def test_a_killed_grading_is_queued_again_and_a_stored_one_is_not_graded_twice(judge, caplog):
    config, app = judge
    client = browser(app)
    register(client, "alice")
    token = token_for(client, "alice")
    ids = [api_submit(client, token, source=f"// {n}\n" + SOURCE).json()["job_id"] for n in range(2)]
    first, second = job_queue.claim_next("w", config.db_url), None
    assert first is not None
    stored = verdict("alice", [], status="wrong_answer")
    stored.submission_id = first.id
    storage.save_verdict(stored, first.source, config.db_url)  # graded and stored, then the server was killed
    second = job_queue.claim_next("w", config.db_url)
    assert second is not None and {first.id, second.id} == set(ids)
    with caplog.at_level(logging.INFO, logger=local_worker.log.name):
        local_worker.recover(config.db_url)
    assert job_queue.row(first.id, config.db_url)["state"] == "done"
    assert job_queue.row(second.id, config.db_url)["state"] == "queued"
    said = [r.getMessage() for r in caplog.records if r.getMessage().startswith("graded")]
    assert said == [f"graded {first.id} alice wrong_answer"]  # its grading was killed before it could say so


def test_an_admin_hides_a_submission_from_the_leaderboards(judge):
    config, app = judge
    cheat = verdict("mallory", [1.0, 2.0])
    storage.save_verdict(cheat, "// reads the answer", config.db_url)
    storage.save_verdict(verdict("bob", [100.0, 200.0]), "// bob", config.db_url)
    accounts.create_user("root-admin", "password-123", is_admin=True, db_url=config.db_url)
    admin = browser(app)
    admin.post("/login", data={"csrf": csrf(admin), "name": "root-admin", "password": "password-123"})
    register(plain := browser(app), "bob")
    refused = plain.post(f"/submissions/{cheat.submission_id}/hide", data={"csrf": csrf(plain, "/"), "reason": "x"})
    assert refused.status_code == 403
    admin.post(
        f"/submissions/{cheat.submission_id}/hide", data={"csrf": csrf(admin, "/"), "reason": "reads the answer"}
    )
    users = [e.user for b in leaderboard.boards("softmax", db_url=config.db_url) for e in b.entries]
    assert users == ["bob"]
    assert "mallory" not in admin.get("/problems/softmax.html").text.split('id="submissions"')[0]
    assert (
        "Hidden from the leaderboards by an admin: reads the answer"
        in admin.get(f"/submissions/{cheat.submission_id}.html").text
    )


def test_the_api_has_an_openapi_schema_and_the_problems(judge):
    _, app = judge
    client = browser(app)
    paths = client.get("/openapi.json").json()["paths"]
    for path in ("/api/v1/submissions", "/api/v1/jobs/{job_id}", "/api/v1/jobs/{job_id}/verdict", "/api/v1/problems"):
        assert path in paths
    assert "/api/v1/problems/{slug}/leaderboard" in paths
    assert "vector-add" in [p["slug"] for p in client.get("/api/v1/problems").json()]
    assert "void solve" in client.get("/api/v1/problems/vector-add").json()["starters"]["cpu"]
    assert client.get("/api/v1/signing-key").json()["public_key_pem"].startswith("-----BEGIN PUBLIC KEY-----")


def test_a_course_imports_its_list_and_a_bad_line_is_named(tmp_path):
    import os

    from web_helpers import grader_command

    db = f"sqlite:///{tmp_path / 'judge.db'}"
    env = {**os.environ, "KERNELJUDGE_DATA": str(tmp_path / "data")}
    roster = tmp_path / "class.csv"
    roster.write_text("name,password\nada,first-password\nalan\n")
    made = grader_command(env, "users", "import", str(roster), "--db", db)
    assert made.returncode == 0, made.stderr
    lines = made.stdout.split()
    assert lines[0] == "ada" and lines[1].startswith("alan,") and len(lines[1]) > len("alan,") + 8
    assert accounts.authenticate("ada", "first-password", db) is not None
    assert accounts.authenticate("alan", lines[1].split(",", 1)[1], db) is not None
    roster.write_text("grace\n<script>,password-123\n")
    refused = grader_command(env, "users", "import", str(roster), "--db", db)
    assert refused.returncode == 2 and "line 2" in refused.stderr and "letters, digits" in refused.stderr


def test_an_admin_adds_users_through_the_api(judge):
    config, app = judge
    accounts.create_user("teacher", "password-123", is_admin=True, db_url=config.db_url)
    accounts.create_user("pupil", "password-123", db_url=config.db_url)
    client = browser(app)
    teacher, pupil = token_for(client, "teacher"), token_for(client, "pupil")
    made = client.post("/api/v1/users", json={"name": "newcomer"}, headers={"Authorization": f"Bearer {teacher}"})
    assert made.status_code == 201 and len(made.json()["password"]) >= 12
    assert accounts.authenticate("newcomer", made.json()["password"], config.db_url) is not None
    refused = client.post("/api/v1/users", json={"name": "other"}, headers={"Authorization": f"Bearer {pupil}"})
    assert refused.status_code == 403 and accounts.user_named("other", config.db_url) is None
    bad = client.post("/api/v1/users", json={"name": "<b>"}, headers={"Authorization": f"Bearer {teacher}"})
    assert bad.status_code == 422
