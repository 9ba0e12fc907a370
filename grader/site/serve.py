"""`grader serve --static`'s server: the static site, rendered again whenever the database changed, from a folder
that goes away with the server.

A request first asks the LiveSite whether the database changed (at most once per CHECK_INTERVAL_S, one small
query: the newest stored row), and the site is rendered again before the request is answered, so a submission
made after the server started is there on the next page load. A folder the server made itself is removed when
it stops, on Ctrl-C or SIGTERM alike.
"""

from __future__ import annotations

import functools
import http.server
import shutil
import signal
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

from grader.records import storage
from grader.site.render import render_site

CHECK_INTERVAL_S = 1.0


def database_stamp(db_url: str | None) -> tuple:
    """Changes whenever a submission or a baseline is stored (rows are only ever added)."""
    newest = storage.list_submissions(limit=1, db_url=db_url)
    return (newest[0].id, newest[0].submission_id) if newest else ()


class LiveSite:
    """The rendered site in `folder` (None: a new temporary folder, removed by close()); `report` is told
    of a rendering that failed while serving."""

    def __init__(self, db_url: str | None, folder: Path | None, *, report: Callable[[str], None]):
        self.db_url = db_url
        self.owned = folder is None
        self.folder = folder or Path(tempfile.mkdtemp(prefix="kerneljudge-site-"))
        self.report = report
        self._lock = threading.Lock()
        self._stamp: tuple | None = None
        self._checked = 0.0

    def refresh(self) -> bool:
        """Render the site again if the database changed since the last rendering; True if it did."""
        with self._lock:
            if self._stamp is not None and time.monotonic() - self._checked < CHECK_INTERVAL_S:
                return False
            self._checked = time.monotonic()
            stamp = database_stamp(self.db_url)
            if stamp == self._stamp:
                return False
            render_site(self.folder, self.db_url)
            self._stamp = stamp
            return True

    def close(self) -> None:
        if self.owned:
            shutil.rmtree(self.folder, ignore_errors=True)


class _Handler(http.server.SimpleHTTPRequestHandler):
    site: LiveSite

    def send_head(self):
        try:
            self.site.refresh()
        except Exception as error:  # the database went away: the last rendering is still served
            self.site.report(f"the site was not rendered again: {error}")
        return super().send_head()

    def log_message(self, format, *args):
        pass


def _stop(_signum, _frame):
    raise KeyboardInterrupt


def serve(site: LiveSite, port: int, ready: Callable[[str], None]) -> None:
    """Serve `site` on 127.0.0.1:`port` (0: any free port) until Ctrl-C or SIGTERM; `ready` gets the URL.
    The site's folder is closed (removed, if the site made it) however the server stops."""
    handler = functools.partial(type("Handler", (_Handler,), {"site": site}), directory=str(site.folder))
    previous = signal.signal(signal.SIGTERM, _stop)
    try:
        site.refresh()
        with http.server.ThreadingHTTPServer(("127.0.0.1", port), handler) as server:
            ready(f"http://127.0.0.1:{server.server_port}/")
            try:
                server.serve_forever()
            except KeyboardInterrupt:
                pass
    finally:
        signal.signal(signal.SIGTERM, previous)
        site.close()
