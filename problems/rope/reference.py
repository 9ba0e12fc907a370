"""Rotary position embeddings reference: Q and K rotated pair by pair, GPT-NeoX style (element i with element
i + D/2), by the angle pos * 10000^(-2i/D), computed by the grader in float64."""

import math

import torch

from grader.judge.precision import bf16, fp16

BASE = 10000.0


def frequencies(D, dtype=torch.float64, device=None):
    """theta_i = BASE^(-2i/D) for i < D/2."""
    return BASE ** (-torch.arange(0, D, 2, dtype=dtype, device=device) / D)


def rotate(x, cos, sin):
    """x: T x heads x D; cos, sin: T x D/2. The first half pairs with the second."""
    half = x.shape[-1] // 2
    x1, x2 = x[..., :half], x[..., half:]
    c, s = cos[:, None, :], sin[:, None, :]
    return torch.cat([x1 * c - x2 * s, x2 * c + x1 * s], dim=-1)


def angles(pos, D, exponent=2):
    """pos * theta_i in float64, T x D/2 (`exponent` 1 makes the mistake of theta_i = BASE^(-i/D))."""
    theta = BASE ** (-exponent * torch.arange(0, D // 2, dtype=torch.float64, device=pos.device) / D)
    return pos.to(torch.float64)[:, None] * theta


def reference(Q, K, pos, T, H, HK, D):
    a = angles(pos, D)
    return rotate(Q, a.cos(), a.sin()), rotate(K, a.cos(), a.sin())


def baseline(Q, K, pos, T, H, HK, D):
    """What PyTorch runs, as a model's rotary module does: the angles in the inputs' type, their cosines and
    sines, then the rotation of Q and K (several elementwise kernels; PyTorch has no fused RoPE)."""
    a = pos.to(Q.dtype)[:, None] * frequencies(D, Q.dtype, Q.device)
    cos, sin = a.cos(), a.sin()
    return rotate(Q, cos, sin), rotate(K, cos, sin)


def null_answers(Q, K, pos, T, H, HK, D):
    """Cheap wrong answers the tolerance must reject."""
    q, k = reference(Q, K, pos, T, H, HK, D)
    a = angles(pos, D)
    half = D // 2

    def interleaved(x):  # GPT-J style: element 2i pairs with 2i + 1
        x1, x2 = x[..., 0::2], x[..., 1::2]
        c, s = a.cos()[:, None, :], a.sin()[:, None, :]
        return torch.stack([x1 * c - x2 * s, x2 * c + x1 * s], dim=-1).flatten(-2)

    index = angles(torch.arange(T, device=pos.device), D)
    slow = angles(pos, D, exponent=1)
    answers = {
        "no rotation": (Q.clone(), K.clone()),
        "rotated backwards (sin negated)": (rotate(Q, a.cos(), -a.sin()), rotate(K, a.cos(), -a.sin())),
        "token index instead of pos": (rotate(Q, index.cos(), index.sin()), rotate(K, index.cos(), index.sin())),
        "K left unrotated": (q, K.clone()),
        "zeros": (torch.zeros_like(q), torch.zeros_like(k)),
    }
    if half > 1:
        answers["interleaved pairs (GPT-J)"] = (interleaved(Q), interleaved(K))
        answers["theta_i = 10000^(-i/D)"] = (rotate(Q, slow.cos(), slow.sin()), rotate(K, slow.cos(), slow.sin()))
    return answers


def float32_angles(pos, D):
    """A model's rotary module in float32: theta_i rounded to float32, pos * theta_i rounded to float32."""
    theta = frequencies(D, torch.float32, pos.device)
    return pos.to(torch.float32)[:, None] * theta


def reduced(a):
    """Angles (float64) reduced to [0, 2 pi) in float64, then rounded to float32: what a kernel passes to sincosf."""
    return torch.remainder(a, 2 * math.pi).to(torch.float32)


def fast_sincos(r):
    """__sinf / __cosf on a reduced float32 angle: about 2^-21.4 absolute error; emulated as a rounding of
    the float64 values to 21 bits."""
    c, s = r.double().cos(), r.double().sin()
    step = 2.0**-21
    return (torch.round(c / step) * step).float(), (torch.round(s / step) * step).float()


def admitted(Q, K, pos, T, H, HK, D):
    """What correct float32 kernels compute (for `grader calibrate`): angles in float64, then float32."""
    r = reduced(angles(pos, D))
    cos, sin = r.cos(), r.sin()
    fast_cos, fast_sin = fast_sincos(r)
    exact = angles(pos, D)
    return {
        "float64 angle, sincosf": (rotate(Q, cos, sin), rotate(K, cos, sin)),
        "float64 angle, __sinf and __cosf": (rotate(Q, fast_cos, fast_sin), rotate(K, fast_cos, fast_sin)),
        "float64 sincos, rounded to float32": (
            rotate(Q, exact.cos().float(), exact.sin().float()),
            rotate(K, exact.cos().float(), exact.sin().float()),
        ),
    }


def low_precision(Q, K, pos, T, H, HK, D):
    """What the tolerance must reject on the tests marked reject_low_precision."""
    q, k = reference(Q.double(), K.double(), pos, T, H, HK, D)
    a32 = float32_angles(pos, D)
    theta32 = frequencies(D, torch.float32, pos.device).double()
    a_theta32 = pos.to(torch.float64)[:, None] * theta32
    return {
        "FP16 results": (fp16(q.float()), fp16(k.float())),
        "BF16 results": (bf16(q.float()), bf16(k.float())),
        "float32 angles (theta and pos * theta)": (rotate(Q, a32.cos(), a32.sin()), rotate(K, a32.cos(), a32.sin())),
        "float32 theta, float64 pos * theta": (
            rotate(Q, a_theta32.cos().float(), a_theta32.sin().float()),
            rotate(K, a_theta32.cos().float(), a_theta32.sin().float()),
        ),
    }
