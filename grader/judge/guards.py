"""A call that wrote past either end of a buffer, as the supervisor recorded it (grader/run/guards.h).

Every buffer of a supervised run lies between two guards holding a canary the supervisor writes before each call
and checks after it (tests, warm-up and timed calls alike); the first call that changed one ends the run, and
its record `overrun` in the trusted folder is one line:

    CASE CALL BUFFER after|before BYTES FIRST_ELEMENT

BUFFER is the buffer's index in the signature, BYTES the span from the first to the last element written into the
guard, FIRST_ELEMENT the index of the first of them: the buffer's count or more past its end, negative before its
start. `read` checks every field against the run's own cases and shapes: a record that does not fit is Malformed
(the caller's verdict: rejected), never an exception of another kind.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from grader.judge import check
from grader.problems.spec import Problem
from grader.run import request

RECORD = "overrun"


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


def read(out: Path, problem: Problem, cases: list[request.Case]) -> Overrun | None:
    """The run's overrun record, None if no call wrote into a guard; Malformed if the record does not fit the run
    (check.TamperedOutput if it is not a plain file)."""
    text = check.read_record(out / RECORD)
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
