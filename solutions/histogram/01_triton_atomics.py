# Rung 1 (Triton) -- global atomics: one program per block of values, tl.atomic_add into the counts.
#
# The Triton version of 01_naive.cu: a first kernel clears the counts (they hold garbage when solve is
# called), a second loads BLOCK values per program and adds one to each value's bin with an atomic in global
# memory. Correct for any number of bins; the skewed tests serialise in the L2 as rung 1 does.
import torch
import triton
import triton.language as tl

BLOCK = 1024


@triton.jit
def clear(counts, bins, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    tl.store(counts + offsets, tl.zeros([BLOCK], dtype=tl.int32), mask=offsets < bins)


@triton.jit
def count(values, counts, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    inside = offsets < n
    bins = tl.load(values + offsets, mask=inside, other=0)
    tl.atomic_add(counts + bins, tl.full([BLOCK], 1, dtype=tl.int32), mask=inside, sem="relaxed")


def solve(values: torch.Tensor, counts: torch.Tensor, N: int, BINS: int) -> None:
    clear[(triton.cdiv(BINS, BLOCK),)](counts, BINS, BLOCK=BLOCK)
    count[(triton.cdiv(N, BLOCK),)](values, counts, N, BLOCK=BLOCK)
