"""SwiGLU reference: Y = silu(X·W_gateᵀ) ⊙ (X·W_upᵀ) of half inputs, computed by the grader in float64."""

import torch
import torch.nn.functional as F

from grader.judge import precision


def reference(X, W_gate, W_up, M, N, K):
    return F.silu(X @ W_gate.T) * (X @ W_up.T)


def _project(X, W):
    """X·Wᵀ as PyTorch runs it: cuBLAS's half GEMM with float32 accumulation and a float32 result."""
    if X.is_cuda and X.dtype == torch.float16:
        try:
            return torch.mm(X, W.T, out_dtype=torch.float32)
        except (TypeError, RuntimeError):  # a PyTorch before out_dtype: half out, widened
            return torch.mm(X, W.T).float()
    return X @ W.T


def baseline(X, W_gate, W_up, M, N, K):
    """What PyTorch runs: two projections (a model fuses W_gate and W_up into one GEMM of 2N columns), silu, product."""
    return F.silu(_project(X, W_gate)) * _project(X, W_up)


def null_answers(X, W_gate, W_up, M, N, K):
    """Cheap wrong answers the tolerance must reject."""
    G, U = X @ W_gate.T, X @ W_up.T
    Y = F.silu(G) * U
    answers = {
        "zeros": torch.zeros_like(Y),
        "no gate (U alone)": U,
        "sigmoid instead of silu": torch.sigmoid(G) * U,
        "ReLU instead of silu": torch.relu(G) * U,
        "gate and up swapped": F.silu(U) * G,
    }
    if M > 1:
        first_row = Y.clone()
        first_row[1:] = 0
        answers["first row only"] = first_row
    if K > 1:
        answers["last k dropped"] = reference(X[:, :-1], W_gate[:, :-1], W_up[:, :-1], M, N, K - 1)
    return answers


def _mma_truncating(A, B, step: int = 16):
    """A tensor core's float32 accumulator: each mma adds `step` exact products, the sum truncated (toward
    zero) to float32 once per mma, as the matmul problem measures on an H100."""
    acc = torch.zeros(A.shape[0], B.shape[1], dtype=torch.float64)
    a, b = A.double(), B.double()
    for k in range(0, A.shape[1], step):
        exact = acc + a[:, k : k + step] @ b[k : k + step]
        y = exact.to(torch.float32)
        acc = torch.where(y.double().abs() > exact.abs(), torch.nextafter(y, torch.zeros_like(y)), y).double()
    return acc.float()


def _gate(G, U):
    """The float32 epilogue: silu(g) = g / (1 + exp(-g)) and the product, each rounded to float32."""
    G, U = G.float(), U.float()
    return (G / (1 + torch.exp(-G))) * U


def admitted(X, W_gate, W_up, M, N, K):
    """What correct kernels compute: float32 sums in any order, tensor cores with float32 accumulators."""
    Wg, Wu = W_gate.T, W_up.T
    return {
        "float32, one running sum": _gate(
            precision.matmul_accumulate(X, Wg, torch.float32), precision.matmul_accumulate(X, Wu, torch.float32)
        ),
        "float32, blocks of 256 k": _gate(
            precision.matmul_accumulate(X, Wg, torch.float32, block=256),
            precision.matmul_accumulate(X, Wu, torch.float32, block=256),
        ),
        "tensor core, f32 accumulator truncated per mma": _gate(_mma_truncating(X, Wg), _mma_truncating(X, Wu)),
    }


def low_precision(X, W_gate, W_up, M, N, K):
    """What the tolerance must reject on the marked tests."""
    Wg, Wu = W_gate.T, W_up.T
    exact = reference(X.double(), W_gate.double(), W_up.double(), M, N, K)
    return {
        "sums kept in half (f16 accumulator)": _gate(
            precision.matmul_accumulate(X, Wg, torch.float16, block=16),
            precision.matmul_accumulate(X, Wu, torch.float16, block=16),
        ),
        "Y rounded to half": precision.fp16(exact),
        "BF16 operands": reference(precision.bf16(X), precision.bf16(W_gate), precision.bf16(W_up), M, N, K),
    }
