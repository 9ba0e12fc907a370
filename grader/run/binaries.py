"""The programs of a supervised run, compiled on the trusted host and cached by hash of their sources.

- the supervisors (trusted; run as the grader's user, outside the sandbox): grader/run/supervisor.cpp for the
  CPU track (g++), grader/run/cuda_supervisor.cu for the CUDA track (nvcc, the CUDA runtime linked statically);
- the workers (the untrusted side; run in the sandbox, load the submission): harness/worker.cpp (g++) and
  harness/gpu_worker.cu (nvcc, the shared CUDA runtime, as the submissions are built, so both use one runtime);
  the Python tracks' worker is Python (harness/python_worker.py) and needs only its seccomp filter built:
  harness/python_seccomp.cpp, a shared library it loads (g++).
-ffp-contract=off keeps the supervisors' input generator bit for bit equal to grader/run/inputs.py. The cache
entries are the grader's own (0700 folder, 0755 files inside).
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import harness
from grader import settings
from grader.build.toolchain import Toolchain, detect
from grader.problems.tracks import device

RUN_SOURCES = Path(__file__).parent
HARNESS_SOURCES = Path(harness.__file__).parent
HEADERS = tuple(RUN_SOURCES / name for name in ("protocol.h", "generator.h", "supervision.h")) + tuple(
    HARNESS_SOURCES / name for name in ("seccomp.h", "cuda_driver.h")
)


@dataclass(frozen=True)
class Program:
    source: Path
    cuda: bool
    flags: tuple[str, ...]
    libraries: tuple[str, ...] = ()


PROGRAMS = {
    "supervisor": Program(RUN_SOURCES / "supervisor.cpp", False, ("-O2", "-std=c++17", "-ffp-contract=off")),
    "worker": Program(HARNESS_SOURCES / "worker.cpp", False, ("-O2", "-std=c++17"), ("-ldl",)),
    "cuda_supervisor": Program(
        RUN_SOURCES / "cuda_supervisor.cu", True, ("-O2", "-std=c++17", "-Xcompiler", "-ffp-contract=off")
    ),
    "gpu_worker": Program(
        HARNESS_SOURCES / "gpu_worker.cu", True, ("-O2", "-std=c++17", "-cudart", "shared"), ("-ldl",)
    ),
    "python_seccomp.so": Program(
        HARNESS_SOURCES / "python_seccomp.cpp", False, ("-O2", "-std=c++17", "-shared", "-fPIC")
    ),
}


def supervisor(track: str = "cpu") -> Path:
    """The trusted supervisor of a run on `track`: the CUDA one for every track on the GPU."""
    return _build("cuda_supervisor" if device(track) == "cuda" else "supervisor")


def worker(track: str = "cpu") -> Path:
    """The compiled worker of the cuda and cpu tracks (the Python tracks' worker is harness/python_worker.py)."""
    return _build("gpu_worker" if track == "cuda" else "worker")


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


def _build(name: str) -> Path:
    program = PROGRAMS[name]
    tools = detect()
    compiler, machine_flags, version = _compiler(program, tools)
    argv = [compiler, *program.flags, *machine_flags, "-I", str(RUN_SOURCES), "-I", str(HARNESS_SOURCES)]
    digest = hashlib.sha256()
    for part in (name, " ".join(argv[1:] + list(program.libraries)), version):
        digest.update(part.encode() + b"\0")
    for path in (program.source, *HEADERS):
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    folder = Path(settings.CACHE.get()) / "supervised" / digest.hexdigest()[:32]
    target = folder / name
    if target.is_file():
        return target
    folder.mkdir(parents=True, exist_ok=True)
    folder.parent.chmod(0o700)
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / name
        result = subprocess.run(
            [*argv, "-o", str(out), str(program.source), *program.libraries],
            capture_output=True,
            text=True,
            timeout=600,
        )
        if result.returncode != 0:
            raise RuntimeError(f"building the {name} failed:\n{result.stderr}")
        with tempfile.NamedTemporaryFile(dir=folder, delete=False) as tmp:
            tmp.write(out.read_bytes())
        os.chmod(tmp.name, 0o755)
        os.replace(tmp.name, target)  # atomic: graders may build the same one at once
    return target
