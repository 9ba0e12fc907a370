"""SIGTERM that lands while the grader forks (grader/interrupts.py): the grading still ends as for Ctrl-C, with
exit status 130 and nothing left behind, and no at-fork hook is cut short (logging's lock stays free).

A SIGTERM in a fork's at-fork hooks had been handled inside logging's hook, where Python drops the exception:
the interrupt was lost and logging's lock stayed held (a clean-clone CI run hung). The programs below make it
happen every time: a hook registered before logging's sends SIGTERM from C, so that logging's hook is the first
Python code to run with the signal pending.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
GRADER = REPO / "grader"

# Registered before logging is imported, so it runs before logging's hook in the parent after a fork. Each call
# is raise(ARMED.pop("signal", 0)) made of C callables only (a Python hook would run the handler in itself):
# signal 0 sends nothing, so only the first fork after `ARMED["signal"] = SIGTERM` is signalled.
SIGTERM_IN_THE_NEXT_FORK = """
import ctypes, functools, itertools, operator, os, signal, sys
assert "logging" not in sys.modules
ARMED = {}
signals = map(operator.methodcaller("pop", "signal", 0), itertools.repeat(ARMED))
os.register_at_fork(after_in_parent=functools.partial(next, map(getattr(ctypes.CDLL(None), "raise"), signals)))
import logging
"""


def _python(program: str, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(
            [sys.executable, "-c", program, *args],
            cwd=REPO,
            env={**os.environ, "PYTHONPATH": str(REPO), **(env or {})},
            capture_output=True,
            text=True,
            timeout=60,
        )
    except subprocess.TimeoutExpired as hung:
        pytest.fail(f"still running after 60 s (logging's lock held?); its stderr:\n{hung.stderr!r}")


def test_sigterm_in_a_forks_hooks_ends_a_grading_with_130_and_leaves_no_folder_behind(tmp_path):
    folders = {name: tmp_path / name for name in ("DATA", "CACHE", "RUNS")}
    for folder in folders.values():
        folder.mkdir()
    program = SIGTERM_IN_THE_NEXT_FORK + (
        "from grader.cli.main import app\n"
        "from grader.sandbox import layers\n"
        "layers.probe()\n"  # the sandbox's own probes fork first; the grading's first fork gets the SIGTERM
        'ARMED["signal"] = signal.SIGTERM\n'
        "app()\n"
    )
    solution = REPO / "solutions" / "softmax" / "01_naive.cpp"
    grading = _python(
        program,
        "submit",
        "softmax",
        str(solution),
        env={f"KERNELJUDGE_{name}": str(folder) for name, folder in folders.items()},
    )
    said = grading.stdout + grading.stderr
    assert grading.returncode == 130, said  # as for Ctrl-C, not a grading that went on without its interrupt
    assert "Exception ignored" not in grading.stderr, said
    assert list(folders["RUNS"].iterdir()) == []


def test_sigterm_in_a_forks_hooks_is_raised_as_the_fork_returns_and_logging_stays_usable():
    program = SIGTERM_IN_THE_NEXT_FORK + (
        "import threading, traceback\n"
        "from grader import interrupts\n"
        "from grader.sandbox import layers\n"
        "interrupts.install()\n"  # what every grader command does first
        'ARMED["signal"] = signal.SIGTERM\n'
        "try:\n"
        "    layers.probe()\n"  # forks a throwaway child per layer
        "    print('the probe ran to its end')\n"
        "except KeyboardInterrupt as interrupt:\n"
        "    print('interrupted in', [frame.name for frame in traceback.extract_tb(interrupt.__traceback__)][-2])\n"
        "logs = threading.Thread(target=logging.getLogger, args=('from another thread',), daemon=True)\n"
        "logs.start()\n"
        "logs.join(timeout=10)\n"  # it takes logging's module lock, which the fork's hooks took and give back
        "print('logging is locked' if logs.is_alive() else 'logging is free')\n"
    )
    ran = _python(program)
    assert ran.stdout.splitlines() == ["interrupted in _try", "logging is free"], ran.stdout + ran.stderr
    assert "Exception ignored" not in ran.stderr, ran.stderr
    assert ran.returncode == 0, ran.stderr


def test_a_forks_child_neither_raises_its_parents_sigterm_nor_holds_back_its_own():
    """A fork's child leaves the block its parent entered (or never does, as a preexec_fn's child): what the
    parent's block noted is not the child's, and SIGTERM still interrupts the child at once."""
    program = """
import os, signal
from grader import interrupts
interrupts.install()
parent = os.getpid()
try:
    with interrupts.deferred():
        os.kill(parent, signal.SIGTERM)  # handled as os.kill returns: noted, not raised
        print("not raised in the block", flush=True)
        left = os.fork()
        stays = os.fork() if left else -1
        if stays == 0:  # a child still in the block its parent entered, sent SIGTERM itself
            try:
                os.kill(os.getpid(), signal.SIGTERM)
            except KeyboardInterrupt:
                os._exit(3)
            os._exit(4)
except KeyboardInterrupt:
    if os.getpid() != parent:
        os._exit(5)  # the first child raised its parent's SIGTERM
    print("raised as the block ended", flush=True)
else:
    if os.getpid() != parent:
        os._exit(0)
    print("never raised", flush=True)
print("children:", *(os.waitstatus_to_exitcode(os.waitpid(child, 0)[1]) for child in (left, stays)))
"""
    ran = _python(program)
    assert ran.stdout.splitlines() == ["not raised in the block", "raised as the block ended", "children: 0 3"], (
        ran.stdout + ran.stderr
    )


def test_a_block_entered_off_the_main_thread_holds_nothing_back():
    program = """
import os, signal, threading, time
from grader import interrupts
interrupts.install()
entered, done = threading.Event(), threading.Event()
def fork_point():
    with interrupts.deferred():
        entered.set()
        done.wait(10)
threading.Thread(target=fork_point).start()
entered.wait(10)
try:
    os.kill(os.getpid(), signal.SIGTERM)
    print("held back")
except KeyboardInterrupt:
    print("interrupted at once")
done.set()
"""
    ran = _python(program)
    assert ran.stdout.splitlines() == ["interrupted at once"], ran.stdout + ran.stderr


# --- every fork of grader/ is guarded ---------------------------------------------------------------------------


def _is_guard(item: ast.withitem) -> bool:
    call = item.context_expr
    return isinstance(call, ast.Call) and getattr(call.func, "attr", getattr(call.func, "id", "")) == "deferred"


def _forks(call: ast.Call) -> bool:
    """os.fork(), or a call with a preexec_fn (subprocess.Popen's runs the at-fork hooks)."""
    func = call.func
    is_fork = isinstance(func, ast.Attribute) and func.attr == "fork" and getattr(func.value, "id", "") == "os"
    return is_fork or any(keyword.arg == "preexec_fn" for keyword in call.keywords)


def _unguarded_forks(path: Path) -> list[int]:
    tree = ast.parse(path.read_text(), str(path))
    guarded = {
        id(node)
        for block in ast.walk(tree)
        if isinstance(block, ast.With) and any(_is_guard(item) for item in block.items)
        for statement in block.body
        for node in ast.walk(statement)
    }
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and _forks(node) and id(node) not in guarded
    ]


@pytest.mark.parametrize("path", sorted(GRADER.rglob("*.py")), ids=lambda p: str(p.relative_to(GRADER)))
def test_every_fork_of_the_grader_is_in_a_deferred_block(path):
    assert not _unguarded_forks(path), (
        f"{path}: a fork outside `with interrupts.deferred():` at lines {_unguarded_forks(path)}"
    )


def test_the_fork_check_sees_an_unguarded_fork(tmp_path):
    planted = tmp_path / "planted.py"
    planted.write_text(
        "import os, subprocess\n"
        "from grader import interrupts\n"
        "with interrupts.deferred():\n"
        "    guarded = os.fork()\n"
        "bare = os.fork()\n"
        "subprocess.Popen(['true'], preexec_fn=os.setsid)\n"
    )
    assert _unguarded_forks(planted) == [5, 6]
