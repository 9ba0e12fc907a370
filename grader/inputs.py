"""The counter-based input generator, bit for bit the same as `harness/runner.cpp`'s.

Element i of a tensor with seed s is low + scale * u, u = (fmix32(fmix32(i ^ s_lo) + s_hi) >> 8) / 2^24,
computed with float32 rounding after each operation. Integer hashing and exact float32 steps make the
values identical on the CPU, on any GPU and in numpy, so the trusted grader regenerates exactly the inputs
the untrusted harness used without ever receiving them from it.
"""

import numpy as np

MASK64 = (1 << 64) - 1
GOLDEN = 0x9E3779B97F4A7C15
PARAM_MIX = 0xC2B2AE3D27D4EB4F


def splitmix64(x: int) -> int:
    x = (x + GOLDEN) & MASK64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & MASK64
    return x ^ (x >> 31)


def tensor_seed(case_seed: int, call: int, param: int) -> int:
    """Seed of input `param` for call number `call` of a case (draws and timed calls alike)."""
    return splitmix64(case_seed ^ ((call * GOLDEN) & MASK64) ^ ((param * PARAM_MIX) & MASK64))


def float32_bits(value: float) -> int:
    return int(np.array(value, dtype=np.float32).view(np.uint32))


def _fmix32(h: np.ndarray) -> np.ndarray:
    h ^= h >> np.uint32(16)
    h *= np.uint32(0x85EBCA6B)
    h ^= h >> np.uint32(13)
    h *= np.uint32(0xC2B2AE35)
    h ^= h >> np.uint32(16)
    return h


def uniform(seed: int, count: int, low: float, high: float) -> np.ndarray:
    """`count` float32 values in [low, high) for `seed`; see the module docstring."""
    with np.errstate(over="ignore"):
        h = np.arange(count, dtype=np.uint32)
        h ^= np.uint32(seed & 0xFFFFFFFF)
        h = _fmix32(h)
        h += np.uint32(seed >> 32)
        h = _fmix32(h)
    u = (h >> np.uint32(8)).astype(np.float32) * np.float32(2.0 ** -24)
    return np.float32(low) + np.float32(high - low) * u
