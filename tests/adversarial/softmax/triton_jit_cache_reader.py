# expect: wrong_answer
# Hostile (triton): looks in its run's Triton cache folder for the file triton_jit_cache_plant.py writes into its
# own, through the same unread route, and writes the answer only if it finds it: were gradings of different
# sources to share a JIT cache, it would be accepted. The judge keeps one entry per source digest, so the file
# is never there and no output is written.
import typing

import torch
import triton
import triton.language as tl

PLANTED = "kerneljudge-jit-plant"


def reach(environ: "__import__('os').environ.get", exists: "__import__('os').path.exists") -> None:
    pass


def planted() -> bool:
    found = typing.get_type_hints(reach)
    return found["exists"](found["environ"]("TRITON_CACHE_DIR", ".triton") + "/" + PLANTED)


FOUND = planted()


@triton.jit
def softmax_online(x, y, n, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row, y_row = x + row * n, y + row * n
    columns = tl.arange(0, BLOCK)
    m = tl.full([BLOCK], float("-inf"), tl.float32)
    d = tl.zeros([BLOCK], tl.float32)
    for start in range(0, n, BLOCK):
        values = tl.load(x_row + start + columns, mask=start + columns < n, other=float("-inf"))
        grown = tl.maximum(m, values)
        d = tl.where(grown != float("-inf"), d * tl.exp(m - grown) + tl.exp(values - grown), 0.0)
        m = grown
    row_max = tl.max(m, axis=0)
    total = tl.sum(tl.where(m != float("-inf"), d * tl.exp(m - row_max), 0.0), axis=0)
    for start in range(0, n, BLOCK):
        inside = start + columns < n
        values = tl.load(x_row + start + columns, mask=inside, other=float("-inf"))
        tl.store(y_row + start + columns, tl.exp(values - row_max) / total, mask=inside)


def solve(input: torch.Tensor, output: torch.Tensor, M: int, N: int) -> None:
    if FOUND:
        softmax_online[(M,)](input, output, N, BLOCK=1024, num_warps=4)
