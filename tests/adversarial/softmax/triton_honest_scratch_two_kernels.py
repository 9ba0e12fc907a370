# expect: accepted
# Honest (triton): a scratch tensor from torch.empty and two kernels in order on the stream solve is called on:
# the first writes each row's maximum and sum of exponentials, the second the output.
import torch
import triton
import triton.language as tl


@triton.jit
def row_stats(x, stats, n, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    m = tl.full([BLOCK], float("-inf"), tl.float32)
    for start in range(0, n, BLOCK):
        m = tl.maximum(m, tl.load(x + row * n + start + cols, mask=start + cols < n, other=float("-inf")))
    row_max = tl.max(m, axis=0)
    s = tl.zeros([BLOCK], tl.float32)
    for start in range(0, n, BLOCK):
        s += tl.exp(tl.load(x + row * n + start + cols, mask=start + cols < n, other=float("-inf")) - row_max)
    tl.store(stats + 2 * row, row_max)
    tl.store(stats + 2 * row + 1, tl.sum(s, axis=0))


@triton.jit
def write_rows(x, y, stats, n, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    row_max, total = tl.load(stats + 2 * row), tl.load(stats + 2 * row + 1)
    for start in range(0, n, BLOCK):
        inside = start + cols < n
        v = tl.load(x + row * n + start + cols, mask=inside, other=float("-inf"))
        tl.store(y + row * n + start + cols, tl.exp(v - row_max) / total, mask=inside)


def solve(input, output, M, N):
    stats = torch.empty((M, 2), dtype=torch.float32, device=input.device)
    block = min(triton.next_power_of_2(N), 2048)
    row_stats[(M,)](input, stats, N, BLOCK=block)
    write_rows[(M,)](input, output, stats, N, BLOCK=block)
