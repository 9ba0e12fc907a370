"""Compile a submission (in the sandbox) and the harness (trusted), with a build cache.

The submission is compiled through a generated shim that #includes it and exports one entry point with a
fixed ABI, `kerneljudge_entry(void** pointers, const int* sizes)`, so `solve` is found with or without
`extern "C"`. The library must link against the CUDA runtime (CUDA track) or the C/C++ runtime and OpenMP
(CPU track) alone: `-z defs` makes any other undefined symbol a compile error, and a library that asks for
the dynamic loader (dlopen, dlsym) is refused. Builds are cached by hash of (source, flags, toolchain).
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import re
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import harness
from grader import settings
from grader.build.toolchain import Toolchain, detect
from grader.problems.spec import Problem
from grader.sandbox import local as sandbox

COMPILE_LIMITS = sandbox.Limits(
    wall_s=180, cpu_s=600, memory_bytes=8 << 30, file_bytes=1 << 30, disk_bytes=2 << 30, processes=256
)
FORBIDDEN_SYMBOLS = ("dlopen", "dlmopen", "dlsym", "dlvsym")
SHIM_VERSION = "1"
EXTENSIONS = {"cuda": ".cu", "cpu": ".cpp"}


@dataclass
class Build:
    ok: bool
    library: Path | None
    log: str
    cached: bool
    seconds: float
    refused: str = ""  # why a library that compiled is still not allowed to run


def cache_root() -> Path:
    return Path(settings.CACHE.get())


def track_for(path: Path) -> str | None:
    """The track a file's extension implies (.cu -> cuda, .cpp/.cc/.cxx -> cpu)."""
    suffix = path.suffix.lower()
    return "cuda" if suffix == ".cu" else "cpu" if suffix in (".cpp", ".cc", ".cxx") else None


def submission_flags(track: str, tools: Toolchain, in_container: bool = False) -> list[str]:
    """The compile command; `in_container`: the image's own nvcc/g++ (by name), whatever this host has."""
    if in_container:
        tools = dataclasses.replace(tools, nvcc="nvcc", gxx="g++")
    if track == "cuda":
        if not tools.nvcc:
            raise RuntimeError("the CUDA track needs nvcc, and none was found")
        arch = tools.gpu.arch if tools.gpu else settings.CUDA_ARCH.get()
        return [
            tools.nvcc,
            "-O3",
            "-std=c++17",
            f"-arch={arch}",
            "-shared",
            "-Xcompiler",
            "-fPIC",
            "-cudart",
            "shared",
            "-Xlinker",
            "-z",
            "-Xlinker",
            "defs",
            "-lineinfo",
        ]
    if not tools.gxx:
        raise RuntimeError("the CPU track needs g++, and none was found")
    return [tools.gxx, "-O3", "-march=native", "-fopenmp", "-std=c++17", "-shared", "-fPIC", "-Wl,-z,defs"]


def shim_source(problem: Problem, include_name: str) -> str:
    args, pointer, size = [], 0, 0
    for param in problem.signature:
        if param.role == "size":
            args.append(f"n[{size}]")
            size += 1
        else:
            args.append(f"static_cast<{param.type}>(p[{pointer}])")
            pointer += 1
    return (
        f"// kerneljudge shim v{SHIM_VERSION}: the submission, and one entry point with a fixed ABI.\n"
        f'#include "{include_name}"\n'
        f'extern "C" void kerneljudge_entry(void** p, const int* n) {{\n'
        f"    solve({', '.join(args)});\n"
        f"}}\n"
    )


def _safe_name(filename: str, track: str) -> str:
    stem = re.sub(r"[^A-Za-z0-9_.-]", "_", Path(filename).stem)[:60] or "submission"
    return stem + EXTENSIONS[track]


def _key(*parts: str | bytes) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part.encode() if isinstance(part, str) else part)
        digest.update(b"\0")
    return digest.hexdigest()[:32]


def build_submission(problem: Problem, source: bytes, filename: str, track: str, run=None) -> Build:
    """Compile `source` for `track` in the sandbox `run` (container.choose's; default: the local one)."""
    run = run or sandbox.run
    tools = detect()
    flags = submission_flags(track, tools, in_container=getattr(run, "kind", "local") == "docker")
    name = _safe_name(filename, track)
    shim = shim_source(problem, name)
    key = _key(
        track,
        source,
        name,
        shim,
        " ".join(flags),
        tools.describe(track),
        tools.cpu_model,
        getattr(run, "toolchain_id", "local"),
    )
    entry = cache_root() / "builds" / key
    started = time.monotonic()
    if (entry / "lib.so").is_file():
        return Build(True, entry / "lib.so", "", True, time.monotonic() - started, _refusal(entry / "lib.so"))
    if (entry / "error.txt").is_file():
        return Build(False, None, (entry / "error.txt").read_text(), True, time.monotonic() - started)

    uid = sandbox.sandbox_uid()
    workdir = sandbox.new_workdir(uid)
    try:
        (workdir / name).write_bytes(source)
        shim_name = "kerneljudge_shim" + EXTENSIONS[track]
        (workdir / shim_name).write_text(shim)
        for path in (workdir / name, workdir / shim_name):
            path.chmod(0o444)
        outcome = run(
            flags + ["-o", "lib.so", shim_name],
            workdir,
            limits=COMPILE_LIMITS,
            uid=uid,
            env={"PATH": "/usr/local/cuda/bin:/usr/local/bin:/usr/bin:/bin"},
        )
        log = _clean_log(outcome.stdout + outcome.stderr, workdir)
        library = workdir / "lib.so"
        if outcome.timed_out:
            return Build(
                False,
                None,
                f"compilation took longer than {COMPILE_LIMITS.wall_s:.0f} s",
                False,
                time.monotonic() - started,
            )
        if outcome.returncode != 0 or not library.is_file():
            log = log or f"the compiler exited with status {outcome.returncode}"
            if re.search(r"^kerneljudge_shim\S*.*error", log, re.MULTILINE):
                log += f"\nnote: kerneljudge calls `{problem.prototype()}`; check the name and the types."
            if re.search(r"undefined (reference|symbol)", log):
                log += "\nnote: only the CUDA runtime (CUDA track) or the C++ runtime and OpenMP (CPU track) may be linked."
            _store(entry, "error.txt", log.encode())
            return Build(False, None, log, False, time.monotonic() - started)
        cached = _store(entry, "lib.so", library.read_bytes())
        return Build(True, cached, log, False, time.monotonic() - started, _refusal(cached))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def _clean_log(log: str, workdir: Path) -> str:
    return log.replace(str(workdir) + "/", "").replace(str(workdir), ".").strip()


def _store(entry: Path, name: str, data: bytes) -> Path:
    """Write a cache entry atomically (concurrent graders may build the same source)."""
    entry.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=entry, delete=False) as tmp:
        tmp.write(data)
    os.chmod(tmp.name, 0o755)
    os.replace(tmp.name, entry / name)
    return entry / name


def _refusal(library: Path) -> str:
    """Why a compiled library may not run: it imports the dynamic loader (to reach other libraries)."""
    try:
        out = subprocess.run(
            ["nm", "-D", "--undefined-only", str(library)], capture_output=True, text=True, timeout=30
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return ""
    used = {line.split()[-1].split("@")[0] for line in out.splitlines() if line.strip()}
    bad = sorted(used.intersection(FORBIDDEN_SYMBOLS))
    return f"the library uses {', '.join(bad)}: loading other libraries at run time is not allowed" if bad else ""


def runner_flags(track: str, tools: Toolchain) -> list[str]:
    """The harness's compile command for `track` (sources and -o added by the caller)."""
    if track == "cuda":
        arch = tools.gpu.arch if tools.gpu else settings.CUDA_ARCH.get()
        return [
            tools.nvcc,
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
    return [tools.gxx, "-O2", "-std=c++17", "-fopenmp", "-ffp-contract=off", "-x", "c++"]


def build_runner(track: str, run=None) -> Path:
    """The harness for `track`, compiled from harness/*.cpp|h (trusted code, so outside the sandbox); where `run`
    is the container, inside the image instead, so that it links the libraries it will run with."""
    if getattr(run, "kind", "local") == "docker":
        from grader.sandbox import container

        return container.build_runner(track, image=run.image)
    tools = detect()
    folder = Path(harness.__file__).parent
    sources = {p.name: p.read_bytes() for p in sorted(folder.glob("*.[ch]*")) if p.suffix in (".cpp", ".h")}
    flags = runner_flags(track, tools)
    key = _key(track, *[k + "\0" for k in sources], *sources.values(), " ".join(flags), tools.describe(track))
    target = cache_root() / "runners" / key / "runner"
    if target.is_file():
        return target
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "runner"
        result = subprocess.run(
            flags + ["-o", str(out), str(folder / "runner.cpp"), "-ldl"], capture_output=True, text=True, timeout=600
        )
        if result.returncode != 0:
            raise RuntimeError(f"building the harness failed:\n{result.stderr}")
        return _store(target.parent, "runner", out.read_bytes())
