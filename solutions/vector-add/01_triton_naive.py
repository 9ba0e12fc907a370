# Rung 1 (Triton) -- naive: one program per block of 1024 elements, C = A + B under a mask.
#
# The Triton version of 01_naive.cu: program i loads elements [1024 i, 1024 i + 1024) of A and B, adds them
# and stores them, the mask `offsets < N` keeping the last block inside the arrays. Triton lays the block out
# over the program's 4 warps and vectorises the loads where the pointers allow; what it leaves is a program
# launched per 4 KiB of each array.
import torch
import triton
import triton.language as tl

BLOCK = 1024


@triton.jit
def vector_add(a, b, c, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    inside = offsets < n
    tl.store(c + offsets, tl.load(a + offsets, mask=inside) + tl.load(b + offsets, mask=inside), mask=inside)


def solve(A: torch.Tensor, B: torch.Tensor, C: torch.Tensor, N: int) -> None:
    vector_add[(triton.cdiv(N, BLOCK),)](A, B, C, N, BLOCK=BLOCK)
