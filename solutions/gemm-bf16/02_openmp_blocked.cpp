// CPU rung 2 -- widen once, then the float32 matmul's i-k-j blocking, OpenMP; a float32 tile of C rounded to
// bfloat16 at the end.
//
// Over rung 1: A and B are widened to float32 once (a shift: exact), so the inner loop is c[j] += a * B[k][j]
// over contiguous j, which the compiler turns into SIMD FMAs. K and N are blocked so a panel of B stays in L2
// while a block of rows reuses it; threads own (row block, column block) tiles of C, each summed in a float32
// scratch tile of its own and rounded to bfloat16 once, when all of K is in.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

constexpr int ROW_BLOCK = 32;
constexpr int K_BLOCK = 128;
constexpr int N_BLOCK = 512;

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

static std::vector<float> widen(const uint16_t* x, size_t n) {
    std::vector<float> out(n);
    #pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; ++i) out[i] = bf16_to_float(x[i]);
    return out;
}

void solve(const uint16_t* A16, const uint16_t* B16, uint16_t* __restrict__ C, int M, int N, int K) {
    const std::vector<float> a32 = widen(A16, (size_t)M * K), b32 = widen(B16, (size_t)K * N);
    const float* __restrict__ A = a32.data();
    const float* __restrict__ B = b32.data();
    const int row_blocks = (M + ROW_BLOCK - 1) / ROW_BLOCK;
    const int col_blocks = (N + N_BLOCK - 1) / N_BLOCK;

    #pragma omp parallel for collapse(2) schedule(dynamic)
    for (int rb = 0; rb < row_blocks; ++rb)
        for (int cb = 0; cb < col_blocks; ++cb) {
            const int i0 = rb * ROW_BLOCK, i1 = std::min(M, i0 + ROW_BLOCK);
            const int j0 = cb * N_BLOCK, j1 = std::min(N, j0 + N_BLOCK), width = j1 - j0;
            std::vector<float> tile((size_t)(i1 - i0) * width, 0.0f);
            for (int k0 = 0; k0 < K; k0 += K_BLOCK) {
                const int k1 = std::min(K, k0 + K_BLOCK);
                for (int i = i0; i < i1; ++i) {
                    float* __restrict__ c = tile.data() + (size_t)(i - i0) * width;
                    for (int k = k0; k < k1; ++k) {
                        const float a = A[(size_t)i * K + k];
                        const float* __restrict__ b = B + (size_t)k * N + j0;
                        for (int j = 0; j < width; ++j) c[j] += a * b[j];
                    }
                }
            }
            for (int i = i0; i < i1; ++i)
                for (int j = 0; j < width; ++j) C[(size_t)i * N + j0 + j] = float_to_bf16(tile[(size_t)(i - i0) * width + j]);
        }
}
