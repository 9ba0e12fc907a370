# expect: wrong_answer
# message: wrote 4092 bytes past the end of C (first at element 1)
# Bug (bounds, triton): one program per block of 1024 elements, loads and store without a mask. The last program
# writes up to 1023 elements past the end of C. The Python tracks' arrays are views of the CUDA supervisor's
# buffers, so the same canary after C catches it on the first test (N = 1).
import torch
import triton
import triton.language as tl

BLOCK = 1024


@triton.jit
def vector_add(a, b, c, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    tl.store(c + offsets, tl.load(a + offsets) + tl.load(b + offsets))


def solve(A: torch.Tensor, B: torch.Tensor, C: torch.Tensor, N: int) -> None:
    vector_add[(triton.cdiv(N, BLOCK),)](A, B, C, BLOCK=BLOCK)
