"""What a user reads in the terminal: compiler output verbatim, tables that fit 80 columns in one unit,
the time limit of a timed-out run, timings marked when they are not trustworthy, the program's own output.

Verdicts are hand-made (tests/verdicts.py) and printed into an 80-column console, as in a pipe or a CI log.
"""

from __future__ import annotations

import io
import re

import pytest
from rich.console import Console
from verdicts import verdict

from grader.cli import output
from grader.verdict.status import Status

SOURCE_LINE = "    9 |     for (int i = 0; i < M * N; i++) output[i] = input[i] * scale[i];"
CAUGHT = "\n".join(
    [
        "solve.cpp: In function 'void solve(const float*, float*, int, int)':",
        "solve.cpp:9:53: error: 'scale' was not declared in this scope; did you mean 'scalbn'? (past column 80)",
        SOURCE_LINE,
        "      |" + " " * (SOURCE_LINE.index("scale") - 7) + "^~~~~",
        "      |" + " " * (SOURCE_LINE.index("scale") - 7) + "scalbn",
    ]
)


@pytest.fixture
def screen(monkeypatch) -> io.StringIO:
    """What print_verdict writes, as an 80-column terminal without colour shows it."""
    written = io.StringIO()
    monkeypatch.setattr(output, "console", Console(file=written, width=80, color_system=None, highlight=False))
    return written


def test_compiler_output_is_printed_as_it_is(screen):
    output.print_verdict(verdict("alice", status=Status.COMPILE_ERROR, message=CAUGHT))
    shown = screen.getvalue().splitlines()
    for line in CAUGHT.splitlines()[1:]:  # every line whole: `[i]` kept, no line re-wrapped at 80 columns
        assert line in shown
    source = next(line for line in shown if "output[i]" in line)
    caret = next(line for line in shown if "^~~~~" in line)
    assert caret.index("^") == source.index("scale")


def test_benchmark_table_fits_80_columns_in_one_unit(screen):
    timed = verdict("alice", [128.57, 134866.0])
    output.print_verdict(timed)
    shown = screen.getvalue()
    assert max(len(line) for line in shown.splitlines()) <= 80
    table = shown[shown.index("Benchmarks") : shown.index("all 2 tests passed")]
    assert "median ms" in table and "0.129" in table and "134.866" in table  # both medians, whole
    assert "µs" not in table and " us" not in table
    score = re.search(r"score ([\d.,]+) (\S+)", shown)
    assert score and score.group(2) == "ms" and float(score.group(1)) == pytest.approx(timed.score_us / 1e3, abs=1e-3)


def test_a_wide_terminal_shows_every_column(monkeypatch):
    written = io.StringIO()
    monkeypatch.setattr(output, "console", Console(file=written, width=200, color_system=None))
    output.print_verdict(verdict("alice", [90.0, 180.0]))
    assert all(header in written.getvalue() for header in ("IQR", "GB/s", "GFLOP/s", "samples", "mode", "floor"))


def test_a_timeout_states_the_time_limit(screen):
    timed_out = verdict("bob", status=Status.TIMEOUT, message="time limit exceeded in test primes")
    timed_out.time_limit_s = 97.0
    output.print_verdict(timed_out, time_limit_s=12.0)
    assert "time limit: 97 s for this run (12 s for the tests, the rest for the benchmarks)" in screen.getvalue()


def test_untrustworthy_timings_are_marked(screen):
    noisy = verdict("carol", [100.0, 200.0])
    noisy.benchmarks[1].trusted = False
    noisy.benchmarks[1].flags = ["machine loaded: load average 5.2 before the run, on 2 cores"]
    output.print_verdict(noisy)
    shown = screen.getvalue()
    assert "? timing not trustworthy: wide_32k: machine loaded: load average 5.2" in shown
    assert re.search(r"wide_32k +[\d.]+ \?", shown) and re.search(r"square_8k +[\d.]+ ", shown)
    assert not re.search(r"square_8k +[\d.]+ \?", shown)

    screen.truncate(0)
    output.print_verdict(verdict("carol", [100.0, 200.0]))
    assert "trustworthy" not in screen.getvalue() and " ?" not in screen.getvalue()


def test_the_program_output_is_shown(screen):
    wrong = verdict("dave", status=Status.WRONG_ANSWER)
    wrong.output_tail = "[stdout]\n" + "\n".join(f"row {i}: max [{i}] = 0.5" for i in range(100))
    output.print_verdict(wrong)
    shown = screen.getvalue()
    assert "program output (stdout and stderr, last 40 lines):" in shown
    assert "row 99: max [99] = 0.5" in shown and "row 59: max [59]" not in shown
