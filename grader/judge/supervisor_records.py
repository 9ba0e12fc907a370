"""The supervisor's records, each file of the trusted folder read and parsed here and nowhere else.

The supervisor (grader/run/supervisor.cpp, cuda_supervisor.cu, supervision.h) writes them into a folder the sandbox
cannot reach; they are still read as if they could be anything: a file that is a link, a FIFO or larger than any
record is TamperedOutput, and a record that is not what the supervisor writes is None or Malformed, never an
exception of another kind. What the records mean for the verdict is decided by their readers (pipeline.py,
benchmarks.py); the buffers of each call are check.py's.

    progress        "loading", "loaded", "case NAME UNIX_TIME", "call NAME DRAW", "returned NAME DRAW", "done UNIX_TIME",
                    and the JIT stage's "jit NAME UNIX_TIME", "jitted NAME UNIX_TIME" per size set (NAME: the first case
                    with its sizes) and "over NAME UNIX_TIME" when its budget ran out there
    violation       the protocol rule the program broke
    overrun         a call that wrote into a buffer's guard (grader/run/guards.h): CASE CALL BUFFER after|before
                    BYTES FIRST_ELEMENT, BYTES the span from the first to the last element written into the guard,
                    FIRST_ELEMENT the first of them (the buffer's count or more past its end, negative before it)
    NAME.calls      a test's calls: DRAW CALL_MS [TAIL_MS] (the tail on the CUDA track: device work after solve)
    NAME.times      a benchmark's samples: a header of "key value" pairs, then FIRST_CALL MS TAIL_MS per sample
    NAME.clock      the CUDA supervisor's own time of each timed call: a header, then CALL JUDGE_MS CLAIMED_MS ...
    NAME.audits     the timed calls drawn for the audit, one number a line
    NAME.dDRAW.inputs  a test's call: INDEX CHANGED FIRST_CHANGED per input, the elements that no longer held
                    their generated bits after the call (grader/run/input_check.h)
    NAME.aCALL.scan a row-audited call's "seed SEED" (its drawn rows') and the scan of its whole outputs,
                    INDEX UNWRITTEN FIRST_UNWRITTEN BAD FIRST_BAD per output (grader/run/row_audit.h)
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from grader.judge.check import TamperedOutput, open_result
from grader.problems.spec import Problem
from grader.run import request

PROGRESS, VIOLATION, OVERRUN = "progress", "violation", "overrun"
MAX_RECORD_BYTES = 16 << 20


def read_record(path: Path) -> str | None:
    """A text record of the supervisor, None if absent; TamperedOutput if odd."""
    f = open_result(path)
    if f is None:
        return None
    with f:
        if os.fstat(f.fileno()).st_size > MAX_RECORD_BYTES:
            raise TamperedOutput(f"{path.name}: larger than any record the harness writes")
        return f.read().decode("utf-8", "replace")


# --- the run as a whole --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Progress:
    """The progress record's lines, in the order the supervisor wrote them."""

    lines: tuple[str, ...] = ()

    @property
    def done(self) -> bool:
        """Whether the supervisor saw every case through ("done" last)."""
        return bool(self.lines) and self.lines[-1].startswith("done")

    @property
    def loading(self) -> bool:
        """Whether the run stopped while the worker loaded the library."""
        return bool(self.lines) and self.lines[-1] == "loading"

    def started(self) -> list[str]:
        """The cases begun, in run order."""
        return [line.split()[1] for line in self.lines if line.startswith("case ")]

    def has_started(self, case: str) -> bool:
        return any(line.split()[:2] == ["case", case] for line in self.lines)

    def marks(self) -> list[tuple[str, float]]:
        """(case name, start) of each "case" line and ("", time) of "done", in order; a line that is neither, or
        whose time is not a number, is skipped."""
        marks = []
        for line in self.lines:
            words = line.split()
            try:
                if words[0] == "case" and len(words) == 3:
                    marks.append((words[1], float(words[2])))
                elif words[0] == "done" and len(words) == 2:
                    marks.append(("", float(words[1])))
            except (IndexError, ValueError):
                continue
        return marks

    def _stamped(self, word: str) -> list[tuple[str, float]]:
        """(NAME, time) of each "WORD NAME TIME" line whose time is a number, in order."""
        found = []
        for line in self.lines:
            words = line.split()
            if len(words) == 3 and words[0] == word:
                try:
                    found.append((words[1], float(words[2])))
                except ValueError:
                    continue
        return found

    def jit_stopped(self) -> str | None:
        """The case whose sizes the JIT stage was at when the run ended there (its call began, never returned),
        None if the stage finished or never began."""
        begun, returned = self._stamped("jit"), self._stamped("jitted")
        if not begun or any(line.startswith("case ") for line in self.lines):
            return None
        return begun[-1][0] if len(returned) < len(begun) else None

    @property
    def jit_over_budget(self) -> bool:
        """Whether the supervisor ended the JIT stage because its budget ran out."""
        return bool(self._stamped("over"))

    def jit_window(self) -> tuple[float, float] | None:
        """(start, end) wall-clock seconds of a JIT stage that finished, None if there was none or it did not."""
        begun, returned = self._stamped("jit"), self._stamped("jitted")
        if not begun or len(returned) != len(begun):
            return None
        return begun[0][1], returned[-1][1]

    def case_windows(self) -> dict[str, tuple[float, float]]:
        """(start, end) wall-clock seconds of each case; a case the run never finished (no next case, no "done")
        has none."""
        marks = self.marks()
        return {name: (start, end) for (name, start), (_next, end) in zip(marks, marks[1:]) if name}


def progress(out: Path) -> Progress:
    return Progress(tuple((read_record(out / PROGRESS) or "").splitlines()))


def violation(out: Path) -> str | None:
    """The protocol rule the program broke, None if it broke none."""
    text = read_record(out / VIOLATION)
    return text.strip() if text else None


class Malformed(Exception):
    """An overrun record that is not what the supervisor writes."""


@dataclass(frozen=True)
class Overrun:
    case: str
    call: int
    buffer: str  # the parameter's name
    after: bool  # past the end (True) or before the start
    bytes: int
    first_element: int

    def describe(self) -> str:
        """What the call did, as a verdict says it: wrote 1020 bytes past the end of C (first at element 7)."""
        where = "past the end of" if self.after else "before the start of"
        return f"wrote {self.bytes} bytes {where} {self.buffer} (first at element {self.first_element})"


def overrun(out: Path, problem: Problem, cases: list[request.Case]) -> Overrun | None:
    """The run's overrun record (the first call that wrote into a guard ended the run), None if no call did;
    Malformed if a field does not fit the run's own cases and shapes."""
    text = read_record(out / OVERRUN)
    if text is None:
        return None
    fields = text.split()
    if len(fields) != 6 or not text.endswith("\n") or text.count("\n") != 1:
        raise Malformed("not one line of six fields")
    name, call_text, buffer_text, side, bytes_text, first_text = fields
    case = next((c for c in cases if c.name == name), None)
    if case is None:
        raise Malformed(f"no case {name!r} in this run")
    try:
        call, index, span, first = int(call_text), int(buffer_text), int(bytes_text), int(first_text)
    except ValueError:
        raise Malformed("a field that is not a whole number") from None
    params = problem.pointer_params
    if call < 0 or not 0 <= index < len(params) or side not in ("after", "before") or span <= 0:
        raise Malformed("a call, buffer, side or size out of range")
    count = int(np.prod(problem.shape(params[index], case.size_set.sizes)))
    after = side == "after"
    if (after and first < count) or (not after and first >= 0):
        raise Malformed(f"element {first} is not {side} a buffer of {count} elements")
    return Overrun(name, call, params[index].name, after, span, first)


# --- one case's records ----------------------------------------------------------------------------------------


def call_tails(out: Path, case: str) -> dict[int, tuple[float, float]] | None:
    """A test's calls: draw -> (call ms, tail ms); {} if there is no record, None if it is odd (a line without
    a tail: the CPU track's)."""
    tails = {}
    try:
        for line in (read_record(out / f"{case}.calls") or "").splitlines():
            draw, call_ms, tail_ms = (float(field) for field in line.split())
            tails[int(draw)] = (call_ms, tail_ms)
    except ValueError:
        return None
    return tails


Sample = tuple[int, float, float]  # (first call, ms per call, tail ms)


def times(out: Path, case: str) -> tuple[dict, list[Sample]] | None:
    """(header, samples) of a benchmark's timing record, None if anything in it is not what the supervisor writes
    (total: a rewritten or truncated record is a verdict, never an exception)."""
    try:
        lines = (read_record(out / f"{case}.times") or "").splitlines()
        words = lines[0].split()
        found = dict(zip(words[::2], words[1::2]))
        header: dict = {
            "mode": found.get("mode", "single"),
            "batch": int(found.get("batch", "1")),
            "overhead_ms": float(found.get("overhead_ms", "0")),
            "tail_overhead_ms": float(found.get("tail_overhead_ms", "0")),
            "clock_spread_ms": float(found.get("clock_spread_ms", "0")),  # CUDA: the calibration's spread
        }
        rows = [(int(a), float(b), float(c)) for a, b, c in (line.split() for line in lines[1:])]
    except (ValueError, IndexError):
        return None
    numbers = [header["overhead_ms"], header["tail_overhead_ms"], header["clock_spread_ms"]]
    numbers += [x for _, t, tail in rows for x in (t, tail)]
    if header["mode"] not in ("single", "batch") or not 1 <= header["batch"] <= 1 << 20 or len(rows) < 1:
        return None
    if any(not (math.isfinite(x) and x >= 0) for x in numbers) or any(t <= 0 for _, t, _ in rows):
        return None  # a call takes time: zero is a clock that stood still
    return header, rows


def judge_times_ms(out: Path, case: str) -> list[float] | None:
    """The supervisor's own time of each timed call of a benchmark (CUDA track: its events from GATE to the DONE
    word, less the calibrated overhead; grader/boundary/protocol.h), in run order. None if the record is absent
    or odd."""
    try:
        lines = (read_record(out / f"{case}.clock") or "").splitlines()[1:]
        judged = [float(line.split()[1]) for line in lines]
    except (ValueError, IndexError):
        return None
    if not judged or not all(math.isfinite(t) and t >= 0 for t in judged):
        return None
    return judged


def audit_calls(out: Path, case: str) -> list[int] | str:
    """The timed calls the supervisor drew for a benchmark's audit, in its order; what is wrong with the record
    if it is absent or not a list of whole numbers."""
    record = read_record(out / f"{case}.audits")
    if record is None:
        return "no timed call was kept for the audit"
    try:
        return [int(w) for w in record.split()]
    except ValueError:
        return "the audit record is malformed"


@dataclass(frozen=True)
class Scan:
    """What the supervisor's scan of one whole output of an audited call found: elements never written and NaN or
    Inf the program wrote, with the first flat index of each (-1 where there is none)."""

    unwritten: int
    first_unwritten: int
    bad: int
    first_bad: int


def audit_scan(out: Path, stem: str) -> tuple[int, dict[int, Scan]] | None:
    """The seed the supervisor drew the rows of the audited call STEM with, and its scan of each of the call's
    outputs, by buffer index; None if the record is absent or odd."""
    lines = (read_record(out / f"{stem}.scan") or "").splitlines()
    try:
        word, seed = lines[0].split()
        scans = {int(line.split()[0]): Scan(*map(int, line.split()[1:])) for line in lines[1:]}
    except (ValueError, TypeError, IndexError):
        return None
    if word != "seed" or not 0 <= int(seed) < 1 << 64:
        return None
    return int(seed), scans


def input_changes(out: Path, stem: str) -> dict[int, tuple[int, int]] | None:
    """The supervisor's check of the inputs of a test's call STEM: (elements changed, the first of them) by buffer
    index; None if the record is absent or odd."""
    changes = {}
    for line in (read_record(out / f"{stem}.inputs") or "").splitlines():
        try:
            index, count, first = map(int, line.split())
        except ValueError:
            return None
        changes[index] = (count, first)
    return changes or None
