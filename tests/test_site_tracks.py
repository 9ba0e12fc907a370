"""Tracks on the site: a problem page's leaderboards (and its recent submissions) can show one track's entries.

A board with entries of more than one track carries a row of track buttons (hidden until tracks.js runs) and one
<tbody data-view> per view: "all", then each track's own board (each user's best in that track, ranked within
it, PyTorch's baseline kept). Checked in the HTML, and where Chromium is installed in a real browser: choosing a
track shows that track's rows and the baseline only; with JavaScript off, the buttons stay hidden and every row of
the all-tracks board shows. The browser test writes build/screenshots/track-filter.png.
"""

from __future__ import annotations

import base64
import dataclasses
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
import static_site
from verdicts import A100, H100, SOURCE, benchmarks, verdict

from grader.records import leaderboard, storage
from grader.site.render import render_site

REPO = Path(__file__).resolve().parents[1]
CHROMIUM = Path("/usr/bin/chromium")
SCREENSHOTS = REPO / "build" / "screenshots"
H100_BOARD = "device-nvidia-h100-80gb-hbm3"
A100_BOARD = "device-nvidia-a100-sxm4-80gb"


def _on(track: str, user: str, medians: list[float], **kwargs):
    return dataclasses.replace(verdict(user, medians, **kwargs), track=track)


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Iterator[dict]:
    folder = tmp_path_factory.mktemp("track-site")
    problems = folder / "problems"  # softmax alone: the page under test
    shutil.copytree(REPO / "problems" / "softmax", problems / "softmax")
    db = f"sqlite:///{folder / 'results.db'}"
    ids = {}
    for key, v in {
        "alice-cuda": _on("cuda", "alice", [98.0, 196.0]),
        "alice-triton": _on("triton", "alice", [110.0, 221.0]),  # slower than her CUDA: not on the all-tracks board
        "bob-triton": _on("triton", "bob", [120.0, 231.0]),
        "carol-cupy": _on("cupy", "carol", [130.0, 250.0]),
        "ref-cuda": _on("cuda", "ref:04_online.cu", [95.0, 188.0]),
        "erin-a100": _on("cuda", "erin", [120.0, 240.0], device=A100),  # the A100 board: one track
    }.items():
        storage.save_verdict(v, SOURCE, db)
        ids[key] = v.submission_id
    storage.save_baseline(
        "softmax", H100, "cuda", benchmarks([140.0, 275.0]), source="torch.softmax(input, dim=1)", db_url=db
    )
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("KERNELJUDGE_PROBLEMS", str(problems))
        out = folder / "out"
        render_site(out, db)
        yield {"out": out, "db": db, "ids": ids, "html": (out / "problems" / "softmax.html").read_text()}


def _block(html: str, anchor: str) -> str:
    """The page from the heading with id `anchor` to the next heading."""
    start = html.index(f'id="{anchor}"')
    return html[start : re.compile(r"<h[23][ >]").search(html, start).start()]


def _view(block: str, view: str) -> str:
    start = block.index(f'<tbody data-view="{view}"')
    return block[start : block.index("</tbody>", start)]


def test_the_filter_is_there_when_a_board_has_more_than_one_track(site):
    h100 = _block(site["html"], H100_BOARD)
    buttons = re.findall(r'<button type="button" data-view="([^"]+)"', h100)
    assert buttons == ["all", "cuda", "triton", "cupy"]
    assert 'class="track-filter"' in h100 and "hidden>" in h100  # shown by tracks.js only
    assert re.findall(r'<tbody data-view="([^"]+)"( hidden)?>', h100) == [
        ("all", ""),
        ("cuda", " hidden"),
        ("triton", " hidden"),
        ("cupy", " hidden"),
    ]
    sol = _block(site["html"], "speed-of-light")
    assert re.findall(r'<button type="button" data-view="([^"]+)"', sol) == ["all", "cuda", "triton", "cupy"]
    assert '<script src="../tracks.js"></script>' in site["html"] and (site["out"] / "tracks.js").is_file()


def test_the_filter_is_absent_when_a_board_has_one_track(site):
    a100 = _block(site["html"], A100_BOARD)
    assert "erin" in a100 and "track-filter" not in a100
    assert re.findall(r"<tbody[^>]*>", a100) == ['<tbody data-view="all">']


def test_each_track_view_is_that_tracks_own_board_with_the_baseline(site):
    """A track's view is leaderboard.boards(track=...), as `grader leaderboard --track` prints it: alice's Triton
    entry is there, ranked first, though her CUDA one is her best on the all-tracks board."""
    h100, ids = _block(site["html"], H100_BOARD), site["ids"]
    everything, triton = _view(h100, "all"), _view(h100, "triton")
    assert ids["alice-cuda"] in everything and ids["alice-triton"] not in everything
    assert re.findall(r'data-track="([^"]+)"', triton) == ["triton", "triton", "cuda"]  # alice, bob, the baseline
    assert ids["alice-triton"] in triton and ids["bob-triton"] in triton and ids["alice-cuda"] not in triton
    assert 'class="baseline"' in triton and 'class="baseline"' in _view(h100, "cupy")
    expected = leaderboard.boards("softmax", H100["name"], site["db"], track="triton")[0]
    assert [e.user for e in expected.entries] == ["alice", "bob", "pytorch"]
    assert re.findall(r'href="../submissions/(\w+)\.html"', triton) == [e.submission_id for e in expected.entries]
    assert re.search(r'<td class="num">1</td>\s*<td><a href="../submissions/' + ids["alice-triton"], triton)


def test_recent_submissions_can_be_filtered_too(site):
    recent = site["html"][site["html"].index('id="submissions"') :]
    assert re.findall(r'<button type="button" data-view="([^"]+)"', recent) == ["all", "cuda", "triton", "cupy"]
    assert recent.count('<tr data-track="triton">') == 2


@pytest.fixture(scope="module")
def served(site):
    with static_site.served(site["out"]) as url:
        yield url


def _shoot(browser, anchor: str, path: Path) -> None:
    """A PNG of the page from the heading with id `anchor` to the end of its board's note or chart."""
    top = browser.evaluate(f"document.getElementById('{anchor}').getBoundingClientRect().top + scrollY - 16")
    bottom = browser.evaluate(f"{_board(anchor)}.getBoundingClientRect().bottom + scrollY + 16")
    clip = {"x": 0, "y": top, "width": 1280, "height": bottom - top, "scale": 1}
    shot = browser.call("Page.captureScreenshot", session=True, format="png", clip=clip, captureBeyondViewport=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(base64.b64decode(shot["data"]))


def _board(anchor: str) -> str:
    """JavaScript for the .tracked block right after the heading with id `anchor`."""
    return f"document.querySelectorAll('#{anchor} ~ .tracked')[0]"


def _rows(anchor: str) -> str:
    """JavaScript for the rows of that block a reader sees: [track, kind, rank, user]."""
    return f"""Array.from({_board(anchor)}.querySelectorAll('tbody tr')).filter(row => row.offsetParent !== null)
      .map(row => [row.dataset.track, row.className, row.cells[0].innerText.trim(), row.cells[1].innerText.trim()])"""


@pytest.mark.skipif(
    not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium (apt-get install -y chromium)"
)
def test_choosing_a_track_in_headless_chromium(site, served, tmp_path):
    from cdp import Browser

    page = served + "problems/softmax.html"
    h100 = _board(H100_BOARD)
    browser = Browser(str(CHROMIUM), tmp_path / "profile")
    try:
        browser.emulate(1280, False)
        browser.open(page)
        failed = [e for e in browser.events if e["method"] in ("Runtime.exceptionThrown", "Network.loadingFailed")]
        assert failed == []
        assert browser.evaluate(f"{h100}.querySelector('.track-filter').hidden") is False
        assert browser.evaluate(f"{_board(A100_BOARD)}.querySelector('.track-filter')") is None
        everything = browser.evaluate(_rows(H100_BOARD))
        assert {track for track, *_ in everything} == {"cuda", "triton", "cupy"}

        browser.evaluate(f"{h100}.querySelector('button[data-view=triton]').click()")
        shown = browser.evaluate(_rows(H100_BOARD))
        assert [(track, kind, rank, user.split()[0]) for track, kind, rank, user in shown] == [
            ("triton", "user", "1", "alice"),
            ("triton", "user", "2", "bob"),
            ("cuda", "baseline", "", "pytorch"),
        ]
        assert browser.evaluate(f"{h100}.querySelector('button[aria-pressed=true]').dataset.view") == "triton"
        # each board keeps its own choice: the speed-of-light board still shows every track
        assert {track for track, *_ in browser.evaluate(_rows("speed-of-light"))} == {"cuda", "triton", "cupy"}
        _shoot(browser, H100_BOARD, SCREENSHOTS / "track-filter.png")

        browser.evaluate(f"{h100}.querySelector('button[data-view=all]').click()")
        assert browser.evaluate(_rows(H100_BOARD)) == everything

        recent = "document.querySelector('#submissions .tracked')"
        browser.evaluate(f"{recent}.querySelector('button[data-view=cupy]').click()")
        visible = f"Array.from({recent}.querySelectorAll('tbody tr')).filter(r => r.offsetParent !== null)"
        assert browser.evaluate(f"{visible}.map(r => r.dataset.track)") == ["cupy"]

        browser.emulate(390, False, True)  # a phone: the buttons wrap, the page does not widen
        browser.open(page)
        assert browser.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
        assert browser.evaluate(f"{h100}.querySelector('.track-filter').offsetParent") is not None

        browser.emulate(1280, False)
        browser.call("Emulation.setScriptExecutionDisabled", session=True, value=True)  # no JavaScript
        browser.open(page)
        assert browser.evaluate(f"{h100}.querySelector('.track-filter').offsetParent") is None
        assert browser.evaluate(_rows(H100_BOARD)) == everything
    finally:
        browser.close()
