"""`grader serve --static`: a submission stored after the server started is served on the next request, and
the folder the server rendered into is gone once it stops, on SIGTERM as on Ctrl-C.

The server runs as its own process on an ephemeral port, with a temporary database and TMPDIR.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from verdicts import verdict

from grader.records import storage

STARTUP_S = 60


def _line(process: subprocess.Popen, pattern: str) -> re.Match:
    """The first line of the server's stdout that matches `pattern` (it prints its URL once it listens)."""
    deadline = time.monotonic() + STARTUP_S
    assert process.stdout is not None
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line and process.poll() is not None:
            break
        found = re.search(pattern, line)
        if found:
            return found
    pytest.fail(
        f"grader serve said nothing matching {pattern!r}; stderr: {process.stderr.read() if process.stderr else ''}"
    )


def _status(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT])
def test_serve_renders_new_submissions_and_cleans_up(tmp_path, stop):
    db = f"sqlite:///{tmp_path / 'results.db'}"
    storage.save_verdict(verdict("alice", [100.0, 200.0]), "// first", db)
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    env = {**os.environ, "TMPDIR": str(temporary), "COLUMNS": "200", "KERNELJUDGE_DATA": str(tmp_path)}
    server = subprocess.Popen(
        [sys.executable, "-m", "grader.cli.main", "serve", "--static", "--port", "0", "--db", db],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        found = _line(server, r"serving (http://127\.0\.0\.1:\d+/) from (\S+)")
        base, folder = found.group(1), Path(found.group(2))
        assert folder.is_dir() and folder.parent == temporary
        assert _status(base + "index.html") == 200

        later = verdict("bob", [90.0, 180.0])
        storage.save_verdict(later, "// later", db)
        deadline = time.monotonic() + STARTUP_S  # the database is looked at once a second at most
        while _status(f"{base}submissions/{later.submission_id}.html") != 200:
            assert time.monotonic() < deadline, "a submission stored after the start was never served"
            time.sleep(0.2)

        server.send_signal(stop)
        assert server.wait(timeout=STARTUP_S) == 0, server.stderr.read() if server.stderr else ""
        assert not folder.exists() and list(temporary.iterdir()) == []
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
