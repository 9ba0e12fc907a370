"""The site rendered from a fixture database, checked as files and then as pages in headless Chromium.

The fixture holds hand-made CUDA-track verdicts (users, reference solutions, the PyTorch baseline, failures) and
the CPU-track softmax solutions in solutions/softmax/*.cpp, graded for real. The browser test writes
screenshots of each page kind (light, dark, phone) under build/screenshots/ and prints the folder.
"""

from __future__ import annotations

import re
import urllib.request
from pathlib import Path
from urllib.parse import urldefrag

import pytest
import static_site
from verdicts import A100, H100, SOURCE, benchmarks, verdict

from grader.judge import pipeline
from grader.problems import order
from grader.problems.catalog import list_slugs, load_problem, scan
from grader.records import leaderboard, storage
from grader.site.render import render_site
from grader.verdict.status import Status

REPO = Path(__file__).resolve().parents[1]
CHROMIUM = Path("/usr/bin/chromium")
SCREENSHOTS = REPO / "build" / "screenshots"
VIEWS = {"light": (1280, False, False), "dark": (1280, True, False), "phone": (390, False, True)}


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> dict:
    folder = tmp_path_factory.mktemp("site")
    db = f"sqlite:///{folder / 'results.db'}"
    best = verdict("alice", [98.0, 196.0])
    for v in [
        verdict("alice", [140.0, 260.0]),
        best,
        verdict("bob", [120.0, 231.0]),
        verdict("ref:04_online.cu", [95.0, 188.0]),
        verdict("ref:01_naive.cu", [2900.0, 7400.0]),
        verdict(
            "carol",
            [],
            status=Status.WRONG_ANSWER,
            message="test primes (M=37, N=1013): output: first bad element at index 17: got 0.5, expected 0.00102",
        ),
        verdict(
            "dave",
            [],
            status=Status.COMPILE_ERROR,
            message='solve.cu(12): error: expected a ";"\n'
            "      for (int j = 0; j < N; j++\n                                ^\n1 error detected",
        ),
        verdict("erin", [120.0, 240.0], device=A100),
    ]:
        storage.save_verdict(v, SOURCE, db)
    storage.save_baseline(
        "softmax", H100, "cuda", benchmarks([140.0, 275.0]), source="torch.softmax(input, dim=1)", db_url=db
    )
    softmax = load_problem("softmax")
    graded = []
    for path in sorted((REPO / "solutions" / "softmax").glob("*.cpp")):
        graded.append(
            pipeline.grade(softmax, path.read_bytes(), path.name, track="cpu", mode="submit", user=f"ref:{path.name}")
        )
        storage.save_verdict(graded[-1], path.read_text(), db)
    out = folder / "out"
    pages = render_site(out, db)
    return {"out": out, "db": db, "pages": pages, "submission": best.submission_id, "graded": graded}


def test_every_page_is_written(site):
    out = site["out"]
    written = {p.relative_to(out).as_posix() for p in site["pages"]}
    assert "index.html" in written and (out / "style.css").is_file()
    assert {f"problems/{slug}.html" for slug in list_slugs()} <= written
    for s in storage.list_submissions(db_url=site["db"]):
        assert f"submissions/{s.submission_id}.html" in written
    for path in site["pages"]:
        html = path.read_text()
        assert not re.search(r'(?:src|href)="(?:https?:)?//', html), f"{path} refers to the network"


def test_problem_page_has_mathml_leaderboards_and_chart(site):
    html = (site["out"] / "problems" / "softmax.html").read_text()
    statement = html[html.index('id="statement"') : html.index('id="spec"')]
    assert statement.count("<math") > 5 and "$" not in statement and 'class="tex"' not in statement
    assert html.count('class="chart"') == len(leaderboard.boards("softmax", db_url=site["db"])) >= 2
    assert "NVIDIA H100 80GB HBM3" in html and "baseline" in html and "reference" in html
    assert [v.status for v in site["graded"]] == [Status.ACCEPTED] * len(site["graded"])


def test_submission_page_shows_verdict_benchmarks_and_source(site):
    html = (site["out"] / "submissions" / f"{site['submission']}.html").read_text()
    assert "accepted" in html and "square_8k" in html and "GB/s" in html and "peak BW" in html and "peak FP32" in html
    assert 'class="chart"' in html and 'class="highlight"' in html and "__shfl_xor_sync" in html


@pytest.fixture(scope="module")
def served(site):
    with static_site.served(site["out"]) as url:
        yield url


def _problems(browser, base: str) -> list[str]:
    """Console errors, uncaught exceptions, failed or off-site requests seen since the last navigation."""
    found = []
    for event in browser.events:
        method, params = event["method"], event.get("params", {})
        if method == "Runtime.consoleAPICalled" and params["type"] in ("error", "assert"):
            found.append(f"console {params['type']}: {params['args']}")
        elif method == "Runtime.exceptionThrown":
            found.append(f"exception: {params['exceptionDetails']}")
        elif method == "Log.entryAdded" and params["entry"]["level"] == "error":
            found.append(f"log: {params['entry']['text']} {params['entry'].get('url', '')}")
        elif method == "Network.loadingFailed":
            found.append(f"request failed: {params.get('errorText')}")
        elif method == "Network.responseReceived" and params["response"]["status"] >= 400:
            found.append(f"HTTP {params['response']['status']}: {params['response']['url']}")
        elif method == "Network.requestWillBeSent" and not params["request"]["url"].startswith((base, "data:")):
            found.append(f"off-site request: {params['request']['url']}")
    return found


@pytest.mark.skipif(
    not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium (apt-get install -y chromium)"
)
def test_pages_in_headless_chromium(site, served, tmp_path):
    from cdp import Browser

    pages = sorted(p.relative_to(site["out"]).as_posix() for p in site["pages"])
    shots = {
        "index": "index.html",
        "problem": "problems/softmax.html",
        "submission": f"submissions/{site['submission']}.html",
    }
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    checked_links: dict[str, str] = {}
    browser = Browser(str(CHROMIUM), tmp_path / "profile")
    try:
        for view, (width, dark, mobile) in VIEWS.items():
            browser.emulate(width, dark, mobile)
            for page in pages if view != "dark" else list(shots.values()):
                browser.open(served + page)
                assert _problems(browser, served) == [], page
                assert browser.evaluate("document.documentElement.scrollWidth <= window.innerWidth"), (
                    f"{page} is wider than a {width}px screen"
                )
                background = browser.evaluate("getComputedStyle(document.body).backgroundColor")
                assert background == ("rgb(13, 17, 23)" if dark else "rgb(255, 255, 255)"), page
                if view == "light":
                    _check_links(browser, served, page, checked_links)
                    _check_math(browser, page)
                if view == "light" and page == "index.html":
                    _check_learning_path(browser)
                for kind, shot_page in shots.items():
                    if page == shot_page:
                        browser.screenshot(SCREENSHOTS / f"{kind}-{view}.png")
    finally:
        browser.close()
    assert {f"{k}-{v}.png" for k in shots for v in VIEWS} <= {p.name for p in SCREENSHOTS.glob("*.png")}
    print(f"\nscreenshots: {SCREENSHOTS}")


def _check_links(browser, base: str, page: str, checked: dict[str, str]) -> None:
    """Every link on the page leads to a page of the site, and its #fragment, if any, to an element there."""
    for href in browser.evaluate("Array.from(document.querySelectorAll('a[href]'), a => a.href)"):
        assert href.startswith(base), f"{page}: link off the site: {href}"
        url, fragment = urldefrag(href)
        if url not in checked:
            with urllib.request.urlopen(url) as response:
                checked[url] = response.read().decode()
        assert not fragment or f'id="{fragment}"' in checked[url], f"{page}: no #{fragment} in {url}"


def _check_learning_path(browser) -> None:
    """The index lists every problem once, in the learning path's order (problems/ORDER), as a reader sees it."""
    shown = browser.evaluate(
        "Array.from(document.querySelectorAll('h2 a[href^=\"problems/\"]'), a => a.getAttribute('href'))"
    )
    problems, _ = scan()
    assert [h.removeprefix("problems/").removesuffix(".html") for h in shown] == [
        p.slug for p in order.ordered(problems)
    ]


def _check_math(browser, page: str) -> None:
    if not page.startswith("problems/"):
        return
    slug = page.removeprefix("problems/").removesuffix(".html")
    if not load_problem(slug).statement_path.is_file():
        return
    assert browser.evaluate("document.querySelectorAll('#statement math').length") > 0, page
    assert (
        browser.evaluate("document.querySelector('#statement math').namespaceURI")
        == "http://www.w3.org/1998/Math/MathML"
    ), page
    text = browser.evaluate("document.getElementById('statement').innerText")
    assert "$$" not in text and "\\frac" not in text, page


def test_each_table_shows_its_times_in_one_unit(tmp_path):
    db = f"sqlite:///{tmp_path / 'units.db'}"
    mixed = verdict("alice", [128.57, 134866.0])  # µs beside ms before: "128.57 µs" over "134.866 ms"
    storage.save_verdict(mixed, SOURCE, db)
    storage.save_verdict(verdict("bob", [90.0, 180.0]), SOURCE, db)
    render_site(tmp_path / "out", db)
    page = (tmp_path / "out" / "submissions" / f"{mixed.submission_id}.html").read_text()
    table = page[page.index('id="benchmarks"') : page.index("<figure>", page.index('id="benchmarks"'))]
    assert "0.129 ms" in table and "134.866 ms" in table and "µs" not in table
    assert f"score {mixed.score_us / 1e3:,.3f} ms" in page and " us" not in page
    board = (tmp_path / "out" / "problems" / "softmax.html").read_text()
    board = board[board.index('class="board"') : board.index("</table>", board.index('class="board"'))]
    units = re.findall(r"\d (µs|ms|s)<", board)
    assert len(units) == 2 and len(set(units)) == 1
