# Rung 1 (Triton) -- row starts by a tiled scan, then a tile of rows per program, a vector of lanes per row.
#
# The Triton version of 02_vector_csr.cu's plan: a first kernel scans the lengths of each tile of 1024 rows
# (tl.cumsum) and writes each row's start within its tile and the tile's total; a second, one program, scans
# the tile totals into carries. The SpMV kernel then takes ROWS rows per program as a ROWS x LANES block: each
# step loads LANES consecutive entries of every row (masked past the row's end), gathers x, and accumulates;
# the row sums come from one reduction over the lanes. A program runs as many steps as its longest row needs.
import torch
import triton
import triton.language as tl

TILE = 1024


@triton.jit
def tile_starts(lengths, starts, totals, m, TILE: tl.constexpr):
    rows = tl.program_id(0) * TILE + tl.arange(0, TILE)
    n = tl.load(lengths + rows, mask=rows < m, other=0)
    tl.store(starts + rows, tl.cumsum(n, axis=0) - n, mask=rows < m)
    tl.store(totals + tl.program_id(0), tl.sum(n, axis=0))


@triton.jit
def scan_totals(totals, tiles, TILE: tl.constexpr):
    carry = 0
    for base in range(0, tiles, TILE):
        at = base + tl.arange(0, TILE)
        t = tl.load(totals + at, mask=at < tiles, other=0)
        tl.store(totals + at, carry + tl.cumsum(t, axis=0) - t, mask=at < tiles)
        carry += tl.sum(t, axis=0)


@triton.jit
def spmv_rows(
    lengths, starts, carries, cols, vals, x, y, m, ROWS: tl.constexpr, LANES: tl.constexpr, TILE: tl.constexpr
):
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    inside = rows < m
    n = tl.load(lengths + rows, mask=inside, other=0)
    start = tl.load(starts + rows, mask=inside, other=0) + tl.load(carries + rows // TILE, mask=inside, other=0)
    acc = tl.zeros([ROWS, LANES], dtype=tl.float32)
    for k0 in range(0, tl.max(n, axis=0), LANES):
        k = k0 + tl.arange(0, LANES)
        entry = k[None, :] < n[:, None]
        p = start[:, None] + k[None, :]
        c = tl.load(cols + p, mask=entry, other=0)
        acc += tl.load(vals + p, mask=entry, other=0.0) * tl.load(x + c, mask=entry, other=0.0)
    tl.store(y + rows, tl.sum(acc, axis=1), mask=inside)


def solve(
    row_lengths: torch.Tensor,
    cols: torch.Tensor,
    vals: torch.Tensor,
    x: torch.Tensor,
    y: torch.Tensor,
    M: int,
    N: int,
    L: int,
) -> None:
    tiles = triton.cdiv(M, TILE)
    starts = torch.empty(M, dtype=torch.int32, device=x.device)
    carries = torch.empty(tiles, dtype=torch.int32, device=x.device)
    tile_starts[(tiles,)](row_lengths, starts, carries, M, TILE=TILE)
    scan_totals[(1,)](carries, tiles, TILE=TILE)
    lanes = min(128, max(16, triton.next_power_of_2(max(1, L // 2))))  # about the mean row length, L / 2
    rows = max(1, 4096 // lanes)
    spmv_rows[(triton.cdiv(M, rows),)](
        row_lengths, starts, carries, cols, vals, x, y, M, ROWS=rows, LANES=lanes, TILE=TILE
    )
