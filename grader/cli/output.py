"""What the `grader` commands print: the two consoles, usage errors (also as a JSON object under --json),
verdicts, and tables that fit the terminal (80 columns in a pipe, a CI log or `make grade`).

Text from outside the grader (compiler diagnostics, the program's output, messages that quote source) is
printed as plain text: never read as Rich markup (`output[i]` stays `output[i]`) and never re-wrapped (gcc's
caret lines keep their columns). A table too wide for the terminal drops its optional columns, least useful
first, so the essential ones (a benchmark's name and median) are always whole.

Nothing printed to a terminal carries a control character that came in as text: a user's name, a file name, a
program's output or a source can hold terminal escapes (ESC, CSI), other C0 and C1 controls or bidi overrides,
and the consoles here drop them from every piece of text they write (`terminal_safe`), keeping newlines and
tabs; the consoles' own colours are written after that, from styles. JSON output escapes them (json.dumps).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import typer
from rich import box
from rich.console import Console
from rich.measure import Measurement
from rich.segment import Segment
from rich.table import Table
from rich.text import Text

from grader.judge import run_phases
from grader.verdict import autotuned
from grader.verdict import units as timing
from grader.verdict.status import Status

try:  # recent typer carries its own copy of click, and parses with that one
    from typer._click.globals import get_current_context
except ImportError:  # typer before the copy
    from click import get_current_context  # type: ignore[no-redef]

# C0 controls but tab and newline, DEL, C1 controls, and the bidi marks, embeddings, overrides and isolates.
UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def terminal_safe(text: str) -> str:
    """`text` without the characters a terminal would act on rather than show (UNSAFE)."""
    return UNSAFE.sub("", text)


class SafeConsole(Console):
    """A rich Console that writes every piece of text through terminal_safe. It filters where rich turns its
    segments into output (Console._render_buffer), the one place that sees all of them, whatever renderable
    (table cell, Syntax, Text, markup) they came from; rich's own control segments (cursor moves of a
    progress bar) and the styles' escape codes pass."""

    def _render_buffer(self, buffer: Iterable[Segment]) -> str:
        return super()._render_buffer(
            segment if segment.control else Segment(terminal_safe(segment.text), segment.style, segment.control)
            for segment in buffer
        )


console = SafeConsole(highlight=False)
errors = SafeConsole(stderr=True, highlight=False)

STATUS_STYLE = {
    Status.ACCEPTED: "bold green",
    Status.WRONG_ANSWER: "bold red",
    Status.COMPILE_ERROR: "bold yellow",
    Status.RUNTIME_ERROR: "bold red",
    Status.TIMEOUT: "bold magenta",
    Status.REJECTED: "bold red",
}
OUTPUT_TAIL_LINES = 40  # of the program's own output, shown under a verdict


def print_json(data) -> None:
    print(json.dumps(data, indent=2))


def json_requested() -> bool:
    """Whether the running command was given --json (every command names that option `as_json`)."""
    context = get_current_context(silent=True)
    return bool(context and context.params.get("as_json"))


def usage_error(message: str) -> typer.Exit:
    """Print `message` as a usage error (and, under --json, a JSON error object on stdout); returns exit 2."""
    if json_requested():
        print_json({"status": "usage_error", "message": message})
    errors.print(Text.assemble(("error:", "red"), " ", message))
    return typer.Exit(2)


def internal_error(message: str) -> typer.Exit:
    """The judge itself failed (a full disk, a crashed supervisor): no verdict was given; returns exit 3."""
    if json_requested():
        print_json({"status": "internal_error", "message": message})
    errors.print(Text.assemble(("internal error:", "red"), " ", message, " (nothing was stored; grade it again)"))
    return typer.Exit(3)


def warning(message: str) -> None:
    errors.print(Text.assemble(("warning:", "yellow"), " ", message))


def plain(text: str, *, to: Console | None = None) -> None:
    """Text from outside the grader, exactly as it is: no markup, no highlighting, no wrapping."""
    (to or console).out(text, highlight=False)


def styled_status(status: str) -> Text:
    return Text(status.replace("_", " "), style=STATUS_STYLE.get(Status(status), ""))


@dataclass(frozen=True)
class Column:
    header: str
    drop: int = 0  # 0: always kept; otherwise dropped when the table is too wide, highest first
    justify: str = "left"
    wrap: bool = False  # long cells wrap (the table never drops a column for it); else a cell is never cut


def fitted_table(
    columns: Sequence[Column], rows: Sequence[Sequence[Any]], *, to: Console | None = None, **table
) -> Table:
    """A table of `rows` that fits the console: optional columns are dropped until it does."""
    screen = to or console
    kept = list(range(len(columns)))
    while True:
        built = Table(**{"box": box.SIMPLE_HEAD, "show_edge": False, **table})
        for i in kept:
            column = columns[i]
            built.add_column(column.header, justify=column.justify, no_wrap=not column.wrap, overflow="fold")  # type: ignore[arg-type]
        for row in rows:
            built.add_row(*[row[i] for i in kept])
        optional = [i for i in kept if columns[i].drop]
        if not optional or _needed_width(screen, built, [columns[i] for i in kept]) <= screen.width:
            return built
        kept.remove(max(optional, key=lambda i: (columns[i].drop, i)))


def _needed_width(screen: Console, table: Table, columns: Sequence[Column]) -> int:
    """The narrowest the table can be with no cell of a non-wrapping column cut: those at their widest, the
    wrapping ones at their longest word, plus the table's padding and rules."""
    options = screen.options.update_width(1 << 16)  # unbounded: a measure is otherwise capped at the screen
    widest, narrowest = [], []
    for column, cells in zip(columns, table.columns):
        sizes = [Measurement.get(screen, options, cell) for cell in (cells.header, *cells.cells)]
        widest.append(max(size.maximum for size in sizes))
        narrowest.append(max(size.maximum if not column.wrap else size.minimum for size in sizes))
    overhead = screen.measure(table, options=options).maximum - sum(widest)
    return overhead + sum(narrowest)


def print_verdict(verdict, *, time_limit_s: float | None = None) -> None:
    """A verdict for a person: its tests, its benchmarks in one unit, the status and message, the program's
    output, what its autotuners chose (its own report), doubts about its timings, and where the time went."""
    if verdict.tests:
        console.print(_tests_table(verdict))
    unit = timing.unit_for([b.median_us for b in verdict.benchmarks] + [verdict.score_us])
    if verdict.benchmarks:
        console.print(_benchmarks_table(verdict, unit))
    message = timing.with_score_in(verdict.message, verdict.score_us, unit)
    if "\n" in message:  # a compiler's or a program's output: under the status, as it was written
        console.print(styled_status(verdict.status))
        plain(message)
    else:
        console.print(Text.assemble(styled_status(verdict.status), "  ", message), soft_wrap=True)
    if verdict.status == Status.TIMEOUT:
        console.print(_time_limit(verdict, time_limit_s))
    tail = verdict.output_tail.rstrip()
    if tail:
        lines = tail.splitlines()
        shown = lines[-OUTPUT_TAIL_LINES:]
        cut = f", last {len(shown)} lines" if len(shown) < len(lines) else ""
        console.print(Text(f"program output (stdout and stderr{cut}):", style="bold"))
        plain("\n".join(shown))
    if verdict.autotuned:
        console.print(Text("Autotuned (the submission's own report):", style="bold"))
        for entry in verdict.autotuned:
            plain(f"  {entry.get('kernel')} ({autotuned.key_text(entry)}): {autotuned.config_text(entry)}")
    for doubt in timing.doubts(verdict):
        console.print(Text.assemble((f"{timing.DOUBT_MARK} timing not trustworthy: ", "yellow"), doubt))
    stages = run_phases.text(verdict.stages_s)
    where = " · ".join(x for x in (verdict.problem, verdict.track, verdict.device.get("name", ""), stages) if x)
    console.print(Text(where, style="dim"))


def _time_limit(verdict, tests_s: float | None) -> str:
    """The limit a timed-out run had: the run's own (tests and benchmark budgets), and the tests' share."""
    run_s = verdict.time_limit_s
    tests = f"{tests_s:g} s for the tests" if tests_s else ""
    if run_s and tests_s and run_s > tests_s:
        return f"time limit: {run_s:g} s for this run ({tests}, the rest for the benchmarks)"
    return f"time limit: {run_s or tests_s:g} s" if run_s or tests_s else "time limit: unknown"


def _tests_table(verdict) -> Table:
    from grader.problems.spec import describe_sizes

    columns = [
        Column("test"),
        Column("sizes", drop=3),
        Column("status"),
        Column("max abs err", drop=1, justify="right"),
        Column("max rel err", drop=2, justify="right"),
    ]
    rows = [
        [
            t.name,
            describe_sizes(t.sizes),
            styled_status(t.status),
            f"{t.max_abs_err:.2e}" if t.max_abs_err is not None else "",
            f"{t.max_rel_err:.2e}" if t.max_rel_err is not None else "",
        ]
        for t in verdict.tests
    ]
    return fitted_table(columns, rows, title="Tests")


def _benchmarks_table(verdict, unit: timing.Unit) -> Table:
    columns = [
        Column("benchmark"),
        Column(f"median {unit.name}", justify="right"),
        Column(f"IQR {unit.name}", drop=3, justify="right"),
        Column("% peak BW", drop=4, justify="right"),
        Column(f"floor {unit.name}", drop=5, justify="right"),
        Column("GB/s", drop=6, justify="right"),
        Column("GFLOP/s", drop=7, justify="right"),
        Column("samples", drop=8, justify="right"),
        Column("mode", drop=9),
    ]
    rows = []
    for b in verdict.benchmarks:
        bw = b.fraction_of_peak.get("bandwidth")
        rows.append(
            [
                b.name,
                unit.format(b.median_us) + ("" if b.trusted else f" {timing.DOUBT_MARK}"),
                unit.format(b.spread.get("iqr_us")),
                f"{100 * bw:.1f}" if bw else "",
                unit.format(b.floor_us) if b.floor_us else "",
                f"{b.gbps:.1f}",
                f"{b.gflops:.1f}",
                str(b.samples),
                b.mode,
            ]
        )
    return fitted_table(columns, rows, title="Benchmarks")
