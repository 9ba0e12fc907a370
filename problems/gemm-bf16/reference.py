"""BFloat16 GEMM reference: C = A·B of bfloat16 inputs, computed by the grader in float64 (the inputs are exact in
it); the answer's rounding to bfloat16 is the tolerance's rtol."""

import torch

from grader.judge import precision


def reference(A, B, M, N, K):
    return A @ B


def baseline(A, B, M, N, K):
    """What PyTorch runs: cuBLAS's bfloat16 GEMM (float32 accumulation, a bfloat16 result)."""
    if A.is_cuda and A.dtype == torch.bfloat16:
        return torch.mm(A, B)
    return A @ B


def null_answers(A, B, M, N, K):
    """Cheap wrong answers the tolerance must reject."""
    C = A @ B
    answers = {"zeros": torch.zeros_like(C)}
    if M > 1:
        first_row = C.clone()
        first_row[1:] = 0
        answers["first row only"] = first_row
    if K > 1:
        answers["last k dropped"] = A[:, :-1] @ B[:-1]
    return answers


def _mma_truncating(A, B, step: int = 16):
    """A tensor core's float32 accumulator: each mma adds `step` exact products, the sum truncated (toward
    zero) to float32 once per mma, as matmul's 3xTF32 emulation measures on an H100."""
    acc = torch.zeros(A.shape[0], B.shape[1], dtype=torch.float64)
    a, b = A.double(), B.double()
    for k in range(0, A.shape[1], step):
        exact = acc + a[:, k : k + step] @ b[k : k + step]
        y = exact.to(torch.float32)
        acc = torch.where(y.double().abs() > exact.abs(), torch.nextafter(y, torch.zeros_like(y)), y).double()
    return acc.float()


def _truncated_bf16(x: torch.Tensor) -> torch.Tensor:
    """float32 values cut to bfloat16 (toward zero: the low 16 bits dropped), as float32."""
    bits = x.to(torch.float32).contiguous().view(torch.int32)
    return (bits & ~0xFFFF).view(torch.float32)


def admitted(A, B, M, N, K):
    """What correct kernels compute: float32 sums in any order, rounded once to bfloat16."""
    return {
        "float32, one running sum": precision.bf16(precision.matmul_accumulate(A, B, torch.float32)),
        "float32, blocks of 256 k": precision.bf16(precision.matmul_accumulate(A, B, torch.float32, block=256)),
        "tensor core, f32 accumulator truncated per mma": precision.bf16(_mma_truncating(A, B)),
    }


def low_precision(A, B, M, N, K):
    """What the tolerance must reject where the spec marks it."""
    return {
        "sums kept in bfloat16 (bf16 accumulator)": precision.matmul_accumulate(A, B, torch.bfloat16, block=16),
        "C truncated to bfloat16": _truncated_bf16(precision.matmul_accumulate(A, B, torch.float32)),
    }
