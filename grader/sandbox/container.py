"""The container sandbox: one untrusted command in a fresh, locked-down container of the grader image.

`run` has the contract of `grader.sandbox.local.run`: it runs `argv` in `workdir` and always comes back with an Outcome
(returncode, negative for a signal; wall_s; timed_out; killed_for "memory" or "disk"; the tails of stdout and
stderr; the isolation used), never raising for the child's sake. Each call is one `docker run` of its own:

    --network none --read-only --tmpfs /tmp --pids-limit --memory --cpus --cap-drop ALL
    --security-opt no-new-privileges --user UID:GID, the working directory as the only writable mount
    (the files already in it, e.g. runner and lib.so, each mounted read-only over itself), --gpus device=N
    only where a GPU is asked for, a wall-clock limit after which the container is killed, then removed.

docs/container.md says what each flag answers. `available` says whether the container can be used here and why
not; `choose` picks the container or the local sandbox for `--sandbox auto|docker|local`.
"""

from __future__ import annotations

import csv
import functools
import io
import json
import os
import shutil
import socket
import subprocess
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from grader import settings
from grader.sandbox import local as sandbox
from grader.sandbox.local import Limits, Outcome

INSIDE = "/work"  # where the working directory is mounted in the container
TMPFS_BYTES = 64 << 20  # /tmp and /dev/shm: small scratch space in memory, counted in --memory
STARTUP_GRACE_S = 2.0  # docker run's own start-up time, allowed on top of the wall-clock limit
KILL_PATIENCE_S = 10.0  # after `docker kill`, how long the docker client may take to return
OUTPUT_TAIL = 8192  # bytes of stdout and of stderr kept, as the local sandbox keeps
LABEL = "kerneljudge.sandbox"  # on every container: "<hostname>:<pid>" of the grader that started it
NOBODY = 65534  # the user a root grader's run gets when no uid was given
DROPPED_ENV = ("LD_LIBRARY_PATH",)  # the host's library paths mean nothing in the image: its own ENV applies
KINDS = ("auto", "docker", "local")


def image_name(image: str | None = None) -> str:
    """The image to use: the argument, else $KERNELJUDGE_IMAGE, else kerneljudge:latest."""
    return image or settings.IMAGE.get()


def gpu_index() -> int:
    """The GPU a CUDA run gets (`--gpus device=N`): $KERNELJUDGE_GPU, else 0."""
    return int(settings.GPU.get())


def _docker(*args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run(["docker", *args], capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else ""


# --- is it there? ---------------------------------------------------------------------------------------------


def image_id(image: str | None = None) -> str | None:
    """The image's id (sha256:...), or None when the engine does not have it."""
    try:
        found = _docker("image", "inspect", "--format", "{{.Id}}", image_name(image), timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    return found.stdout.strip() or None if found.returncode == 0 else None


def engine() -> tuple[str | None, str]:
    """(the Docker server's version, '') when an engine answers, else (None, why not)."""
    if not shutil.which("docker"):
        return None, "no docker command on PATH"
    try:
        found = _docker("version", "--format", "{{.Server.Version}}", timeout=20)
    except subprocess.TimeoutExpired:
        return None, "the Docker engine did not answer within 20 s"
    except OSError as error:
        return None, f"docker could not be run: {error}"
    if found.returncode != 0 or not found.stdout.strip():
        return None, f"no Docker engine reachable ({_last_line(found.stderr) or 'docker version failed'})"
    return found.stdout.strip(), ""


def nvidia_runtime() -> bool:
    """Whether `docker run --gpus` can work: the NVIDIA container runtime or its hook is installed."""
    try:
        runtimes = _docker("info", "--format", "{{json .Runtimes}}", timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        runtimes = ""
    return "nvidia" in runtimes or bool(shutil.which("nvidia-container-runtime-hook"))


def available(*, gpu: bool = False, image: str | None = None) -> tuple[bool, str]:
    """(True, what will be used) when the container sandbox can run here; else (False, the reason)."""
    found, why = _probe(gpu, image)
    return found is not None, why


def _probe(gpu: bool, image: str | None) -> tuple[str | None, str]:
    """(the image's id, what will be used), or (None, why the container cannot be used)."""
    name = image_name(image)
    version, why = engine()
    if version is None:
        return None, why
    found = image_id(name)
    if found is None:
        return None, f"Docker {version} is running, but it has no image {name} (build it: make docker)"
    if gpu and not nvidia_runtime():
        return None, (
            f"Docker {version} and {name} are there, but not the NVIDIA container runtime "
            "(nvidia-container-toolkit), so no container can have a GPU"
        )
    return found, f"Docker {version}, image {name} ({found[:19]})" + (", NVIDIA runtime" if gpu else "")


# --- choosing a sandbox ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Backend:
    """A sandbox to run untrusted commands in, callable like `sandbox.run` (plus `gpu=N`, ignored locally)."""

    kind: str  # "docker" or "local"
    description: str
    image: str = ""  # the image's id, for the container: pinned when chosen, so a rebuild mid-way
    # does not mix two toolchains in one grading

    def __call__(
        self,
        argv: list[str],
        workdir: Path,
        *,
        limits: Limits,
        stdin: bytes = b"",
        uid: int | None = None,
        env: dict[str, str] | None = None,
        gpu: int | None = None,
        pass_fds: tuple[int, ...] = (),
        on_start: Callable[[int], None] | None = None,
    ) -> Outcome:
        if self.kind == "docker":
            if pass_fds or on_start is not None:
                raise NotImplementedError("the container sandbox does not pass file descriptors or report a pid yet")
            return run(argv, workdir, limits=limits, stdin=stdin, uid=uid, env=env, gpu=gpu, image=self.image)
        return sandbox.run(
            argv, workdir, limits=limits, stdin=stdin, uid=uid, env=env, pass_fds=pass_fds, on_start=on_start
        )

    @property
    def toolchain_id(self) -> str:
        """Part of every build cache key: a library built in one image is not one built in another, or locally."""
        return f"docker {self.image}" if self.kind == "docker" else "local"

    def compiler(self, track: str) -> str:
        """The compiler's version line for `track`, as the verdict's toolchain reports it."""
        if self.kind == "docker":
            return image_toolchain(self.image).get(track, "")
        from grader.build.toolchain import detect

        return detect().describe(track)


def choose(kind: str | None = "auto", track: str = "cpu", *, image: str | None = None) -> tuple[Backend, str]:
    """The sandbox for `--sandbox kind` and `track`, and one line saying which and why.

    auto: the container where Docker, the image and (CUDA track) the NVIDIA container runtime are there, else
    the local sandbox. docker: the container, or RuntimeError saying what is missing. local: the local sandbox.
    None means $KERNELJUDGE_SANDBOX, else auto.
    """
    kind = kind or settings.SANDBOX.get()
    if kind not in KINDS:
        raise ValueError(f"unknown sandbox {kind!r} (choose one of {', '.join(KINDS)})")
    if kind == "local":
        return _local("local sandbox (asked for)")
    found, why = _probe(track == "cuda", image)
    if found is not None:
        remove_stale()
        description = f"container: {why}"
        return Backend("docker", description, found), description
    if kind == "docker":
        raise RuntimeError(f"the container sandbox cannot be used: {why}")
    return _local(f"local sandbox (no container: {why})")


def _local(description: str) -> tuple[Backend, str]:
    return Backend("local", description), description


# --- running one command --------------------------------------------------------------------------------------


def run(
    argv: list[str],
    workdir: Path,
    *,
    limits: Limits,
    stdin: bytes = b"",
    uid: int | None = None,
    env: dict[str, str] | None = None,
    gpu: int | None = None,
    image: str | None = None,
) -> Outcome:
    """Run `argv` in a new container with `workdir` mounted at /work; never raises for the child's sake.

    An absolute argv[0] outside the working directory (a host path such as /usr/bin/g++) is looked up by name
    on the image's PATH; the host's path of the working directory, in argv or env, becomes /work.
    """
    workdir = Path(workdir).resolve()
    image = image_name(image)
    name = f"kj-{os.getpid()}-{uuid.uuid4().hex[:12]}"
    try:
        user, group = _user(uid, workdir)
    except OSError as error:
        return Outcome(returncode=127, wall_s=0.0, stderr=f"could not prepare the working directory: {error}")
    memory = memory_limit(limits.memory_bytes)
    cpus = cpu_limit()
    try:
        command = _command(
            name,
            image,
            _inside_argv(argv, workdir),
            workdir,
            limits,
            user,
            group,
            memory,
            cpus,
            _inside_env(env, workdir),
            gpu,
        )
    except (OSError, ValueError, IndexError) as error:
        return Outcome(returncode=127, wall_s=0.0, stderr=f"could not prepare the container: {error}")
    shown = image[:19] if image.startswith("sha256:") else image
    isolation = [
        f"container ({shown})",
        "no network",
        "read-only root",
        f"tmpfs /tmp {TMPFS_BYTES >> 20} MiB",
        f"pids <= {limits.processes}",
        f"memory <= {memory >> 20} MiB",
        f"cpus {cpus:g}" if cpus > 0 else "no CPU quota",
        "all capabilities dropped",
        "no-new-privileges",
        f"uid {user}",
        "only the working directory writable",
        "watchdog (wall clock, disk)",
    ]
    if gpu is not None:
        isolation.append(f"GPU {gpu} only")

    start = time.monotonic()
    try:
        process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, close_fds=True
        )
    except OSError as error:
        return Outcome(returncode=127, wall_s=0.0, stderr=f"could not start docker: {error}", isolation=isolation)
    out, err = _Tail(process.stdout), _Tail(process.stderr)
    feeder = threading.Thread(target=_feed, args=(process.stdin, stdin), daemon=True)
    watchdog = _Watchdog(name, process, workdir, limits.disk_bytes, start + limits.wall_s + STARTUP_GRACE_S)
    for thread in (out, err, feeder, watchdog):
        thread.start()
    try:
        process.wait()
        watchdog.stop()
        for thread in (out, err):
            thread.join(timeout=5)
        wall = time.monotonic() - start
        state = _state(name)
    finally:
        watchdog.stop()
        if process.poll() is None:
            process.kill()
            process.wait()
        _remove(name)

    stdout, stderr = out.text(), _without_docker_warnings(err.text())
    if state is None or state.get("Error") or not _started(state):
        # The container never ran: docker itself failed (exit 125), or the command could not be started.
        problem = (state or {}).get("Error") or _last_line(stderr) or f"docker exited with status {process.returncode}"
        return Outcome(
            returncode=127,
            wall_s=wall,
            timed_out=watchdog.reason == "wall",
            stdout=stdout,
            stderr=(f"could not start the sandboxed program in a container: {problem}\n{stderr}")[-OUTPUT_TAIL:],
            isolation=isolation,
        )
    code = int(state.get("ExitCode", process.returncode))
    returncode = -(code - 128) if 128 < code < 128 + 65 else code  # docker says 128+N for signal N
    ran = _seconds(state.get("StartedAt"), state.get("FinishedAt"))
    return Outcome(
        returncode=returncode,
        wall_s=ran if ran is not None and 0 <= ran <= wall else wall,
        timed_out=watchdog.reason == "wall",
        killed_for="disk"
        if watchdog.reason == "disk"
        else "memory"
        if state.get("OOMKilled") and watchdog.reason != "wall"
        else "",
        stdout=stdout,
        stderr=stderr,
        isolation=isolation,
    )


def _without_docker_warnings(text: str) -> str:
    """The docker client's own notes (e.g. no swap accounting on this kernel) are not the command's output."""
    return "".join(line for line in text.splitlines(keepends=True) if not line.startswith("WARNING: Your kernel"))


def memory_limit(requested: int) -> int:
    """--memory: what was asked for, capped at $KERNELJUDGE_CONTAINER_MEMORY (bytes) and 3/4 of this machine's RAM
    (a limit above the machine's memory would let one run push the host itself into swapping or its OOM killer)."""
    physical = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    cap = int(settings.CONTAINER_MEMORY.get() or physical * 3 // 4)
    return max(16 << 20, min(requested, cap))


def cpu_limit() -> float:
    """--cpus: $KERNELJUDGE_CPUS (0: no quota), else every CPU of the machine (a node grades one run at a time)."""
    count = os.cpu_count() or 1
    return min(float(settings.CPUS.get() or count), float(count))


def _user(uid: int | None, workdir: Path) -> tuple[int, int]:
    """The uid:gid inside: the run's own uid (as the local sandbox uses it), else the grader's, never root."""
    if uid is not None and uid != 0:
        return uid, uid
    if os.getuid() != 0:
        return os.getuid(), os.getgid()
    for folder, _dirs, _files in os.walk(workdir):  # a root grader without a uid: hand the folders to nobody
        os.chown(folder, NOBODY, NOBODY)
    return NOBODY, NOBODY


def _inside_argv(argv: list[str], workdir: Path) -> list[str]:
    first, rest = argv[0], argv[1:]
    if os.path.isabs(first) and not first.startswith(str(workdir) + "/"):
        first = os.path.basename(first)  # the host's /usr/bin/g++ is the image's g++
    return [_inside_path(first, workdir)] + [_inside_path(a, workdir) for a in rest]


def _inside_path(value: str, workdir: Path) -> str:
    return value.replace(str(workdir), INSIDE)


def _inside_env(env: dict[str, str] | None, workdir: Path) -> dict[str, str]:
    inside = {"HOME": INSIDE, "TMPDIR": "/tmp", "LANG": "C.UTF-8"}
    for key, value in (env or {}).items():
        if key not in DROPPED_ENV:
            inside[key] = _inside_path(value, workdir)
    return inside


def _mount(source: Path, target: str, readonly: bool = False) -> str:
    """A --mount value, CSV-quoted so that a comma or quote in a path cannot add options."""
    fields = ["type=bind", f"source={source}", f"target={target}"] + (["readonly"] if readonly else [])
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="").writerow(fields)
    return buffer.getvalue()


def _command(
    name: str,
    image: str,
    argv: list[str],
    workdir: Path,
    limits: Limits,
    user: int,
    group: int,
    memory: int,
    cpus: float,
    env: dict[str, str],
    gpu: int | None,
) -> list[str]:
    command = [
        "docker",
        "run",
        "--interactive",
        "--name",
        name,
        "--label",
        f"{LABEL}={socket.gethostname()}:{os.getpid()}",
        "--init",  # a real PID 1: reaps, and takes everything down with it
        "--network",
        "none",  # no interface but a private loopback
        "--read-only",  # the image's filesystem cannot be changed
        "--tmpfs",
        f"/tmp:rw,noexec,nosuid,nodev,size={TMPFS_BYTES}",
        "--shm-size",
        str(TMPFS_BYTES),
        "--pids-limit",
        str(limits.processes),  # a fork bomb stops here (processes and threads)
        "--memory",
        str(memory),
        "--memory-swap",
        str(memory),  # no swap beyond it; the OOM killer acts inside
        *(["--cpus", f"{cpus:g}"] if cpus > 0 else []),  # KERNELJUDGE_CPUS=0: no quota (a kernel without CFS)
        "--cap-drop",
        "ALL",
        "--security-opt",
        "no-new-privileges",
        "--user",
        f"{user}:{group}",
        "--ulimit",
        "core=0",
        "--ulimit",
        f"cpu={limits.cpu_s}",
        "--ulimit",
        f"fsize={limits.file_bytes}",
        "--log-driver",
        "none",  # output comes back through the pipes only
        "--mount",
        _mount(workdir, INSIDE),  # the only writable mount
    ]
    for entry in sorted(workdir.iterdir()):  # what is there already (runner, lib.so, sources) stays
        if entry.is_file() and not entry.is_symlink():  # as it is: read-only, not renamed, not replaced
            command += ["--mount", _mount(entry, f"{INSIDE}/{entry.name}", readonly=True)]
    command += ["--workdir", INSIDE]
    for key, value in env.items():
        command += ["--env", f"{key}={value}"]
    if gpu is not None:
        command += ["--gpus", f"device={int(gpu)}"]
    if limits.address_space_bytes:  # docker has no --ulimit for it: the shell sets it, then becomes the command
        argv = ["sh", "-c", f'ulimit -v {limits.address_space_bytes // 1024} && exec "$@"', "sh", *argv]
    return command + [image, *argv]


def _feed(pipe, data: bytes) -> None:
    try:
        pipe.write(data)
    except (BrokenPipeError, OSError):
        pass
    finally:
        try:
            pipe.close()
        except OSError:
            pass


class _Tail(threading.Thread):
    """Reads a pipe to its end and keeps only the last OUTPUT_TAIL bytes (the output may be endless)."""

    def __init__(self, pipe):
        super().__init__(daemon=True)
        self.pipe, self.kept = pipe, b""

    def run(self):
        while chunk := self.pipe.read1(65536) if hasattr(self.pipe, "read1") else self.pipe.read(65536):
            self.kept = (self.kept + chunk)[-OUTPUT_TAIL:]

    def text(self) -> str:
        return self.kept.decode("utf-8", "replace")


class _Watchdog(threading.Thread):
    """Kills the container at the wall-clock deadline or when the working directory outgrows its limit."""

    def __init__(self, name: str, process: subprocess.Popen, workdir: Path, disk_bytes: int, deadline: float):
        super().__init__(daemon=True)
        self.name, self.process, self.workdir = name, process, workdir
        self.disk_bytes, self.deadline = disk_bytes, deadline
        self.reason = ""
        self.killed_at = 0.0
        self._done = threading.Event()

    def run(self):
        ticks = 0
        while not self._done.wait(0.1):
            ticks += 1
            if self.reason:  # the kill did not take yet: try again, and at last end the docker client itself
                if ticks % 10 == 0:
                    _kill(self.name)
                if time.monotonic() - self.killed_at > KILL_PATIENCE_S:
                    self.process.kill()
            elif time.monotonic() > self.deadline:
                self._kill("wall")
            elif ticks % 5 == 0 and sandbox._tree_bytes(self.workdir) > self.disk_bytes:
                self._kill("disk")

    def _kill(self, reason: str):
        self.reason, self.killed_at = reason, time.monotonic()
        _kill(self.name)

    def stop(self):
        self._done.set()
        if self.is_alive() and threading.current_thread() is not self:
            self.join()


def _kill(name: str) -> None:
    try:
        _docker("kill", name, timeout=30)
    except (OSError, subprocess.SubprocessError):
        pass


def _remove(name: str) -> None:
    try:
        _docker("rm", "--force", "--volumes", name, timeout=60)
    except (OSError, subprocess.SubprocessError):
        pass


def _state(name: str) -> dict | None:
    try:
        found = _docker("inspect", "--type", "container", "--format", "{{json .State}}", name, timeout=30)
        return json.loads(found.stdout) if found.returncode == 0 else None
    except (OSError, subprocess.SubprocessError, ValueError):
        return None


def _started(state: dict) -> bool:
    return not str(state.get("StartedAt", "")).startswith("0001-")


def _seconds(started: str | None, finished: str | None) -> float | None:
    """FinishedAt - StartedAt of a container (RFC 3339 with nanoseconds), None where either is not a time."""

    def parse(stamp: str) -> datetime:
        head, _, frac = stamp.rstrip("Z").partition(".")
        return datetime.fromisoformat(f"{head}.{(frac + '000000')[:6]}+00:00")

    try:
        return (parse(finished) - parse(started)).total_seconds()
    except (AttributeError, TypeError, ValueError):
        return None


def remove_stale() -> int:
    """Remove containers this host's graders left behind when they died mid-run (their pid is gone)."""
    try:
        listed = _docker(
            "ps", "--all", "--filter", f"label={LABEL}", "--format", f'{{{{.ID}}}} {{{{.Label "{LABEL}"}}}}', timeout=30
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return 0
    removed, host = 0, socket.gethostname()
    for line in listed.splitlines():
        container, _, owner = line.partition(" ")
        owner_host, _, pid = owner.rpartition(":")
        if owner_host == host and pid.isdigit() and not _alive(int(pid)):
            _remove(container)
            removed += 1
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


# --- the image's toolchain and the harness built with it ------------------------------------------------------


@functools.lru_cache(maxsize=8)
def image_toolchain(image: str) -> dict[str, str]:
    """{'cpu': g++'s version line, 'cuda': nvcc's} as found in `image` (a tag or id); '' for what is missing."""
    script = "g++ --version 2>/dev/null | head -n1; echo '|'; nvcc --version 2>/dev/null | tail -n1"
    try:
        found = _docker(
            "run",
            "--rm",
            "--network",
            "none",
            "--read-only",
            "--cap-drop",
            "ALL",
            "--user",
            f"{NOBODY}:{NOBODY}",
            "--entrypoint",
            "sh",
            image,
            "-c",
            script,
            timeout=120,
        )
    except (OSError, subprocess.SubprocessError):
        return {"cpu": "", "cuda": ""}
    gxx, _, nvcc = found.stdout.partition("|")
    return {"cpu": gxx.strip(), "cuda": nvcc.strip()}


def runner_flags(track: str) -> list[str]:
    """The harness's compile command for `track`, with compiler names the image's PATH resolves."""
    from grader.build import compiler
    from grader.build.toolchain import detect

    tools = detect()
    if hasattr(compile, "runner_flags"):  # the one place the flags are kept, once compiler.py exposes it
        flags = list(compiler.runner_flags(track, tools))
        return [os.path.basename(flags[0])] + flags[1:]
    if track == "cuda":
        arch = tools.gpu.arch if tools.gpu else settings.CUDA_ARCH.get()
        return [
            "nvcc",
            "-O2",
            "-std=c++17",
            f"-arch={arch}",
            "-x",
            "cu",
            "-DKJ_CUDA",
            "-cudart",
            "shared",
            "-Xcompiler",
            "-ffp-contract=off",
        ]
    return ["g++", "-O2", "-std=c++17", "-fopenmp", "-ffp-contract=off", "-x", "c++"]


def build_runner(track: str, *, image: str | None = None) -> Path:
    """The harness for `track`, compiled inside the image (in a container: no GPU, no network), cached.

    A runner built on the host links the host's libstdc++ and glibc, which the image may not have; so where
    submissions run in the container, the harness is built there too, by the same compiler as the submission.
    """
    import harness
    from grader.build import compiler

    pinned = image_id(image) or image_name(image)
    folder = Path(harness.__file__).parent
    sources = {p.name: p.read_bytes() for p in sorted(folder.glob("*.[ch]*")) if p.suffix in (".cpp", ".h")}
    flags = runner_flags(track)
    key = compiler._key(
        "runner in container", pinned, track, *[k + "\0" for k in sources], *sources.values(), " ".join(flags)
    )
    target = compiler.cache_root() / "runners" / key / "runner"
    if target.is_file():
        return target
    uid = sandbox.sandbox_uid()
    workdir = sandbox.new_workdir(uid)
    try:
        for file_name, data in sources.items():
            (workdir / file_name).write_bytes(data)
            (workdir / file_name).chmod(0o444)
        outcome = run(
            flags + ["-o", "runner", "runner.cpp", "-ldl"],
            workdir,
            limits=compiler.COMPILE_LIMITS,
            uid=uid,
            image=pinned,
        )
        built = workdir / "runner"
        if outcome.returncode != 0 or not built.is_file():
            raise RuntimeError(
                f"building the harness in {image_name(image)} failed (status {outcome.returncode}):\n"
                f"{outcome.stdout}{outcome.stderr}"
            )
        return compiler._store(target.parent, "runner", built.read_bytes())
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
