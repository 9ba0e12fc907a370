"""Half GEMM reference: C = A·B of half inputs, computed by the grader in float64 (the halves are exact in it)."""

import torch

from grader.judge import precision


def reference(A, B, M, N, K):
    return A @ B


def baseline(A, B, M, N, K):
    """What PyTorch runs: cuBLAS's half GEMM with float32 accumulation and a float32 result (out_dtype)."""
    if A.is_cuda and A.dtype == torch.float16:
        try:
            return torch.mm(A, B, out_dtype=torch.float32)
        except (TypeError, RuntimeError):  # a PyTorch before out_dtype: half out, widened (one more pass)
            return torch.mm(A, B).float()
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


def admitted(A, B, M, N, K):
    """What correct kernels compute: float32 sums in any order, tensor cores with float32 accumulators."""
    return {
        "float32, one running sum": precision.matmul_accumulate(A, B, torch.float32),
        "float32, blocks of 256 k": precision.matmul_accumulate(A, B, torch.float32, block=256),
        "tensor core, f32 accumulator truncated per mma": _mma_truncating(A, B),
    }


def low_precision(A, B, M, N, K):
    """What the tolerance must reject on the long reductions."""
    return {
        "sums kept in half (f16 accumulator)": precision.matmul_accumulate(A, B, torch.float16, block=16),
        "C rounded to half": precision.fp16(A.double() @ B.double()),
        "BF16 operands": precision.bf16(A) @ precision.bf16(B),
    }
