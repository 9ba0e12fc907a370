// CPU rung 1 -- naive: a float32 dot product per element of C, halves converted as they are read.
//
// The halves arrive as their raw bits (uint16_t); half_to_float widens one exactly. Every product of two
// halves is exact in float32 and the sum runs in float32, as the problem's accumulation says. Slow (the
// j loop strides through B by N and converts each value K times): the correctness baseline.
#include <cstddef>
#include <cstdint>
#include <cstring>

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

void solve(const uint16_t* A, const uint16_t* B, float* C, int M, int N, int K) {
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) {
            float sum = 0.0f;
            for (int k = 0; k < K; ++k) sum += half_to_float(A[(size_t)i * K + k]) * half_to_float(B[(size_t)k * N + j]);
            C[(size_t)i * N + j] = sum;
        }
}
