// CPU rung 1 -- naive: a float32 dot product per element of C, bfloat16 widened as it is read, the sum rounded
// once to bfloat16.
//
// The bfloat16 values arrive as their raw bits (uint16_t): a bfloat16 is the top half of a float32, so widening
// is a shift. Every product of two bfloat16 values is exact in float32 and the sum runs in float32, as the
// problem's accumulation says; float_to_bf16 rounds it to nearest, ties to even. Slow (the j loop strides
// through B by N): the correctness baseline.
#include <cstddef>
#include <cstdint>
#include <cstring>

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

void solve(const uint16_t* A, const uint16_t* B, uint16_t* C, int M, int N, int K) {
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) {
            float sum = 0.0f;
            for (int k = 0; k < K; ++k) sum += bf16_to_float(A[(size_t)i * K + k]) * bf16_to_float(B[(size_t)k * N + j]);
            C[(size_t)i * N + j] = float_to_bf16(sum);
        }
}
