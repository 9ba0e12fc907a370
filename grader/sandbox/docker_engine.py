"""The Docker engine as the container sandbox sees it: is it there, which image and toolchain it has, and
the containers a dead grader left behind. Everything goes through the `docker` command line.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import socket
import subprocess

from grader import settings

LABEL = "kerneljudge.sandbox"  # on every container: owner() of the grader that started it
NOBODY = 65534  # the user a root grader's run gets when no uid was given


def image_name(image: str | None = None) -> str:
    """The image to use: the argument, else $KERNELJUDGE_IMAGE, else kerneljudge:latest."""
    return image or settings.IMAGE.get()


def gpu_index() -> int:
    """The GPU a CUDA run gets (`--gpus device=N`): $KERNELJUDGE_GPU, else 0."""
    return int(settings.GPU.get())


def docker(*args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run(["docker", *args], capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)


def last_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else ""


def image_id(image: str | None = None) -> str | None:
    """The image's id (sha256:...), or None when the engine does not have it."""
    try:
        found = docker("image", "inspect", "--format", "{{.Id}}", image_name(image), timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    return found.stdout.strip() or None if found.returncode == 0 else None


def engine() -> tuple[str | None, str]:
    """(the Docker server's version, '') when an engine answers, else (None, why not)."""
    if not shutil.which("docker"):
        return None, "no docker command on PATH"
    try:
        found = docker("version", "--format", "{{.Server.Version}}", timeout=20)
    except subprocess.TimeoutExpired:
        return None, "the Docker engine did not answer within 20 s"
    except OSError as error:
        return None, f"docker could not be run: {error}"
    if found.returncode != 0 or not found.stdout.strip():
        return None, f"no Docker engine reachable ({last_line(found.stderr) or 'docker version failed'})"
    return found.stdout.strip(), ""


def nvidia_runtime() -> bool:
    """Whether `docker run --gpus` can work: the NVIDIA container runtime or its hook is installed."""
    try:
        runtimes = docker("info", "--format", "{{json .Runtimes}}", timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        runtimes = ""
    return "nvidia" in runtimes or bool(shutil.which("nvidia-container-runtime-hook"))


def available(*, gpu: bool = False, image: str | None = None) -> tuple[bool, str]:
    """(True, what will be used) when the container sandbox can run here; else (False, the reason)."""
    found, why = probe(gpu, image)
    return found is not None, why


def probe(gpu: bool, image: str | None) -> tuple[str | None, str]:
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


def kill(name: str) -> None:
    """`docker kill` (best effort)."""
    try:
        docker("kill", name, timeout=30)
    except (OSError, subprocess.SubprocessError):
        pass


def remove(name: str) -> None:
    """`docker rm --force` (best effort)."""
    try:
        docker("rm", "--force", "--volumes", name, timeout=60)
    except (OSError, subprocess.SubprocessError):
        pass


def state(name: str) -> dict | None:
    """The container's State (exit code, OOMKilled, start and end times), or None."""
    try:
        found = docker("inspect", "--type", "container", "--format", "{{json .State}}", name, timeout=30)
        return json.loads(found.stdout) if found.returncode == 0 else None
    except (OSError, subprocess.SubprocessError, ValueError):
        return None


def remove_stale() -> int:
    """Remove containers this host's graders left behind when they died mid-run (their pid is gone)."""
    try:
        listed = docker(
            "ps", "--all", "--filter", f"label={LABEL}", "--format", f'{{{{.ID}}}} {{{{.Label "{LABEL}"}}}}', timeout=30
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return 0
    removed, mine = 0, owner().rsplit(":", 1)[0]
    for line in listed.splitlines():
        container, _, label = line.partition(" ")
        where, _, pid = label.rpartition(":")
        if where == mine and pid.isdigit() and not _alive(int(pid)):
            remove(container)
            removed += 1
    return removed


def owner() -> str:
    """This grader process as its containers are labelled: host, PID namespace and pid. A pid means nothing in
    another PID namespace (a grader in a container that shares this Docker engine, with the host's name), so
    only a container of this namespace whose pid is gone is stale; others are left alone."""
    try:
        namespace = os.readlink("/proc/self/ns/pid")
    except OSError:
        namespace = "pid:[?]"
    return f"{socket.gethostname()}:{namespace}:{os.getpid()}"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@functools.lru_cache(maxsize=8)
def image_toolchain(image: str) -> dict[str, str]:
    """{'cpu': g++'s version line, 'cuda': nvcc's} as found in `image` (a tag or id); '' for what is missing."""
    script = "g++ --version 2>/dev/null | head -n1; echo '|'; nvcc --version 2>/dev/null | grep -m1 ', release '"
    try:
        found = docker(
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
