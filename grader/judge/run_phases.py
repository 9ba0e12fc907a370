"""Where a run's wall time went, from the supervisor's progress record (trusted: the supervisor writes it in the
trusted folder, which the submission cannot reach; supervisor_records.Progress reads it): each case's window, and
from them the run's parts: its start (the sandbox, the supervisor and its worker, CUDA and the device memory,
until the JIT stage or the first case), the JIT stage (tracks whose kernels compile on their first call: one
untimed call per size set), the tests, the benchmarks, and its end (from "done" until the sandbox returned). A
verdict keeps the parts beside its run stage ("run 5.84 s (start 1.20, jit 3.10, tests 2.10, benchmarks 2.30, end
0.20)"), so a slow grading says which part of it is slow; grade-many sums them over a batch.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # not imported at run time: the terminal and the site show stages without the judge's imports
    from grader.judge.supervisor_records import Progress

PREFIX = "run "  # a part's key in Verdict.stages_s: "run start", "run jit", "run tests", "run benchmarks", "run end"
KINDS = {"check": "tests", "bench": "benchmarks"}


def parts(progress: Progress, kinds: dict[str, str], began: float, ended: float) -> dict[str, float]:
    """The run's parts in seconds, keyed "run start" ... "run end", for a run that finished every case (its
    progress ends in "done"); {} for one that did not (a crash, a timeout: its message says where it stopped).
    `kinds`: each case's kind ("check" or "bench"); `began`, `ended`: the run's wall-clock bounds."""
    marks, windows, jit = progress.marks(), progress.case_windows(), progress.jit_window()
    if not windows or marks[-1][0] or set(windows) != set(kinds):
        return {}
    first_case = min(start for start, _ in windows.values())
    found = {"start": (jit[0] if jit else first_case) - began}
    if jit:
        found["jit"] = jit[1] - jit[0]
    for kind, part in KINDS.items():
        found[part] = sum(end - start for name, (start, end) in windows.items() if kinds[name] == kind)
    found["end"] = ended - marks[-1][1]
    return {PREFIX + part: round(max(seconds, 0.0), 3) for part, seconds in found.items()}


def text(stages: dict[str, float], between: str = ", ") -> str:
    """The stages as a reader sees them: "compile 0.00 s, run 5.84 s (start 1.20, tests 2.10, benchmarks 2.30,
    end 0.20), check 2.79 s, total 14.64 s" (the site puts " · " `between` the stages)."""
    shown = []
    for key, seconds in stages.items():
        if key.startswith(PREFIX):
            continue
        inside = [f"{k.removeprefix(PREFIX)} {v:.2f}" for k, v in stages.items() if k.startswith(PREFIX)]
        shown.append(f"{key} {seconds:.2f} s" + (f" ({', '.join(inside)})" if key == "run" and inside else ""))
    return between.join(shown)
