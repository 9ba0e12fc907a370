"""Choosing the sandbox: `--sandbox auto|docker|local` and the Backend that runs commands in the chosen one.

`choose` is the one place the choice is made; the Backend it returns carries it (`kind`), and
grader.sandbox.base.in_container is the one place that is asked.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from grader import settings, tracks
from grader.sandbox import docker_engine, docker_run, local
from grader.sandbox.base import Limits, Outcome
from grader.tracks import cpu

KINDS = ("auto", "docker", "local")


@dataclass(frozen=True)
class Backend:
    """A sandbox to run untrusted commands in (grader.sandbox.base.Sandbox)."""

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
            return docker_run.run(
                argv,
                workdir,
                limits=limits,
                stdin=stdin,
                uid=uid,
                env=env,
                gpu=gpu,
                image=self.image,
                pass_fds=pass_fds,
                on_start=on_start,
            )
        return local.run(
            argv, workdir, limits=limits, stdin=stdin, uid=uid, env=env, pass_fds=pass_fds, on_start=on_start
        )

    @property
    def toolchain_id(self) -> str:
        """Part of every build cache key: a library built in one image is not one built in another, or locally."""
        return f"docker {self.image}" if self.kind == "docker" else "local"

    def compiler(self, track: str) -> str:
        """The compiler's version line for `track` (with the CUDA -arch), as the verdict's toolchain reports it."""
        from grader.toolchain import detect  # a leaf module: what this machine offers

        tools = detect()
        chosen = tracks.get(track)
        if self.kind != "docker" or chosen.compiled is None:
            return chosen.toolchain(tools)
        return chosen.compiled.in_image(
            docker_engine.image_toolchain(self.image).get(chosen.compiled.program, ""), tools
        )


def choose(kind: str | None = "auto", track: str = cpu.NAME, *, image: str | None = None) -> tuple[Backend, str]:
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
    chosen = tracks.get(track)
    if chosen.is_python:  # the image has no Python worker: the supervisor is not in it yet (docs/security.md)
        if kind == "docker":
            raise RuntimeError(f"the {track} track runs in the local sandbox only: the container has no Python worker")
        return _local(f"local sandbox (the {track} track has no container yet)")
    found, why = docker_engine.probe(chosen.device.gpu, image)
    if found is not None:
        docker_engine.remove_stale()
        description = f"container: {why}"
        return Backend("docker", description, found), description
    if kind == "docker":
        raise RuntimeError(f"the container sandbox cannot be used: {why}")
    return _local(f"local sandbox (no container: {why})")


def _local(description: str) -> tuple[Backend, str]:
    return Backend("local", description), description
