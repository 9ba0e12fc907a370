"""The tracks a submission can be written for, one file each, and the registry that finds them by name.

    track    language        device  file            solve receives
    cuda     CUDA C++        cuda    .cu             device pointers       grader/tracks/cuda.py
    cpu      C++ (OpenMP)    cpu     .cpp .cc .cxx   host pointers         grader/tracks/cpu.py
    triton   Python, Triton  cuda    .py             PyTorch CUDA tensors  grader/tracks/triton.py
    cupy     Python, CuPy    cuda    .py             CuPy arrays           grader/tracks/cupy.py

A track's name is the currency of the data (the verdict, the job, the database, --track); whatever the grader
decides per track, it decides by asking the `Track` that `get(name)` returns, never by comparing names
(tests/test_track_registry.py checks that no module outside this package writes a track's name). Adding a
track is its own file, defining TRACK, plus its module's name in BUILT_IN here: one line. A .py file's track
follows what it imports (triton or cupy); `--track` overrides it.
"""

from __future__ import annotations

from importlib import import_module
from pathlib import Path

from grader.toolchain import Toolchain, detect
from grader.tracks import cpu, cuda, python
from grader.tracks.base import Track

__all__ = ["Track", "default", "every", "get", "highlight", "names", "of_file", "register"]

# The modules of this package that define a TRACK, in the order the tracks are listed.
BUILT_IN: tuple[str, ...] = ("cuda", "cpu", "triton", "cupy")

_REGISTRY: dict[str, Track] = {}


def register(track: Track) -> Track:
    """Add a track: after this, --track, `grader init`, the site and the judge know it."""
    if track.name in _REGISTRY:
        raise ValueError(f"a track named {track.name!r} is registered already")
    _REGISTRY[track.name] = track
    return track


def get(name: str) -> Track:
    """The track of that name; KeyError naming the known ones where there is none."""
    try:
        return _REGISTRY[name]
    except KeyError:
        raise KeyError(f"unknown track {name!r} (tracks: {', '.join(_REGISTRY)})") from None


def names() -> tuple[str, ...]:
    return tuple(_REGISTRY)


def every() -> tuple[Track, ...]:
    return tuple(_REGISTRY.values())


def of_file(path: Path, source: bytes | None = None) -> str | None:
    """The track a file implies: by its extension; a .py file by the framework it imports (None when it imports
    none of the Python tracks' frameworks, or several, or does not parse)."""
    suffix = path.suffix.lower()
    found = [t for t in _REGISTRY.values() if suffix in t.extensions]
    compiled = [t.name for t in found if t.python is None]
    if compiled:
        return compiled[0]
    if not found:
        return None
    text = source if source is not None else _read(path)
    imported = python.imported_modules(text) if text is not None else set()
    named = [t.name for t in found if t.python is not None and t.python.module in imported]
    return named[0] if len(named) == 1 else None


def highlight(name: str) -> str:
    """The language a stored source of that track is highlighted as ("text" for a name no longer registered)."""
    found = _REGISTRY.get(name)
    return found.highlight if found else "text"


def default(tools: Toolchain | None = None) -> str:
    """The track this machine can run best: CUDA where a GPU and nvcc are there, else CPU."""
    tools = tools or detect()
    return cuda.NAME if cuda.TRACK.device.available(tools) else cpu.NAME


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None


for _module in BUILT_IN:
    register(import_module(f"{__name__}.{_module}").TRACK)
