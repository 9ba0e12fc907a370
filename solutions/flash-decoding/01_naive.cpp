// CPU rung 1 -- naive: for each head, score every key, softmax the scores (maximum subtracted), then sum the
// value rows they weight.
//
// One buffer of N scores at a time, a single thread, two passes over the keys per head: the correctness
// baseline.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

void solve(const float* q, const float* K, const float* V, float* out, int H, int N, int D) {
    const float scale = 1.0f / std::sqrt((float)D);
    std::vector<float> scores(N);
    for (int h = 0; h < H; ++h) {
        const float* qh = q + (size_t)h * D;
        const float* Kh = K + (size_t)h * N * D;
        const float* Vh = V + (size_t)h * N * D;
        for (int j = 0; j < N; ++j) {
            float dot = 0.0f;
            for (int d = 0; d < D; ++d) dot += qh[d] * Kh[(size_t)j * D + d];
            scores[j] = dot * scale;
        }
        const float m = *std::max_element(scores.begin(), scores.end());
        float sum = 0.0f;
        for (int j = 0; j < N; ++j) sum += scores[j] = std::exp(scores[j] - m);
        float* o = out + (size_t)h * D;
        std::fill(o, o + D, 0.0f);
        for (int j = 0; j < N; ++j)
            for (int d = 0; d < D; ++d) o[d] += scores[j] / sum * Vh[(size_t)j * D + d];
    }
}
