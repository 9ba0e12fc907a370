// CPU rung 2 -- flash attention on the CPU: OpenMP + online softmax.
//
// Over rung 1: threads take blocks of query rows, and each block walks the
// keys in KV_BLOCK chunks whose K and V rows stay in L2 while every query of
// the block uses them. Per chunk, each row's running max, running sum and
// unnormalised output accumulator are rescaled by exp(old max - new max) and
// then extended, so no score buffer longer than one chunk (and never the
// M x N matrix) exists; the output is divided by the sum once at the end.

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

constexpr int Q_BLOCK = 16;   // query rows per block (reuse of each K/V chunk)
constexpr int KV_BLOCK = 64;  // keys per chunk (K and V chunks: 2 x 256 KB at d = 1024)

void solve(const float* __restrict__ Q, const float* __restrict__ K, const float* __restrict__ V,
           float* __restrict__ output, int M, int N, int d) {
    const float scale = 1.0f / std::sqrt((float)d);
    // Shrink the query block when M is small so every thread still gets work.
    const int threads = omp_get_max_threads();
    const int rows_per_block = std::clamp((M + threads - 1) / threads, 1, Q_BLOCK);
    const int row_blocks = (M + rows_per_block - 1) / rows_per_block;

    #pragma omp parallel
    {
        std::vector<float> scores((size_t)Q_BLOCK * KV_BLOCK);
        std::vector<float> acc((size_t)Q_BLOCK * d);  // unnormalised output rows
        float row_max[Q_BLOCK], row_sum[Q_BLOCK];

        #pragma omp for schedule(dynamic)
        for (int rb = 0; rb < row_blocks; ++rb) {
            const int i0 = rb * rows_per_block, rows = std::min(M - i0, rows_per_block);
            std::fill(acc.begin(), acc.end(), 0.0f);
            std::fill(row_max, row_max + rows, -INFINITY);
            std::fill(row_sum, row_sum + rows, 0.0f);

            for (int n0 = 0; n0 < N; n0 += KV_BLOCK) {
                const int keys = std::min(N - n0, KV_BLOCK);

                for (int r = 0; r < rows; ++r) {
                    const float* q = Q + (size_t)(i0 + r) * d;
                    for (int n = 0; n < keys; ++n) {
                        const float* k = K + (size_t)(n0 + n) * d;
                        float dot = 0.0f;
                        #pragma omp simd reduction(+ : dot)
                        for (int c = 0; c < d; ++c) dot += q[c] * k[c];
                        scores[(size_t)r * KV_BLOCK + n] = dot * scale;
                    }
                }

                for (int r = 0; r < rows; ++r) {
                    const float* s = scores.data() + (size_t)r * KV_BLOCK;
                    float* o = acc.data() + (size_t)r * d;
                    float new_max = row_max[r];
                    for (int n = 0; n < keys; ++n) new_max = std::max(new_max, s[n]);
                    const float correction = std::exp(row_max[r] - new_max);  // 0 on the first chunk
                    row_max[r] = new_max;

                    for (int c = 0; c < d; ++c) o[c] *= correction;
                    float chunk_sum = 0.0f;
                    for (int n = 0; n < keys; ++n) {
                        const float p = std::exp(s[n] - new_max);
                        chunk_sum += p;
                        const float* v = V + (size_t)(n0 + n) * d;
                        for (int c = 0; c < d; ++c) o[c] += p * v[c];
                    }
                    row_sum[r] = row_sum[r] * correction + chunk_sum;
                }
            }

            for (int r = 0; r < rows; ++r) {
                const float inv_sum = 1.0f / row_sum[r];
                const float* o = acc.data() + (size_t)r * d;
                float* out = output + (size_t)(i0 + r) * d;
                for (int c = 0; c < d; ++c) out[c] = o[c] * inv_sum;
            }
        }
    }
}
