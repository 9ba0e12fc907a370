// The one input generator of every run: a keyed PRF picks each call's seed (supervised runs), the counter-based
// generator of grader/run/inputs.py (bit for bit) fills each input from it. Host and device code alike: the
// CPU supervisor and the in-process CPU harness call it on the host, the CUDA supervisor and the in-process
// CUDA harness in a kernel (KJ_HD), so there is no second copy to drift.
//
// call seed   = SipHash-2-4(key, call index as 8 little-endian bytes), with a 128-bit secret key per case;
// tensor seed = splitmix64(call seed ^ param * PARAM_MIX)   (inputs.tensor_seed(call_seed, 0, param));
// element i   = low + scale * ((fmix32(fmix32(i ^ seed_lo) + seed_hi) >> 8) * 2^-24), float32 steps.
// The counter-based hash alone is invertible (a few values give back a tensor seed); the PRF makes that
// worthless: one call's seed says nothing about another's without the key, which never leaves the
// supervisor and the grader. Built with -ffp-contract=off (and __fadd_rn/__fmul_rn on the device): no fma,
// as in numpy and torch.
//
// Element types (the request's DTYPE, grader/run/request.py); write_element and write_poison take the type:
//   f32   the uniform float32 value above.
//   f16   that float32 value rounded to the nearest half (ties to even; subnormals kept; the spec keeps
//         |low|, |high| <= 65504, so no value overflows), by integer operations on its bits.
//   bf16  that float32 value rounded to the nearest bfloat16 (ties to even), by integer operations.
//   i32   low + (h % range) with h = fmix32(fmix32(i ^ seed_lo) + seed_hi), all 32 bits: an integer in
//         [low, high). LOW_BITS is low as a two's-complement int32, SCALE_BITS the count high - low (>= 1)
//         as a uint32; the modulo's bias is under range / 2^32, and the same on every side.
//   i8    the i32 value (the spec keeps [low, high) within [-128, 128)) in one byte.
//   e4m3  that float32 value rounded to the nearest fp8 E4M3 ("fn": bias 7, largest 448, no Inf), ties to even,
//         saturating to +-448 (as cvt.rn.satfinite does; the spec keeps |low|, |high| <= 448 anyway), subnormals
//         (units of 2^-9) kept; never NaN. By integer operations on the float32 bits.
// Poison (what an output holds before each call; grader/judge/check.py knows each): f32 0x7FC0FFEE, f16 and
// bf16 0x7FEE (quiet NaNs with a payload no arithmetic makes: the default NaNs are 0x7E00/0xFE00/0x7FFF for
// half and 0x7FC0/0xFFC0/0x7FFF for bfloat16), i32 0x7FC0FFEE (2143354862). An integer poison is a valid
// value: an unwritten int32 element is caught only where the right answer differs from 2143354862. i8 and e4m3
// are input types only (grader/problems/dtypes.py): no byte is a poison arithmetic cannot make (0x7F, written
// should a request name such an output, is int8's 127 and E4M3's one NaN).
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#if defined(__CUDACC__)
#define KJ_HD __host__ __device__
#else
#define KJ_HD
#endif

namespace kjg {

enum class Dtype : uint32_t { F32 = 0, F16 = 1, BF16 = 2, I32 = 3, I8 = 4, E4M3 = 5 };

// The request's name of a type; false for a name this build does not know.
inline bool parse_dtype(const std::string& name, Dtype* out) {
    if (name == "f32") return *out = Dtype::F32, true;
    if (name == "f16") return *out = Dtype::F16, true;
    if (name == "bf16") return *out = Dtype::BF16, true;
    if (name == "i32") return *out = Dtype::I32, true;
    if (name == "i8") return *out = Dtype::I8, true;
    if (name == "e4m3") return *out = Dtype::E4M3, true;
    return false;
}

KJ_HD inline size_t element_bytes(Dtype d) {
    if (d == Dtype::I8 || d == Dtype::E4M3) return 1;
    return d == Dtype::F16 || d == Dtype::BF16 ? 2 : 4;
}

// The NaN every float32 output holds before a call (grader/judge/check.py POISON_BITS): a payload no arithmetic
// makes, so an element that still holds it was never written. The other types' poisons: see the top.
constexpr uint32_t POISON_F32 = 0x7FC0FFEE;
constexpr uint16_t POISON_F16 = 0x7FEE;
constexpr uint16_t POISON_BF16 = 0x7FEE;
constexpr uint32_t POISON_I32 = 0x7FC0FFEE;
constexpr uint8_t POISON_BYTE = 0x7F;  // i8 and e4m3: 127 and the E4M3 NaN, values arithmetic can make

inline uint64_t rotl(uint64_t x, int b) { return (x << b) | (x >> (64 - b)); }

// SipHash-2-4 of one 64-bit message word (8 bytes, little-endian) under the key (k0, k1).
inline uint64_t siphash24(uint64_t k0, uint64_t k1, uint64_t m) {
    uint64_t v0 = k0 ^ 0x736f6d6570736575ull, v1 = k1 ^ 0x646f72616e646f6dull;
    uint64_t v2 = k0 ^ 0x6c7967656e657261ull, v3 = k1 ^ 0x7465646279746573ull;
    auto round = [&] {
        v0 += v1, v1 = rotl(v1, 13), v1 ^= v0, v0 = rotl(v0, 32);
        v2 += v3, v3 = rotl(v3, 16), v3 ^= v2;
        v0 += v3, v3 = rotl(v3, 21), v3 ^= v0;
        v2 += v1, v1 = rotl(v1, 17), v1 ^= v2, v2 = rotl(v2, 32);
    };
    const uint64_t last = uint64_t(8) << 56;  // message length 8, no tail bytes
    for (uint64_t word : {m, last}) {
        v3 ^= word;
        round(), round();
        v0 ^= word;
    }
    v2 ^= 0xff;
    round(), round(), round(), round();
    return v0 ^ v1 ^ v2 ^ v3;
}

inline uint64_t splitmix64(uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

// Seed of input `param` from a supervised call's seed.
inline uint64_t tensor_seed(uint64_t call_seed, uint64_t param) {
    return splitmix64(call_seed ^ (param * 0xC2B2AE3D27D4EB4Full));
}

// Seed of input `param` of call `call` of an in-process harness case (inputs.tensor_seed(case_seed, call, param)).
inline uint64_t tensor_seed(uint64_t case_seed, uint64_t call, uint64_t param) {
    return splitmix64(case_seed ^ (call * 0x9E3779B97F4A7C15ull) ^ (param * 0xC2B2AE3D27D4EB4Full));
}

KJ_HD inline uint32_t fmix32(uint32_t h) {
    h ^= h >> 16;
    h *= 0x85EBCA6Bu;
    h ^= h >> 13;
    h *= 0xC2B2AE35u;
    h ^= h >> 16;
    return h;
}

// Row k of the `drawn` rows an audit checks of `rows` (grader/run/row_audit.h): run k is the rows
// [k*rows/drawn, (k+1)*rows/drawn), and one of them is picked by the elements' hash of k under `seed`
// (grader/judge/row_audit.py drawn_rows picks the same). rows < 2^32.
KJ_HD inline uint64_t drawn_row(uint64_t k, uint64_t rows, uint64_t drawn, uint64_t seed) {
    const uint64_t low = k * rows / drawn, high = (k + 1) * rows / drawn;
    return low + fmix32(fmix32((uint32_t)k ^ (uint32_t)seed) + (uint32_t)(seed >> 32)) % (high - low);
}

KJ_HD inline float bits_to_float(uint32_t bits) {
#if defined(__CUDA_ARCH__)
    return __uint_as_float(bits);
#else
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
#endif
}

// Element i of a uniform float32 tensor: low + scale * u, with float32 rounding after each step and no fma.
KJ_HD inline float uniform_f32(size_t i, uint64_t seed, float low, float scale) {
    uint32_t h = fmix32(fmix32((uint32_t)i ^ (uint32_t)seed) + (uint32_t)(seed >> 32));
    float u = (float)(h >> 8) * 5.9604644775390625e-8f;  // exact: 24 bits times 2^-24
#if defined(__CUDA_ARCH__)
    return __fadd_rn(low, __fmul_rn(scale, u));
#else
    return low + scale * u;  // -ffp-contract=off
#endif
}

KJ_HD inline uint32_t float_to_bits(float f) {
#if defined(__CUDA_ARCH__)
    return __float_as_uint(f);
#else
    uint32_t bits;
    std::memcpy(&bits, &f, sizeof bits);
    return bits;
#endif
}

// float32 bits -> half bits, rounded to nearest, ties to even (NaN -> 0x7E00, overflow -> Inf).
KJ_HD inline uint16_t f32_to_f16_bits(uint32_t x) {
    const uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
    x &= 0x7FFFFFFFu;
    if (x > 0x7F800000u) return sign | 0x7E00u;
    if (x >= 0x477FF000u) return sign | 0x7C00u;  // >= 65520 rounds to Inf (and Inf itself)
    const uint32_t e = x >> 23;
    if (e < 102) return sign;  // below 2^-25: rounds to zero
    uint32_t m, rest, half;
    if (e < 113) {  // a half subnormal: units of 2^-24
        const uint32_t shift = 126 - e, mant = (x & 0x7FFFFFu) | 0x800000u;
        m = mant >> shift, rest = mant & ((1u << shift) - 1), half = 1u << (shift - 1);
    } else {
        m = ((e - 112) << 10) | ((x >> 13) & 0x3FFu), rest = x & 0x1FFFu, half = 0x1000u;
    }
    if (rest > half || (rest == half && (m & 1))) ++m;  // a carry moves into the exponent, as it should
    return sign | (uint16_t)m;
}

// float32 bits -> bfloat16 bits, rounded to nearest, ties to even (NaN stays a quiet NaN).
KJ_HD inline uint16_t f32_to_bf16_bits(uint32_t x) {
    if ((x & 0x7FFFFFFFu) > 0x7F800000u) return (uint16_t)((x >> 16) | 0x40u);
    return (uint16_t)((x + 0x7FFFu + ((x >> 16) & 1u)) >> 16);
}

// float32 bits -> fp8 E4M3 bits, rounded to nearest, ties to even, saturating to +-448 (NaN -> 0x7F).
KJ_HD inline uint8_t f32_to_e4m3_bits(uint32_t x) {
    const uint8_t sign = (uint8_t)((x >> 24) & 0x80u);
    x &= 0x7FFFFFFFu;
    if (x > 0x7F800000u) return sign | 0x7Fu;
    if (x >= 0x43E00000u) return sign | 0x7Eu;  // 448 and above (Inf too) saturate to 448
    const uint32_t e = x >> 23;
    if (e < 117) return sign;  // below 2^-10, half the smallest subnormal: rounds to zero
    uint32_t m, rest, half;
    if (e < 121) {  // an E4M3 subnormal: units of 2^-9
        const uint32_t shift = 141 - e, mant = (x & 0x7FFFFFu) | 0x800000u;
        m = mant >> shift, rest = mant & ((1u << shift) - 1), half = 1u << (shift - 1);
    } else {
        m = ((e - 120) << 3) | ((x >> 20) & 0x7u), rest = x & 0xFFFFFu, half = 0x80000u;
    }
    if (rest > half || (rest == half && (m & 1))) ++m;  // a carry moves into the exponent; at most 0x7E
    return sign | (uint8_t)m;
}

// Element i of an int32 input: low + (h % range), wrapping as two's complement.
KJ_HD inline int32_t uniform_i32(size_t i, uint64_t seed, uint32_t low_bits, uint32_t range) {
    uint32_t h = fmix32(fmix32((uint32_t)i ^ (uint32_t)seed) + (uint32_t)(seed >> 32));
    return (int32_t)(low_bits + h % (range ? range : 1u));
}

// The bits of element i of an input of type `d` (its element_bytes(d) low bytes), from the tensor seed and the
// input's low end and range (bits).
KJ_HD inline uint32_t element_bits(Dtype d, size_t i, uint64_t seed, uint32_t low_bits, uint32_t scale_bits) {
    if (d == Dtype::I32) return (uint32_t)uniform_i32(i, seed, low_bits, scale_bits);
    if (d == Dtype::I8) return (uint8_t)(int8_t)uniform_i32(i, seed, low_bits, scale_bits);
    const uint32_t value = float_to_bits(uniform_f32(i, seed, bits_to_float(low_bits), bits_to_float(scale_bits)));
    if (d == Dtype::F16) return f32_to_f16_bits(value);
    if (d == Dtype::BF16) return f32_to_bf16_bits(value);
    if (d == Dtype::E4M3) return f32_to_e4m3_bits(value);
    return value;
}

// The bits element i of a buffer of type `d` at `base` holds.
KJ_HD inline uint32_t stored_bits(Dtype d, const void* base, size_t i) {
    if (element_bytes(d) == 1) return static_cast<const uint8_t*>(base)[i];
    if (element_bytes(d) == 2) return static_cast<const uint16_t*>(base)[i];
    return static_cast<const uint32_t*>(base)[i];
}

// Element i of an input of type `d` at `base` (element_bits).
KJ_HD inline void write_element(Dtype d, void* base, size_t i, uint64_t seed, uint32_t low_bits, uint32_t scale_bits) {
    const uint32_t bits = element_bits(d, i, seed, low_bits, scale_bits);
    if (element_bytes(d) == 1)
        static_cast<uint8_t*>(base)[i] = (uint8_t)bits;
    else if (element_bytes(d) == 2)
        static_cast<uint16_t*>(base)[i] = (uint16_t)bits;
    else
        static_cast<uint32_t*>(base)[i] = bits;
}

// Element i of an output of type `d` at `base`, set to the poison the checker recognises as never written.
KJ_HD inline void write_poison(Dtype d, void* base, size_t i) {
    if (d == Dtype::F16)
        static_cast<uint16_t*>(base)[i] = POISON_F16;
    else if (d == Dtype::BF16)
        static_cast<uint16_t*>(base)[i] = POISON_BF16;
    else if (d == Dtype::I32)
        static_cast<uint32_t*>(base)[i] = POISON_I32;
    else if (element_bytes(d) == 1)  // no spec has such an output; a request naming one stays in its bytes
        static_cast<uint8_t*>(base)[i] = POISON_BYTE;
    else
        static_cast<uint32_t*>(base)[i] = POISON_F32;
}

// What element i of an output of type `d` holds: 0 a number, 1 the poison (never written), 2 a NaN or an
// infinity the program wrote. Every integer is a number (an unwritten one shows where its value is compared).
KJ_HD inline int element_state(Dtype d, const void* base, size_t i) {
    if (d == Dtype::F32) {
        const uint32_t v = static_cast<const uint32_t*>(base)[i];
        return v == POISON_F32 ? 1 : (v & 0x7F800000u) == 0x7F800000u ? 2 : 0;
    }
    if (d == Dtype::F16 || d == Dtype::BF16) {
        const uint16_t v = static_cast<const uint16_t*>(base)[i];
        const uint16_t exponent = d == Dtype::F16 ? 0x7C00 : 0x7F80;
        return v == (d == Dtype::F16 ? POISON_F16 : POISON_BF16) ? 1 : (v & exponent) == exponent ? 2 : 0;
    }
    return 0;
}

// A whole input on the host.
inline void fill(Dtype d, void* base, size_t n, uint64_t seed, uint32_t low_bits, uint32_t scale_bits) {
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; ++i) write_element(d, base, i, seed, low_bits, scale_bits);
}

// A whole output on the host.
inline void poison(Dtype d, void* base, size_t n) {
    for (size_t i = 0; i < n; ++i) write_poison(d, base, i);
}

}  // namespace kjg
