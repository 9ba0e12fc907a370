# expect: wrong_answer
# Hostile (triton): does the work only in its first call of each shape and keeps the answer, hoping that call is
# the only one checked; every later call of the shape copies the kept answer. The JIT stage makes that first call
# on inputs of its own, which no test uses, so every test call returns the stage's answer: wrong.
import torch
import triton
import triton.language as tl

MAX_BLOCK = 8192
kept = {}


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


@triton.jit
def copy(source, target, count, BLOCK: tl.constexpr):
    at = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    tl.store(target + at, tl.load(source + at, mask=at < count), mask=at < count)


def solve(input, output, M, N):
    if (M, N) not in kept:
        answer = torch.empty_like(output)
        softmax_rows[(M,)](input, answer, N, BLOCK=min(triton.next_power_of_2(N), MAX_BLOCK))
        kept[(M, N)] = answer
    copy[(triton.cdiv(M * N, 1024),)](kept[(M, N)], output, M * N, BLOCK=1024)
