"""A machine made ready to grade: what a first grading would otherwise pay, paid once (`grader prepare`, run by
`make setup`).

For each track this machine runs, the programs of a supervised run are built into the build cache: its
supervisor and its compiled worker (in the container's image where submissions run in the container), or the
Python worker's seccomp filter. Then each device's ceilings are measured (grader/perf/ceilings.py). A first
grading of softmax's top CUDA rung on an H200 spent 11 s building the first two and 4 s measuring the last
(docs/timing.md). Nothing here is a submission's: every step is the judge's own, cached exactly as a grading
caches it, so a grading that follows finds them and a changed source builds again.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial

from grader import tracks
from grader.perf import ceilings
from grader.run import binaries
from grader.sandbox import container
from grader.toolchain import detect


@dataclass(frozen=True)
class Step:
    what: str  # "cuda supervisor", "gpu ceilings", ...
    done: bool
    said: str  # what came of it: the cache entry's path, the figures, or why it was skipped or failed
    seconds: float


def steps() -> Iterator[Step]:
    """Each step as it ends; a step this machine cannot take is one not done, with why."""
    tools = detect()
    built: set[str] = set()
    devices: dict[str, str] = {}  # each device's name: the first track of it, through which its ceilings are read
    for track in tracks.every():
        if not track.device.available(tools):
            needs = "a GPU and nvcc" if track.device.gpu else "g++"
            yield Step(f"{track.name} track", False, f"not run on this machine (it needs {needs})", 0)
            continue
        devices.setdefault(track.device.name, track.name)
        supervisor = track.device.supervisor
        if supervisor not in built:
            built.add(supervisor)
            yield _step(supervisor, partial(binaries.supervisor, track.name))
        if track.compiled is None:
            if "python_seccomp" not in built:
                built.add("python_seccomp")
                yield _step("python worker's seccomp filter", binaries.python_seccomp)
        elif track.compiled.worker not in built:
            built.add(track.compiled.worker)
            try:
                run = container.choose(None, track.name)[0]
            except (RuntimeError, ValueError) as error:  # a sandbox asked for that this machine lacks
                yield Step(track.compiled.worker, False, f"failed: {error}", 0)
                continue
            yield _step(f"{track.compiled.worker} ({run.kind} sandbox)", partial(binaries.worker, track.name, run))
    for device, track_name in devices.items():
        yield _step(f"{device} ceilings", partial(_ceilings, track_name))


def _ceilings(track: str) -> str:
    """The ceilings of the device `track` runs on, measured now unless cached: where they come from."""
    return ceilings.for_track(track).source


def _step(what: str, do: Callable[[], object]) -> Step:
    began = time.monotonic()
    try:
        result = do()
    except Exception as error:  # a compiler that fails, an engine that will not answer: named, the rest goes on
        return Step(what, False, f"failed: {error}", time.monotonic() - began)
    return Step(what, True, str(result), time.monotonic() - began)
