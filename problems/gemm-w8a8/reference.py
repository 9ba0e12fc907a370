"""W8A8 GEMM reference: X quantized per row to int8 in float32 exactly as the statement defines it, then the
int32 products and sums and the scales in float64 (exact but for the last rounding of each element)."""

import torch

F32 = torch.float32


def quantize(X, rounding=torch.round, reciprocal: bool = False, per_tensor: bool = False):
    """(q, s): the statement's per-row quantization in float32. s = max|row| / 127 (correctly rounded), q =
    rounding(X / s) (the quotient correctly rounded, torch.round: half to even), clamped to [-127, 127]; a row of
    zeros has s = 0 and q = 0. `reciprocal`, `per_tensor` and other roundings are the wrong variants."""
    x = X.to(F32)
    amax = x.abs().amax() * torch.ones(x.shape[0], dtype=F32) if per_tensor else x.abs().amax(dim=1)
    s = (amax.double() / 127).to(F32)  # correctly rounded: on a GPU, PyTorch divides by a Python number through
    # its reciprocal (amax * (1/127), not amax / 127), which moves s by an ulp in some rows and then their q
    safe = torch.where(s > 0, s, torch.ones_like(s))[:, None]
    quotient = x * (127 / torch.where(amax > 0, amax, torch.ones_like(amax)))[:, None] if reciprocal else x / safe
    q = rounding(quotient).clamp(-127, 127)
    return torch.where(s[:, None] > 0, q, torch.zeros_like(q)), s


def reference(X, W, sw, M, N, K):
    q, s = quantize(X)
    acc = q.double() @ W.double().T  # exact: integers below 2^53
    return (s.double()[:, None] * sw.double()[None, :]) * acc


def baseline(X, W, sw, M, N, K):
    """What PyTorch runs: the row quantization in float32 ops, then torch._int_mm (cuBLAS's int8 GEMM with int32
    results) where its rules allow (M > 16, K and N multiples of 8), else a float32 matmul of the integers on
    the GPU (exact while the sums stay below 2^24) and a float64 one on the CPU."""
    q, s = quantize(X.to(F32))
    if not X.is_cuda:
        return (s.double()[:, None] * sw.double()[None, :]) * (q.double() @ W.double().T)
    if M > 16 and K % 8 == 0 and N % 8 == 0:
        acc = torch._int_mm(q.to(torch.int8), W.to(torch.int8).T)
    else:
        acc = q @ W.to(F32).T
    return (s[:, None] * sw.to(F32)[None, :]) * acc.to(F32)


def null_answers(X, W, sw, M, N, K):
    """Cheap wrong answers the tolerance must reject."""
    Y = reference(X, W, sw, M, N, K)
    answers = {
        "zeros": torch.zeros_like(Y),
        "float GEMM, no quantization": X.double() @ (W.double() * sw.double()[:, None]).T,
    }
    if M > 1:
        first_row = Y.clone()
        first_row[1:] = 0
        answers["first row only"] = first_row
    if K > 1:
        answers["last k dropped"] = reference(X[:, :-1], W[:, :-1], sw, M, N, K - 1)
    return answers


def _epilogue(q, s, W, sw, order: str):
    acc = (q.double() @ W.double().T).to(F32)  # exact integers; float32 rounds those above 2^24
    s, sw = s.to(F32)[:, None], sw.to(F32)[None, :]
    if order == "(s sw) acc":
        return (s * sw) * acc
    if order == "s (sw acc)":
        return s * (sw * acc)
    return (acc * s) * sw


def _float32_sums(q, s, W, sw, block: int = 1):
    """The integer products summed in float32 (exact while the partial sums stay below 2^24)."""
    acc = torch.zeros(q.shape[0], W.shape[0], dtype=F32)
    for k in range(0, q.shape[1], block):
        acc = acc + (q[:, k : k + block].double() @ W[:, k : k + block].double().T).to(F32)
    return (s.to(F32)[:, None] * sw.to(F32)[None, :]) * acc


def admitted(X, W, sw, M, N, K):
    """What correct kernels compute: exact int32 sums and the float32 epilogue in any order."""
    q, s = quantize(X)
    answers = {
        f"epilogue {order}": _epilogue(q, s, W, sw, order) for order in ("(s sw) acc", "s (sw acc)", "(acc s) sw")
    }
    answers["products summed in float32, 256 k at a time"] = _float32_sums(q, s, W, sw, block=256)
    return answers


def low_precision(X, W, sw, M, N, K):
    """Quantizations other than the statement's, which the tolerance must reject where the spec marks it."""
    answers = {}
    for name, (rounding, reciprocal, per_tensor) in {
        "reciprocal: x * (127 / max)": (torch.round, True, False),
        "rounded toward zero": (torch.trunc, False, False),
        "one scale for all of X": (torch.round, False, True),
    }.items():
        q, s = quantize(X, rounding, reciprocal, per_tensor)
        answers[name] = _epilogue(q, s, W, sw, "(s sw) acc")
    return answers
