"""The harness (harness/runner.cpp), compiled once per track, toolchain and source, into the build cache.

It is trusted code, so on the local sandbox it is compiled on the host, outside any sandbox. Where
submissions run in the container it is compiled inside the image instead (in a container: no GPU, no
network), by the compiler that builds the submissions, so that it links the libraries it will run with; the
image's id is then part of its cache key.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

import harness
from grader.build import cache
from grader.build.toolchain import Toolchain, detect
from grader.sandbox import base, local
from grader.sandbox.base import Limits

RUNNER_LIMITS = Limits(wall_s=600, cpu_s=1200, memory_bytes=8 << 30, file_bytes=1 << 30, disk_bytes=2 << 30)


def runner_flags(track: str, tools: Toolchain, in_container: bool = False) -> list[str]:
    """The harness's compile command for `track` (sources and -o added by the caller); `in_container`: the
    image's compilers, by name."""
    if track == "cuda":
        flags = [tools.nvcc or "nvcc", "-O2", "-std=c++17", *tools.arch_flags, "-x", "cu", "-DKJ_CUDA"]
        flags += ["-cudart", "shared", "-Xcompiler", "-ffp-contract=off"]
    else:
        flags = [tools.gxx or "g++", "-O2", "-std=c++17", "-fopenmp", "-ffp-contract=off", "-x", "c++"]
    return [os.path.basename(flags[0])] + flags[1:] if in_container else flags


GENERATOR = Path(__file__).parents[1] / "run" / "generator.h"  # the one input generator (grader/run/)


def _sources() -> dict[str, bytes]:
    """The harness's files, and the generator it shares with the supervisors, by file name."""
    folder = Path(harness.__file__).parent
    found = {p.name: p.read_bytes() for p in sorted(folder.glob("*.[ch]*")) if p.suffix in (".cpp", ".h")}
    return found | {GENERATOR.name: GENERATOR.read_bytes()}


def build_runner(track: str, run: object = None) -> Path:
    """The harness for `track`, from the cache or compiled now; `run` is the sandbox the submissions run in
    (a container Backend: compiled in its image)."""
    tools = detect()
    sources = _sources()
    in_container = base.in_container(run)
    flags = runner_flags(track, tools, in_container)
    where = f"docker {getattr(run, 'image', '')}" if in_container else tools.describe(track)
    name = cache.key(track, where, *[k + "\0" for k in sources], *sources.values(), " ".join(flags))
    folder = cache.entry("runners", name)
    found = cache.lookup(folder, "runner")
    if found is not None:
        return found
    built = _in_container(run, flags, sources) if in_container else _on_host(flags)
    return cache.store(folder, "runner", built)


def _on_host(flags: list[str]) -> bytes:
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "runner"
        source = Path(harness.__file__).parent / "runner.cpp"
        result = subprocess.run(
            flags + ["-I", str(GENERATOR.parent), "-o", str(out), str(source), "-ldl"],
            capture_output=True,
            text=True,
            timeout=600,
        )
        if result.returncode != 0:
            raise RuntimeError(f"building the harness failed:\n{result.stderr}")
        return out.read_bytes()


def _in_container(run, flags: list[str], sources: dict[str, bytes]) -> bytes:
    uid = local.sandbox_uid()
    workdir = local.new_workdir(uid)
    try:
        for file_name, data in sources.items():
            (workdir / file_name).write_bytes(data)
            (workdir / file_name).chmod(0o444)
        outcome = run(flags + ["-o", "runner", "runner.cpp", "-ldl"], workdir, limits=RUNNER_LIMITS, uid=uid)
        built = workdir / "runner"
        if outcome.returncode != 0 or not built.is_file():
            raise RuntimeError(
                f"building the harness in {run.description} failed (status {outcome.returncode}):\n"
                f"{outcome.stdout}{outcome.stderr}"
            )
        return built.read_bytes()
    finally:
        local.remove_workdir(workdir)
