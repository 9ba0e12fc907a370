"""The web judge's ASGI app (FastAPI): pages, the API, static files, and the security every answer gets.

    from grader.web.app import create_app
    app = create_app(config.from_settings())       # served by uvicorn in grader/web/server.py

FastAPI (over Starlette) for the typed API with its OpenAPI schema at /openapi.json, form and upload
parsing, and a test client; uvicorn serves it. The app holds no grading: jobs go to the grading_jobs table, and
the embedded worker (grader/web/local_worker.py) or the Celery workers take them from there.
"""

from __future__ import annotations

import socket
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.responses import Response

import grader
from grader.records import storage
from grader.site import render, text
from grader.web import account_pages, api, pages, rendering, security
from grader.web.config import WebConfig

MAX_BODY = 3 << 20  # a form may carry a 1 MiB source twice (the text box and a file), with room for the rest
STATIC = {
    "/style.css": ("text/css", lambda: (render.HERE / "static" / "style.css").read_text() + text.code_css()),
    "/tracks.js": ("text/javascript", lambda: (render.HERE / "static" / "tracks.js").read_text()),
    "/web.css": ("text/css", lambda: (Path(__file__).parent / "static" / "web.css").read_text()),
    "/web.js": ("text/javascript", lambda: (Path(__file__).parent / "static" / "web.js").read_text()),
}


def create_app(config: WebConfig, judge: str | None = None) -> FastAPI:
    """The app for `config`; the database is migrated and the server's secret made here, before any request."""
    storage.engine(config.db_url)
    app = FastAPI(
        title="kerneljudge",
        version=grader.__version__,
        description="An online judge for GPU kernels: submit, follow the job, read (and verify) the verdict.",
        docs_url=None,  # FastAPI's Swagger and ReDoc pages load scripts from a CDN: off, as nothing here is fetched
        redoc_url=None,
    )
    app.state.config = config
    app.state.secret = security.secret(config.data_dir)
    app.state.env = rendering.environment()
    app.state.judge = judge or socket.gethostname()
    app.add_exception_handler(security.CsrfRefused, rendering.csrf_refused)
    app.include_router(api.router)
    app.include_router(pages.router)
    app.include_router(account_pages.router)
    for path, (media_type, read) in STATIC.items():
        body = read()
        app.add_api_route(
            path,
            lambda body=body, media_type=media_type: Response(body, media_type=media_type),
            include_in_schema=False,
        )

    @app.middleware("http")
    async def guard(request: Request, call_next):
        security.browser_id(request)
        return security.finish(request, await call_next(request))

    app.add_middleware(security.BodyLimit, max_bytes=MAX_BODY)
    return app
