"""Charts for the site as inline SVG, drawn with matplotlib (no pyplot state, no JavaScript).

Text and axes are drawn in `currentColor`, so a chart follows the page's light or dark colours.
"""

from __future__ import annotations

import io
import re

import matplotlib
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

from grader.judge.verdict import BenchmarkResult
from grader.records.leaderboard import Board

INK = "#010203"  # drawn, then replaced by currentColor in the SVG text
KIND_COLOURS = {"user": "#3b82f6", "reference": "#8b5cf6", "baseline": "#f59e0b"}
FLOOR_COLOUR = "#ef4444"
MAX_BARS = 20


def _svg(figure: Figure, key: str, label: str) -> str:
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": key}):
        buffer = io.StringIO()
        figure.savefig(buffer, format="svg", transparent=True, metadata={"Date": None}, bbox_inches="tight")
    svg = buffer.getvalue()
    svg = svg[svg.index("<svg") :].replace(INK, "currentColor")
    svg = re.sub(r"<metadata>.*?</metadata>", "", svg, flags=re.S)
    svg = re.sub(r'<g id="[^"]*"', "<g", svg)  # group ids repeat from chart to chart on one page
    svg = re.sub(r'width="[\d.]+pt" height="[\d.]+pt"', f'class="chart" role="img" aria-label="{label}"', svg, count=1)
    return re.sub(r"font-family: *[^;\"']*", "font-family: inherit", svg)


def _tick(us: float) -> str:
    """1-2-5 ticks in the unit that suits them: 50 µs, 200 µs, 1 ms, 2 s."""
    if us >= 1e6:
        return f"{us / 1e6:g} s"
    return f"{us / 1e3:g} ms" if us >= 1e3 else f"{us:g} µs"


def _figure(rows: int) -> tuple[Figure, Axes]:
    """A figure whose bars keep one thickness however many rows there are, room left for labels and legend."""
    height = 0.95 + 0.36 * rows
    figure = Figure(figsize=(8, height))
    figure.subplots_adjust(bottom=0.6 / height, top=1 - 0.3 / height)
    axes = figure.add_subplot()
    axes.set_xscale("log")
    axes.set_ylim(rows - 0.5, -0.5)  # first row on top; fixes the y range before the bars
    axes.xaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
    axes.xaxis.set_major_formatter(FuncFormatter(lambda us, _position: _tick(us)))
    axes.xaxis.set_minor_locator(LogLocator(subs="all"))
    axes.xaxis.set_minor_formatter(NullFormatter())
    axes.tick_params(which="both", colors=INK, labelcolor=INK, labelsize=11)
    for side, spine in axes.spines.items():
        spine.set_color(INK)
        spine.set_visible(side in ("left", "bottom"))
    axes.grid(axis="x", which="major", color=INK, alpha=0.15)
    return figure, axes


def _legend(axes) -> None:
    """Above the plot, right-aligned, where it cannot cover a bar."""
    axes.legend(loc="lower right", bbox_to_anchor=(1, 1), fontsize=11, frameon=False, labelcolor=INK, borderaxespad=0.2)


def leaderboard_svg(board: Board) -> str:
    """The board's scores as bars on a log axis, against the physical floor of the score."""
    entries = board.entries[:MAX_BARS]
    figure, axes = _figure(len(entries))
    labels = [f"{e.rank}. {e.user}" if e.rank else e.user for e in entries]
    axes.barh(labels, [e.score_us for e in entries], color=[KIND_COLOURS[e.kind] for e in entries], height=0.7)
    low = min([e.score_us for e in entries] + ([board.floor_us] if board.floor_us else []))
    axes.set_xlim(low / 2, max(e.score_us for e in entries) * 2)
    if board.floor_us:
        axes.axvline(
            board.floor_us,
            color=FLOOR_COLOUR,
            linestyle="--",
            linewidth=1.5,
            label=f"physical floor {board.floor_us:,.2f} µs",
        )
        _legend(axes)
    axes.set_xlabel("score: geometric mean of benchmark medians (log scale; lower is better)", color=INK, fontsize=11)
    return _svg(figure, f"board-{board.problem}-{board.device}", f"leaderboard of {board.problem} on {board.device}")


def benchmarks_svg(benchmarks: list[BenchmarkResult], key: str) -> str:
    """Each benchmark's median with its interquartile range, and its physical floor as a tick."""
    figure, axes = _figure(len(benchmarks))
    names = [b.name for b in benchmarks]
    medians = [b.median_us for b in benchmarks]
    errors = [
        [max(b.median_us - b.spread.get("q1_us", b.median_us), 0) for b in benchmarks],
        [max(b.spread.get("q3_us", b.median_us) - b.median_us, 0) for b in benchmarks],
    ]
    axes.barh(names, medians, xerr=errors, color=KIND_COLOURS["user"], height=0.6, ecolor=INK, capsize=3)
    floors = [b.floor_us for b in benchmarks]
    if any(floors):
        axes.scatter(floors, names, marker="|", s=300, color=FLOOR_COLOUR, label="physical floor", zorder=3)
        _legend(axes)
    positive = [v for v in medians + floors if v > 0]
    axes.set_xlim(min(positive) / 2, max(positive) * 2)
    axes.set_xlabel("median time (log scale); whiskers from first to third quartile", color=INK, fontsize=11)
    return _svg(figure, f"bench-{key}", "benchmark medians against the physical floor")
