"""Waiting for a child's end: the return code as soon as it ends, None while it runs past the timeout."""

from __future__ import annotations

import subprocess
import sys
import threading
import time

from grader.sandbox import exits


def test_the_end_is_seen_as_it_comes_not_at_the_next_poll():
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(0.3); raise SystemExit(7)"])
    began = time.monotonic()
    assert exits.wait_exit(process, 0.1) is None  # still running
    code = exits.wait_exit(process, 60)
    ended = time.monotonic() - began
    assert code == 7 and process.returncode == 7
    assert ended < 30  # woken by the end, not by the 60 s timeout (with room for a loaded machine)
    assert exits.wait_exit(process, 60) == 7  # reaped: its code again, at once


def test_a_process_killed_by_a_signal_reads_as_popen_says():
    process = subprocess.Popen([sys.executable, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGKILL)"])
    assert exits.wait_exit(process, 10) == -9


def test_a_process_another_thread_also_waits_for_gives_its_code_to_both():
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(0.3); raise SystemExit(3)"])
    codes = []
    other = threading.Thread(target=lambda: codes.append(process.wait()))
    other.start()
    assert exits.wait_exit(process, 10) == 3
    other.join(10)
    assert codes == [3]
