"""The counter-based input generator, bit for bit the same as `grader/boundary/generator.h`'s.

Element i of a tensor with seed s is low + scale * u, u = (fmix32(fmix32(i ^ s_lo) + s_hi) >> 8) / 2^24,
computed with float32 rounding after each operation. Integer hashing and exact float32 steps make the values
identical on the CPU and on any GPU, so the trusted grader regenerates exactly the inputs the untrusted
harness used without ever receiving them from it. On the GPU the hash runs in int64 torch ops (masked to 32
bits after every multiply); on the CPU in numpy uint32 ops, whose multiply wraps mod 2^32 as C's does (4x less
CPU time than the int64 ops, with the same bits: tests/test_inputs_numpy.py).

Element types (`generate`, `generate_numpy`; generator.h says the same): f32 is the value above; f16 and bf16
are that float32 value rounded to nearest, ties to even (numpy's and torch's own conversions for half, integer
operations on the bits for bfloat16, which numpy lacks); i32 is low + (h % (high - low)) with h the full 32-bit
hash, an integer in [low, high), and i8 the same in one byte; e4m3 is the float32 value rounded to the nearest fp8
E4M3 ("fn", largest 448), ties to even, saturating to +-448 (integer operations on the bits in numpy, which lacks
fp8; torch's own conversion after a clamp to +-448, since torch's turns overflow into NaN). numpy holds bfloat16
as its raw uint16 bits (`BF16_NUMPY`) and e4m3 as its raw uint8 bits.
"""

from __future__ import annotations

import numpy as np

from grader.torch_import import torch

MASK64 = (1 << 64) - 1
MASK32 = 0xFFFFFFFF
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


def _fmix32(h: torch.Tensor) -> torch.Tensor:
    h = h ^ (h >> 16)
    h = (h * 0x85EBCA6B) & MASK32  # int64 wraps; the low 32 bits are the uint32 product
    h = h ^ (h >> 13)
    h = (h * 0xC2B2AE35) & MASK32
    return h ^ (h >> 16)


def _fmix32_numpy(h: np.ndarray) -> np.ndarray:
    """fmix32 of a uint32 array, in place (uint32 multiplies wrap mod 2^32)."""
    h ^= h >> 16
    h *= np.uint32(0x85EBCA6B)
    h ^= h >> 13
    h *= np.uint32(0xC2B2AE35)
    h ^= h >> 16
    return h


def hash_numpy(seed: int, count: int, index: np.ndarray | None = None) -> np.ndarray:
    """fmix32(fmix32(i ^ seed_lo) + seed_hi) for i < count (or each i of `index`, flat element indices), as
    uint32: each element's hash depends on its index alone, so any part of a buffer can be made on its own."""
    h = np.arange(count, dtype=np.uint32) if index is None else index.astype(np.uint32)
    h ^= np.uint32(seed & MASK32)
    _fmix32_numpy(h)
    h += np.uint32((seed >> 32) & MASK32)
    return _fmix32_numpy(h)


def uniform_numpy(seed: int, count: int, low: float, high: float, index: np.ndarray | None = None) -> np.ndarray:
    """`uniform` on the CPU, in numpy uint32 and float32 ops: the same bits."""
    h = hash_numpy(seed, count, index)
    h >>= 8
    u = h.astype(np.float32)
    u *= np.float32(2.0**-24)
    u *= np.float32(high - low)  # low + scale * u, rounded to float32 after each step (no fma)
    u += np.float32(low)
    return u


def _numpy_is_faster(device: torch.device | str) -> bool:
    """Whether to make values on `device` with the numpy path: on the CPU it makes the same bits faster than
    torch's ops, which are the path everywhere else."""
    return torch.device(device).type == "cpu"


def uniform(seed: int, count: int, low: float, high: float, device: torch.device | str = "cpu") -> torch.Tensor:
    """`count` float32 values in [low, high) for `seed`; see the module docstring."""
    if _numpy_is_faster(device):
        return torch.from_numpy(uniform_numpy(seed, count, low, high))
    return uniform_torch(seed, count, low, high, device)


def hash_torch(seed: int, count: int, device: torch.device | str, index: torch.Tensor | None = None) -> torch.Tensor:
    """hash_numpy in torch int64 ops on `device`."""
    i = torch.arange(count, dtype=torch.int64, device=device) if index is None else index.to(device, torch.int64)
    return _fmix32(_fmix32(i ^ (seed & MASK32)) + (seed >> 32) & MASK32)


def hashes(seed: int, count: int, device: torch.device | str) -> torch.Tensor:
    """hash_numpy's values as int64 on `device`: numpy's path on the CPU (faster there), torch's elsewhere."""
    if _numpy_is_faster(device):
        return torch.from_numpy(hash_numpy(seed, count).astype(np.int64))
    return hash_torch(seed, count, device)


def uniform_torch(
    seed: int, count: int, low: float, high: float, device: torch.device | str, index: torch.Tensor | None = None
) -> torch.Tensor:
    """`uniform` in torch ops on `device` (the GPU's path; on the CPU numpy's is faster)."""
    h = hash_torch(seed, count, device, index)
    u = (h >> 8).to(torch.float32) * (2.0**-24)
    low32 = torch.tensor(low, dtype=torch.float32, device=device)
    scale32 = torch.tensor(high - low, dtype=torch.float32, device=device)
    return low32 + scale32 * u


DTYPES = ("f32", "f16", "bf16", "i32", "i8", "e4m3")
INTEGER_DTYPES = ("i32", "i8")
E4M3_MAX = 448.0


def torch_dtype(dtype: str):
    """The torch element type of a request's element type."""
    return {
        "f32": torch.float32,
        "f16": torch.float16,
        "bf16": torch.bfloat16,
        "i32": torch.int32,
        "i8": torch.int8,
        "e4m3": torch.float8_e4m3fn,
    }[dtype]


NUMPY_DTYPES = {
    "f32": np.float32,
    "f16": np.float16,
    "bf16": np.uint16,
    "i32": np.int32,
    "i8": np.int8,
    "e4m3": np.uint8,
}
RAW_BITS = {"bf16": np.int16, "e4m3": np.int8}  # numpy holds these as raw bits; torch views them from the same width
BF16_NUMPY = np.uint16  # numpy has no bfloat16: its arrays hold the raw bits


def bounds_bits(dtype: str, low: float, high: float) -> tuple[int, int]:
    """(LOW_BITS, SCALE_BITS) of the request: float32 bits of low and high - low, or for i32 and i8 the
    two's-complement bits of low and the count high - low."""
    if dtype in INTEGER_DTYPES:
        return int(low) & MASK32, int(high) - int(low)
    return float32_bits(low), float32_bits(high - low)


def integers_numpy(seed: int, count: int, low: int, high: int, index: np.ndarray | None = None) -> np.ndarray:
    """The i32 input: low + (h % (high - low)), wrapping as int32 does."""
    h = hash_numpy(seed, count, index)
    h %= np.uint32(int(high) - int(low))
    h += np.uint32(int(low) & MASK32)
    return h.view(np.int32)


def bf16_bits_numpy(values: np.ndarray) -> np.ndarray:
    """float32 values rounded to bfloat16 (nearest, ties to even), as raw uint16 bits (finite values)."""
    x = values.astype(np.float32).view(np.uint32)
    return ((x + np.uint32(0x7FFF) + ((x >> 16) & np.uint32(1))) >> 16).astype(np.uint16)


def e4m3_bits_numpy(values: np.ndarray) -> np.ndarray:
    """float32 values rounded to fp8 E4M3 (nearest, ties to even, saturating to +-448; NaN to 0x7F), as raw
    uint8 bits: generator.h's f32_to_e4m3_bits, element-wise."""
    x = values.astype(np.float32).view(np.uint32)
    sign = ((x >> 24) & np.uint32(0x80)).astype(np.uint32)
    x = x & np.uint32(0x7FFFFFFF)
    e = (x >> 23).astype(np.int64)
    mant = ((x & np.uint32(0x7FFFFF)) | np.uint32(0x800000)).astype(np.int64)
    shift = np.clip(141 - e, 20, 40)  # subnormals (e < 121) shift mant; normals keep 20 bits of rest
    normal = e >= 121
    m = np.where(normal, ((e - 120) << 3) | ((x.astype(np.int64) >> 20) & 7), mant >> shift)
    rest = np.where(normal, x.astype(np.int64) & 0xFFFFF, mant & ((np.int64(1) << shift) - 1))
    half = np.where(normal, 0x80000, np.int64(1) << (shift - 1))
    m = m + ((rest > half) | ((rest == half) & ((m & 1) == 1)))
    m = np.where(e < 117, 0, m)
    m = np.where(x >= np.uint32(0x43E00000), 0x7E, m)
    m = np.where(x > np.uint32(0x7F800000), 0x7F, m)
    return (sign | m.astype(np.uint32)).astype(np.uint8)


def bf16_to_float32(bits: np.ndarray) -> np.ndarray:
    """Raw bfloat16 bits as float32 values (exact)."""
    return (bits.astype(np.uint32) << 16).view(np.float32)


def generate_numpy(
    dtype: str, seed: int, count: int, low: float, high: float, index: np.ndarray | None = None
) -> np.ndarray:
    """One input of element type `dtype` (f32, f16, bf16 as raw uint16 bits, i32, i8, e4m3 as raw uint8 bits)
    on the CPU; with `index`, only its elements at those flat indices."""
    if dtype in INTEGER_DTYPES:
        values = integers_numpy(seed, count, int(low), int(high), index)
        return values.astype(np.int8) if dtype == "i8" else values
    values = uniform_numpy(seed, count, low, high, index)
    if dtype == "f16":
        return values.astype(np.float16)
    if dtype == "bf16":
        return bf16_bits_numpy(values)
    if dtype == "e4m3":
        return e4m3_bits_numpy(values)
    return values


def generate(
    dtype: str,
    seed: int,
    count: int,
    low: float,
    high: float,
    device: torch.device | str = "cpu",
    index: torch.Tensor | None = None,
):
    """One input of element type `dtype` as a flat torch tensor of that type (float32, float16, bfloat16,
    int32, int8, float8_e4m3fn) on `device`: the bits generator.h writes; with `index` (flat element indices
    below `count`), only those elements, in that order."""
    if _numpy_is_faster(device):
        array = generate_numpy(dtype, seed, count, low, high, None if index is None else index.cpu().numpy())
        if dtype in RAW_BITS:
            return torch.from_numpy(array.view(RAW_BITS[dtype])).view(torch_dtype(dtype))
        return torch.from_numpy(array)
    return generate_torch(dtype, seed, count, low, high, device, index)


def generate_torch(
    dtype: str,
    seed: int,
    count: int,
    low: float,
    high: float,
    device: torch.device | str,
    index: torch.Tensor | None = None,
):
    """`generate` in torch ops on `device` (the GPU's path; on the CPU numpy's is faster)."""
    if dtype in INTEGER_DTYPES:
        h = hash_torch(seed, count, device, index)
        values = (h % (int(high) - int(low)) + (int(low) & MASK32)) & MASK32
        return torch.where(values >= 1 << 31, values - (1 << 32), values).to(torch_dtype(dtype))
    values = uniform_torch(seed, count, low, high, device, index)
    if dtype == "e4m3":  # torch's conversion makes NaN of what overflows; generator.h saturates
        values = values.clamp(-E4M3_MAX, E4M3_MAX)
    return values.to(torch_dtype(dtype))  # round to nearest, ties to even, as generator.h


def _rotl(x: int, bits: int) -> int:
    return ((x << bits) | (x >> (64 - bits))) & MASK64


def siphash24(key: bytes, message: bytes) -> int:
    """SipHash-2-4 of `message` under a 16-byte `key`, as a 64-bit integer (Aumasson and Bernstein, 2012)."""
    k0, k1 = int.from_bytes(key[:8], "little"), int.from_bytes(key[8:16], "little")
    v = [k0 ^ 0x736F6D6570736575, k1 ^ 0x646F72616E646F6D, k0 ^ 0x6C7967656E657261, k1 ^ 0x7465646279746573]

    def rounds(count: int) -> None:
        for _ in range(count):
            v[0] = (v[0] + v[1]) & MASK64
            v[1] = _rotl(v[1], 13) ^ v[0]
            v[0] = _rotl(v[0], 32)
            v[2] = (v[2] + v[3]) & MASK64
            v[3] = _rotl(v[3], 16) ^ v[2]
            v[0] = (v[0] + v[3]) & MASK64
            v[3] = _rotl(v[3], 21) ^ v[0]
            v[2] = (v[2] + v[1]) & MASK64
            v[1] = _rotl(v[1], 17) ^ v[2]
            v[2] = _rotl(v[2], 32)

    tail = len(message) % 8
    last = (len(message) & 0xFF) << 56 | int.from_bytes(message[len(message) - tail :], "little")
    words = [int.from_bytes(message[i : i + 8], "little") for i in range(0, len(message) - tail, 8)]
    for word in [*words, last]:
        v[3] ^= word
        rounds(2)
        v[0] ^= word
    v[2] ^= 0xFF
    rounds(4)
    return v[0] ^ v[1] ^ v[2] ^ v[3]


def call_seed(key: int, call: int) -> int:
    """The seed of call number `call` of a case whose secret is the 128-bit `key` (grader/boundary/generator.h):
    SipHash-2-4 of the call index under the key. Its inputs are then `tensor_seed(call_seed, 0, param)`."""
    return siphash24(key.to_bytes(16, "little"), call.to_bytes(8, "little"))


def key_words(key: int) -> tuple[int, int]:
    """The 128-bit key as the two 64-bit words the supervisor's request carries (k0 = the first 8 bytes)."""
    return key & MASK64, key >> 64
