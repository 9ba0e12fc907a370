# Rung 1 (Triton) -- a program per token: its D/2 angles in float64 once, then a tile of heads at a time.
#
# The program computes theta_i = 2^(-2i/D * log2(10000)) and pos * theta_i in float64 (a float32 angle of 10^6
# radians is off by up to 0.03), their cosines and sines in float64, rounded to float32, and applies them to
# the token's H query heads and HK key heads, HEADS heads per step as a [HEADS, D/2] tile of each half.
import torch
import triton
import triton.language as tl


@triton.jit
def rotate_heads(x, out, row, heads, half, c, s, HEADS: tl.constexpr, HALF: tl.constexpr):
    pairs = tl.arange(0, HALF)
    for h0 in range(0, heads, HEADS):
        h = h0 + tl.arange(0, HEADS)
        inside = (h[:, None] < heads) & (pairs[None, :] < half)
        at = (row * heads + h[:, None]).to(tl.int64) * (2 * half) + pairs[None, :]
        x1 = tl.load(x + at, mask=inside, other=0.0)
        x2 = tl.load(x + at + half, mask=inside, other=0.0)
        tl.store(out + at, x1 * c[None, :] - x2 * s[None, :], mask=inside)
        tl.store(out + at + half, x2 * c[None, :] + x1 * s[None, :], mask=inside)


@triton.jit
def rope_token(q, k, pos, q_out, k_out, H, HK, D, HEADS: tl.constexpr, HALF: tl.constexpr):
    t = tl.program_id(0)
    half = D // 2
    i = tl.arange(0, HALF).to(tl.float64)
    log2_base = tl.log2(tl.full([HALF], 10000.0, tl.float64))
    theta = tl.exp2(-2.0 * i / D * log2_base)
    angle = tl.load(pos + t).to(tl.float64) * theta
    c = tl.cos(angle).to(tl.float32)
    s = tl.sin(angle).to(tl.float32)
    rotate_heads(q, q_out, t, H, half, c, s, HEADS, HALF)
    rotate_heads(k, k_out, t, HK, half, c, s, HEADS, HALF)


def solve(
    Q: torch.Tensor,
    K: torch.Tensor,
    pos: torch.Tensor,
    Q_out: torch.Tensor,
    K_out: torch.Tensor,
    T: int,
    H: int,
    HK: int,
    D: int,
) -> None:
    half = triton.next_power_of_2(D // 2)
    heads = max(1, min(16, 2048 // half))
    rope_token[(T,)](Q, K, pos, Q_out, K_out, H, HK, D, HEADS=heads, HALF=half, num_warps=4)
