"""FP8 GEMM reference: C = scale_a scale_b A·Bᵀ of e4m3 inputs (B given N x K), computed by the grader in float64
(the e4m3 values and scales are exact in it); the answer's rounding to bfloat16 is the tolerance's rtol."""

import torch

from grader.judge import precision

F32 = torch.float32
MMA_K = 32  # k per fp8 mma instruction (mma.sync m16n8k32, wgmma m64nNk32)


def reference(A, B, scale_a, scale_b, M, N, K):
    return (scale_a * scale_b) * (A @ B.T)


def baseline(A, B, scale_a, scale_b, M, N, K):
    """What PyTorch runs: torch._scaled_mm (cuBLASLt's fp8 GEMM, float32 accumulation with promotion, a bfloat16
    result) where its layout rules allow (K and N multiples of 16), else float32 on the widened values."""
    if A.dtype != torch.float8_e4m3fn:  # widened inputs (the CPU's checks): the reference itself
        return reference(A, B, scale_a, scale_b, M, N, K)
    if A.is_cuda and K % 16 == 0 and N % 16 == 0:
        try:
            return torch._scaled_mm(A, B.T, scale_a=scale_a.float(), scale_b=scale_b.float(), out_dtype=torch.bfloat16)
        except (RuntimeError, TypeError):  # a PyTorch or GPU without it
            pass
    return ((scale_a.float() * scale_b.float()) * (A.float() @ B.float().T)).to(torch.bfloat16)


def null_answers(A, B, scale_a, scale_b, M, N, K):
    """Cheap wrong answers the tolerance must reject."""
    C = reference(A, B, scale_a, scale_b, M, N, K)
    answers = {"zeros": torch.zeros_like(C), "scales left out": A @ B.T, "scale_a only": scale_a * (A @ B.T)}
    if M > 1:
        first_row = C.clone()
        first_row[1:] = 0
        answers["first row only"] = first_row
    if K > 1:
        answers["last k dropped"] = reference(A[:, :-1], B[:, :-1], scale_a, scale_b, M, N, K - 1)
    return answers


def _truncate_fp22(x: torch.Tensor) -> torch.Tensor:
    """float64 values cut toward zero to 14 significant bits (1 sign, 8 exponent, 13 mantissa bits: the
    accumulator measured in Ada's and Hopper's fp8 mma, which drops the low 10 bits of a float32)."""
    bits = x.to(torch.float64).contiguous().view(torch.int64)
    return (bits & ~((1 << 39) - 1)).view(torch.float64)


def _fp8_tensor_core(A, B, promote: int | None) -> torch.Tensor:
    """An fp8 mma's sums: each instruction adds MMA_K exact products to its accumulator and keeps the result in
    FP22 (truncated); every `promote` k the accumulator is added into float32 registers and restarts from zero
    (CUTLASS's and DeepGEMM's two-level accumulation); None: never (cuBLAS's "fast accumulation")."""
    a, b = A.double(), B.double()
    total = torch.zeros(A.shape[0], B.shape[0], dtype=F32)
    partial = torch.zeros(A.shape[0], B.shape[0], dtype=torch.float64)
    for k in range(0, A.shape[1], MMA_K):
        partial = _truncate_fp22(partial + a[:, k : k + MMA_K] @ b[:, k : k + MMA_K].T)
        if promote and ((k + MMA_K) % promote == 0 or k + MMA_K >= A.shape[1]):
            total, partial = total + partial.to(F32), torch.zeros_like(partial)
    return partial.to(F32) if promote is None else total


def _scaled(acc: torch.Tensor, scale_a, scale_b) -> torch.Tensor:
    """The epilogue in float32: (scale_a * scale_b) * acc."""
    return (scale_a.to(F32) * scale_b.to(F32)) * acc.to(F32)


def _truncated_bf16(x: torch.Tensor) -> torch.Tensor:
    """float32 values cut to bfloat16 (toward zero: the low 16 bits dropped), as float32."""
    bits = x.to(F32).contiguous().view(torch.int32)
    return (bits & ~0xFFFF).view(F32)


def admitted(A, B, scale_a, scale_b, M, N, K):
    """What correct kernels compute: float32 sums in any order, or fp8 mma promoted every 128 k; scaled and
    rounded once to bfloat16."""
    Bt = B.T
    sums = {
        "float32, one running sum": precision.matmul_accumulate(A, Bt, F32),
        "float32, blocks of 256 k": precision.matmul_accumulate(A, Bt, F32, block=256),
        "fp8 mma (FP22 accumulator), promoted every 128 k": _fp8_tensor_core(A, B, promote=128),
    }
    return {name: precision.bf16(_scaled(acc, scale_a, scale_b)) for name, acc in sums.items()}


def low_precision(A, B, scale_a, scale_b, M, N, K):
    """What the tolerance must reject where the spec marks it."""
    return {
        "fp8 mma (FP22 accumulator) never promoted": precision.bf16(
            _scaled(_fp8_tensor_core(A, B, promote=None), scale_a, scale_b)
        ),
        "sums kept in bfloat16": _scaled(
            precision.matmul_accumulate(A, B.T, torch.bfloat16, block=32), scale_a, scale_b
        ),
        "C truncated to bfloat16": _truncated_bf16(_scaled(precision.matmul_accumulate(A, B.T, F32), scale_a, scale_b)),
    }
