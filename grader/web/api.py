"""The HTTP API, /api/v1 (FastAPI: its OpenAPI schema is served at /openapi.json; the
Swagger page FastAPI would serve at /docs is off, as it loads its scripts from a CDN).

    GET  /api/v1/problems                          the problems along the learning path
    GET  /api/v1/problems/{slug}                   one problem: statement, signature, tests, benchmarks, starters
    GET  /api/v1/problems/{slug}/leaderboard       its boards (?by=score|sol&track=...)
    POST /api/v1/submissions                       submit (bearer token): 202 with the job; 409, 413, 422, 429
    GET  /api/v1/jobs/{id}                         a job's state: queued (with jobs ahead), running (stage), done, failed
    GET  /api/v1/jobs/{id}/verdict                 its verdict, the same JSON as `grader submit --json`
    GET  /api/v1/submissions/{id}/signed           the verdict signed by the judge (`grader verify` reads it)
    POST /api/v1/submissions/{id}/public           make one's own submission public or private again
    POST /api/v1/submissions/{id}/hide             admins: hide from the leaderboards, saying why (reason null: show)
    GET  /api/v1/signing-key                       the judge's public key (PEM) and key id
    POST /api/v1/tokens                            make an API token (HTTP Basic: name and password); shown once
    GET  /api/v1/tokens, DELETE /api/v1/tokens/{id}  list and revoke one's tokens
    POST /api/v1/users                             admins: add a user (a password made when none is given)
    GET  /api/v1/me/history                        one's jobs, newest first

Jobs and verdicts are their owner's (and admins'): to anyone else a private one is 404.
"""

from __future__ import annotations

import secrets
from typing import Any

from fastapi import APIRouter, Depends, HTTPException, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field

from grader import tracks
from grader.judge.intake import MAX_SOURCE_BYTES
from grader.problems import order, starter
from grader.problems.catalog import load_all, load_problem
from grader.problems.spec import SpecError
from grader.records import leaderboard, storage
from grader.web import accounts, job_queue, signing, submitting, verdicts
from grader.web.accounts import User
from grader.web.auth import api_user, basic_user, config, reader
from grader.web.quotas import Refused

router = APIRouter(prefix="/api/v1", tags=["api"])


class SubmissionIn(BaseModel):
    problem: str = Field(description="the problem's slug, e.g. vector-add")
    source: str = Field(description=f"the solution's text (UTF-8, at most {MAX_SOURCE_BYTES:,} bytes)")
    filename: str = Field("", description="its file name; the extension picks the track when `track` is not given")
    track: str | None = Field(None, description=f"one of {', '.join(tracks.names())}")
    mode: str = Field("submit", description="submit (check and time) or test (check only)")


class JobOut(BaseModel):
    job_id: str
    state: str = Field(description="queued, running, done or failed")
    problem: str
    track: str
    mode: str
    user: str
    filename: str
    stage: str = Field("", description="while running on the embedded worker: compile, run or check")
    ahead: int = Field(0, description="while queued: jobs queued before this one")
    status: str | None = Field(None, description="the verdict's status, once done")
    error: str | None = Field(None, description="why the judge could not grade it, when failed")
    attempts: int = 0
    status_url: str
    verdict_url: str
    page_url: str


class TokenIn(BaseModel):
    label: str = Field("api", max_length=100)


class UserIn(BaseModel):
    name: str
    password: str | None = Field(None, description="at least 8 characters; none: one is made and returned")
    is_admin: bool = False


class PublicIn(BaseModel):
    public: bool


class HideIn(BaseModel):
    reason: str | None = Field(None, max_length=2000, description="why it is hidden; null shows it again")


def refused(error: Refused) -> JSONResponse:
    headers = {"Retry-After": str(error.retry_after_s)} if error.retry_after_s else {}
    body: dict[str, Any] = {"detail": error.message}
    if error.job_id:
        body["job_id"] = error.job_id
        headers["Location"] = f"/api/v1/jobs/{error.job_id}"
    return JSONResponse(body, status_code=error.status, headers=headers)


def job_out(row: dict, db_url: str | None) -> JobOut:
    job_id = row["job_id"]
    return JobOut(
        **{k: row[k] or "" for k in ("job_id", "state", "problem", "track", "mode", "user", "filename", "stage")},
        ahead=job_queue.ahead(row, db_url),
        status=row["status"],
        error=row["error"],
        attempts=row["attempts"],
        status_url=f"/api/v1/jobs/{job_id}",
        verdict_url=f"/api/v1/jobs/{job_id}/verdict",
        page_url=f"/jobs/{job_id}",
    )


def own_job(job_id: str, user: User | None, db_url: str | None) -> dict:
    row = job_queue.row(job_id, db_url)
    if row is None or user is None or not (user.is_admin or user.name == row["user"]):
        raise HTTPException(404, f"no job {job_id} of yours")
    return row


@router.get("/problems")
def problems() -> list[dict]:
    return [
        {"slug": p.slug, "title": p.title, "difficulty": p.difficulty, "tags": p.tags, "signature": p.prototype()}
        for p in order.ordered(load_all())
    ]


@router.get("/problems/{slug}")
def problem(slug: str) -> dict:
    try:
        spec = load_problem(slug)
    except SpecError:
        raise HTTPException(404, f"no problem {slug!r}")
    return {
        "slug": spec.slug,
        "title": spec.title,
        "difficulty": spec.difficulty,
        "statement": spec.statement_path.read_text() if spec.statement_path.is_file() else "",
        "signature": spec.prototype(),
        "time_limit_s": spec.time_limit_s,
        "tests": [{"name": t.name, "sizes": t.sizes, "tracks": t.tracks} for t in spec.tests],
        "benchmarks": {
            track: [{"name": b.name, "sizes": b.sizes} for b in sets] for track, sets in spec.benchmarks.items()
        },
        "starters": {track: starter.starter(spec, track) for track in tracks.names()},
    }


@router.get("/problems/{slug}/leaderboard")
def leaderboards(request: Request, slug: str, by: str = "score", track: str | None = None) -> list[dict]:
    try:
        load_problem(slug)
    except SpecError:
        raise HTTPException(404, f"no problem {slug!r}")
    if by not in leaderboard.RANKINGS:
        raise HTTPException(422, f"by is one of {', '.join(leaderboard.RANKINGS)}")
    return [b.to_json() for b in leaderboard.boards(slug, db_url=config(request).db_url, by=by, track=track)]


@router.post("/submissions", status_code=202, response_model=JobOut, responses={409: {}, 413: {}, 422: {}, 429: {}})
def submit(request: Request, body: SubmissionIn, user: User = Depends(api_user)):
    settings = config(request)
    try:
        job = submitting.submit(
            settings,
            user,
            body.problem,
            body.source.encode("utf-8", "surrogatepass"),
            body.filename,
            body.track,
            body.mode,
        )
    except Refused as error:
        return refused(error)
    row = job_queue.row(job.id, settings.db_url)
    assert row is not None
    return JSONResponse(
        job_out(row, settings.db_url).model_dump(), status_code=202, headers={"Location": f"/api/v1/jobs/{job.id}"}
    )


@router.get("/jobs/{job_id}", response_model=JobOut)
def job(request: Request, job_id: str, user: User | None = Depends(reader)) -> JobOut:
    return job_out(own_job(job_id, user, config(request).db_url), config(request).db_url)


@router.get("/jobs/{job_id}/verdict", responses={409: {"description": "not graded yet (Retry-After)"}})
def verdict(request: Request, job_id: str, user: User | None = Depends(reader)):
    db_url = config(request).db_url
    row = own_job(job_id, user, db_url)
    if row["state"] != job_queue.DONE:
        return JSONResponse(
            {"detail": f"job {job_id} is {row['state']}", "state": row["state"], "error": row["error"]},
            status_code=409,
            headers={"Retry-After": "1"} if row["state"] in job_queue.UNFINISHED else {},
        )
    stored = storage.load_submission(job_id, db_url)
    if stored is None:
        raise HTTPException(404, f"job {job_id} is done, but its verdict is not stored")
    return stored.verdict.to_json()


@router.get("/submissions/{submission_id}/signed")
def signed_verdict(request: Request, submission_id: str, user: User | None = Depends(reader)) -> dict:
    db_url = config(request).db_url
    if verdicts.visible(user, submission_id, db_url) is None:
        raise HTTPException(404, f"no submission {submission_id} you may see")
    document = verdicts.signed(submission_id, request.app.state.judge, db_url)
    if document is None:
        raise HTTPException(404, f"no submission {submission_id}")
    return document


@router.post("/submissions/{submission_id}/public")
def make_public(request: Request, submission_id: str, body: PublicIn, user: User = Depends(api_user)) -> dict:
    db_url = config(request).db_url
    found = verdicts.flags(submission_id, db_url)
    if found is None or not (user.is_admin or user.name == found["user"]):
        raise HTTPException(404, f"no submission {submission_id} of yours")
    verdicts.set_public(submission_id, body.public, db_url)
    return {"submission_id": submission_id, "public": body.public}


@router.post("/submissions/{submission_id}/hide")
def hide(request: Request, submission_id: str, body: HideIn, user: User = Depends(api_user)) -> dict:
    if not user.is_admin:
        raise HTTPException(403, "only an admin hides submissions")
    db_url = config(request).db_url
    if verdicts.flags(submission_id, db_url) is None:
        raise HTTPException(404, f"no submission {submission_id}")
    reason = (body.reason or "").strip() or None
    verdicts.set_hidden(submission_id, reason, db_url)
    return {"submission_id": submission_id, "hidden_reason": reason}


@router.get("/signing-key")
def signing_key() -> dict:
    key = signing.load_or_create_key()
    return {
        "algorithm": signing.ALGORITHM,
        "key_id": signing.key_id(key.public_key()),
        "public_key_pem": signing.public_pem(key),
    }


@router.post("/tokens", status_code=201)
def make_token(request: Request, body: TokenIn, user: User = Depends(basic_user)) -> dict:
    token = accounts.create_token(user, body.label, config(request).db_url)
    return {"token": token, "user": user.name, "label": body.label, "note": "shown once: keep it now"}


@router.get("/tokens")
def tokens(request: Request, user: User = Depends(api_user)) -> list[dict]:
    return [vars(t) for t in accounts.list_tokens(user, config(request).db_url)]


@router.delete("/tokens/{token_id}")
def revoke(request: Request, token_id: int, user: User = Depends(api_user)) -> dict:
    if not accounts.revoke_token(user, token_id, config(request).db_url):
        raise HTTPException(404, f"no live token {token_id} of yours")
    return {"revoked": token_id}


@router.post("/users", status_code=201)
def add_user(request: Request, body: UserIn, user: User = Depends(api_user)) -> dict:
    """Admins: add a user (as `grader users add` does)."""
    if not user.is_admin:
        raise HTTPException(403, "only an admin adds users")
    password = body.password or secrets.token_urlsafe(12)
    try:
        accounts.create_user(body.name, password, is_admin=body.is_admin, db_url=config(request).db_url)
    except accounts.AccountError as error:
        raise HTTPException(422, str(error))
    return {"name": body.name, "is_admin": body.is_admin, "password": "" if body.password else password}


@router.get("/me/history")
def my_history(request: Request, user: User = Depends(api_user)) -> list[dict]:
    rows = job_queue.history(user.name, config(request).db_url)
    keep = ("job_id", "problem", "track", "mode", "state", "status", "score_us", "public", "enqueued_at", "finished_at")
    return [{k: row.get(k) for k in keep} for row in rows]
