# expect: wrong_answer
# message: never written
# Hostile (triton): launches on a stream of its own and returns without waiting for it, so the work is not
# between the worker's events nor before the DONE word on its stream (as side_stream.cu). Streams are allowed;
# leaving work running after solve returns is not: the supervisor copies the outputs when solve's stream writes
# the DONE word, before the side stream's work ends, so the first test's output still holds the poison.
import torch
import triton
import triton.language as tl

MAX_BLOCK = 8192  # a row in blocks: a whole row of 1e6 columns in one block takes minutes to compile

side = torch.cuda.Stream()


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
    with torch.cuda.stream(side):
        softmax_rows[(M,)](input, output, N, BLOCK=min(triton.next_power_of_2(N), MAX_BLOCK))
