"""Run the Triton rungs under Triton's interpreter on CPU tensors, on each problem's CPU tests, and compare them
with the problem's float64 reference and tolerance (the judge's own comparison), where there is no GPU:

    TRITON_INTERPRET=1 python scripts/triton_interpret_rungs.py [PROBLEM...]

It needs Triton installed beside PyTorch (pip install triton; the interpreter needs no GPU). It checks the
kernels' arithmetic only: the judge's run (sandbox, supervisor, timing) needs the GPU.
"""
import importlib.util
import math
import secrets
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from grader.problems.spec import load_problem
from grader.problems import solutions
from grader.judge import check

def load(path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m); return m

for slug in sys.argv[1:] or ["vector-add", "softmax"]:
    problem = load_problem(slug)
    for path in solutions.ladder(slug, "triton"):
        module = load(path)
        for size_set in problem.tests_for("cpu"):
            if math.prod(size_set.sizes.values()) > 3_000_000: continue
            arrays = check.make_inputs(problem, size_set, secrets.randbits(64), 0)
            ins = [arrays[p.name].to("cpu").contiguous() for p in problem.input_params]
            outs = [torch.full(problem.shape(p, size_set.sizes), float("nan")) for p in problem.output_params]
            args, i, o = [], iter(ins), iter(outs)
            for p in problem.signature:
                args.append(size_set.sizes[p.name] if p.role == "size" else next(i) if p.role == "input" else next(o))
            module.solve(*args)
            reference = check.reference_outputs(problem, size_set, arrays)
            atol, rtol = problem.tolerances(size_set.sizes)
            for p, got in zip(problem.output_params, outs):
                r = check.compare(got.numpy(), reference[p.name].cpu(), atol, rtol)
                print(f"{slug:11} {path.name:28} {size_set.name:16} {'ok' if r.ok else 'WRONG ' + r.message}")
