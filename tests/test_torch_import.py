"""grader.torch_import.warm: PyTorch's import in a background thread must not race the grader's forks. `logging`
registers fork hooks when it is imported (its lock taken before a fork, released after it in the parent); imported
first by the thread while the grader forked, the release could run without the take, and a grading printed
"RuntimeError: cannot release un-acquired lock" (a clean-clone CI run of `grader test` saw it once)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

SCRIPT = """
import sys, threading
threading.Thread.start = lambda self: None  # the import thread never runs: only warm()'s own thread acts
from grader import torch_import
before = "logging" in sys.modules
torch_import.warm()
print(before, "logging" in sys.modules)
"""


def test_warm_registers_loggings_fork_hooks_in_the_callers_thread_before_the_import_thread_starts():
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], cwd=REPO, capture_output=True, text=True, timeout=120, check=True
    )
    assert done.stdout.split() == ["False", "True"], done.stdout + done.stderr
