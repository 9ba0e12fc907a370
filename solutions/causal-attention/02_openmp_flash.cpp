// CPU rung 2 -- causal flash attention on the CPU: OpenMP, online softmax, stop at the diagonal.
//
// Over rung 1: threads take (head, block of query rows) tasks, heaviest first
// (the last rows of a head see the most keys). Each block walks the keys in
// KV_BLOCK chunks whose K and V rows stay in cache while every query of the
// block uses them, and stops at the chunk that holds its last row: the keys
// above the diagonal are never read. Per chunk, each row's running max, running
// sum and unnormalised output are rescaled by exp(old max - new max) and then
// extended with the keys it may see (j <= i); the output is divided by the sum
// once at the end.

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

constexpr int Q_BLOCK = 16;   // query rows per task (reuse of each K/V chunk)
constexpr int KV_BLOCK = 64;  // keys per chunk

void solve(const float* __restrict__ Q, const float* __restrict__ K, const float* __restrict__ V,
           float* __restrict__ output, int B, int H, int S, int D) {
    const float scale = 1.0f / std::sqrt((float)D);
    const long long heads = (long long)B * H;
    const int row_blocks = (S + Q_BLOCK - 1) / Q_BLOCK;
    const long long tasks = heads * row_blocks;

    #pragma omp parallel
    {
        std::vector<float> scores((size_t)Q_BLOCK * KV_BLOCK);
        std::vector<float> acc((size_t)Q_BLOCK * D);  // unnormalised output rows
        float row_max[Q_BLOCK], row_sum[Q_BLOCK];

        #pragma omp for schedule(dynamic)
        for (long long task = 0; task < tasks; ++task) {
            const int rb = row_blocks - 1 - (int)(task / heads);  // heaviest row blocks first
            const size_t head = (size_t)(task % heads);
            const float* q_head = Q + head * S * D;
            const float* k_head = K + head * S * D;
            const float* v_head = V + head * S * D;
            const int i0 = rb * Q_BLOCK, rows = std::min(S - i0, Q_BLOCK);
            std::fill(acc.begin(), acc.end(), 0.0f);
            std::fill(row_max, row_max + rows, -INFINITY);
            std::fill(row_sum, row_sum + rows, 0.0f);

            for (int n0 = 0; n0 < i0 + rows; n0 += KV_BLOCK) {  // up to the block's last row
                for (int r = 0; r < rows; ++r) {
                    const int keys = std::min(i0 + r + 1 - n0, KV_BLOCK);  // row i0 + r sees keys <= i0 + r
                    if (keys <= 0) continue;
                    const float* q = q_head + (size_t)(i0 + r) * D;
                    float* s = scores.data() + (size_t)r * KV_BLOCK;
                    for (int n = 0; n < keys; ++n) {
                        const float* k = k_head + (size_t)(n0 + n) * D;
                        float dot = 0.0f;
                        #pragma omp simd reduction(+ : dot)
                        for (int c = 0; c < D; ++c) dot += q[c] * k[c];
                        s[n] = dot * scale;
                    }

                    float* o = acc.data() + (size_t)r * D;
                    float new_max = row_max[r];
                    for (int n = 0; n < keys; ++n) new_max = std::max(new_max, s[n]);
                    const float correction = std::exp(row_max[r] - new_max);  // 0 on the first chunk
                    row_max[r] = new_max;

                    for (int c = 0; c < D; ++c) o[c] *= correction;
                    float chunk_sum = 0.0f;
                    for (int n = 0; n < keys; ++n) {
                        const float p = std::exp(s[n] - new_max);
                        chunk_sum += p;
                        const float* v = v_head + (size_t)(n0 + n) * D;
                        #pragma omp simd
                        for (int c = 0; c < D; ++c) o[c] += p * v[c];
                    }
                    row_sum[r] = row_sum[r] * correction + chunk_sum;
                }
            }

            for (int r = 0; r < rows; ++r) {
                const float inv_sum = 1.0f / row_sum[r];
                const float* o = acc.data() + (size_t)r * D;
                float* out = output + (head * S + i0 + r) * D;
                for (int c = 0; c < D; ++c) out[c] = o[c] * inv_sum;
            }
        }
    }
}
