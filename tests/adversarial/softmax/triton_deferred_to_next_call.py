# expect: wrong_answer
# Hostile (triton): lazy work. Each call only records its buffers and launches the kernel for the previous
# call's, so its own work would fall outside its timed window. The supervisor snapshots each call's outputs
# right after it: the first call's output was never written.
import torch
import triton
import triton.language as tl

pending = []


@triton.jit
def softmax_rows(x, y, n, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    v = tl.load(x + row * n + cols, mask=cols < n, other=float("-inf"))
    e = tl.exp(v - tl.max(v, axis=0))
    tl.store(y + row * n + cols, e / tl.sum(e, axis=0), mask=cols < n)


def solve(input, output, M, N):
    for x, y, m, n in pending:
        softmax_rows[(m,)](x, y, n, BLOCK=triton.next_power_of_2(n))
    pending.clear()
    pending.append((input, output, M, N))
