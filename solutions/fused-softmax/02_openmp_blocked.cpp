// CPU rung 2 -- blocked matmul of a row block, then its softmax while hot.
//
// Over rung 1: each thread takes a block of rows and computes their logits
// with the i-k-j, K- and N-blocked matmul of the matmul ladder (SIMD inner
// loop over contiguous j, B panel reused from L2 by every row of the block).
// The block's rows (at most ROW_BLOCK x N floats, 512 KB at N = 8192) are
// still in L2 when the same thread softmaxes them in place, so the logits
// never make a round trip through main memory.

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstddef>

constexpr int ROW_BLOCK = 16;  // rows per block (their logits must fit in L2)
constexpr int K_BLOCK = 128;   // depth of the B panel
constexpr int N_BLOCK = 512;   // width of the B panel; the panel is 256 KB, fits L2

// Softmax of one row in place: max, then exp and sum, then scale.
static void softmax_row_inplace(float* y, int n) {
    float row_max = -INFINITY;
    #pragma omp simd reduction(max : row_max)
    for (int j = 0; j < n; ++j) row_max = std::max(row_max, y[j]);
    float sum = 0.0f;
    for (int j = 0; j < n; ++j) {
        y[j] = std::exp(y[j] - row_max);
        sum += y[j];
    }
    const float inv_sum = 1.0f / sum;
    for (int j = 0; j < n; ++j) y[j] *= inv_sum;
}

void solve(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ output,
           int M, int N, int K) {
    // Shrink the row block when M is small so every thread still gets work.
    const int threads = omp_get_max_threads();
    const int rows_per_block = std::clamp((M + threads - 1) / threads, 1, ROW_BLOCK);
    const int row_blocks = (M + rows_per_block - 1) / rows_per_block;

    #pragma omp parallel for schedule(dynamic)
    for (int rb = 0; rb < row_blocks; ++rb) {
        const int i0 = rb * rows_per_block, i1 = std::min(M, i0 + rows_per_block);

        for (int j0 = 0; j0 < N; j0 += N_BLOCK) {
            const int j1 = std::min(N, j0 + N_BLOCK);
            for (int i = i0; i < i1; ++i)
                std::fill(output + (size_t)i * N + j0, output + (size_t)i * N + j1, 0.0f);
            for (int k0 = 0; k0 < K; k0 += K_BLOCK) {
                const int k1 = std::min(K, k0 + K_BLOCK);
                for (int i = i0; i < i1; ++i) {
                    float* c = output + (size_t)i * N;
                    for (int k = k0; k < k1; ++k) {
                        const float a = A[(size_t)i * K + k];
                        const float* b = B + (size_t)k * N;
                        for (int j = j0; j < j1; ++j) c[j] += a * b[j];
                    }
                }
            }
        }

        for (int i = i0; i < i1; ++i) softmax_row_inplace(output + (size_t)i * N, N);
    }
}
