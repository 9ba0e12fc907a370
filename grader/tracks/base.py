"""What a track is, as one object: its name and files, the device it runs on, how its source is compiled or
checked, the worker that runs it, its rules, its starter and its run's environment.

Every decision the grader makes per track asks a `Track` (grader/tracks/__init__.py finds one by name) rather
than comparing names: the stages read its fields. A track is either compiled (`compiled`: a compiler makes a
shared library that a compiled worker loads) or Python (`python`: the source is checked against its rules and
run by the Python worker); exactly one of the two is set. Its `device` says what it shares with the other
tracks of that device: problem.yaml's tests and benchmarks, the supervisor, the benchmark budget and audits,
the ceilings, the Celery queue.
"""

from __future__ import annotations

import platform
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from grader import settings
from grader.toolchain import Toolchain


@dataclass(frozen=True)
class Device:
    """What a problem's tests and benchmarks are written for, and what every track on it shares."""

    name: str  # problem.yaml's word for it (`tracks: [cuda]`, `benchmarks: {cpu: ...}`)
    gpu: bool  # the GPU: device memory, NVML telemetry, CUDA events bounded by the supervisor's clock
    supervisor: str  # the trusted supervisor's program (grader/run/binaries.py PROGRAMS)
    bench_budget_ms: int  # a benchmark's time budget in the supervisor
    bench_samples: tuple[int, int]  # a benchmark's least and most timed calls
    audits_per_benchmark: int  # timed calls checked after the run, chosen after the call
    queue_name: str  # the Celery queue's name for its jobs (the GPU's may be renamed: $KERNELJUDGE_QUEUE)

    def queue(self) -> str:
        """The queue a job on this device is sent to."""
        return settings.QUEUE.get() if self.gpu else self.queue_name

    def available(self, tools: Toolchain) -> bool:
        """Whether this machine can run it: a GPU and nvcc, or g++."""
        return bool(tools.gpu and tools.nvcc) if self.gpu else bool(tools.gxx)

    def model(self, tools: Toolchain) -> str:
        """The device's model on this machine: the GPU's name, else the CPU's."""
        return tools.gpu.name if self.gpu and tools.gpu else tools.cpu_model

    def describe(self, tools: Toolchain) -> dict[str, str]:
        """The verdict's `device` field."""
        if self.gpu and tools.gpu:
            gpu = tools.gpu
            return {"name": gpu.name, "driver": gpu.driver, "compute_capability": gpu.compute_capability}
        return {"name": tools.cpu_model, "driver": "", "compute_capability": ""}


@dataclass(frozen=True)
class Compiled:
    """How a compiled track's source becomes a shared library, and the worker that loads it."""

    program: str  # the compiler's name ("nvcc", "g++"): in the image it is found by this name
    command: Callable[[Toolchain], list[str]]  # the submission's compile command, without its input and output
    runner_command: Callable[[Toolchain], list[str]]  # the profiler's harness's (grader/build/runner.py)
    version: Callable[[Toolchain], str]  # the compiler's version line on this host, as a verdict states it
    in_image: Callable[[str, Toolchain], str]  # the verdict's line from the image's compiler's version line
    worker: str  # the compiled worker that loads the library (grader/run/binaries.py PROGRAMS)
    raw_float_bits: bool = False  # 16- and 8-bit floats are raw bits (uint16_t, uint8_t) in its C types
    headers: Callable[[set[str]], str] = lambda tokens: ""  # what a source with these element tokens includes


@dataclass(frozen=True)
class PythonRules:
    """What a submission on a Python track may use (grader/problems/python_rules.py holds what all share)."""

    track: str
    modules: frozenset[str]  # what may be imported (exactly these names)
    allowed: frozenset[str]  # dotted names host code may reach from an imported module
    namespaces: frozenset[str]  # dotted names below which everything may be reached (triton.language)
    kernel_decorators: frozenset[str]  # decorators whose function is a kernel, compiled, not run by Python
    summary: str  # the rules in words, for the statement and the starter


@dataclass(frozen=True)
class PythonFramework:
    """A Python track's framework: how a file is known to be its, what solve receives, and what it may use."""

    module: str  # the import that marks a .py file as this track's
    reached: tuple[str, ...]  # the packages the Python worker imports (the sandbox's uid must reach them)
    distributions: tuple[str, ...]  # the distributions that may provide it (CuPy's wheels are named per CUDA)
    array_type: str  # the annotation of a buffer parameter
    dtypes: dict[str, str]  # the element dtype of a buffer, by request token
    rules: PythonRules
    from_torch: Callable[[Any], Any] = lambda tensor: tensor  # a PyTorch tensor as solve receives it
    # the worker reports what the submission's autotuners chose (harness/autotuned.py), for display only
    reports_autotuning: bool = False

    def version(self, name: str) -> str:
        """'triton 3.9.0' (the installed distribution's name and version), or how to install it."""
        import importlib.metadata

        for distribution in self.distributions:
            try:
                return f"{distribution} {importlib.metadata.version(distribution)}"
            except importlib.metadata.PackageNotFoundError:
                continue
        return f"{name}: not installed (pip install 'kerneljudge[{name}]')"


@dataclass(frozen=True)
class Starter:
    """The pieces of `grader init`'s file that are the track's own (grader/problems/starter.py adds the rest)."""

    header: str  # the includes or imports at the top
    note: str  # what the TODO says to do


@dataclass(frozen=True)
class Track:
    name: str  # as users write it: --track NAME, the verdict's `track`
    title: str  # as a sentence names its language: "CUDA", "C++"
    extensions: tuple[str, ...]  # a file's suffixes that imply it; the first is the one `grader init` writes
    highlight: str  # the source's language for highlighting (Pygments)
    device: Device
    starter: Starter
    environment: Callable[[Path], dict[str, str]]  # the run's environment, given its working folder
    compiled: Compiled | None = None
    python: PythonFramework | None = None
    profiled: bool = False  # `submit --profile` runs it under Nsight Compute
    # its kernels compile (and autotune) on their first call for a shape: the run has a JIT stage, one untimed
    # call per size set before the tests, on a budget of its own (docs/timing.md, "The JIT stage")
    jit_stage: bool = False
    # the folders of the run's working folder its JIT caches into, kept per source (grader/run/jit_cache.py)
    jit_caches: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if (self.compiled is None) == (self.python is None):
            raise ValueError(f"track {self.name!r}: give exactly one of `compiled` and `python`")

    @property
    def extension(self) -> str:
        return self.extensions[0]

    @property
    def is_python(self) -> bool:
        return self.python is not None

    def toolchain(self, tools: Toolchain) -> str:
        """The compiler's version line (for CUDA with the -arch it compiles for); for a Python track the
        interpreter's and the framework's versions (part of every verdict)."""
        if self.python is not None:
            return f"Python {platform.python_version()}, {self.python.version(self.name)}"
        assert self.compiled is not None
        return self.compiled.version(tools)
