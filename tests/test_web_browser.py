"""The web judge in a real browser (Debian's headless Chromium, driven through tests/cdp.py) against the embedded
default (`grader serve`: SQLite and its local worker): register, submit a correct CPU solution through the form,
watch the job's state change live, land on its verdict, accepted, and find it on the leaderboard; submit a wrong
one and read the failing test's message. Screenshots of the pages go to build/screenshots/web-*.png."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from web_helpers import CORRECT, PROBLEM, WRONG, Server, register_in_browser, submit_in_browser, write_mini_problem

pytestmark = pytest.mark.slow  # two gradings through a real server

REPO = Path(__file__).resolve().parents[1]
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
SCREENSHOTS = REPO / "build" / "screenshots"


@pytest.fixture
def server(tmp_path):
    if not Path(CHROMIUM).exists():
        pytest.skip("Debian's chromium is not installed (bash .ci/browser-setup.sh)")
    write_mini_problem(tmp_path / "problems")
    judge = Server(tmp_path)
    judge.start()
    yield judge
    judge.stop()


def test_register_submit_watch_and_rank_in_a_browser(server, tmp_path):
    from cdp import Browser

    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    browser = Browser(CHROMIUM, tmp_path / "profile", timeout_s=60)
    try:
        browser.emulate(1280, dark=False)
        register_in_browser(browser, server.url, "ada.lovelace", "analytical-engine")
        assert "ada.lovelace" in browser.evaluate("document.querySelector('nav.account').innerText")

        states, verdict_page = submit_in_browser(browser, server.url, PROBLEM, "cpu", CORRECT.read_text())
        assert states and states[0] in ("queued", "running"), states
        assert set(states) <= {"queued", "running"} and len(states) >= 1
        assert browser.evaluate("document.querySelector('h1 .status').textContent") == "accepted"
        assert "Private" in browser.evaluate("document.getElementById('controls').innerText")
        browser.screenshot(SCREENSHOTS / "web-verdict-accepted.png")

        browser.open(f"{server.url}problems/{PROBLEM}.html")
        board = browser.evaluate("document.querySelector('table.board').innerText")
        assert "ada.lovelace" in board, board
        assert browser.evaluate("document.querySelector('table.board tbody tr td').textContent.trim()") == "1"
        browser.screenshot(SCREENSHOTS / "web-problem.png")

        _, wrong_page = submit_in_browser(browser, server.url, PROBLEM, "cpu", WRONG, mode="test")
        assert wrong_page != verdict_page
        assert browser.evaluate("document.querySelector('h1 .status').textContent") == "wrong answer"
        tests = browser.evaluate("document.getElementById('tests').innerText")
        assert "first bad element" in tests or "expected" in tests, tests
        message = browser.evaluate("document.querySelector('pre.message').textContent")
        assert "block_plus_one" in message or "prime" in message or "one_element" in message, message
        browser.screenshot(SCREENSHOTS / "web-verdict-wrong.png")

        browser.open(f"{server.url}history")
        history = browser.evaluate("document.getElementById('history').innerText")
        assert "accepted" in history and "wrong answer" in history
    finally:
        browser.close()
