# expect: runtime_error
# message: line 15 of the submission
# Honest mistake (triton): the block size is an ordinary argument where tl.arange needs a tl.constexpr, so
# Triton's frontend refuses the kernel at a launch inside solve (the first test's, N = 1, compiles: Triton takes an
# argument of 1 as a constant; the next one's does not). The verdict names the line of this file and Triton's
# own message, with none of the worker's or Triton's frames.
import triton
import triton.language as tl


@triton.jit
def softmax_rows(x, y, n, BLOCK):
    row = tl.program_id(0).to(tl.int64)
    # BLOCK is not a tl.constexpr: the line below cannot compile
    cols = tl.arange(0, BLOCK)
    v = tl.load(x + row * n + cols, mask=cols < n, other=float("-inf"))
    e = tl.exp(v - tl.max(v, axis=0))
    tl.store(y + row * n + cols, e / tl.sum(e, axis=0), mask=cols < n)


def solve(input, output, M, N):
    softmax_rows[(M,)](input, output, N, triton.next_power_of_2(N))
