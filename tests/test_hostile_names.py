"""User names are anyone's text: one that matplotlib would read as math, or one full of terminal escapes and bidi
overrides, must not take the site down or reach a terminal as control characters. `grader render` writes every
page with such a user on the leaderboard, a chart that fails anyway is left out with a warning, and
`grader leaderboard` prints the names without a single control character."""

from __future__ import annotations

import logging
import subprocess
import sys
from pathlib import Path

import pytest
from verdicts import H100, SOURCE, verdict

from grader.cli import output
from grader.records import storage
from grader.site import charts
from grader.site.render import render_site

REPO = Path(__file__).resolve().parents[1]
MATH = "$\\frac{a}{$"
ESCAPES = "eve\x1b[2J\x1b]0;owned\x07\x9b31m\u202etxt.exe\r"
SHOWN = "eve[2J]0;owned31mtxt.exe"  # what is left of ESCAPES once its control characters are gone
GRADER = [sys.executable, "-m", "grader.cli.main"]


@pytest.fixture
def database(tmp_path) -> str:
    db = f"sqlite:///{tmp_path / 'results.db'}"
    for user, medians in ((MATH, [98.0, 196.0]), (ESCAPES, [120.0, 231.0]), ("alice", [140.0, 260.0])):
        storage.save_verdict(verdict(user, medians, device=H100), SOURCE, db)
    return db


def test_a_user_named_like_math_does_not_take_the_site_down(database, tmp_path):
    result = subprocess.run(
        [*GRADER, "render", "--out", str(tmp_path / "site"), "--db", database],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    page = (tmp_path / "site" / "problems" / "softmax.html").read_text()
    assert page.count('class="chart"') == 1, "the leaderboard chart is missing"
    assert "\\frac{a}{" in page, "the name is not drawn as written"
    assert len(list((tmp_path / "site" / "submissions").glob("*.html"))) == 3


def test_a_chart_that_fails_is_left_out_with_a_warning(database, tmp_path, monkeypatch, caplog):
    def broken(*_args, **_kwargs):
        raise ValueError("the renderer broke")

    monkeypatch.setattr("matplotlib.figure.Figure.savefig", broken)
    with caplog.at_level(logging.WARNING, logger=charts.__name__):
        pages = render_site(tmp_path / "site", database)
    assert pages, "no page was written"
    assert 'class="chart"' not in (tmp_path / "site" / "problems" / "softmax.html").read_text()
    assert "chart leaderboard_svg left out: ValueError: the renderer broke" in caplog.text


def test_the_terminal_leaderboard_shows_names_without_control_characters(database):
    result = subprocess.run(
        [*GRADER, "leaderboard", "softmax", "--db", database],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        env={"COLUMNS": "200", "PATH": "/usr/bin:/bin"},
    )
    assert result.returncode == 0, result.stderr
    assert not output.UNSAFE.search(result.stdout.replace("\n", "")), repr(result.stdout)
    assert SHOWN in result.stdout and MATH in result.stdout


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("plain text\twith a tab\n", "plain text\twith a tab\n"),
        ("\x1b[31mred\x1b[0m", "[31mred[0m"),
        ("bell\x07 backspace\x08 del\x7f c1\x85\x9b", "bell backspace del c1"),
        ("\u202egnp.exe \u2066isolate\u2069 \u200fmark", "gnp.exe isolate mark"),
        ("naïve ü 日本", "naïve ü 日本"),
    ],
)
def test_terminal_safe_drops_only_what_a_terminal_would_act_on(text, shown):
    assert output.terminal_safe(text) == shown
