"""Who is asking: the FastAPI dependencies that find the user behind a request.

The API takes `Authorization: Bearer <token>` (an API token); making a token takes HTTP Basic (name and
password). Pages take the session cookie. A GET of the API also takes the session cookie, so the live-status
script of a page can poll its job; nothing that changes state is done for a cookie without a form's CSRF token.
"""

from __future__ import annotations

import base64
import binascii

from fastapi import HTTPException, Request

from grader.web import accounts, security
from grader.web.accounts import User
from grader.web.config import WebConfig


def config(request: Request) -> WebConfig:
    return request.app.state.config


def session_user(request: Request) -> User | None:
    token = request.cookies.get(security.SESSION_COOKIE)
    return accounts.session_user(token, config(request).db_url) if token else None


def bearer_user(request: Request) -> User | None:
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    user = accounts.token_user(token.strip(), config(request).db_url)
    if user is None:
        raise HTTPException(401, "this API token is unknown or revoked", headers={"WWW-Authenticate": "Bearer"})
    return user


def api_user(request: Request) -> User:
    """The token's user; 401 without one."""
    user = bearer_user(request)
    if user is None:
        raise HTTPException(
            401, "send an API token: Authorization: Bearer <token>", headers={"WWW-Authenticate": "Bearer"}
        )
    return user


def reader(request: Request) -> User | None:
    """Whoever reads: a token's user, else the session's, else nobody (public reads only)."""
    return bearer_user(request) or (session_user(request) if request.method == "GET" else None)


def basic_user(request: Request) -> User:
    """The user of HTTP Basic credentials (name and password); 401 otherwise."""
    scheme, _, encoded = request.headers.get("authorization", "").partition(" ")
    refuse = HTTPException(401, "send your name and password (HTTP Basic)", headers={"WWW-Authenticate": "Basic"})
    if scheme.lower() != "basic":
        raise refuse
    try:
        name, _, password = base64.b64decode(encoded.strip(), validate=True).decode().partition(":")
    except (binascii.Error, UnicodeDecodeError):
        raise refuse
    user = accounts.authenticate(name, password, config(request).db_url)
    if user is None:
        raise refuse
    return user
