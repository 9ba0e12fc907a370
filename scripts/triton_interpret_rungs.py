"""Run the Triton rungs under Triton's interpreter on CPU tensors, on each problem's CPU tests, and compare them
with the problem's float64 reference and tolerance (the judge's own comparison), where there is no GPU:

    TRITON_INTERPRET=1 python scripts/triton_interpret_rungs.py [PROBLEM...]

It needs Triton installed beside PyTorch (pip install triton; the interpreter needs no GPU). It checks the
kernels' arithmetic only: the judge's run (sandbox, supervisor, timing) needs the GPU.

The interpreter computes every float32 tl.dot exactly in float32, whatever its input_precision, where the GPU's
tensor cores keep 10 mantissa bits of each operand ("tf32", tl.dot's default for float32) or of each part of a
3xTF32 split ("tf32x3"): a rung on plain TF32 would pass here and fail on the GPU. So the dot is emulated: "tf32"
truncates both operands to TF32 (the tensor cores ignore the low 13 bits); "tf32x3" splits each operand into
big = round(x) and small = truncate(x - big) and adds big*big + big*small + small*big. What the emulation leaves
out is the tensor cores' own accumulation, which truncates as it adds (the problems' tolerances say how far that
drifts); the GPU run is still the check of that.

A test is skipped when the product of its sizes (a proxy for the interpreter's time) is above the problem's
limit in MAX_WORK (default DEFAULT_MAX_WORK).
"""

import importlib.util
import math
import secrets
import sys
from pathlib import Path

import numpy as np
import torch
from triton.runtime import interpreter

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from grader.judge import check
from grader.problems import solutions
from grader.problems.catalog import load_problem

DEFAULT_MAX_WORK = 3_000_000
# The interpreter's time grows with programs x loop steps, not with each dot's size: a tiled matmul or a flash
# attention on the largest CPU tests takes seconds.
MAX_WORK = {"matmul": 200_000_000, "attention": 200_000_000}


def _truncate_tf32(x):
    return (np.asarray(x, dtype=np.float32).view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32)


def _round_tf32(x):
    """Round to nearest, ties away from zero (cvt.rna.tf32.f32, what Triton's tf32x3 split uses)."""
    bits = np.asarray(x, dtype=np.float32).view(np.uint32)
    return ((bits + np.uint32(0x1000)) & np.uint32(0xFFFFE000)).view(np.float32)


_interpreted_dot = interpreter.InterpreterBuilder.create_dot


def _tensor_core_dot(self, a, b, d, input_precision, max_num_imprecise_acc):
    precision = interpreter._ir.INPUT_PRECISION
    if a.data.dtype != np.float32 or b.data.dtype != np.float32 or input_precision == precision.IEEE:
        return _interpreted_dot(self, a, b, d, input_precision, max_num_imprecise_acc)
    if input_precision == precision.TF32:
        product = np.matmul(_truncate_tf32(a.data), _truncate_tf32(b.data), dtype=np.float32)
    elif input_precision == precision.TF32x3:
        a_big, b_big = _round_tf32(a.data), _round_tf32(b.data)
        a_small, b_small = _truncate_tf32(a.data - a_big), _truncate_tf32(b.data - b_big)
        product = np.matmul(a_small, b_big, dtype=np.float32) + np.matmul(a_big, b_small, dtype=np.float32)
        product = product + np.matmul(a_big, b_big, dtype=np.float32)
    else:
        raise NotImplementedError(f"no emulation of input_precision {input_precision}")
    return interpreter.TensorHandle(product + d.data, d.dtype.scalar)


interpreter.InterpreterBuilder.create_dot = _tensor_core_dot


def load(path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main(slugs):
    failures = 0
    for slug in slugs or ["vector-add", "softmax", "matmul", "attention"]:
        problem = load_problem(slug)
        for path in solutions.ladder(slug, "triton"):
            module = load(path)
            for size_set in problem.tests_for("cpu"):
                if math.prod(size_set.sizes.values()) > MAX_WORK.get(slug, DEFAULT_MAX_WORK):
                    print(f"{slug:11} {path.name:28} {size_set.name:16} skipped (too slow to interpret)")
                    continue
                arrays = check.make_inputs(problem, size_set, secrets.randbits(64), 0)
                ins = [arrays[p.name].to("cpu").contiguous() for p in problem.input_params]
                outs = [torch.full(problem.shape(p, size_set.sizes), float("nan")) for p in problem.output_params]
                args, i, o = [], iter(ins), iter(outs)
                for p in problem.signature:
                    if p.role == "size":
                        args.append(size_set.sizes[p.name])
                    else:
                        args.append(next(i) if p.role == "input" else next(o))
                module.solve(*args)
                reference = check.reference_outputs(problem, size_set, arrays)
                atol, rtol = problem.tolerances(size_set.sizes)
                for p, got in zip(problem.output_params, outs):
                    r = check.compare(got.numpy(), reference[p.name].cpu(), atol, rtol)
                    failures += not r.ok
                    said = f"ok (max abs error {r.max_abs_err:.2e}, atol {atol:.2e})" if r.ok else "WRONG " + r.message
                    print(f"{slug:11} {path.name:28} {size_set.name:16} {said}")
    return failures


if __name__ == "__main__":
    sys.exit(1 if main(sys.argv[1:]) else 0)
