// CPU rung 1 -- naive: a float32 dot product per element of C, e4m3 widened as it is read, scaled and rounded
// once to bfloat16.
//
// The fp8 values arrive as their raw bits (uint8_t); e4m3_to_float (the starter's helper) widens one exactly.
// Every product of two e4m3 values has at most 8 significant bits, exact in float32, and the sum runs in
// float32, as the problem's accumulation says. B is N x K, so element (i, j) is the dot product of row i of A
// and row j of B. Slow (each value is converted N or M times): the correctness baseline.
#include <cstddef>
#include <cstdint>
#include <cstring>

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
static inline uint16_t float_to_bf16(float f) {
    uint32_t x;
    std::memcpy(&x, &f, 4);
    if ((x & 0x7FFFFFFFu) > 0x7F800000u) return (uint16_t)((x >> 16) | 0x40);
    return (uint16_t)((x + 0x7FFF + ((x >> 16) & 1)) >> 16);
}

void solve(const uint8_t* A, const uint8_t* B, const float* scale_a, const float* scale_b, uint16_t* C, int M, int N,
           int K) {
    const float scale = scale_a[0] * scale_b[0];
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) {
            float sum = 0.0f;
            for (int k = 0; k < K; ++k) sum += e4m3_to_float(A[(size_t)i * K + k]) * e4m3_to_float(B[(size_t)j * K + k]);
            C[(size_t)i * N + j] = float_to_bf16(scale * sum);
        }
}
