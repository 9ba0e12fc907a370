# expect: wrong_answer
# Hostile (triton): returns a tensor (a view of the input) instead of writing the output, as if the judge took
# solve's return value. It does not: the output buffer is what is judged, and it still holds the poison.
import torch
import triton


def solve(input, output, M, N):
    return input.view(M, N)
