"""The interpreter the Python tracks' worker runs: this one (whose site-packages hold the frameworks), and
whether the sandbox's uid can run it with the track's framework.
"""

from __future__ import annotations

import importlib.util
import sys
import sysconfig
from pathlib import Path

from grader import tracks
from grader.sandbox.reachable import blocked

# what an operator does about an interpreter the sandbox's uid cannot reach (grader doctor, and the judge's error)
FIX = (
    "make the venv from an interpreter others can read (make setup PYTHON=/usr/bin/python3), or let others "
    "search that folder (chmod o+x)"
)


def worker_command(track: str) -> tuple[str, ...]:
    """The command that starts the Python worker: this interpreter, ignoring PYTHON* variables and the user's
    site folder, with the run folder's copy of the harness."""
    return (sys.executable, "-E", "-s", "-m", "harness.python_worker", track)


def unreachable(track: str) -> str:
    """'' when a uid of no group can run this interpreter, its standard library and the track's framework;
    else what stops it (see grader.sandbox.reachable)."""
    paths = [(Path(sys.executable), True), (Path(sysconfig.get_paths()["stdlib"]), False)]
    framework = tracks.get(track).python
    for name in framework.reached if framework else ():  # what harness/python_frameworks imports
        found = importlib.util.find_spec(name)
        if found is not None and found.submodule_search_locations:
            paths.append((Path(next(iter(found.submodule_search_locations))), False))
    for path, execute in paths:
        why = blocked(path, execute=execute)
        if why:
            return why
    return ""
