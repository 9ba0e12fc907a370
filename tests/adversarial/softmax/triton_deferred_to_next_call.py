# expect: wrong_answer
# Hostile (triton): lazy work. Each call only records its buffers and launches the kernel for the previous
# call's, so its own work would fall outside its timed window. The supervisor snapshots each call's outputs
# right after it: the first call's output was never written.
import torch
import triton
import triton.language as tl

MAX_BLOCK = 8192  # a row in blocks: a whole row of 1e6 columns in one block takes minutes to compile

pending = []


@triton.jit
def softmax_rows(x, y, n, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    m = tl.full([BLOCK], float("-inf"), tl.float32)
    columns = tl.arange(0, BLOCK)
    for start in range(0, n, BLOCK):
        m = tl.maximum(m, tl.load(x + row * n + start + columns, mask=start + columns < n, other=float("-inf")))
    row_max = tl.max(m, axis=0)
    total = tl.zeros([BLOCK], tl.float32)
    for start in range(0, n, BLOCK):
        v = tl.load(x + row * n + start + columns, mask=start + columns < n, other=float("-inf"))
        total += tl.exp(v - row_max)
    s = tl.sum(total, axis=0)
    for start in range(0, n, BLOCK):
        inside = start + columns < n
        v = tl.load(x + row * n + start + columns, mask=inside, other=float("-inf"))
        tl.store(y + row * n + start + columns, tl.exp(v - row_max) / s, mask=inside)


def solve(input, output, M, N):
    for x, y, m, n in pending:
        softmax_rows[(m,)](x, y, n, BLOCK=min(triton.next_power_of_2(n), MAX_BLOCK))
    pending.clear()
    pending.append((input, output, M, N))
