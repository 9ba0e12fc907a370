"""On a GPU host: a CUDA solution submitted through the web judge's form in headless Chromium is accepted with the
score `grader submit` gives the same file, within the timing noise, and its verdict page is saved as a PNG.

    make test-gpu                                   # with the rest of the GPU tests, or alone:
    KJ_WEB_SCREENSHOTS=docs/screenshots python -m pytest -q -m gpu tests/test_web_gpu.py -s

The screenshot goes to $KJ_WEB_SCREENSHOTS (default build/screenshots/) as web-verdict-cuda.png. Both gradings
use the sandbox $KERNELJUDGE_SANDBOX names (default: local, as the other web tests)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from web_helpers import REPO, Server, grader_command, register_in_browser, submit_in_browser

pytestmark = [pytest.mark.gpu, pytest.mark.slow]

SOLUTION = REPO / "solutions" / "vector-add" / "03_float4_chunks.cu"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
NOISE = 0.10  # a memory-bound kernel's score varies by a few percent between runs on an H100


def test_a_cuda_submission_through_the_form_scores_as_grader_submit(tmp_path):
    if not Path(CHROMIUM).exists():
        pytest.skip("Debian's chromium is not installed (bash .ci/browser-setup.sh)")
    from cdp import Browser

    shots = Path(os.environ.get("KJ_WEB_SCREENSHOTS") or REPO / "build" / "screenshots")
    shots.mkdir(parents=True, exist_ok=True)
    sandbox = {"KERNELJUDGE_SANDBOX": os.environ.get("KERNELJUDGE_SANDBOX", "local")}
    server = Server(tmp_path, extra_env={**sandbox, "KERNELJUDGE_PROBLEMS": str(REPO / "problems")})
    server.start()
    browser = Browser(CHROMIUM, tmp_path / "profile", timeout_s=120)
    try:
        browser.emulate(1280, dark=False)
        register_in_browser(browser, server.url, "h100-check", "password-123")
        states, page = submit_in_browser(browser, server.url, "vector-add", "cuda", SOLUTION.read_text())
        assert browser.evaluate("document.querySelector('h1 .status').textContent") == "accepted", states
        browser.screenshot(shots / "web-verdict-cuda.png")
        job_id = page.removeprefix("/submissions/").removesuffix(".html")
    finally:
        browser.close()
        server.stop()
    from grader.records import storage

    web = storage.load_submission(job_id, server.db_url)
    assert web is not None and web.verdict.track == "cuda" and web.verdict.score_us
    mine = tmp_path / SOLUTION.name  # outside solutions/: not recorded as a reference
    shutil.copy(SOLUTION, mine)
    local = grader_command(
        server.env,
        "submit",
        "vector-add",
        str(mine),
        "--json",
        "--in-process",
        "--db",
        f"sqlite:///{tmp_path / 'cli.db'}",
    )
    assert local.returncode == 0, local.stderr
    cli_score = json.loads(local.stdout)["score_us"]
    print(
        f"\nweb form: {web.verdict.score_us:.2f} us, grader submit: {cli_score:.2f} us on {web.verdict.device.get('name')}"
    )
    print(f"screenshot: {shots / 'web-verdict-cuda.png'}")
    assert abs(web.verdict.score_us - cli_score) <= NOISE * cli_score
