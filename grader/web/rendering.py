"""How the web judge's pages are made: the templates (the site's, with grader/web/templates/ first), what every
page's frame needs (the user, this browser's CSRF token), and the answers every page module shares: a message
page, the CSRF check of a form post (and its refusal), the way to the login page."""

from __future__ import annotations

from pathlib import Path

from fastapi import Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from jinja2 import Environment

import grader
from grader.site import render
from grader.web import display, security
from grader.web.accounts import User
from grader.web.auth import config, session_user

HERE = Path(__file__).resolve().parent


def environment() -> Environment:
    env = render.environment(HERE / "templates", finalize=display.visible)
    env.globals["version"] = grader.__version__
    return env


def common(request: Request, user: User | None) -> dict:
    """What every page's frame needs: the user, this browser's CSRF token, whether registration is open."""
    csrf = security.csrf_token(request, request.app.state.secret)
    return {"user": user, "csrf": csrf, "registration": config(request).registration}


def page(request: Request, template: str, status: int = 200, **context) -> HTMLResponse:
    user = context.pop("user", None) or session_user(request)
    env: Environment = request.app.state.env
    context.setdefault("doubts", {})
    html = env.get_template(template).render(root="/", **common(request, user), **context)
    return HTMLResponse(html, status_code=status)


def message(request: Request, status: int, heading: str, text: str, link: tuple[str, str] | None = None):
    return page(request, "message.html", status, heading=heading, message=text, link=link)


def back_to_login(request: Request) -> RedirectResponse:
    return RedirectResponse(f"/login?next={request.url.path}", status_code=303)


def require_csrf(request: Request, token: str) -> None:
    """A form post goes on only with this browser's CSRF token and from this origin; else security.CsrfRefused,
    which the app answers with `csrf_refused` whatever the page."""
    security.check_csrf(request, request.app.state.secret, token)


def csrf_refused(request: Request, error: Exception) -> Response:
    return message(request, 403, "Form refused", str(error))
