# Rung 1 (Triton) -- one program per row, three passes over it in blocks: the maximum, the sum, the output.
#
# The Triton version of the textbook softmax: a row of any length is walked in blocks of up to 4096 floats, once
# for its maximum, once for the sum of exp(x - max) and once to write exp(x - max) / sum. Each lane keeps its
# own running maximum and sum and the block reduces them at the end of a pass. The input is read three times;
# the next rung reads it once or twice.
import torch
import triton
import triton.language as tl

MAX_BLOCK = 4096


@triton.jit
def softmax_three_pass(x, y, n, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row, y_row = x + row * n, y + row * n
    columns = tl.arange(0, BLOCK)
    lane_max = tl.full([BLOCK], float("-inf"), tl.float32)
    for start in range(0, n, BLOCK):
        values = tl.load(x_row + start + columns, mask=start + columns < n, other=float("-inf"))
        lane_max = tl.maximum(lane_max, values)
    row_max = tl.max(lane_max, axis=0)
    lane_sum = tl.zeros([BLOCK], tl.float32)
    for start in range(0, n, BLOCK):
        values = tl.load(x_row + start + columns, mask=start + columns < n, other=float("-inf"))
        lane_sum += tl.exp(values - row_max)
    total = tl.sum(lane_sum, axis=0)
    for start in range(0, n, BLOCK):
        inside = start + columns < n
        values = tl.load(x_row + start + columns, mask=inside, other=float("-inf"))
        tl.store(y_row + start + columns, tl.exp(values - row_max) / total, mask=inside)


def solve(input: torch.Tensor, output: torch.Tensor, M: int, N: int) -> None:
    block = min(triton.next_power_of_2(N), MAX_BLOCK)
    softmax_three_pass[(M,)](input, output, N, BLOCK=block, num_warps=4 if block <= 1024 else 8)
