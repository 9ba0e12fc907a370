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
threading.Thread.start = lambda self: None  # no import thread ever runs: only the importer's thread acts
before = "logging" in sys.modules
from grader import torch_import
print(before, "logging" in sys.modules)
"""


def test_loggings_fork_hooks_are_registered_in_the_importers_thread_before_any_import_thread_starts():
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], cwd=REPO, capture_output=True, text=True, timeout=120, check=True
    )
    assert done.stdout.split() == ["False", "True"], done.stdout + done.stderr
