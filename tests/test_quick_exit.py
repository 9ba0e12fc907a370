"""The `grader` process ends without the interpreter's teardown, and loses nothing by it: its output, its exit
status, its atexit cleanups and its running threads are as they would have been."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

from grader.problems.catalog import list_slugs


def _python(code: str, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120, **kwargs
    )


def _grader(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "grader.cli.main", *argv], capture_output=True, text=True, timeout=120)


def test_a_piped_output_arrives_whole_and_the_status_is_the_commands():
    listed = _grader("list", "--json")
    assert listed.returncode == 0
    assert sorted(p["slug"] for p in json.loads(listed.stdout)) == list_slugs()
    unknown = _grader("show", "no-such-problem")
    assert unknown.returncode == 2
    assert "unknown problem 'no-such-problem'" in unknown.stdout + unknown.stderr


def test_what_was_registered_with_atexit_still_runs(tmp_path):
    done = _python(f"""
        import atexit, sys, tempfile
        folder = tempfile.TemporaryDirectory(dir={str(tmp_path)!r})  # removed by its finaliser at exit
        atexit.register(lambda: print("cleaned up", flush=True))
        sys.argv = ["grader", "--version"]
        from grader.cli.main import main
        main()
        """)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("kerneljudge ") and done.stdout.rstrip().endswith("cleaned up")
    assert list(tmp_path.iterdir()) == []


def test_a_thread_still_at_work_is_waited_for(tmp_path):
    mark = tmp_path / "written"
    done = _python(f"""
        import sys, threading, time
        from pathlib import Path
        def late():
            time.sleep(0.5)
            Path({str(mark)!r}).write_text("done")
        threading.Thread(target=late).start()
        sys.argv = ["grader", "show", "no-such-problem"]
        from grader.cli.main import main
        main()
        """)
    assert done.returncode == 2
    assert mark.read_text() == "done"
