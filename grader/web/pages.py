"""The web judge's pages: the site's problem and submission pages rendered per request (grader/site/render.py's
templates, with this folder's templates first), the submit form, the live job page and the user's history
(accounts: grader/web/account_pages.py).

Every form posts a CSRF token (grader/web/security.py); every page works without JavaScript but the job page's
live status (without it, the page refreshes itself) and the editor's tab key. Another user's private
submission is not found (404), as one that does not exist.
"""

from __future__ import annotations

from fastapi import APIRouter, Form, Request, UploadFile
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse

from grader import tracks as registry  # `tracks` names the runnable ones below
from grader.problems import order, starter
from grader.problems.catalog import load_all, load_problem
from grader.problems.spec import SpecError
from grader.records import leaderboard, storage
from grader.site import render
from grader.tracks import cuda
from grader.verdict import units as timing
from grader.verdict.status import Status
from grader.web import display, job_queue, submitting, verdicts
from grader.web.accounts import User
from grader.web.auth import config, session_user
from grader.web.quotas import Refused
from grader.web.rendering import back_to_login, common, message, page, require_csrf

router = APIRouter(include_in_schema=False)


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
    listed = storage.list_submissions(problem=slug, limit=4 * render.RECENT, db_url=db_url)
    public = verdicts.public_ids([s.submission_id for s in listed], db_url)
    recent = [s for s in listed if verdicts.may_see(viewer, s.user, s.submission_id in public)]
    entries = [e.submission_id for views in boards + sol_boards for _, b in views for e in b.entries]
    html = render.problem_page(
        request.app.state.env,
        problem,
        boards,
        recent[: render.RECENT],
        sol_boards,
        template="problem_page.html",
        **common(request, viewer),
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
        **common(request, viewer),
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
    disposition = f'attachment; filename="verdict-{display.safe_filename(submission_id, "verdict")}.json"'
    return JSONResponse(document, headers={"Content-Disposition": disposition})


@router.post("/submissions/{submission_id}/public")
def post_public(request: Request, submission_id: str, csrf: str = Form(""), public: str = Form("no")):
    require_csrf(request, csrf)
    user, db_url = session_user(request), config(request).db_url
    found = verdicts.flags(submission_id, db_url)
    if user is None or found is None or not (user.is_admin or user.name == found["user"]):
        return message(request, 404, "Not found", f"There is no submission {submission_id} of yours.")
    verdicts.set_public(submission_id, public == "yes", db_url)
    return RedirectResponse(f"/submissions/{submission_id}.html", status_code=303)


@router.post("/submissions/{submission_id}/hide")
def post_hide(request: Request, submission_id: str, csrf: str = Form(""), reason: str = Form("")):
    require_csrf(request, csrf)
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
        signature=problem.prototype(
            track=cuda.NAME if registry.get(track).device.gpu else track
        ),  # the spec's on a GPU
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
    require_csrf(request, csrf)
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
