// CPU rung 1 -- naive: for each token, read its expert and compute a float32 dot product per output unit.
//
// The halves arrive as their raw bits (uint16_t); half_to_float widens one exactly. Every product of two
// halves is exact in float32 and the sums run in float32, as the problem's accumulation says. Consecutive
// tokens use different experts, so each token walks a different N x K matrix and nothing stays in cache:
// the correctness baseline.
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

void solve(const uint16_t* X, const uint16_t* W, const int* expert, float* Y, int T, int E, int N, int K) {
    (void)E;  // every expert[t] is in [0, E)
    for (int t = 0; t < T; ++t) {
        const uint16_t* w = W + (size_t)expert[t] * N * K;
        for (int n = 0; n < N; ++n) {
            float sum = 0.0f;
            for (int k = 0; k < K; ++k) sum += half_to_float(X[(size_t)t * K + k]) * half_to_float(w[(size_t)n * K + k]);
            Y[(size_t)t * N + n] = sum;
        }
    }
}
