"""The site's side of profiling: a submission page with its roofline and, where one is stored, the profile's table and
advice; a speed-of-light board across devices; PyTorch's eager time beside its graph time. Checked in the HTML and,
where Chromium is installed, in a real browser, whose screenshots land in build/screenshots/profile-*.png."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
import static_site
from verdicts import A100, H100, SOURCE, benchmarks, verdict

from grader.perf.ceilings import Ceilings
from grader.problems.catalog import load_problem
from grader.profile import session
from grader.records import storage
from grader.site.render import render_site

REPO = Path(__file__).resolve().parents[1]
FIXTURE = REPO / "tests" / "fixtures" / "profile" / "softmax-01_naive-square_8k.csv"
CHROMIUM = Path("/usr/bin/chromium")
SCREENSHOTS = REPO / "build" / "screenshots"


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Iterator[dict]:
    folder = tmp_path_factory.mktemp("profile-site")
    problems = folder / "problems"  # softmax alone: the pages under test, whatever else problems/ holds meanwhile
    shutil.copytree(REPO / "problems" / "softmax", problems / "softmax")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("KERNELJUDGE_PROBLEMS", str(problems))
        yield _render(folder)


def _render(folder: Path) -> dict:
    db = f"sqlite:///{folder / 'results.db'}"
    problem = load_problem("softmax")
    profile = session.from_csv(
        problem,
        session.benchmark(problem, "square_8k"),
        FIXTURE.read_text(),
        Ceilings(3.0e12, 5.1e13, 5.0e13, None, None, "test"),
        device=H100["name"],
        ncu_version="Version 2025.3.1.0",
    )
    profiled = verdict("ref:01_naive.cu", [2900.0, 7400.0])
    profiled.profile = json.loads(profile.model_dump_json())
    plain = verdict("alice", [98.0, 196.0])
    broken = verdict("mallory", [150.0, 300.0])
    broken.profile = {"kernels": "not a list"}  # a stored profile that does not fit the model is not shown
    for v in (profiled, plain, broken, verdict("erin", [120.0, 240.0], device=A100)):
        storage.save_verdict(v, SOURCE, db)
    timed = benchmarks([140.0, 275.0])
    timed[0].eager_us, timed[1].eager_us = 180.0, 330.0
    storage.save_baseline("softmax", H100, "cuda", timed, source="torch.softmax(input, dim=1)", db_url=db)
    out = folder / "out"
    render_site(out, db)
    return {
        "out": out,
        "profiled": profiled.submission_id,
        "plain": plain.submission_id,
        "broken": broken.submission_id,
    }


def _page(site: dict, relative: str) -> str:
    return (site["out"] / relative).read_text()


def test_a_profiled_submission_shows_roofline_profile_table_and_advice(site):
    html = _page(site, f"submissions/{site['profiled']}.html")
    assert 'aria-label="roofline: the device' in html
    assert '<section id="profile">' in html
    assert "<code>softmax_naive</code>" in html
    assert "the grid has 32 blocks for 132 SMs" in html
    assert "long_scoreboard" in html
    assert "Version 2025.3.1.0" in html
    assert '<th class="num">SOL</th>' in html


def test_a_submission_without_a_profile_still_has_its_roofline(site):
    html = _page(site, f"submissions/{site['plain']}.html")
    assert 'aria-label="roofline: the device' in html
    assert 'id="profile"' not in html
    assert 'id="profile"' not in _page(site, f"submissions/{site['broken']}.html")


def test_the_problem_page_ranks_every_device_by_speed_of_light(site):
    html = _page(site, "problems/softmax.html")
    assert 'id="speed-of-light"' in html
    board = html[html.index('id="speed-of-light"') :]
    assert H100["name"] in board and A100["name"] in board
    assert re.search(r"PyTorch: [\d.]+ µs as kernel time \(CUDA-graph replay", html)
    assert "called from Python" in html


def test_the_baseline_page_shows_its_eager_times(site):
    baseline = next(p for p in (site["out"] / "submissions").glob("*.html") if "<dd>pytorch</dd>" in p.read_text())
    assert "eager (Python)" in baseline.read_text()


@pytest.fixture(scope="module")
def served(site):
    with static_site.served(site["out"]) as url:
        yield url


@pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Chromium (.ci/browser-setup.sh installs it)")
def test_the_profiled_page_in_headless_chromium(site, served, tmp_path):
    from cdp import Browser

    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    browser = Browser(str(CHROMIUM), tmp_path / "chromium")
    try:
        for view, (width, dark, mobile) in {"light": (1280, False, False), "dark": (1280, True, False)}.items():
            browser.emulate(width, dark, mobile)
            browser.open(served + f"submissions/{site['profiled']}.html")
            assert browser.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
            assert browser.evaluate("document.querySelectorAll('#roofline svg').length") == 1
            assert browser.evaluate("document.querySelector('#profile table').rows.length") >= 2
            assert "the grid has 32 blocks" in browser.evaluate("document.getElementById('profile').innerText")
            browser.screenshot(SCREENSHOTS / f"profile-submission-{view}.png")
            browser.open(served + "problems/softmax.html")
            browser.screenshot(SCREENSHOTS / f"profile-problem-{view}.png")
    finally:
        browser.close()
    assert (SCREENSHOTS / "profile-submission-light.png").stat().st_size > 10_000
