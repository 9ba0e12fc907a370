"""What keeps the web judge's browser side honest: the server's secret, CSRF tokens, cookie flags and the
headers every answer carries.

CSRF: every browser gets a random `kj_browser` cookie (HttpOnly, SameSite=Lax) the first time it asks for a page;
each form carries HMAC-SHA256(server secret, that cookie) and a form post is refused (403) unless the two match,
so another site can neither read nor forge the token. A post whose Origin header names another host is refused
too. The API takes no cookies for anything that changes state (bearer tokens only), so it needs no CSRF token.

Cookies are HttpOnly and SameSite=Lax; Secure when the request came over https (behind a proxy that says so:
`grader serve --proxy-headers`) or when KERNELJUDGE_WEB_SECURE_COOKIES=always.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from pathlib import Path

from starlette.requests import Request
from starlette.responses import Response

from grader import settings

BROWSER_COOKIE = "kj_browser"
SESSION_COOKIE = "kj_session"
HEADERS = {
    "Content-Security-Policy": (
        "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
        "object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'"
    ),
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",
    "Cross-Origin-Opener-Policy": "same-origin",
}


class CsrfRefused(Exception):
    """A form post without the right CSRF token, or from another origin."""


def secret(data_dir: Path) -> bytes:
    """The server's secret (32 random bytes in web/secret under the data folder, 0600, made on first use)."""
    path = data_dir / "web" / "secret"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            pass
        else:
            with os.fdopen(fd, "wb") as out:
                out.write(secrets.token_bytes(32))
    return path.read_bytes()


def browser_id(request: Request) -> str:
    """This browser's id: its cookie, or a new one the answer will set (security.set_cookies)."""
    known = getattr(request.state, "browser", None)
    if known:
        return known
    found = request.cookies.get(BROWSER_COOKIE, "")
    request.state.browser = found if 20 <= len(found) <= 100 else secrets.token_urlsafe(24)
    return request.state.browser


def csrf_token(request: Request, key: bytes) -> str:
    return hmac.new(key, b"csrf:" + browser_id(request).encode(), hashlib.sha256).hexdigest()


def check_csrf(request: Request, key: bytes, given: str | None) -> None:
    origin = request.headers.get("origin")
    if origin and origin != "null" and origin.split("://", 1)[-1] != request.headers.get("host", ""):
        raise CsrfRefused(f"a form posted from another site ({origin})")
    if BROWSER_COOKIE not in request.cookies:
        raise CsrfRefused("this browser sent no cookie: allow cookies for this site and reload the form")
    if not given or not hmac.compare_digest(given, csrf_token(request, key)):
        raise CsrfRefused("the form is stale or was not made by this site: reload it and try again")


def secure(request: Request) -> bool:
    chosen = settings.WEB_SECURE_COOKIES.get()
    return chosen == "always" or (chosen != "never" and request.url.scheme == "https")


def set_cookie(request: Request, response: Response, name: str, value: str, max_age: int | None = None) -> None:
    response.set_cookie(name, value, max_age=max_age, httponly=True, samesite="lax", secure=secure(request), path="/")


def finish(request: Request, response: Response) -> Response:
    """The security headers, and the browser cookie where this answer made one."""
    for name, value in HEADERS.items():
        response.headers.setdefault(name, value)
    made = getattr(request.state, "browser", None)
    if made and request.cookies.get(BROWSER_COOKIE) != made:
        set_cookie(request, response, BROWSER_COOKIE, made, max_age=365 * 86400)
    return response


class BodyLimit:
    """ASGI middleware: a request body over `max_bytes` is refused with 413 before it is read into memory (by its
    Content-Length, or, sent in chunks, as soon as it passes the limit)."""

    def __init__(self, app, max_bytes: int):
        self.app, self.max_bytes = app, max_bytes

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > self.max_bytes):
            return await self._refuse(send)
        seen = 0

        async def counted():
            nonlocal seen
            message = await receive()
            seen += len(message.get("body", b""))
            if seen > self.max_bytes:
                raise _TooLarge
            return message

        try:
            await self.app(scope, counted, send)
        except _TooLarge:
            await self._refuse(send)

    async def _refuse(self, send) -> None:
        body = f'{{"detail": "the request is over {self.max_bytes:,} bytes"}}'.encode()
        await send({"type": "http.response.start", "status": 413, "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": body})


class _TooLarge(Exception):
    pass
