"""The web judge's account pages: register, log in and out, and the API tokens of /account (made, shown once,
revoked). A new session token at every login; the cookie HttpOnly, SameSite=Lax, Secure over https."""

from __future__ import annotations

import re

from fastapi import APIRouter, Form, Request
from fastapi.responses import RedirectResponse, Response

from grader.web import accounts, security
from grader.web.accounts import AccountError, User
from grader.web.auth import config, session_user
from grader.web.rendering import back_to_login, message, page, require_csrf

router = APIRouter(include_in_schema=False)


SAME_SITE_PATH = re.compile(r"/(?![/\\])[A-Za-z0-9/._~%?=&-]*")


def _next(target: str) -> str:
    """Where to go after logging in: a path of this site, else the front page (never another site's address)."""
    return target if SAME_SITE_PATH.fullmatch(target) else "/"


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
    require_csrf(request, csrf)
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
    require_csrf(request, csrf)
    if not config(request).registration:
        return message(request, 403, "Registration is closed", "Ask the judge's admins for an account.")
    try:
        user = accounts.create_user(name, password, db_url=config(request).db_url)
    except AccountError as error:
        return page(request, "login.html", 422, register=True, name=name, next=_next(next), error=str(error))
    return _logged_in(request, user, next)


@router.post("/logout")
def logout(request: Request, csrf: str = Form("")):
    require_csrf(request, csrf)
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
    require_csrf(request, csrf)
    user = session_user(request)
    if user is None:
        return back_to_login(request)
    response = _account(request, user, accounts.create_token(user, label, config(request).db_url))
    response.headers["Cache-Control"] = "no-store"
    return response


@router.post("/account/tokens/{token_id}/revoke")
def revoke_token(request: Request, token_id: int, csrf: str = Form("")):
    require_csrf(request, csrf)
    user = session_user(request)
    if user is None:
        return back_to_login(request)
    accounts.revoke_token(user, token_id, config(request).db_url)
    return RedirectResponse("/account", status_code=303)
