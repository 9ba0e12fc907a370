// CPU rung 2 -- widen once, then the float32 matmul's i-k-j blocking, OpenMP.
//
// Over rung 1: A and B are converted to float32 once (exact: a half fits in a float), so the inner loop is
// C[i][j] += a * B[k][j] over contiguous j, which the compiler turns into SIMD FMAs. K and N are blocked so a
// panel of B stays in L2 while a block of rows reuses it; threads own (row block, column block) tiles of C.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

constexpr int ROW_BLOCK = 32;
constexpr int K_BLOCK = 128;
constexpr int N_BLOCK = 512;

static inline float half_to_float(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1F, mant = h & 0x3FF, bits;
    if (exp == 0x1F) bits = sign | 0x7F800000u | (mant << 13);
    else if (exp) bits = sign | ((exp + 112) << 23) | (mant << 13);
    else if (!mant) bits = sign;
    else {
        exp = 113;
        while (!(mant & 0x400)) mant <<= 1, --exp;
        bits = sign | (exp << 23) | ((mant & 0x3FF) << 13);
    }
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
}

static std::vector<float> widen(const uint16_t* x, size_t n) {
    std::vector<float> out(n);
    #pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; ++i) out[i] = half_to_float(x[i]);
    return out;
}

void solve(const uint16_t* A16, const uint16_t* B16, float* __restrict__ C, int M, int N, int K) {
    const std::vector<float> a32 = widen(A16, (size_t)M * K), b32 = widen(B16, (size_t)K * N);
    const float* __restrict__ A = a32.data();
    const float* __restrict__ B = b32.data();
    const int row_blocks = (M + ROW_BLOCK - 1) / ROW_BLOCK;
    const int col_blocks = (N + N_BLOCK - 1) / N_BLOCK;

    #pragma omp parallel for collapse(2) schedule(dynamic)
    for (int rb = 0; rb < row_blocks; ++rb)
        for (int cb = 0; cb < col_blocks; ++cb) {
            const int i0 = rb * ROW_BLOCK, i1 = std::min(M, i0 + ROW_BLOCK);
            const int j0 = cb * N_BLOCK, j1 = std::min(N, j0 + N_BLOCK);
            for (int i = i0; i < i1; ++i) std::fill(C + (size_t)i * N + j0, C + (size_t)i * N + j1, 0.0f);
            for (int k0 = 0; k0 < K; k0 += K_BLOCK) {
                const int k1 = std::min(K, k0 + K_BLOCK);
                for (int i = i0; i < i1; ++i) {
                    float* c = C + (size_t)i * N;
                    for (int k = k0; k < k1; ++k) {
                        const float a = A[(size_t)i * K + k];
                        const float* b = B + (size_t)k * N;
                        for (int j = j0; j < j1; ++j) c[j] += a * b[j];
                    }
                }
            }
        }
}
