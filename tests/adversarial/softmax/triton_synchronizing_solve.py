# expect: accepted
# mode: submit
# Honest (triton): softmax's Triton rung 2 with a torch.cuda.synchronize() at the end of solve, as users write
# when they time or debug their own code. The Python worker queues a call's work behind the GATE word and says
# READY once solve returns, which this solve cannot do before GATE is raised: the supervisor goes on without
# READY after 5 ms, and the call is timed with solve's host time in it (244 us against 177 us; H100, 2026-11-28).
import torch
import triton
import triton.language as tl

MAX_BLOCK = 8192


@triton.jit
def softmax_in_registers(x, y, n, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    columns = tl.arange(0, BLOCK)
    inside = columns < n
    values = tl.load(x + row * n + columns, mask=inside, other=float("-inf"))
    e = tl.exp(values - tl.max(values, axis=0))
    tl.store(y + row * n + columns, e / tl.sum(e, axis=0), mask=inside)


@triton.jit
def softmax_online(x, y, n, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row, y_row = x + row * n, y + row * n
    columns = tl.arange(0, BLOCK)
    m = tl.full([BLOCK], float("-inf"), tl.float32)
    d = tl.zeros([BLOCK], tl.float32)
    for start in range(0, n, BLOCK):
        values = tl.load(x_row + start + columns, mask=start + columns < n, other=float("-inf"))
        grown = tl.maximum(m, values)
        seen = grown != float("-inf")
        d = tl.where(seen, d * tl.exp(m - grown) + tl.exp(values - grown), 0.0)
        m = grown
    row_max = tl.max(m, axis=0)
    total = tl.sum(tl.where(m != float("-inf"), d * tl.exp(m - row_max), 0.0), axis=0)
    for start in range(0, n, BLOCK):
        inside = start + columns < n
        values = tl.load(x_row + start + columns, mask=inside, other=float("-inf"))
        tl.store(y_row + start + columns, tl.exp(values - row_max) / total, mask=inside)


def solve(input: torch.Tensor, output: torch.Tensor, M: int, N: int) -> None:
    block = triton.next_power_of_2(N)
    if block <= MAX_BLOCK:
        softmax_in_registers[(M,)](input, output, N, BLOCK=block, num_warps=4 if block <= 2048 else 8)
    else:
        softmax_online[(M,)](input, output, N, BLOCK=4096, num_warps=8)
    torch.cuda.synchronize()  # a solve that waits for its own work
