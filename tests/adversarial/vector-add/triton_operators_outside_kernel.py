# expect: rejected
# message: PyTorch operator add
# Hostile (triton): adds with PyTorch's operators (`A + B`, a PyTorch kernel) instead of a Triton kernel. The
# source names no library call, so the import check lets it through; the worker's dispatch guard refuses the
# operator at run time.
import torch
import triton


def solve(A, B, C, N):
    C[:] = A + B
