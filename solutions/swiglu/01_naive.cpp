// CPU rung 1 -- naive: two float32 dot products per element of Y (the gate's and the up projection's), then
// silu(g) * u.
//
// The halves arrive as their raw bits (uint16_t); half_to_float widens one exactly. Every product of two
// halves is exact in float32 and the sums run in float32, as the problem's accumulation says. X's row and
// both weight rows are read along k (contiguous), but each half is converted K times over: the correctness
// baseline.
#include <cmath>
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

void solve(const uint16_t* X, const uint16_t* W_gate, const uint16_t* W_up, float* Y, int M, int N, int K) {
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) {
            float g = 0.0f, u = 0.0f;
            for (int k = 0; k < K; ++k) {
                const float x = half_to_float(X[(size_t)i * K + k]);
                g += x * half_to_float(W_gate[(size_t)j * K + k]);
                u += x * half_to_float(W_up[(size_t)j * K + k]);
            }
            Y[(size_t)i * N + j] = g / (1.0f + std::exp(-g)) * u;
        }
}
