"""The programs of a supervised run, compiled on the trusted host and cached by hash of their sources.

- the supervisors (trusted; run as the grader's user, outside the sandbox): grader/run/supervisor.cpp for the
  CPU track (g++), grader/run/cuda_supervisor.cu for the CUDA track (nvcc, the CUDA runtime linked statically);
- the workers (the untrusted side; run in the sandbox, load the submission): harness/worker.cpp (g++) and
  harness/gpu_worker.cu (nvcc, the shared CUDA runtime, as the submissions are built, so both use one runtime);
  the Python tracks' worker is Python (harness/python_worker.py) and needs only its seccomp filter built:
  harness/python_seccomp.cpp, a shared library it loads (g++).
  Where submissions run in the container, the compiled worker is compiled in its image (in a container: no GPU,
  no network) by the compiler that builds the submissions, so that it links the libraries it runs with; the
  image's id is then part of its cache key. The supervisors stay on the host in either case.
Each side compiles with only its own folder and grader/boundary/ (the wire format, the input generator, the CUDA
driver calls: the headers both sides share) on the include path, never the other side's folder
(tests/test_header_boundary.py). -ffp-contract=off keeps the supervisors' input generator bit for bit equal to
grader/run/inputs.py. The cache entries are the grader's own (0700 folder, 0755 files inside).
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import harness
from grader import settings, tracks
from grader.sandbox import base, local
from grader.sandbox.base import Limits
from grader.toolchain import Toolchain, detect
from grader.tracks import cpu

RUN_SOURCES = Path(__file__).parent  # the trusted side: the supervisors and their own headers
HARNESS_SOURCES = Path(harness.__file__).parent  # the untrusted side: the workers and theirs
# What both sides compile, and the only headers either takes from beyond its own folder: the wire format
# (protocol.h), the input generator (generator.h) and the CUDA driver calls (cuda_driver.h).
BOUNDARY_SOURCES = RUN_SOURCES.parent / "boundary"
BOUNDARY_HEADERS = tuple(BOUNDARY_SOURCES / name for name in ("protocol.h", "generator.h", "cuda_driver.h"))
SUPERVISOR_HEADERS = (
    RUN_SOURCES / "guards.h",
    RUN_SOURCES / "supervision.h",
    RUN_SOURCES / "row_audit.h",
    RUN_SOURCES / "input_check.h",
    *BOUNDARY_HEADERS,
)
WORKER_HEADERS = (HARNESS_SOURCES / "seccomp.h", *BOUNDARY_HEADERS)


IMAGE_BUILD_LIMITS = Limits(wall_s=600, cpu_s=1200, memory_bytes=8 << 30, file_bytes=1 << 30, disk_bytes=2 << 30)


@dataclass(frozen=True)
class Program:
    source: Path
    cuda: bool
    flags: tuple[str, ...]
    headers: tuple[Path, ...]  # what it may include: its own side's headers and the boundary's
    libraries: tuple[str, ...] = ()

    @property
    def include_flags(self) -> list[str]:
        """Its own folder and the boundary's on the include path, never the other side's."""
        return ["-I", str(self.source.parent), "-I", str(BOUNDARY_SOURCES)]


PROGRAMS = {
    "supervisor": Program(
        RUN_SOURCES / "supervisor.cpp", False, ("-O2", "-std=c++17", "-ffp-contract=off"), SUPERVISOR_HEADERS
    ),
    "worker": Program(HARNESS_SOURCES / "worker.cpp", False, ("-O2", "-std=c++17"), WORKER_HEADERS, ("-ldl",)),
    "cuda_supervisor": Program(
        RUN_SOURCES / "cuda_supervisor.cu",
        True,
        ("-O2", "-std=c++17", "-Xcompiler", "-ffp-contract=off"),
        SUPERVISOR_HEADERS,
    ),
    "gpu_worker": Program(
        HARNESS_SOURCES / "gpu_worker.cu",
        True,
        ("-O2", "-std=c++17", "-cudart", "shared", "-Xlinker", "-export-dynamic"),  # its stream creation, for solve
        WORKER_HEADERS,
        ("-ldl",),
    ),
    "python_seccomp.so": Program(
        HARNESS_SOURCES / "python_seccomp.cpp", False, ("-O2", "-std=c++17", "-shared", "-fPIC"), WORKER_HEADERS
    ),
}


def supervisor(track: str = cpu.NAME) -> Path:
    """The trusted supervisor of a run on `track`: its device's (the CUDA one for every track on the GPU)."""
    return _build(tracks.get(track).device.supervisor)


def worker(track: str = cpu.NAME, run: object = None) -> Path:
    """The compiled worker of the cuda and cpu tracks (the Python tracks' worker is harness/python_worker.py);
    `run` is the sandbox it runs in (a container Backend: built in its image)."""
    compiled = tracks.get(track).compiled
    if compiled is None:
        raise ValueError(f"the {track} track has no compiled worker: it runs harness/python_worker.py")
    return _build(compiled.worker, run if base.in_container(run) else None)


def python_seccomp() -> Path:
    """The Python worker's seccomp filter, a shared library (harness/python_seccomp.cpp)."""
    return _build("python_seccomp.so")


def _compiler(program: Program, tools: Toolchain) -> tuple[str, list[str], str]:
    """(compiler, its flags for this machine, its version)."""
    if program.cuda:
        if not tools.nvcc:
            raise RuntimeError("the CUDA track needs nvcc, and none was found")
        return tools.nvcc, [*tools.arch_flags], tools.nvcc_version
    if not tools.gxx:
        raise RuntimeError("the CPU track needs g++, and none was found")
    return tools.gxx, [], tools.gxx_version


def _build(name: str, container: object = None) -> Path:
    """`name` from the cache or compiled now: on this host, or in `container`'s image."""
    program = PROGRAMS[name]
    tools = detect()
    compiler, machine_flags, version = _compiler(program, tools)
    if container is not None:  # the image's compiler, by name; its id stands for the version
        compiler, version = os.path.basename(compiler), f"image {getattr(container, 'image', '')}"
    argv = [compiler, *program.flags, *machine_flags]
    digest = hashlib.sha256()
    for part in (name, " ".join(argv[1:] + list(program.libraries)), version):
        digest.update(part.encode() + b"\0")
    for path in (program.source, *program.headers):
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    folder = Path(settings.CACHE.get()) / "supervised" / digest.hexdigest()[:32]
    target = folder / name
    if target.is_file():
        return target
    folder.mkdir(parents=True, exist_ok=True)
    folder.parent.chmod(0o700)
    built = _in_image(container, name, program, argv) if container is not None else _on_host(name, program, argv)
    with tempfile.NamedTemporaryFile(dir=folder, delete=False) as tmp:
        tmp.write(built)
    os.chmod(tmp.name, 0o755)
    os.replace(tmp.name, target)  # atomic: graders may build the same one at once
    return target


def _on_host(name: str, program: Program, argv: list[str]) -> bytes:
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / name
        result = subprocess.run(
            [*argv, *program.include_flags, "-o", str(out), str(program.source)] + list(program.libraries),
            capture_output=True,
            text=True,
            timeout=600,
        )
        if result.returncode != 0:
            raise RuntimeError(f"building the {name} failed:\n{result.stderr}")
        return out.read_bytes()


def _in_image(container, name: str, program: Program, argv: list[str]) -> bytes:
    """Compiled in a container of the image, from copies of the source and its headers in its working folder."""
    uid = local.sandbox_uid()
    workdir = local.new_workdir(uid)
    try:
        for path in (program.source, *program.headers):
            (workdir / path.name).write_bytes(path.read_bytes())
            (workdir / path.name).chmod(0o444)
        command = [*argv, "-I", ".", "-o", name, program.source.name, *program.libraries]
        outcome = container(command, workdir, limits=IMAGE_BUILD_LIMITS, uid=uid)
        built = workdir / name
        if outcome.returncode != 0 or not built.is_file():
            raise RuntimeError(
                f"building the {name} in {container.description} failed (status {outcome.returncode}):\n"
                f"{outcome.stdout}{outcome.stderr}"
            )
        return built.read_bytes()
    finally:
        local.remove_workdir(workdir)
