"""Compile a submission (in the sandbox) and the harness (trusted), with a build cache.

The submission is compiled through a generated shim that #includes it and exports one entry point with a
fixed ABI, `kerneljudge_entry(void** pointers, const int* sizes)`, so `solve` is found with or without
`extern "C"`. The library must link against the CUDA runtime (CUDA track) or the C/C++ runtime and OpenMP
(CPU track) alone: `-z defs` makes any other undefined symbol a compile error, and a library that asks for
the dynamic loader (dlopen, dlsym) is refused. Builds are cached by hash of (source, flags, toolchain) in
the private, bounded build cache (grader.build.cache); diagnostics are shown as grader.build.diagnostics
cleans them; the harness is grader.build.runner's.

On the Python tracks (triton, cupy) nothing is compiled to machine code here: the source is byte-compiled and
checked against the track's rules (grader.build.python_check), and the "library" is the checked source, kept in
the same cache; Triton and NVRTC compile its kernels in the run, where that time counts against the time limit.
"""

from __future__ import annotations

import dataclasses
import os
import re
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from grader import tracks
from grader.build import cache, diagnostics, python_check
from grader.build.cache import cache_root
from grader.build.runner import build_runner
from grader.problems.spec import Problem
from grader.sandbox import base, runtime_libraries
from grader.sandbox import local as sandbox
from grader.sandbox.docker_command import INSIDE
from grader.toolchain import Toolchain, detect
from grader.tracks import cuda

__all__ = ["COMPILE_LIMITS", "Build", "build_runner", "build_submission", "cache_root"]

COMPILE_MEMORY_CAP = 8 << 30
MAX_LOG_BYTES = 64 << 10  # of diagnostics kept and shown


def compile_memory(workers: int | None = None) -> int:
    """One compile's memory limit: COMPILE_MEMORY_CAP, or less where the machine's RAM shared by `workers`
    compiles at once (default: one per core, as grade-many runs them) is less."""
    physical = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    return max(256 << 20, min(COMPILE_MEMORY_CAP, physical // max(1, workers or os.cpu_count() or 1)))


COMPILE_LIMITS = sandbox.Limits(
    wall_s=180,
    cpu_s=600,
    memory_bytes=compile_memory(),
    file_bytes=1 << 30,
    disk_bytes=2 << 30,
    inodes=1 << 14,
    processes=256,
)
FORBIDDEN_SYMBOLS = ("dlopen", "dlmopen", "dlsym", "dlvsym")
SHIM_VERSION = "1"
PYTHON_SOURCE = "submission.py"  # the name a Python-track "library" has in the cache and in the run folder
LOG_FILE = "compiler-output.txt"  # in the build folder: the pipes keep only the end of what was written
LOG_KEPT = 8192  # bytes of the compiler's output kept from its start, and as many from its end


@dataclass
class Build:
    ok: bool
    library: Path | None
    log: str
    cached: bool
    seconds: float
    refused: str = ""  # why a library that compiled is still not allowed to run


def submission_flags(track: str, tools: Toolchain, in_container: bool = False) -> list[str]:
    """The compile command; `in_container`: the image's own nvcc/g++ (by name), whatever this host has."""
    if in_container:
        tools = dataclasses.replace(tools, nvcc="nvcc", gxx="g++")
    compiled = tracks.get(track).compiled
    if compiled is None:
        raise ValueError(f"the {track} track is not compiled: its source is checked (grader/build/python_check.py)")
    return compiled.command(tools)


def shim_source(problem: Problem, include_name: str, track: str = cuda.NAME) -> str:
    """The shim: it casts each buffer to the type a `track` submission declares (grader/problems/dtypes.py)."""
    args, pointer, size = [], 0, 0
    for param in problem.signature:
        if param.role == "size":
            args.append(f"n[{size}]")
            size += 1
        else:
            args.append(f"static_cast<{param.c_type(track)}>(p[{pointer}])")
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
    return stem + tracks.get(track).extension


def build_submission(problem: Problem, source: bytes, filename: str, track: str, run=None) -> Build:
    """Compile `source` for `track` in the sandbox `run` (container.choose's; default: the local one)."""
    if tracks.get(track).is_python:
        return _check_python(problem, source, filename, track)
    run = run or sandbox.run
    tools = detect()
    in_container = base.in_container(run)
    flags = submission_flags(track, tools, in_container=in_container)
    name = _safe_name(filename, track)
    shim = shim_source(problem, name, track)
    key = cache.key(
        track,
        source,
        name,
        shim,
        " ".join(flags),
        tracks.get(track).toolchain(tools),
        tools.cpu_model,
        getattr(run, "toolchain_id", "local"),
    )
    entry = cache.entry("builds", key)
    started = time.monotonic()
    if (library := cache.lookup(entry, "lib.so")) is not None:
        return Build(True, library, "", True, time.monotonic() - started, _refusal(library))
    if (error := cache.lookup(entry, "error.txt")) is not None:
        return Build(False, None, error.read_text(errors="replace"), True, time.monotonic() - started)

    uid = sandbox.sandbox_uid()
    workdir = sandbox.new_workdir(uid)
    try:
        (workdir / name).write_bytes(source)
        shim_name = "kerneljudge_shim" + tracks.get(track).extension
        (workdir / shim_name).write_text(shim)
        for path in (workdir / name, workdir / shim_name):
            path.chmod(0o444)
        outcome = run(
            ["sh", "-c", f'exec "$@" > {LOG_FILE} 2>&1', "sh", *flags, "-o", "lib.so", shim_name],
            workdir,
            limits=COMPILE_LIMITS if in_container else _with_compile_view(tools),
            uid=uid,
            env={"PATH": "/usr/local/cuda/bin:/usr/local/bin:/usr/bin:/bin"},
        )
        raw = _compiler_output(workdir / LOG_FILE) + outcome.stdout + outcome.stderr
        log = diagnostics.clean(raw, (str(workdir), INSIDE))[-MAX_LOG_BYTES:]
        library = workdir / "lib.so"
        if outcome.timed_out:
            return Build(
                False,
                None,
                f"compilation took longer than {COMPILE_LIMITS.wall_s:.0f} s",
                False,
                time.monotonic() - started,
            )
        if outcome.killed_for == "memory":
            return Build(False, None, _memory_message(), False, time.monotonic() - started)
        if outcome.returncode != 0 or not library.is_file():
            log = log or f"the compiler exited with status {outcome.returncode}"
            if re.search(r"^kerneljudge_shim\S*.*error", log, re.MULTILINE):
                log += f"\nnote: kerneljudge calls `{problem.prototype(track=track)}`; check the name and the types."
            if re.search(r"undefined (reference|symbol)", log):
                log += "\nnote: only the CUDA runtime (CUDA track) or the C++ runtime and OpenMP (CPU track) may be linked."
            cache.store(entry, "error.txt", log.encode())
            return Build(False, None, log, False, time.monotonic() - started)
        try:
            cached = cache.store(entry, "lib.so", library.read_bytes())
        except cache.TooLarge as error:
            return Build(False, None, f"the compiled library is too large: {error}", False, time.monotonic() - started)
        return Build(True, cached, log, False, time.monotonic() - started, _refusal(cached))
    finally:
        sandbox.remove_workdir(workdir)


def _with_compile_view(tools: Toolchain) -> sandbox.Limits:
    """COMPILE_LIMITS in a root that shows the toolchain and nothing of the host's own files (no /etc, /home,
    /root, /opt, /var), so no diagnostic can quote them (grader.sandbox.views)."""
    compilers = tuple(c for c in (tools.gxx, tools.nvcc) if c)
    return dataclasses.replace(COMPILE_LIMITS, view=runtime_libraries.compile_view(compilers))


def _check_python(problem: Problem, source: bytes, filename: str, track: str) -> Build:
    """The Python tracks' compile stage: byte-compile and check the rules; the checked source is the library."""
    started = time.monotonic()
    name = Path(filename).name
    checked = python_check.check(problem, source, name, track)
    if checked.compile_error:
        return Build(False, None, checked.compile_error, False, time.monotonic() - started)
    entry = cache.entry("builds", cache.key(track, source, name, problem.prototype(track=track)))
    library = cache.lookup(entry, PYTHON_SOURCE) or cache.store(entry, PYTHON_SOURCE, source)
    return Build(True, library, "", False, time.monotonic() - started, checked.refused)


def _memory_message() -> str:
    return f"the compiler ran out of memory (the limit is {COMPILE_LIMITS.memory_bytes >> 20} MiB)"


def _compiler_output(path: Path) -> str:
    """The compiler's output, its head and its tail: the first error is the one to fix, the end says how it
    ended; a marker stands where the middle was left out ("" if the compiler never wrote the file)."""
    try:
        with open(path, "rb") as log:
            size = os.fstat(log.fileno()).st_size
            data = log.read(LOG_KEPT)
            if size > 2 * LOG_KEPT:
                log.seek(size - LOG_KEPT)
                data += f"\n[... {size - 2 * LOG_KEPT} bytes of compiler output left out ...]\n".encode() + log.read()
            else:
                data += log.read()
    except OSError:
        return ""
    return data.decode("utf-8", "replace")


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
