"""The adversarial suite (docs/security.md): hostile and cheating submissions must get the verdict
their header states, nothing they do may escape the sandbox, and the grader must carry on unharmed.

Everything runs in this one process, in file order:
1. the best reference solution of softmax is graded in submit mode and its score recorded;
2. every fixture below tests/adversarial/<problem>/ is graded through grader.judge.pipeline.grade, and after each
   one the test checks that nothing escaped: the TCP and Unix listeners heard nothing, no kerneljudge-escape
   file (or POSIX message queue) exists anywhere it looks, no SysV IPC object of the sandbox is left, no process
   of the sandbox's uids is alive, no run folder or trusted folder was left behind, the planted secrets and the
   database are unchanged;
3. the same checks once more over the whole suite;
4. the reference solution is graded again: still accepted, with a score close to the first one (on the CPU
   track, relative to a probe of the machine's speed timed beside each grading, since the load of a shared
   machine moves wall-clock times far more than any harm a fixture could do).

Fixture headers (tests/conftest.py's, with additions of this suite's own):
    // expect: a|b             either verdict will do (a cheat that several possible fixes catch differently)
    // xfail: <why>            a defence the grader lacks today: the test is xfail(strict=True) until it is
                               fixed, and docs/security.md says what to change (no other kind of xfail: a
                               fixture whose outcome depends on chance is rewritten until it does not)
    // memory_limit_gib: <n>   grade with the harness's memory limit lowered to n GiB
    // honest_floor_us: <benchmark> <us>
                               a timing cheat that a fix may turn into honest work: `accepted` also passes,
                               if that benchmark's median is at least <us> (an empty call takes ~1 us, an
                               honest one far more than <us>), so the cheat gained nothing

The hostile fixtures (items 11-13 of the issue) compute the right answer only if their hostile action
worked and leave the output unwritten otherwise, so `wrong_answer` proves the action failed.

The suite needs root (as CI runs it): the sentinels live under /var/lib, the sandbox's uid switch and
read-only root need it, and one check mounts a tmpfs.
"""

from __future__ import annotations

import math
import os
import re
import shutil
import signal
import socket
import stat
import subprocess
import threading
import time
from collections.abc import Collection
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from conftest import REPO, fixture_params

from grader import tracks
from grader.build import compiler
from grader.judge import pipeline
from grader.verdict.status import Status
from grader.problems import solutions
from grader.problems.catalog import load_problem
from grader.run import request
from grader.sandbox import local as sandbox
from grader.sandbox import uids

pytestmark = pytest.mark.slow  # full gradings: `make test-fast` leaves them out

HERE = Path(__file__).parent
# The suite's own run folders, beside nobody else's: other graders on the host (other engineers' tests) use
# the default one, and their runs are none of the suite's business.
SUITE_RUNS = Path(f"/var/lib/kerneljudge-suite-runs-{os.getpid()}")
LEASED: set[int] = set()  # every uid this process leased for a run (uids.lease is wrapped to record them)
# The sentinels' folders, this process's own: fixtures name them without the suffix, and each source is graded
# with this run's folders in their place (as the port below), so two suites on one host (one per GPU) never
# see, or remove, each other's.
FIXTURE_SENTINEL = b"/var/lib/kerneljudge-sentinel"
FIXTURE_TMP_SENTINEL = b"/tmp/kerneljudge-sentinel"
SENTINEL = Path(f"{FIXTURE_SENTINEL.decode()}-{os.getpid()}")  # outside /tmp: the sandbox does not hide it
TMP_SENTINEL = Path(f"{FIXTURE_TMP_SENTINEL.decode()}-{os.getpid()}")  # inside /tmp: hidden by the private /tmp
SECRET = "kerneljudge-sentinel-secret-7f3a9c"
DB_MARKER = "kerneljudge-db-secret"
ENV_SECRET = "kerneljudge-env-secret-51d2"
# Fixtures that connect to the suite's listeners name port 47111; the suite listens on an ephemeral port and grades
# each source with that number put in its place, so two runs on one host never collide.
FIXTURE_PORT = b"47111"
TORCH_LIB_MARKER = b"KERNELJUDGE_HOST_TORCH_LIB"  # fixtures that load host libraries look in this folder
REPO_PARENT_MARKER = b"KERNELJUDGE_REPO_PARENT"  # fixtures that read host files look in this folder
PORT = 0  # the listeners' port, chosen by the kernel when the suite starts (sentinels)
ESCAPE_NAME = "kerneljudge-escape"
# Where an escaped write would land (fixtures name their files kerneljudge-escape*).
ESCAPE_DIRS = [
    Path("/tmp"),
    Path("/var/tmp"),
    Path("/dev/shm"),
    Path("/dev/mqueue"),
    Path("/run/lock"),
    Path("/run"),
    Path("/etc"),
    Path("/root"),
    Path("/"),
    SENTINEL,
    SENTINEL / "open",
    SENTINEL / "mnt",
    TMP_SENTINEL,
    REPO,
]
IPC_KEY = 0x4B4A0017  # the key tests/adversarial/softmax/leftover_ipc.cpp uses
GRADER_SLACK_S = 20  # a grade may take this much longer than the harness's own wall limit
# CPU track, on a small shared CI machine: only a slowdown counts, only past 2x, and the best grading after the
# suite is held against the slower of the two before it. Two gradings a minute apart on the 2-core CI machine
# differed by 1.8x (7.95 and 14.2 x the speed probe), once by 3.6x (4.2 and 15.4: against the faster one, a quiet
# machine read 2.4x slower after the suite), so a tighter bound fails on noise; the leftover processes a degraded
# judge would keep are checked directly above.
CPU_SCORE_SLOWDOWN = 2.0
GPU_SCORE_TOLERANCE = 0.05  # the 5%, on the GPU


# --- fixtures and their extra headers ------------------------------------------------------------------------


def _extra_headers(path: Path) -> dict[str, str]:
    found = {}
    for line in path.read_text().splitlines()[:12]:
        match = re.match(r"\s*(?://|#)\s*(xfail|memory_limit_gib|honest_floor_us):\s*(.+?)\s*$", line)
        if match:
            found[match.group(1)] = match.group(2)
    return found


def _params() -> list:
    params = []
    for param in fixture_params(HERE):
        (fixture,) = param.values
        extra = _extra_headers(fixture.path)
        marks = list(param.marks)
        if "xfail" in extra:
            marks.append(pytest.mark.xfail(strict=True, reason=extra["xfail"]))
        params.append(pytest.param(fixture, marks=marks, id=param.id))
    return params


PARAMS = _params()


# --- the sentinels: listeners, secrets, a database, an extra mount ------------------------------------------


class _Listener(threading.Thread):
    """Accepts connections on a socket and records who came and what they sent."""

    def __init__(self, sock: socket.socket, where: str):
        super().__init__(daemon=True)
        self.sock, self.where = sock, where
        self.heard: list[str] = []
        self.sock.settimeout(0.2)
        self._halt = threading.Event()

    def run(self):
        while not self._halt.is_set():
            try:
                conn, _ = self.sock.accept()
            except (TimeoutError, OSError):
                continue
            conn.settimeout(1.0)
            try:
                data = conn.recv(4096)
            except OSError:
                data = b""
            conn.close()
            self.heard.append(f"{self.where}: connection, sent {data[:80]!r}")

    def stop(self):
        self._halt.set()
        self.join()
        self.sock.close()


@dataclass
class Sentinels:
    listeners: list[_Listener] = field(default_factory=list)
    other_mount: bool = False
    db_url: str | None = None
    db_rows: int | None = None
    sandbox_uids: set[int] = field(default_factory=set)  # every uid this process leased (a fresh one per run)

    def escapes(self) -> list[str]:
        """Everything that shows something got out since the last call (and clears it for the next fixture)."""
        found = []
        for listener in self.listeners:
            found += listener.heard
            listener.heard.clear()
        for folder in ESCAPE_DIRS:
            try:
                entries = list(folder.iterdir())
            except OSError:
                continue
            for entry in entries:
                if entry.name.startswith(ESCAPE_NAME):
                    found.append(f"{entry} exists")
                    _remove(entry)
        for path in (SENTINEL / "secret", TMP_SENTINEL / "secret"):
            if path.read_text() != SECRET:
                found.append(f"{path} was changed")
        if self.db_url and _db_rows(self.db_url) != self.db_rows:
            found.append("the grader's database was written to")
        alive = self.sandbox_processes()
        if alive:
            found.append(f"{len(alive)} processes of the sandbox's uids outlived the run (pids {alive[:5]}...)")
            for uid in {_owner(Path(f"/proc/{pid}")) for pid in alive} - {None}:
                _kill_uid(uid)  # so that they do not spoil the next fixture (the uid's process limit)
        unreaped = _wait_for_reaping(self.sandbox_uids)
        if unreaped:
            found.append(f"{len(unreaped)} killed processes of the sandbox's uids were not reaped in 15 s")
        found += [f"run folder {p} was left behind" for p in self.leftover_run_dirs()]
        found += [f"SysV IPC object left on the host: {line}" for line in _sysv_objects(self.sandbox_uids)]
        return found

    def sandbox_processes(self) -> list[int]:
        return _processes_of(self.sandbox_uids)

    def leftover_run_dirs(self) -> list[Path]:
        base = sandbox.runs_base()
        return [
            p
            for p in base.iterdir()
            if (p.name.startswith("run-") and _owner(p) in (self.sandbox_uids or ())) or p.name.startswith("trusted-")
        ]


def _sysv_objects(uids_: Collection[int] | None) -> list[str]:
    """SysV shared memory, message queues and semaphores with the fixtures' key or owned by a sandbox uid."""
    found = []
    for kind, uid_column in (("shm", 7), ("msg", 7), ("sem", 4)):
        try:
            lines = Path("/proc/sysvipc", kind).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            owner = int(fields[uid_column]) if len(fields) > uid_column else None
            if int(fields[0]) == IPC_KEY or owner in (uids_ or ()):
                found.append(f"{kind} {line.strip()[:80]}")
    return found


def _owner(path: Path) -> int | None:
    try:
        return path.lstat().st_uid
    except OSError:
        return None


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


def _db_rows(url: str) -> int:
    from grader.records import storage

    return len(storage.list_submissions(db_url=url))


def _tcp_listener(family: int, address: str) -> _Listener | None:
    """A listener on PORT, or on a port the kernel picks (and PORT becomes it) while PORT is still 0."""
    global PORT
    try:
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((address, PORT))
        sock.listen(16)
    except OSError:
        return None
    PORT = PORT or sock.getsockname()[1]
    return _Listener(sock, f"tcp {address}:{PORT}")


def _source_of(fixture) -> bytes:
    """The fixture's source, with this run's sentinel folders and listeners' port in place of those it names, and
    the host paths it looks for in place of their markers: the grader's own PyTorch libraries, the repository's
    parent folder."""
    import torch

    markers = {
        FIXTURE_SENTINEL: str(SENTINEL).encode(),
        FIXTURE_TMP_SENTINEL: str(TMP_SENTINEL).encode(),
        FIXTURE_PORT: str(PORT).encode(),
        TORCH_LIB_MARKER: str(Path(torch.__file__).parent / "lib").encode(),
        REPO_PARENT_MARKER: str(REPO.parent).encode(),
    }
    source = fixture.path.read_bytes()
    for marker, value in markers.items():
        source = source.replace(marker, value)
    return source


def _unix_listener(path: Path) -> _Listener:
    path.unlink(missing_ok=True)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(str(path))
    path.chmod(0o666)
    sock.listen(16)
    return _Listener(sock, f"unix {path}")


def _store_secret_submission(url: str) -> int | None:
    """A database made by grader.records.storage itself, holding one submission with the marker in its source."""
    try:
        from grader.verdict.model import Verdict
        from grader.records import storage

        verdict = Verdict(
            status=Status.ACCEPTED,
            message="",
            problem="softmax",
            track="cpu",
            submission_id="sentinel0001",
            user="someone-else",
        )
        storage.save_verdict(verdict, f"// {DB_MARKER}: somebody else's kernel\n", db_url=url)
        return _db_rows(url)
    except Exception:  # storage missing or broken: the database fixture is skipped
        return None


@pytest.fixture(scope="module")
def sentinels():
    if os.geteuid() != 0:
        pytest.skip("the adversarial suite runs as root, as CI does (sentinels under /var/lib, the sandbox's uid)")
    for folder in (SENTINEL, TMP_SENTINEL):
        _unmount(SENTINEL / "mnt")
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        folder.chmod(0o755)
        (folder / "secret").write_text(SECRET)
        (folder / "secret").chmod(0o600)
    (SENTINEL / "open").mkdir()
    (SENTINEL / "open").chmod(0o1777)
    (SENTINEL / "mnt").mkdir()
    found = Sentinels(sandbox_uids=LEASED)
    real_lease = uids.lease

    def lease_and_record() -> int:
        uid = real_lease()
        LEASED.add(uid)
        return uid

    uids.lease = lease_and_record
    found.other_mount = (
        subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=1m,mode=1777", "kerneljudge-sentinel", str(SENTINEL / "mnt")],
            capture_output=True,
        ).returncode
        == 0
    )
    found.listeners = [
        one
        for one in (_tcp_listener(socket.AF_INET, "127.0.0.1"), _tcp_listener(socket.AF_INET6, "::1"))
        if one is not None
    ]
    assert found.listeners, f"cannot listen on 127.0.0.1:{PORT}"
    found.listeners.append(_unix_listener(SENTINEL / "listener.sock"))
    for listener in found.listeners:
        listener.start()
    found.db_url = f"sqlite:///{SENTINEL / 'data' / 'kerneljudge.db'}"
    found.db_rows = _store_secret_submission(found.db_url)
    if found.db_rows is None:
        found.db_url = None
    saved_env = {k: os.environ.get(k) for k in ("KERNELJUDGE_TEST_SECRET", "AWS_SECRET_ACCESS_KEY", "KERNELJUDGE_RUNS")}
    os.environ["KERNELJUDGE_RUNS"] = str(SUITE_RUNS)
    os.environ["KERNELJUDGE_TEST_SECRET"] = ENV_SECRET
    os.environ["AWS_SECRET_ACCESS_KEY"] = ENV_SECRET
    leftovers = found.escapes()  # whatever an earlier, interrupted run left
    try:
        yield found
    finally:
        for key, value in saved_env.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        for listener in found.listeners:
            listener.stop()
        uids.lease = real_lease
        _unmount(SENTINEL / "mnt")
        shutil.rmtree(SENTINEL, ignore_errors=True)
        shutil.rmtree(TMP_SENTINEL, ignore_errors=True)
        for run in SUITE_RUNS.iterdir() if SUITE_RUNS.is_dir() else []:
            sandbox.remove_workdir(run)
        shutil.rmtree(SUITE_RUNS, ignore_errors=True)
    del leftovers


def _unmount(path: Path) -> None:
    if os.path.ismount(path):
        subprocess.run(["umount", "-l", str(path)], capture_output=True)


# --- grading with a deadline ------------------------------------------------------------------------------


def _deadline_s(fixture, problem) -> float:
    limit = fixture.time_limit_s or problem.time_limit_s
    benches = problem.benchmarks_for(fixture.track) if fixture.mode == "submit" else []
    wall = pipeline._wall_limit_s(limit, fixture.track, [request.Case(b.name, b, "bench", 0) for b in benches])
    return wall + GRADER_SLACK_S + (120 if fixture.track != "cpu" else 0)  # + nvcc or JIT, a float64 check on the GPU


def _fifos(uids_: Collection[int] | None) -> list[str]:
    """The FIFOs in the sandbox's run folders."""
    found = []
    for run in sandbox.runs_base().iterdir():
        if uids_ is not None and _owner(run) not in uids_:
            continue
        for folder, _dirs, files in os.walk(run):
            for name in files:
                path = os.path.join(folder, name)
                try:
                    if stat.S_ISFIFO(os.lstat(path).st_mode):
                        found.append(path)
                except OSError:
                    pass
    return found


def _processes_of(uids_: Collection[int] | None, zombies: bool = False) -> list[int]:
    """The processes of any of `uids_`; zombies (killed, not yet reaped by init) only if asked for."""
    if uids_ is None:
        return []
    found = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit() and sandbox._owner(entry.path) in uids_:
            try:
                state = Path(entry.path, "stat").read_text().rsplit(")", 1)[1].split()[0]
            except (OSError, IndexError):
                continue
            if zombies or state != "Z":
                found.append(int(entry.name))
    return found


def _wait_for_reaping(uids_: Collection[int] | None, seconds: float = 15.0) -> list[int]:
    """Killed processes stay zombies until init reaps them, and count against their uid's process limit until
    then: wait for them to go. Returns the ones still there."""
    until = time.monotonic() + seconds
    while _processes_of(uids_, zombies=True) and time.monotonic() < until:
        time.sleep(0.1)
    return _processes_of(uids_, zombies=True)


def _kill_uid(uid: int) -> None:
    """Kill every process of `uid`, forking ones included: kill(-1, SIGKILL) sent as that uid reaches all of
    them in one pass that a fork cannot slip through (the change docs/security.md asks of the sandbox)."""
    for _ in range(100):
        if not _processes_of(range(uid, uid + 1)):
            return
        pid = os.fork()
        if pid == 0:
            try:
                os.setgroups([])
                os.setgid(uid)
                os.setuid(uid)
                os.kill(-1, signal.SIGKILL)
            finally:
                os._exit(0)
        os.waitpid(pid, 0)
        time.sleep(0.05)
    raise AssertionError(f"could not kill the processes of uid {uid}")


def _unblock_fifos(uids_: Collection[int] | None) -> list[str]:
    """Open for writing every FIFO in the sandbox's run folders, so a grader blocked opening one goes on."""
    opened = []
    for path in _fifos(uids_):
        try:
            os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
            opened.append(path)
        except OSError:
            pass
    return opened


def grade_with_deadline(fixture, uids_: Collection[int] | None, memory_limit_gib: float | None = None):
    """(verdict or None, seconds, hung): the grade runs in a thread; a grader that does not answer within the
    deadline is reported as hung (and freed from a FIFO, the one way known to hang it)."""
    problem = load_problem(fixture.problem)
    result: dict = {}

    def work():
        try:
            result["verdict"] = pipeline.grade(
                problem,
                _source_of(fixture),
                fixture.path.name,
                track=fixture.track,
                mode=fixture.mode,
                time_limit_s=fixture.time_limit_s,
            )
        except BaseException as error:  # the grader must never raise for a submission's sake
            result["error"] = error

    saved_memory = pipeline.HARNESS_MEMORY
    if memory_limit_gib:
        pipeline.HARNESS_MEMORY = int(float(memory_limit_gib) * (1 << 30))
    started = time.monotonic()
    deadline = started + _deadline_s(fixture, problem)
    try:
        worker = threading.Thread(target=work, daemon=True)
        worker.start()
        stuck_since = None
        while worker.is_alive() and time.monotonic() < deadline:
            worker.join(1.0)
            # The run is over (no process of its uid left) yet a FIFO lies in its folder: the grader is blocked
            # on it. Ten seconds of that is enough to call it hung.
            stuck = _fifos(uids_) and not _processes_of(uids_)
            stuck_since = (stuck_since or time.monotonic()) if stuck else None
            if stuck_since and time.monotonic() - stuck_since > 10:
                break
        hung = worker.is_alive()
        while worker.is_alive():
            _unblock_fifos(uids_)
            worker.join(1.0)
            if time.monotonic() - started > 600:
                break
    finally:
        pipeline.HARNESS_MEMORY = saved_memory
    if "error" in result:
        raise result["error"]
    return result.get("verdict"), time.monotonic() - started, hung


# --- the suite ------------------------------------------------------------------------------------------

SCORES: dict[str, list[float]] = {}  # score, or on the CPU score / speed probe, per grading
LOAD: dict[str, float] = {}  # 1-minute load average while the reference was timed
RESULTS: list[tuple[str, str, str, float]] = []  # (fixture, expected, got, seconds), for the summary


def _speed_probe_us() -> float:
    """How fast this machine is right now: PyTorch's own softmax on the CPU benchmarks' sizes, best of five
    each, geometric mean. Timed beside each CPU grading of the reference, so that the ratio score / probe
    cancels what the load of a shared machine does to both (we saw one solution score 5.9 and 32.6 ms within
    a minute), and what is left is what the suite did to the grader."""
    import torch

    times = []
    for bench in load_problem("softmax").benchmarks_for("cpu"):
        x = torch.rand(bench.sizes["M"], bench.sizes["N"])
        samples = []
        for _ in range(5):
            start = time.perf_counter()
            torch.softmax(x, dim=-1)
            samples.append(time.perf_counter() - start)
        times.append(min(samples) * 1e6)
    return float(math.prod(times) ** (1 / len(times)))


def _reference_scores(track: str, times: int = 2) -> list[float]:
    best = solutions.best("softmax", track)
    scores = []
    for _attempt in range(times):
        verdict = pipeline.grade(load_problem("softmax"), best.read_bytes(), best.name, track=track, mode="submit")
        LOAD[f"{track} {len(LOAD)}"] = os.getloadavg()[0]
        assert verdict.status == Status.ACCEPTED, verdict.message
        assert verdict.score_us, "no score"
        scores.append(verdict.score_us / _speed_probe_us() if track == "cpu" else verdict.score_us)
    return scores


@pytest.mark.every_shard
@pytest.mark.parametrize("track", ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)])
def test_reference_score_before_the_suite(track, sentinels):
    SCORES[f"{track} before"] = _reference_scores(track)
    assert not sentinels.escapes()


@pytest.fixture(scope="module")
def prebuilt(request, sentinels):
    """Every compiled fixture this session grades, built before the first grading with one compile per core (as
    grade-many builds): each grading then finds its library in the build cache. Only what will run: a GPU
    fixture on a host without a GPU is skipped, so not built."""
    chosen = [
        item.callspec.params["fixture"]
        for item in request.session.items
        if getattr(item, "function", None) is test_fixture and not item.get_closest_marker("skip")
    ]

    def build(fixture) -> None:
        compiler.build_submission(load_problem(fixture.problem), _source_of(fixture), fixture.path.name, fixture.track)

    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        list(pool.map(build, [f for f in chosen if not tracks.get(f.track).is_python]))


@pytest.mark.parametrize("fixture", PARAMS)
def test_fixture(fixture, sentinels, prebuilt):
    extra = _extra_headers(fixture.path)
    if fixture.path.name.startswith("write_outside_other_mount") and not sentinels.other_mount:
        pytest.skip("could not mount the stand-in tmpfs")
    if fixture.path.name.startswith("read_grader_database") and not sentinels.db_url:
        pytest.skip("grader.records.storage could not make the database")
    verdict, seconds, hung = grade_with_deadline(fixture, sentinels.sandbox_uids, extra.get("memory_limit_gib"))
    time.sleep(0.2)
    escaped = sentinels.escapes()
    got = verdict.status if verdict else "no verdict"
    RESULTS.append((str(fixture.path.relative_to(HERE)), fixture.expect, "hung" if hung else got, seconds))
    assert not hung, f"the grader hung: no verdict after {seconds:.0f} s (it was freed by opening a FIFO in out/)"
    assert verdict is not None
    assert not escaped, "escaped the sandbox: " + "; ".join(escaped)
    if verdict.status == Status.ACCEPTED and "honest_floor_us" in extra:
        bench, floor_us = extra["honest_floor_us"].split()
        medians = {b.name: b.median_us for b in verdict.benchmarks}
        assert medians.get(bench, 0.0) >= float(floor_us), (
            f"accepted with a fake time: {bench} took {medians.get(bench, 0.0):.2f} us, an honest call "
            f"takes more than {floor_us} us; expected {fixture.expect} or an honest time"
        )
        return
    assert verdict.status in fixture.expect.split("|"), verdict.message
    assert fixture.message in verdict.message, verdict.message


@pytest.mark.every_shard
@pytest.mark.parametrize("track", ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)])
def test_nothing_escaped_during_the_suite(track, sentinels):
    time.sleep(1.0)  # a daemon that lingered would show itself by now
    assert not sentinels.escapes()
    assert not sentinels.sandbox_processes()
    assert not _fifos(sentinels.sandbox_uids), "a FIFO from a run is still there"


@pytest.mark.every_shard
@pytest.mark.parametrize("track", ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)])
def test_reference_score_after_the_suite(track, sentinels):
    before = SCORES.get(f"{track} before")
    if not before:
        pytest.skip("the score before the suite was not taken (test selection)")
    after = _reference_scores(track)
    SCORES[f"{track} after"] = after
    baseline = max(before) if track == "cpu" else min(before)  # CPU: see CPU_SCORE_SLOWDOWN
    ratio = min(after) / baseline
    unit = "x the speed probe" if track == "cpu" else "us"
    print(
        f"\n{track}: reference score before {before} {unit}, after {after}: best after / {baseline:.4g} = {ratio:.3f}"
        f" (load average up to {max(LOAD.values(), default=0.0):.1f} on {os.cpu_count()} cores)"
    )
    assert not sentinels.escapes()
    if track == "cpu":
        assert ratio <= CPU_SCORE_SLOWDOWN, f"the score is {ratio:.2f}x slower after the suite (allowed 2x)"
    else:
        assert abs(ratio - 1) <= GPU_SCORE_TOLERANCE, (
            f"score moved by {100 * (ratio - 1):+.1f}% (allowed {100 * GPU_SCORE_TOLERANCE:.0f}%)"
        )


@pytest.mark.every_shard
@pytest.mark.parametrize("track", ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)])
def test_print_summary(track):
    """Not a check: the table of fixture -> verdict, for the log (pytest -s, or -rA); the GPU's includes the
    Python tracks' fixtures."""
    suffix = (".cu", ".py") if track == "cuda" else (".cpp",)
    lines = [
        f"{name:48s} {expected:26s} {got:14s} {seconds:6.1f} s"
        for name, expected, got, seconds in RESULTS
        if name.endswith(suffix)
    ]
    print("\n" + "\n".join(lines))
