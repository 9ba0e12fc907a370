"""The in-process harness (harness/runner.cpp) the profiler runs under ncu, compiled once per track, toolchain
and source, into the build cache, on the host (it is trusted code). Gradings run the supervised worker instead
(grader/run/binaries.py).
"""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

import harness
from grader import tracks
from grader.build import cache
from grader.toolchain import Toolchain, detect


def runner_flags(track: str, tools: Toolchain) -> list[str]:
    """The harness's compile command for `track` (sources and -o added by the caller)."""
    compiled = tracks.get(track).compiled
    if compiled is None:
        raise ValueError(f"the {track} track has no compiled harness")
    return compiled.runner_command(tools)


# The one input generator, which the supervisors compile too: grader/boundary/ holds what both sides share.
GENERATOR = Path(__file__).parents[1] / "boundary" / "generator.h"


def _sources() -> dict[str, bytes]:
    """The harness's files, and the generator it shares with the supervisors, by file name."""
    folder = Path(harness.__file__).parent
    found = {p.name: p.read_bytes() for p in sorted(folder.glob("*.[ch]*")) if p.suffix in (".cpp", ".h")}
    return found | {GENERATOR.name: GENERATOR.read_bytes()}


def build_runner(track: str) -> Path:
    """The harness for `track`, from the cache or compiled now."""
    tools = detect()
    sources = _sources()
    flags = runner_flags(track, tools)
    name = cache.key(
        track, tracks.get(track).toolchain(tools), *[k + "\0" for k in sources], *sources.values(), " ".join(flags)
    )
    folder = cache.entry("runners", name)
    found = cache.lookup(folder, "runner")
    if found is not None:
        return found
    return cache.store(folder, "runner", _on_host(flags))


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
