"""Selective-scan reference (Mamba's S6 recurrence), computed by the grader in float64:
h_t = exp(delta_t A) h_{t-1} + delta_t B_t u_t,  y_t = C_t . h_t + D u_t, per batch and channel, h_{-1} = 0."""

import torch

from grader.judge import precision


def _scan(u, delta, A, B, C, D, exp=torch.exp, state_dtype=None, reset_every=0, decay_delta=True, input_delta=True):
    """The recurrence one step at a time over the whole batch; `state_dtype` rounds the state after every
    step, `reset_every` restarts it from 0 at multiples of that many steps (a chunk that drops its carry);
    `decay_delta` and `input_delta` off leave delta out of exp(delta A) and of delta B u (two wrong
    discretisations)."""
    batch, dim, seqlen = u.shape
    h = torch.zeros(batch, dim, A.shape[1], dtype=u.dtype, device=u.device)
    ys = []
    for t in range(seqlen):
        if reset_every and t % reset_every == 0:
            h = torch.zeros_like(h)
        dt = delta[:, :, t, None]
        h = exp((dt if decay_delta else 1) * A) * h + (dt if input_delta else 1) * B[:, None, :, t] * u[:, :, t, None]
        if state_dtype is not None:
            h = h.to(state_dtype).to(u.dtype)
        ys.append((h * C[:, None, :, t]).sum(dim=-1))
    return torch.stack(ys, dim=-1) + D[:, None] * u


SLICE_ELEMENTS = 2**24  # the states the parallel scan holds at once (128 MB of float64, a few times over)


def _parallel_scan(u, delta, A, B, C, D):
    """The same recurrence as `_scan`, in log2(seqlen) steps over all of time at once (Hillis and Steele's scan
    of the pairs (decay, input) with (a2, x2) after (a1, x1) = (a2 a1, a2 x1 + x2)), a slice of channels at a
    time. On a GPU the loop of `_scan` is bound by its few kernels per step (20 s a grading on the longest
    sequences); on a CPU its log2(seqlen) times more arithmetic makes this the slower one."""
    batch, dim, seqlen = u.shape
    width = max(1, SLICE_ELEMENTS // (A.shape[1] * seqlen))
    y = torch.empty_like(u)
    for b in range(batch):
        for d0 in range(0, dim, width):
            rows = slice(d0, min(dim, d0 + width))
            dt = delta[b, rows, None, :]
            decay = torch.exp(dt * A[rows, :, None])
            h = dt * B[b, None] * u[b, rows, None, :]
            step = 1
            while step < seqlen:
                h[..., step:] += decay[..., step:] * h[..., :-step]
                decay[..., step:] = decay[..., step:] * decay[..., :-step]
                step *= 2
            y[b, rows] = (h * C[b, None]).sum(dim=1) + D[rows, None] * u[b, rows]
    return y


def reference(u, delta, A, B, C, D, batch, dim, dstate, seqlen):
    return (_parallel_scan if u.is_cuda else _scan)(u, delta, A, B, C, D)


def baseline(u, delta, A, B, C, D, batch, dim, dstate, seqlen):
    """What PyTorch runs: it has no scan kernel, so Mamba's own reference (selective_scan_ref) is this loop of
    elementwise operations over time, a few kernels per step."""
    return _scan(u, delta, A, B, C, D)


def null_answers(u, delta, A, B, C, D, batch, dim, dstate, seqlen):
    """Cheap wrong answers the tolerance must reject."""
    y = reference(u, delta, A, B, C, D, batch, dim, dstate, seqlen)
    no_memory = (delta[:, :, None, :] * B[:, None] * C[:, None] * u[:, :, None, :]).sum(dim=2) + D[:, None] * u
    answers = {
        "zeros": torch.zeros_like(y),
        "the skip D u alone": D[:, None] * u.expand_as(y),
        "no skip term": y - D[:, None] * u,
        "no memory (h from 0 at every step)": no_memory,
        "decay exp(A) without delta": _scan(u, delta, A, B, C, D, decay_delta=False),
        "input B u without delta": _scan(u, delta, A, B, C, D, input_delta=False),
    }
    if seqlen > 512:
        answers["state dropped every 512 steps"] = _scan(u, delta, A, B, C, D, reset_every=512)
    return answers


def _fast_exp(x):
    """__expf: 2^(x log2 e) with the product rounded to float32."""
    return torch.exp2(x * torch.tensor(1.4426950408889634, dtype=x.dtype))


def _chunked(u, delta, A, B, C, D, chunk: int):
    """The parallel rung's arithmetic: each chunk scanned from h = 0, its decays multiplied into a running
    product, and the carry from the chunks before added as product * carry (float32 throughout)."""
    batch, dim, seqlen = u.shape
    carry = torch.zeros(batch, dim, A.shape[1], dtype=u.dtype)
    ys = []
    for t0 in range(0, seqlen, chunk):
        h = torch.zeros_like(carry)
        decay = torch.ones_like(carry)
        for t in range(t0, min(seqlen, t0 + chunk)):
            dt = delta[:, :, t, None]
            a = _fast_exp(dt * A)
            h = a * h + dt * B[:, None, :, t] * u[:, :, t, None]
            decay = decay * a
            ys.append(((h + decay * carry) * C[:, None, :, t]).sum(dim=-1))
        carry = h + decay * carry
    return torch.stack(ys, dim=-1) + D[:, None] * u


def admitted(u, delta, A, B, C, D, batch, dim, dstate, seqlen):
    """What correct float32 kernels compute."""
    return {
        "float32, sequential": _scan(u, delta, A, B, C, D),
        "float32, sequential, __expf": _scan(u, delta, A, B, C, D, exp=_fast_exp),
        "float32, chunks of 64 with carried decays, __expf": _chunked(u, delta, A, B, C, D, 64),
    }


def low_precision(u, delta, A, B, C, D, batch, dim, dstate, seqlen):
    """What the tolerance must reject where a test says so."""
    return {
        "state kept in bfloat16": _scan(u, delta, A, B, C, D, state_dtype=torch.bfloat16),
        "state kept in half": _scan(u, delta, A, B, C, D, state_dtype=torch.float16),
        "inputs in half": _scan(*(precision.fp16(t) for t in (u, delta, A, B, C, D))),
    }
