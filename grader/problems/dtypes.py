"""Element types of a problem's buffers: the spec's C types, the request's tokens, and each track's C type.

A pointer parameter's `type` in problem.yaml is written as the CUDA track declares it:

    spec type                          token  element                          CPU track's C type
    const float*        / float*       f32    IEEE float32                     the same
    const __half*       / __half*      f16    IEEE binary16 (cuda_fp16.h)      const uint16_t* / uint16_t*
    const __nv_bfloat16* / __nv_bfloat16*  bf16  bfloat16 (cuda_bf16.h)        const uint16_t* / uint16_t*
    const int*          / int*         i32    two's-complement int32           the same

`const` marks an input, its absence an output. On the Python tracks each buffer is an array over the same
device memory: a PyTorch tensor of the element's dtype (triton), or a CuPy array (cupy; CuPy has no bfloat16,
so a bfloat16 buffer is its raw bits as uint16 there). On the CPU track both 16-bit types are their raw bits in a
uint16_t (g++ 12 has no bfloat16 type; `_Float16`, which g++ 12 and later accept on x86-64, may be used on
them after a memcpy): the starter file carries the conversion helpers (`grader init`). A problem with a 16-bit buffer states its accumulation
(`accumulation:` in problem.yaml), e.g. "half products, float32 sums".
"""

from __future__ import annotations

from grader import tracks

FLOAT16_MAX = 65504.0  # the largest finite half: f16 inputs must stay within it (no value rounds to Inf)
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1

# spec element name -> request token
ELEMENTS = {"float": "f32", "__half": "f16", "__nv_bfloat16": "bf16", "int": "i32"}
POINTER_TYPES = tuple(f"{const}{name}*" for name in ELEMENTS for const in ("const ", ""))
CPU_NAMES = {"__half": "uint16_t", "__nv_bfloat16": "uint16_t"}


def element(type_: str) -> str:
    """'const __half*' -> '__half'."""
    return type_.removeprefix("const ").removesuffix("*").strip()


def token(type_: str) -> str:
    """The request's token (f32, f16, bf16, i32) of a pointer type."""
    return ELEMENTS[element(type_)]


def is_input(type_: str) -> bool:
    return type_.startswith("const ")


def c_type(type_: str, track: str) -> str:
    """The C type a `track` submission declares for a spec type ('const __half*' -> 'const uint16_t*' on cpu)."""
    compiled = tracks.get(track).compiled
    if compiled is None or not compiled.half_as_bits or not type_.endswith("*"):
        return type_
    name = element(type_)
    return type_.replace(name, CPU_NAMES.get(name, name))


def python_type(type_: str, track: str) -> str:
    """The annotation of a parameter on a Python track: `int` for a size, else the track's array type."""
    return "int" if type_ == "int" else _framework(track).array_type


def python_dtype(token_: str, track: str) -> str:
    """The element dtype of a buffer on a Python track ('bf16' -> 'cupy.uint16' on cupy: raw bits)."""
    return _framework(track).dtypes[token_]


def _framework(track: str) -> tracks.base.PythonFramework:
    framework = tracks.get(track).python
    if framework is None:
        raise ValueError(f"the {track} track is not a Python track")
    return framework


def check_bounds(token_: str, low: float, high: float) -> None:
    """A ValueError unless [low, high) is a range the generator can draw `token_` elements from."""
    if not high > low:
        raise ValueError(f"high ({high:g}) must be greater than low ({low:g})")
    if token_ == "i32":
        if low != int(low) or high != int(high):
            raise ValueError(f"int32 bounds must be whole numbers (low {low:g}, high {high:g})")
        if low < INT32_MIN or high > INT32_MAX + 1 or high - low > 2**32 - 1:
            raise ValueError(f"int32 bounds [{low:g}, {high:g}) leave int32 or span 2^32 values")
    elif token_ == "f16" and max(abs(low), abs(high)) > FLOAT16_MAX:
        raise ValueError(f"half bounds [{low:g}, {high:g}) exceed {FLOAT16_MAX:g}, the largest half")


CPU_HELPERS = """\
// 16-bit floats are their raw bits on the CPU track: convert with these (round to nearest, ties to even).
static inline float half_to_float(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1F, mant = h & 0x3FF, bits;
    if (exp == 0x1F) bits = sign | 0x7F800000u | (mant << 13);
    else if (exp) bits = sign | ((exp + 112) << 23) | (mant << 13);
    else if (!mant) bits = sign;
    else {  // subnormal: normalise
        exp = 113;
        while (!(mant & 0x400)) mant <<= 1, --exp;
        bits = sign | (exp << 23) | ((mant & 0x3FF) << 13);
    }
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
}
static inline uint16_t float_to_half(float f) {
    uint32_t x;
    std::memcpy(&x, &f, 4);
    uint16_t sign = (x >> 16) & 0x8000;
    x &= 0x7FFFFFFFu;
    if (x > 0x7F800000u) return sign | 0x7E00;
    if (x >= 0x477FF000u) return sign | 0x7C00;
    uint32_t e = x >> 23, m, rest, half;
    if (e < 102) return sign;
    if (e < 113) {
        uint32_t shift = 126 - e, mant = (x & 0x7FFFFFu) | 0x800000u;
        m = mant >> shift, rest = mant & ((1u << shift) - 1), half = 1u << (shift - 1);
    } else {
        m = ((e - 112) << 10) | ((x >> 13) & 0x3FF), rest = x & 0x1FFF, half = 0x1000;
    }
    if (rest > half || (rest == half && (m & 1))) ++m;
    return sign | (uint16_t)m;
}
static inline float bf16_to_float(uint16_t b) {
    uint32_t bits = (uint32_t)b << 16;
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
}
static inline uint16_t float_to_bf16(float f) {
    uint32_t x;
    std::memcpy(&x, &f, 4);
    if ((x & 0x7FFFFFFFu) > 0x7F800000u) return (uint16_t)((x >> 16) | 0x40);
    return (uint16_t)((x + 0x7FFF + ((x >> 16) & 1)) >> 16);
}
"""


def includes(tokens: set[str], track: str) -> str:
    """What a `track` submission with buffers of these types includes first (and, where 16-bit floats are raw
    bits, the helpers that convert them)."""
    compiled = tracks.get(track).compiled
    if compiled is None:
        return ""
    helpers = CPU_HELPERS if compiled.half_as_bits and tokens & {"f16", "bf16"} else ""
    return compiled.headers(tokens) + helpers
