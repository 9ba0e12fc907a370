# expect: accepted
# Hostile (triton): writes into its run's Triton cache folder, through a route the source check cannot read (a
# string annotation evaluated by typing.get_type_hints), what a later grading would find there if gradings
# shared one JIT cache: a file that triton_jit_cache_reader.py looks for, a link to the root and a FIFO. Its
# kernel is honest, so it is accepted; the harm would be elsewhere. The judge keeps one cache entry per source
# digest and copies back only regular files and folders, never following a link: another source never sees
# the file, and the link and the FIFO are not kept (tests/test_jit_cache_gpu.py checks the entry).
import typing

import torch
import triton
import triton.language as tl

PLANTED = "kerneljudge-jit-plant"


def reach(
    environ: "__import__('os').environ.get",
    folder: "__import__('os').makedirs",
    opener: "__import__('builtins').open",
    link: "__import__('os').symlink",
    fifo: "__import__('os').mkfifo",
) -> None:
    pass


def plant() -> None:
    found = typing.get_type_hints(reach)
    cache = found["environ"]("TRITON_CACHE_DIR", ".triton")
    for action in (
        lambda: found["folder"](cache, exist_ok=True),  # Triton makes it at its first compile, after this
        lambda: found["opener"](cache + "/" + PLANTED, "w").write("written by another source's grading"),
        lambda: found["link"]("/", cache + "/kerneljudge-jit-link"),
        lambda: found["fifo"](cache + "/kerneljudge-jit-fifo"),
    ):
        try:
            action()
        except OSError:
            pass


plant()


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
    softmax_online[(M,)](input, output, N, BLOCK=1024, num_warps=4)
