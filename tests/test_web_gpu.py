"""On a GPU host: a CUDA solution submitted through the web judge's form in headless Chromium is accepted with the
score `grader submit` gives the same file, within the timing noise, and its verdict page is saved as a PNG.

    make test-gpu                                   # with the rest of the GPU tests, or alone:
    KJ_WEB_SCREENSHOTS=docs/screenshots python -m pytest -q -m gpu tests/test_web_gpu.py -s

The screenshot goes to $KJ_WEB_SCREENSHOTS (default build/screenshots/) as web-verdict-cuda.png; on a host without
Chromium the form is used as a browser without JavaScript uses it, and the verdict page is kept as
web-verdict-cuda.html (its stylesheet inlined) to be shot elsewhere. Both gradings
use the sandbox $KERNELJUDGE_SANDBOX names (default: local, as the other web tests)."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest
from web_helpers import REPO, Server, grader_command, register_in_browser, submit_in_browser

pytestmark = [pytest.mark.gpu, pytest.mark.slow]

SOLUTION = REPO / "solutions" / "vector-add" / "03_float4_chunks.cu"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
NOISE = 0.10  # a memory-bound kernel's score varies by a few percent between runs on an H100


def _submit_in_chromium(base: str, shots: Path, tmp_path: Path) -> str:
    from cdp import Browser

    browser = Browser(CHROMIUM, tmp_path / "profile", timeout_s=120)
    try:
        browser.emulate(1280, dark=False)
        register_in_browser(browser, base, "h100-check", "password-123")
        states, page = submit_in_browser(browser, base, "vector-add", "cuda", SOLUTION.read_text())
        assert browser.evaluate("document.querySelector('h1 .status').textContent") == "accepted", states
        browser.screenshot(shots / "web-verdict-cuda.png")
    finally:
        browser.close()
    return page.removeprefix("/submissions/").removesuffix(".html")


def _submit_without_javascript(base: str, source: str, shots: Path) -> str:
    """The form as a browser without JavaScript uses it (a GPU host may have no Chromium): register, post the
    submit form with its CSRF token, follow the job page's redirects to the verdict page, and keep that page's HTML
    (its stylesheet inlined) for a screenshot elsewhere. The submission's id."""
    import re

    import httpx

    def token(page: httpx.Response) -> str:
        found = re.search(r'name="csrf" value="([^"]+)"', page.text)
        assert found, page.text[:500]
        return found.group(1)

    with httpx.Client(base_url=base, follow_redirects=True, timeout=60) as client:
        page = client.get("/register")
        client.post(
            "/register", data={"csrf": token(page), "name": "gpu-check", "password": "password-123", "next": "/"}
        )
        page = client.get("/problems/vector-add/submit", params={"track": "cuda"})
        job = client.post(
            "/problems/vector-add/submit",
            data={"csrf": token(page), "track": "cuda", "mode": "submit", "source": source},
        )
        assert job.url.path.startswith(("/jobs/", "/submissions/")), job.text[:500]
        verdict = job
        deadline = time.monotonic() + 900
        while not verdict.url.path.startswith("/submissions/") and time.monotonic() < deadline:
            time.sleep(0.5)
            verdict = client.get(job.url.path)
        assert verdict.url.path.startswith("/submissions/"), verdict.text[:500]
        html = verdict.text
        for sheet in re.findall(r'<link rel="stylesheet" href="([^"]+)"[^>]*>', html):
            css = client.get(sheet).text
            html = re.sub(
                rf'<link rel="stylesheet" href="{re.escape(sheet)}"[^>]*>',
                lambda _, css=css: f"<style>{css}</style>",
                html,
            )
    (shots / "web-verdict-cuda.html").write_text(html)
    assert re.search(r'class="status[^"]*"[^>]*>\s*accepted', html), html[:2000]
    return verdict.url.path.removeprefix("/submissions/").removesuffix(".html")


def test_a_cuda_submission_through_the_form_scores_as_grader_submit(tmp_path):
    shots = Path(os.environ.get("KJ_WEB_SCREENSHOTS") or REPO / "build" / "screenshots")
    shots.mkdir(parents=True, exist_ok=True)
    sandbox = {"KERNELJUDGE_SANDBOX": os.environ.get("KERNELJUDGE_SANDBOX", "local")}
    server = Server(tmp_path, extra_env={**sandbox, "KERNELJUDGE_PROBLEMS": str(REPO / "problems")})
    server.start()
    try:
        if Path(CHROMIUM).exists():
            job_id = _submit_in_chromium(server.url, shots, tmp_path)
        else:
            job_id = _submit_without_javascript(server.url, SOLUTION.read_text(), shots)
    finally:
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
    print(f"verdict page: {shots}")
    assert abs(web.verdict.score_us - cli_score) <= NOISE * cli_score
