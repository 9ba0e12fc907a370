# expect: wrong_answer
# message: never written
# Hostile (triton): launches on a stream of its own and returns without waiting for it, so the work is not
# between the worker's events nor before the DONE word on its stream (as side_stream.cu). Streams are allowed;
# leaving work running after solve returns is not: the supervisor copies the outputs when solve's stream writes
# the DONE word, before the side stream's work ends, so the first test's output still holds the poison.
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
