// CPU rung 1 -- naive attention, single thread, one query row at a time.
//
// For each query row: score every key (dot product over d, scaled by
// 1/sqrt(d)) into a length-N buffer, softmax that buffer (subtract its max,
// exponentiate, sum), then sum the value rows weighted by the normalised
// probabilities. Only one row of scores exists at a time (never M x N), but
// every pass re-reads all of K and V from memory. The correctness baseline.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

void solve(const float* Q, const float* K, const float* V, float* output, int M, int N, int d) {
    const float scale = 1.0f / std::sqrt((float)d);
    std::vector<float> scores(N);
    for (int i = 0; i < M; ++i) {
        const float* q = Q + (size_t)i * d;
        for (int j = 0; j < N; ++j) {
            float dot = 0.0f;
            for (int c = 0; c < d; ++c) dot += q[c] * K[(size_t)j * d + c];
            scores[j] = dot * scale;
        }

        float row_max = scores[0];
        for (int j = 1; j < N; ++j) row_max = std::max(row_max, scores[j]);
        float sum = 0.0f;
        for (int j = 0; j < N; ++j) {
            scores[j] = std::exp(scores[j] - row_max);
            sum += scores[j];
        }

        float* o = output + (size_t)i * d;
        std::fill(o, o + d, 0.0f);
        for (int j = 0; j < N; ++j) {
            const float p = scores[j] / sum;
            for (int c = 0; c < d; ++c) o[c] += p * V[(size_t)j * d + c];
        }
    }
}
