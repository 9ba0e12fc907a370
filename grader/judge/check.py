"""The trusted checker: read what the harness wrote, regenerate the inputs, compare with the float64 reference.

Every element must satisfy |out - ref| <= atol + rtol*|ref|; NaN and Inf never pass; inputs must come back
exactly as generated. Files from the untrusted side are opened without following links, must be regular files
of exactly the expected size, and are read as raw float32: nothing in them is ever interpreted.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from grader.problems.spec import Problem, SizeSet
from grader.run import inputs as gen


class TamperedOutput(Exception):
    """A result file that exists but is not what the harness writes (a link, a wrong size)."""


@dataclass
class Comparison:
    ok: bool
    max_abs_err: float
    max_rel_err: float
    message: str = ""


def device() -> torch.device:
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


MAX_RECORD_BYTES = 16 << 20


def _open_result(path: Path):
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


def read_floats(path: Path, count: int) -> np.ndarray | None:
    """The float32 array in `path`, None if absent; TamperedOutput if it is not a plain file of `count` floats."""
    f = _open_result(path)
    if f is None:
        return None
    with f:
        if os.fstat(f.fileno()).st_size != count * 4:
            raise TamperedOutput(f"{path.name}: not a file of {count} floats")
        return np.fromfile(f, dtype=np.float32, count=count)


def read_record(path: Path) -> str | None:
    """A text record of the harness (progress, timings, audits), None if absent; TamperedOutput if odd."""
    f = _open_result(path)
    if f is None:
        return None
    with f:
        if os.fstat(f.fileno()).st_size > MAX_RECORD_BYTES:
            raise TamperedOutput(f"{path.name}: larger than any record the harness writes")
        return f.read().decode("utf-8", "replace")


def make_inputs(problem: Problem, size_set: SizeSet, case_seed: int, call: int) -> dict[str, torch.Tensor]:
    """The inputs of call number `call` of a case, exactly as the harness generated them (flat float32)."""
    arrays = {}
    for index, param in enumerate(problem.pointer_params):
        if param.role != "input":
            continue
        dist = problem.distribution(size_set, param.name)
        count = int(np.prod(problem.shape(param, size_set.sizes)))
        arrays[param.name] = gen.uniform(gen.tensor_seed(case_seed, call, index), count, dist.low, dist.high, device())
    return arrays


def first_difference(got: np.ndarray, expected: torch.Tensor) -> int | None:
    """Flat index of the first element of `got` that is not bit-identical to `expected`, None if all are."""
    got_t = torch.from_numpy(got).to(expected.device)
    same = got_t.view(torch.int32) == expected.view(torch.int32)
    return None if bool(same.all()) else int(torch.nonzero(~same)[0])


def reference_outputs(problem: Problem, size_set: SizeSet, arrays: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """The float64 reference for these inputs, one tensor per output parameter."""
    tensors = {
        p.name: arrays[p.name].to(torch.float64).reshape(problem.shape(p, size_set.sizes)) for p in problem.input_params
    }
    with torch.no_grad():
        result = problem.reference_module.reference(**tensors, **size_set.sizes)
    results = result if isinstance(result, (tuple, list)) else (result,)
    return {p.name: r for p, r in zip(problem.output_params, results)}


def compare(got: np.ndarray, expected: torch.Tensor, atol: float, rtol: float) -> Comparison:
    """Element-wise check; the message names the first bad element and the error figures."""
    dev = expected.device
    got_t = torch.from_numpy(got).to(dev, torch.float64).reshape(expected.shape)
    err = (got_t - expected).abs()
    allowed = atol + rtol * expected.abs()
    bad = ~(err <= allowed)  # NaN compares false, so NaN is bad
    bad |= ~torch.isfinite(got_t)
    finite = torch.isfinite(err)
    max_abs = float(err[finite].max()) if bool(finite.any()) else float("inf")
    rel = err / expected.abs().clamp_min(1e-30)
    max_rel = float(rel[finite].max()) if bool(finite.any()) else float("inf")
    if not bool(bad.any()):
        return Comparison(True, max_abs, max_rel)
    count = int(bad.sum())
    first = int(torch.nonzero(bad.flatten())[0])
    index = np.unravel_index(first, tuple(expected.shape))
    where = "[" + ", ".join(str(int(i)) for i in index) + "]"
    message = (
        f"{count} of {expected.numel()} elements wrong; first at {where}: got {float(got[first]):.9g}, "
        f"expected {float(expected.flatten()[first]):.9g} (atol {atol:.3g}, rtol {rtol:.3g}); "
        f"max abs err {max_abs:.3g}, max rel err {max_rel:.3g}"
    )
    return Comparison(False, max_abs, max_rel, message)
