"""The site's charts as a reader sees them in the browser (as in the screenshots of the H100's softmax pages): tick
labels that do not run into one another on a wide time axis, and roofline labels beside their own points, apart
from each other, however many benchmarks sit at one arithmetic intensity."""

from __future__ import annotations

import re

from matplotlib.figure import Figure
from verdicts import benchmarks

from grader.site import charts


def _tick_labels(low_us: float, high_us: float) -> list[float]:
    axes = Figure().add_subplot()
    axes.set_xscale("log")
    charts._time_axis(axes, low_us, high_us)
    return [t for t in axes.xaxis.get_majorticklocs() if low_us <= t <= high_us]


def test_a_time_axis_over_five_decades_has_one_tick_a_decade():
    """softmax's naive rung on the H100: floors from 2 us to medians of 95 ms, 16 crowded 1-2-5 labels before."""
    assert _tick_labels(1.0, 2e5) == [1.0, 10.0, 100.0, 1e3, 1e4, 1e5]


def test_a_time_axis_over_two_decades_keeps_1_2_5_ticks():
    assert _tick_labels(10.0, 1e3) == [10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1e3]


def test_labels_of_points_at_one_intensity_stay_apart_and_near_their_points():
    """Three sizes of one problem at one intensity, 10 px apart, and a lone point far below: the lone label stays
    level with its point, the three stack downwards one line apart, top first (the H100's softmax page put
    many_rows' label under wide_32k's and one_row_1m's under the axis)."""
    points = [(100.0, 300.0), (100.0, 310.0), (100.0, 290.0), (100.0, 40.0)]
    shifts = charts.label_shifts(points, [120.0] * 4, line=18.0)
    placed = sorted(y + shift for (_, y), shift in zip(points, shifts))
    assert shifts[1] == 0.0 and shifts[3] == 0.0
    assert all(b - a >= 18.0 for a, b in zip(placed, placed[1:]))
    assert all(-2 * 18.0 <= s <= 0.0 for s in shifts)


def test_labels_side_by_side_do_not_move():
    points = [(100.0, 300.0), (400.0, 305.0)]
    assert charts.label_shifts(points, [120.0, 120.0], line=18.0) == [0.0, 0.0]


def test_the_roofline_svg_names_every_benchmark_once():
    svg = charts.roofline_svg(benchmarks([2900.0, 7400.0]), "test")
    for b in benchmarks([2900.0, 7400.0]):
        assert len(re.findall(rf"{b.name} \(", svg)) == 1


def test_the_roofline_axes_are_labelled_with_plain_numbers_not_math_text():
    svg = charts.roofline_svg(benchmarks([2900.0, 7400.0]), "test")
    ticks = re.findall(r"<text[^>]*>([^<]*)</text>", svg)
    assert "mathdefault" not in svg and "$" not in svg, [t for t in ticks if "$" in t or "math" in t][:5]
    assert any(re.fullmatch(r"[\d,]+", t.strip()) for t in ticks), ticks[:20]
