# expect: rejected
# message: torch.softmax is not allowed
# Hostile (triton): solves the problem with PyTorch's own softmax instead of a Triton kernel.
import torch
import triton


def solve(input, output, M, N):
    torch.softmax(input, 1, out=output)
