# expect: rejected
# message: torch.cuda.Stream is not allowed
# Hostile (triton): launches on a stream of its own so the work is not between the worker's events (as
# side_stream.cu). Refused by the import check; were it to pass, the tail measured after solve returns would
# reject it as side_stream.cu is.
import torch
import triton
import triton.language as tl

side = torch.cuda.Stream()


@triton.jit
def softmax_rows(x, y, n, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    v = tl.load(x + row * n + cols, mask=cols < n, other=float("-inf"))
    e = tl.exp(v - tl.max(v, axis=0))
    tl.store(y + row * n + cols, e / tl.sum(e, axis=0), mask=cols < n)


def solve(input, output, M, N):
    with torch.cuda.stream(side):
        softmax_rows[(M,)](input, output, N, BLOCK=triton.next_power_of_2(N))
