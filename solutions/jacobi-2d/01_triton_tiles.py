# Rung 1 (Triton) -- one launch per sweep, a program per tile of BH x BW points.
#
# Each program loads the four neighbours of its tile's points as four shifted, masked tiles (the loads overlap,
# and L1 and L2 serve most of them), averages them where the point is interior and copies the point where it is
# on the boundary. Programs are numbered on one axis (a grid of millions of rows launches). Two buffers
# alternate, output and a scratch grid, so that the last sweep writes into output; every sweep crosses memory,
# which the CUDA rung 2 avoids by doing several sweeps per launch in shared memory.
import torch
import triton
import triton.language as tl

BH, BW = 16, 128


@triton.jit
def sweep(u, v, H, W, tiles_x, BH: tl.constexpr, BW: tl.constexpr):
    tile = tl.program_id(0)
    i = (tile // tiles_x) * BH + tl.arange(0, BH)[:, None]
    j = (tile % tiles_x) * BW + tl.arange(0, BW)[None, :]
    inside = (i < H) & (j < W)
    interior = (i > 0) & (i < H - 1) & (j > 0) & (j < W - 1)
    at = i.to(tl.int64) * W + j
    centre = tl.load(u + at, mask=inside, other=0.0)
    up = tl.load(u + at - W, mask=interior, other=0.0)
    down = tl.load(u + at + W, mask=interior, other=0.0)
    left = tl.load(u + at - 1, mask=interior, other=0.0)
    right = tl.load(u + at + 1, mask=interior, other=0.0)
    tl.store(v + at, tl.where(interior, 0.25 * (up + down + left + right), centre), mask=inside)


def solve(input: torch.Tensor, output: torch.Tensor, H: int, W: int, S: int) -> None:
    tiles_x = triton.cdiv(W, BW)
    grid = (tiles_x * triton.cdiv(H, BH),)
    scratch = torch.empty_like(output)
    # sweep k writes output when S - 1 - k is even, so the last one does
    dst, other = (output, scratch) if S % 2 == 1 else (scratch, output)
    src = input
    for _ in range(S):
        sweep[grid](src, dst, H, W, tiles_x, BH=BH, BW=BW, num_warps=4)
        src = dst
        dst, other = other, dst
