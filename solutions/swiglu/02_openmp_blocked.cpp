// CPU rung 2 -- convert once, then OpenMP over tiles of tokens x units, each tile's weight rows kept in cache.
//
// Over rung 1: X, W_gate and W_up are widened to float32 once (exact), so the inner loops are plain float
// dot products along k that the compiler vectorises (omp simd, 8 partial sums per lane). Threads take tiles
// of TILE_M tokens x TILE_N units: the tile's 2 x TILE_N weight rows (2 x 64 x K floats, 512 KiB at
// K = 1024) stay in L2 while every token of the tile reuses them, and each token's row is read once per
// tile. The gate and up sums of an element are computed side by side and the epilogue silu(g) * u is applied
// to them in registers: G and U are never stored.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

constexpr int TILE_M = 16, TILE_N = 64;

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

static std::vector<float> widen(const uint16_t* h, size_t n) {
    std::vector<float> out(n);
    #pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; ++i) out[i] = half_to_float(h[i]);
    return out;
}

void solve(const uint16_t* X, const uint16_t* W_gate, const uint16_t* W_up, float* Y, int M, int N, int K) {
    const std::vector<float> x = widen(X, (size_t)M * K), wg = widen(W_gate, (size_t)N * K),
                             wu = widen(W_up, (size_t)N * K);
    const int tiles_m = (M + TILE_M - 1) / TILE_M, tiles_n = (N + TILE_N - 1) / TILE_N;

    #pragma omp parallel for collapse(2) schedule(dynamic)
    for (int tn = 0; tn < tiles_n; ++tn)
        for (int tm = 0; tm < tiles_m; ++tm) {
            const int i_end = std::min(M, (tm + 1) * TILE_M), j_end = std::min(N, (tn + 1) * TILE_N);
            for (int i = tm * TILE_M; i < i_end; ++i) {
                const float* xi = x.data() + (size_t)i * K;
                for (int j = tn * TILE_N; j < j_end; ++j) {
                    const float* g_row = wg.data() + (size_t)j * K;
                    const float* u_row = wu.data() + (size_t)j * K;
                    float g = 0.0f, u = 0.0f;
                    #pragma omp simd reduction(+ : g, u)
                    for (int k = 0; k < K; ++k) {
                        g += xi[k] * g_row[k];
                        u += xi[k] * u_row[k];
                    }
                    Y[(size_t)i * N + j] = g / (1.0f + std::exp(-g)) * u;
                }
            }
        }
}
