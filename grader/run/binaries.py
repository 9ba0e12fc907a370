"""The two programs of a supervised run, compiled on the trusted host and cached by hash of their sources.

- the supervisor (grader/run/supervisor.cpp, trusted): runs as the grader's user, outside the sandbox;
- the worker (harness/worker.cpp, untrusted side): runs in the sandbox, loads the submission.
Both are built with g++ for the CPU track; -ffp-contract=off keeps the supervisor's input generator bit for bit
equal to grader/run/inputs.py. The cache entries are the grader's own (0700 folder, 0755 files inside).
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import tempfile
from pathlib import Path

import harness
from grader import settings
from grader.build.toolchain import detect

RUN_SOURCES = Path(__file__).parent
HARNESS_SOURCES = Path(harness.__file__).parent
FLAGS = {"supervisor": ["-O2", "-std=c++17", "-ffp-contract=off"], "worker": ["-O2", "-std=c++17"]}
LIBRARIES = {"supervisor": [], "worker": ["-ldl"]}
SOURCES = {"supervisor": RUN_SOURCES / "supervisor.cpp", "worker": HARNESS_SOURCES / "worker.cpp"}
HEADERS = (RUN_SOURCES / "protocol.h", RUN_SOURCES / "generator.h", HARNESS_SOURCES / "seccomp.h")


def supervisor() -> Path:
    return _build("supervisor")


def worker() -> Path:
    return _build("worker")


def _build(name: str) -> Path:
    tools = detect()
    if not tools.gxx:
        raise RuntimeError("the CPU track needs g++, and none was found")
    argv = [tools.gxx, *FLAGS[name], "-I", str(RUN_SOURCES), "-I", str(HARNESS_SOURCES)]
    digest = hashlib.sha256()
    for part in (name, " ".join(argv[1:] + LIBRARIES[name]), tools.gxx_version):
        digest.update(part.encode() + b"\0")
    for path in (SOURCES[name], *HEADERS):
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
            [*argv, "-o", str(out), str(SOURCES[name]), *LIBRARIES[name]], capture_output=True, text=True, timeout=300
        )
        if result.returncode != 0:
            raise RuntimeError(f"building the {name} failed:\n{result.stderr}")
        with tempfile.NamedTemporaryFile(dir=folder, delete=False) as tmp:
            tmp.write(out.read_bytes())
        os.chmod(tmp.name, 0o755)
        os.replace(tmp.name, target)  # atomic: graders may build the same one at once
    return target
