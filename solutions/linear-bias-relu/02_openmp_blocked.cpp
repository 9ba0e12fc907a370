// CPU rung 2 -- blocked dot products, 4x4 register tiles, OpenMP; bias and ReLU fused.
//
// Over rung 1: Y = X W^T is a grid of dot products of contiguous rows, so the
// inner loop is a SIMD dot product over k. Each step computes a 4x4 tile of Y
// at once (16 accumulators from 4 rows of X and 4 rows of W), so every loaded
// vector of X or W feeds four FMAs instead of one. Threads share out (row
// block, column block) tiles of Y; within a tile, a block of W rows (COL_BLOCK
// x K floats) stays in L2 while the rows of X pass by. The bias and the ReLU are
// applied to the accumulators before the one store of each element.

#include <algorithm>
#include <cstddef>

constexpr int ROW_BLOCK = 64;  // rows of X per task
constexpr int COL_BLOCK = 64;  // rows of W per task (64 x K floats: 256 KB at K = 1024, fits L2)

// Y[i0..i0+RI) x [j0..j0+RJ): RI x RJ dot products in one pass over k.
template <int RI, int RJ>
static inline void tile(const float* __restrict__ X, const float* __restrict__ W, const float* __restrict__ b,
                        float* __restrict__ Y, int N, int K, int i0, int j0) {
    float acc[RI][RJ] = {};
    const float* x[RI];
    const float* w[RJ];
    for (int r = 0; r < RI; ++r) x[r] = X + (size_t)(i0 + r) * K;
    for (int c = 0; c < RJ; ++c) w[c] = W + (size_t)(j0 + c) * K;
    for (int r = 0; r < RI; ++r)
        for (int c = 0; c < RJ; ++c) {
            float s = 0.0f;
            const float* xr = x[r];
            const float* wc = w[c];
            #pragma omp simd reduction(+ : s)
            for (int k = 0; k < K; ++k) s += xr[k] * wc[k];
            acc[r][c] = s;
        }
    for (int r = 0; r < RI; ++r)
        for (int c = 0; c < RJ; ++c) Y[(size_t)(i0 + r) * N + j0 + c] = std::max(acc[r][c] + b[j0 + c], 0.0f);
}

// A 4x4 tile as 16 interleaved SIMD dot products: each X and W vector loaded once feeds four FMAs.
static inline void tile4x4(const float* __restrict__ X, const float* __restrict__ W, const float* __restrict__ b,
                           float* __restrict__ Y, int N, int K, int i0, int j0) {
    constexpr int V = 8;  // one AVX register of floats
    float acc[4][4][V] = {};
    const float* x0 = X + (size_t)i0 * K;
    const float* w0 = W + (size_t)j0 * K;
    int k = 0;
    for (; k + V <= K; k += V)
        for (int r = 0; r < 4; ++r)
            for (int c = 0; c < 4; ++c) {
                const float* xr = x0 + (size_t)r * K + k;
                const float* wc = w0 + (size_t)c * K + k;
                #pragma omp simd
                for (int v = 0; v < V; ++v) acc[r][c][v] += xr[v] * wc[v];
            }
    for (int r = 0; r < 4; ++r)
        for (int c = 0; c < 4; ++c) {
            float s = 0.0f;
            for (int v = 0; v < V; ++v) s += acc[r][c][v];
            for (int kk = k; kk < K; ++kk) s += x0[(size_t)r * K + kk] * w0[(size_t)c * K + kk];
            Y[(size_t)(i0 + r) * N + j0 + c] = std::max(s + b[j0 + c], 0.0f);
        }
}

void solve(const float* __restrict__ X, const float* __restrict__ W, const float* __restrict__ b,
           float* __restrict__ Y, int M, int N, int K) {
    const int row_blocks = (M + ROW_BLOCK - 1) / ROW_BLOCK;
    const int col_blocks = (N + COL_BLOCK - 1) / COL_BLOCK;

    #pragma omp parallel for collapse(2) schedule(dynamic)
    for (int rb = 0; rb < row_blocks; ++rb)
        for (int cb = 0; cb < col_blocks; ++cb) {
            const int i_end = std::min(M, (rb + 1) * ROW_BLOCK);
            const int j_end = std::min(N, (cb + 1) * COL_BLOCK);
            for (int i = rb * ROW_BLOCK; i < i_end; i += 4) {
                const int rows = std::min(4, i_end - i);
                for (int j = cb * COL_BLOCK; j < j_end; j += 4) {
                    const int cols = std::min(4, j_end - j);
                    if (rows == 4 && cols == 4)
                        tile4x4(X, W, b, Y, N, K, i, j);
                    else
                        for (int r = 0; r < rows; ++r)
                            for (int c = 0; c < cols; ++c) tile<1, 1>(X, W, b, Y, N, K, i + r, j + c);
                }
            }
        }
}
