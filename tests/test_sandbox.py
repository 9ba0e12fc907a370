"""The local sandbox, for real: each limit the kernel enforces, proven from inside a run, and the contract every
backend keeps (an Outcome always, the supervisor's hooks, a watchdog that fails closed).

Most of these need root (a uid of the run's own, cgroups, namespaces, mounts), as the judge runs; a layer this
machine lacks is skipped with grader.sandbox.layers' reason. Each test has its own runs folder.
"""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
import textwrap
import time
from pathlib import Path

import pytest

from grader.sandbox import base, choice, layers, local, procfs, uids, watch
from grader.sandbox.base import Limits

ROOT = os.geteuid() == 0
needs_root = pytest.mark.skipif(not ROOT, reason="the sandbox's uid, cgroups and mounts need root")


def layer(name: str):
    """Skip unless `name` is in force here (the reason is the layer's)."""
    found = {item.name: item for item in layers.probe()}[name]
    return pytest.mark.skipif(not found.in_force, reason=f"{name}: {found.why}")


@pytest.fixture(autouse=True)
def runs_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("KERNELJUDGE_RUNS", str(tmp_path / "runs"))


def sandboxed(script: str, limits: Limits | None = None, uid: int | None = None, **kwargs) -> base.Outcome:
    """Runs a Python script (the system python3: /tmp, where a venv may live, is private in the sandbox) in a
    fresh working directory under the local sandbox."""
    uid = uid if uid is not None else local.sandbox_uid()
    workdir = local.new_workdir(uid)
    try:
        return local.run(
            ["python3", "-I", "-c", textwrap.dedent(script)],
            workdir,
            limits=limits or Limits(wall_s=30),
            uid=uid,
            **kwargs,
        )
    finally:
        local.remove_workdir(workdir)


# --- the contract ----------------------------------------------------------------------------------------------


def test_a_program_that_cannot_start_is_an_outcome_not_an_exception():
    workdir = local.new_workdir(None)
    try:
        outcome = local.run(["/nonexistent/program"], workdir, limits=Limits(wall_s=5))
    finally:
        local.remove_workdir(workdir)
    assert outcome.returncode == 127 and "could not start" in outcome.stderr


@pytest.mark.parametrize(
    ("script", "code"),
    [
        ("raise SystemExit(7)", 7),
        ("import os, signal; os.kill(os.getpid(), signal.SIGABRT)", -signal.SIGABRT),
        ("import os, signal; os.kill(os.getpid(), signal.SIGKILL)", -signal.SIGKILL),
    ],
)
def test_the_return_code_is_the_programs_own(script, code):
    outcome = sandboxed(script)
    assert outcome.returncode == code, outcome
    assert outcome.signal_name == (signal.Signals(-code).name if code < 0 else "")


def test_on_start_gets_the_programs_pid_and_pass_fds_reach_it():
    read_end, write_end = os.pipe()
    seen: list[tuple[int, bytes]] = []

    def on_start(pid: int) -> None:
        seen.append((pid, Path(f"/proc/{pid}/cmdline").read_bytes()))

    try:
        outcome = sandboxed(
            f"import os, time; os.write({write_end}, b'through the fd'); time.sleep(0.5)  # marker-1234",
            pass_fds=(write_end,),
            on_start=on_start,
        )
        os.close(write_end)
        received = os.read(read_end, 100)
    finally:
        os.close(read_end)
    assert outcome.returncode == 0, outcome
    assert received == b"through the fd"
    assert len(seen) == 1 and b"marker-1234" in seen[0][1]  # the pid is the program's, as the grader sees it


def test_an_exception_from_on_start_kills_the_run_and_is_raised():
    def on_start(_pid: int) -> None:
        raise RuntimeError("the supervisor could not start")

    started = time.monotonic()
    with pytest.raises(RuntimeError, match="supervisor"):
        sandboxed("import time; time.sleep(60)", on_start=on_start)
    assert time.monotonic() - started < 20


def test_output_is_kept_to_its_tail():
    outcome = sandboxed("import sys\nfor _ in range(20000): sys.stdout.write('x' * 99 + '\\n')\nprint('the end')")
    assert outcome.returncode == 0
    assert len(outcome.stdout) <= base.OUTPUT_TAIL and outcome.stdout.endswith("the end\n")


def test_the_wall_clock_limit_kills():
    started = time.monotonic()
    outcome = sandboxed("import time; time.sleep(60)", Limits(wall_s=1))
    assert outcome.timed_out and outcome.returncode == -signal.SIGKILL
    assert time.monotonic() - started < 15


def test_in_container_is_decided_by_the_backend():
    assert choice.Backend("docker", "a container").kind == "docker"
    assert base.in_container(choice.Backend("docker", "a container"))
    assert not base.in_container(choice.Backend("local", "here"))
    assert not base.in_container(local.run)


# --- the watchdog fails closed ---------------------------------------------------------------------------------


def test_a_watchdog_whose_check_raises_kills():
    killed: list[str] = []
    dog = watch.Watchdog(time.monotonic() + 60, killed.append, [(1, lambda: str(1 / 0))], tick_s=0.01)
    dog.start()
    deadline = time.monotonic() + 10
    while not killed and time.monotonic() < deadline:
        time.sleep(0.01)
    dog.stop()
    assert killed and killed[0] == "watchdog" and dog.reason == "watchdog"
    assert "ZeroDivisionError" in dog.error


@needs_root
def test_a_walk_that_raises_kills_the_run(monkeypatch):
    def broken(_root, _max_entries):
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(procfs, "tree_usage", broken)
    started = time.monotonic()
    outcome = sandboxed("import time; time.sleep(60)", Limits(wall_s=45))
    assert outcome.killed_for == "watchdog" and not outcome.timed_out
    assert "RecursionError" in outcome.stderr
    assert time.monotonic() - started < 20


@needs_root
def test_a_deep_directory_tree_leaves_every_limit_in_force():
    """Deeper than PATH_MAX and than Python's recursion limit: the watchdog still finds the big file at the
    bottom (the disk limit), and still stops the run at its wall clock."""
    deep = """
        import os, time
        for _ in range(3000):
            os.mkdir("d")
            os.chdir("d")
        with open("big", "wb") as f:
            f.truncate({size})
        print("deep", flush=True)
        time.sleep(60)
    """
    outcome = sandboxed(deep.format(size=64 << 20), Limits(wall_s=30, disk_bytes=32 << 20))
    assert outcome.killed_for == "disk", outcome
    outcome = sandboxed(deep.format(size=1), Limits(wall_s=4))
    assert outcome.timed_out and "deep" in outcome.stdout, outcome


# --- limits the kernel enforces --------------------------------------------------------------------------------


@needs_root
@layer(layers.CGROUP["memory"])
@pytest.mark.parametrize(
    "hog",
    [
        "x = bytearray(600 << 20)",  # the program itself
        "import os\nif os.fork() == 0:\n    x = bytearray(600 << 20)\n    os._exit(0)\nos.wait()",  # a child
        "open('/dev/shm/hog', 'wb').write(b'x' * (60 << 20)); open('hog', 'wb').write(b'x' * (400 << 20))",  # tmpfs
    ],
    ids=["process", "child", "tmpfs"],
)
def test_memory_is_limited_by_the_runs_cgroup(hog):
    outcome = sandboxed(hog, Limits(wall_s=30, memory_bytes=256 << 20))
    assert outcome.killed_for == "memory", outcome


@needs_root
@layer(layers.CGROUP["pids"])
def test_processes_are_limited_by_the_runs_cgroup():
    outcome = sandboxed(
        """
        import os, time
        made = 0
        for _ in range(100):
            try:
                pid = os.fork()
            except OSError:
                break
            if pid == 0:
                time.sleep(30)
                os._exit(0)
            made += 1
        print(made)
        """,
        Limits(wall_s=30, processes=16),
    )
    assert int(outcome.stdout) < 16, outcome


@needs_root
@layer(layers.CGROUP["cpuset"])
@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="one CPU: no affinity to widen")
def test_a_run_cannot_widen_its_cpu_set():
    first = min(os.sched_getaffinity(0))
    outcome = sandboxed(
        """
        import os
        try:
            os.sched_setaffinity(0, range(os.cpu_count()))
        except OSError:
            pass
        print(sorted(os.sched_getaffinity(0)))
        """,
        Limits(wall_s=30, cpus=(first,)),
    )
    assert outcome.stdout.strip() == f"[{first}]", outcome


@needs_root
@layer(layers.WORKDIR)
def test_the_working_directory_is_bounded_in_bytes_and_inodes():
    outcome = sandboxed(
        """
        import errno, os
        def refused(action):
            try:
                action()
                return "allowed"
            except OSError as error:
                return errno.errorcode[error.errno]
        def write():
            with open("big", "wb") as f:
                f.write(b"x" * (64 << 20))
        def preallocate():
            fd = os.open("kept", os.O_WRONLY | os.O_CREAT)
            os.posix_fallocate(fd, 0, 64 << 20)
        os.remove("big") if os.path.exists("big") else None
        print(refused(write), refused(preallocate), end=" ")
        for i in range(200):
            if refused(lambda: os.mkdir(f"d{i}")) != "allowed":
                break
        print(i)
        """,
        Limits(wall_s=30, disk_bytes=32 << 20, inodes=50),
    )
    write, preallocate, folders = outcome.stdout.split()
    assert (write, preallocate) == ("ENOSPC", "ENOSPC"), outcome
    assert int(folders) < 50


@needs_root
def test_sparse_files_count_at_their_size():
    outcome = sandboxed(
        "import time\nfor i in range(3):\n    open(f'f{i}', 'wb').truncate(30 << 20)\ntime.sleep(30)",
        Limits(wall_s=25, disk_bytes=64 << 20),
    )
    assert outcome.killed_for == "disk", outcome


# --- namespaces, identity and what a run leaves behind ---------------------------------------------------------


@needs_root
@layer(layers.MOUNTS)
def test_every_mount_is_read_only_but_the_working_directory():
    # a separate, world-writable filesystem, like /run/lock on most hosts (not under /tmp: private in the run)
    other = Path(tempfile.mkdtemp(prefix="kerneljudge-test-", dir="/var/lib"))
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m,mode=1777", "kj-test", str(other)]).returncode:
        other.rmdir()
        pytest.skip("cannot mount a tmpfs here")
    try:
        outcome = sandboxed(
            f"""
            import errno
            for path in ("{other}/escape", "/tmp/private", "inside"):
                try:
                    open(path, "w").write("x")
                    print("wrote", path)
                except OSError as error:
                    print(errno.errorcode[error.errno], path)
            """
        )
        assert not (other / "escape").exists()
    finally:
        subprocess.run(["umount", "-l", str(other)])
        other.rmdir()
    assert f"EROFS {other}/escape" in outcome.stdout and "wrote inside" in outcome.stdout, outcome
    assert not Path("/tmp/private").exists()


@needs_root
@layer(layers.PID)
def test_the_pid_namespace_hides_the_host_and_ends_with_the_run():
    outcome = sandboxed(
        f"""
        import os, subprocess
        subprocess.Popen(["sleep", "300"], start_new_session=True)  # a daemon that means to stay
        print(os.getpid(), os.path.exists("/proc/{os.getpid()}"), os.path.exists("/proc/1/cmdline"))
        """
    )
    pid, sees_grader, sees_init = outcome.stdout.split()
    assert (pid, sees_grader, sees_init) == ("2", "False", "False"), outcome
    leftover = subprocess.run(["pgrep", "-f", "^sleep 300$"], capture_output=True, text=True).stdout.split()
    assert all(procfs.owner(f"/proc/{p}") not in uids.uid_range() for p in leftover)


@needs_root
@layer(layers.IPC)
def test_sysv_and_posix_ipc_do_not_outlive_the_run():
    make = """
        import ctypes, os
        libc = ctypes.CDLL(None, use_errno=True)
        IPC_CREAT = 0o1000
        print(libc.msgget(0x4B4A5445, IPC_CREAT | 0o666) >= 0, libc.shmget(0x4B4A5445, 4096, IPC_CREAT | 0o666) >= 0)
    """
    find = """
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        print(libc.msgget(0x4B4A5445, 0o666) >= 0, libc.shmget(0x4B4A5445, 4096, 0o666) >= 0)
    """
    assert sandboxed(make).stdout.split() == ["True", "True"]
    assert sandboxed(find).stdout.split() == ["False", "False"]
    host = Path("/proc/sysvipc/msg").read_text() + Path("/proc/sysvipc/shm").read_text()
    assert str(0x4B4A5445) not in host


@needs_root
@layer(layers.KEYRING)
def test_keys_do_not_outlive_the_run():
    keys = """
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        libc.syscall.restype = ctypes.c_long
        ADD_KEY, KEYCTL = 248, 250  # x86_64
        USER, SESSION, KEYCTL_SEARCH, KEYCTL_GET_KEYRING_ID = -4, -3, 10, 0
        found = libc.syscall(KEYCTL, KEYCTL_SEARCH, USER, b"user", b"kj-left", 0)
        added = libc.syscall(ADD_KEY, b"user", b"kj-left", b"secret", 6, USER)
        print(found >= 0, added >= 0, libc.syscall(KEYCTL, KEYCTL_GET_KEYRING_ID, SESSION, 0))
    """
    if os.uname().machine != "x86_64":
        pytest.skip("the script uses x86_64 system call numbers")
    uid = uids.lease()  # both runs with one uid: what the first leaves in its user keyring must be gone
    try:
        first = sandboxed(keys, uid=uid).stdout.split()
        second = sandboxed(keys, uid=uid).stdout.split()
    finally:
        uids.release(uid)
    assert first[:2] == ["False", "True"] and second[:2] == ["False", "True"], (first, second)
    assert first[2] != second[2]  # a new session keyring each run


@needs_root
def test_nothing_of_the_run_outlives_it():
    uid = local.sandbox_uid()
    assert uid is not None
    outcome = sandboxed(
        """
        import os, time
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                time.sleep(300)
            os._exit(0)
        print("left a daemon")
        """,
        uid=uid,
    )
    assert "left a daemon" in outcome.stdout
    assert procfs.uid_processes(uid) == {}


@needs_root
def test_each_run_gets_a_fresh_uid_no_one_else_has(tmp_path, monkeypatch):
    monkeypatch.setattr(uids, "LEASES", tmp_path / "leases")
    monkeypatch.setenv("KERNELJUDGE_UID_BASE", "65533")  # 65534 is nobody: it must be skipped
    first, second = uids.lease(), uids.lease()
    assert first != second and 65534 not in (first, second)
    assert (tmp_path / "leases").stat().st_mode & 0o777 == 0o700
    assert (tmp_path / "leases" / str(first)).exists()
    uids.release(first)
    assert not (tmp_path / "leases" / str(first)).exists()
    busy = subprocess.Popen(["sleep", "30"], user=second)  # a live process of a uid makes it unavailable
    try:
        uids.release(second)
        taken = {uids.lease() for _ in range(5)}
        assert second not in taken
    finally:
        busy.kill()
        busy.wait()


@needs_root
def test_a_run_has_a_user_name_though_its_uid_has_no_password_entry():
    # PyTorch and Triton name their caches after getpass.getuser(); on the H100 every Triton fixture that reached
    # that code died with "KeyError: getpwuid(): uid not found: 61112" until the sandbox said who the run is.
    outcome = sandboxed("""
        import getpass, os, pwd
        try:
            pwd.getpwuid(os.getuid())
            print("has an entry")
        except KeyError:
            print("no entry, user", getpass.getuser())
    """)
    assert outcome.returncode == 0, outcome.stderr
    assert outcome.stdout.strip() == "no entry, user sandbox"


def test_every_layer_is_in_force_or_says_why_not():
    found = layers.probe()
    names = {item.name for item in found}
    expected = {layers.UID, layers.NETWORK, layers.MOUNTS, layers.IPC, layers.PID, layers.KEYRING, layers.WORKDIR}
    assert names >= expected | set(layers.CGROUP.values())
    assert all(item.in_force or item.why for item in found)
    assert local.probe_isolation() == [str(item) for item in found]


@needs_root
def test_a_run_lists_the_layers_it_used():
    outcome = sandboxed("pass")
    assert set(outcome.isolation) <= layers.in_force()
    assert set(layers.ALWAYS) <= set(outcome.isolation)


@needs_root
@layer(layers.WORKDIR)
def test_a_dead_graders_working_directory_is_swept():
    read_end, write_end = os.pipe()
    child = os.fork()
    if child == 0:  # a grader that made a working directory and was killed before removing it
        try:
            workdir = local.new_workdir(uids.uid_range().start)
            (workdir / "runner").write_text("left behind")
            os.write(write_end, str(workdir).encode())
        finally:
            os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end) as said:
        left = Path(said.read())
    os.waitpid(child, 0)
    assert os.path.ismount(left)
    local.remove_workdir(local.new_workdir(None))
    assert not left.exists()
