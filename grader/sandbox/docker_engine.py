"""The Docker engine as the container sandbox sees it, through the `docker` Python SDK (no docker command on
the host): is an engine there, which image and toolchain it has, the NVIDIA runtime, and the containers a dead
grader left behind. The engine is found as the SDK finds it (DOCKER_HOST, else the local socket); with neither,
the answer is no before the SDK is imported (a quarter of a second of every grading on a host without Docker).
"""

from __future__ import annotations

import functools
import os
import socket
import threading
from typing import Any

from grader import settings

LABEL = "kerneljudge.sandbox"  # on every container: owner() of the grader that started it
NOBODY = 65534  # the user a root grader's run gets when no uid was given
API_TIMEOUT_S = 60  # one call to the engine; a wait for a running container passes its own
POOL_SIZE = 64  # connections kept to the engine: one per concurrent call (grade-many's compile pool)
LOCAL_SOCKET = "/var/run/docker.sock"  # where the SDK looks when DOCKER_HOST is not set

_lock = threading.Lock()
_clients: dict[int, Any] = {}


class EngineError(RuntimeError):
    """No engine could be reached, or it refused a call: the message says which and why."""


def errors() -> tuple[type[BaseException], ...]:
    """What a call through the SDK raises when the engine is gone or refuses (DockerException, requests' errors,
    EngineError), or answers something unexpected (KeyError)."""
    import docker.errors
    import requests

    return (EngineError, docker.errors.DockerException, requests.exceptions.RequestException, OSError, KeyError)


def client() -> Any:
    """The SDK's client of this process (one per pid: a forked worker opens its own connection)."""
    with _lock:
        found = _clients.get(os.getpid())
        if found is None:
            if not os.environ.get("DOCKER_HOST") and not os.path.exists(LOCAL_SOCKET):
                raise EngineError(
                    f"no Docker engine reachable (DOCKER_HOST is not set and {LOCAL_SOCKET} does not exist)"
                )
            try:
                import docker
            except ImportError as error:  # a broken install: pyproject.toml lists docker
                raise EngineError(f"the docker Python package is not installed ({error})") from error
            try:
                found = docker.from_env(timeout=API_TIMEOUT_S, max_pool_size=POOL_SIZE)
            except (docker.errors.DockerException, OSError) as error:
                raise EngineError(f"no Docker engine reachable ({_first_line(error)})") from error
            _clients[os.getpid()] = found
        return found


def _first_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return text[0][:300] if text else type(error).__name__


def image_name(image: str | None = None) -> str:
    """The image to use: the argument, else $KERNELJUDGE_IMAGE, else kerneljudge:latest."""
    return image or settings.IMAGE.get()


def gpu_index() -> int:
    """The GPU a CUDA run gets: $KERNELJUDGE_GPU, else 0."""
    return int(settings.GPU.get())


def image_id(image: str | None = None) -> str | None:
    """The image's id (sha256:...), or None when the engine does not have it (or none answers)."""
    try:
        return str(client().api.inspect_image(image_name(image))["Id"])
    except errors():
        return None


def image_env(image: str) -> dict[str, str]:
    """The image's own ENV (LD_LIBRARY_PATH, PATH, ...), {} where it cannot be read."""
    try:
        pairs = client().api.inspect_image(image)["Config"].get("Env") or []
    except errors():
        return {}
    return dict(pair.split("=", 1) for pair in pairs if "=" in pair)


def engine() -> tuple[str | None, str]:
    """(the Docker server's version, '') when an engine answers, else (None, why not)."""
    try:
        version = client().version()
    except EngineError as error:
        return None, str(error)
    except errors() as error:
        return None, f"no Docker engine reachable ({_first_line(error)})"
    return str(version.get("Version", "?")), ""


def nvidia_runtime() -> bool:
    """Whether device requests (`--gpus`) can work: the engine lists the NVIDIA runtime, or its hook is
    installed where the engine looks for it (a stock dockerd runs nvidia-container-runtime-hook for --gpus)."""
    try:
        runtimes = client().info().get("Runtimes") or {}
    except errors():
        return False
    import shutil

    return "nvidia" in runtimes or bool(shutil.which("nvidia-container-runtime-hook"))


def available(*, gpu: bool = False, image: str | None = None) -> tuple[bool, str]:
    """(True, what will be used) when the container sandbox can run here; else (False, the reason)."""
    found, why = probe(gpu, image)
    return found is not None, why


def probe(gpu: bool, image: str | None) -> tuple[str | None, str]:
    """(the image's id, what will be used), or (None, why the container cannot be used). For a GPU run it
    also says how the container gets the GPU (grader.sandbox.docker_gpu)."""
    from grader.sandbox import docker_gpu

    name = image_name(image)
    version, why = engine()
    if version is None:
        return None, why
    found = image_id(name)
    if found is None:
        return None, f"Docker {version} is running, but it has no image {name} (build it: make docker)"
    used = f"Docker {version}, image {name} ({found[:19]})"
    if gpu:
        access = docker_gpu.plan(gpu_index(), nvidia_runtime())
        if not access.kind:
            return None, f"{used}, but no container can have a GPU: {access.why}"
        used += f"; GPU: {access.why}"
    return found, used


def kill(container: str) -> None:
    """SIGKILL the container (best effort: one already gone is fine)."""
    try:
        client().api.kill(container)
    except errors():
        pass


def remove(container: str) -> None:
    """Remove the container and its anonymous volumes, running or not (best effort)."""
    try:
        client().api.remove_container(container, v=True, force=True)
    except errors():
        pass


def state(container: str) -> dict | None:
    """The container's State (exit code, OOMKilled, start and end times), or None."""
    try:
        return dict(client().api.inspect_container(container)["State"])
    except errors():
        return None


def remove_stale() -> int:
    """Remove containers this host's graders left behind when they died mid-run (their pid is gone)."""
    try:
        listed = client().api.containers(all=True, filters={"label": LABEL})
    except errors():
        return 0
    removed, mine = 0, owner().rsplit(":", 1)[0]
    for found in listed:
        where, _, pid = str((found.get("Labels") or {}).get(LABEL, "")).rpartition(":")
        if where == mine and pid.isdigit() and not _alive(int(pid)):
            remove(found["Id"])
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
    """{'g++': its version line, 'nvcc': its} as found in `image` (a tag or id); '' for what is missing."""
    script = "g++ --version 2>/dev/null | head -n1; echo '|'; nvcc --version 2>/dev/null | grep -m1 ', release '; true"
    try:
        said = client().containers.run(
            image,
            ["-c", script],
            entrypoint="sh",
            network_mode="none",
            read_only=True,
            cap_drop=["ALL"],
            user=f"{NOBODY}:{NOBODY}",
            labels={LABEL: owner()},
            remove=True,
            stdout=True,
            stderr=False,
        )
    except errors():
        return {"g++": "", "nvcc": ""}
    gxx, _, nvcc = bytes(said).decode("utf-8", "replace").partition("|")
    return {"g++": gxx.strip(), "nvcc": nvcc.strip()}
