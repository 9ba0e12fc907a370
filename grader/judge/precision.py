"""Reduced-precision arithmetic, emulated on the CPU, for `grader calibrate` and problems' reference.py files.

Rounding: `tf32` keeps 10 explicit mantissa bits (cvt.rna.tf32: to nearest, ties away), `fp16` and `bf16` round
to nearest even, as the hardware's conversions do. Each returns float32 values, so an emulation rounds
operands (products of rounded operands are exact in float32 for TF32, FP16 and BF16 with K-long float32 sums),
or sums (`matmul_accumulate` keeps its running sum in a chosen type, `block` terms at a time, as a tensor core's
accumulator or a split-k kernel does).
"""

from __future__ import annotations

import torch

F32 = torch.float32


def tf32(x: torch.Tensor) -> torch.Tensor:
    """float32 values rounded to TF32 (10 explicit mantissa bits), to nearest, as cvt.rna.tf32 does."""
    bits = x.to(F32).contiguous().view(torch.int32)
    return ((bits + 0x1000) & ~0x1FFF).view(F32)


def fp16(x: torch.Tensor) -> torch.Tensor:
    return x.to(torch.float16).to(F32)


def bf16(x: torch.Tensor) -> torch.Tensor:
    return x.to(torch.bfloat16).to(F32)


ROUNDINGS = {"TF32": tf32, "FP16": fp16, "BF16": bf16}
MANTISSA_BITS = {torch.float64: 52, torch.float32: 23, torch.float16: 10, torch.bfloat16: 7}


def rounded_inputs(inputs: dict[str, torch.Tensor], rounding) -> dict[str, torch.Tensor]:
    """Every floating-point input rounded by `rounding` (to float32 values); integer inputs unchanged."""
    return {name: rounding(t) if t.is_floating_point() else t for name, t in inputs.items()}


def changes(inputs: dict[str, torch.Tensor], rounding) -> bool:
    """Whether `rounding` changes any floating-point input (half inputs are already FP16 values)."""
    return any(t.is_floating_point() and not torch.equal(rounding(t).to(t.dtype), t) for t in inputs.values())


def matmul_accumulate(a: torch.Tensor, b: torch.Tensor, dtype: torch.dtype, block: int = 1) -> torch.Tensor:
    """a @ b with exact products of `block` consecutive k summed in float32, then added into a running sum
    kept in `dtype` (float16 for a kernel that accumulates in half, float32 for one that accumulates in float)."""
    acc = torch.zeros(a.shape[0], b.shape[1], dtype=dtype)
    a32, b32 = a.to(F32), b.to(F32)
    for k in range(0, a.shape[1], block):
        acc = (acc.to(F32) + a32[:, k : k + block] @ b32[k : k + block]).to(dtype)
    return acc.to(F32)
