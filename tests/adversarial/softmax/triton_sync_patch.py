# expect: rejected
# message: torch.cuda.synchronize may not be assigned
# Hostile (triton): makes the worker's wait for the device a no-op, so DONE would go out while the kernel still
# runs (as early_done.cu). Refused by the source check (a module's names may be used, not replaced); were it to
# pass, the DONE word still follows the kernel on the worker's stream, so the judge's clock covers it.
import torch
import triton
import triton.language as tl

torch.cuda.synchronize = lambda device=None: None


@triton.jit
def zero(y, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y + offsets, tl.zeros([BLOCK], tl.float32), mask=offsets < n)


def solve(input, output, M, N):
    zero[(triton.cdiv(M * N, 1024),)](output, M * N, BLOCK=1024)
