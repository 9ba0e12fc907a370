"""Shared by the web judge's tests: a small vector-add problem, `grader serve` as a real process on an ephemeral
port with its own database and data folder, and API calls with tokens (standard library HTTP only)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
PROBLEM = "vector-add-mini"
CORRECT = REPO / "solutions" / "vector-add" / "01_naive.cpp"
WRONG = """// adds A to itself: every test but the smallest ones fails
void solve(const float* A, const float* B, float* C, int N) {
    for (int i = 0; i < N; ++i) C[i] = A[i] + A[i];
}
"""
STARTUP_S = 120


def write_mini_problem(root: Path) -> None:
    """root/vector-add-mini: the real vector-add's checks on three small tests and one small CPU benchmark."""
    spec = yaml.safe_load((REPO / "problems" / "vector-add" / "problem.yaml").read_text())
    spec["tests"] = [
        {"name": "one_element", "sizes": {"N": 1}},
        {"name": "block_plus_one", "sizes": {"N": 1025}},
        {"name": "prime", "sizes": {"N": 100003}},
    ]
    spec["benchmarks"] = {"cpu": [{"name": "small", "sizes": {"N": 1 << 16}}]}
    spec["time_limit_s"] = 30
    folder = root / PROBLEM
    folder.mkdir(parents=True)
    (folder / "problem.yaml").write_text(yaml.safe_dump(spec))
    for name in ("reference.py", "statement.md"):
        (folder / name).write_text((REPO / "problems" / "vector-add" / name).read_text())


def variant(n: int) -> str:
    """The correct CPU solution, made a distinct source by a comment (not a duplicate of another)."""
    return f"// variant {n}\n" + CORRECT.read_text()


class Server:
    """`grader serve` in its own process group: start(), kill() (SIGKILL, worker and all), stop() (SIGTERM)."""

    def __init__(self, folder: Path, db_url: str | None = None, extra_env: dict | None = None, queue: str = "local"):
        self.folder, self.queue = folder, queue
        self.db_url = db_url or f"sqlite:///{folder / 'judge.db'}"
        self.env = {
            **os.environ,
            "KERNELJUDGE_DATA": str(folder / "data"),
            "KERNELJUDGE_CACHE": str(folder / "cache"),
            "KERNELJUDGE_PROBLEMS": str(folder / "problems"),
            "KERNELJUDGE_SANDBOX": "local",
            "PYTHONPATH": os.pathsep.join([str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])]),
            "COLUMNS": "200",
            **(extra_env or {}),
        }
        self.process: subprocess.Popen | None = None
        self.url = ""
        self.starts = 0

    @property
    def log_path(self) -> Path:
        return self.folder / f"serve-{self.starts}.log"

    def start(self) -> str:
        self.starts += 1
        log = self.log_path.open("w")
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "grader.cli.main",
                "serve",
                "--port",
                "0",
                "--db",
                self.db_url,
                "--queue",
                self.queue,
            ],
            cwd=REPO,
            env=self.env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        deadline = time.monotonic() + STARTUP_S
        while time.monotonic() < deadline:
            found = re.search(r"serving (http://127\.0\.0\.1:\d+/)", self.log_path.read_text())
            if found:
                self.url = found.group(1)
                return self.url
            assert self.process.poll() is None, f"grader serve exited:\n{self.log_path.read_text()}"
            time.sleep(0.1)
        raise AssertionError(f"grader serve did not start:\n{self.log_path.read_text()}")

    def logs(self) -> str:
        return "".join((self.folder / f"serve-{n}.log").read_text() for n in range(1, self.starts + 1))

    def kill(self) -> None:
        assert self.process is not None
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(30)

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(60)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(30)


def call(url: str, method: str = "GET", body: dict | None = None, token: str | None = None, auth=None):
    """(status, headers, JSON answer) of one request."""
    headers = {"Accept": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    if auth:
        import base64

        headers["Authorization"] = "Basic " + base64.b64encode(f"{auth[0]}:{auth[1]}".encode()).decode()
    data = None
    if body is not None:
        data, headers["Content-Type"] = json.dumps(body).encode(), "application/json"
    request = urllib.request.Request(url, data=data, headers=headers, method=method)
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, response.headers, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as error:
        return error.code, error.headers, json.loads(error.read() or b"null")


def wait_until(check, timeout_s: float, what: str, poll_s: float = 0.25):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(poll_s)
    raise AssertionError(f"timed out after {timeout_s:.0f} s waiting for {what}")


def grader_command(env: dict, *argv: str, stdin: str = "") -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "grader.cli.main", *argv],
        cwd=REPO,
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=300,
    )


def make_user(env: dict, db_url: str, name: str, password: str = "password-123") -> str:
    """A user made with `grader users add` and an API token made for them through the API's HTTP Basic."""
    made = grader_command(env, "users", "add", name, "--db", db_url, stdin=password + "\n")
    assert made.returncode == 0, made.stderr
    return password


# --- the browser (tests/cdp.py) --------------------------------------------------------------------------------


def act(browser, script: str) -> None:
    """Run `script` (a click, a form submit) and wait for the page it leads to."""
    browser.events.clear()
    browser.evaluate(script)
    browser.wait_for("Page.loadEventFired")


def fill(browser, field_id: str, value: str) -> None:
    browser.evaluate(f"document.getElementById({json.dumps(field_id)}).value = {json.dumps(value)}")


def register_in_browser(browser, base: str, name: str, password: str) -> None:
    browser.open(base + "register")
    fill(browser, "name", name)
    fill(browser, "password", password)
    act(browser, "document.getElementById('go').click()")
    assert browser.evaluate("location.pathname") == "/", browser.evaluate("document.body.innerText")


def submit_in_browser(browser, base: str, problem: str, track: str, source: str, mode: str = "submit", timeout_s=900):
    """Submit `source` through the form and follow the live job page to the verdict page: (the states the job
    page showed, in order, without repeats; the verdict page's path)."""
    browser.open(f"{base}problems/{problem}/submit?track={track}")
    fill(browser, "source", source)
    browser.evaluate(f"document.querySelector('input[name=mode][value={mode}]').checked = true")
    act(browser, "document.getElementById('submit').click()")
    assert browser.evaluate("location.pathname").startswith("/jobs/"), browser.evaluate("document.body.innerText")
    states: list[str] = []
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            path = browser.evaluate("location.pathname")
            state = browser.evaluate("(document.getElementById('state') || {}).textContent || ''")
        except RuntimeError:  # the page changed under the evaluation
            continue
        if path.startswith("/submissions/") and browser.evaluate("document.readyState") == "complete":
            return states, path
        if state and (not states or states[-1] != state):
            states.append(state)
        time.sleep(0.1)
    raise AssertionError(f"the job page never reached a verdict; states seen: {states}")
