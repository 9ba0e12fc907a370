"""A small Chrome DevTools Protocol client for the site tests: headless Chromium over --remote-debugging-pipe.

The pipe transport needs no Python package: Chromium reads commands from its fd 3 and writes replies and events
to its fd 4, each message a JSON object ended by a NUL byte.
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import select
import subprocess
import time
from pathlib import Path

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
    "--disable-default-apps",
    "--hide-scrollbars",
    "--mute-audio",
    "--remote-debugging-pipe",
]


def _high(fd: int) -> int:
    """A close-on-exec copy of `fd` numbered 10 or above, so that dup2 onto 3 and 4 cannot clobber it."""
    copy = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
    os.close(fd)
    return copy


class Browser:
    """One headless Chromium with one page, driven through CDP; events are kept in `events` until cleared."""

    def __init__(self, executable: str, user_data_dir: Path, timeout_s: float = 30.0):
        self.timeout_s = timeout_s
        to_chrome_r, to_chrome_w = (_high(fd) for fd in os.pipe())
        from_chrome_r, from_chrome_w = (_high(fd) for fd in os.pipe())

        def wire_pipes():  # in the child, before exec: its fds 3 and 4 become the pipe ends
            os.dup2(to_chrome_r, 3)
            os.dup2(from_chrome_w, 4)

        self.process = subprocess.Popen(
            [executable, *FLAGS, f"--user-data-dir={user_data_dir}", "about:blank"],
            preexec_fn=wire_pipes,
            close_fds=False,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self._write, self._read = to_chrome_w, from_chrome_r
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict] = []
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.call(f"{domain}.enable", session=True)

    def call(self, method: str, session: bool = False, **params) -> dict:
        """Send one command (to the page when `session`) and wait for its reply; events seen meanwhile are kept."""
        self._next_id += 1
        message = {"id": self._next_id, "method": method, "params": params}
        if session:
            message["sessionId"] = self.session
        os.write(self._write, json.dumps(message).encode() + b"\0")
        while True:
            reply = self._receive()
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            if "method" in reply:
                self.events.append(reply)

    def _receive(self) -> dict:
        deadline = time.monotonic() + self.timeout_s
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._read], [], [], left)[0]:
                raise TimeoutError(f"no message from Chromium within {self.timeout_s} s")
            chunk = os.read(self._read, 1 << 16)
            if not chunk:
                raise EOFError("Chromium closed its DevTools pipe")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    def wait_for(self, method: str) -> dict:
        """The first kept event named `method`, waiting for it if it has not come yet."""
        while True:
            for event in self.events:
                if event["method"] == method:
                    return event
            event = self._receive()
            if "method" in event:
                self.events.append(event)

    def open(self, url: str) -> None:
        """Navigate and wait for the load event; `events` then holds what happened on the way."""
        self.events.clear()
        self.call("Page.navigate", session=True, url=url)
        self.wait_for("Page.loadEventFired")

    def evaluate(self, expression: str):
        result = self.call("Runtime.evaluate", session=True, expression=expression, returnByValue=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def emulate(self, width: int, dark: bool, mobile: bool = False) -> None:
        self.call(
            "Emulation.setDeviceMetricsOverride",
            session=True,
            width=width,
            height=900,
            deviceScaleFactor=1,
            mobile=mobile,
        )
        self.call(
            "Emulation.setEmulatedMedia",
            session=True,
            features=[{"name": "prefers-color-scheme", "value": "dark" if dark else "light"}],
        )

    def screenshot(self, path: Path, max_height: int = 12000) -> None:
        """A PNG of the whole page (cut at `max_height` CSS pixels)."""
        size = self.call("Page.getLayoutMetrics", session=True)["cssContentSize"]
        clip = {"x": 0, "y": 0, "width": size["width"], "height": min(size["height"], max_height), "scale": 1}
        shot = self.call("Page.captureScreenshot", session=True, format="png", clip=clip, captureBeyondViewport=True)
        path.write_bytes(base64.b64decode(shot["data"]))

    def close(self) -> None:
        try:
            self.call("Browser.close")
        except (OSError, EOFError, TimeoutError, RuntimeError):
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        os.close(self._write)
        os.close(self._read)
