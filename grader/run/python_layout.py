"""What the Python worker (harness/python_worker.py) is told about a run, as a file in its run folder: how
`solve`'s arguments are made from a call's buffers and sizes, which folders are the judge's, and whether it
reports the autotuner's choices (harness/autotuned.py).

The supervisor's messages name buffers by offset and sizes by value (grader/boundary/protocol.h), enough for a
compiled shim; a Python `solve` receives arrays, so the worker needs each buffer's element type and, for each
set of sizes the run will use, each buffer's shape. Nothing here is secret: it is the problem's signature and
its public size sets.
"""

from __future__ import annotations

import json
from pathlib import Path

import grader
import harness
from grader.problems.catalog import REPO_ROOT, problems_root
from grader.problems.solutions import root as solutions_root
from grader.problems.spec import Problem, SizeSet

FILE_NAME = "call_layout.json"


def layout(problem: Problem, size_sets: list[SizeSet], *, reports_autotuning: bool) -> dict:
    """{"params": solve's parameters in order ({"buffer": j, "dtype": token} or {"size": k}), "shapes": for each
    set of size values (space-separated, in signature order) the shape of every buffer, "judge_paths": the
    folders a submission may not open, "reports_autotuning": the track's PythonFramework.reports_autotuning}."""
    params: list[dict[str, int | str]] = []
    buffers = sizes = 0
    for param in problem.signature:
        if param.role == "size":
            params.append({"size": sizes})
            sizes += 1
        else:
            params.append({"buffer": buffers, "dtype": param.dtype})
            buffers += 1
    shapes = {
        " ".join(str(s.sizes[name]) for name in problem.size_names): [
            list(problem.shape(p, s.sizes)) for p in problem.pointer_params
        ]
        for s in size_sets
    }
    judge = [Path(grader.__file__).parent, Path(harness.__file__).parent, problems_root(), solutions_root()]
    judge.append(REPO_ROOT / "tests")
    return {
        "params": params,
        "shapes": shapes,
        "judge_paths": [str(p.resolve()) for p in judge],
        "reports_autotuning": reports_autotuning,
    }


def write(folder: Path, problem: Problem, size_sets: list[SizeSet], *, reports_autotuning: bool) -> Path:
    path = folder / FILE_NAME
    path.write_text(json.dumps(layout(problem, size_sets, reports_autotuning=reports_autotuning)))
    path.chmod(0o444)
    return path
