# Rung 1 (Triton) -- a program per (sequence, channel): chunks of 128 steps, all states at once, scanned with
# tl.associative_scan over the recurrence's affine steps.
#
# For a chunk the program builds a [BLOCK_S, BLOCK_T] tile of steps h -> a h + b, a = exp2(delta log2(e) A_s)
# and b = delta B_t[s] u_t (a step past seqlen is delta = 0: the identity (1, 0); a state past dstate has A = 0
# and B = C = 0). tl.associative_scan along time composes them with (a1, b1) then (a2, b2) = (a1 a2,
# a2 b1 + b2), so column t holds the map from the state entering the chunk to h_t: h_t = P_t carry + Q_t. y
# sums C h over the states (a reduction along the tile's first axis) plus D u, and the last column is the next
# chunk's carry. Each chunk reads u and delta once for every state and B, C as contiguous rows of time.
import torch
import triton
import triton.language as tl

BLOCK_T = 128
LOG2E = 1.4426950408889634


@triton.jit
def compose(a1, b1, a2, b2):
    return a1 * a2, a2 * b1 + b2


@triton.jit
def scan_channel(
    u, delta, A, B, C, D, y, dim, dstate, seqlen, LOG2E: tl.constexpr, BLOCK_S: tl.constexpr, BLOCK_T: tl.constexpr
):
    r = tl.program_id(0)
    b, c = r // dim, r % dim
    states = tl.arange(0, BLOCK_S)
    steps = tl.arange(0, BLOCK_T)
    in_s = states < dstate
    a2 = tl.load(A + c * dstate + states, mask=in_s, other=0.0) * LOG2E
    skip = tl.load(D + c)
    row = r.to(tl.int64) * seqlen
    bc_rows = (b.to(tl.int64) * dstate + states)[:, None] * seqlen
    carry = tl.zeros([BLOCK_S], tl.float32)
    for t0 in range(0, seqlen, BLOCK_T):
        t = t0 + steps
        in_t = t < seqlen
        dt = tl.load(delta + row + t, mask=in_t, other=0.0)
        x = tl.load(u + row + t, mask=in_t, other=0.0)
        mask = in_s[:, None] & in_t[None, :]
        Bt = tl.load(B + bc_rows + t[None, :], mask=mask, other=0.0)
        Ct = tl.load(C + bc_rows + t[None, :], mask=mask, other=0.0)
        a = tl.exp2(dt[None, :] * a2[:, None])
        bx = dt[None, :] * Bt * x[None, :]
        P, Q = tl.associative_scan((a, bx), axis=1, combine_fn=compose)
        h = P * carry[:, None] + Q
        tl.store(y + row + t, tl.sum(Ct * h, axis=0) + skip * x, mask=in_t)
        carry = tl.sum(tl.where(steps[None, :] == BLOCK_T - 1, h, 0.0), axis=1)


def solve(
    u: torch.Tensor,
    delta: torch.Tensor,
    A: torch.Tensor,
    B: torch.Tensor,
    C: torch.Tensor,
    D: torch.Tensor,
    y: torch.Tensor,
    batch: int,
    dim: int,
    dstate: int,
    seqlen: int,
) -> None:
    scan_channel[(batch * dim,)](
        u,
        delta,
        A,
        B,
        C,
        D,
        y,
        dim,
        dstate,
        seqlen,
        LOG2E=LOG2E,
        BLOCK_S=triton.next_power_of_2(dstate),
        BLOCK_T=BLOCK_T,
        num_warps=4,
    )
