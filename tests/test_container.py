"""The container sandbox, for real: a base image made here (debootstrap + docker import: no registry), the project's
image built on it from the real Dockerfile, the CPU track graded end to end in containers of it, and each of the
container's constraints proven from inside one.

Marked `docker`, and skipped with the reason where no Docker engine answers (.ci/docker-setup.sh starts one).
Run these alone with `pytest -m docker tests/test_container.py`. The first run on a machine builds the images
(a few minutes: debootstrap, apt, pip); later runs reuse Docker's layer cache and the cached base tarball.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import threading
import time
from pathlib import Path

import pytest
from conftest import fixture_params

from grader.judge import pipeline
from grader.problems.catalog import load_problem
from grader.sandbox import container, docker_engine, docker_run
from grader.sandbox import local as sandbox
from grader.verdict.status import Status

pytestmark = [pytest.mark.docker, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[1]
TEST_IMAGE = os.environ.get("KERNELJUDGE_TEST_IMAGE", "kerneljudge-test:local")
TEST_BASE = os.environ.get("KERNELJUDGE_TEST_BASE", "kerneljudge-base:bookworm")
BUILD_TIMEOUT_S = 1800
CONTAINER_MEMORY = 1 << 30  # the cap on every container here: the memory hog is stopped at 1 GiB

SOFTMAX = r"""
#include <cmath>
#include <cstddef>
static void softmax(const float* input, float* output, int M, int N) {
    for (int i = 0; i < M; ++i) {
        const float* x = input + (size_t)i * N;
        float* y = output + (size_t)i * N;
        float m = x[0];
        for (int j = 1; j < N; ++j) m = x[j] > m ? x[j] : m;
        double s = 0;
        for (int j = 0; j < N; ++j) { y[j] = std::exp(x[j] - m); s += y[j]; }
        for (int j = 0; j < N; ++j) y[j] = (float)(y[j] / s);
    }
}
"""

# Hostile submissions. Each computes the right answer only if its attack worked, so any verdict but accepted
# means the attack failed; the tests also look from outside for what it tried to leave behind.
NETWORK = (
    SOFTMAX
    + r"""
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
static bool reached() {
    int s = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(@PORT@);
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    bool ok = s >= 0 && connect(s, (sockaddr*)&a, sizeof a) == 0;
    if (ok) (void)!write(s, "leaked", 6);
    if (s >= 0) close(s);
    return ok;
}
void solve(const float* input, float* output, int M, int N) {
    if (reached()) softmax(input, output, M, N);
}
"""
)

FILE_ESCAPE = (
    SOFTMAX
    + r"""
#include <cstdio>
static bool escaped() {
    bool any = false;
    if (FILE* f = std::fopen("@SECRET@", "r")) { any = true; std::fclose(f); }
    const char* targets[] = {"/escaped", "/etc/escaped", "/var/tmp/escaped", "/opt/kerneljudge/escaped",
                             "../escaped", "../../escaped", "@HOSTDIR@/escaped"};
    for (const char* t : targets)
        if (FILE* f = std::fopen(t, "w")) { any = any || std::fputs("x", f) >= 0; std::fclose(f); }
    return any;
}
void solve(const float* input, float* output, int M, int N) {
    if (escaped()) softmax(input, output, M, N);
}
"""
)

FORK_BOMB = r"""
#include <unistd.h>
void solve(const float* input, float* output, int M, int N) {
    for (;;) fork();
}
"""

MEMORY_HOG = r"""
#include <cstdlib>
#include <cstring>
void solve(const float* input, float* output, int M, int N) {
    for (;;) {
        char* p = (char*)std::malloc(64 << 20);
        if (!p) std::abort();
        std::memset(p, 1, 64 << 20);
    }
}
"""

ENDLESS_LOOP = r"""
void solve(const float* input, float* output, int M, int N) {
    volatile long spin = 0;
    for (;;) spin = spin + 1;
}
"""


# --- the images -----------------------------------------------------------------------------------------------


def _make(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["make", "--no-print-directory", "-f", str(REPO / "docker.mk"), *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=BUILD_TIMEOUT_S,
    )


@pytest.fixture(scope="session")
def image() -> str:
    """The project's image, built once per session on a locally made base (both reused when already built)."""
    version, why = container.engine()
    if version is None:
        pytest.skip(f"no Docker engine can be reached ({why}); .ci/docker-setup.sh installs and starts one")
    if not shutil.which("make"):
        pytest.skip("make is not installed: the images are built through docker.mk")
    tarball = _make("-s", "--eval", "show:; @echo $(BASE_TARBALL)", "show").stdout.strip()
    if not shutil.which("debootstrap") and container.image_id(TEST_BASE) is None and not Path(tarball).is_file():
        pytest.skip(
            "no base image, no cached base tarball and no debootstrap to make one (apt-get install debootstrap)"
        )
    started = time.monotonic()
    base = _make("docker-base", f"LOCAL_BASE={TEST_BASE}")
    assert base.returncode == 0, f"make docker-base failed:\n{base.stdout[-3000:]}\n{base.stderr[-3000:]}"
    built = _make("docker-local", f"LOCAL_BASE={TEST_BASE}", f"IMAGE={TEST_IMAGE}")
    assert built.returncode == 0, f"building {TEST_IMAGE} failed:\n{built.stdout[-4000:]}\n{built.stderr[-4000:]}"
    print(f"\n[images ready in {time.monotonic() - started:.1f} s]")
    return TEST_IMAGE


@pytest.fixture(scope="session")
def cache_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("kerneljudge-cache")


@pytest.fixture
def grade(image, cache_dir, monkeypatch):
    """pipeline.grade with every compile and run in a container of the test image; returns (grade, calls)."""
    monkeypatch.setenv("KERNELJUDGE_IMAGE", image)
    monkeypatch.setenv("KERNELJUDGE_CACHE", str(cache_dir))  # never a library built on the host
    monkeypatch.setenv("KERNELJUDGE_CONTAINER_MEMORY", str(CONTAINER_MEMORY))
    calls: list[list[str]] = []
    real_run = docker_run.run

    def recording(argv, workdir, **kwargs):
        calls.append(list(argv))
        return real_run(argv, workdir, **kwargs)

    monkeypatch.setattr(docker_run, "run", recording)  # what the container Backend calls

    def run_grade(problem, source, name, **kwargs):
        return pipeline.grade(problem, source, name, sandbox_kind="docker", **kwargs)

    return run_grade, calls


def _leftover_containers() -> list[str]:
    """Containers this test process started and that are still there (running or not)."""
    mine = f"{container.LABEL}={container.owner()}"
    return [found["Id"] for found in docker_engine.client().api.containers(all=True, filters={"label": mine})]


class Listener:
    """A TCP listener on the host's 127.0.0.1 that records every connection made to it."""

    def __init__(self):
        self.server = socket.create_server(("127.0.0.1", 0))
        self.server.settimeout(0.2)
        self.port = self.server.getsockname()[1]
        self.received: list[bytes] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self):
        while not self._stop.is_set():
            try:
                conn, _ = self.server.accept()
            except OSError:
                continue
            with conn:
                conn.settimeout(1)
                try:
                    self.received.append(b"connected:" + conn.recv(100))
                except OSError:
                    self.received.append(b"connected")

    def close(self):
        self._stop.set()
        self._thread.join()
        self.server.close()


@pytest.fixture
def listener():
    found = Listener()
    yield found
    found.close()


# --- the CPU track, end to end, in containers -----------------------------------------------------------------


def _reference() -> tuple[bytes, str]:
    best = REPO / "solutions" / "softmax" / "02_openmp.cpp"
    if best.is_file():
        return best.read_bytes(), best.name
    source = SOFTMAX + "void solve(const float* i, float* o, int M, int N) { softmax(i, o, M, N); }\n"
    return source.encode(), "ref.cpp"


def test_reference_accepted_in_container(grade):
    run_grade, calls = grade
    source, name = _reference()
    verdict = run_grade(load_problem("softmax"), source, name, track="cpu", mode="submit")
    assert verdict.status == Status.ACCEPTED, verdict.message
    assert any(Path(c[0]).name == "g++" for c in calls), calls  # compiled in a container
    assert any(c[0] == "./worker" for c in calls), calls  # and run in one, as the supervisor's worker
    assert "container" in verdict.toolchain["sandbox"]
    assert verdict.benchmarks and all(b.samples >= 5 for b in verdict.benchmarks)  # timed by the supervisor
    assert not _leftover_containers()


def test_compile_error_comes_back_from_the_container(grade):
    run_grade, _ = grade
    source = b"void solve(const float* input, float* output, int M, int N) { this is not C++; }\n"
    verdict = run_grade(load_problem("softmax"), source, "broken.cpp", track="cpu")
    assert verdict.status == Status.COMPILE_ERROR, verdict.message
    assert "broken.cpp:1:" in verdict.message and "error" in verdict.message


def test_network_access_gets_nothing_out(grade, listener):
    run_grade, _ = grade
    source = NETWORK.replace("@PORT@", str(listener.port))
    verdict = run_grade(load_problem("softmax"), source.encode(), "network.cpp", track="cpu")
    assert verdict.status == Status.WRONG_ANSWER, verdict.message  # its connect() failed
    time.sleep(0.3)
    assert listener.received == []


def test_file_escape_reads_and_writes_nothing_outside(grade, tmp_path):
    run_grade, _ = grade
    secret = tmp_path / "secret.txt"
    secret.write_text("the grader's secret\n")
    source = FILE_ESCAPE.replace("@SECRET@", str(secret)).replace("@HOSTDIR@", str(tmp_path))
    verdict = run_grade(load_problem("softmax"), source.encode(), "escape.cpp", track="cpu")
    assert verdict.status == Status.WRONG_ANSWER, verdict.message  # it could neither read nor write
    assert not (tmp_path / "escaped").exists()
    assert not (sandbox.runs_base() / "escaped").exists()
    assert not (sandbox.runs_base().parent / "escaped").exists()


def test_fork_bomb_is_contained(grade):
    run_grade, _ = grade
    started = time.monotonic()
    verdict = run_grade(load_problem("softmax"), FORK_BOMB.encode(), "bomb.cpp", track="cpu", time_limit_s=3)
    assert verdict.status in (Status.TIMEOUT, Status.RUNTIME_ERROR), verdict.message
    assert time.monotonic() - started < 60
    assert not _leftover_containers()


def test_memory_hog_is_stopped(grade):
    run_grade, _ = grade
    verdict = run_grade(load_problem("softmax"), MEMORY_HOG.encode(), "hog.cpp", track="cpu", time_limit_s=20)
    assert verdict.status == Status.RUNTIME_ERROR, verdict.message
    assert "memory limit exceeded" in verdict.message


def test_endless_loop_times_out_and_is_removed(grade):
    run_grade, _ = grade
    started = time.monotonic()
    verdict = run_grade(load_problem("softmax"), ENDLESS_LOOP.encode(), "loop.cpp", track="cpu", time_limit_s=3)
    assert verdict.status == Status.TIMEOUT, verdict.message
    assert time.monotonic() - started < 60
    assert not _leftover_containers()


def test_reference_still_accepted_after_hostile_ones(grade):
    run_grade, _ = grade
    source, name = _reference()
    verdict = run_grade(load_problem("softmax"), source, name, track="cpu")
    assert verdict.status == Status.ACCEPTED, verdict.message


# --- each constraint, proven from inside a container ----------------------------------------------------------


@pytest.fixture
def inside(image, monkeypatch):
    """Runs a Python script in a container with the sandbox's options; returns (outcome, workdir)."""
    monkeypatch.setenv("KERNELJUDGE_CONTAINER_MEMORY", str(CONTAINER_MEMORY))
    made: list[Path] = []

    def run_script(script: str, limits: sandbox.Limits | None = None, layout: bool = False):
        uid = sandbox.sandbox_uid()
        workdir = sandbox.new_workdir(uid)
        made.append(workdir)
        if layout:  # what the pipeline leaves there: the runner and the library, read-only, and out/
            for name in ("runner", "lib.so"):
                (workdir / name).write_bytes(b"\x7fELF not really\n")
                (workdir / name).chmod(0o555)
            (workdir / "out").mkdir()
            if uid is not None:
                os.chown(workdir / "out", uid, uid)
        outcome = container.run(
            ["python3", "-c", script], workdir, limits=limits or sandbox.Limits(wall_s=30), uid=uid, image=image
        )
        return outcome, workdir

    yield run_script
    for workdir in made:
        sandbox.remove_workdir(workdir)


def _said(outcome) -> dict[str, str]:
    """The `key value` lines a script printed."""
    return dict(line.split(" ", 1) for line in outcome.stdout.splitlines() if " " in line)


def test_no_route_out(inside, listener):
    outcome, _ = inside(f"""
import errno, socket
name = lambda e: errno.errorcode.get(e.errno, str(e))
print("routes", len(open("/proc/net/route").read().splitlines()[1:]))
print("interfaces", ",".join(sorted(l.split(":")[0].strip() for l in open("/proc/net/dev").read().splitlines()[2:])))
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
try:
    u.connect(("192.0.2.1", 9))   # TEST-NET-1; a UDP connect() is a route lookup only: no packet is sent
    print("udp", "connected")
except OSError as e:
    print("udp", name(e))
t = socket.socket()
t.settimeout(3)
try:
    t.connect(("127.0.0.1", {listener.port}))   # the host's listener: this loopback is the container's own
    print("tcp", "connected")
except OSError as e:
    print("tcp", name(e))
""")
    said = _said(outcome)
    assert outcome.returncode == 0, outcome.stderr
    assert said["routes"] == "0"
    assert said["interfaces"] == "lo"
    assert said["udp"] == "ENETUNREACH"
    assert said["tcp"] == "ECONNREFUSED"
    time.sleep(0.3)
    assert listener.received == []


def test_read_only_root(inside):
    outcome, _ = inside("""
import errno, os, stat, subprocess
for path in ("/x", "/etc/x", "/usr/bin/x", "/opt/venv/x", "/opt/kerneljudge/x", "/home/judge/x", "/var/tmp/x",
             "/root/x"):
    try:
        open(path, "w").close()
        print(path, "written")
    except OSError as e:
        print(path, errno.errorcode[e.errno])
root = [l.split() for l in open("/proc/mounts") if l.split()[1] == "/"][-1]
print("root_options", root[3].split(",")[0])
tmp = [l.split() for l in open("/proc/mounts") if l.split()[1] == "/tmp"][-1]
print("tmp", tmp[2] + " " + tmp[3])
open("/tmp/script", "w").write("#!/bin/sh\\necho ran\\n")
os.chmod("/tmp/script", 0o755)
try:
    subprocess.run(["/tmp/script"])
    print("tmp_exec", "ran")
except OSError as e:
    print("tmp_exec", errno.errorcode[e.errno])
""")
    said = _said(outcome)
    assert outcome.returncode == 0, outcome.stderr
    for path in (
        "/x",
        "/etc/x",
        "/usr/bin/x",
        "/opt/venv/x",
        "/opt/kerneljudge/x",
        "/home/judge/x",
        "/var/tmp/x",
        "/root/x",
    ):
        assert said[path] in ("EROFS", "EACCES"), (path, said[path])
    assert said["/x"] == "EROFS" and said["/etc/x"] == "EROFS"
    assert said["root_options"] == "ro"
    assert said["tmp"].startswith("tmpfs ") and "noexec" in said["tmp"] and "size=65536k" in said["tmp"]
    assert said["tmp_exec"] == "EACCES"


def test_pids_limit(inside):
    outcome, _ = inside(
        """
import errno, os, time
forked = 0
try:
    for _ in range(200):
        if os.fork() == 0:
            time.sleep(20)
            os._exit(0)
        forked += 1
except OSError as e:
    print("fork", errno.errorcode[e.errno])
print("forked", forked)
for path in ("/sys/fs/cgroup/pids/pids.max", "/sys/fs/cgroup/pids.max"):
    if os.path.exists(path):
        print("pids.max", open(path).read().strip())
""",
        sandbox.Limits(wall_s=30, processes=24),
    )
    said = _said(outcome)
    assert said["fork"] == "EAGAIN", outcome.stdout + outcome.stderr
    assert 0 < int(said["forked"]) < 24
    assert said["pids.max"] == "24"
    assert not _leftover_containers()


def test_memory_limit(inside):
    outcome, _ = inside(
        """
import os, sys
for path in ("/sys/fs/cgroup/memory/memory.limit_in_bytes", "/sys/fs/cgroup/memory.max"):
    if os.path.exists(path):
        print("limit", open(path).read().strip(), flush=True)
chunks = []
for i in range(64):                      # 64 x 16 MiB = 1 GiB, written so that every page is really used
    chunks.append(bytearray(b"\\x01") * (16 << 20))
    print("allocated_mib", 16 * (i + 1), flush=True)
""",
        sandbox.Limits(wall_s=30, memory_bytes=128 << 20),
    )
    limit = [line for line in outcome.stdout.splitlines() if line.startswith("limit ")]
    allocated = [int(line.split()[1]) for line in outcome.stdout.splitlines() if line.startswith("allocated_mib ")]
    assert limit == [f"limit {128 << 20}"], outcome.stdout
    assert outcome.killed_for == "memory" and outcome.returncode == -9, (outcome, outcome.stderr)
    assert max(allocated, default=0) < 128


def test_non_root_without_privileges(inside):
    outcome, _ = inside("""
import errno, os
print("uid", os.getuid(), os.geteuid())
print("gid", os.getgid(), os.getegid())
status = dict(l.split(":", 1) for l in open("/proc/self/status").read().splitlines())
for key in ("CapEff", "CapPrm", "CapBnd", "CapAmb", "NoNewPrivs"):
    print(key, status[key].strip())
try:
    os.setuid(0)
    print("setuid", "ok")
except OSError as e:
    print("setuid", errno.errorcode[e.errno])
""")
    said = _said(outcome)
    assert outcome.returncode == 0, outcome.stderr
    uid, euid = map(int, said["uid"].split())
    assert uid != 0 and euid != 0
    for key in ("CapEff", "CapPrm", "CapBnd", "CapAmb"):
        assert int(said[key], 16) == 0, key
    assert said["NoNewPrivs"] == "1"
    assert said["setuid"] == "EPERM"


def test_only_the_working_directory_is_writable(inside):
    outcome, workdir = inside(
        """
import errno, os
writable = []
for root, dirs, files in os.walk("/"):
    dirs[:] = [d for d in dirs if os.path.join(root, d) not in ("/proc", "/sys")]
    try:
        probe = os.path.join(root, ".kj_probe")
        open(probe, "w").close()
        os.unlink(probe)
        writable.append(root)
    except OSError:
        pass
print("writable", " ".join(sorted(writable)))
for name in ("runner", "lib.so"):
    for how, act in (("write", lambda p: open(p, "ab").close()), ("unlink", os.unlink),
                     ("rename", lambda p: os.rename(p, p + ".moved")), ("chmod", lambda p: os.chmod(p, 0o777))):
        try:
            act("/work/" + name)
            print(name + "." + how, "ok")
        except OSError as e:
            print(name + "." + how, errno.errorcode[e.errno])
open("/work/out/result", "w").write("came back")
open("/tmp/scratch", "w").write("gone with the container")
""",
        layout=True,
    )
    said = _said(outcome)
    assert outcome.returncode == 0, outcome.stderr
    writable = set(said["writable"].split())
    scratch = {"/tmp", "/dev/shm", "/dev/mqueue"}  # per-container memory, gone when it is removed
    assert {"/work", "/work/out"} <= writable, writable
    assert writable - scratch == {"/work", "/work/out"}, writable
    for name in ("runner", "lib.so"):
        for how in ("write", "unlink", "rename", "chmod"):
            assert said[f"{name}.{how}"] in ("EROFS", "EBUSY", "EACCES", "EPERM"), (name, how, said[f"{name}.{how}"])
        assert (workdir / name).read_bytes() == b"\x7fELF not really\n"
    assert (workdir / "out" / "result").read_text() == "came back"
    assert not _leftover_containers()


def test_wall_clock_kill_and_removal(inside):
    started = time.monotonic()
    outcome, _ = inside("import time; time.sleep(120)", sandbox.Limits(wall_s=1))
    assert outcome.timed_out and outcome.returncode == -9, outcome
    assert time.monotonic() - started < 15
    assert not _leftover_containers()


def test_disk_limit_of_the_working_directory(inside):
    outcome, _ = inside(
        """
import time
with open("/work/big", "wb") as f:
    for _ in range(400):
        f.write(b"\\0" * (1 << 20))
        f.flush()
        time.sleep(0.01)
""",
        sandbox.Limits(wall_s=30, disk_bytes=16 << 20),
    )
    # the watchdog's kill, or (the working directory a tmpfs of that size, as root) the kernel's ENOSPC first
    assert outcome.killed_for == "disk" or "No space left on device" in outcome.stderr, (outcome, outcome.stderr)
    assert outcome.returncode != 0


def test_available_and_choose(image):
    ok, why = container.available(image=image)
    assert ok, why
    backend, description = container.choose("auto", "cpu", image=image)
    assert backend.kind == "docker" and "container" in description
    assert backend.compiler("cpu").startswith("g++")
    local, _ = container.choose("local", "cpu", image=image)
    assert local.kind == "local"
    missing, why = container.available(image="kerneljudge-test:no-such-image")
    assert not missing and "no image" in why
    with pytest.raises(RuntimeError):
        container.choose("docker", "cpu", image="kerneljudge-test:no-such-image")
    fallback, description = container.choose("auto", "cpu", image="kerneljudge-test:no-such-image")
    assert fallback.kind == "local" and "no image" in description


def test_stale_containers_of_a_dead_grader_are_removed(image):
    client = docker_engine.client()
    gone = subprocess.Popen(["true"])
    gone.wait()  # a pid of this namespace that no longer runs: a grader that died mid-run
    where = container.owner().rsplit(":", 1)[0]
    stale = client.containers.create(image, ["true"], labels={container.LABEL: f"{where}:{gone.pid}"})
    mine = client.containers.create(image, ["true"], labels={container.LABEL: container.owner()})
    try:
        assert container.remove_stale() >= 1
        left = {found["Id"] for found in client.api.containers(all=True)}
        assert stale.id not in left and mine.id in left
    finally:
        for made in (stale, mine):
            docker_engine.remove(made.id)


# --- descriptors into a container, and the hostile fixtures graded in one ----------------------------------------


def test_passed_descriptors_reach_the_program_and_its_host_pid_is_reported(image, tmp_path):
    """pass_fds and on_start as with the local sandbox: the program finds the descriptors at their numbers,
    and the pid given to on_start is the program's own, as the host numbers it (what a supervisor freezes)."""
    uid = sandbox.sandbox_uid()
    workdir = sandbox.new_workdir(uid)
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    seen: dict[str, str] = {}
    folders_before = set(sandbox.runs_base().glob("handover-*"))

    def on_start(pid: int) -> None:
        status = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines())
        seen["pid"], seen["nspid"] = str(pid), status["NSpid"].split()[-1]  # the host's pid; the container's

    script = f"import os, socket; s = socket.socket(fileno={theirs.fileno()}); s.send(str(os.getpid()).encode())"
    try:
        outcome = container.run(
            ["python3", "-c", script],
            workdir,
            limits=sandbox.Limits(wall_s=30),
            uid=uid,
            image=image,
            pass_fds=(theirs.fileno(),),
            on_start=on_start,
        )
        ours.settimeout(5)
        said = ours.recv(64).decode()
    finally:
        ours.close()
        theirs.close()
        sandbox.remove_workdir(workdir)
    assert outcome.returncode == 0, outcome.stderr
    assert said == seen["nspid"], (said, seen)  # the process at that host pid is the one that wrote
    assert int(seen["pid"]) != int(said)  # and it was numbered in the container's own PID namespace
    assert set(sandbox.runs_base().glob("handover-*")) <= folders_before  # the private folder went with the run


ADVERSARIAL = Path(__file__).parent / "adversarial"
CPU_FIXTURES = [p for p in fixture_params(ADVERSARIAL) if p.values[0].track == "cpu"]


@pytest.mark.parametrize("fixture", CPU_FIXTURES)
def test_adversarial_fixture_gets_the_same_verdict_in_a_container(grade, fixture, monkeypatch):
    """Each CPU fixture of tests/adversarial gets, graded in a container, the verdict its header states: the one
    it gets in the local sandbox (tests/adversarial/test_adversarial.py), since both run the same supervisor.
    The forgeries the in-process harness let through in a container now fail as they do locally: reads_seeds
    (wrong_answer), fake_times_file, timer_patch and audit_watcher (accepted with an honest time), forged_audit
    (rejected or wrong_answer)."""
    run_grade, _ = grade
    header = {}
    for line in fixture.path.read_text().splitlines()[:12]:
        key, _, value = line.strip().removeprefix("//").strip().partition(":")
        header[key] = value.strip()
    if "memory_limit_gib" in header:
        monkeypatch.setattr(pipeline, "HARNESS_MEMORY", int(float(header["memory_limit_gib"]) * (1 << 30)))
    verdict = run_grade(
        load_problem(fixture.problem),
        fixture.path.read_bytes(),
        fixture.path.name,
        track="cpu",
        mode=fixture.mode,
        time_limit_s=fixture.time_limit_s,
    )
    if verdict.status == Status.ACCEPTED and "honest_floor_us" in header:
        bench, floor_us = header["honest_floor_us"].split()
        medians = {b.name: b.median_us for b in verdict.benchmarks}
        assert medians.get(bench, 0.0) >= float(floor_us), f"accepted with a fake time: {medians}"
    else:
        assert verdict.status in fixture.expect.split("|"), verdict.message
        assert fixture.message in verdict.message, verdict.message
    assert not _leftover_containers()
