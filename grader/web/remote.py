"""The web judge's API from the client side: what `grader submit --remote URL` runs (standard library only).

    job = submit(url, token, "vector-add", text, "add.cpp", track=None, mode="submit")
    verdict = wait_for_verdict(url, token, job["job_id"], timeout_s=3600)   # the same JSON as --json

A 429 is waited out (its Retry-After) and sent again; any other refusal is a RemoteError with the server's
message; a duplicate (409) follows the earlier job it names.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from collections.abc import Callable


class RemoteError(Exception):
    """The judge refused or could not be reached; str() says why."""


def _call(url: str, token: str | None, method: str = "GET", body: dict | None = None) -> tuple[int, dict, dict]:
    headers = {"Accept": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    data = None
    if body is not None:
        data, headers["Content-Type"] = json.dumps(body).encode(), "application/json"
    request = urllib.request.Request(url, data=data, headers=headers, method=method)
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, dict(response.headers), json.loads(response.read() or b"{}")
    except urllib.error.HTTPError as error:
        raw = error.read()
        try:
            answer = json.loads(raw)
        except ValueError:
            answer = {"detail": raw.decode(errors="replace")[:500]}
        return error.code, dict(error.headers), answer
    except (urllib.error.URLError, OSError) as error:
        raise RemoteError(f"cannot reach the judge at {url}: {getattr(error, 'reason', error)}")


def _detail(answer: dict) -> str:
    detail = answer.get("detail", answer)
    return detail if isinstance(detail, str) else json.dumps(detail)


def submit(
    base: str,
    token: str | None,
    problem: str,
    source: str,
    filename: str,
    track: str | None,
    mode: str,
    waiting: Callable[[str], None] = lambda _: None,
) -> dict:
    """Submit; the job (JobOut as JSON). Waits out a 429 (saying so through `waiting`)."""
    if not token:
        raise RemoteError("the judge needs an API token: --token TOKEN or $KERNELJUDGE_TOKEN (make one on /account)")
    body = {"problem": problem, "source": source, "filename": filename, "track": track, "mode": mode}
    while True:
        status, headers, answer = _call(base.rstrip("/") + "/api/v1/submissions", token, "POST", body)
        if status == 202:
            return answer
        if status == 409 and answer.get("job_id"):
            waiting(f"{_detail(answer)}: following that job")
            return _job(base, token, answer["job_id"])
        if status == 429:
            wait = float(headers.get("Retry-After") or 5)
            waiting(f"{_detail(answer)} (waiting {wait:.0f} s)")
            time.sleep(wait)
            continue
        raise RemoteError(f"the judge refused the submission ({status}): {_detail(answer)}")


def _job(base: str, token: str | None, job_id: str) -> dict:
    status, _, answer = _call(f"{base.rstrip('/')}/api/v1/jobs/{job_id}", token)
    if status != 200:
        raise RemoteError(f"job {job_id}: ({status}) {_detail(answer)}")
    return answer


def wait_for_verdict(
    base: str, token: str | None, job_id: str, timeout_s: float | None, progress: Callable[[str], None] = lambda _: None
) -> dict | None:
    """The verdict JSON once the job is graded; None when `timeout_s` passes first; RemoteError if it failed."""
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    while True:
        job = _job(base, token, job_id)
        if job["state"] == "done":
            status, _, answer = _call(f"{base.rstrip('/')}/api/v1/jobs/{job_id}/verdict", token)
            if status != 200:
                raise RemoteError(f"job {job_id}: ({status}) {_detail(answer)}")
            return answer
        if job["state"] == "failed":
            raise RemoteError(f"the judge could not grade job {job_id}: {job.get('error') or '?'}")
        progress(
            f"{job['state']} {job.get('stage') or ''}".strip() + (f", {job['ahead']} ahead" if job["ahead"] else "")
        )
        if deadline is not None and time.monotonic() > deadline:
            return None
        time.sleep(0.5)


def signed(base: str, token: str | None, submission_id: str) -> dict:
    status, _, answer = _call(f"{base.rstrip('/')}/api/v1/submissions/{submission_id}/signed", token)
    if status != 200:
        raise RemoteError(f"submission {submission_id}: ({status}) {_detail(answer)}")
    return answer
