"""Charts for the site as inline SVG, drawn with matplotlib (no pyplot state, no JavaScript): leaderboards,
benchmark medians, and a submission's roofline (grader/perf/roofline.py's ceilings, recovered from its results).

Text and axes are drawn in `currentColor`, so a chart follows the page's light or dark colours. Labels are
text, never mathtext or TeX (a user named `$\\frac{a}{$` is drawn as written), and a chart that still fails to
draw is left out of its page with a logged warning: one chart never takes a page, or the site, down.
"""

from __future__ import annotations

import functools
import html
import io
import logging
import math
import re
from collections.abc import Callable
from typing import ParamSpec

import matplotlib
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

from grader.perf import roofline
from grader.records.leaderboard import Board
from grader.verdict.model import BenchmarkResult

INK = "#010203"  # drawn, then replaced by currentColor in the SVG text
KIND_COLOURS = {"user": "#3b82f6", "reference": "#8b5cf6", "baseline": "#f59e0b"}
FLOOR_COLOUR = "#ef4444"
ROOF_COLOURS = {"copy": "#10b981", "fp32": "#ef4444", "sgemm": "#8b5cf6"}
MAX_BARS = 20
TICKS_125_DECADES = 3  # a time axis over more decades than this gets one tick a decade
LABEL_CHAR_PT = 6.0  # a roofline label's width per character, 10 pt text
LABEL_LINE_PT = 13.0  # and its height

log = logging.getLogger(__name__)
Args = ParamSpec("Args")


def _or_no_chart(draw: Callable[Args, str]) -> Callable[Args, str]:
    """`draw` with every label plain text; '' and a logged warning where it fails all the same."""

    @functools.wraps(draw)
    def drawn(*args: Args.args, **kwargs: Args.kwargs) -> str:
        try:
            with matplotlib.rc_context({"text.parse_math": False, "text.usetex": False}):  # labels as written
                return draw(*args, **kwargs)
        except Exception as error:  # any failure of matplotlib's: the page goes on without this chart
            log.warning("chart %s left out: %s: %s", draw.__name__, type(error).__name__, error)
            return ""

    return drawn


def _svg(figure: Figure, key: str, label: str) -> str:
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": key}):
        buffer = io.StringIO()
        figure.savefig(buffer, format="svg", transparent=True, metadata={"Date": None}, bbox_inches="tight")
    svg = buffer.getvalue()
    svg = svg[svg.index("<svg") :].replace(INK, "currentColor")
    svg = re.sub(r"<metadata>.*?</metadata>", "", svg, flags=re.S)
    svg = re.sub(r'<g id="[^"]*"', "<g", svg)  # group ids repeat from chart to chart on one page
    named = f'class="chart" role="img" aria-label="{html.escape(label)}"'
    svg = re.sub(r'width="[\d.]+pt" height="[\d.]+pt"', lambda _size: named, svg, count=1)
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
    axes.xaxis.set_major_formatter(FuncFormatter(lambda us, _position: _tick(us)))
    axes.xaxis.set_minor_locator(LogLocator(subs="all"))
    axes.xaxis.set_minor_formatter(NullFormatter())
    axes.tick_params(which="both", colors=INK, labelcolor=INK, labelsize=11)
    for side, spine in axes.spines.items():
        spine.set_color(INK)
        spine.set_visible(side in ("left", "bottom"))
    axes.grid(axis="x", which="major", color=INK, alpha=0.15)
    return figure, axes


def _time_axis(axes: Axes, low_us: float, high_us: float) -> None:
    """The time axis from `low_us` to `high_us`: 1-2-5 ticks over a few decades, one a decade over more (1-2-5
    over five decades wrote "5 µs10 µs20 µs" into one another)."""
    axes.set_xlim(low_us, high_us)
    decades = math.log10(high_us / low_us)
    axes.xaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0) if decades <= TICKS_125_DECADES else (1.0,)))


def _legend(axes) -> None:
    """Above the plot, right-aligned, where it cannot cover a bar."""
    axes.legend(loc="lower right", bbox_to_anchor=(1, 1), fontsize=11, frameon=False, labelcolor=INK, borderaxespad=0.2)


@_or_no_chart
def leaderboard_svg(board: Board) -> str:
    """The board's scores as bars on a log axis, against the physical floor of the score."""
    entries = board.entries[:MAX_BARS]
    figure, axes = _figure(len(entries))
    labels = [f"{e.rank}. {e.user}" if e.rank else e.user for e in entries]
    axes.barh(labels, [e.score_us for e in entries], color=[KIND_COLOURS[e.kind] for e in entries], height=0.7)
    low = min([e.score_us for e in entries] + ([board.floor_us] if board.floor_us else []))
    _time_axis(axes, low / 2, max(e.score_us for e in entries) * 2)
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


@_or_no_chart
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
    _time_axis(axes, min(positive) / 2, max(positive) * 2)
    axes.set_xlabel("median time (log scale); whiskers from first to third quartile", color=INK, fontsize=11)
    return _svg(figure, f"bench-{key}", "benchmark medians against the physical floor")


def label_shifts(points: list[tuple[float, float]], widths: list[float], line: float) -> list[float]:
    """How far down (display units, <= 0) each point's label moves so that no two labels overlap: labels sit to
    the right of their points, top one first, and one that would cover a label already placed goes just below
    it; a label that covers none stays level with its point (they used to stack by index, far from their points)."""
    placed: list[tuple[float, float, float]] = []  # (left, right, y) of the labels placed so far
    shifts = [0.0] * len(points)
    for i in sorted(range(len(points)), key=lambda i: -points[i][1]):
        x, y = points[i]
        left, right, wanted = x, x + widths[i], y
        for other_left, other_right, other_y in sorted(placed, key=lambda box: -box[2]):
            if other_left < right and left < other_right and abs(wanted - other_y) < line:
                wanted = other_y - line
        shifts[i] = wanted - y
        placed.append((left, right, wanted))
    return shifts


@_or_no_chart
def roofline_svg(benchmarks: list[BenchmarkResult], key: str) -> str:
    """The device's measured roofline (copy bandwidth; FP32 FMA and SGEMM rates) with each benchmark as a point at
    its arithmetic intensity (problem FLOPs / bytes) and achieved GFLOP/s; '' where no ceiling is known."""
    points = [b for b in benchmarks if b.gbps > 0 and b.gflops > 0]
    found = [roofline.ceilings_from_result(b.gflops, b.gbps, b.fraction_of_peak) for b in points]
    copy = next((c.copy_bytes_s for c in found if c.copy_bytes_s), None)
    roofs = {
        "fp32": next((c.fp32_flops_s for c in found if c.fp32_flops_s), None),
        "sgemm": next((c.sgemm_flops_s for c in found if c.sgemm_flops_s), None),
    }
    if not points or not copy:
        return ""
    intensities = [b.gflops / b.gbps for b in points]
    low, high = min(intensities) / 8, max(max(intensities) * 8, 64.0)
    figure = Figure(figsize=(8, 4.6))
    axes = figure.add_subplot()
    axes.set_xscale("log")
    axes.set_yscale("log")
    xs = [low * (high / low) ** (i / 200) for i in range(201)]
    rates = [r for r in roofs.values() if r]
    top = max(rates) if rates else copy * high
    slope = [x for x in xs if copy * x <= top] + ([top / copy] if top / copy < high else [])
    axes.plot(
        slope,
        [copy * x / 1e9 for x in slope],
        color=ROOF_COLOURS["copy"],
        linewidth=2,
        linestyle="--",
        label=f"copy {copy / 1e9:,.0f} GB/s",
    )
    for name, rate in roofs.items():
        if rate and not (name == "sgemm" and roofs["fp32"] and abs(rate / roofs["fp32"] - 1) < 0.02):
            label = {"fp32": "FP32 FMA", "sgemm": "cuBLAS SGEMM"}[name] + f" {rate / 1e12:,.1f} TFLOP/s"
            flat = [x for x in xs if copy * x >= rate] or [high]
            axes.plot(
                [rate / copy, *flat], [rate / 1e9] * (len(flat) + 1), color=ROOF_COLOURS[name], linewidth=2, label=label
            )
    axes.scatter(intensities, [b.gflops for b in points], color=KIND_COLOURS["user"], s=60, zorder=3)
    axes.set_xlim(low, high)
    axes.set_ylim(min(b.gflops for b in points) / 8, top / 1e9 * 2)
    texts = []
    for b in points:
        sol = roofline.sol_from_fractions(b.fraction_of_peak)
        texts.append(f"{b.name}" + (f" ({100 * sol:.1f}% SOL)" if sol is not None else ""))
    at = [tuple(axes.transData.transform((x, b.gflops))) for b, x in zip(points, intensities)]
    to_points = 72 / figure.dpi  # display units are pixels at the figure's dpi; offsets are in points
    widths = [len(text) * LABEL_CHAR_PT / to_points for text in texts]
    shifts = label_shifts(at, widths, LABEL_LINE_PT / to_points)
    for text, b, x, shift in zip(texts, points, intensities, shifts):
        axes.annotate(
            text, (x, b.gflops), textcoords="offset points", xytext=(10, shift * to_points - 4), color=INK, fontsize=10
        )
    for axis in (axes.xaxis, axes.yaxis):  # plain numbers: the log axes' default labels are math text, which
        axis.set_major_formatter(FuncFormatter(lambda value, _position: f"{value:,g}"))  # _svg writes as written
        axis.set_minor_formatter(NullFormatter())
    axes.tick_params(which="both", colors=INK, labelcolor=INK, labelsize=10)
    for side, spine in axes.spines.items():
        spine.set_color(INK)
        spine.set_visible(side in ("left", "bottom"))
    axes.grid(which="major", color=INK, alpha=0.15)
    axes.set_xlabel("arithmetic intensity: problem FLOPs per byte (log)", color=INK, fontsize=11)
    axes.set_ylabel("achieved GFLOP/s (log)", color=INK, fontsize=11)
    _legend(axes)
    return _svg(figure, f"roofline-{key}", "roofline: the device's measured ceilings and each benchmark")
