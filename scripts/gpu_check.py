"""The GPU host's acceptance check (`make gpu-check REPORT=dir`): named steps, each writing a log and one line of the
report's summary as it ends, so that a check cut short still leaves a report of what it finished.

    python scripts/gpu_check.py --report DIR [--steps "doctor selftest"] [--problems "softmax attention"]
                                [--budget SECONDS] [--fixture-budget SECONDS] [--shard K/N]

The steps (gpu_check_steps.py says what each runs and how it is judged): doctor, tests-adversarial, tests-timing,
tests-rest, selftest, validate-timing, profile, container. The report folder holds summary.txt and one <step>.log
per step, each kept under 16 MiB (its head and tail, when a step says more), nothing in subfolders. A
step run again into the same folder appends to its log and adds a summary line; the last line of a step is its
latest run. Every line of a log is stamped with the UTC time.

--shard K/N runs part K (from 0) of N of each test step's tests (tests-adversarial, tests-timing, tests-rest; its
summary line is named STEP[K/N]): N calls, one per part, run every test once, and each part can run on a GPU of
its own (CUDA_VISIBLE_DEVICES), each into a report of its own.

--budget is the invocation's whole time: each command gets what is left of it, so that the step running when it
runs out is stopped and reported ("time limit") before an outer limit kills the check unreported. SIGTERM, SIGINT
and SIGHUP stop the running step (its whole process group) and report it as "killed".

A script, not a grader command: it runs the test suite (not part of the installed grader), the grader's CLI as an
operator would, and Docker's tooling; and it must still write its report when the grader itself cannot start.
Standard library only.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import gpu_check_steps as steps

REPO = Path(__file__).resolve().parents[1]
LOG_CAP = 16 * 2**20 - 2**16  # bytes a log may reach; then its middle is cut
LOG_HEAD = 2 * 2**20  # what is kept of its beginning when it is cut
KILL_GRACE_S = 10  # after SIGTERM to a step's process group, before SIGKILL


class Interrupted(BaseException):
    """The check was asked to stop (SIGTERM, SIGINT, SIGHUP); a BaseException, so that no step's handler eats it."""


def stamp() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


class Log:
    """One step's log: every line stamped; past LOG_CAP its middle is cut, keeping the head and the newest lines."""

    def __init__(self, path: Path):
        self.path = path
        self.lock = threading.Lock()
        self.file = open(path, "ab")

    def line(self, text: str) -> None:
        data = f"{stamp()} {text}\n".encode(errors="replace")
        with self.lock:
            self.file.write(data)
            self.file.flush()
            if self.file.tell() > LOG_CAP:
                self._cut()

    def _cut(self) -> None:
        self.file.close()
        data = self.path.read_bytes()
        head, tail = data[:LOG_HEAD], data[-(LOG_CAP // 2) :]
        marker = f"{stamp()} [... {len(data) - len(head) - len(tail)} bytes of this log cut ...]\n".encode()
        self.path.write_bytes(head + b"\n" + marker + tail)
        self.file = open(self.path, "ab")

    def close(self) -> None:
        self.file.close()


@dataclass
class Ran:
    """How a command ended: its exit status (127: it could not start), its stdout, whether time ran out, and the last
    line it printed on either stream (what a failure's summary line quotes)."""

    rc: int
    out: str
    timed_out: bool = False
    last: str = ""


class Context:
    """What a step runs commands through: the log, the environment, the deadline, and the check's options."""

    def __init__(self, log: Log, env: dict[str, str], deadline: float | None, options: argparse.Namespace):
        self.log, self.env, self.deadline, self.options = log, env, deadline, options
        self.python, self.repo = sys.executable, REPO
        self.out_of_time = False
        self.last = ""
        self.started = 0  # commands started (a step that started none was not run at all)

    def grader(self, *args: str) -> list[str]:
        return [self.python, "-m", "grader.cli.main", *args]

    def left_s(self) -> float | None:
        return None if self.deadline is None else self.deadline - time.monotonic()

    def run(self, argv: list[str], *, env: dict[str, str] | None = None, limit_s: float | None = None) -> Ran:
        """Runs argv in its own process group, its stdout and stderr into the log; stopped at the deadline."""
        left = self.left_s()
        limit = min(x for x in (left, limit_s, float("inf")) if x is not None)
        self.log.line("$ " + " ".join(argv))
        if limit <= 0:
            self.out_of_time = True
            self.log.line("not started: the check's time budget is spent")
            return Ran(124, "", timed_out=True)
        self.started += 1
        try:
            proc = subprocess.Popen(
                argv,
                cwd=REPO,
                env={**self.env, **(env or {})},
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
            )
        except OSError as error:
            self.log.line(f"could not start: {error}")
            return Ran(127, "", last=str(error))
        out: list[str] = []
        self.last = ""
        readers = [
            threading.Thread(target=self._read, args=(proc.stdout, "", out), daemon=True),
            threading.Thread(target=self._read, args=(proc.stderr, "stderr: ", None), daemon=True),
        ]
        for reader in readers:
            reader.start()
        try:
            rc = proc.wait(timeout=None if limit == float("inf") else limit)
            timed_out = False
        except subprocess.TimeoutExpired:
            self.log.line(f"time limit: stopping it after {limit:.0f} s")
            rc, timed_out = stop(proc), True
            self.out_of_time = left is not None and limit >= left
        except BaseException:
            stop(proc)
            raise
        finally:
            for reader in readers:
                reader.join(timeout=5)
        self.log.line(f"exit {rc}" + (" (time limit)" if timed_out else ""))
        return Ran(rc, "".join(out), timed_out, self.last)

    def _read(self, stream, prefix: str, keep: list[str] | None) -> None:
        for raw in iter(stream.readline, b""):
            text = raw.decode(errors="replace")
            if keep is not None:
                keep.append(text)
            if text.strip():
                self.last = text.strip()
            self.log.line(prefix + text.rstrip("\n"))
        stream.close()


def stop(proc: subprocess.Popen) -> int:
    """SIGTERM to the process group (the grader stops its gradings and removes their folders), SIGKILL after a grace."""
    for sig, wait_s in ((signal.SIGTERM, KILL_GRACE_S), (signal.SIGKILL, 30)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            pass
        try:
            return proc.wait(timeout=wait_s)
        except subprocess.TimeoutExpired:
            continue
    return proc.wait()


def summary_line(name: str, status: str, seconds: float, figures: str) -> str:
    return f"{name:<18} {status:<5} {seconds:8.1f} s  {' '.join(figures.split())}\n"


def append(path: Path, text: str) -> None:
    with open(path, "a") as summary:
        summary.write(text)
        summary.flush()
        os.fsync(summary.fileno())


def header(env: dict[str, str], names: list[str]) -> str:
    """Where and what: the time, the host, the GPU (nvidia-smi), the grader's build and the steps."""

    def first_line(argv: list[str]) -> str:
        try:
            done = subprocess.run(argv, cwd=REPO, env=env, capture_output=True, text=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired) as error:
            return f"({error})"
        said = (done.stdout.strip() or done.stderr.strip() or f"exit {done.returncode}").splitlines()
        return said[0] if done.returncode == 0 else f"(exit {done.returncode}: {said[-1][:200]})"

    gpu = first_line(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"])
    gpu = f"none visible {gpu}" if gpu.startswith("(") else gpu
    grader = first_line([sys.executable, "-m", "grader.cli.main", "--version"])
    return f"# {stamp()} gpu-check on {socket.gethostname()}: GPU {gpu}; {grader}; steps: {' '.join(names)}\n"


def check_environment() -> tuple[dict[str, str], str]:
    """The steps' environment: unbuffered output, wide plain tables, and a results database of the check's own."""
    data = tempfile.mkdtemp(prefix="kerneljudge-check-")
    env = {k: v for k, v in os.environ.items() if k != "KERNELJUDGE_DB"}
    env.update(PYTHONUNBUFFERED="1", NO_COLOR="1", KERNELJUDGE_DATA=data)
    env.setdefault("COLUMNS", "200")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH", "")) if p)
    return env, data


def shard(text: str) -> str:
    """--shard's value, K/N with 0 <= K < N."""
    k, _, n = text.partition("/")
    if not (k.isdigit() and n.isdigit() and int(k) < int(n)):
        raise argparse.ArgumentTypeError(f"K/N with 0 <= K < N, not {text!r}")
    return f"{int(k)}/{int(n)}"


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--report", required=True, type=Path, help="the report folder (made if missing)")
    parser.add_argument(
        "--steps", default=" ".join(steps.ALL), help=f"steps, in order (default: {' '.join(steps.ALL)})"
    )
    parser.add_argument("--problems", default="", help="problems for selftest and validate-timing (default: all)")
    parser.add_argument("--budget", type=float, help="seconds for the whole invocation (default: no limit)")
    parser.add_argument(
        "--fixture-budget", type=float, default=240, help="seconds for the container step's fixture comparison"
    )
    parser.add_argument(
        "--shard", type=shard, help="K/N: part K (from 0) of N of the test steps' tests (default: all of them)"
    )
    options = parser.parse_args()
    names = options.steps.split()
    unknown = [n for n in names if n not in steps.ALL]
    if unknown or not names:
        parser.error(f"unknown step {' '.join(unknown)!r}: the steps are {', '.join(steps.ALL)}")
    options.problems = options.problems.split()
    deadline = time.monotonic() + options.budget if options.budget else None
    options.report.mkdir(parents=True, exist_ok=True)
    summary = options.report / "summary.txt"
    env, data = check_environment()

    def interrupted(signum, frame):
        raise Interrupted(signal.Signals(signum).name)

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, interrupted)
    failed = False
    try:
        append(summary, header(env, names))
        for name in names:
            label = f"{name}[{options.shard}]" if options.shard and name in steps.SHARDED else name
            log = Log(options.report / f"{name}.log")
            log.line(f"== {label}: started (gpu-check {' '.join(sys.argv[1:])})")
            context = Context(log, env, deadline, options)
            started = time.monotonic()
            try:
                status, figures = steps.ALL[name](context)
            except Interrupted as signal_name:
                log.line(f"== {label}: killed by {signal_name}")
                append(summary, summary_line(label, "fail", time.monotonic() - started, f"killed by {signal_name}"))
                return 143
            except Exception as error:  # a step's own failure is reported like any other, and the next runs
                status, figures = "fail", f"the check itself failed: {type(error).__name__}: {error}"
            finally:
                log.close()
            if context.out_of_time and not context.started:
                status, figures = "fail", f"not run: the budget of {options.budget:.0f} s was spent"
            elif context.out_of_time:  # a step cut short says so, whatever it made of the rest
                status, figures = "fail", f"time limit (the budget of {options.budget:.0f} s ran out); {figures}"
            seconds = time.monotonic() - started
            with open(log.path, "a") as tail:
                tail.write(f"{stamp()} == {label}: {status} after {seconds:.1f} s: {figures}\n")
            append(summary, summary_line(label, status, seconds, figures))
            failed |= status == "fail"
    except Interrupted:
        return 143
    finally:
        shutil.rmtree(data, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
