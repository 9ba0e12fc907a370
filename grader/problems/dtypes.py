"""Element types of a problem's buffers: the spec's C types, the request's tokens, and each track's C type.

A pointer parameter's `type` in problem.yaml is written as the CUDA track declares it:

    spec type                          token  element                          CPU track's C type
    const float*        / float*       f32    IEEE float32                     the same
    const __half*       / __half*      f16    IEEE binary16 (cuda_fp16.h)      const uint16_t* / uint16_t*
    const __nv_bfloat16* / __nv_bfloat16*  bf16  bfloat16 (cuda_bf16.h)        const uint16_t* / uint16_t*
    const int*          / int*         i32    two's-complement int32           the same
    const int8_t*                      i8     two's-complement int8            the same
    const __nv_fp8_e4m3*               e4m3   fp8 E4M3 (cuda_fp8.h; OCP "fn":   const uint8_t*
                                              no Inf, NaN 0x7F/0xFF, max 448)

`const` marks an input, its absence an output. int8 and fp8 are input types only: no bit pattern of theirs is a
poison that arithmetic cannot make (fp8 E4M3 has one NaN; every int8 is a value), so an unwritten output of
theirs could not be told from a written one. On the Python tracks each buffer is an array over the same
device memory: a PyTorch tensor of the element's dtype (triton), or a CuPy array (cupy; CuPy has no bfloat16,
so a bfloat16 buffer is its raw bits as uint16 there, and an fp8 buffer as uint8). On the CPU track both 16-bit
types are their raw bits in a uint16_t, fp8 in a uint8_t (g++ 12 has no bfloat16 type; `_Float16`, which g++ 12 and later accept on x86-64, may be used on
them after a memcpy): the starter file carries the conversion helpers (`grader init`). A problem with a 16-bit or 8-bit buffer states its accumulation
(`accumulation:` in problem.yaml), e.g. "half products, float32 sums".
"""

from __future__ import annotations

from grader import tracks

FLOAT16_MAX = 65504.0  # the largest finite half: f16 inputs must stay within it (no value rounds to Inf)
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
INT8_MIN, INT8_MAX = -128, 127
E4M3_MAX = 448.0  # the largest finite fp8 E4M3: the generator saturates to it

# spec element name -> request token
ELEMENTS = {
    "float": "f32",
    "__half": "f16",
    "__nv_bfloat16": "bf16",
    "int": "i32",
    "int8_t": "i8",
    "__nv_fp8_e4m3": "e4m3",
}
INPUT_ONLY = ("i8", "e4m3")  # see the top: no poison
POINTER_TYPES = tuple(
    f"{const}{name}*" for name, tok in ELEMENTS.items() for const in ("const ", "") if const or tok not in INPUT_ONLY
)
LOW_PRECISION = ("f16", "bf16", "e4m3", "i8")  # buffers whose problem must state its accumulation
CPU_NAMES = {"__half": "uint16_t", "__nv_bfloat16": "uint16_t", "__nv_fp8_e4m3": "uint8_t"}


def element(type_: str) -> str:
    """'const __half*' -> '__half'."""
    return type_.removeprefix("const ").removesuffix("*").strip()


def token(type_: str) -> str:
    """The request's token (f32, f16, bf16, i32, i8, e4m3) of a pointer type."""
    return ELEMENTS[element(type_)]


def is_input(type_: str) -> bool:
    return type_.startswith("const ")


def c_type(type_: str, track: str) -> str:
    """The C type a `track` submission declares for a spec type ('const __half*' -> 'const uint16_t*' on cpu)."""
    compiled = tracks.get(track).compiled
    if compiled is None or not compiled.raw_float_bits or not type_.endswith("*"):
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
    elif token_ == "i8":
        if low != int(low) or high != int(high):
            raise ValueError(f"int8 bounds must be whole numbers (low {low:g}, high {high:g})")
        if low < INT8_MIN or high > INT8_MAX + 1:
            raise ValueError(f"int8 bounds [{low:g}, {high:g}) leave int8 ([-128, 128))")
    elif token_ == "f16" and max(abs(low), abs(high)) > FLOAT16_MAX:
        raise ValueError(f"half bounds [{low:g}, {high:g}) exceed {FLOAT16_MAX:g}, the largest half")
    elif token_ == "e4m3" and max(abs(low), abs(high)) > E4M3_MAX:
        raise ValueError(f"fp8 e4m3 bounds [{low:g}, {high:g}) exceed {E4M3_MAX:g}, the largest e4m3")


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

CPU_FP8_HELPERS = """\
// fp8 E4M3 ("fn": bias 7, no Inf, NaN 0x7F/0xFF, largest 448) is its raw bits on the CPU track.
static inline float e4m3_to_float(uint8_t b) {
    uint32_t sign = (uint32_t)(b & 0x80) << 24, exp = (b >> 3) & 0xF, mant = b & 0x7, bits;
    if (exp == 0xF && mant == 0x7) bits = sign | 0x7FC00000u;  // NaN
    else if (exp) bits = sign | ((exp + 120) << 23) | (mant << 20);
    else if (!mant) bits = sign;
    else {  // subnormal: mant * 2^-9, normalised
        exp = 121;
        while (!(mant & 0x8)) mant <<= 1, --exp;
        bits = sign | (exp << 23) | ((mant & 0x7) << 20);
    }
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
}
// Round to nearest, ties to even, saturating to +-448 (as cvt.rn.satfinite.e4m3x2.f32 does); NaN -> 0x7F.
static inline uint8_t float_to_e4m3(float f) {
    uint32_t x;
    std::memcpy(&x, &f, 4);
    uint8_t sign = (x >> 24) & 0x80;
    x &= 0x7FFFFFFFu;
    if (x > 0x7F800000u) return sign | 0x7F;
    if (x >= 0x43E00000u) return sign | 0x7E;
    uint32_t e = x >> 23, m, rest, half;
    if (e < 117) return sign;
    if (e < 121) {
        uint32_t shift = 141 - e, mant = (x & 0x7FFFFFu) | 0x800000u;
        m = mant >> shift, rest = mant & ((1u << shift) - 1), half = 1u << (shift - 1);
    } else {
        m = ((e - 120) << 3) | ((x >> 20) & 0x7), rest = x & 0xFFFFF, half = 0x80000;
    }
    if (rest > half || (rest == half && (m & 1))) ++m;
    return sign | (uint8_t)m;
}
"""


def includes(tokens: set[str], track: str) -> str:
    """What a `track` submission with buffers of these types includes first (and, where low-precision floats
    are raw bits, the helpers that convert them)."""
    compiled = tracks.get(track).compiled
    if compiled is None:
        return ""
    helpers = ""
    if compiled.raw_float_bits:
        helpers = (CPU_HELPERS if tokens & {"f16", "bf16"} else "") + (CPU_FP8_HELPERS if "e4m3" in tokens else "")
    return compiled.headers(tokens) + helpers
