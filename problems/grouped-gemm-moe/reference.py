"""Mixture-of-experts reference: Y_t = X_t·W_{e(t)}ᵀ for each token t and its expert e(t), in float64."""

import torch

from grader.judge import precision


def _per_expert(X, W, expert, product):
    """Y with each expert's tokens gathered, multiplied by that expert's weights through `product`, scattered back."""
    Y = torch.zeros(X.shape[0], W.shape[1], dtype=torch.float64)
    for e in torch.unique(expert).tolist():
        rows = (expert == e).nonzero()[:, 0]
        Y[rows] = product(X[rows], W[e].T).double()
    return Y


def _masked(X, W, expert):
    """Y from every expert's product with all the tokens, each row kept from its own expert's: E times the work
    of one pass, but no shape depends on the routing, so it runs on any device (the check's GPU, the meta
    device) without reading the expert ids back."""
    Y = torch.zeros(X.shape[0], W.shape[1], dtype=X.dtype, device=X.device)
    for e in range(W.shape[0]):
        Y = torch.where((expert == e)[:, None], X @ W[e].T, Y)
    return Y


def reference(X, W, expert, T, E, N, K):
    return _masked(X, W, expert.long())


def _mm(A, B):
    """A·B as PyTorch runs it for half: cuBLAS with float32 accumulation and a float32 result."""
    if A.is_cuda and A.dtype == torch.float16:
        try:
            return torch.mm(A, B, out_dtype=torch.float32)
        except (TypeError, RuntimeError):  # a PyTorch before out_dtype: half out, widened
            return torch.mm(A, B).float()
    return A @ B


def baseline(X, W, expert, T, E, N, K):
    """What a PyTorch MoE layer runs without a fused kernel: sort the tokens by expert, then one GEMM per
    non-empty group, each result scattered to its tokens' rows. The group sizes come back to the host, as in
    the MoE layers of Hugging Face's models, so this baseline is timed eagerly, not as a CUDA graph."""
    order = torch.argsort(expert.long(), stable=True)
    counts = torch.bincount(expert.long(), minlength=E).tolist()
    dtype = torch.float32 if X.dtype == torch.float16 else X.dtype
    Y = torch.empty(T, N, dtype=dtype, device=X.device)
    start = 0
    for e, count in enumerate(counts):
        if count:
            rows = order[start : start + count]
            Y[rows] = _mm(X[rows], W[e].T).to(dtype)
            start += count
    return Y


def null_answers(X, W, expert, T, E, N, K):
    """Cheap wrong answers the tolerance must reject."""
    e = expert.long()
    Y = reference(X, W, expert, T, E, N, K)
    answers = {"zeros": torch.zeros_like(Y), "expert 0 for every token": X @ W[0].T}
    if E > 1:
        answers["expert off by one"] = _masked(X, W, (e + 1) % E)
        answers["the weights summed over experts"] = X @ W.sum(dim=0).T
    if T > 1:
        first_row = Y.clone()
        first_row[1:] = 0
        answers["first token only"] = first_row
    if K > 1:
        answers["last k dropped"] = _masked(X[:, :-1], W[:, :, :-1], e)
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


def admitted(X, W, expert, T, E, N, K):
    """What correct kernels compute: float32 sums in any order, tensor cores with float32 accumulators."""
    e = expert.long()
    return {
        "float32, one running sum": _per_expert(X, W, e, lambda a, b: precision.matmul_accumulate(a, b, torch.float32)),
        "float32, blocks of 256 k": _per_expert(
            X, W, e, lambda a, b: precision.matmul_accumulate(a, b, torch.float32, block=256)
        ),
        "tensor core, f32 accumulator truncated per mma": _per_expert(X, W, e, _mma_truncating),
    }


def low_precision(X, W, expert, T, E, N, K):
    """What the tolerance must reject on the marked tests."""
    e = expert.long()
    return {
        "sums kept in half (f16 accumulator)": _per_expert(
            X, W, e, lambda a, b: precision.matmul_accumulate(a, b, torch.float16, block=16)
        ),
        "Y rounded to half": precision.fp16(_per_expert(X, W, e, torch.mm)),
        "BF16 operands": _per_expert(precision.bf16(X), precision.bf16(W), e, torch.mm),
    }
