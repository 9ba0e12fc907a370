// CPU rung 2 -- widen once through a 256-entry table, then blocked float32 dot products of contiguous rows,
// OpenMP.
//
// Over rung 1: an e4m3 value has only 256 bit patterns, so a table of their float32 values widens A and B once
// (exact). B is N x K, so both operands are K-contiguous and every element of C is a dot product of two
// contiguous float rows: a SIMD reduction (the sum's order changes, which float32 sums in any order allow).
// Threads own (row block, column block) tiles so a block of B's rows stays in L2 while a block of A's rows
// walks it; each sum is scaled and rounded to bfloat16 once.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

constexpr int ROW_BLOCK = 16;
constexpr int COL_BLOCK = 64;

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

static std::vector<float> widen(const uint8_t* x, size_t n, const float* table) {
    std::vector<float> out(n);
    #pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; ++i) out[i] = table[x[i]];
    return out;
}

static inline float dot(const float* __restrict__ a, const float* __restrict__ b, int K) {
    float sum = 0.0f;
    #pragma omp simd reduction(+ : sum)
    for (int k = 0; k < K; ++k) sum += a[k] * b[k];
    return sum;
}

void solve(const uint8_t* A8, const uint8_t* B8, const float* scale_a, const float* scale_b, uint16_t* C, int M, int N,
           int K) {
    float table[256];
    for (int b = 0; b < 256; ++b) table[b] = e4m3_to_float((uint8_t)b);
    const std::vector<float> A = widen(A8, (size_t)M * K, table), B = widen(B8, (size_t)N * K, table);
    const float scale = scale_a[0] * scale_b[0];
    const int row_blocks = (M + ROW_BLOCK - 1) / ROW_BLOCK, col_blocks = (N + COL_BLOCK - 1) / COL_BLOCK;
    #pragma omp parallel for collapse(2) schedule(dynamic)
    for (int rb = 0; rb < row_blocks; ++rb)
        for (int cb = 0; cb < col_blocks; ++cb) {
            const int i1 = std::min(M, (rb + 1) * ROW_BLOCK), j1 = std::min(N, (cb + 1) * COL_BLOCK);
            for (int i = rb * ROW_BLOCK; i < i1; ++i)
                for (int j = cb * COL_BLOCK; j < j1; ++j)
                    C[(size_t)i * N + j] = float_to_bf16(scale * dot(A.data() + (size_t)i * K, B.data() + (size_t)j * K, K));
        }
}
