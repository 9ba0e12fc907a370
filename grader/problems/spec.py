"""Problem specs: the pydantic model of `problems/<slug>/problem.yaml` and what it derives (the C prototype, the
tests and benchmarks per track, tolerances, work). grader/problems/catalog.py finds and loads them.

A broken spec raises SpecError at load, naming the file, the field and what is wrong: every formula is
evaluated for every test and benchmark (a shape must be a whole number, a tolerance a finite number >= 0).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cached_property
from pathlib import Path
from types import ModuleType
from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from grader import tracks
from grader.problems import dtypes, expr, launch_limits, reference_file
from grader.problems.audit_rows import AuditRows, faults_of
from grader.problems.errors import SpecError as SpecError  # raised here and by reference_file; callers import it here
from grader.problems.params import Distribution as Distribution  # re-exported: part of the spec
from grader.problems.params import Param as Param
from grader.tracks import cuda
from grader.tracks.devices import CUDA, DeviceName

Device = DeviceName  # what problem.yaml's tests and benchmarks are written for (grader/tracks/devices.py)
DEVICES: tuple[Device, ...] = get_args(DeviceName)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class SizeSet(_Strict):
    name: str = Field(pattern=r"^[a-z0-9_]+$")
    sizes: dict[str, int]
    inputs: dict[str, Distribution] = {}
    tracks: list[Device] = list(DEVICES)
    catches: str = ""
    reject_low_precision: bool = False  # `grader calibrate`: reduced-precision answers must fail here
    # The allowance here is the tolerance's times this: for inputs that make every float32 answer less accurate
    # (attention's backward pass on scores past 88, whose gradients grow with |Q|); `catches` says why.
    tolerance_scale: float = Field(default=1.0, ge=1.0)


class Tolerance(_Strict):
    atol: str | float
    rtol: str | float
    why: str = Field(min_length=1)


class GridAxis(_Strict):
    """A size a natural CUDA kernel maps onto a grid's y or z axis (grader/problems/launch_limits.py)."""

    size: str  # a formula of the size parameters: "M", "B * H"
    per_block: int = Field(default=1, ge=1)  # the most units of it one block of such a kernel covers
    kernel: str = Field(min_length=1)  # that kernel, e.g. "the textbook grid dim3(ceil(N/32), ceil(M/32))"


class Problem(_Strict):
    slug: str
    title: str
    difficulty: Literal["easy", "medium", "hard"]
    tags: list[str] = []
    signature: list[Param]
    constraints: list[str]
    inputs: dict[str, Distribution] = {}
    tolerance: Tolerance
    accumulation: str = ""  # the arithmetic the answer stands for, when a buffer is not float32
    flops: str | int
    bytes: str | int
    time_limit_s: float = Field(default=60.0, gt=0)
    tests: list[SizeSet] = Field(min_length=1)
    benchmarks: dict[Device, list[SizeSet]] = {}
    calibration: list[SizeSet] = []  # extra size sets `grader calibrate` tries (long reductions, cheap shapes)
    grid_axes: list[GridAxis] = []  # sizes a natural kernel puts on a grid's y or z axis: tests must cross 65,535
    audit_rows: AuditRows | None = None  # outputs checkable row by row (grader/problems/audit_rows.py)
    folder: Path = Field(exclude=True)

    @field_validator("signature")
    @classmethod
    def _signature_shape(cls, params):
        names = [p.name for p in params]
        if len(set(names)) != len(names):
            raise ValueError("parameter names repeat")
        if not any(p.role == "output" for p in params):
            raise ValueError("the signature has no output (a pointer parameter without const, e.g. `float*`)")
        return params

    @model_validator(mode="after")
    def _consistent(self):
        sizes = set(self.size_names)
        for p in self.pointer_params:
            for dim in p.dims:
                unknown = expr.names_in(dim) - sizes
                if unknown:
                    raise ValueError(f"shape of {p.name!r} uses unknown size {sorted(unknown)}")
        if not self.accumulation and any(p.dtype in dtypes.LOW_PRECISION for p in self.pointer_params):
            raise ValueError(
                "accumulation: a problem with 16-bit or 8-bit buffers must state how products and sums are kept"
            )
        for axis in self.grid_axes:
            unknown = expr.names_in(axis.size) - sizes
            if unknown or not expr.names_in(axis.size):
                raise ValueError(f"grid_axes: {axis.size!r} must be a formula of the sizes {sorted(sizes)}")
        if self.audit_rows is not None:
            shapes = {p.name: p.dims for p in self.pointer_params}
            outputs = [p.name for p in self.output_params]
            faults = faults_of(self.audit_rows, shapes, outputs, self.size_names)
            if faults:
                raise ValueError("audit_rows: " + "; ".join(faults))
        inputs = {p.name for p in self.input_params}
        for name in self.inputs:
            if name not in inputs:
                raise ValueError(f"inputs: {name!r} is not an input parameter")
        groups = [("tests", self.tests), ("calibration", self.calibration)]
        for kind, sets in groups + [(f"benchmarks.{t}", s) for t, s in self.benchmarks.items()]:
            seen = set()
            for size_set in sets:
                where = f"{kind}.{size_set.name}"
                if size_set.name in seen:
                    raise ValueError(f"{where}: name repeats")
                seen.add(size_set.name)
                if set(size_set.sizes) != sizes:
                    raise ValueError(f"{where}: sizes must give exactly {sorted(sizes)}")
                for name in size_set.inputs:
                    if name not in inputs:
                        raise ValueError(f"{where}.inputs: {name!r} is not an input parameter")
                self._check_formulas(where, size_set.sizes)
                self._check_bounds(where, size_set)
        return self

    def _check_bounds(self, where: str, size_set: SizeSet) -> None:
        """Every input's range, for these sizes, is one its element type can be drawn from."""
        for p in self.input_params:
            try:
                dtypes.check_bounds(p.dtype, *self.bounds(size_set, p.name))
            except ValueError as error:  # FormulaError too
                raise ValueError(f"inputs of {p.name!r} (for {where}: {describe_sizes(size_set.sizes)}): {error}")

    def _check_formulas(self, where: str, sizes: dict[str, int]) -> None:
        """Every formula evaluates, for these sizes, to what its field needs; else a ValueError naming both."""
        at = f"(for {where}: {describe_sizes(sizes)})"
        for rule in self.constraints:
            try:
                if not expr.holds(rule, sizes):
                    raise ValueError(f"{where}: sizes {sizes} break the constraint {rule!r}")
            except expr.FormulaError as error:
                raise ValueError(f"constraints: {error} {at}") from error
        checks: list[tuple[str, expr.Formula, Callable[[expr.Formula, dict], float]]]
        checks = [(f"shape of {p.name!r}", dim, expr.count) for p in self.pointer_params for dim in p.dims]
        checks += [("flops", self.flops, expr.amount), ("bytes", self.bytes, expr.amount)]
        checks += [(f"tolerance.{name}", getattr(self.tolerance, name), expr.amount) for name in ("atol", "rtol")]
        for field, formula, evaluate in checks:
            try:
                evaluate(formula, sizes)
            except expr.FormulaError as error:
                raise ValueError(f"{field}: {error} {at}") from error

    @property
    def size_names(self) -> list[str]:
        return [p.name for p in self.signature if p.role == "size"]

    @property
    def pointer_params(self) -> list[Param]:
        return [p for p in self.signature if p.role != "size"]

    @property
    def half_precision(self) -> bool:
        """Whether any buffer is 16-bit floating point (FP16/BF16 tensor cores then set the compute roof)."""
        return any(p.dtype in ("f16", "bf16") for p in self.pointer_params)

    @property
    def tensor_rate(self) -> int:
        """The dense tensor-core rate this problem's inputs allow, over TF32's: 4 with an 8-bit buffer (FP8 and
        INT8 mma), 2 with a 16-bit one (FP16, BF16), else 1 (grader/perf/ceilings.py, the physical floor)."""
        if any(p.dtype in ("e4m3", "i8") for p in self.input_params):
            return 4
        return 2 if self.half_precision else 1

    @property
    def input_params(self) -> list[Param]:
        return [p for p in self.signature if p.role == "input"]

    @property
    def output_params(self) -> list[Param]:
        return [p for p in self.signature if p.role == "output"]

    def prototype(self, name: str = "solve", track: str = cuda.NAME) -> str:
        """`solve` as a `track` submission declares it: a C prototype, or a Python `def` on the Python tracks
        (the spec's types are the CUDA track's)."""
        if tracks.get(track).is_python:
            args = ", ".join(f"{p.name}: {dtypes.python_type(p.type, track)}" for p in self.signature)
            return f"def {name}({args}) -> None"
        args = ", ".join(f"{p.c_type(track)} {p.name}" for p in self.signature)
        return f"void {name}({args})"

    def shape(self, param: Param, sizes: dict) -> tuple[int, ...]:
        return tuple(expr.count(dim, sizes) for dim in param.dims)

    def distribution(self, size_set: SizeSet, name: str) -> Distribution:
        return size_set.inputs.get(name) or self.inputs.get(name) or Distribution()

    def bounds(self, size_set: SizeSet, name: str) -> tuple[float, float]:
        """(low, high) of input `name` for this size set, its formulas evaluated."""
        return self.distribution(size_set, name).at(size_set.sizes)

    def tests_for(self, track: str) -> list[SizeSet]:
        """The tests of the device `track` runs on (the Python tracks run the CUDA tests)."""
        return [t for t in self.tests if tracks.get(track).device.name in t.tracks]

    def benchmarks_for(self, track: str) -> list[SizeSet]:
        return next((list(sets) for name, sets in self.benchmarks.items() if name == tracks.get(track).device.name), [])

    def tolerances(self, sizes: dict) -> tuple[float, float]:
        return expr.amount(self.tolerance.atol, sizes), expr.amount(self.tolerance.rtol, sizes)

    def tolerances_for(self, size_set: SizeSet) -> tuple[float, float]:
        """(atol, rtol) on this size set: the tolerance's, times the set's tolerance_scale."""
        atol, rtol = self.tolerances(size_set.sizes)
        return atol * size_set.tolerance_scale, rtol * size_set.tolerance_scale

    def work(self, sizes: dict) -> tuple[float, float]:
        """(floating-point operations, bytes that must cross device memory) for one call."""
        return expr.amount(self.flops, sizes), expr.amount(self.bytes, sizes)

    def launch_limit_gaps(self) -> list[launch_limits.Gap]:
        """The grid axes the constraints let past the launch limit where no CUDA test goes."""
        tests = [t.sizes for t in self.tests if CUDA.name in t.tracks]
        starts = [dict.fromkeys(self.size_names, 1), *tests]
        gaps = []
        for axis in self.grid_axes:
            if any(launch_limits.crosses(axis.size, axis.per_block, sizes) for sizes in tests):
                continue
            witness = launch_limits.allowed(self.constraints, axis.size, axis.per_block, starts)
            if witness is not None:
                gaps.append(launch_limits.Gap(axis.size, axis.per_block, witness))
        return gaps

    @cached_property
    def reference_module(self) -> ModuleType:
        """reference.py, imported on first use (load_problem only compiles it); a failure is a SpecError."""
        name = f"kerneljudge_reference_{self.slug.replace('-', '_')}"
        return reference_file.load(self.folder / "reference.py", name)

    @property
    def statement_path(self) -> Path:
        return self.folder / "statement.md"


def describe_sizes(sizes: dict) -> str:
    """ "M=37, N=1013": how messages and tables show a size set."""
    return ", ".join(f"{name}={value}" for name, value in sizes.items())
