# expect: rejected
# mode: submit
# message: torch.cuda.Event.elapsed_time is not allowed
# Hostile (triton): patches PyTorch's event timer, which the Python worker uses for its claim, to report a
# tenth of each call. The import check refuses torch.cuda outright; were it to pass, a tenth of the judge's
# clock is a forged timer (as timer_patch.cu).
import torch
import triton
import triton.language as tl

_real = torch.cuda.Event.elapsed_time
torch.cuda.Event.elapsed_time = lambda start, end: _real(start, end) / 10


@triton.jit
def softmax_rows(x, y, n, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    v = tl.load(x + row * n + cols, mask=cols < n, other=float("-inf"))
    e = tl.exp(v - tl.max(v, axis=0))
    tl.store(y + row * n + cols, e / tl.sum(e, axis=0), mask=cols < n)


def solve(input, output, M, N):
    softmax_rows[(M,)](input, output, N, BLOCK=triton.next_power_of_2(N))
