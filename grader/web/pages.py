"""The web judge's pages: the site's problem and submission pages rendered per request (grader/site/render.py's
templates, with this folder's templates first), the submit form, the live job page, accounts and history.

Every form posts a CSRF token (grader/web/security.py); every page works without JavaScript but the job page's
live status (without it, the page refreshes itself) and the editor's tab key. Another user's private
submission is not found (404), as one that does not exist.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter, Form, Request, UploadFile
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from jinja2 import Environment

import grader
from grader.cli import timing
from grader.judge.status import Status
from grader.problems import order, starter
from grader.problems.spec import SpecError, load_all, load_problem
from grader.problems.tracks import device
from grader.records import leaderboard, storage
from grader.site import render
from grader.web import accounts, display, job_queue, security, submitting, verdicts
from grader.web.accounts import AccountError, User
from grader.web.auth import config, session_user
from grader.web.quotas import Refused

HERE = Path(__file__).resolve().parent
router = APIRouter(include_in_schema=False)


def environment() -> Environment:
    env = render.environment(HERE / "templates", finalize=display.visible)
    env.globals["version"] = grader.__version__
    return env


def _common(request: Request, user: User | None) -> dict:
    """What every page's frame needs: the user, this browser's CSRF token, whether registration is open."""
    csrf = security.csrf_token(request, request.app.state.secret)
    return {"user": user, "csrf": csrf, "registration": config(request).registration}


def page(request: Request, template: str, status: int = 200, **context) -> HTMLResponse:
    user = context.pop("user", None) or session_user(request)
    env: Environment = request.app.state.env
    context.setdefault("doubts", {})
    html = env.get_template(template).render(root="/", **_common(request, user), **context)
    return HTMLResponse(html, status_code=status)


def message(request: Request, status: int, heading: str, text: str, link: tuple[str, str] | None = None):
    return page(request, "message.html", status, heading=heading, message=text, link=link)


def back_to_login(request: Request) -> RedirectResponse:
    return RedirectResponse(f"/login?next={request.url.path}", status_code=303)


def _csrf(request: Request, token: str) -> Response | None:
    try:
        security.check_csrf(request, request.app.state.secret, token)
    except security.CsrfRefused as error:
        return message(request, 403, "Form refused", str(error))
    return None


def _doubts(submission_ids: list[str], db_url: str | None) -> dict[str, list[str]]:
    loaded = (storage.load_submission(sid, db_url) for sid in set(submission_ids))
    return {s.verdict.submission_id: timing.doubts(s.verdict) for s in loaded if s is not None}


@router.get("/")
@router.get("/index.html")
def index(request: Request):
    db_url = config(request).db_url
    items = []
    for problem in order.ordered(load_all()):
        boards = leaderboard.boards(problem.slug, db_url=db_url)
        accepted = storage.list_submissions(problem=problem.slug, status=Status.ACCEPTED, db_url=db_url)
        solvers = len({s.user for s in accepted if leaderboard.kind_of(s.user) == "user"})
        items.append({"problem": problem, "solvers": solvers, "boards": boards})
    return page(request, "index.html", problems=items)


@router.get("/problems/{slug}.html")
def problem_page(request: Request, slug: str):
    try:
        problem = load_problem(slug)
    except SpecError:
        return message(request, 404, "No such problem", f"There is no problem {slug!r}.", ("/", "All problems"))
    db_url, viewer = config(request).db_url, session_user(request)
    boards = [render.track_views(b, db_url) for b in leaderboard.boards(slug, db_url=db_url)]
    sol_boards = [render.track_views(b, db_url) for b in leaderboard.boards(slug, db_url=db_url, by="sol")]
    recent = []
    for s in storage.list_submissions(problem=slug, limit=4 * render.RECENT, db_url=db_url):
        found = verdicts.flags(s.submission_id, db_url)
        if found and verdicts.may_see(viewer, s.user, found["public"]):
            recent.append(s)
    entries = [e.submission_id for views in boards + sol_boards for _, b in views for e in b.entries]
    html = render.problem_page(
        request.app.state.env,
        problem,
        boards,
        recent[: render.RECENT],
        sol_boards,
        template="problem_page.html",
        **_common(request, viewer),
        doubts=_doubts(entries, db_url),
    )
    return HTMLResponse(html)


@router.get("/submissions/{submission_id}.html")
def submission_page(request: Request, submission_id: str):
    db_url, viewer = config(request).db_url, session_user(request)
    stored = verdicts.visible(viewer, submission_id, db_url)
    if stored is None:
        return message(request, 404, "Not found", f"There is no submission {submission_id} you may see.")
    found = verdicts.flags(submission_id, db_url) or {}
    try:
        problem = load_problem(stored.verdict.problem)
    except SpecError:
        problem = None
    html = render.submission_page(
        request.app.state.env,
        stored,
        problem,
        template="verdict.html",
        **_common(request, viewer),
        doubts={submission_id: timing.doubts(stored.verdict)},
        public=found.get("public", False),
        hidden_reason=found.get("hidden_reason"),
        owner=viewer is not None and (viewer.name == stored.verdict.user or viewer.is_admin),
    )
    return HTMLResponse(html)


@router.get("/submissions/{submission_id}/signed.json")
def signed_file(request: Request, submission_id: str):
    db_url = config(request).db_url
    if verdicts.visible(session_user(request), submission_id, db_url) is None:
        return message(request, 404, "Not found", f"There is no submission {submission_id} you may see.")
    document = verdicts.signed(submission_id, request.app.state.judge, db_url)
    from fastapi.responses import JSONResponse

    disposition = f'attachment; filename="verdict-{display.safe_filename(submission_id, "verdict")}.json"'
    return JSONResponse(document, headers={"Content-Disposition": disposition})


@router.post("/submissions/{submission_id}/public")
def post_public(request: Request, submission_id: str, csrf: str = Form(""), public: str = Form("no")):
    refused = _csrf(request, csrf)
    if refused:
        return refused
    user, db_url = session_user(request), config(request).db_url
    found = verdicts.flags(submission_id, db_url)
    if user is None or found is None or not (user.is_admin or user.name == found["user"]):
        return message(request, 404, "Not found", f"There is no submission {submission_id} of yours.")
    verdicts.set_public(submission_id, public == "yes", db_url)
    return RedirectResponse(f"/submissions/{submission_id}.html", status_code=303)


@router.post("/submissions/{submission_id}/hide")
def post_hide(request: Request, submission_id: str, csrf: str = Form(""), reason: str = Form("")):
    refused = _csrf(request, csrf)
    if refused:
        return refused
    user, db_url = session_user(request), config(request).db_url
    if user is None or not user.is_admin:
        return message(request, 403, "Admins only", "Only an admin hides submissions from the leaderboards.")
    verdicts.set_hidden(submission_id, reason.strip()[:2000] or None, db_url)
    return RedirectResponse(f"/submissions/{submission_id}.html", status_code=303)


# --- submitting and following a job ----------------------------------------------------------------------------


def _submit_form(request: Request, problem, user: User, track: str, **context):
    tracks = submitting.runnable_tracks(config(request))
    track = track if track in tracks else tracks[0]
    context.setdefault("source", starter.starter(problem, track))
    context.setdefault("mode", "submit")
    return page(
        request,
        "submit.html",
        context.pop("status", 200),
        user=user,
        problem=problem,
        signature=problem.prototype(track="cpu" if device(track) == "cpu" else None),
        tracks=tracks,
        track=track,
        error=context.pop("error", ""),
        **context,
    )


@router.get("/problems/{slug}/submit")
def submit_form(request: Request, slug: str, track: str = ""):
    user = session_user(request)
    if user is None:
        return back_to_login(request)
    try:
        problem = load_problem(slug)
    except SpecError:
        return message(request, 404, "No such problem", f"There is no problem {slug!r}.", ("/", "All problems"))
    return _submit_form(request, problem, user, track)


@router.post("/problems/{slug}/submit")
async def submit(
    request: Request,
    slug: str,
    csrf: str = Form(""),
    track: str = Form(""),
    mode: str = Form("submit"),
    source: str = Form(""),
    upload: UploadFile | None = None,
):
    refused = _csrf(request, csrf)
    if refused:
        return refused
    user = session_user(request)
    if user is None:
        return back_to_login(request)
    filename, data = "", source.replace("\r\n", "\n").encode("utf-8", "surrogatepass")
    if upload is not None and upload.filename:
        filename, data = upload.filename, await upload.read(submitting.MAX_SOURCE_BYTES + 1)
    try:
        job = submitting.submit(config(request), user, slug, data, filename, track or None, mode)
    except Refused as error:
        try:
            problem = load_problem(slug)
        except SpecError:
            return message(request, 404, "No such problem", error.message)
        response = _submit_form(
            request, problem, user, track, error=error.message, status=error.status, source=source, mode=mode
        )
        if error.retry_after_s:
            response.headers["Retry-After"] = str(error.retry_after_s)
        return response
    return RedirectResponse(f"/jobs/{job.id}", status_code=303)


@router.get("/jobs/{job_id}")
def job_page(request: Request, job_id: str):
    user, db_url = session_user(request), config(request).db_url
    row = job_queue.row(job_id, db_url)
    if row is None or user is None or not (user.is_admin or user.name == row["user"]):
        return message(request, 404, "Not found", f"There is no job {job_id} of yours.")
    if row["state"] == job_queue.DONE:
        return RedirectResponse(f"/submissions/{job_id}.html", status_code=303)
    return page(request, "job.html", user=user, job=row, ahead=job_queue.ahead(row, db_url))


@router.get("/history")
def history(request: Request):
    user = session_user(request)
    if user is None:
        return back_to_login(request)
    return page(request, "history.html", user=user, jobs=job_queue.history(user.name, config(request).db_url))


# --- accounts --------------------------------------------------------------------------------------------------


def _next(target: str) -> str:
    return target if target.startswith("/") and not target.startswith("//") else "/"


def _logged_in(request: Request, user: User, target: str) -> Response:
    response = RedirectResponse(_next(target), status_code=303)
    token = accounts.start_session(user, config(request).db_url)
    security.set_cookie(request, response, security.SESSION_COOKIE, token, max_age=accounts.SESSION_DAYS * 86400)
    return response


@router.get("/login")
def login_form(request: Request, next: str = "/"):
    return page(request, "login.html", register=False, name="", next=_next(next), error="")


@router.post("/login")
def login(
    request: Request, csrf: str = Form(""), name: str = Form(""), password: str = Form(""), next: str = Form("/")
):
    refused = _csrf(request, csrf)
    if refused:
        return refused
    user = accounts.authenticate(name, password, config(request).db_url)
    if user is None:
        return page(
            request, "login.html", 401, register=False, name=name, next=_next(next), error="Wrong name or password."
        )
    return _logged_in(request, user, next)


@router.get("/register")
def register_form(request: Request):
    if not config(request).registration:
        return message(request, 403, "Registration is closed", "Ask the judge's admins for an account.")
    return page(request, "login.html", register=True, name="", next="/", error="")


@router.post("/register")
def register(
    request: Request, csrf: str = Form(""), name: str = Form(""), password: str = Form(""), next: str = Form("/")
):
    refused = _csrf(request, csrf)
    if refused:
        return refused
    if not config(request).registration:
        return message(request, 403, "Registration is closed", "Ask the judge's admins for an account.")
    try:
        user = accounts.create_user(name, password, db_url=config(request).db_url)
    except AccountError as error:
        return page(request, "login.html", 422, register=True, name=name, next=_next(next), error=str(error))
    return _logged_in(request, user, next)


@router.post("/logout")
def logout(request: Request, csrf: str = Form("")):
    refused = _csrf(request, csrf)
    if refused:
        return refused
    token = request.cookies.get(security.SESSION_COOKIE)
    if token:
        accounts.end_session(token, config(request).db_url)
    response = RedirectResponse("/", status_code=303)
    response.delete_cookie(security.SESSION_COOKIE, path="/")
    return response


def _account(request: Request, user: User, new_token: str = ""):
    tokens = accounts.list_tokens(user, config(request).db_url)
    base = str(request.base_url).rstrip("/")
    return page(request, "account.html", user=user, tokens=tokens, new_token=new_token, base_url=base)


@router.get("/account")
def account(request: Request):
    user = session_user(request)
    return _account(request, user) if user else back_to_login(request)


@router.post("/account/tokens")
def make_token(request: Request, csrf: str = Form(""), label: str = Form("")):
    refused = _csrf(request, csrf)
    if refused:
        return refused
    user = session_user(request)
    if user is None:
        return back_to_login(request)
    response = _account(request, user, accounts.create_token(user, label, config(request).db_url))
    response.headers["Cache-Control"] = "no-store"
    return response


@router.post("/account/tokens/{token_id}/revoke")
def revoke_token(request: Request, token_id: int, csrf: str = Form("")):
    refused = _csrf(request, csrf)
    if refused:
        return refused
    user = session_user(request)
    if user is None:
        return back_to_login(request)
    accounts.revoke_token(user, token_id, config(request).db_url)
    return RedirectResponse("/account", status_code=303)
