"""`grader serve`: uvicorn serving the web judge, and, in the embedded default, its worker as a child process.

The worker (python -m grader.web.local_worker) is started before the server listens and stopped after it
stops; it dies with the server however the server ends (SIGKILL included: the parent-death signal), and a
worker that dies on its own is started again while the server runs. Jobs live in the database, so a restarted
server loses none and grades none twice.
"""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Callable

import uvicorn

from grader import interrupts
from grader.scale import lifetime
from grader.web.app import create_app
from grader.web.config import WebConfig

RESTART_WAIT_S = 2.0


class EmbeddedWorker:
    """The child process that grades the embedded queue, kept running until stop()."""

    def __init__(self, db_url: str | None, judge: str, report: Callable[[str], None]):
        self.command = [sys.executable, "-m", "grader.web.local_worker", "--judge", judge]
        self.command += ["--db", db_url] if db_url else []
        self.report = report
        self.stopping = threading.Event()
        self.process: subprocess.Popen | None = None
        self.keeper = threading.Thread(target=self._keep, daemon=True, name="kerneljudge-embedded-worker")

    def start(self) -> None:
        self.keeper.start()

    def _keep(self) -> None:
        while not self.stopping.is_set():
            with interrupts.deferred():  # a no-op in this thread (Python handles signals in the main one)
                self.process = subprocess.Popen(self.command, preexec_fn=lifetime.die_with_parent)
            code = self.process.wait()
            if not self.stopping.is_set():
                self.report(f"the embedded worker exited ({code}); starting it again")
                self.stopping.wait(RESTART_WAIT_S)

    def stop(self) -> None:
        self.stopping.set()
        if self.process and self.process.poll() is None:
            self.process.terminate()  # it puts its job back in the queue
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def serve(
    config: WebConfig,
    host: str,
    port: int,
    ready: Callable[[str], None],
    report: Callable[[str], None],
    proxy_headers: bool = False,
    judge: str | None = None,
) -> None:
    """Serve until Ctrl-C or SIGTERM; `ready` gets the URL once the server listens."""
    app = create_app(config, judge)
    worker = EmbeddedWorker(config.db_url, app.state.judge, report) if config.queue == "local" else None

    class Server(uvicorn.Server):
        async def startup(self, sockets=None) -> None:
            await super().startup(sockets)
            bound = [s.getsockname() for server in self.servers for s in server.sockets]
            shown = f"[{host}]" if ":" in host else host
            ready(f"http://{shown}:{bound[0][1]}/" if bound else f"http://{shown}:{port}/")

    settings = uvicorn.Config(
        app, host=host, port=port, log_level="warning", proxy_headers=proxy_headers, access_log=False
    )
    if worker:
        worker.start()
    try:
        Server(settings).run()
    finally:
        if worker:
            worker.stop()
