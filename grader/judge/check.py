"""The trusted checker: read what the harness wrote, regenerate the inputs, compare with the float64 reference.

Every element must satisfy |out - ref| <= atol + rtol*|ref|; NaN and Inf never pass (that inputs came back
exactly as generated the supervisor checks: grader/run/input_check.h). Files from the untrusted side are opened
without following links, must be regular files of exactly the expected size, and are read as raw elements of the
buffer's type (float32, float16, bfloat16 and fp8 as their bits, int32, int8): nothing in them is ever
interpreted. Every comparison is made in float64, whatever the output's type; the reference receives float
inputs as float64 and integer inputs as int64.

A wrong output is described by kind: elements never written (they still hold the judge's NaN poison), NaN
and Inf the submission wrote, and finite elements out of tolerance, each with its count and first index; the
error figures are over the finite elements only, so a NaN never hides behind "max abs err 0".
"""

from __future__ import annotations

import math
import mmap
import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from grader.problems.params import Param
from grader.problems.spec import Problem, SizeSet
from grader.run import inputs as gen
from grader.run import request
from grader.sandbox import workspace
from grader.torch_import import torch
from grader.verdict.model import TestResult
from grader.verdict.status import Status

# The bit pattern every output holds before each call (grader/run/supervisor.cpp and harness/platform.h write it):
# a quiet NaN whose
# payload no arithmetic produces (the default NaNs are 0xFFC00000 on x86, 0x7FC00000 on ARM and 0x7FFFFFFF on
# CUDA; negated, they are still not it), so an element that still holds it was never written (or was computed
# from one that was not).
POISON_BITS = 0x7FC0FFEE
# Each type's poison (generator.h): half and bfloat16 NaNs with a payload no arithmetic makes (the default NaNs
# are 0x7E00, 0xFE00, 0x7FFF for half and 0x7FC0, 0xFFC0, 0x7FFF for bfloat16). An int32 poison is a valid
# number: an unwritten int32 element is reported only where the right answer is not 2143354862.
POISONS = {"f32": POISON_BITS, "f16": 0x7FEE, "bf16": 0x7FEE, "i32": POISON_BITS}
_TOKENS = {np.dtype(np.float32): "f32", np.dtype(np.float16): "f16", np.dtype(np.uint16): "bf16"}
_TOKENS[np.dtype(np.int32)] = "i32"


class TamperedOutput(Exception):
    """A result file that exists but is not what the harness writes (a link, a wrong size)."""


@dataclass
class Comparison:
    ok: bool
    max_abs_err: float  # over the finite elements; inf when no element is finite
    max_rel_err: float
    message: str = ""
    unwritten: int = 0  # elements still holding the poison
    nan: int = 0  # NaN the submission wrote
    inf: int = 0  # +-Inf the submission wrote


def device() -> torch.device:
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def open_result(path: Path):
    """A result file opened without following links or blocking (a FIFO would hang a plain open), None if absent."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return None
    except OSError as error:
        raise TamperedOutput(f"{path.name}: {error.strerror}") from error
    f = os.fdopen(fd, "rb")
    if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
        f.close()
        raise TamperedOutput(f"{path.name}: not a regular file")
    return f


def read_buffer(path: Path, count: int, dtype: str = "f32") -> np.ndarray | None:
    """The array of `count` elements of type `dtype` in `path` (bfloat16 as uint16 bits), None if absent;
    TamperedOutput if it is not a plain file of exactly that many bytes.

    A root grader maps the file copy-on-write instead of reading it: a test's outputs reach a gigabyte, and a
    read pays for a fresh buffer's page faults and a copy before the comparison copies them again (to the GPU).
    Only the supervisor writes the trusted folder, and it has finished before the check reads. Without root the
    worker runs as the grader's own user and could truncate a mapped file, which would kill the grader with
    SIGBUS, so there the file is read."""
    f = open_result(path)
    if f is None:
        return None
    element = np.dtype(gen.NUMPY_DTYPES[dtype])
    with f:
        size = os.fstat(f.fileno()).st_size
        if size != count * element.itemsize:
            raise TamperedOutput(f"{path.name}: not a file of {count} {dtype} elements")
        if size == 0 or not workspace.is_root():
            return np.fromfile(f, dtype=element, count=count)
        return np.frombuffer(mmap.mmap(f.fileno(), size, access=mmap.ACCESS_COPY), dtype=element)


def read_call(problem: Problem, size_set: SizeSet, out: Path, stem: str) -> dict[str, np.ndarray] | None:
    """The outputs one call left in `out` (files STEM.INDEX.bin), by parameter name; None if one is missing."""
    arrays = {}
    for index, param in enumerate(problem.pointer_params):
        if param.role != "output":
            continue
        count = int(np.prod(problem.shape(param, size_set.sizes)))
        values = read_buffer(out / f"{stem}.{index}.bin", count, param.dtype)
        if values is None:
            return None
        arrays[param.name] = values
    return arrays


def make_inputs(
    problem: Problem, size_set: SizeSet, case_seed: int, call: int, indices: dict[str, torch.Tensor] | None = None
) -> dict[str, torch.Tensor]:
    """The inputs of call number `call` of a case, exactly as the harness generated them (flat, in their types);
    of an input named in `indices`, only its elements at those flat indices (an element's value depends on its
    index alone)."""
    arrays = {}
    for index, param in enumerate(problem.pointer_params):
        if param.role != "input":
            continue
        low, high = problem.bounds(size_set, param.name)
        count = int(np.prod(problem.shape(param, size_set.sizes)))
        seed = gen.tensor_seed(case_seed, call, index)
        wanted = (indices or {}).get(param.name)
        arrays[param.name] = gen.generate(param.dtype, seed, count, low, high, device(), wanted)
    return arrays


def call_inputs(problem: Problem, case: request.Case, call: int) -> dict[str, torch.Tensor]:
    """The inputs of call number `call` of a run's case, regenerated here from its secret key."""
    return make_inputs(problem, case.size_set, gen.call_seed(case.seed, call), 0)


def _same_width(itemsize: int):
    """(numpy, torch) integer types of an element's width, to compare bits."""
    return {1: (np.int8, torch.int8), 2: (np.int16, torch.int16), 4: (np.int32, torch.int32)}[itemsize]


def reference_inputs(problem: Problem, size_set: SizeSet, arrays: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """The inputs as the reference (and null answers) take them: shaped, floats as float64, integers as int64."""
    return {p.name: reference_input(p, arrays[p.name], problem.shape(p, size_set.sizes)) for p in problem.input_params}


def reference_input(param: Param, values: torch.Tensor, shape: Sequence[int]) -> torch.Tensor:
    """One input as the reference takes it: in `shape`, a float as float64, an integer as int64."""
    return values.to(torch.int64 if param.dtype in gen.INTEGER_DTYPES else torch.float64).reshape(tuple(shape))


def reference_outputs(problem: Problem, size_set: SizeSet, arrays: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """The float64 reference for these inputs, one tensor per output parameter."""
    return run_reference(problem, reference_inputs(problem, size_set, arrays), size_set.sizes)


def run_reference(problem: Problem, tensors: dict[str, torch.Tensor], sizes: dict) -> dict[str, torch.Tensor]:
    """The reference on shaped float64 (int64) inputs: one float64 tensor per output parameter."""
    with torch.no_grad():
        result = problem.reference_module.reference(**tensors, **sizes)
    results = result if isinstance(result, (tuple, list)) else (result,)
    return {p.name: r.to(torch.float64) for p, r in zip(problem.output_params, results)}


def poisoned(got: np.ndarray) -> np.ndarray:
    """Which elements of an output (flat) still hold the judge's poison: never written."""
    as_numpy = _same_width(got.dtype.itemsize)[0]
    return got.reshape(-1).view(as_numpy) == _signed(POISONS[_TOKENS[got.dtype]], got.dtype.itemsize)


def widened(got: np.ndarray) -> np.ndarray:
    """An output's values in a type that holds them exactly: float32 for the floats, float64 for int32."""
    token = _TOKENS[got.dtype]
    if token == "bf16":
        return gen.bf16_to_float32(got)
    return got.astype(np.float64 if token == "i32" else np.float32, copy=False)


def compare(got: np.ndarray, expected: torch.Tensor, atol: float, rtol: float) -> Comparison:
    """Element-wise check; the message counts each kind of bad element, says where each starts, and gives the
    error figures of the finite elements. One vectorised pass settles the common case, a right answer; only a
    wrong one pays for counting and locating each kind of bad element."""
    passed = _passes(got, expected, atol, rtol)
    return passed if passed is not None else _describe_failure(got, expected, atol, rtol)


def _passes(got: np.ndarray, expected: torch.Tensor, atol: float, rtol: float) -> Comparison | None:
    """The Comparison of an output whose every element is finite and within tolerance, None for any other.

    Every element passes |got - ref| <= atol + rtol*|ref| and the largest error is finite exactly when no
    element is NaN, Inf or never written (each makes its error NaN or Inf) and none is out of tolerance: the
    condition under which the full description finds nothing bad. The figures are then the full one's too.
    """
    if expected.numel() == 0:
        return None
    with np.errstate(all="ignore"):  # Inf - Inf is NaN, as in torch, without numpy's warning
        err, ref = _abs_error(got, expected)
        magnitude = abs(ref)
        within = err <= magnitude * rtol + atol  # the same IEEE float64 steps as _describe_failure's
        max_abs = float(err.max())
        if not (math.isfinite(max_abs) and bool(within.all())):
            return None
        magnitude[magnitude < 1e-30] = 1e-30
        return Comparison(True, max_abs, float((err / magnitude).max()))


def _abs_error(got: np.ndarray, expected: torch.Tensor) -> tuple:
    """(|got - expected| in float64, expected), both flat: numpy arrays on the CPU, where numpy takes a fifth of
    torch's CPU time for these element-wise passes; tensors on expected's GPU."""
    got = widened(got)
    if expected.device.type == "cpu":
        ref = expected.numpy().reshape(-1)
        err = got.reshape(-1).astype(np.float64)
        err -= ref
        return np.abs(err, out=err), ref
    ref_t = expected.reshape(-1)
    err_t = torch.from_numpy(got.reshape(-1)).to(expected.device).to(torch.float64)
    return err_t.sub_(ref_t).abs_(), ref_t


def _describe_failure(got: np.ndarray, expected: torch.Tensor, atol: float, rtol: float) -> Comparison:
    """The full comparison: each kind of bad element counted and located, error figures of the finite ones."""
    shape = tuple(expected.shape)
    token = _TOKENS[got.dtype]
    got32 = torch.from_numpy(widened(got)).to(expected.device).reshape(shape)
    unwritten = torch.from_numpy(poisoned(got)).to(expected.device).reshape(shape)
    err = (got32.to(torch.float64) - expected).abs()
    within = err <= atol + rtol * expected.abs()
    if token == "i32":
        unwritten &= ~within  # a poison that is the right answer cannot be told from a written one
    nan = torch.isnan(got32) & ~unwritten
    inf = torch.isinf(got32)
    wrong = torch.isfinite(got32) & ~within & ~unwritten  # NaN compares false: a NaN ref fails
    finite = torch.isfinite(err)
    any_finite = bool(finite.any())
    max_abs = float(err[finite].max()) if any_finite else float("inf")
    max_rel = float((err / expected.abs().clamp_min(1e-30))[finite].max()) if any_finite else float("inf")
    counts = {"unwritten": int(unwritten.sum()), "nan": int(nan.sum()), "inf": int(inf.sum())}
    bad = int(wrong.sum()) + sum(counts.values())
    if bad == 0:
        return Comparison(True, max_abs, max_rel)
    parts = []
    for mask, what in ((unwritten, "never written"), (nan, "NaN"), (inf, "Inf")):
        first = _first(mask)
        if first is not None:
            parts.append(f"{int(mask.sum())} {what}, first at {index_text(first, shape)}")
    first = _first(wrong)
    if first is not None:
        parts.append(
            f"{int(wrong.sum())} out of tolerance, first at {index_text(first, shape)}: got {float(got32.flatten()[first]):.9g}, "
            f"expected {float(expected.flatten()[first]):.9g} (atol {atol:.3g}, rtol {rtol:.3g})"
        )
    figures = (
        f"max abs err {max_abs:.3g}, max rel err {max_rel:.3g}"
        + (f" over the {int(finite.sum())} finite elements" if int(finite.sum()) < expected.numel() else "")
        if any_finite
        else "no element is finite"
    )
    message = f"{bad} of {expected.numel()} elements wrong: " + "; ".join(parts) + f"; {figures}"
    return Comparison(False, max_abs, max_rel, message, **counts)


def wrong_output(name: str, sizes: dict, output: str, result: Comparison, second_draw: bool) -> TestResult:
    """The result of a test whose output `output` failed the comparison `result` (no error figures when no
    element is finite: JSON has no infinity)."""
    finite = math.isfinite(result.max_abs_err)
    return TestResult(
        name,
        sizes,
        Status.WRONG_ANSWER,
        result.max_abs_err if finite else None,
        result.max_rel_err if finite else None,
        f"{output}: {result.message}" + (" (second input draw)" if second_draw else ""),
        unwritten=result.unwritten,
        nan=result.nan,
        inf=result.inf,
    )


def _signed(bits: int, width: int) -> int:
    """An unsigned bit pattern of `width` bytes as the signed integer with those bits."""
    return bits - (1 << (8 * width)) if bits >= 1 << (8 * width - 1) else bits


def _first(mask: torch.Tensor) -> int | None:
    """Flat index of the first true element, None if none is."""
    hits = torch.nonzero(mask.flatten())
    return int(hits[0]) if len(hits) else None


def index_text(flat: int, shape: tuple[int, ...]) -> str:
    """A flat index as the multi-dimensional one messages show: [row, column]."""
    return "[" + ", ".join(str(int(i)) for i in np.unravel_index(flat, shape)) + "]"
